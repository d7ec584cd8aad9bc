"""SGLang's hooks the generic rule reads since issue #24's branch `hooks`, on the committed release
data and the public model configs of the wide sweeps: a PD decode server's forced
`disable_radix_cache` (a write of a field the engine resolves, replayed into its values), the
layernorm-SP and `--enable-cp-decode-attn-tp` checks (parameters bound at the call, constants and
helpers imported from `sglang.srt.layers`), and `--enable-http2` without granian (an import probe
read against the wheel's `Requires-Dist`). Each expectation was seen on the release's real SGLang
(`conformance run --kind wide --with=...`, seeds 24001-24108 of the branch's report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from public_checks import check_public

from wizard.rules.arg_sites import GENERIC
from wizard.sglang.releases import load_release

check = check_public


def first(report: dict[str, Any]) -> dict[str, Any]:
    rule = report.get("first_sglang_error")
    found = next((f for f in report["findings"] if f["rule"] == rule), None)
    assert found is not None, report["findings"]
    return found


def where(finding: dict[str, Any]) -> str:
    return str(finding["sglang"]["where"])


@pytest.mark.parametrize("version", ["0.5.3", "0.5.6", "0.5.11", "0.5.17", "0.5.23"])
def test_a_decode_server_runs_without_the_radix_cache(version: str, public: dict[str, Path]
                                                      ) -> None:
    # "KV cache is forced as chunk cache for decode server": server_args.py before 0.5.16,
    # arg_groups/pd_disaggregation_hook.py after; the wizard showed False before
    plain = check(version, "H100", "--model-path {llama31_8b}", public)
    decode = check(version, "H100", "--model-path {llama31_8b} --disaggregation-mode decode",
                   public)
    assert plain["effective"]["disable_radix_cache"] is False
    assert decode["sglang_verdict"] == "ok"
    assert decode["effective"]["disable_radix_cache"] is True
    writes = [w for w in load_release(version).generic_writes
              if w["field"] == "disable_radix_cache"]
    assert writes and all(w["value"][0] == "const" for w in writes)


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_the_decode_radix_option_keeps_it(version: str, public: dict[str, Path]) -> None:
    # (0.5.11 needs the nixl transfer backend for it, server_args.py:3747)
    decode = ("--model-path {llama31_8b} --disaggregation-mode decode "
              "--disaggregation-transfer-backend nixl --disaggregation-decode-enable-radix-cache")
    report = check(version, "B200", decode, public)
    assert report["sglang_verdict"] == "ok"
    assert report["effective"]["disable_radix_cache"] is False
    # a typed --disable-radix-cache is overridden too ("Radix cache is enabled for decode server")
    typed = check(version, "B200", decode + " --disable-radix-cache", public)
    assert typed["effective"]["disable_radix_cache"] is False


def test_the_forced_value_reaches_the_later_checks(public: dict[str, Path]) -> None:
    # 0.5.3: the hierarchical cache then has no radix cache to offload (server_args.py:1233)
    report = check("0.5.3", "H100", "--model-path {llama31_8b} --disaggregation-mode decode "
                   "--enable-hierarchical-cache", public)
    finding = first(report)
    assert finding["rule"] == "R-HICACHE-NO-RADIX"
    assert where(finding) == "sglang/srt/server_args.py:1233"
    assert check("0.5.3", "H100", "--model-path {llama31_8b} --enable-hierarchical-cache",
                 public)["sglang_verdict"] == "ok"


@pytest.mark.parametrize(("model", "extra", "line", "words"), [
    ("llama31_8b", "--tp 2", 131,
     "--enable-layernorm-sp is only supported for ['MuseSparkForConditionalGeneration', "
     "'Qwen3ForCausalLM']; got LlamaForCausalLM."),
    ("qwen3_32b", "", 136, "--enable-layernorm-sp requires tp_size > 1"),
    ("qwen3_32b", "--tp 2 --pp-size 2", 187,
     "--enable-layernorm-sp is not compatible with pipeline parallelism"),
])
def test_layernorm_sp_reads_its_validator_through_the_call(
        model: str, extra: str, line: int, words: str, public: dict[str, Path]) -> None:
    # validate_layernorm_sp(architecture=..., tp_size=cfg.tp_size, ...): keyword parameters,
    # SP_SUPPORTED_ARCHITECTURES imported from sglang/srt/layers/layernorm_sp.py (a union)
    report = check("0.5.23", "H100", f"--model-path {{{model}}} --enable-layernorm-sp {extra}",
                   public, gpus=4)
    finding = first(report)
    assert finding["rule"] == GENERIC.id
    assert where(finding) == f"sglang/srt/arg_groups/layernorm_sp_hook.py:{line}"
    assert finding["message"].startswith(words)
    fine = check("0.5.23", "H100", "--model-path {qwen3_32b} --enable-layernorm-sp --tp 2",
                 public, gpus=2)
    assert fine["sglang_verdict"] == "ok"


def test_cp_decode_attn_tp_needs_a_listed_architecture(public: dict[str, Path]) -> None:
    # model_hook.py:199, the list imported lazily from sglang/srt/layers/cp/cp_decode_attn_tp.py
    report = check("0.5.23", "B200", "--model-path {llama31_8b} --enable-cp-decode-attn-tp",
                   public)
    finding = first(report)
    assert finding["rule"] == GENERIC.id
    assert where(finding) == "sglang/srt/arg_groups/model_hook.py:199"
    assert "Got LlamaForCausalLM; supported: ['DeepseekV4ForCausalLM'" in finding["message"]


@pytest.mark.parametrize(("version", "site"), [
    ("0.5.11", "sglang/srt/server_args.py:985"),
    ("0.5.23", "sglang/srt/arg_groups/serving_hook.py:110"),
])
def test_http2_without_granian_says_which_install_it_assumes(
        version: str, site: str, public: dict[str, Path]) -> None:
    report = check(version, "H100", "--model-path {llama31_8b} --enable-http2", public)
    finding = first(report)
    assert where(finding) == site
    assert finding["message"].startswith("--enable-http2 requires the 'granian' package.")
    # granian is only in the wheel's `http2` extra: a host with it installed passes
    assert f'sglang[http2]=={version}' in finding["explanation"]
    assert "cannot see the host's packages" in finding["explanation"]
    entry = next(s for s in load_release(version).generic_sites if s["where"] == site)
    assert entry["optional"] == {"granian": "http2"}


def test_a_serving_hook_comes_before_the_model_config(public: dict[str, Path]) -> None:
    # 0.5.23 runs handle_ssl_validation (pipeline.py:125) before any hook builds the model
    # config: SGLang refused granian first, the wizard named R-QUANT-UNKNOWN before the dummy
    # model's early exit stopped leading the walk into ModelConfig
    report = check("0.5.23", "L40S", "--model-path {qwen35_35b_a3b} --tp 2 --quantization gptq "
                   "--enable-http2", public, gpus=2)
    assert where(first(report)) == "sglang/srt/arg_groups/serving_hook.py:110"
    alone = check("0.5.23", "L40S", "--model-path {qwen35_35b_a3b} --tp 2 --quantization gptq",
                  public, gpus=2)
    assert first(alone)["rule"] == "R-QUANT-UNKNOWN"


@pytest.mark.parametrize(("flag", "gpu", "rule", "site"), [
    ("--enable-nvidia-megakernel", "B200", "R-NVIDIA-MEGAKERNEL",
     "sglang/srt/kernel_plugins/nvidia/binding.py:380"),
    ("--enable-amd-monokernel", "MI355X", "R-AMD-MONOKERNEL",
     "sglang/srt/kernel_plugins/amd/binding.py:215"),
    ("--enable-amd-monokernel", "H100", "R-AMD-MONOKERNEL",
     "sglang/srt/kernel_plugins/amd/binding.py:215"),
])
def test_a_kernel_plugin_flag_is_refused_on_a_plain_install(
        flag: str, gpu: str, rule: str, site: str, public: dict[str, Path]) -> None:
    # 0.5.23 only (its wheel has kernel_plugins/); witnessed on the vendor's GPU
    report = check("0.5.23", gpu, f"--model-path {{llama31_8b}} {flag}", public)
    finding = first(report)
    assert (finding["rule"], where(finding)) == (rule, site)
    assert "pip install sglang==0.5.23" in finding["message"]
    assert "cannot see the host's packages" in finding["explanation"]
    assert load_release("0.5.23").site(rule) is not None
    assert load_release("0.5.22").site(rule) is None


def test_the_nvidia_hook_runs_first_and_the_fix_drops_the_flag() -> None:
    from wizard.api import check_argv

    argv = ["--model-path", "/models/none", "--enable-amd-monokernel",
            "--enable-nvidia-megakernel", "--tp", "2"]
    report = check_argv(argv, sglang_version="0.5.23", gpu="B200", gpus=2)
    errors = [f for f in report.findings if f.severity == "error"]
    assert [f.rule for f in errors] == ["R-NVIDIA-MEGAKERNEL", "R-AMD-MONOKERNEL"]
    fix = errors[0].fixes[0]
    assert fix.label == "Drop --enable-nvidia-megakernel from the command"
    kept = check_argv([a for a in argv if a != "--enable-nvidia-megakernel"],
                      sglang_version="0.5.23", gpu="B200", gpus=2)
    assert [f.rule for f in kept.findings if f.severity == "error"] == ["R-AMD-MONOKERNEL"]
