"""The rules beyond speculative decoding (context length, quantization, GPT-OSS backends, hierarchical
cache, deprecated flags) and the effective values they touch, on the public model configs the wide
conformance generator uses. Each expectation was seen on the release's real SGLang (witness
fixtures, and the probes in docs/conformance.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wizard.api import apply_fix, check_case, check_profile
from wizard.conformance.models import public_model_configs, write_model_folders
from wizard.profile_schema import Profile


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_model_folders(tmp_path_factory.mktemp("public"), public_model_configs())


def check(version: str, gpu: str, argv: str, public: dict[str, Path], gpus: int = 1,
          env: dict[str, str] | None = None) -> dict[str, Any]:
    case = {"id": "t", "sglang_version": version, "gpu": gpu, "gpus": gpus, "env": env or {},
            "argv": argv.format(**{k: str(v) for k, v in public.items()}).split()}
    return check_case(case)


def first(report: dict[str, Any]) -> str | None:
    return report.get("first_sglang_error")


def rules(report: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in report["findings"]]


@pytest.mark.parametrize("version", ["0.5.6.post1", "0.5.11", "0.5.23"])
def test_context_length_above_the_derived_one(version: str, public: dict[str, Path]) -> None:
    # Llama 3.1: llama3 rope scaling keeps max_position_embeddings (131072) as the context
    over = check(version, "H100", "--model-path {llama31_8b} --context-length 262144", public)
    assert first(over) == "R-CONTEXT-LEN"
    error = next(f for f in over["findings"] if f["rule"] == "R-CONTEXT-LEN")
    assert "derived context_length (131072)" in error["message"]
    assert error["sglang"]["where"].startswith("sglang/srt/configs/model_config.py:")
    exact = check(version, "H100", "--model-path {llama31_8b} --context-length 131072", public)
    assert first(exact) is None
    allowed = check(version, "H100", "--model-path {llama31_8b} --context-length 262144", public,
                    env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})
    assert "R-CONTEXT-LEN" not in rules(allowed)
    # DeepSeek-V3: yarn with original_max_position_embeddings -> factor 1 -> 163840
    deepseek = check(version, "H100", "--model-path {deepseek_v3} --tp 8 --context-length 163841",
                     public, gpus=8)
    assert "R-CONTEXT-LEN" in rules(deepseek)


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_quantization_against_the_checkpoint(version: str, public: dict[str, Path]) -> None:
    assert first(check(version, "H100", "--model-path {gpt_oss_20b} --quantization w8a8_fp8",
                       public)) == "R-QUANT-MISMATCH"
    assert first(check(version, "H100", "--model-path {gpt_oss_20b} --quantization modelopt_fp4",
                       public)) == "R-QUANT-MISMATCH"  # no ModelOpt override for an MXFP4 config
    assert first(check(version, "H100", "--model-path {deepseek_v3} --tp 8 --quantization awq",
                       public, gpus=8)) == "R-QUANT-MISMATCH"
    assert first(check(version, "H100", "--model-path {glm45_fp8} --tp 8 --quantization fp8",
                       public, gpus=8)) == "R-QUANT-MISMATCH"
    # the release's compatibility table: w8a8_fp8 reads a compressed-tensors checkpoint
    assert "R-QUANT-MISMATCH" not in rules(check(
        version, "H100", "--model-path {glm45_fp8} --tp 8 --quantization w8a8_fp8", public, gpus=8))
    assert first(check(version, "H100", "--model-path {gpt_oss_20b} --quantization mxfp4",
                       public)) is None


@pytest.mark.parametrize("version", ["0.5.6.post1", "0.5.11", "0.5.23"])
def test_gpt_oss_attention_backends(version: str, public: dict[str, Path]) -> None:
    refused = check(version, "H100", "--model-path {gpt_oss_20b} --attention-backend flashinfer",
                    public)
    assert first(refused) == "R-GPT-OSS-ATTENTION"
    finding = next(f for f in refused["findings"] if f["rule"] == "R-GPT-OSS-ATTENTION")
    assert "'triton', 'trtllm_mha', 'fa3'" in finding["message"]
    assert "- Prefill: flashinfer" in finding["message"]
    assert first(check(version, "H100", "--model-path {gpt_oss_20b} --attention-backend triton",
                       public)) is None
    # only a decode backend typed: SGLang leaves the common backend unset, the prefill is None
    only_decode = check(version, "H100", "--model-path {gpt_oss_20b} --decode-attention-backend "
                        "triton", public)
    assert first(only_decode) == "R-GPT-OSS-ATTENTION"


def test_hierarchical_cache_without_radix_cache(public: dict[str, Path]) -> None:
    for version in ("0.5.11", "0.5.23"):
        report = check(version, "H100", "--model-path {llama31_8b} --enable-hierarchical-cache "
                       "--disable-radix-cache", public)
        assert first(report) == "R-HICACHE-NO-RADIX"
        assert first(check(version, "H100", "--model-path {llama31_8b} "
                           "--enable-hierarchical-cache", public)) is None


def test_hicache_picks_the_decode_backend_where_the_release_does(public: dict[str, Path]) -> None:
    argv = "--model-path {llama31_8b} --enable-hierarchical-cache"
    assert check("0.5.11", "H100", argv, public)["effective"]["decode_attention_backend"] == (
        "flashinfer")  # fa3 would be the decode backend; the kernel I/O backend cannot use it
    assert check("0.5.11", "B200", argv, public)["effective"]["decode_attention_backend"] is None
    assert check("0.5.23", "H100", argv, public)["effective"]["decode_attention_backend"] is None


def test_deprecated_dp_attention_on_0_5_23(public: dict[str, Path], tmp_path: Path) -> None:
    argv = "--model-path {deepseek_v3} --tp 2 --dp 2 --enable-dp-attention"
    report = check("0.5.23", "H100", argv, public, gpus=2)
    assert report["effective"]["dp_size"] == 1 and report["effective"]["attn_dp_size"] == 2
    # what SGLang 0.5.23's resolved_dict() showed for this launch (the runner, this session)
    assert report["effective"]["enable_dp_attention"] is True
    finding = next(f for f in report["findings"] if f["rule"] == "R-DEPRECATED-FLAG")
    assert finding["message"] == ("'--enable-dp-attention' is deprecated and will be removed in a "
                                  "future release. Use '--attn-dp-size <dp-size>' instead.")
    assert "R-DEPRECATED-FLAG" not in rules(check("0.5.11", "H100", argv, public, gpus=2))
    # the fix moves to --attn-dp-size and removes the finding
    profile = Profile.model_validate({"sglang_version": "0.5.23",
                                      "model": {"path": str(public["deepseek_v3"])},
                                      "parallel": {"tp": 2, "dp": 2, "enable_dp_attention": True},
                                      "gpu": {"kind": "H100", "count": 2}})
    checked = check_profile(profile)
    fix = next(f for f in checked.findings if f.rule == "R-DEPRECATED-FLAG").fixes[0]
    fixed = apply_fix(profile, fix)
    assert fixed.parallel.attn_dp_size == 2 and fixed.parallel.dp == 1
    assert "R-DEPRECATED-FLAG" not in [f.rule for f in check_profile(fixed).findings]


@pytest.mark.parametrize(("version", "gpu", "expected"), [
    ("0.5.6.post1", "B200", None),  # the release leaves the draft's MoE runner unset
    ("0.5.11", "B200", "flashinfer_mxfp4"),
    ("0.5.11", "RTX PRO 6000 Blackwell", "triton_kernel"),
    ("0.5.11", "H100", "auto"),
    ("0.5.17", "RTX PRO 6000 Blackwell", "flashinfer_mxfp4"),
    ("0.5.23", "B200", "flashinfer_mxfp4"),
])
def test_speculative_moe_runner_of_gpt_oss(version: str, gpu: str, expected: str | None,
                                          public: dict[str, Path]) -> None:
    report = check(version, gpu, "--model-path {gpt_oss_20b}", public)
    assert report["effective"]["speculative_moe_runner_backend"] == expected


@pytest.mark.parametrize(("version", "expected"), [("0.5.11", "auto"),
                                                   ("0.5.17", "flashinfer_trtllm"),
                                                   ("0.5.23", "flashinfer_trtllm")])
def test_speculative_moe_runner_of_deepseek_fp8_on_b200(version: str, expected: str,
                                                        public: dict[str, Path]) -> None:
    report = check(version, "B200", "--model-path {deepseek_v3} --tp 8", public, gpus=8)
    assert report["effective"]["speculative_moe_runner_backend"] == expected


@pytest.mark.parametrize(("version", "refused"), [("0.5.2", False), ("0.5.3.post1", False),
                                                  ("0.5.4.post1", False), ("0.5.11", False)])
def test_deepseek_fp8_on_b200_starts_in_every_release(version: str, refused: bool,
                                                      public: dict[str, Path]) -> None:
    """0.5.1-0.5.3.post1 set no MoE runner for DeepSeek on SM100, so the flashinfer_trtllm assert
    never sees it (real 0.5.2, 0.5.3 and 0.5.3.post1 accepted a plain `--tp 8` on B200 / B300 /
    GB300: w00081, w00114, w00235, seed 49201); a hand-written runner choice had said they refuse.
    0.5.4.post1-post3 pick flashinfer_trtllm whatever the quantization (the release's branch tests
    none, read as `any_quantization`)."""
    report = check(version, "B200", "--model-path {deepseek_v3} --tp 8", public, gpus=8)
    errors = [f for f in report["findings"] if f["severity"] == "error"
              and f["rule"] not in ("R-MEMORY-NOFIT",)]
    assert bool(errors) is refused, errors


# ---- the wide sweeps' recurring causes (issue 24; each seen on real SGLang: named cases W01-W08)


def test_quantization_methods_registered_per_platform(public: dict[str, Path]) -> None:
    # MXFP4 is registered for CUDA and AMD gfx95 only: the gpt-oss checkpoint on an MI300X
    mi300 = check("0.5.23", "MI300X", "--model-path {gpt_oss_20b}", public)
    assert first(mi300) == "R-QUANT-UNKNOWN"
    error = next(f for f in mi300["findings"] if f["rule"] == "R-QUANT-UNKNOWN")
    assert error["message"].startswith("Unknown quantization method: mxfp4. Must be one of ['fp8'")
    assert error["sglang"]["where"].startswith("sglang/srt/configs/model_config.py:")
    assert first(check("0.5.23", "MI355X", "--model-path {gpt_oss_20b}", public)) is None
    # plain GPTQ left CUDA's table in 0.5.23; 0.5.11 still has it
    assert first(check("0.5.23", "H100", "--model-path {llama31_8b} --quantization gptq",
                       public)) == "R-QUANT-UNKNOWN"
    assert first(check("0.5.11", "H100", "--model-path {llama31_8b} --quantization gptq",
                       public)) is None
    # registered, but not on ROCm's list
    rocm = check("0.5.11", "MI300X", "--model-path {llama31_8b} --quantization modelopt_fp4", public)
    assert first(rocm) == "R-QUANT-ROCM"
    assert "modelopt_fp4 quantization is currently not supported in ROCm." in rules_messages(rocm)


def rules_messages(report: dict[str, Any]) -> str:
    return "\n".join(f["message"] for f in report["findings"])


@pytest.mark.parametrize(("version", "runner"), [("0.5.6.post1", None), ("0.5.11", "auto"),
                                                 ("0.5.23", "flashinfer_trtllm")])
def test_qwen3_moe_family_moe_runner_on_sm100(version: str, runner: str | None,
                                              public: dict[str, Path]) -> None:
    # 0.5.6.x leaves the draft's runner unset; 0.5.11 maps flashinfer_trtllm to auto for it
    report = check(version, "B200", "--model-path {qwen3_30b_a3b}", public)
    assert report["effective"]["speculative_moe_runner_backend"] == runner
    hopper = check("0.5.23", "H100", "--model-path {qwen3_30b_a3b}", public)
    assert hopper["effective"]["speculative_moe_runner_backend"] == "auto"


def test_rocm_default_attention_backend(public: dict[str, Path]) -> None:
    assert check("0.5.23", "MI300X", "--model-path {llama31_8b}",
                 public)["effective"]["attention_backend"] == "aiter"
    # DeepSeek-V3 (MLA): 128 KV heads; aiter with 128 or 16 per GPU, triton otherwise
    assert check("0.5.11", "MI300X", "--model-path {deepseek_v3} --tp 8", public,
                 gpus=8)["effective"]["attention_backend"] == "aiter"
    assert check("0.5.11", "MI300X", "--model-path {deepseek_v3} --tp 4", public,
                 gpus=4)["effective"]["attention_backend"] == "triton"
    # hicache's implicit decode backend: no flashinfer on ROCm
    hicache = check("0.5.11", "MI300X", "--model-path {llama31_8b} --attention-backend fa3 "
                    "--enable-hierarchical-cache", public)
    assert hicache["effective"]["decode_attention_backend"] == "triton"


def test_qwen3_next_overlap_with_the_radix_cache(public: dict[str, Path]) -> None:
    on = check("0.5.6.post1", "H100", "--model-path {qwen3_next_80b} --tp 4", public, gpus=4)
    assert on["effective"]["disable_overlap_schedule"] is True
    off = check("0.5.6.post1", "H100", "--model-path {qwen3_next_80b} --tp 4 --disable-radix-cache",
                public, gpus=4)
    assert off["effective"]["disable_overlap_schedule"] is False
