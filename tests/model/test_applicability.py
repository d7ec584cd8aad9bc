"""Algorithm applicability: the MTP lists of the release data, and the draft checks SGLang does not
make at argument time, asked from the rule engine (`api.draft_findings`), not decided again."""

from __future__ import annotations

from pathlib import Path

import families as fam
import pytest

from wizard.api import draft_findings
from wizard.applicability import mtp_capable
from wizard.choices import algorithm_options
from wizard.model_facts import ModelFacts
from wizard.model_info import load_model_facts


def _facts(builder, tmp_path: Path) -> ModelFacts:
    family = builder()
    return load_model_facts(family.write(tmp_path / family.name))


@pytest.mark.parametrize(
    ("arch", "v0511", "v0523"),
    [
        ("Qwen3_5ForConditionalGeneration", True, True),
        ("Qwen3_5MoeForConditionalGeneration", True, True),
        ("DeepseekV3ForCausalLM", True, True),
        ("Glm4MoeForCausalLM", True, True),
        ("Qwen3MoeForCausalLM", False, True),
        ("DeepseekV4ForCausalLM", False, True),
        ("LlamaForCausalLM", False, False),
        ("KimiK25ForConditionalGeneration", False, False),
    ],
)
def test_mtp_capable_per_version(arch: str, v0511: bool, v0523: bool) -> None:
    assert mtp_capable(arch, "0.5.11") is v0511
    assert mtp_capable(arch, "0.5.23") is v0523


def _rules(target: ModelFacts, draft: ModelFacts | None, algorithm: str, version: str = "0.5.11",
           **trio: int | None) -> dict[str, str]:
    return {f.rule: f.severity for f in draft_findings(
        target, draft, algorithm=algorithm, sglang_version=version, **trio)}


def test_nextn_needs_class_and_layers(tmp_path: Path) -> None:
    assert _rules(_facts(fam.qwen36_27b, tmp_path), None, "NEXTN") == {}
    assert _rules(_facts(fam.llama31_8b, tmp_path), None, "NEXTN") == {
        "R-DRAFT-MISSING": "error", "R-NEXTN-NO-MTP": "error"}
    kimi_k2 = _rules(_facts(fam.kimi_k2, tmp_path), None, "NEXTN", "0.5.23")
    assert kimi_k2.get("R-NEXTN-NO-MTP") == "error"


def test_eagle3_draft_run_as_eagle_is_the_engines_error(tmp_path: Path) -> None:
    kimi = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    for algo in ("EAGLE", "NEXTN"):
        assert _rules(kimi, draft, algo).get("R-EAGLE3-DRAFT-WITH-EAGLE") == "error"
        [finding] = [f for f in draft_findings(kimi, draft, algorithm=algo, sglang_version="0.5.11")
                     if f.rule == "R-EAGLE3-DRAFT-WITH-EAGLE"]
        assert finding.message.endswith(f"but the algorithm is {algo}.")  # the typed one
    assert "R-EAGLE3-DRAFT-WITH-EAGLE" not in _rules(kimi, draft, "EAGLE3")


def test_draft_hidden_size_and_vocab(tmp_path: Path) -> None:
    kimi = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    llama = _facts(fam.llama31_8b, tmp_path)
    assert _rules(kimi, draft, "EAGLE3") == {}
    wrong = _rules(llama, draft, "EAGLE3")
    assert wrong == {"R-DRAFT-HIDDEN-SIZE": "error", "R-DRAFT-VOCAB": "warning"}


def test_draft_missing(tmp_path: Path) -> None:
    kimi = _facts(fam.kimi_k25_int4, tmp_path)
    dsv3 = _facts(fam.deepseek_v3, tmp_path)
    assert _rules(kimi, None, "EAGLE3") == {"R-DRAFT-MISSING": "error"}
    assert _rules(dsv3, None, "EAGLE") == {}  # SGLang fills in the model path
    assert _rules(kimi, None, "NGRAM") == {}


@pytest.mark.parametrize(
    ("steps", "topk", "tokens", "ok"),
    [
        (5, 4, 8, True),
        (1, 4, 5, True),  # capacity 4 -> 5 tokens is the most
        (1, 4, 8, False),
        (2, 2, 8, False),  # capacity 2 + 1 * 4 = 6 -> 7 tokens at most
        (1, 1, 16, True),  # topk 1: SGLang rewrites draft tokens to steps + 1 (no overflow)
    ],
)
def test_tree_capacity_is_the_engines(tmp_path: Path, steps: int, topk: int, tokens: int,
                                      ok: bool) -> None:
    kimi = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    found = _rules(kimi, draft, "EAGLE3", num_steps=steps, topk=topk, num_draft_tokens=tokens)
    assert ("R-TREE-CAPACITY" not in found) is ok


def test_algorithm_options_for_incident_models(tmp_path: Path) -> None:
    qwen = _facts(fam.qwen36_27b, tmp_path)
    options = {o.name: o for o in algorithm_options(qwen, None, "0.5.11")}
    assert list(options) == ["NEXTN", "EAGLE", "EAGLE3", "STANDALONE", "NGRAM", "DFLASH"]
    assert options["NEXTN"].available and not options["NEXTN"].needs_draft
    assert options["EAGLE3"].needs_draft and options["EAGLE3"].reason == "needs a draft model"

    kimi = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    options = {o.name: o for o in algorithm_options(kimi, draft, "0.5.23")}
    assert "DSPARK" in options and "UNO" in options
    assert options["EAGLE3"].available
    assert not options["EAGLE"].available and "EAGLE-3 model" in options["EAGLE"].reason
    assert not options["NEXTN"].available
    assert not options["STANDALONE"].available
    assert not options["DFLASH"].available
    assert options["NGRAM"].available


def test_algorithm_options_without_target() -> None:
    options = {o.name: o for o in algorithm_options(None, None, "0.5.11")}
    assert not options["NEXTN"].available and options["NEXTN"].reason == "inspect the model first"
