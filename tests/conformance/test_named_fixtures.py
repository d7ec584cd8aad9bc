"""The committed real-SGLang results of the named cases (no venv needed).

They are what other areas' unit tests reuse; this checks they are complete, machine-independent,
and that the reference's recorded outcomes agree with what real SGLang did (SGLang wins: a
difference here means the reference or `named_cases.py` needs fixing, see docs/conformance.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wizard.conformance.named_cases import NAMED

FIXTURES = Path(__file__).parent / "fixtures"


def _load(version: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"named-results-{version}.json").read_text())


def _differences(expected: dict[str, Any], result: dict[str, Any]) -> list[str]:
    out = []
    if expected["verdict"] != result["verdict"]:
        out.append(f"verdict {expected['verdict']} != {result['verdict']}")
    for key in ("exception", "stage"):
        if key in expected and expected[key] != result.get(key):
            out.append(f"{key} {expected[key]} != {result.get(key)}")
    if "where" in expected and not str(result.get("where") or "").endswith(expected["where"]):
        out.append(f"where {expected['where']} != {result.get('where')}")
    for key, value in (expected.get("effective") or {}).items():
        if result["effective"].get(key) != value:
            out.append(f"{key} {value} != {result['effective'].get(key)}")
    return out


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_fixture_covers_every_named_case_without_local_paths(version: str) -> None:
    fixture = _load(version)
    assert fixture["sglang_version"] == version
    assert [c["name"] for c in fixture["cases"]] == [n["id"] for n in NAMED]
    text = json.dumps(fixture)
    assert "/root/" not in text and "/tmp/" not in text
    for case in fixture["cases"]:
        assert case["result"]["sglang_version"] == version
        assert case["result"]["runner_error"] is False, case["name"]


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_reference_outcomes_match_real_sglang(version: str) -> None:
    mismatches = {c["name"]: _differences(c["expected"], c["result"])
                  for c in _load(version)["cases"]}
    assert {k: v for k, v in mismatches.items() if v} == {}
