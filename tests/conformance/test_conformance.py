"""The CI gate: the wizard's check agrees with SGLang's real argument code on >= 99% of cases.

Builds the per-version venvs on first use (cached in the user cache; `SGLANG_WIZARD_CACHE_DIR`
moves it), runs `SGLANG_WIZARD_CONFORMANCE_CASES` (default 300) generated cases per version
through the real code and through `wizard.api.check_case`, prints the agreement table and fails
below 99%. `SGLANG_WIZARD_CONFORMANCE=0` skips these tests (e.g. on a machine without PyPI).
The full sweep is `sglang-wizard conformance run --cases 2000 --seed S --report FILE`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from wizard.conformance.cases import generate
from wizard.conformance.cli import wizard_reports
from wizard.conformance.models import write_model_folders
from wizard.conformance.named_cases import named_cases
from wizard.conformance.run import models_root, run_cases
from wizard.conformance.score import markdown_report, summarise
from wizard.conformance.venvs import ensure_venv, supported_versions

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.skipif(os.environ.get("SGLANG_WIZARD_CONFORMANCE", "1") == "0",
                       reason="SGLANG_WIZARD_CONFORMANCE=0"),
]

CASES_PER_VERSION = int(os.environ.get("SGLANG_WIZARD_CONFORMANCE_CASES", "300"))
CI_SEED = 4242  # the CI subset; the 2,000-case sweeps use fresh seeds (docs/conformance.md)
MIN_AGREEMENT = 0.99
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def models() -> dict[str, Path]:
    return write_model_folders(models_root())


_RUNS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, Any]]]] = {}


def _run_version(version: str, models: dict[str, Path]) -> tuple[
    list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, Any]]
]:
    """Generated and named cases of one version in one runner pass (one SGLang start per GPU)."""
    if version not in _RUNS:
        started = time.monotonic()
        ensure_venv(version, log=print)
        built = time.monotonic()
        generated = generate(version, CASES_PER_VERSION, CI_SEED, models)
        named = named_cases(version, models)
        results = run_cases(version, generated + named, log=print)
        print(f"SGLang {version}: venv {built - started:.0f}s, {len(generated)} generated + "
              f"{len(named)} named cases {time.monotonic() - built:.0f}s")
        _RUNS[version] = (generated, named, results)
    return _RUNS[version]


@pytest.mark.parametrize("version", supported_versions())
def test_wizard_agrees_with_real_sglang(version: str, models: dict[str, Path]) -> None:
    generated, _named, results = _run_version(version, models)
    summary = summarise(generated, results, wizard_reports(generated))
    print(f"\n{summary.table()}")
    if summary.agreement(version) < MIN_AGREEMENT:
        report = markdown_report(summary, f"CI conformance {version}")
        pytest.fail(f"agreement {summary.agreement(version):.1%} < {MIN_AGREEMENT:.0%}\n"
                    + report[:6000])


def _identity(result: dict[str, Any]) -> tuple[Any, ...]:
    effective = result.get("effective") or {}
    return (result.get("verdict"), result.get("stage"), result.get("exception"),
            result.get("where"), effective.get("speculative_algorithm"),
            effective.get("speculative_num_steps"), effective.get("speculative_eagle_topk"),
            effective.get("speculative_num_draft_tokens"))


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_committed_named_results_are_what_sglang_does(version: str,
                                                      models: dict[str, Path]) -> None:
    """The fixture other areas' tests rely on still matches the real code."""
    fixture = json.loads((FIXTURES / f"named-results-{version}.json").read_text())
    committed = {c["name"]: c["result"] for c in fixture["cases"]}
    _generated, named, results = _run_version(version, models)
    for case in named:
        assert _identity(results[case["id"]]) == _identity(committed[case["name"]]), case["name"]
