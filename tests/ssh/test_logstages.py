"""Stage detection, traceback extraction and OOM detection from SGLang's real log lines (pure)."""

from __future__ import annotations

import pytest

from wizard.logstages import (
    Stage,
    StageTracker,
    TracebackScanner,
    detect_oom,
    explain_crash,
    find_last_traceback,
    sglang_location,
)

# Lines as SGLang 0.5.11 prints them (see tests/fixtures/stand_in/sglang/launch_server.py for sources)
STARTUP_0_5_11 = [
    "[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/models/Qwen3.6-27B', tp_size=2, ...)",
    "[2026-11-29 10:00:05 TP0] Init torch distributed begin.",
    "[2026-11-29 10:00:06 TP0] Init torch distributed ends. elapsed=1.02 s, mem usage=0.00 GB",
    "[2026-11-29 10:00:06 TP0] Load weight begin. avail mem=47.05 GB",
    "Loading safetensors checkpoint shards:   0% Completed | 0/15 [00:00<?, ?it/s]",
    "Loading safetensors checkpoint shards:  47% Completed | 7/15 [00:10<00:12,  1.59s/it]",
    "Loading safetensors checkpoint shards: 100% Completed | 15/15 [00:22<00:00,  1.47s/it]",
    "[2026-11-29 10:00:30 TP0] Load weight end. elapsed=24.01 s, type=Qwen3_5ForConditionalGeneration, "
    "avail mem=20.11 GB, mem usage=26.94 GB.",
    "[2026-11-29 10:00:31 TP0] KV Cache is allocated. #tokens: 413472, K size: 6.31 GB, V size: 6.31 GB",
    "[2026-11-29 10:00:31 TP0] Memory pool end. avail mem=6.80 GB",
    "[2026-11-29 10:00:32 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=6.62 GB",
    "[2026-11-29 10:00:32 TP0] Capture cuda graph bs [1, 2, 4, 8]",
    "Capturing batches (bs=8 avail_mem=6.60 GB):  25%|██▌       | 1/4 [00:01<00:03,  1.20s/it]",
    "Capturing batches (bs=1 avail_mem=6.31 GB): 100%|██████████| 4/4 [00:04<00:00,  1.10s/it]",
    "[2026-11-29 10:00:40 TP0] Capture cuda graph end. Time elapsed: 8.10 s. mem usage=0.35 GB. avail mem=6.25 GB.",
    "[2026-11-29 10:00:45] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
    "[2026-11-29 10:00:50] The server is fired up and ready to roll!",
]


def feed_all(lines: list[str]) -> tuple[StageTracker, list]:  # type: ignore[type-arg]
    tracker = StageTracker()
    events = []
    for second, line in enumerate(lines):
        events.extend(tracker.feed(line, float(second)))
    return tracker, events


def test_stages_in_order_with_progress() -> None:
    tracker, events = feed_all(STARTUP_0_5_11)
    assert tracker.ready
    order = []
    for e in events:
        if not order or order[-1] != e.stage:
            order.append(e.stage)
    assert order == [Stage.WEIGHTS, Stage.KV_CACHE, Stage.CUDA_GRAPH, Stage.READY]
    progress = [(e.stage, e.done, e.total) for e in events if e.total]
    assert (Stage.WEIGHTS, 7, 15) in progress and (Stage.CUDA_GRAPH, 1, 4) in progress
    assert tracker.uvicorn_url == "http://127.0.0.1:30000"
    durations = tracker.completed_durations()
    assert set(durations) == {"starting", "weights", "kv_cache", "cuda_graph"}
    assert durations["weights"] == 5.0  # begin at line 3, KV cache at line 8


@pytest.mark.parametrize(
    "line",
    [
        "[2026-11-29 10:00:32 TP0] Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, avail mem=6.62 GB",
        "[2026-11-29 10:00:32 TP0] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4, avail mem=6.62 GB",
        "[2026-11-29 10:00:32 TP0] Capture draft cuda graph begin. This can take up to several minutes. avail mem=6.62 GB",
    ],
)
def test_graph_capture_lines_of_both_versions(line: str) -> None:
    tracker = StageTracker()
    tracker.feed("[2026-11-29 10:00:00 TP0] Load weight begin. avail mem=47.05 GB", 0.0)
    assert [e.stage for e in tracker.feed(line, 1.0)] == [Stage.CUDA_GRAPH]


def test_carriage_return_progress_takes_the_last_state() -> None:
    tracker = StageTracker()
    tracker.feed("[2026-11-29 10:00:00 TP0] Load weight begin. avail mem=47.05 GB", 0.0)
    events = tracker.feed(
        "\rLoading safetensors checkpoint shards:   6% Completed | 1/15 [00:01<00:20]"
        "\rLoading safetensors checkpoint shards:  13% Completed | 2/15 [00:02<00:19]",
        1.0,
    )
    assert [(e.done, e.total) for e in events] == [(2, 15)]


def test_stages_never_go_back() -> None:
    tracker, _ = feed_all(STARTUP_0_5_11[:12])
    assert tracker.stage is Stage.CUDA_GRAPH
    # a draft model loading after the target's graphs does not move the stage back
    assert tracker.feed("[2026-11-29 10:01:00 TP0] Load weight begin. avail mem=6.0 GB", 99.0) == []
    assert tracker.stage is Stage.CUDA_GRAPH


def test_eta_from_history() -> None:
    history = [
        {"starting": 5.0, "weights": 100.0, "kv_cache": 2.0, "cuda_graph": 50.0},
        {"starting": 7.0, "weights": 120.0, "kv_cache": 4.0, "cuda_graph": 70.0},
        {"starting": 6.0, "weights": 110.0, "kv_cache": 3.0, "cuda_graph": 60.0},
    ]
    tracker = StageTracker()
    assert tracker.eta_s([], 0.0) is None
    assert tracker.eta_s(history, 0.0) == pytest.approx(6 + 110 + 3 + 60)
    tracker.feed("[x] Load weight begin. avail mem=1 GB", 6.0)
    tracker.feed("Loading safetensors checkpoint shards:  50% Completed | 5/10 [..]", 40.0)
    assert tracker.eta_s(history, 40.0) == pytest.approx(55 + 3 + 60)  # half of the median weights left
    for line in STARTUP_0_5_11[8:]:
        tracker.feed(line, 200.0)
    assert tracker.eta_s(history, 200.0) == 0.0


TRIO_TRACEBACK = """\
[2026-11-29 10:00:00] some earlier line
Traceback (most recent call last):
  File "/opt/conda/lib/python3.10/site-packages/sglang/srt/managers/io.py", line 12, in old
    raise ValueError("an earlier, handled problem")
ValueError: an earlier, handled problem
[2026-11-29 10:00:01] retrying
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "/opt/venv/lib/python3.12/site-packages/sglang/launch_server.py", line 29, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 6512, in prepare_server_args
    return ServerArgs.from_cli_args(raw_args)
  File "<string>", line 331, in __init__
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 3521, in _handle_speculative_decoding
    assert (
AssertionError
[2026-11-29 10:00:02] trailing noise
"""


def test_last_traceback_with_innermost_sglang_frame() -> None:
    tb = find_last_traceback(TRIO_TRACEBACK.splitlines())
    assert tb is not None
    assert tb.start_line == 7
    assert tb.location == "sglang/srt/server_args.py:3521"
    assert tb.exception_type == "AssertionError" and tb.exception_message == ""
    assert tb.innermost_sglang_frame is not None and tb.innermost_sglang_frame.source == "assert ("
    assert len(tb.frames) == 6


def test_traceback_started_mid_line_and_chained() -> None:
    log = [
        "[2026-11-29 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/x/sglang/srt/managers/scheduler.py", line 2710, in run_scheduler_process',
        "    scheduler = Scheduler(",
        "KeyError: 'a'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/src/sglang/python/sglang/srt/model_executor/model_runner.py", line 487, in initialize',
        "    self.init_cuda_graphs()",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of "
        "47.41 GiB of which 1.06 GiB is free.",
    ]
    scanner = TracebackScanner()
    finished = [scanner.feed(line) for line in log]
    assert sum(tb is not None for tb in finished) == 2
    assert scanner.last is not None
    assert scanner.last.location == "sglang/srt/model_executor/model_runner.py:487"
    assert scanner.last.exception_type == "torch.OutOfMemoryError"


def test_scanner_memory_is_bounded() -> None:
    scanner = TracebackScanner(max_lines=50)
    scanner.feed("Traceback (most recent call last):")
    for i in range(10_000):
        scanner.feed(f'  File "/x/sglang/srt/a.py", line {i}, in f')
    tb = scanner.feed("RecursionError: maximum recursion depth exceeded")
    assert tb is not None and len(tb.text.splitlines()) <= 51


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/usr/lib/python3/dist-packages/sglang/srt/server_args.py", "sglang/srt/server_args.py:7"),
        ("/home/u/sglang/python/sglang/srt/server_args.py", "sglang/srt/server_args.py:7"),
        ("sglang/srt/x.py", "sglang/srt/x.py:7"),
        ("/usr/lib/python3.12/argparse.py", None),
    ],
)
def test_sglang_location(path: str, expected: str | None) -> None:
    assert sglang_location(path, 7) == expected


def test_oom_detection() -> None:
    oom = detect_oom(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
        "of 47.41 GiB of which 1.06 GiB is free. Including non-PyTorch memory", 12
    )
    assert oom is not None and (oom.gpu, oom.wanted, oom.total, oom.free, oom.line_number) == (
        0, "2.00 GiB", "47.41 GiB", "1.06 GiB", 12
    )
    assert "mem-fraction-static" in oom.explain()
    plain = detect_oom("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.")
    assert plain is not None and plain.gpu is None
    assert detect_oom("[..] KV Cache is allocated. #tokens: 1") is None


def test_crash_maps_to_the_rule_catalog() -> None:
    tb = find_last_traceback(TRIO_TRACEBACK.splitlines())
    explained = explain_crash(tb, None, "0.5.11")
    assert explained.rule_id == "R-SPEC-STEPS-TRIO"
    assert "all three" in explained.explanation.lower()
    assert "AssertionError at sglang/srt/server_args.py:3521" in explained.summary()
    unknown = explain_crash(tb, None, None)  # without a version nothing is guessed
    assert unknown.rule_id is None and "AssertionError" in unknown.summary()
    assert "without a Python traceback" in explain_crash(None, None, "0.5.11").summary()


def test_graph_capture_end_keeps_the_batch_counts() -> None:
    """`logs --follow` printed "capturing CUDA graphs 7/7" and then "1/1" at "Capture cuda graph
    end" (the weights stage already kept its "15/15")."""
    _, events = feed_all(STARTUP_0_5_11)
    graph = [(e.done, e.total) for e in events if e.stage is Stage.CUDA_GRAPH and e.total]
    assert graph == [(1, 4), (4, 4), (4, 4)]
    weights = [(e.done, e.total) for e in events if e.stage is Stage.WEIGHTS and e.total]
    assert weights[-1] == (15, 15)
