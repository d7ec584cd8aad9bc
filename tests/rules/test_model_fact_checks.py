"""SGLang's checks that read the model as well as the flags, on the public model configs the wide
conformance generator uses: `--quantize-and-serve` (ModelConfig's first check, trait
`quantize_and_serve` read from each wheel) and the R-ARG-SITE sites over the model's
architecture (`["model", "architecture"]`: `hf_config.architectures[0]`) and `len(flag)`.
Each expectation was seen on the release's real SGLang (the wide sweeps of docs/conformance.md,
"Model facts in the long tail")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from public_checks import check_public

from wizard.api import check_argv, check_case, check_profile
from wizard.profile import load_profile
from wizard.rules.arg_sites import GENERIC, compile_condition
from wizard.rules.engine import first_sglang_error
from wizard.sglang.releases import load_release, release_names

ROOT = Path(__file__).resolve().parents[2]

check = check_public


def first_finding(report: dict[str, Any]) -> dict[str, Any] | None:
    rule = report.get("first_sglang_error")
    return next((f for f in report["findings"] if f["rule"] == rule), None)


def _serve(version: str) -> dict[str, Any]:
    return dict(load_release(version).traits.get("quantize_and_serve") or {})


@pytest.mark.parametrize("version", ["0.5.4.post3", "0.5.11", "0.5.23"])
def test_quantize_and_serve_needs_a_modelopt_method(version: str, public: dict[str, Path]
                                                    ) -> None:
    serve = _serve(version)
    assert "modelopt_fp8" in serve["methods"]
    report = check(version, "H100", "--model-path {qwen3_32b} --quantize-and-serve", public)
    error = first_finding(report)
    assert error is not None and error["rule"] == "R-QUANTIZE-SERVE-METHOD"
    assert error["message"] == serve["needs_method"]
    assert error["message"].startswith("quantize_and_serve requires ModelOpt quantization")
    assert error["sglang"]["exception"] == "ValueError"
    assert error["sglang"]["where"].startswith("sglang/srt/configs/model_config.py:")
    disabled = first_finding(check(
        version, "H100", "--model-path {qwen3_32b} --quantize-and-serve --quantization "
        "modelopt_fp8", public))
    assert disabled is not None and disabled["rule"] == "R-QUANTIZE-SERVE-DISABLED"
    assert disabled["sglang"]["exception"] == "NotImplementedError"
    assert disabled["message"] == serve["disabled"]
    assert check(version, "H100", "--model-path {qwen3_32b}", public)[
        "first_sglang_error"] is None


def test_quantize_and_serve_comes_before_the_quantization_table(public: dict[str, Path]) -> None:
    """0.5.4.post3 on MI325X: gpt-oss's MXFP4 is not registered there (R-QUANT-UNKNOWN), but
    ModelConfig checks --quantize-and-serve first (model_config.py:611 before :705)."""
    report = check("0.5.4.post3", "MI325X", "--model-path={gpt_oss_20b} --tp-size=8 "
                   "--quantize-and-serve", public, gpus=8)
    error = first_finding(report)
    assert error is not None and error["rule"] == "R-QUANTIZE-SERVE-METHOD"
    assert error["sglang"]["where"] == "sglang/srt/configs/model_config.py:611"
    assert "R-QUANT-UNKNOWN" in [f["rule"] for f in report["findings"]]


def test_quantize_and_serve_fix_drops_the_flag() -> None:
    ready = load_profile(ROOT / "profiles" / "deepseek-v3-fp8-2x8-h100.toml")
    profile = ready.with_edits({"sglang_version": "0.5.11",
                                "extra_args": ["--quantize-and-serve"]})
    error = first_sglang_error(check_profile(profile))
    assert error is not None and error.rule == "R-QUANTIZE-SERVE-METHOD"
    assert [fix.label for fix in error.fixes] == ["Drop --quantize-and-serve from extra args"]
    fixed = profile.with_edits(error.fixes[0].edits)
    assert fixed.extra_args == []
    assert "R-QUANTIZE-SERVE-METHOD" not in [f.rule for f in check_profile(fixed).findings]


def test_every_release_with_the_flag_has_the_check() -> None:
    """The releases whose flag table has --quantize-and-serve read the check from their source."""
    for version in release_names():
        release = load_release(version)
        serve = release.traits.get("quantize_and_serve") or {}
        if "quantize_and_serve" in release.dests:
            assert serve and release.site("R-QUANTIZE-SERVE-METHOD") is not None, version


@pytest.mark.parametrize(("version", "model", "holds"), [
    ("0.5.11", "qwen3_32b", True),  # Qwen3ForCausalLM: not in the encoder list
    ("0.5.11", "qwen35_27b", False),  # Qwen3_5ForConditionalGeneration: in it
    ("0.5.23", "llama31_8b", True),
    ("0.5.23", "qwen35_27b", False),
])
def test_encoder_only_reads_the_architecture(version: str, model: str, holds: bool,
                                             public: dict[str, Path]) -> None:
    report = check(version, "H100", "--model-path {" + model + "} --encoder-only", public)
    sites = [f for f in report["findings"] if f["rule"] == GENERIC.id
             and "encoder disaggregation" in f["message"]]
    assert bool(sites) is holds
    if holds:
        arch = {"qwen3_32b": "Qwen3ForCausalLM", "llama31_8b": "LlamaForCausalLM"}[model]
        assert sites[0]["message"].startswith(f"Model type {arch} is not supported for encoder "
                                              "disaggregation")
        assert report["first_sglang_error"] == GENERIC.id


def test_architecture_sites_abstain_without_model_facts() -> None:
    """No config.json to read: a site over the architecture does not hold (no guess)."""
    report = check_argv(["--model-path", "/models/none", "--encoder-only"],
                        sglang_version="0.5.11", gpu="H100", gpus=1)
    assert not [f for f in report.findings if "encoder disaggregation" in f.message]


def test_language_only_needs_encoder_urls(public: dict[str, Path]) -> None:
    """0.5.11 `if self.language_only and len(self.encoder_urls) == 0: raise ValueError`."""
    without = check("0.5.11", "H100", "--model-path {qwen35_27b} --language-only", public)
    error = first_finding(without)
    assert error is not None and error["rule"] == GENERIC.id
    assert error["message"] == "requires at least one encoder urls to be set via --encoder-urls"
    with_urls = check("0.5.11", "H100", "--model-path {qwen35_27b} --language-only "
                      "--encoder-urls http://encoder:30000", public)
    assert with_urls["first_sglang_error"] is None


def test_model_and_len_nodes_compile() -> None:
    holds = compile_condition(["and", ["flag", "x"], ["cmp", "not in", ["model", "architecture"],
                                                       ["const", ["A", "B"]]]], {"x": False})
    assert holds({"x": True}, frozenset(), {"architecture": "C"})
    assert not holds({"x": True}, frozenset(), {"architecture": "A"})
    with pytest.raises(TypeError):  # no facts: the engine counts the site as not holding
        holds({"x": True}, frozenset(), None)
    with pytest.raises(KeyError):
        holds({"x": True}, frozenset(), {})
    empty = compile_condition(["cmp", "==", ["len", ["flag", "urls"]], ["const", 0]],
                              {"urls": []})
    assert empty({}, frozenset()) and not empty({"urls": ["u"]}, frozenset())
    with pytest.raises(ValueError):
        compile_condition(["model", "hidden_size"], {})  # only the facts the engine supplies


@pytest.mark.parametrize(("version", "where_prefix"), [
    ("0.5.11", "sglang/srt/server_args.py:"),  # assert is_deepseek_nsa(hf_config)
    ("0.5.18", "sglang/srt/arg_groups/hisparse_hook.py:"),  # is_deepseek_dsa(hf_config) or ...
    ("0.5.23", "sglang/srt/arg_groups/hisparse_hook.py:"),
])
def test_hisparse_refuses_a_model_without_sparse_attention_first(
        version: str, where_prefix: str, public: dict[str, Path]) -> None:
    """The architecture assert comes before the radix-cache assert of the same check; DeepSeek-V3
    is in the DSA architecture list but its config.json sets no index_topk."""
    for model in ("deepseek_v3", "llama31_8b"):
        report = check(version, "H100", "--model-path {" + model + "} --tp 8 --enable-hisparse",
                       public, gpus=8)
        hisparse = [f for f in report["findings"] if f["rule"] == GENERIC.id
                    and "hisparse" in f["message"].lower()]
        assert hisparse, (version, model)
        assert "only supported for DSA" in hisparse[0]["message"]
        assert hisparse[0]["sglang"]["where"].startswith(where_prefix)
        assert hisparse[0]["sglang"]["exception"] == "AssertionError"


def test_dsa_cache_layer_split_reads_the_model_test(public: dict[str, Path]) -> None:
    """0.5.18 `if self.enable_dsa_cache_layer_split and not is_deepseek_dsa(hf_config)`, behind
    `if parse_connector_type(self.model_path) == ConnectorType.INSTANCE: return` (a folder is
    never an instance connector)."""
    report = check("0.5.18", "H100", "--model-path {llama31_8b} --tp 8 "
                   "--enable-dsa-cache-layer-split", public, gpus=8)
    error = first_finding(report)
    assert error is not None and error["rule"] == GENERIC.id
    assert error["message"] == ("--enable-dsa-cache-layer-split is only supported for DSA "
                                "(DeepSeek Sparse Attention) models.")


def test_model_tests_and_connectors_compile() -> None:
    dsa = compile_condition(["and", ["cmp", "in", ["if", ["model", "architectures"],
                                                   ["index", ["model", "architectures"], 0],
                                                   ["const", None]], ["const", ["D"]]],
                             ["model", "has:index_topk"]], {})
    model = {"architectures": ["D"], "has:index_topk": True}
    assert dsa({}, frozenset(), model)
    assert not dsa({}, frozenset(), {**model, "has:index_topk": False})
    assert not dsa({}, frozenset(), {**model, "architectures": []})
    instance = compile_condition(["connector", ["flag", "model_path"]], {"model_path": None})
    assert not instance({"model_path": "/models/llama"}, frozenset())
    assert not instance({"model_path": "meta-llama/Llama-3.1-8B"}, frozenset())
    with pytest.raises(KeyError):  # a connector URL: not modelled, the site does not hold
        instance({"model_path": "instance://host:1234"}, frozenset())


@pytest.mark.parametrize(("version", "first"), [
    ("0.5.11", "R-QUANTIZE-SERVE-METHOD"),  # ModelConfig checks the flag before config.json
    ("0.5.22", "R-QUANTIZE-SERVE-METHOD"),
    ("0.5.23", "R-MODEL-TYPE-UNKNOWN"),  # apply_muse_spark_env_defaults reads config.json first
])
def test_config_read_order_against_quantize_and_serve(version: str, first: str,
                                                      tmp_path: Path) -> None:
    """Seen on real SGLang (the first witness run of R-QUANTIZE-SERVE-METHOD on an unknown
    model type, 0.5.4-0.5.23): trait `config_read_first` is set on 0.5.23 only."""
    from wizard.conformance.witnesses import write_witness_models

    models = write_witness_models(tmp_path)
    report = check_case({"id": "t", "sglang_version": version, "gpu": "H100", "gpus": 1,
                         "env": {}, "argv": ["--model-path", str(models["unknown_type"]),
                                             "--quantize-and-serve"]})
    assert report["first_sglang_error"] == first
    assert bool(load_release(version).traits.get("config_read_first")) is (
        first == "R-MODEL-TYPE-UNKNOWN")
