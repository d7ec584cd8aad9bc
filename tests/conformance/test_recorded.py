"""Every release's recorded real-SGLang results, replayed against the wizard (no venv needed).

`named-results-<V>.json` and `generated-results-<V>.json` hold what each release's real argument
code did with the named cases and one seed's generated cases (`scripts/record_sglang_results.py`).
The wizard as it is now must agree with them as the live gate demands (>= 99% per release), so a
rule change is checked against all releases on every run; `test_conformance.py` runs a few
releases live (and checks the named recordings still match the real code there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wizard.conformance.cli import wizard_reports
from wizard.conformance.models import public_model_configs, write_model_folders
from wizard.conformance.recorded import (
    found_cases,
    generated_fixture_text,
    keep_found,
    recorded_cases,
    restore_paths,
)
from wizard.conformance.score import (
    effective_differences,
    markdown_report,
    score_case,
    summarise,
)
from wizard.sglang.releases import release_names

FIXTURES = Path(__file__).parent / "fixtures"
MIN_AGREEMENT = 0.99


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_model_folders(tmp_path_factory.mktemp("models"))


RECORDED = [v for v in release_names() if (FIXTURES / f"named-results-{v}.json").exists()
            or (FIXTURES / f"generated-results-{v}.json").exists()]


def test_the_newest_release_and_most_others_are_recorded() -> None:
    """The newest release is always recorded; releases without a recording yet are replayed by
    their witnesses only (record them with `scripts/record_sglang_results.py V`)."""
    assert release_names()[-1] in RECORDED
    assert len(RECORDED) >= 21, RECORDED  # 0.5.8-0.5.10, 0.5.12(.post1): witnesses only so far


@pytest.mark.parametrize("version", RECORDED)
def test_recorded_results_are_complete_and_machine_independent(version: str) -> None:
    for kind in ("named", "generated"):
        fixture = json.loads((FIXTURES / f"{kind}-results-{version}.json").read_text())
        assert fixture["sglang_version"] == version
        assert fixture["cases"], kind
        text = json.dumps(fixture)
        assert "/root/" not in text and "/tmp/" not in text and "/work/" not in text
        results = [entry["result"] for entry in fixture["cases"]]
        assert all(r["sglang_version"] == version and r["runner_error"] is False
                   for r in results), kind


@pytest.mark.parametrize("version", RECORDED)
def test_the_wizard_agrees_with_recorded_sglang(version: str, models: dict[str, Path]) -> None:
    cases, results = recorded_cases(FIXTURES, version, models)
    summary = summarise(cases, results, wizard_reports(cases))
    if summary.agreement(version) < MIN_AGREEMENT:
        report = markdown_report(summary, f"Recorded SGLang {version} replayed")
        pytest.fail(f"agreement {summary.agreement(version):.1%} < {MIN_AGREEMENT:.0%} on "
                    f"{len(cases)} recorded cases\n" + report[:6000])


# Named cases of the wide launches' causes (issue 24): each must agree on every effective value
# too, not only on the verdict and the speculative trio.
WIDE_NAMED = ("W01", "W02", "W03", "W04", "W05", "W06", "W07", "W08")


@pytest.mark.parametrize("version", RECORDED)
def test_wide_named_cases_agree_on_every_effective_value(version: str,
                                                         models: dict[str, Path]) -> None:
    cases, results = recorded_cases(FIXTURES, version, models)
    chosen = [c for c in cases if c.get("name") in WIDE_NAMED]
    if not chosen:
        pytest.skip(f"{version}: the wide named cases are not recorded")
    reports = wizard_reports(chosen)
    for case in chosen:
        result, report = results[case["id"]], reports[case["id"]]
        score = score_case(case, result, report)
        assert score.agree, (case["name"], score.reason)
        differing = effective_differences(result.get("effective") or {},
                                          report.get("effective") or {})
        assert not differing, (case["name"], {k: (result["effective"][k], report["effective"][k])
                                              for k in differing})


def test_replay_fails_when_the_recorded_result_differs(models: dict[str, Path]) -> None:
    """The replay can fail: a recorded refusal turned into a start disagrees with the wizard."""
    cases, results = recorded_cases(FIXTURES, "0.5.11", models)
    refused = [c for c in cases if results[c["id"]]["verdict"] == "error"][:5]
    assert refused
    flipped = {c["id"]: {**results[c["id"]], "verdict": "ok", "exception": None} for c in refused}
    summary = summarise(refused, flipped, wizard_reports(refused))
    assert summary.agreement("0.5.11") == 0.0


def test_recorded_paths_round_trip(tmp_path: Path, models: dict[str, Path]) -> None:
    case: dict[str, Any] = {"id": "0.5.23-x", "sglang_version": "0.5.23", "gpu": "H100",
                            "gpus": 1, "env": {}, "argv": ["--model-path", str(models["llama"])]}
    result = {"sglang_version": "0.5.23", "verdict": "ok", "warnings": ["noise"],
              "effective": {"speculative_draft_model_path": str(models["llama"])},
              "runner_error": False}
    text = generated_fixture_text("0.5.23", 7, [case], {"0.5.23-x": result}, models)
    assert str(models["llama"]) not in text and "noise" not in text
    (tmp_path / "generated-results-0.5.23.json").write_text(text)
    cases, results = recorded_cases(tmp_path, "0.5.23", models)
    assert cases == [case]
    assert results["0.5.23-x"]["effective"] == result["effective"]
    assert restore_paths(["{llama}"], models) == [str(models["llama"])]


@pytest.fixture(scope="module")
def all_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("all-models")
    return {**write_model_folders(root), **write_model_folders(root, public_model_configs())}


def test_found_cases_agree_on_the_verdict_and_every_effective_value(
        all_models: dict[str, Path]) -> None:
    """The sweep cases kept in `found-results.json` (`conformance keep`), each a real SGLang
    result the wizard once got wrong, on whatever release and GPU kind it came from."""
    cases, results = found_cases(FIXTURES, all_models)
    assert len(cases) >= 2
    reports = wizard_reports(cases)
    wrong = {}
    for case in cases:
        result, report = results[str(case["id"])], reports[str(case["id"])]
        score = score_case(case, result, report)
        differing = effective_differences(result.get("effective") or {},
                                          report.get("effective") or {})
        if not score.agree or differing:
            wrong[case["id"]] = (score.reason, {k: (result["effective"][k],
                                                    report["effective"].get(k))
                                                for k in differing})
    assert wrong == {}


def test_keeping_a_found_case_replaces_it_and_writes_placeholders(
        tmp_path: Path, all_models: dict[str, Path]) -> None:
    case: dict[str, Any] = {"id": "0.5.23-w1", "sglang_version": "0.5.23", "gpu": "B200",
                            "gpus": 1, "env": {}, "argv": ["--model-path",
                                                           str(all_models["llama31_8b"])]}
    result = {"sglang_version": "0.5.23", "verdict": "ok", "effective": {"page_size": 1},
              "warnings": ["noise"], "runner_error": False}
    assert keep_found(tmp_path, [(case, result, "first")], all_models) == 1
    assert keep_found(tmp_path, [(case, {**result, "verdict": "error"}, "again")],
                      all_models) == 1
    text = (tmp_path / "found-results.json").read_text()
    assert "{llama31_8b}" in text and str(tmp_path) not in text and "noise" not in text
    cases, results = found_cases(tmp_path, all_models)
    assert cases == [case] and results["0.5.23-w1"]["verdict"] == "error"
