"""Every rule id has, per release where it holds, a case where it fires and a near miss where it
does not: SGLang's real results are committed (`conformance witnesses --write-fixtures`) and
replayed here against the wizard without a venv (wizard/conformance/witnesses.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wizard.api import check_case
from wizard.conformance.models import write_model_folders
from wizard.conformance.witnesses import (
    BY_RULE,
    EXCLUDED,
    UNREACHABLE,
    WITNESSES,
    Witness,
    holds,
    judge,
    placeholder_models,
    sglang_witnesses,
    uncovered_rules,
    unreachable,
    witness_cases,
    write_witness_models,
)
from wizard.rules.catalog import ALL_RULES, RULES_BY_ID
from wizard.sglang.releases import load_release, release_names

FIXTURES = Path(__file__).parent / "fixtures"

# (rule, release) pairs where the wizard and real SGLang disagree, and why (strict: a fix turns
# the expected failure into a failure, so the entry must then go).
_PER_ARCH = ("0.5.7/0.5.8 have no Lfm2 branch (SGLang and the wizard accept its extra_buffer); "
             "their archs without the extra buffer each assert in their own branch, and the "
             "release data holds one line (NemotronH's): no single witness matches it")
_NOBUF_OVERLAP = ("the release data locates R-MAMBA-NOBUF-OVERLAP at a fuzzy match (`page_size = "
                  "128`), but these releases assert instead (R-MAMBA-NOBUF-OVERLAP-23)")
_ROPE = ("0.5.6.post1 pins transformers 5, which sets rope_scaling on the tiny DeepSeek config "
         "(no factor): SGLang stops first with R-MLA-ROPE-FACTOR's KeyError, as the wizard says, "
         "so a witness on that model cannot reach its own rule")
KNOWN: dict[tuple[str, str], str] = {
    ("R-MAMBA-EXTRA-UNSUPPORTED", "0.5.7"): _PER_ARCH,
    ("R-MAMBA-EXTRA-UNSUPPORTED", "0.5.8"): _PER_ARCH,
    ("R-MAMBA-AUTO", "0.5.14"): "the release data locates R-MAMBA-AUTO at a fuzzy match of auto's "
                                "no_buffer fallback; 0.5.14 picks extra_buffer when overlap is on",
    **{("R-MAMBA-NOBUF-OVERLAP", f"0.5.{minor}"): _NOBUF_OVERLAP for minor in range(14, 24)},
    ("R-MAMBA-NOBUF-OVERLAP", "0.5.15.post1"): _NOBUF_OVERLAP,
    **{(rule, "0.5.6.post1"): _ROPE for rule in ("R-DPATTN-TP-DIVISIBLE", "R-TRTLLM-MLA-GPU",
                                                 "R-DRAFT-NOT-NEEDED", "R-DETERMINISTIC-MLA")},
}


def _fixture(version: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / f"witness-results-{version}.json").read_text()))


def _replayed() -> list[Any]:
    out = []
    for version in release_names():
        for witness in sglang_witnesses(version):
            reason = KNOWN.get((witness.rule, version))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            out.append(pytest.param(witness.rule, version, id=f"{witness.rule}-{version}",
                                    marks=marks))
    return out


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {**write_model_folders(root), **write_witness_models(root)}


def _report(case: dict[str, Any]) -> dict[str, Any]:
    return check_case(case)


def test_every_rule_has_a_witness_or_a_reason() -> None:
    assert uncovered_rules() == []
    ids = {r.id for r in ALL_RULES}
    assert set(EXCLUDED) <= ids and not set(EXCLUDED) & set(BY_RULE)
    assert set(BY_RULE) <= ids and len(BY_RULE) == len(WITNESSES)
    assert all(len(reason) > 40 for reason in EXCLUDED.values())
    for witness in WITNESSES:  # each witness holds somewhere, so it is exercised
        assert any(holds(witness.rule, load_release(v)) for v in release_names()), witness.rule


def test_known_disagreements_are_replayed() -> None:
    replayed = {(w.rule, v) for v in release_names() for w in sglang_witnesses(v)}
    assert set(KNOWN) <= replayed


def test_witnesses_that_argparse_refuses_are_listed_with_a_reason() -> None:
    found = {(rule, v) for v in release_names() for rule in unreachable(v)}
    listed = {(rule, v) for rule, (versions, _why) in UNREACHABLE.items() for v in versions}
    assert found == listed


@pytest.mark.parametrize("version", release_names())
def test_every_release_has_its_witness_results(version: str) -> None:
    fixture = _fixture(version)
    assert fixture["sglang_version"] == version
    assert sorted(fixture["witnesses"]) == sorted(w.rule for w in sglang_witnesses(version))
    assert "/root/" not in json.dumps(fixture) and "/tmp/" not in json.dumps(fixture)


@pytest.mark.parametrize(("rule", "version"), _replayed())
def test_the_wizard_agrees_with_sglang_on_the_witness(
    rule: str, version: str, models: dict[str, Path]
) -> None:
    witness = BY_RULE[rule]
    recorded = _fixture(version)["witnesses"][rule]
    fires, near = witness_cases(witness, version, models)
    shown = witness_cases(witness, version, placeholder_models())
    for side, case in zip(("fires", "near"), shown, strict=True):
        # the committed run is of the table as it is now
        assert recorded[side]["argv"] == " ".join(case["argv"]), side
        assert (recorded[side]["gpu"], recorded[side]["gpus"], recorded[side]["env"]) == (
            case["gpu"], case["gpus"], case["env"]), side
    problems = judge(witness, version, recorded["fires"]["sglang"], recorded["near"]["sglang"],
                     _report(fires), _report(near), models)
    assert problems == []


def _wizard_only() -> list[Any]:
    return [pytest.param(w.rule, v, id=f"{w.rule}-{v}") for w in WITNESSES if not w.sglang
            for v in release_names() if holds(w.rule, load_release(v))]


@pytest.mark.parametrize(("rule", "version"), _wizard_only())
def test_wizard_advice_fires_and_near_miss_does_not(
    rule: str, version: str, models: dict[str, Path]
) -> None:
    fires, near = witness_cases(BY_RULE[rule], version, models)
    assert rule in [f["rule"] for f in _report(fires)["findings"]]
    assert rule not in [f["rule"] for f in _report(near)["findings"]]


def test_judge_fails_when_sglang_raised_elsewhere(models: dict[str, Path]) -> None:
    """The replay can fail: a raise at another line than the release data's site is caught."""
    witness = BY_RULE["R-SPEC-STEPS-TRIO"]
    recorded = _fixture("0.5.11")["witnesses"]["R-SPEC-STEPS-TRIO"]
    moved = {**recorded["fires"]["sglang"], "where": "sglang/srt/server_args.py:1"}
    fires, near = witness_cases(witness, "0.5.11", models)
    problems = judge(witness, "0.5.11", moved, recorded["near"]["sglang"], _report(fires),
                     _report(near), models)
    assert any("the release data says" in p for p in problems)
    assert any("the wizard's first error" in p for p in problems)


def test_judge_fails_when_a_silent_rewrite_is_missing(models: dict[str, Path]) -> None:
    witness: Witness = BY_RULE["R-TRTLLM-PAGE"]
    recorded = _fixture("0.5.11")["witnesses"]["R-TRTLLM-PAGE"]
    unchanged = {**recorded["fires"]["sglang"], "effective": {"page_size": 1}}
    fires, near = witness_cases(witness, "0.5.11", models)
    problems = judge(witness, "0.5.11", unchanged, recorded["near"]["sglang"], _report(fires),
                     _report(near), models)
    assert problems and all(p.startswith("fires:") for p in problems)


def test_the_rule_of_a_witness_is_located_where_it_raises() -> None:
    """Raising rules hold exactly where the release data locates them."""
    for witness in WITNESSES:
        rule = RULES_BY_ID[witness.rule]
        if rule.sglang.exception is None or rule.sglang.argparse_with_choices:
            continue
        for version in release_names():
            release = load_release(version)
            located = release.site(rule.sglang.site_rule(rule.id))  # (or the statement it shares)
            assert holds(rule.id, release) == (located is not None), (rule.id, version)
