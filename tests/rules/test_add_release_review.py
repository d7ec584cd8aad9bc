"""The "outcome changed" review of `conformance add-release`: real changes apart from moved lines."""

from __future__ import annotations

from typing import Any

from wizard.conformance.cli import changed_summary, outcome_changes


def _adaptive(models: dict[str, str], version: str, steps: int, case_id: str) -> dict[str, Any]:
    argv = ["--model-path", models["llama"], "--speculative-algorithm", "EAGLE",
            "--speculative-draft-model-path", models["llama"], "--speculative-num-steps", str(steps),
            "--speculative-eagle-topk", "1", "--speculative-adaptive"]
    return {"id": case_id, "argv": argv, "sglang_version": version, "gpu": "H100", "gpus": 1,
            "env": {}}


def test_a_new_candidate_step_is_an_outcome_change_against_the_previous_release(
    models: dict[str, str],
) -> None:
    """0.5.20 added step 5 to the adaptive candidates: 0.5.19's data refuses, 0.5.20's starts."""
    cases = [_adaptive(models, "0.5.20", 5, "five"), _adaptive(models, "0.5.20", 3, "three")]
    changed = outcome_changes(cases)
    assert [c[0] for c in changed] == ["five"]
    _case_id, previous, old, new = changed[0]
    assert previous == "0.5.19"
    assert old.startswith("refuses: R-ADAPTIVE-STEPS ValueError at sglang/srt/arg_groups/")
    assert new.startswith("starts: EAGLE steps/topk/draft [5, 1, 6]")
    text = changed_summary("0.5.20", changed, len(cases))
    assert "1 of 2 cases" in text and "e.g. five" in text


def test_a_moved_statement_is_counted_apart(models: dict[str, str]) -> None:
    """0.5.14 -> 0.5.15: the same adaptive refusal from another line is no real change."""
    changed = outcome_changes([_adaptive(models, "0.5.15", 5, "moved")])
    assert len(changed) == 1
    text = changed_summary("0.5.15", changed, 1)
    assert text.startswith("outcome changed against 0.5.14's data: 0 of 1 cases")
    assert "statement moved (1 rules): R-ADAPTIVE-STEPS ValueError" in text
    assert changed_summary("0.5.15", [], 7).endswith("none of 7 cases")
