"""The page size an attention backend forces and the prefill backend a decode-only backend fills
in, read from each release's own blocks (traits `attention_page_rules`,
`backend_prefill_defaults`). Every expected value below is what real SGLang showed for the same
launch (focused sweeps of 2026-12-05, `conformance run --with`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.api import check_argv
from wizard.sglang.releases import load_release


@pytest.mark.parametrize(("version", "backend", "model", "gpu", "extra", "page"), [
    # hpc_ops keeps only 64 (0.5.17+): real 0.5.18, H100, seed 46201, every case
    ("0.5.18", "hpc_ops", "qwen3_32b", "H100", (), 64),
    ("0.5.23", "hpc_ops", "qwen3_32b", "H100", (), 64),
    # tokenspeed_mla keeps 32 or 64: real 0.5.13, B200, seed 46202
    ("0.5.13", "tokenspeed_mla", "deepseek_v3", "B200", ("--kv-cache-dtype", "fp8_e4m3"), 64),
    # cutedsl_mla keeps 32 or 64: real 0.5.19 / 0.5.23, B200, seed 46202
    ("0.5.19", "cutedsl_mla", "deepseek_v3", "B200", ("--kv-cache-dtype", "fp8_e4m3"), 64),
    ("0.5.23", "cutedsl_mla", "deepseek_v3", "B200", ("--kv-cache-dtype", "fp8_e4m3"), 64),
    # FlashMLA writes 64 whatever was typed (was a hand-written step before the probe)
    ("0.5.9", "flashmla", "deepseek_v3", "H100", (), 64),
])
def test_backend_page_snap(public: dict[str, Path], version: str, backend: str, model: str,
                           gpu: str, extra: tuple[str, ...], page: int) -> None:
    report = check_argv(["--model-path", str(public[model]), "--tp", "8",
                         "--attention-backend", backend, "--page-size", "16", *extra],
                        sglang_version=version, gpu=gpu, gpus=8)
    assert report.effective["page_size"] == page
    finding = next(f for f in report.findings if f.rule == "R-BACKEND-PAGE")
    assert finding.message == f"{backend}: page_size 16 -> {page}."


def test_a_kept_page_is_left_alone(public: dict[str, Path]) -> None:
    report = check_argv(["--model-path", str(public["qwen3_32b"]), "--tp", "8",
                         "--attention-backend", "hpc_ops", "--page-size", "64"],
                        sglang_version="0.5.18", gpu="H100", gpus=8)
    assert report.effective["page_size"] == 64
    assert not [f for f in report.findings if f.rule == "R-BACKEND-PAGE"]


def test_releases_without_the_backend_have_no_snap() -> None:
    """hpc_ops came with 0.5.17 and cutlass_mla is gone from 0.5.20: the probe reads
    each release's blocks, so neither is assumed where the release has no such block."""
    def backends(version: str) -> set[str]:
        return {rule[0] for rule in load_release(version).traits["attention_page_rules"]}

    assert "hpc_ops" not in backends("0.5.16") and "hpc_ops" in backends("0.5.17")
    assert "cutlass_mla" in backends("0.5.19") and "cutlass_mla" not in backends("0.5.20")
    hpc = next(r for r in load_release("0.5.18").traits["attention_page_rules"]
               if r[0] == "hpc_ops")
    assert hpc[2:] == [[64], 64]


@pytest.mark.parametrize("version", ["0.5.14", "0.5.19", "0.5.23"])
def test_cutedsl_fills_in_the_prefill_backend(public: dict[str, Path], version: str) -> None:
    """CuteDSL MLA only decodes: with no prefill backend typed SGLang sets trtllm_mla (real
    0.5.19 / 0.5.23, B200, every accepted case of seed 46202 showed it)."""
    argv = ["--model-path", str(public["deepseek_v3"]), "--tp", "8",
            "--attention-backend", "cutedsl_mla", "--kv-cache-dtype", "fp8_e4m3"]
    report = check_argv(argv, sglang_version=version, gpu="B200", gpus=8)
    assert report.effective["prefill_attention_backend"] == "trtllm_mla"
    typed = check_argv([*argv, "--prefill-attention-backend", "fa4"], sglang_version=version,
                       gpu="B200", gpus=8)
    assert typed.effective["prefill_attention_backend"] == "fa4"


@pytest.mark.parametrize("version", ["0.5.14", "0.5.19"])
def test_nvfp4_online_picks_the_trtllm_moe_runner(public: dict[str, Path], version: str) -> None:
    """`--quantization nvfp4_online` (SM100 only) turns an `auto` MoE runner into
    flashinfer_trtllm in the quantization's own block (`if quantization == "nvfp4_online": if not
    <SM100>: raise ...; if moe_runner_backend == "auto": ...`, trait `moe_runner_platform`), and
    the speculative runner copies it: real 0.5.14 on a GB300 showed `flashinfer_trtllm` (w00021,
    seed 46101) where the wizard showed `auto`."""
    report = check_argv(["--model-path", str(public["qwen35_35b_a3b"]),
                         "--quantization", "nvfp4_online"],
                        sglang_version=version, gpu="GB300", gpus=1)
    assert report.effective["speculative_moe_runner_backend"] == "flashinfer_trtllm"
    entries = load_release(version).traits["moe_runner_platform"]
    assert {"quantization": "nvfp4_online", "probes": ["is_sm100_supported" if version == "0.5.14"
                                                       else "is_sm100"],
            "runner": "flashinfer_trtllm"} in entries


def _hybrid_nvfp4(config: dict) -> dict:
    """A config with a hybrid FP8 + NVFP4-MoE `quantization_config` (the shape SGLang's
    ModelConfig detects: nvidia/DeepSeek-V4-Pro-NVFP4's)."""
    return {**config, "quantization_config": {
        "quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "moe_quant_algo": "NVFP4",
        "group_size": 16, "ignore": ["lm_head"]}}


def test_cutedsl_moe_needs_nvfp4(public: dict[str, Path], tmp_path: Path) -> None:
    """`--moe-runner-backend flashinfer_cutedsl` asserts `quantization in ["modelopt_fp4"] or
    <model config>.nvfp4_moe_meta is not None` (0.5.14+): refused for a bf16 checkpoint (real
    0.5.15.post1 on a B200: w00266, seed 46104; the site was skipped behind the model config's
    attribute before), accepted for a hybrid NVFP4-MoE checkpoint (the model fact
    `nvfp4_moe_meta`)."""
    import json

    from wizard.api import check_case

    def first(model: Path) -> str | None:
        report = check_case({"id": 1, "sglang_version": "0.5.15.post1", "gpu": "B200",
                             "gpus": 1, "env": {},
                             "argv": ["--model-path", str(model),
                                      "--moe-runner-backend", "flashinfer_cutedsl"]})
        error = report["first_sglang_error"]
        if error is None:
            return None
        finding = next(f for f in report["findings"] if f["rule"] == error)
        return str(finding["sglang"]["message"])

    refused = first(public["qwen3_32b"])
    assert refused is not None and "FlashInfer CuteDSL MOE currently supports only" in refused
    hybrid = tmp_path / "hybrid"
    hybrid.mkdir()
    config = json.loads((public["deepseek_v3"] / "config.json").read_text())
    (hybrid / "config.json").write_text(json.dumps(_hybrid_nvfp4(config)))
    shown = first(hybrid)
    assert shown is None or "FlashInfer CuteDSL MOE currently supports only" not in shown



@pytest.mark.parametrize("version", ["0.5.5", "0.5.11"])
def test_dual_chunk_attention_turns_the_radix_cache_off(public: dict[str, Path],
                                                         version: str) -> None:
    """`if attention_backend == "dual_chunk_flash_attn": ... disable_radix_cache = True` (trait
    `attention_backend_writes`): real 0.5.11 and 0.5.5 ran with the radix cache off (wide sweeps
    seeds 46104 and 46101, NGRAM launches), the wizard showed it on."""
    report = check_argv(["--model-path", str(public["llama31_70b"]), "--tp", "2",
                         "--attention-backend", "dual_chunk_flash_attn"],
                        sglang_version=version, gpu="H100", gpus=2)
    assert report.effective["disable_radix_cache"] is True
    finding = next(f for f in report.findings if f.rule == "R-BACKEND-WRITES")
    assert "dual_chunk_flash_attn: disable_radix_cache False -> True." in finding.message


@pytest.mark.parametrize(("version", "expected"), [
    # real SGLang, H100 x8, focused sweep seed 46702 (`--enable-prefill-cp --cp-strategy
    # interleave --dp-size 2 --tp-size 8` on DeepSeek-V3): 0.5.17 w00092, 0.5.20 w00015. (0.5.22+
    # write the attention-DP width through a helper with an assert, which the walk does not
    # inline: there only `dp_size = 1` is replayed; real 0.5.23 w00125 shows attn_dp_size 2.)
    ("0.5.17", {"enable_dp_attention": True, "dp_size": 2}),
    ("0.5.20", {"enable_dp_attention": True, "dp_size": 2}),
    ("0.5.23", {"dp_size": 1}),
])
def test_mla_prefill_context_parallel_turns_dp_attention_on(
        public: dict[str, Path], version: str, expected: dict[str, object]) -> None:
    """DeepSeek's model override writes `enable_dp_attention = True` for MLA prefill context
    parallelism: a registered override's write of a field the engine resolves, replayed where
    the registry runs (it was not: the wizard showed DP attention off)."""
    report = check_argv(["--model-path", str(public["deepseek_v3"]), "--enable-prefill-cp",
                         "--cp-strategy", "interleave", "--dp-size", "2", "--tp-size", "8"],
                        sglang_version=version, gpu="H100", gpus=8)
    assert {name: report.effective.get(name) for name in expected} == expected
