"""Adaptive speculative decoding per release: who turns it off, which steps it accepts.

Each expectation below was observed on the release's real SGLang (the conformance runner, H100,
one GPU, EAGLE with a draft model, `--speculative-adaptive`); the candidate steps and the gates
are read from each wheel by `conformance add-release` (traits `adaptive_*`), not written here.
"""

from __future__ import annotations

from typing import Any

import pytest

from wizard.api import check_case
from wizard.sglang.releases import load_release


def _report(models: dict[str, str], version: str, steps: int, draft: int,
            *extra: str) -> dict[str, Any]:
    argv = ["--model-path", models["llama"], "--speculative-algorithm", "EAGLE",
            "--speculative-draft-model-path", models["llama"], "--speculative-num-steps", str(steps),
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(draft),
            "--speculative-adaptive", *extra]
    return check_case({"id": 1, "argv": argv, "sglang_version": version, "gpu": "H100",
                       "gpus": 1, "env": {}})


def _first_error(report: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in report["findings"] if f["severity"] == "error"), None)


# (release, steps) -> refused by the candidate-steps check (True) or started (False)
OBSERVED = {
    ("0.5.13", 5): True, ("0.5.13", 2): True, ("0.5.13", 3): False,  # candidates [1, 3, 7]
    ("0.5.14", 5): True, ("0.5.14", 2): True, ("0.5.14", 3): False,  # [0, 1, 3, 7]
    ("0.5.19", 5): True, ("0.5.19", 2): True, ("0.5.19", 3): False,
    ("0.5.20", 5): False, ("0.5.20", 2): True, ("0.5.20", 3): False,  # [0, 1, 3, 5, 7]
    ("0.5.23", 5): False, ("0.5.23", 2): True, ("0.5.23", 3): False,
}


@pytest.mark.parametrize(("version", "steps"), sorted(OBSERVED))
def test_typed_steps_must_be_a_candidate_of_the_release(
    models: dict[str, str], version: str, steps: int
) -> None:
    report = _report(models, version, steps, steps + 1)
    first = _first_error(report)
    if OBSERVED[(version, steps)]:
        site = load_release(version).site("R-ADAPTIVE-STEPS")
        assert site is not None
        assert first is not None and first["rule"] == "R-ADAPTIVE-STEPS"
        assert first["sglang"]["where"] == site.where
        assert f"--speculative-num-steps={steps} is not in" in first["message"]
        candidates = load_release(version).trait("adaptive_candidate_steps")
        assert str(list(candidates)) in first["message"]
        # every fix offered is a candidate step, and applying one removes the error
        fixes = first["fixes"]
        assert fixes
        for fix in fixes:
            fixed_steps = fix["edits"]["speculative.num_steps"]
            assert fixed_steps in candidates
            assert _first_error(_report(models, version, fixed_steps, fixed_steps + 1)) is None
    else:
        assert first is None
        assert report["effective"]["speculative_adaptive"] is True


@pytest.mark.parametrize("version", ["0.5.14", "0.5.19", "0.5.23"])
def test_init_releases_set_draft_tokens_to_steps_plus_one(
    models: dict[str, str], version: str
) -> None:
    """`_init_adaptive_speculative_params` rewrites a typed draft-token count (3, 2 -> 4)."""
    report = _report(models, version, 3, 2)
    assert _first_error(report) is None
    assert report["effective"]["speculative_num_draft_tokens"] == 4


def test_0_5_11_needs_spec_v1_and_0_5_12_does_not(models: dict[str, str]) -> None:
    """0.5.11's adaptive_unsupported_reason tests the overlap scheduler; 0.5.12 dropped that."""
    v11 = _report(models, "0.5.11", 2, 3)
    assert v11["effective"]["speculative_adaptive"] is False
    assert any(f["rule"] == "R-ADAPTIVE" and "overlap scheduler" in f["message"]
               for f in v11["findings"])
    v11_v1 = _report(models, "0.5.11", 2, 3, "--disable-overlap-schedule")
    assert v11_v1["effective"]["speculative_adaptive"] is True
    v12 = _report(models, "0.5.12", 2, 3)
    assert v12["effective"]["speculative_adaptive"] is True
    assert not any(f["rule"] == "R-ADAPTIVE" for f in v12["findings"])
    # neither release checks the steps against candidates
    assert _first_error(v12) is None
