"""Preflight on a real sshd: versions, GPUs (fake nvidia-smi), port, paths, disk, remote dry run."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from wizard.remote.preflight import PreflightRequest
from wizard.remote.session import RemoteHost

from .helpers import REMOTE_PYTHON, STAND_IN, model_dir, stand_in_env
from .sshd_harness import free_port

pytestmark = pytest.mark.ssh


def env_with_fake_smi(fixture: str, **extra: str) -> dict[str, str]:
    """Stand-in SGLang plus the fake nvidia-smi first on PATH."""
    return stand_in_env(
        PATH=f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}", FAKE_NVIDIA_SMI=fixture, **extra
    )


def check(report, name: str):  # type: ignore[no-untyped-def]
    return next(c for c in report.checks if c.name == name)


async def test_preflight_passes_on_a_ready_host(host: RemoteHost, tmp_path: Path) -> None:
    model = model_dir(tmp_path, architectures="LlamaForCausalLM")
    port = free_port()
    argv = ["--model-path", str(model), "--port", str(port), "--speculative-algorithm", "EAGLE"]
    report = await host.preflight(
        PreflightRequest(python=REMOTE_PYTHON, env=env_with_fake_smi("h100x8-idle"), port=port,
                         model_path=str(model), argv=argv)
    )
    assert report.ok, [c for c in report.checks if not c.ok]
    assert report.sglang_version == "0.5.11"
    assert report.python_version and report.python_version.startswith("3.")
    assert report.gpus.count == 8 and report.gpus.gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert "LlamaForCausalLM" in check(report, "model path").detail
    # the host's own (stand-in) SGLang chose the trio
    assert report.dry_run_effective is not None
    assert (report.dry_run_effective["speculative_num_steps"], report.dry_run_effective["speculative_eagle_topk"],
            report.dry_run_effective["speculative_num_draft_tokens"]) == (3, 1, 4)


async def test_preflight_blocks_on_port_paths_leftovers_and_bad_args(host: RemoteHost, tmp_path: Path) -> None:
    model = model_dir(tmp_path)
    missing = tmp_path / "no such draft"
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        report = await host.preflight(
            PreflightRequest(
                python=REMOTE_PYTHON, env=env_with_fake_smi("a6000x2-leftover"), port=port,
                model_path=str(model), draft_model_path=str(missing),
                argv=["--model-path", str(model), "--speculative-algorithm", "NEXTN", "--speculative-num-draft-tokens", "1"],
            )
        )
    finally:
        holder.close()
    blocking = {c.name: c.detail for c in report.blocking}
    assert set(blocking) == {"port", "draft model path", "gpu memory free", "dry run"}
    assert f"port {port} is already in use" in blocking["port"]
    assert "does not exist" in blocking["draft model path"]
    assert "pid 48213 on GPU 0" in blocking["gpu memory free"] and "pid 48214 on GPU 1" in blocking["gpu memory free"]
    assert report.dry_run_crash is not None
    assert report.dry_run_crash.traceback is not None
    assert report.dry_run_crash.traceback.location == "sglang/srt/server_args.py:3521"
    assert report.dry_run_crash.rule_id == "R-SPEC-STEPS-TRIO"


@pytest.mark.parametrize(
    ("fixture", "message"),
    [("no-devices", "No devices were found"), ("driver-mismatch", "version mismatch"), ("no-driver", "driver")],
)
async def test_preflight_reports_nvidia_smi_errors(host: RemoteHost, fixture: str, message: str) -> None:
    report = await host.preflight(PreflightRequest(python=REMOTE_PYTHON, env=env_with_fake_smi(fixture)))
    gpus = check(report, "gpus")
    assert not gpus.ok and message in gpus.detail and gpus in report.blocking


async def test_preflight_without_sglang_or_config(host: RemoteHost, tmp_path: Path) -> None:
    folder = tmp_path / "weights-only"
    folder.mkdir()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{not json")
    env = env_with_fake_smi("a6000x2-idle")
    env["PYTHONPATH"] = str(tmp_path)  # no sglang importable
    report = await host.preflight(
        PreflightRequest(python=REMOTE_PYTHON, env=env, model_path=str(folder),
                         draft_model_path=str(tmp_path / "broken"))
    )
    blocking = {c.name: c.detail for c in report.blocking}
    assert "not importable" in blocking["sglang"]
    gone = await host.preflight(
        PreflightRequest(python=REMOTE_PYTHON, env=env, model_path=str(tmp_path / "no such model"))
    )
    assert any(c.name == "model path" and "does not exist" in c.detail for c in gone.blocking)
    assert "config.json not readable" in blocking["model path"]
    assert "not valid JSON" in blocking["draft model path"]


@pytest.fixture
def real_sglang_python() -> Path:
    """SGLang 0.5.11's conformance venv, built now when missing (cached in the user cache)."""
    if os.environ.get("SGLANG_WIZARD_CONFORMANCE", "1") == "0":
        pytest.skip("SGLANG_WIZARD_CONFORMANCE=0")
    from wizard.conformance.venvs import ensure_venv

    return ensure_venv("0.5.11")


@pytest.mark.conformance
async def test_dry_run_with_real_sglang_finds_the_trio_assertion(
        host: RemoteHost, tmp_path: Path, real_sglang_python: Path) -> None:
    """The host's real SGLang 0.5.11 (CPU venv, GPU faked by the conformance runner) refuses the trio."""
    model = model_dir(tmp_path, architectures="LlamaForCausalLM")
    argv = ["--model-path", str(model), "--speculative-algorithm", "EAGLE",
            "--speculative-draft-model-path", str(model), "--speculative-num-draft-tokens", "4"]
    env = {"PATH": f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}", "FAKE_NVIDIA_SMI": "h100x8-idle"}
    report = await host.preflight(
        PreflightRequest(python=str(real_sglang_python), env=env, argv=argv, dry_run_runner_args=["--fake-gpu", "H100"])
    )
    assert report.sglang_version == "0.5.11"
    assert report.dry_run_crash is not None and report.dry_run_crash.traceback is not None
    assert report.dry_run_crash.traceback.location == "sglang/srt/server_args.py:3521"
    assert report.dry_run_crash.rule_id == "R-SPEC-STEPS-TRIO"


def env_with_amd_tools(bin_dir: str, **extra: str) -> dict[str, str]:
    """A host without nvidia-smi: only the amd-smi / rocm-smi stand-ins (and the system) on PATH."""
    return stand_in_env(PATH=f"{STAND_IN / bin_dir}:/usr/bin:/bin", **extra)


@pytest.mark.parametrize(
    ("bin_dir", "extra", "tool", "kind"),
    [
        ("amd-bin", {"FAKE_AMD_SMI": "mi300x8-idle"}, "amd-smi", "MI300X"),
        ("amd-bin", {"FAKE_AMD_SMI": "mi355x8-busy"}, "amd-smi", "MI355X"),
        ("rocm-bin", {"FAKE_ROCM_SMI": "mi300x8-idle"}, "rocm-smi", "MI300X"),
    ],
)
async def test_preflight_reads_amd_gpus(
    host: RemoteHost, bin_dir: str, extra: dict[str, str], tool: str, kind: str
) -> None:
    report = await host.preflight(PreflightRequest(python=REMOTE_PYTHON, env=env_with_amd_tools(bin_dir, **extra)))
    assert report.gpus.error is None and report.gpus.tool == tool and report.gpus.count == 8
    gpus = check(report, "gpus")
    assert gpus.ok and f"= {kind} (" in gpus.detail and f"({tool})" in gpus.detail
    found = report.gpus.kind()
    assert found is not None and found.name == kind
    busy = [c for c in report.blocking if c.name == "gpu memory free"]
    assert bool(busy) == (kind == "MI355X")  # GPUs 0 and 1 hold 255 GiB there
    if busy:
        assert "GPU 0 holds 261580 MiB" in busy[0].detail


async def test_preflight_amd_driver_missing(host: RemoteHost) -> None:
    report = await host.preflight(
        PreflightRequest(python=REMOTE_PYTHON, env=env_with_amd_tools("amd-bin", FAKE_AMD_SMI="no-driver"))
    )
    gpus = check(report, "gpus")
    assert not gpus.ok and "amdgpu driver is not loaded" in gpus.detail


async def test_preflight_without_any_gpu_tool(host: RemoteHost) -> None:
    report = await host.preflight(PreflightRequest(python=REMOTE_PYTHON, env=stand_in_env(PATH="/usr/bin:/bin")))
    gpus = check(report, "gpus")
    assert not gpus.ok and "nvidia-smi, amd-smi and rocm-smi are not in PATH" in gpus.detail


@pytest.mark.parametrize("driver", ["550", "470"])
async def test_preflight_reads_the_compute_capability_where_the_driver_knows_it(
    host: RemoteHost, driver: str
) -> None:
    env = env_with_fake_smi("rtxa5000x4-idle", FAKE_NVIDIA_SMI_DRIVER=driver)
    report = await host.preflight(PreflightRequest(python=REMOTE_PYTHON, env=env))
    assert report.gpus.error is None and report.gpus.count == 4  # old drivers: asked again without it
    kind = report.gpus.kind()
    if driver == "550":
        assert kind is not None and kind.spec == "custom:sm=8.6,mem=24564MiB,name=NVIDIA RTX A5000"
        assert "NVIDIA RTX A5000 (sm86, 24.0 GiB)" in check(report, "gpus").detail
    else:
        assert kind is None and "kind not known" in check(report, "gpus").detail
