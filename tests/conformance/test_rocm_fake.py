"""The conformance runner fakes an AMD GPU under ROCm the way it fakes CUDA (issue 21 item 4):
`torch.version.hip` set and `torch.version.cuda` None (what SGLang's is_hip() / is_cuda() read),
device properties with `gcnArchName`, a `rocminfo` stand-in for SGLang's memory probe, and one
runner process per gfx arch (SGLang fixes is_hip() in module constants at import)."""

from __future__ import annotations

import os

import pytest

from wizard.api import check_case
from wizard.conformance.models import write_model_folders
from wizard.conformance.run import gpu_spec, models_root, run_cases, runner_command
from wizard.conformance.venvs import ensure_venv, venv_python


def test_runner_command_fakes_rocm_for_amd_kinds() -> None:
    spec = gpu_spec("MI300X")
    assert spec == {"name": "AMD Instinct MI300X", "capability": "9.4", "memory_mib": 196592,
                    "gfx_arch": "gfx942", "multiprocessors": 304}
    command = runner_command(venv_python("0.5.11"), "MI355X")
    assert command[command.index("--gfx-arch") + 1] == "gfx950"
    assert "--gfx-arch" not in runner_command(venv_python("0.5.11"), "H100")


@pytest.mark.conformance
@pytest.mark.skipif(os.environ.get("SGLANG_WIZARD_CONFORMANCE", "1") == "0",
                    reason="SGLANG_WIZARD_CONFORMANCE=0")
def test_real_sglang_on_a_faked_mi300x() -> None:
    ensure_venv("0.5.11")  # built now when missing (the ssh dry-run tests share it)
    models = write_model_folders(models_root())
    cases = [
        {"id": "llama-mi300x", "gpu": "MI300X", "gpus": 1,
         "argv": ["--model-path", str(models["llama"])]},
        {"id": "extra-buffer-mi300x", "gpu": "MI300X", "gpus": 1,
         "argv": ["--model-path", str(models["qwen35"]), "--mamba-scheduler-strategy",
                  "extra_buffer"]},
        {"id": "extra-buffer-h100", "gpu": "H100", "gpus": 1,
         "argv": ["--model-path", str(models["qwen35"]), "--mamba-scheduler-strategy",
                  "extra_buffer"]},
    ]
    results = run_cases("0.5.11", cases, jobs=1)
    llama = results["llama-mi300x"]
    assert llama["verdict"] == "ok"
    # SGLang on ROCm: aiter for MHA, and the >160 GB card defaults
    assert llama["effective"]["attention_backend"] == "aiter"
    assert llama["effective"]["chunked_prefill_size"] == 16384
    rocm = results["extra-buffer-mi300x"]
    assert (rocm["verdict"], rocm["exception"]) == ("error", "AssertionError")
    assert "only supported on CUDA and MUSA" in rocm["message"]
    assert results["extra-buffer-h100"]["verdict"] != "error"  # the same flags pass on CUDA
    for case in cases:  # the wizard's verdict agrees on both platforms
        report = check_case({**case, "sglang_version": "0.5.11"})
        assert report["sglang_verdict"] == results[case["id"]]["verdict"], case["id"]
    assert check_case({**cases[1], "sglang_version": "0.5.11"})["first_sglang_error"] == (
        "R-MAMBA-EXTRA-DEVICE")
