"""Real SGLang results recorded per release, replayed against the wizard without a venv.

Two committed fixtures per release in `tests/conformance/fixtures/`:

- `named-results-<V>.json`: the named cases (`named_cases.fixture_text`);
- `generated-results-<V>.json`: generated cases of one seed with SGLang's results
  (`generated_fixture_text`), the cases themselves stored, so a later change of the generator
  does not change what was recorded.

Model folders are written as `{kind}` placeholders (`models.py`); `recorded_cases` puts the
folders of this machine back. `scripts/record_sglang_results.py` records both by running the
release's real argument code once (one runner pass per release).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wizard.conformance.named_cases import with_placeholders
from wizard.profile import atomic_write_text

# What scoring reads (score.py) plus the message a reviewer reads; the rest is per-run noise.
RESULT_KEYS = ("sglang_version", "verdict", "stage", "exception", "message", "where", "bare",
               "effective", "runner_error")
CASE_KEYS = ("id", "sglang_version", "gpu", "gpus", "argv", "env", "model", "origin")


def generated_fixture_text(version: str, seed: int, cases: Sequence[dict[str, Any]],
                           results: dict[str, dict[str, Any]], models: dict[str, Path]) -> str:
    """The committed fixture of generated cases: case and SGLang result, paths as `{kind}`."""
    entries = [with_placeholders({
        "case": {k: case[k] for k in CASE_KEYS if k in case},
        "result": {k: results[str(case["id"])][k] for k in RESULT_KEYS
                   if k in results[str(case["id"])]},
    }, models) for case in cases if str(case["id"]) in results]
    return json.dumps({"sglang_version": version, "seed": seed, "cases": entries}, indent=1) + "\n"


def restore_paths(value: Any, models: dict[str, Path]) -> Any:
    """``value`` with each `{kind}` placeholder replaced by that model folder of this machine."""
    if isinstance(value, str):
        for kind, path in models.items():
            value = value.replace("{" + kind + "}", str(path))
        return value
    if isinstance(value, list):
        return [restore_paths(v, models) for v in value]
    if isinstance(value, dict):
        return {k: restore_paths(v, models) for k, v in value.items()}
    return value


def recorded_cases(fixtures: Path, version: str, models: dict[str, Path],
                   ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The recorded cases of one release (named, then generated) and SGLang's results by id.

    A release without one of the two fixtures contributes the other's cases only."""
    cases: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    named = fixtures / f"named-results-{version}.json"
    if named.exists():
        for entry in json.loads(named.read_text())["cases"]:
            case = restore_paths({"id": f"{version}-{entry['name']}", "name": entry["name"],
                                  "sglang_version": version, "gpu": entry["gpu"],
                                  "gpus": entry["gpus"], "argv": entry["argv"],
                                  "env": entry["env"], "origin": "named"}, models)
            cases.append(case)
            results[case["id"]] = restore_paths(entry["result"], models)
    generated = fixtures / f"generated-results-{version}.json"
    if generated.exists():
        for entry in json.loads(generated.read_text())["cases"]:
            case = restore_paths(entry["case"], models)
            cases.append(case)
            results[str(case["id"])] = restore_paths(entry["result"], models)
    return cases, results


FOUND_FIXTURE = "found-results.json"


def found_cases(fixtures: Path, models: dict[str, Path],
                ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The kept sweep cases (`found-results.json`, every release): cases a sweep once scored
    wrong, with SGLang's real results, each with the reason it was kept."""
    path = fixtures / FOUND_FIXTURE
    if not path.exists():
        return [], {}
    cases: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    for entry in json.loads(path.read_text())["cases"]:
        case = restore_paths(entry["case"], models)
        cases.append(case)
        results[str(case["id"])] = restore_paths(entry["result"], models)
    return cases, results


def keep_found(fixtures: Path, entries: Sequence[tuple[dict[str, Any], dict[str, Any], str]],
               models: dict[str, Path]) -> int:
    """Add (case, SGLang result, why) entries to `found-results.json` (an id already kept is
    replaced); the fixture's case count. Written whole, atomically."""
    path = fixtures / FOUND_FIXTURE
    kept = json.loads(path.read_text())["cases"] if path.exists() else []
    by_id = {entry["case"]["id"]: entry for entry in kept}
    for case, result, why in entries:
        by_id[str(case["id"])] = with_placeholders({
            "case": {k: case[k] for k in CASE_KEYS if k in case},
            "result": {k: result[k] for k in RESULT_KEYS if k in result},
            "why": why,
        }, models)
    ordered = sorted(by_id.values(), key=lambda e: str(e["case"]["id"]))
    atomic_write_text(path, json.dumps({"cases": ordered}, indent=1) + "\n")
    return len(ordered)
