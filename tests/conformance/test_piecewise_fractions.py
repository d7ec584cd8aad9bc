"""The recorded SGLang fractions of `fixtures/piecewise-fractions.json` (which the memory plan is
held to in `tests/model/test_prefill_graph_reserve.py`) still come out of the release's real
argument code: re-run live for the recorded releases chosen live this session (`live.py`) whose
venv is already built (none is built here). Conformance tests run last in collection order, so
in a full session these start after `test_conformance.py` has waited for every background run:
no second SGLang process runs beside them."""

from __future__ import annotations

import os

import pytest

from wizard.conformance.venvs import venv_python
from wizard.sglang.releases import release_names

from .live import todays_choice
from .piecewise_fractions import load, run

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.timeout(600),
    pytest.mark.skipif(os.environ.get("SGLANG_WIZARD_CONFORMANCE", "1") == "0",
                       reason="SGLANG_WIZARD_CONFORMANCE=0"),
]

RECORDED = load()


def test_every_recorded_case_resolved() -> None:
    for version, rows in RECORDED.items():
        for row in rows:
            assert row["verdict"] == "ok", (version, row["id"])
            assert isinstance(row["mem_fraction_static"], float), (version, row["id"])


@pytest.mark.parametrize("version", sorted(RECORDED))
def test_sglang_still_resolves_the_recorded_fractions(version: str) -> None:
    if version not in todays_choice(release_names()).releases:
        pytest.skip(f"{version} is not run live this session")
    if not venv_python(version).exists():
        pytest.skip(f"no venv for SGLang {version}")
    live = {row["id"]: row for row in run(version)}
    for row in RECORDED[version]:
        assert live[row["id"]] == row, row["id"]
