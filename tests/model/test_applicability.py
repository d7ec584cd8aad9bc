"""Algorithm applicability and the draft checks SGLang does not make at argument time."""

from __future__ import annotations

from pathlib import Path

import families as fam
import pytest

from wizard.applicability import (
    algorithm_options,
    draft_hidden_size,
    draft_missing,
    draft_vocab,
    eagle3_draft_with_eagle,
    mtp_capable,
    nextn_applicable,
    tree_capacity,
)
from wizard.model_info import ModelFacts, load_model_facts


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


def test_nextn_needs_class_and_layers(tmp_path: Path) -> None:
    assert nextn_applicable(_facts(fam.qwen36_27b, tmp_path), "0.5.11").ok
    llama = nextn_applicable(_facts(fam.llama31_8b, tmp_path), "0.5.11")
    assert not llama.ok and llama.check_id == "nextn-arch" and llama.severity == "error"
    assert "no MTP/NextN draft class for LlamaForCausalLM" in llama.message
    kimi_k2 = nextn_applicable(_facts(fam.kimi_k2, tmp_path), "0.5.23")
    assert not kimi_k2.ok and kimi_k2.check_id == "nextn-layers"


def test_eagle3_draft_run_as_eagle_is_an_error(tmp_path: Path) -> None:
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    for algo in ("EAGLE", "NEXTN"):
        check = eagle3_draft_with_eagle(algo, draft)
        assert not check.ok and check.severity == "error"
        assert (
            "accept length 1.00" in check.message
            and check.fix == "use --speculative-algorithm EAGLE3"
        )
    assert eagle3_draft_with_eagle("EAGLE3", draft).ok
    assert eagle3_draft_with_eagle("EAGLE", None).ok


def test_draft_hidden_size_and_vocab(tmp_path: Path) -> None:
    kimi = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    llama = _facts(fam.llama31_8b, tmp_path)
    assert draft_hidden_size(kimi, draft, "EAGLE3").ok
    assert draft_vocab(kimi, draft, "EAGLE3").ok
    wrong = draft_hidden_size(llama, draft, "EAGLE3")
    assert not wrong.ok
    assert "target_hidden_size 7168 does not match the target's hidden_size 4096" in wrong.message
    vocab = draft_vocab(llama, draft, "EAGLE3")
    assert not vocab.ok and vocab.severity == "error"
    assert "163840" in vocab.message and "128256" in vocab.message
    standalone = draft_vocab(llama, _facts(fam.qwen3_32b, tmp_path), "STANDALONE")
    assert not standalone.ok and standalone.severity == "warning"


def test_draft_missing(tmp_path: Path) -> None:
    kimi = _facts(fam.kimi_k25_int4, tmp_path)
    dsv3 = _facts(fam.deepseek_v3, tmp_path)
    missing = draft_missing(kimi, "EAGLE3", False, "0.5.11")
    assert not missing.ok and "loads the target itself" in missing.message
    assert draft_missing(kimi, "EAGLE3", True, "0.5.11").ok
    assert draft_missing(dsv3, "EAGLE", False, "0.5.11").ok  # SGLang fills in the model path
    dflash = draft_missing(kimi, "DFLASH", False, "0.5.23")
    assert not dflash.ok and "refuses to start" in dflash.message
    assert draft_missing(kimi, "NGRAM", False, "0.5.11").ok


@pytest.mark.parametrize(
    ("steps", "topk", "tokens", "ok"),
    [
        (5, 4, 8, True),
        (2, 4, 3, True),
        (3, 1, 4, True),
        (1, 4, 5, True),  # capacity 4 -> 5 tokens is the most
        (1, 4, 8, False),
        (2, 2, 8, False),  # capacity 2 + 1 * 4 = 6 -> 7 tokens at most
        (1, 1, 16, True),  # topk 1: SGLang rewrites draft tokens to steps + 1 (no overflow)
        (None, 1, 16, True),  # nothing to check until all three are known
    ],
)
def test_tree_capacity(steps, topk, tokens, ok) -> None:
    check = tree_capacity(steps, topk, tokens)
    assert check.ok is ok
    if not ok:
        assert check.fix is not None and "--speculative-num-draft-tokens" in check.fix


def test_tree_capacity_suggests_largest_that_fits() -> None:
    check = tree_capacity(1, 4, 8)
    assert check.fix == "use --speculative-num-draft-tokens 5 or raise steps/topk"


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
    assert not options["EAGLE"].available and "accept length 1.00" in options["EAGLE"].reason
    assert not options["NEXTN"].available
    assert not options["STANDALONE"].available
    assert not options["DFLASH"].available
    assert options["NGRAM"].available


def test_algorithm_options_without_target() -> None:
    options = {o.name: o for o in algorithm_options(None, None, "0.5.11")}
    assert not options["NEXTN"].available and options["NEXTN"].reason == "inspect the model first"


def test_tree_capacity_topk1_notes_the_rewrite() -> None:
    check = tree_capacity(1, 1, 16)
    assert check.ok and "steps + 1 = 2 tokens" in check.message
