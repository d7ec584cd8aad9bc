"""Launch behaviours OpenSSH users expect, on the real loopback sshd: secrets never on the host's
disk, readiness with the API key, the run remembers how the host was reached, SIGKILLed server
with children, `logs --follow -n`, prune, run-id errors, preflight's real import, live stages."""

from __future__ import annotations

import json
import os
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from wizard.cli import main
from wizard.logstages import Stage, StageTracker
from wizard.remote.runs import LogChunk
from wizard.remote.session import RemoteHost
from wizard.remote.watch import RunWatcher, watch_run

from .conftest import SshLab
from .helpers import STAND_IN, alive, collect, model_dir, request
from .sshd_harness import free_port

pytestmark = pytest.mark.ssh

HF = "hf_issue11_secret_token"
API = "sk-issue11-api-key"


def _profile(
    tmp_path: Path,
    host: str,
    *,
    env: dict[str, str] | None = None,
    extra_args: list[str] | None = None,
    ssh_extra: str = "",
    pythonpath: str | None = None,
) -> Path:
    model = model_dir(tmp_path, "model")
    env = {
        "PYTHONPATH": pythonpath or str(STAND_IN),
        "STAND_IN_PACE": "0.005",
        "PATH": f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "FAKE_NVIDIA_SMI": "a6000x2-idle",
        **(env or {}),
    }
    env_toml = "\n".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
    path = tmp_path / "profile.toml"
    path.write_text(
        f'schema_version = 1\nsglang_version = "0.5.11"\nextra_args = {json.dumps(extra_args or [])}\n\n'
        f'[model]\npath = {json.dumps(str(model))}\n\n[server]\nport = {free_port()}\n\n'
        f'[ssh]\nhost = "{host}"\npython = "{sys.executable}"\n{ssh_extra}\n[env]\n{env_toml}\n'
    )
    return path


def _run_id(out: str) -> str:
    return out.split("launched ", 1)[1].split()[0]


def test_secrets_never_reach_the_hosts_disk_and_readiness_uses_the_api_key(
    cli_args: list[str], tmp_path: Path, runs_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path, "gpu-box", env={"HF_TOKEN": HF}, extra_args=["--api-key", API])
    assert main(["command", str(profile)]) == 0
    shown = capsys.readouterr().out
    assert HF not in shown and API not in shown
    assert "HF_TOKEN='***'" in shown and "--api-key '***'" in shown
    assert main(["command", str(profile), "--show-secrets"]) == 0
    revealed = capsys.readouterr().out
    assert HF in revealed and API in revealed

    assert main(["launch", str(profile), *cli_args]) == 0  # ready: the probe sent the key
    out = capsys.readouterr().out
    assert "ready after" in out and "test prompt -> ' Paris." in out
    assert "speculative values the server reports" not in out  # a plain server: none (not None)
    assert HF not in out and API not in out  # the streamed log is masked too
    run_id = _run_id(out)
    assert f"stop it with: sglang-wizard stop {run_id} --host gpu-box --ssh-config " in out
    run_dir = runs_root / run_id
    for path in run_dir.rglob("*"):
        data = path.read_bytes()
        assert HF.encode() not in data and API.encode() not in data, path
    kept = (run_dir / "profile.toml").read_text()  # references where the secrets were
    assert '"env:HF_TOKEN"' in kept and '"env:SGLANG_WIZARD_API_KEY"' in kept
    state = (tmp_path / "state" / "runs.jsonl").read_text()
    assert HF not in state and API not in state
    assert main(["stop", run_id, *cli_args]) == 0


def test_an_api_key_reference_reaches_the_server_from_the_launching_environment(
    cli_args: list[str], tmp_path: Path, runs_root: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 25 item 2: the profile keeps `--api-key env:SGLANG_WIZARD_API_KEY`; the launch puts
    the variable's value into the server's argv (readiness answers only with the real key) and
    refuses to start a server without it."""
    profile = _profile(tmp_path, "gpu-box",
                       extra_args=["--api-key", "env:SGLANG_WIZARD_API_KEY"])
    monkeypatch.delenv("SGLANG_WIZARD_API_KEY", raising=False)
    assert main(["launch", str(profile), *cli_args]) != 0  # unset: no server without its key
    assert "SGLANG_WIZARD_API_KEY" in capsys.readouterr().err
    monkeypatch.setenv("SGLANG_WIZARD_API_KEY", API)
    assert main(["launch", str(profile), *cli_args]) == 0  # ready: the probe sent the real key
    out = capsys.readouterr().out
    assert "ready after" in out and API not in out
    run_id = _run_id(out)
    port = int(profile.read_text().split("port = ", 1)[1].split()[0])
    for key, status in ((API, 200), ("env:SGLANG_WIZARD_API_KEY", 401)):
        ask = urllib.request.Request(f"http://127.0.0.1:{port}/get_server_info",
                                     headers={"Authorization": f"Bearer {key}"})
        try:
            with urllib.request.urlopen(ask, timeout=30) as answer:
                got = answer.status
        except urllib.error.HTTPError as refused:
            got = refused.code
        assert got == status, key  # the server holds the value, not the reference
    for path in (runs_root / run_id).rglob("*"):
        assert API.encode() not in path.read_bytes(), path
    assert main(["stop", run_id, *cli_args]) == 0


async def test_a_server_refusing_the_probe_is_not_ready(host: RemoteHost, tmp_path: Path) -> None:
    port = free_port()
    launched = await host.launch(request(model_dir(tmp_path), port, "--api-key", API))
    try:
        result = await watch_run(host, launched.run_id, port=port, api_key="not-the-key")
        assert result.outcome == "refused"
        assert result.ready is not None and result.ready.problem is not None
        assert result.ready.problem.startswith("server refused the API key (HTTP 401 on /generate")
        good = await host.check_ready(port, api_key=API)
        assert good.problem is None and good.generated_text.startswith(" Paris")
        anonymous = await host.check_ready(port)  # what the old readiness check did
        assert "refused the API key" in str(anonymous.problem)
    finally:
        await host.stop(launched.run_id, timeout_s=10)


def test_the_run_remembers_how_the_host_was_reached(
    ssh_lab: SshLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """identity from the profile, known hosts and config from flags: logs/stop/runs need none."""
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    empty_config = tmp_path / "empty_config"
    empty_config.write_text("Host *\n  GlobalKnownHostsFile none\n")
    profile = _profile(
        tmp_path, ssh_lab.target_spec, env={"STAND_IN_PACE": "0.2"},
        ssh_extra=f'identity_file = "{ssh_lab.user_key}"\n',
    )
    first = ["--ssh-config", str(empty_config), "--known-hosts", str(ssh_lab.known_hosts),
             "--no-agent", "--remote-runs-dir", str(runs_root), "--agent-python", sys.executable]
    assert main(["launch", str(profile), "--no-follow", *first]) == 0
    out = capsys.readouterr().out
    run_id = _run_id(out)
    hint = next(line for line in out.splitlines() if line.startswith("follow it with: "))
    for words in (f"logs {run_id} --follow", f"--ssh-config {empty_config}",
                  f"--known-hosts {ssh_lab.known_hosts}", f"-i {ssh_lab.user_key}",
                  f"--remote-runs-dir {runs_root}"):
        assert words in hint, words
    record = json.loads((tmp_path / "state" / "runs.jsonl").read_text().splitlines()[-1])
    assert record["identity"] == [str(ssh_lab.user_key)]
    assert record["known_hosts"] == [str(ssh_lab.known_hosts)]
    assert record["ssh_config"] == str(empty_config)
    # no connection flags at all: everything comes from the record
    assert main(["logs", run_id, "-n", "2", "--no-agent", "--agent-python", sys.executable]) == 0
    assert f"-- {run_id}: running" in capsys.readouterr().out
    assert main(["stop", run_id, "--no-agent", "--agent-python", sys.executable]) == 0
    assert "stopped on TERM" in capsys.readouterr().out


def test_sigkilled_server_names_the_signal_and_its_leftover_children(
    cli_args: list[str], runs_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path, "gpu-box")
    assert main(["launch", str(profile), "--quiet-log", *cli_args]) == 0
    run_id = _run_id(capsys.readouterr().out)
    run_dir = runs_root / run_id
    server = int((run_dir / "server_pid").read_text())
    status_before = json.loads((tmp_path / "state" / "runs.jsonl").read_text().splitlines()[-1])
    assert status_before["outcome"] == "ready"
    os.kill(server, signal.SIGKILL)  # what the kernel's OOM killer does
    assert main(["logs", run_id, "--follow", "-n", "3", *cli_args]) == 1
    out = capsys.readouterr().out
    assert f"the server (pid {server}) was killed by SIGKILL (signal 9)" in out
    assert "OOM killer" in out
    assert "processes of the run still alive: " in out
    assert f"stop them with: sglang-wizard stop {run_id} --host gpu-box" in out
    leftover = [int(p) for p in out.split("processes of the run still alive: ", 1)[1].split(" (")[0].split()]
    assert leftover and all(alive(pid) for pid in leftover)

    assert main(["runs", "--host", "gpu-box", *cli_args]) == 0
    listed = capsys.readouterr().out
    assert f"{run_id}  killed(SIGKILL), {len(leftover)} process(es) left" in listed
    assert "the local record said ready; the host says killed(SIGKILL)" in listed
    assert f"stop them with: sglang-wizard stop {run_id}" in listed
    record = json.loads((tmp_path / "state" / "runs.jsonl").read_text().splitlines()[-1])
    assert record["outcome"] == "crashed"

    assert main(["stop", run_id, *cli_args]) == 0
    capsys.readouterr()
    assert not [pid for pid in leftover if alive(pid)]


def test_logs_follow_n_starts_at_the_last_lines_then_prune(
    cli_args: list[str], runs_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = _profile(tmp_path, "gpu-box", env={"STAND_IN_EXIT_AFTER_READY": "1", "STAND_IN_EXTRA_LINES": "1000"})
    assert main(["launch", str(profile), "--no-follow", *cli_args]) == 0
    run_id = _run_id(capsys.readouterr().out)
    assert main(["logs", run_id, "--follow", *cli_args]) == 0  # to the end: the whole log
    capsys.readouterr()
    log_lines = (runs_root / run_id / "log").read_text().splitlines()
    assert main(["logs", run_id, "--follow", "-n", "5", *cli_args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == log_lines[-5:] and out[5] == "the server exited (exit code 0)"
    assert not any("Load weight" in line for line in out)

    assert main(["runs", "--prune", "7d", "--host", "gpu-box", *cli_args]) == 0
    assert "removed 0 run directories" in capsys.readouterr().out
    assert main(["runs", "--prune", "0", "--dry-run", "--host", "gpu-box", *cli_args]) == 0
    assert run_id in capsys.readouterr().out and (runs_root / run_id).is_dir()
    assert main(["runs", "--prune", "0", *cli_args]) == 0  # the hosts of the local records
    assert run_id in capsys.readouterr().out
    assert not (runs_root / run_id).exists()
    assert run_id not in (tmp_path / "state" / "runs.jsonl").read_text()
    assert main(["runs", "--prune", "soon", "--host", "gpu-box", *cli_args]) == 2


def test_run_id_errors_exit_2(cli_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", "../etc", "--host", "gpu-box", *cli_args]) == 2
    assert "invalid run id" in capsys.readouterr().err
    assert main(["stop", "20990101-000000-abcdef", "--host", "gpu-box", *cli_args]) == 2
    assert "no run 20990101-000000-abcdef on this host" in capsys.readouterr().err


def test_preflight_blocks_when_sglang_has_metadata_but_does_not_import(
    cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken-site"
    (broken / "sglang").mkdir(parents=True)
    (broken / "sglang" / "__init__.py").write_text("raise ImportError('libcudart.so.12: cannot open shared object file')\n")
    meta = broken / "sglang-0.5.11.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.11\n")
    profile = _profile(tmp_path, "gpu-box", pythonpath=str(broken))
    assert main(["preflight", str(profile), "--skip-dry-run", *cli_args]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] sglang" in out and "not importable" in out and "(installed: 0.5.11)" in out
    assert "broken-site/sglang/__init__.py" in out  # where the import failed
    assert "libcudart.so.12" in out and "launch blocked: sglang" in out


async def test_progress_segment_is_shown_before_it_completes(host: RemoteHost, runs_root: Path) -> None:
    run_dir = runs_root / "live-bar"
    run_dir.mkdir(parents=True)
    (run_dir / "pid").write_text(str(os.getpgid(0)))  # a live group: the follower keeps waiting
    (run_dir / "log").write_bytes(
        b"[2026-11-29 10:00:00 TP0] Load weight begin. avail mem=47.05 GB\n"
        b"\rLoading safetensors checkpoint shards:   0% Completed | 0/15 [00:00<?, ?it/s]"
        b"\rLoading safetensors checkpoint shards:  20% Completed | 3/15 [00:03<00:12, 1.0it/s]"
    )
    watcher = RunWatcher()
    seen: list[tuple[int | None, int | None]] = []
    async for chunk in host.follow_log("live-bar", 0, poll_s=0.02):
        seen.extend((e.done, e.total) for e in watcher.feed(chunk))
        if (3, 15) in seen:
            break
    assert (3, 15) in seen  # the newest segment, though no newline or \r followed it yet
    assert watcher.offset < (run_dir / "log").stat().st_size  # not counted as delivered


def test_stage_clock_ticks_through_quiet_phases() -> None:
    now = [100.0]
    watcher = RunWatcher(clock=lambda: now[0])
    watcher.feed(LogChunk(0, 10, ["[2026-11-29 10:00:00 TP0] Capture cuda graph begin. avail mem=6.62 GB"]))
    assert watcher.tracker.stage is Stage.CUDA_GRAPH
    now[0] += 39  # 39 s of progress bars without timestamps, or of nothing
    event = watcher.tick()
    assert event is not None and event.stage is Stage.CUDA_GRAPH and event.elapsed_s == pytest.approx(39)
    now[0] += 2  # a progress line without a timestamp carries the time it arrived
    events = watcher.feed(LogChunk(10, 90, ["Capturing batches (bs=32 avail_mem=6.60 GB):  14%|#     | 1/7 [00:41<04:06]"]))
    assert [(e.done, e.total, round(e.elapsed_s)) for e in events] == [(1, 7, 41)]


def test_weights_end_does_not_print_one_of_one_after_the_shards() -> None:
    tracker = StageTracker()
    tracker.feed("[2026-11-29 10:00:00 TP0] Load weight begin. avail mem=47.05 GB", 0)
    tracker.feed("Loading safetensors checkpoint shards: 100% Completed | 18/18 [00:18<00:00]", 18)
    events = tracker.feed("[2026-11-29 10:00:19 TP0] Load weight end. elapsed=18 s, mem usage=26.94 GB.", 19)
    assert [(e.done, e.total) for e in events] == [(18, 18)]


async def test_collect_helper_still_sees_whole_lines(host: RemoteHost, tmp_path: Path) -> None:
    """Partial-only chunks carry no lines: line-based readers see every line exactly once."""
    port = free_port()
    launched = await host.launch(request(model_dir(tmp_path), port, STAND_IN_EXIT_AFTER_READY="1"))
    lines, _ = await collect(host, launched.run_id)
    assert sum("Loading safetensors checkpoint shards" in line for line in lines) == 16  # 0..15
