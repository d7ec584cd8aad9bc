"""The ROCm branches of SGLang's argument code, as the release data has them (issue 21 item 4):
the expected values are what real SGLang did on the runner's faked MI300X / MI355X
(tests/conformance/fixtures/named-results-*.json, the ROCM-* named cases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wizard.api import check_case
from wizard.conformance.models import public_model_configs, write_model_folders


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {**write_model_folders(root), **write_model_folders(root, public_model_configs())}


def _check(version: str, gpu: str, argv: list[str], gpus: int = 1) -> dict[str, Any]:
    return check_case({"id": 1, "sglang_version": version, "gpu": gpu, "gpus": gpus,
                       "argv": argv, "env": {}})


@pytest.mark.parametrize(("model", "tp", "backend"), [
    ("dsv3_h128", 8, "aiter"), ("dsv3_h128", 4, "triton"),  # 16 / 32 KV heads per rank
    ("kimi_k2_h64", 8, "triton"), ("kimi_k2_h64", 4, "aiter"),  # 8 / 16
    ("llama", 1, "aiter"),  # MHA
])
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_default_attention_backend_on_rocm(models: dict[str, Path], version: str, model: str,
                                           tp: int, backend: str) -> None:
    report = _check(version, "MI300X", ["--model-path", str(models[model]), "--tp", str(tp)], tp)
    assert report["effective"]["attention_backend"] == backend
    cuda = _check(version, "A100-80GB", ["--model-path", str(models[model]), "--tp", str(tp)], tp)
    assert cuda["effective"]["attention_backend"] != "aiter"


def test_releases_without_a_rocm_default_leave_it_to_the_model_runner(
        models: dict[str, Path]) -> None:
    report = _check("0.5.4", "MI355X", ["--model-path", str(models["llama"])])
    assert report["effective"].get("attention_backend") in (None, "")


def test_a_draft_tree_with_pages_is_refused_on_aiter(models: dict[str, Path]) -> None:
    argv = ["--model-path", str(models["llama"]), "--speculative-algorithm", "EAGLE",
            "--speculative-draft-model-path", str(models["eagle_draft"]),
            "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
            "--speculative-num-draft-tokens", "8", "--page-size", "16"]
    assert _check("0.5.23", "MI300X", argv)["first_sglang_error"] == "R-TOPK-PAGE"
    assert _check("0.5.23", "A100-80GB", argv)["sglang_verdict"] == "ok"  # flashinfer


def test_0_5_11_disables_the_radix_cache_for_speculative_hybrids_on_rocm(
        models: dict[str, Path]) -> None:
    argv = ["--model-path", str(models["qwen3next"]), "--speculative-algorithm", "NEXTN"]
    rocm = _check("0.5.11", "MI300X", argv)
    assert rocm["sglang_verdict"] == "ok"
    assert rocm["effective"]["disable_radix_cache"] is True
    assert _check("0.5.11", "H100", argv)["first_sglang_error"] == "R-MAMBA-NOBUF-SPEC"


def test_0_5_14_refuses_extra_buffer_on_rocm(models: dict[str, Path]) -> None:
    argv = ["--model-path", str(models["qwen35moe"]), "--mamba-radix-cache-strategy",
            "extra_buffer"]
    report = _check("0.5.14", "MI300X", argv)
    assert report["first_sglang_error"] == "R-MAMBA-EXTRA-DEVICE"
    finding = next(f for f in report["findings"] if f["rule"] == "R-MAMBA-EXTRA-DEVICE")
    assert finding["message"] == "extra_buffer needs CUDA/MUSA/NPU (FLA)."
    assert _check("0.5.16", "MI300X", argv)["first_sglang_error"] != "R-MAMBA-EXTRA-DEVICE"


@pytest.mark.parametrize(("argv", "fraction"), [
    ([], 0.737),  # SGLang 0.5.11 on the faked MI300X: 0.73695 (the heuristic x 0.85)
    (["--mem-fraction-static", "0.8"], 0.68),  # a typed fraction is scaled too
    (["--context-length", "8192"], 0.867),  # not above 8192: no aiter step
])
def test_the_memory_plan_applies_the_aiter_step(models: dict[str, Path], argv: list[str],
                                                fraction: float) -> None:
    report = _check("0.5.11", "MI300X", ["--model-path", str(models["llama31_8b"]), *argv])
    assert report["memory_plan"]["mem_fraction_static"] == pytest.approx(fraction, abs=0.001)
    h100 = _check("0.5.11", "H100", ["--model-path", str(models["llama31_8b"]), *argv])
    assert not any("aiter" in a for a in h100["memory_plan"]["assumptions"])


def test_quantization_on_rocm(models: dict[str, Path]) -> None:
    """GPT-OSS's MXFP4 checkpoint is an unknown method on gfx942 (mxfp4 is registered only on
    CUDA and gfx95); NVIDIA-only methods are refused by the ROCm list (real SGLang 0.5.23:
    model_config.py:2152 / 2157 on the faked MI300X)."""
    gpt_oss = ["--model-path", str(models["gpt_oss_20b"])]
    mi300x = _check("0.5.23", "MI300X", gpt_oss)
    assert mi300x["first_sglang_error"] == "R-QUANT-UNKNOWN"
    finding = next(f for f in mi300x["findings"] if f["rule"] == "R-QUANT-UNKNOWN")
    assert finding["sglang"]["where"].endswith("configs/model_config.py:2152")
    assert _check("0.5.23", "MI355X", gpt_oss)["sglang_verdict"] == "ok"
    assert _check("0.5.23", "H100", gpt_oss)["sglang_verdict"] == "ok"
    fp4 = ["--model-path", str(models["llama"]), "--quantization", "modelopt_fp4"]
    assert _check("0.5.23", "MI355X", fp4)["first_sglang_error"] == "R-QUANT-ROCM"
    assert _check("0.5.23", "B200", fp4)["first_sglang_error"] != "R-QUANT-ROCM"
