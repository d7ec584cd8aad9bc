"""Effective values beyond the speculative trio (issue 24 deliverable 2): deterministic inference,
--enable-mis, mixed chunk per speculative handler, every deprecated flag in SGLang's words, and
the fields only the real GPU decides (`effective_depends_on`). Each expectation was seen on the
release's real SGLang (named cases V01-V07, the focused sweeps in docs/conformance.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from public_checks import check_public


def check(version: str, gpu: str | None, argv: str, public: dict[str, Path]) -> dict[str, Any]:
    return check_public(version, gpu, argv, public)


DET = "--model-path {llama31_8b} --enable-deterministic-inference"


@pytest.mark.parametrize(("version", "gpu", "backend", "radix_off"), [
    ("0.5.23", "B200", "flashinfer", True),  # before the default: Blackwell's fallback
    ("0.5.23", "A6000", "fa3", False),  # fa3 is the fallback everywhere else, even on Ampere
    ("0.5.13", "H100", "fa3", False),
    ("0.5.11", "A6000", "flashinfer", True),  # after the default: the default stays, radix off
    ("0.5.11", "H100", "fa3", False),
])
def test_deterministic_inference_backend_and_radix(version: str, gpu: str, backend: str,
                                                   radix_off: bool,
                                                   public: dict[str, Path]) -> None:
    report = check(version, gpu, DET, public)
    assert report["sglang_verdict"] == "ok"
    assert report["effective"]["attention_backend"] == backend
    assert report["effective"]["disable_radix_cache"] is radix_off


def test_deterministic_inference_refusals(public: dict[str, Path]) -> None:
    # the handler after the default checks Blackwell's default trtllm_mha like a typed backend
    refused = check("0.5.11", "B200", DET, public)
    assert refused["first_sglang_error"] == "R-DETERMINISTIC-BACKEND"
    finding = next(f for f in refused["findings"] if f["rule"] == "R-DETERMINISTIC-BACKEND")
    assert finding["sglang"]["message"] == (
        "Currently only ['flashinfer', 'fa3', 'triton'] attention backends are supported for "
        "deterministic inference, but you explicitly specified 'trtllm_mha'.")
    # its fix really removes the refusal
    fixed = check("0.5.11", "B200", DET + " --attention-backend triton", public)
    assert fixed["sglang_verdict"] == "ok" and fixed["effective"]["disable_radix_cache"] is False
    # an MLA model with flashinfer (in the choices, not in the MLA list)
    mla = check("0.5.23", "H100", "--model-path {deepseek_v3} --enable-deterministic-inference "
                "--attention-backend flashinfer", public)
    assert mla["first_sglang_error"] == "R-DETERMINISTIC-MLA"
    # --rl-on-policy-target turns deterministic inference on
    rl = check("0.5.23", "H100", "--model-path {llama31_8b} --rl-on-policy-target fsdp "
               "--attention-backend flashinfer", public)
    assert rl["effective"]["disable_radix_cache"] is True
    # 0.5.3 has no fallback: an unset backend (its model runner picks one later) is refused
    assert check("0.5.3", "H100", DET, public)["first_sglang_error"] == "R-DETERMINISTIC-BACKEND"


def test_mis_and_mixed_chunk(public: dict[str, Path]) -> None:
    mis = "--model-path {llama31_8b} --enable-mis"
    assert check("0.5.23", "A6000", mis, public)["effective"]["disable_radix_cache"] is True
    assert check("0.5.11", "A6000", mis, public)["effective"]["disable_radix_cache"] is True
    eagle3 = ("--model-path {llama31_8b} --speculative-algorithm EAGLE3 --speculative-draft-"
              "model-path {llama31_8b} --enable-mixed-chunk --disable-overlap-schedule")
    assert check("0.5.17", "H100", eagle3, public)["effective"]["enable_mixed_chunk"] is False
    assert check("0.5.23", "H100", eagle3, public)["effective"]["enable_mixed_chunk"] is True


def test_every_deprecated_flag_in_sglangs_words(public: dict[str, Path]) -> None:
    report = check("0.5.17", "H100", "--model-path {llama31_8b} --cuda-graph-max-bs 8 "
                   "--stream-output --collect-tokens-histogram", public)
    finding = next(f for f in report["findings"] if f["rule"] == "R-DEPRECATED-FLAG")
    assert finding["message"] == (
        "'--cuda-graph-max-bs' is deprecated and will be removed in a future release. Use "
        "'--cuda-graph-max-bs-decode' instead. '--stream-output' is deprecated and will be "
        "removed in a future release. Use '--incremental-streaming-output' instead. The command "
        "line argument '--collect-tokens-histogram' is deprecated and will be removed in future "
        "versions.")
    plain = check("0.5.17", "H100", "--model-path {llama31_8b} --cuda-graph-max-bs-decode 8",
                  public)
    assert "R-DEPRECATED-FLAG" not in [f["rule"] for f in plain["findings"]]


def test_values_only_the_gpu_decides(public: dict[str, Path]) -> None:
    report = check("0.5.23", "H100", "--model-path {llama31_8b}", public)
    assert set(report["effective_depends_on"]) == {"max_running_requests"}
    assert report["effective"]["max_running_requests"] is None  # `effective` is unchanged
    # typed: SGLang runs what was typed
    typed = check("0.5.23", "H100", "--model-path {llama31_8b} --max-running-requests 64", public)
    assert typed["effective_depends_on"] == {}
    # no GPU kind: the values that follow it are the assumed kind's
    assumed = check("0.5.23", None, "--model-path {llama31_8b}", public)
    assert {"attention_backend", "page_size"} <= set(assumed["effective_depends_on"])
    assert "H100 is assumed" in assumed["effective_depends_on"]["attention_backend"]
    # releases whose model runner picks the attention backend at load time
    old = check("0.5.3", "H100", "--model-path {llama31_8b}", public)
    assert "model runner" in old["effective_depends_on"]["attention_backend"]


def test_mamba_extra_buffer_needs_the_linear_attention_backend(public: dict[str, Path]) -> None:
    # 0.5.15-0.5.19 keep the extra buffer for the triton linear-attention backend only (seen on
    # the real 0.5.17: ptx_kda -> no_buffer and the overlap scheduler off)
    other = check("0.5.17", "H100", "--model-path {qwen35_35b_a3b} --linear-attn-backend ptx_kda",
                  public)["effective"]
    assert (other["mamba_radix_cache_strategy"], other["disable_overlap_schedule"]) == (
        "no_buffer", True)
    default = check("0.5.17", "H100", "--model-path {qwen35_35b_a3b}", public)["effective"]
    assert (default["mamba_radix_cache_strategy"], default["disable_overlap_schedule"]) == (
        "extra_buffer", False)


def check_on(version: str, gpu: str, gpus: int, argv: str,
             public: dict[str, Path]) -> dict[str, Any]:
    return check_public(version, gpu, argv, public, gpus)


# Seen on real SGLang (wide sweep seed 120389 and `conformance run` of the same argv on each
# release): 0.5.8-w00007/-w00051, -w00017, -w00027.
@pytest.mark.parametrize(("version", "radix_off"), [("0.5.8", False), ("0.5.9", True)])
def test_the_no_buffer_speculative_radix_rewrite_reads_its_branch(
        version: str, radix_off: bool, public: dict[str, Path]) -> None:
    """0.5.8 disables the radix cache for speculative decoding only in NemotronH's branch (its
    mamba block sits, by a slip, under GLM-4.5's branch: overlap off, radix kept); 0.5.9 does it
    for every hybrid in the shared path."""
    argv = ("--model-path {glm45_fp8} --tensor-parallel-size 8 --speculative-algorithm NEXTN"
            if version == "0.5.8" else
            "--model-path {qwen3_next_80b} --tensor-parallel-size 8 --speculative-algorithm NEXTN")
    report = check_on(version, "B200", 8, argv, public)
    assert report["effective"]["disable_radix_cache"] is radix_off


@pytest.mark.parametrize(("version", "decode"), [("0.5.8", "flashinfer"), ("0.5.10", "flashinfer"),
                                                 ("0.5.11", "triton")])
def test_the_hicache_decode_fallback_reads_attention_sinks_where_the_release_does(
        version: str, decode: str, public: dict[str, Path]) -> None:
    report = check_on(version, "GH200", 8, "--model-path {gpt_oss_120b} --tensor-parallel-size 8 "
                      "--enable-hierarchical-cache", public)
    assert report["sglang_verdict"] == "ok"
    assert report["effective"]["decode_attention_backend"] == decode


@pytest.mark.parametrize(("version", "gpu", "runner"), [
    ("0.5.8", "RTX 5090", "flashinfer_mxfp4"),  # is_blackwell_supported(): SM100 and SM120
    ("0.5.9", "RTX 5090", "flashinfer_mxfp4"),
    ("0.5.11", "RTX 5090", "triton_kernel"),  # its own SM120 branch
    ("0.5.8", "H100", "auto"),
])
def test_gpt_oss_mxfp4_moe_runner_per_blackwell_probe(version: str, gpu: str, runner: str,
                                                      public: dict[str, Path]) -> None:
    ep = "" if runner == "triton_kernel" else " --ep-size 4"  # triton_kernel needs ep_size 1
    report = check_on(version, gpu, 4, "--model-path {gpt_oss_20b} --tensor-parallel-size 4 "
                      "--dp 2 --enable-dp-attention" + ep, public)
    assert report["sglang_verdict"] == "ok"
    assert report["effective"]["speculative_moe_runner_backend"] == runner


@pytest.mark.parametrize(("version", "gpu", "flag", "page"), [
    ("0.5.14", "B200", "--attention-backend fa4", 1),  # reads prefill_attention_backend only
    ("0.5.14", "B200", "--prefill-attention-backend fa4", 128),
    ("0.5.8", "H100", "--prefill-attention-backend fa4", 128),  # no SM100 test before 0.5.12
    ("0.5.15", "B200", "--attention-backend fa4", 128),  # any of the three, SM100 only
    ("0.5.23", "H100", "--attention-backend fa4", None),
])
def test_fa4_page_size_reads_the_release_s_test(version: str, gpu: str, flag: str,
                                                page: int | None,
                                                public: dict[str, Path]) -> None:
    """Each row seen on the release's real SGLang (llama 3.1 8B; 0.5.14-w00020/-w00052 of the
    wide sweep seed 120389 are the hybrid Qwen cases of the first row)."""
    report = check_on(version, gpu, 1, "--model-path {llama31_8b} " + flag, public)
    if page is None:
        assert report["effective"]["page_size"] != 128
    else:
        assert report["effective"]["page_size"] == page
