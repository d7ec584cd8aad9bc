"""The remote subcommands end to end: profile -> preflight -> launch -> watch -> runs/logs/stop."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from wizard.cli import main

from .conftest import SshLab
from .helpers import STAND_IN, model_dir
from .sshd_harness import free_port

pytestmark = pytest.mark.ssh


def write_profile(tmp_path: Path, host: str, *, speculative: str, env: dict[str, str] | None = None) -> Path:
    model = model_dir(tmp_path, "model dir")
    env = {
        "PYTHONPATH": str(STAND_IN),
        "STAND_IN_PACE": "0.005",
        "PATH": f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "FAKE_NVIDIA_SMI": "a6000x2-idle",
        "HF_TOKEN": "hf_cli_secret",
        **(env or {}),
    }
    env_toml = "\n".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
    path = tmp_path / "profile.toml"
    path.write_text(
        f'schema_version = 1\nsglang_version = "0.5.11"\n\n[model]\npath = {json.dumps(str(model))}\n'
        f'dtype = "bfloat16"\n\n[speculative]\n{speculative}\n\n[server]\nport = {free_port()}\n\n'
        f'[ssh]\nhost = "{host}"\npython = "{sys.executable}"\n\n[env]\n{env_toml}\n'
    )
    return path


def test_launch_follow_ready_then_runs_logs_stop(
    cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = write_profile(
        tmp_path, "gpu-box", speculative='algorithm = "NEXTN"\nnum_steps = 1\neagle_topk = 1\nnum_draft_tokens = 2'
    )
    assert main(["launch", str(profile), "--quiet-log", *cli_args]) == 0
    out = capsys.readouterr().out
    assert "[ok  ] sglang" in out and "SGLang 0.5.11" in out
    assert "agree on the effective values" in out
    assert ">> loading weights 15/15" in out and ">> capturing CUDA graphs" in out
    assert "ETA unknown" in out
    assert "ready after" in out and "num_draft_tokens=2" in out and "average accept length: 2.71" in out
    run_id = out.split("launched ", 1)[1].split()[0]
    state = (tmp_path / "state" / "runs.jsonl").read_text()
    record = json.loads(state.splitlines()[-1])
    assert record["outcome"] == "ready" and record["stage_durations"]
    assert "hf_cli_secret" not in state and record["env"]["HF_TOKEN"] == "***"

    assert main(["runs", "--host", "gpu-box", *cli_args]) == 0
    assert f"{run_id}  running" in capsys.readouterr().out
    assert main(["runs"]) == 0
    assert run_id in capsys.readouterr().out
    assert main(["logs", run_id, "-n", "3", *cli_args]) == 0
    assert "running" in capsys.readouterr().out
    assert main(["stop", run_id, *cli_args]) == 0
    stop_out = capsys.readouterr().out
    assert "stopped on TERM" in stop_out and "GPU memory released" in stop_out

    # the same profile again: the first run's stage timings give an ETA
    assert main(["launch", str(profile), "--quiet-log", *cli_args]) == 0
    second = capsys.readouterr().out
    assert "ETA unknown" not in second and "ETA 0m" in second
    assert main(["stop", second.split("launched ", 1)[1].split()[0], *cli_args]) == 0


def test_preflight_blocks_the_trio_with_the_rule_and_fixes(
    cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = write_profile(tmp_path, "gpu-box", speculative='algorithm = "EAGLE3"\nnum_draft_tokens = 16\neagle_topk = 1\ndraft_model_path = "/nonexistent/draft"')
    assert main(["launch", str(profile), *cli_args]) == 1
    out = capsys.readouterr().out
    assert "launch blocked" in out and "dry run" in out and "draft model path" in out
    assert "sglang/srt/server_args.py:3521" in out and "R-SPEC-STEPS-TRIO" in out
    assert "fix: Set all three: steps 15, topk 1, draft tokens 16" in out
    assert "launched" not in out


def test_crash_after_launch_is_explained(cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = write_profile(tmp_path, "gpu-box", speculative="", env={"STAND_IN_CRASH": "oom"})
    llama_8b = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
        "vocab_size": 128256, "intermediate_size": 14336, "max_position_embeddings": 8192,
        "torch_dtype": "bfloat16",
    }
    (tmp_path / "model dir" / "config.json").write_text(json.dumps(llama_8b))  # read on the host for the plan
    assert main(["launch", str(profile), "--quiet-log", *cli_args]) == 1
    out = capsys.readouterr().out
    assert "[plan] memory per GPU: fits: per GPU 15.1 GiB weights" in out  # 2 x A6000 from nvidia-smi
    assert "GiB free before loading by nvidia-smi" in out  # the free memory read on the host
    assert "the server crashed (exit code 1)" in out
    assert "torch.OutOfMemoryError" in out and "memory plan" in out
    assert "the memory plan for this profile said: fits" in out


def test_unknown_host_key_refused_then_trusted(
    ssh_lab: SshLab, cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .test_connection import fingerprint

    empty = tmp_path / "known_hosts"
    args = [*cli_args]
    args[args.index("--known-hosts") + 1] = str(empty)
    profile = write_profile(tmp_path, "gpu-box", speculative="")
    assert main(["preflight", str(profile), *args]) == 1
    err = capsys.readouterr().err
    expected = fingerprint(Path(f"{ssh_lab.target.host_key}.pub"))
    assert expected in err and "--trust-host-key" in err
    assert main(["preflight", str(profile), "--trust-host-key", expected, *args]) == 0
    assert "[ok  ] port" in capsys.readouterr().out


def test_bad_host_and_missing_profile_are_input_errors(cli_args: list[str], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["preflight", str(tmp_path / "missing.toml"), *cli_args]) == 2
    assert "file not found" in capsys.readouterr().err
    profile = write_profile(tmp_path, "gpu-box", speculative="")
    assert main(["preflight", str(profile), "--host", "a@b@c", *cli_args]) == 2
    assert main(["stop", "20990101-000000-abcdef"]) == 2  # not launched from here and no --host


def test_ctrl_c_detaches_and_the_server_keeps_running(
    cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import signal
    import subprocess

    from .helpers import REPO

    # never ready: the launch cannot finish (exit 0) before the SIGINT, however slow the machine
    profile = write_profile(tmp_path, "gpu-box", speculative="",
                            env={"STAND_IN_PACE": "0.05", "STAND_IN_NEVER_READY": "1"})
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "wizard.cli", "launch", str(profile), "--quiet-log", *cli_args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO,
        # a suite started in the background (nohup, CI runners) passes SIGINT on as ignored, and
        # Python keeps an ignored SIGINT ignored: give the child the default a terminal gives
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout is not None
    seen = []
    for line in process.stdout:  # wait for the first stage line: the run is up and being watched
        seen.append(line)
        if line.startswith(">> "):
            break
    run_id = next(line.split()[1] for line in seen if line.startswith("launched "))
    process.send_signal(signal.SIGINT)
    rest = process.stdout.read()
    assert process.wait(timeout=60) == 130
    assert f"detached from {run_id}: the server keeps running" in rest
    state = json.loads((tmp_path / "state" / "runs.jsonl").read_text().splitlines()[-1])
    assert state["run_id"] == run_id
    assert main(["runs", "--host", "gpu-box", *cli_args]) == 0
    assert f"{run_id}  running" in capsys.readouterr().out
    assert main(["stop", run_id, *cli_args]) == 0
    assert "stopped on TERM" in capsys.readouterr().out


def test_flags_are_rendered_for_the_hosts_sglang_version(
    cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = write_profile(
        tmp_path, "gpu-box", speculative='algorithm = "EAGLE"\nnum_steps = 2\neagle_topk = 1\nnum_draft_tokens = 3',
        env={"STAND_IN_SGLANG_VERSION": "0.5.23"},
    )
    assert main(["preflight", str(profile), *cli_args]) == 0
    out = capsys.readouterr().out
    assert "the host has SGLang 0.5.23 (profile: 0.5.11); flags rendered for the host's version" in out
    assert "SGLang 0.5.23 (selects the rule set; sglang.srt.server_args imports)" in out and "[ok  ] dry run" in out


def test_logs_follow_reattaches_to_a_finished_run(
    cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = write_profile(tmp_path, "gpu-box", speculative="", env={"STAND_IN_EXIT_AFTER_READY": "1"})
    assert main(["launch", str(profile), "--no-follow", *cli_args]) == 0
    out = capsys.readouterr().out
    run_id = out.split("launched ", 1)[1].split()[0]
    assert f"sglang-wizard logs {run_id} --follow" in out
    assert main(["logs", run_id, "--follow", *cli_args]) == 0  # the host comes from the run record
    followed = capsys.readouterr().out
    assert "The server is fired up and ready to roll!" in followed
    assert ">> ready" in followed and "the server was ready, then exited (exit code 0)" in followed


def test_preflight_offers_the_host_gpus_and_fill_gpu_writes_them(
    cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wizard.profile import load_profile

    profile = write_profile(tmp_path, "gpu-box", speculative="",
                            env={"FAKE_NVIDIA_SMI": "rtxa5000x4-idle"})
    before = profile.read_text()
    original = load_profile(profile)
    assert main(["preflight", str(profile), "--skip-dry-run", *cli_args]) == 0
    out = capsys.readouterr().out
    assert "[gpu] the profile names no GPUs; the host has 4 x custom:sm=8.6,mem=24564MiB,name=NVIDIA RTX A5000" in out
    assert "preflight --fill-gpu writes it" in out
    assert profile.read_text() == before  # only offered
    assert main(["preflight", str(profile), "--skip-dry-run", "--fill-gpu", *cli_args]) == 0
    assert "[gpu] written to" in capsys.readouterr().out
    filled = load_profile(profile)
    assert (filled.gpu.kind, filled.gpu.count) == ("custom:sm=8.6,mem=24564MiB,name=NVIDIA RTX A5000", 4)
    assert filled.model_copy(update={"gpu": original.gpu}) == original  # nothing else changed
    assert main(["preflight", str(profile), "--skip-dry-run", *cli_args]) == 0
    assert "[gpu]" not in capsys.readouterr().out  # the profile now says what the host has
