"""Local run records, secret masking and the log-line splitting that makes resume exact (pure)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from wizard.remote.preflight import PreflightRequest, build_preflight_report, compare_effective
from wizard.remote.records import (
    RunRecord,
    RunRecords,
    is_secret_name,
    mask_argv,
    mask_env,
    new_run_id,
    profile_hash,
    split_secret_env,
)
from wizard.remote.runs import render_command_text
from wizard.remote.session import _last_line_end, split_log_lines


def test_secret_names() -> None:
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD"):
        assert is_secret_name(name), name
    for name in ("TOKENIZERS_PARALLELISM", "SGLANG_ENABLE_SPEC_V2", "CUDA_VISIBLE_DEVICES", "KEYBOARD"):
        assert not is_secret_name(name), name
    plain, secret = split_secret_env({"HF_TOKEN": "t", "CUDA_VISIBLE_DEVICES": "0,1"})
    assert plain == {"CUDA_VISIBLE_DEVICES": "0,1"} and secret == {"HF_TOKEN": "t"}
    assert mask_env({"HF_TOKEN": "t", "A": "b"}) == {"HF_TOKEN": "***", "A": "b"}
    assert mask_argv(["--api-key", "s3", "--port", "1", "--admin-api-key=x"]) == [
        "--api-key", "***", "--port", "1", "--admin-api-key=***"
    ]


def test_command_text_is_quoted_and_masked() -> None:
    text = render_command_text("python3", ["--model-path", "/m/a b", "--api-key", "k"], {"HF_TOKEN": "v", "X": "$(y)"})
    assert "v" not in text.split("HF_TOKEN=")[1].split()[0]
    assert "'/m/a b'" in text and "X='$(y)'" in text and "--api-key '***'" in text


def test_records_roundtrip_mask_and_history(tmp_path: Path) -> None:
    store = RunRecords(tmp_path / "state" / "runs.jsonl")
    digest = profile_hash("[model]\npath='x'\n")
    first = RunRecord(new_run_id(1.0), "root@h:22", digest, 1.0, env={"HF_TOKEN": "secret"}, argv=["--api-key", "k"])
    store.save(first)
    first.outcome, first.startup_s, first.stage_durations = "ready", 10.0, {"weights": 8.0}
    store.save(first)
    store.save(RunRecord(new_run_id(2.0), "root@h:22", digest, 2.0, outcome="crashed"))
    store.save(RunRecord(new_run_id(3.0), "root@other:22", digest, 3.0, startup_s=5.0, stage_durations={"weights": 1.0}))
    text = store.path.read_text()
    assert "secret" not in text and '"k"' not in text
    assert len(store.load()) == 3
    assert store.get(first.run_id) is not None and store.get(first.run_id).outcome == "ready"  # type: ignore[union-attr]
    assert store.stage_history("root@h:22", digest) == [{"weights": 8.0}]
    # a damaged line (e.g. written by a newer version, cut short) is skipped, not fatal
    store.path.write_text(text + '{"run_id": "broken\n')
    assert len(store.load()) == 3
    assert not list(store.path.parent.glob("*.tmp"))


def test_run_ids_sort_by_time() -> None:
    assert new_run_id(1_000.0) < new_run_id(2_000_000.0)
    assert new_run_id(5.0) != new_run_id(5.0)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(["a", "b", "ü", "\n", "\r", " "]), max_size=200),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_streamed_chunks_give_the_same_lines_as_the_whole_file(text: str, cuts: list[int]) -> None:
    """However the bytes arrive, cutting at `_last_line_end` yields the lines of the whole text,
    and the offsets always point at a line boundary: a resume from any offset loses or repeats nothing."""
    data = text.encode()
    points = [*sorted({min(c, len(data)) for c in cuts}), len(data)]
    buffer = b""
    lines: list[str] = []
    offset = 0
    previous = 0
    for point in points:
        buffer += data[previous:point]
        previous = point
        cut = _last_line_end(buffer)
        if cut:
            complete, buffer = buffer[:cut], buffer[cut:]
            lines.extend(split_log_lines(complete.decode("utf-8", "replace")))
            offset += len(complete)
            resumed = split_log_lines(data[offset:].decode("utf-8", "replace"))
            assert split_log_lines(data[:offset].decode("utf-8", "replace")) + resumed == split_log_lines(text)
    lines.extend(split_log_lines(buffer.decode("utf-8", "replace")))
    assert lines == split_log_lines(text)


def test_preflight_report_from_raw_json() -> None:
    raw = {
        "versions": {"python": "3.12.3", "sglang": "0.5.23"},
        "nvidia_smi": {
            "gpus": {"rc": 0, "out": "0, NVIDIA H100 80GB HBM3, 70000, 81559, GPU-a\n"},
            "apps": {"rc": 0, "out": "777, GPU-a, 69990\n"},
            "commands": {"777": "python3 -m sglang.launch_server --model-path /m"},
        },
        "port": {"port": 30000, "free": True},
        "paths": {"model": {"path": "/m", "error": None, "config_json": {"architectures": ["X"]}}},
        "disk": {"path": "/root/.cache", "free_bytes": 10, "total_bytes": 100},
        "dry_run": {
            "rc": 0,
            "err": "",
            "out": '{"id": "dry-run", "sglang_version": "0.5.23", "verdict": "ok", "effective": '
            '{"speculative_num_steps": 3, "attention_backend": "fa3"}, "warnings": [], "runner_error": false}\n',
        },
    }
    report = build_preflight_report(raw, PreflightRequest(port=30000, min_free_disk_bytes=1 << 20))
    blocking = {c.name: c.detail for c in report.blocking}
    assert set(blocking) == {"gpu memory free", "disk for logs"}
    assert "pid 777 on GPU 0 holds 69990 MiB (python3 -m sglang.launch_server --model-path /m)" in blocking["gpu memory free"]
    assert report.sglang_version == "0.5.23"
    assert report.dry_run_effective == {"speculative_num_steps": 3, "attention_backend": "fa3"}
    diffs = compare_effective({"speculative_num_steps": 3, "attention_backend": "FA3", "page_size": 1},
                              {**report.dry_run_effective, "page_size": 64})
    assert [(d.key, d.local, d.remote) for d in diffs] == [("page_size", 1, 64)]
    assert json.dumps(report.raw)  # the raw answer stays serialisable for the screens


def test_dry_run_refusal_and_runner_failure() -> None:
    base = {"versions": {"python": "3.12.3", "sglang": "0.5.11"}, "disk": {"free_bytes": 1 << 40}}
    refused = {
        "rc": 0, "err": "",
        "out": '{"verdict": "error", "sglang_version": "0.5.11", "stage": "resolve", "exception": "AssertionError", '
        '"message": "", "where": "sglang/srt/server_args.py:3521", "bare": true, "runner_error": false}',
    }
    report = build_preflight_report({**base, "dry_run": refused}, PreflightRequest())
    assert report.dry_run_crash is not None and report.dry_run_crash.rule_id == "R-SPEC-STEPS-TRIO"
    detail = next(c.detail for c in report.blocking if c.name == "dry run")
    assert "AssertionError at sglang/srt/server_args.py:3521 (stage resolve)" in detail
    broken = {"rc": 1, "out": "", "err": "Traceback ...\nModuleNotFoundError: No module named 'sglang'"}
    report = build_preflight_report({**base, "dry_run": broken}, PreflightRequest())
    assert "could not run on the host" in next(c.detail for c in report.blocking if c.name == "dry run")
