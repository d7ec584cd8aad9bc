"""Detached launch, live log with stages, ready probe, crash mapping and stop on a real sshd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard.logstages import Stage
from wizard.remote.session import RemoteHost
from wizard.remote.watch import watch_run

from .helpers import alive, children_of, collect, environ_of, model_dir, request
from .sshd_harness import free_port

pytestmark = pytest.mark.ssh


async def test_launch_reaches_ready_with_stages_and_answers_through_the_connection(
    host: RemoteHost, tmp_path: Path
) -> None:
    port = free_port()
    launched = await host.launch(
        request(model_dir(tmp_path), port, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "2",
                "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "8")
    )
    assert launched.pgid is not None and launched.alive
    seen: list[tuple[Stage, int | None, int | None]] = []
    result = await watch_run(
        host, launched.run_id, port=port,
        on_chunk=lambda w, c, events: seen.extend((e.stage, e.done, e.total) for e in events),
    )
    assert result.outcome == "ready"
    stages = [s for s, _, _ in seen]
    assert [s for i, s in enumerate(stages) if i == 0 or stages[i - 1] != s] == [
        Stage.WEIGHTS, Stage.KV_CACHE, Stage.CUDA_GRAPH, Stage.READY
    ]
    assert (Stage.WEIGHTS, 7, 15) in seen  # shard progress from the tqdm bar
    assert (Stage.CUDA_GRAPH, 3, 7) in seen  # CUDA-graph batch progress
    ready = result.ready
    assert ready is not None and ready.health_status == 200 and ready.generate_status == 200
    assert "Paris" in ready.generated_text
    # topk 1 rewrites draft tokens to steps + 1: the server reports what it really uses
    assert ready.speculative["speculative_num_draft_tokens"] == 3
    assert ready.avg_spec_accept_length == pytest.approx(2.71)
    # stop: TERM the group, nothing left, outcome visible on reattach
    members = list(launched.processes) + children_of(launched.processes[-1])
    stopped = await host.stop(launched.run_id, timeout_s=10)
    assert stopped.was_running and stopped.clean and not stopped.killed
    assert not [pid for pid in members if alive(pid)]
    status = await host.run_status(launched.run_id)
    assert not status.alive and status.stopped is not None and status.exit_code is not None


async def test_forwarded_port_reaches_the_server(host: RemoteHost, tmp_path: Path) -> None:
    import asyncio

    port = free_port()
    launched = await host.launch(request(model_dir(tmp_path), port))
    await collect(host, launched.run_id, until="ready to roll")
    listener = await host.forward_port(port)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.get_port())
        writer.write(b"GET /health HTTP/1.0\r\n\r\n")
        answer = await reader.read()
        writer.close()
        assert answer.startswith(b"HTTP/1.0 200")
    finally:
        listener.close()
        await host.stop(launched.run_id, timeout_s=10)


async def test_trio_assertion_is_found_and_mapped_to_its_rule(host: RemoteHost, tmp_path: Path) -> None:
    port = free_port()
    launched = await host.launch(
        request(model_dir(tmp_path), port, "--speculative-algorithm", "NEXTN", "--speculative-num-draft-tokens", "1")
    )
    result = await watch_run(host, launched.run_id, port=port, sglang_version="0.5.11")
    assert result.outcome == "crashed"
    assert result.status is not None and result.status.exit_code == 1
    crash = result.crash
    assert crash is not None and crash.explanation.traceback is not None
    assert crash.explanation.traceback.location == "sglang/srt/server_args.py:3521"
    assert crash.explanation.traceback.exception_type == "AssertionError"
    assert crash.explanation.rule_id == "R-SPEC-STEPS-TRIO"
    assert "steps" in crash.explanation.summary().lower()


async def test_out_of_memory_is_recognised(host: RemoteHost, tmp_path: Path) -> None:
    port = free_port()
    launched = await host.launch(request(model_dir(tmp_path), port, STAND_IN_CRASH="oom"))
    result = await watch_run(host, launched.run_id, port=port, sglang_version="0.5.11")
    assert result.outcome == "crashed"
    assert result.crash is not None
    oom = result.crash.explanation.oom
    assert oom is not None and oom.gpu == 0 and oom.wanted == "2.00 GiB"
    assert result.crash.explanation.traceback is not None
    assert result.crash.explanation.traceback.exception_type == "torch.OutOfMemoryError"
    assert "memory plan" in result.crash.explanation.summary()


async def test_traceback_is_found_far_from_the_tail(host: RemoteHost, runs_root: Path) -> None:
    """The crash report searches the whole log on the host, not its last lines."""
    run_dir = runs_root / "handmade-run"
    run_dir.mkdir(parents=True)
    noise = "".join(f"[2026-11-29 10:00:00 TP0] Decode batch, #token: {i}\n" for i in range(50_000))
    (run_dir / "log").write_text(
        "[2026-11-29 09:59:59] Load weight begin. avail mem=47.05 GB\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 3549, in _handle_speculative_decoding\n'
        "    if self.speculative_eagle_topk > 1:\n"
        "TypeError: '>' not supported between instances of 'NoneType' and 'int'\n" + noise
    )
    report = await host.crash_report("handmade-run", "0.5.11")
    tb = report.explanation.traceback
    assert tb is not None and tb.location == "sglang/srt/server_args.py:3549"
    assert report.traceback_line == 2
    assert tb.exception_type == "TypeError"
    assert report.log_size == (run_dir / "log").stat().st_size


async def test_injection_shaped_argv_and_secrets_arrive_exactly(
    host: RemoteHost, tmp_path: Path, runs_root: Path
) -> None:
    canary = tmp_path / "pwned"
    weird = tmp_path / f"we ird 'q' \"dq\" $(touch {canary}) `touch {canary}` \n newline ; & | * ~ ü"
    model = model_dir(tmp_path, weird.name)
    dump = tmp_path / "argv.json"
    port = free_port()
    req = request(
        model, port, "--served-model-name", "$HOME;$(id)", "--api-key", "sk-api-secret-456",
        STAND_IN_ARGV_DUMP=str(dump),
    )
    req.env["HF_TOKEN"] = "hf_secret_value_123"
    launched = await host.launch(req)
    lines, _ = await collect(host, launched.run_id, until="ready to roll")
    try:
        assert json.loads(dump.read_text()) == req.argv  # the server got the real key
        assert not canary.exists()
        run_dir = runs_root / launched.run_id
        server = int((run_dir / "server_pid").read_text())
        env = environ_of(server)
        assert env["HF_TOKEN"] == "hf_secret_value_123"
        assert "SGLANG_WIZARD_ARGV" not in environ_of(children_of(server)[0])  # not inherited
        # `ps` shows no secret: the argv travels in the exec's environment, not its command line
        cmdline = Path(f"/proc/{server}/cmdline").read_bytes()
        assert b"sk-api-secret-456" not in cmdline
        assert cmdline.split(b"\0")[0].decode() == req.python  # exactly the profile's python
        # the stand-in logs server_args with api_key, as SGLang does: the log file has it masked
        assert any("api_key='***'" in line for line in lines)
        # no file of the run directory holds a secret (the log, argv.json, meta.json...)
        for path in run_dir.rglob("*"):
            data = path.read_bytes()
            assert b"hf_secret_value_123" not in data and b"sk-api-secret-456" not in data, path
        assert json.loads((run_dir / "argv.json").read_text())[-1] == "***"
        assert (run_dir.stat().st_mode & 0o077) == 0
    finally:
        await host.stop(launched.run_id, timeout_s=10)


async def test_stop_escalates_to_kill_and_leaves_nothing(host: RemoteHost, tmp_path: Path) -> None:
    port = free_port()
    launched = await host.launch(request(model_dir(tmp_path), port, STAND_IN_IGNORE_TERM="1"))
    await collect(host, launched.run_id, until="ready to roll")
    before = (await host.run_status(launched.run_id)).processes
    assert len(before) >= 3  # wrapper shell, server, its "scheduler" child
    stopped = await host.stop(launched.run_id, timeout_s=0.5)
    assert stopped.killed and stopped.clean
    assert not [pid for pid in before if alive(pid)]
    status = await host.run_status(launched.run_id)
    assert status.exit_code == -9 and not status.alive


async def test_runs_are_listed_and_a_finished_run_can_be_reread(host: RemoteHost, tmp_path: Path) -> None:
    port = free_port()
    launched = await host.launch(request(model_dir(tmp_path), port, STAND_IN_EXIT_AFTER_READY="1"))
    first, _ = await collect(host, launched.run_id)
    runs = await host.list_runs()
    assert launched.run_id in [r.run_id for r in runs]
    status = await host.run_status(launched.run_id)
    assert status.exit_code == 0 and status.state == "exited(0)"
    again, _ = await collect(host, launched.run_id)  # reattach to a finished run: same lines
    assert again == first and any("ready to roll" in line for line in again)


async def test_unknown_run_is_a_clear_error(host: RemoteHost) -> None:
    from wizard.remote.connection import RemoteError

    with pytest.raises(RemoteError, match="no run nope"):
        await host.run_status("nope")


async def test_stop_confirms_gpu_memory_released(host: RemoteHost, tmp_path: Path) -> None:
    import os

    from .helpers import STAND_IN

    pids_file = tmp_path / "gpu-pids"
    port = free_port()
    req = request(model_dir(tmp_path), port, FAKE_NVIDIA_SMI="a6000x2-idle", FAKE_NVIDIA_SMI_PIDS_FILE=str(pids_file))
    req.env["PATH"] = f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    launched = await host.launch(req)
    await collect(host, launched.run_id, until="ready to roll")
    status = await host.run_status(launched.run_id)
    pids_file.write_text("\n".join(str(p) for p in status.processes))  # the run "holds GPU memory"
    stopped = await host.stop(launched.run_id, timeout_s=10)
    assert stopped.gpu_checked and stopped.gpu_holders_left == [] and stopped.clean


async def test_python_under_home_and_a_missing_workdir(host: RemoteHost, tmp_path: Path, runs_root: Path) -> None:
    """`~/...` interpreters are expanded on the host; a missing workdir is refused before anything is written."""
    import os
    import sys

    from wizard.remote.connection import RemoteError

    home = Path(os.path.expanduser("~"))
    link = home / f".sglang-wizard-test-python-{os.getpid()}"
    link.symlink_to(sys.executable)
    try:
        port = free_port()
        req = request(model_dir(tmp_path), port, STAND_IN_EXIT_AFTER_READY="1")
        req.python = f"~/{link.name}"
        launched = await host.launch(req)
        lines, _ = await collect(host, launched.run_id)
        assert any("ready to roll" in line for line in lines)
        bad = request(model_dir(tmp_path), free_port())
        bad.workdir = str(tmp_path / "no such dir")
        bad.run_id = "refused-run"
        with pytest.raises(RemoteError, match=r"workdir .* does not exist"):
            await host.launch(bad)
        assert not (runs_root / "refused-run").exists()
    finally:
        link.unlink()
