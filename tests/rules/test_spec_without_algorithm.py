"""Speculative flags typed without --speculative-algorithm: SGLang ignores them and runs plain
decoding (incident 3 try 1 with the flag name corrected), which `check` called "starts" with no
word about it."""

from __future__ import annotations

from pathlib import Path

from wizard.api import check_argv


def _rule(report, rule_id):  # type: ignore[no-untyped-def]
    return next((f for f in report.findings if f.rule == rule_id), None)


def test_draft_tokens_without_an_algorithm_are_said_to_be_ignored(models: dict[str, str]) -> None:
    argv = ["--model-path", models["qwen35"], "--tp", "2", "--speculative-num-draft-tokens", "16"]
    report = check_argv(argv, sglang_version="0.5.11", gpu="A6000", gpus=2)
    finding = _rule(report, "R-SPEC-NO-ALGO")
    assert finding is not None and finding.severity == "warning"
    assert "--speculative-num-draft-tokens given without --speculative-algorithm" in finding.message
    assert "plain decoding" in finding.message
    labels = [fix.label for fix in finding.fixes]
    assert labels[0].startswith("Use NEXTN")  # the checkpoint has an MTP layer
    assert finding.fixes[-1].edits == {"speculative.num_draft_tokens": None}


def test_no_finding_with_an_algorithm_or_without_speculative_flags(models: dict[str, str]) -> None:
    with_algo = ["--model-path", models["qwen35"], "--speculative-algorithm", "NEXTN"]
    plain = ["--model-path", models["qwen35"]]
    for argv in (with_algo, plain):
        for version in ("0.5.11", "0.5.23"):
            report = check_argv(argv, sglang_version=version, gpu="A6000", gpus=1)
            assert _rule(report, "R-SPEC-NO-ALGO") is None


def test_an_unreadable_draft_is_said_on_releases_that_do_not_open_it(
    models: dict[str, str], tmp_path: Path
) -> None:
    """A draft path with a typo: 0.5.23 refuses it (R-DRAFT-CONFIG-READ), but 0.5.11 said
    "starts" with no word that the draft checks were skipped."""
    argv = ["--model-path", models["qwen35"], "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", str(tmp_path / "no-such-draft"),
            "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "4"]
    old = check_argv([*argv, "--mamba-scheduler-strategy", "extra_buffer"], sglang_version="0.5.11", gpu="H100", gpus=1)
    note = _rule(old, "R-DRAFT-FACTS-MISSING")
    assert note is not None and "no-such-draft" in note.message and "not checked" in note.message
    new = check_argv([*argv, "--mamba-radix-cache-strategy", "extra_buffer"], sglang_version="0.5.23", gpu="H100", gpus=1)
    assert _rule(new, "R-DRAFT-CONFIG-READ") is not None
    assert _rule(new, "R-DRAFT-FACTS-MISSING") is None  # the error says it already
