"""Wide ROCm disagreements fixed from the release data (seed 2101 sweeps on the faked MI300X /
MI355X, docs/conformance.md#rocm): each expectation is what real SGLang did for that case."""

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


def _finding(report: dict[str, Any], rule: str) -> dict[str, Any]:
    return next(f for f in report["findings"] if f["rule"] == rule)


def test_a_typed_fraction_leaves_the_model_config_checks_to_start_up_on_old_releases(
        models: dict[str, Path]) -> None:
    # 0.5.2-w00057 (MI355X): SGLang 0.5.2 builds its ModelConfig only while
    # mem_fraction_static is unset, so the longer context passes the argument code.
    argv = ["--model-path", str(models["qwen3_32b"]), "--context-length", "262144"]
    typed = _check("0.5.2", "MI355X", [*argv, "--mem-fraction-static", "0.85"])
    assert typed["sglang_verdict"] == "ok"
    assert _finding(typed, "R-CONTEXT-LEN")["sglang"]["stage"] == "runtime"  # still reported
    unset = _check("0.5.2", "MI355X", argv)
    assert unset["first_sglang_error"] == "R-CONTEXT-LEN"
    # 0.5.4.post1 on builds it in the argument code whatever the fraction
    later = _check("0.5.6.post1", "MI355X", [*argv, "--mem-fraction-static", "0.85"])
    assert later["first_sglang_error"] == "R-CONTEXT-LEN"


def test_gpt_oss_mxfp4_on_mi300x_with_a_typed_fraction(models: dict[str, Path]) -> None:
    # 0.5.4-w00017 (MI300X x2): mxfp4 is unknown on gfx942, but 0.5.4 does not build the model
    # config for a typed fraction: SGLang accepted the arguments.
    argv = ["--model-path", str(models["gpt_oss_120b"]), "--tp", "2", "--ep-size=2",
            "--enable-hierarchical-cache", "--mem-fraction-static", "0.8"]
    report = _check("0.5.4", "MI300X", argv, 2)
    assert report["sglang_verdict"] == "ok"
    assert _finding(report, "R-QUANT-UNKNOWN")["sglang"]["stage"] == "runtime"


def test_the_model_specific_assert_comes_before_the_model_config_for_a_typed_fraction(
        models: dict[str, Path]) -> None:
    # 0.5.6.post1-w00028 (MI300X x8): with a typed fraction SGLang builds the model config in
    # a step after the model-specific one, so GPT-OSS's backend assert is raised first.
    argv = ["--model-path", str(models["gpt_oss_120b"]), "--tp", "8", "--attention-backend",
            "flashinfer", "--disable-radix-cache", "--mem-fraction-static", "0.85"]
    assert _check("0.5.6.post1", "MI300X", argv, 8)["first_sglang_error"] == \
        "R-GPT-OSS-ATTENTION"
    unset = [a for a in argv if a not in ("--mem-fraction-static", "0.85")]
    assert _check("0.5.6.post1", "MI300X", unset, 8)["first_sglang_error"] == "R-QUANT-UNKNOWN"


def test_a_pipeline_release_builds_the_model_config_before_the_model_specific_step(
        models: dict[str, Path]) -> None:
    # 0.5.17-w00093 (MI300X x8, seed 41503): 0.5.17 builds the model config for a typed
    # fraction from `_handle_cuda_graph_config` on, before `handle_model_specific_adjustments`
    # (its pipeline names the steps without the underscore): mxfp4's `Unknown quantization
    # method` at configs/model_config.py:1517 comes before GPT-OSS's backend assert.
    argv = ["--model-path", str(models["gpt_oss_20b"]), "--tp=8", "--ep-size=8",
            "--attention-backend=torch_native", "--kv-cache-dtype", "fp8_e4m3",
            "--mem-fraction-static", "0.9"]
    report = _check("0.5.17", "MI300X", argv, 8)
    assert report["first_sglang_error"] == "R-QUANT-UNKNOWN"
    assert _finding(report, "R-QUANT-UNKNOWN")["sglang"]["where"] == \
        "sglang/srt/configs/model_config.py:1517"
    # on H100 mxfp4 is registered: the backend assert is the first error
    assert _check("0.5.17", "H100", argv, 8)["first_sglang_error"] == "R-GPT-OSS-ATTENTION"


def test_the_first_form_of_the_gpt_oss_assert(models: dict[str, Path]) -> None:
    # 0.5.2-w00071 (MI355X): "GptOssForCausalLM requires one of ['triton', 'trtllm_mha', 'fa3']
    # attention backend, but got 'flashinfer'" at server_args.py:2454
    argv = ["--model-path", str(models["gpt_oss_20b"]), "--attention-backend", "flashinfer"]
    report = _check("0.5.2", "MI355X", argv)
    assert report["first_sglang_error"] == "R-GPT-OSS-ATTENTION"
    finding = _finding(report, "R-GPT-OSS-ATTENTION")
    assert finding["message"] == ("GptOssForCausalLM requires one of ['triton', 'trtllm_mha', "
                                  "'fa3'] attention backend, but got 'flashinfer'")
    assert finding["sglang"]["where"] == "sglang/srt/server_args.py:2454"


def test_the_hicache_decode_fallback_is_for_fa3_only_from_0_5_8(models: dict[str, Path]) -> None:
    # 0.5.9-w00059 (MI300X x8, seed 2207): the hicache step only replaces a decode backend that
    # would be fa3 (`effective_decode_backend == "fa3"`); aiter on ROCm is kept, decode stays None.
    argv = ["--model-path", str(models["deepseek_v3"]), "--tp-size", "8",
            "--enable-hierarchical-cache", "--mem-fraction-static", "0.85"]
    report = _check("0.5.9", "MI300X", argv, 8)
    assert report["effective"]["attention_backend"] == "aiter"
    assert report["effective"]["decode_attention_backend"] is None
    # 0.5.7 still replaces any unset decode backend (triton for MLA off SM100)
    assert _check("0.5.7", "MI300X", argv, 8)["effective"]["decode_attention_backend"] == "triton"


def test_0_5_9_disables_the_radix_cache_for_speculative_hybrids(models: dict[str, Path]) -> None:
    # 0.5.9-w00054 (MI300X x8, seed 2207): "Disabling radix cache since speculative decoding for
    # Qwen3_5MoeForConditionalGeneration is not supported with radix cache yet."
    argv = ["--model-path", str(models["qwen35_35b_a3b"]), "--tp-size", "8", "--context-length",
            "65536", "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path",
            str(models["standalone_draft"]), "--speculative-num-steps=3",
            "--speculative-eagle-topk=4", "--speculative-num-draft-tokens", "8"]
    for gpu in ("MI300X", "H100"):
        report = _check("0.5.9", gpu, argv, 8)
        assert report["sglang_verdict"] == "ok"
        assert report["effective"]["disable_radix_cache"] is True


def test_0_5_14_extra_buffer_needs_the_triton_linear_attention(models: dict[str, Path]) -> None:
    # 0.5.14-w00074 (MI300X x8, seed 2101): with --linear-attn-backend cutedsl the auto strategy
    # is no_buffer, so ROCm's extra_buffer assert is not reached (real SGLang: accepted).
    argv = ["--model-path", str(models["qwen3_next_80b"]), "--tp-size", "8"]
    assert _check("0.5.14", "MI300X", argv, 8)["first_sglang_error"] == "R-MAMBA-EXTRA-DEVICE"
    report = _check("0.5.14", "MI300X", [*argv, "--linear-attn-backend", "cutedsl"], 8)
    assert report["sglang_verdict"] == "ok"
    assert report["effective"]["mamba_radix_cache_strategy"] == "no_buffer"  # 0.5.14's name
    assert report["effective"]["disable_overlap_schedule"] is True  # as SGLang resolved it
