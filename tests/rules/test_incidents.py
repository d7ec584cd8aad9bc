"""Every try of the three incidents (incidents.md), as the operators typed it, on both versions."""

from __future__ import annotations

import pytest

from wizard.api import check_argv, check_profile
from wizard.profile import load_profile
from wizard.rules.engine import first_sglang_error, sglang_verdict

SA = "sglang/srt/server_args.py"
SH = "sglang/srt/arg_groups/speculative_hook.py"


def _argv(model: str, *flags: str) -> list[str]:
    return ["--model-path", model, *flags]


@pytest.fixture
def qwen36(models: dict[str, str]) -> str:
    return models["qwen35"]


def test_incident1_try1_hybrid_rule_masks_the_trio_on_0511(qwen36: str) -> None:
    argv = _argv(
        qwen36,
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-draft-tokens",
        "1",
        "--tensor-parallel-size",
        "2",
        "--port",
        "30000",
        "--host",
        "0.0.0.0",
    )
    report = check_argv(argv, sglang_version="0.5.11", gpu="A6000", gpus=2)
    first = first_sglang_error(report)
    assert first is not None and first.rule == "R-MAMBA-NOBUF-SPEC"
    assert (
        first.sglang is not None
        and first.sglang.exception == "ValueError"
        and first.sglang.where == f"{SA}:2453"
    )
    # Every rule at once: the trio assertion is reported too, right after.
    assert [f.rule for f in report.errors][:2] == ["R-MAMBA-NOBUF-SPEC", "R-SPEC-STEPS-TRIO"]
    fixes = {fix.label for fix in first.fixes}
    assert any("extra_buffer" in label for label in fixes)


def test_incident1_try1_on_0523_is_the_bare_trio_assert(qwen36: str) -> None:
    argv = _argv(
        qwen36,
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-draft-tokens",
        "1",
        "--tensor-parallel-size",
        "2",
    )
    first = first_sglang_error(check_argv(argv, sglang_version="0.5.23", gpu="A6000", gpus=2))
    assert first is not None and first.rule == "R-SPEC-STEPS-TRIO"
    assert first.sglang is not None and first.sglang.bare and first.sglang.where == f"{SH}:1162"


def test_incident1_try2_is_the_trio_assert_on_0511_and_argparse_on_0523(qwen36: str) -> None:
    argv = _argv(
        qwen36,
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-draft-tokens",
        "1",
        "--tensor-parallel-size",
        "2",
        "--mamba-scheduler-strategy",
        "extra_buffer",
    )
    env = {"SGLANG_ENABLE_SPEC_V2": "1"}
    first = first_sglang_error(check_argv(argv, sglang_version="0.5.11", env=env, gpu="A6000"))
    assert first is not None and first.rule == "R-SPEC-STEPS-TRIO" and first.sglang is not None
    assert (first.sglang.exception, first.sglang.where, first.sglang.bare) == (
        "AssertionError",
        f"{SA}:3521",
        True,
    )
    first = first_sglang_error(check_argv(argv, sglang_version="0.5.23", env=env, gpu="A6000"))
    assert first is not None and first.sglang is not None
    assert first.sglang.stage == "argparse" and first.sglang.exception == "SystemExit"
    assert "--mamba-scheduler-strategy" in first.message


def test_incident1_try3_starts_and_drafts_two_tokens(qwen36: str) -> None:
    argv = _argv(
        qwen36,
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-steps",
        "1",
        "--speculative-eagle-topk",
        "1",
        "--mamba-scheduler-strategy",
        "extra_buffer",
        "--trust-remote-code",
        "--dtype",
        "bfloat16",
        "--tensor-parallel-size",
        "2",
    )
    report = check_argv(
        argv, sglang_version="0.5.11", env={"SGLANG_ENABLE_SPEC_V2": "1"}, gpu="A6000"
    )
    assert sglang_verdict(report) == "ok"
    eff = report.effective
    assert (
        eff["speculative_algorithm"],
        eff["speculative_num_steps"],
        eff["speculative_eagle_topk"],
        eff["speculative_num_draft_tokens"],
    ) == ("EAGLE", 1, 1, 2)
    env_finding = next(f for f in report.findings if f.rule == "R-SPEC-V2-ENV")
    assert "already the default" in env_finding.message


def test_incident2_tries(models: dict[str, str]) -> None:
    base = (
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-draft-tokens",
        "2",
        "--speculative-eagle-topk",
        "1",
        "--tp-size",
        "8",
    )
    env = {"SGLANG_ENABLE_SPEC_V2": "1"}
    model = models["qwen35"]
    first = first_sglang_error(
        check_argv(
            _argv(model, *base), sglang_version="0.5.11", env=env, gpu="RTX PRO 6000", gpus=8
        )
    )
    assert first is not None and first.rule == "R-MAMBA-NOBUF-SPEC"
    first = first_sglang_error(
        check_argv(
            _argv(model, *base, "--mamba-scheduler-strategy", "extra_buffer"),
            sglang_version="0.5.11",
            env=env,
            gpu="RTX PRO 6000",
            gpus=8,
        )
    )
    assert first is not None and first.rule == "R-SPEC-STEPS-TRIO"
    report = check_argv(
        _argv(
            model,
            "--speculative-algorithm",
            "NEXTN",
            "--tp-size",
            "8",
            "--mamba-scheduler-strategy",
            "extra_buffer",
        ),
        sglang_version="0.5.11",
        env=env,
        gpu="RTX PRO 6000",
        gpus=8,
    )
    assert sglang_verdict(report) == "ok"
    assert (
        report.effective["speculative_num_steps"],
        report.effective["speculative_eagle_topk"],
        report.effective["speculative_num_draft_tokens"],
    ) == (3, 1, 4)


def test_incident3_try1_unknown_flag_with_did_you_mean(models: dict[str, str]) -> None:
    report = check_argv(
        _argv(models["llama"], "--num-speculative-tokens", "16"),
        sglang_version="0.5.11",
        gpu="H200",
    )
    first = first_sglang_error(report)
    assert first is not None and first.sglang is not None and first.sglang.stage == "argparse"
    assert "--speculative-num-draft-tokens" in first.message


def test_incident3_try2_bare_assert_in_handle_speculative_decoding(models: dict[str, str]) -> None:
    argv = _argv(
        models["llama"],
        "--speculative-algorithm",
        "EAGLE3",
        "--speculative-draft-model-path",
        models["eagle3"],
        "--speculative-num-draft-tokens",
        "16",
        "--speculative-eagle-topk",
        "1",
    )
    for version, where in (("0.5.11", f"{SA}:3521"), ("0.5.23", f"{SH}:1162")):
        first = first_sglang_error(check_argv(argv, sglang_version=version, gpu="H200"))
        assert first is not None and first.rule == "R-SPEC-STEPS-TRIO"
        assert first.sglang is not None and first.sglang.bare and first.sglang.where == where


def test_incident3_try3_reports_16_to_2_as_adjusted(models: dict[str, str]) -> None:
    argv = _argv(
        models["llama"],
        "--speculative-algorithm",
        "EAGLE3",
        "--speculative-draft-model-path",
        models["eagle3"],
        "--speculative-num-draft-tokens",
        "16",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-steps",
        "1",
    )
    for version in ("0.5.11", "0.5.23"):
        report = check_argv(argv, sglang_version=version, gpu="H200")
        assert report.verdict == "ok"
        rewrite = next(f for f in report.findings if f.rule == "R-TOPK1-DRAFT-REWRITE")
        assert rewrite.severity == "adjusted" and "16 -> 2" in rewrite.message
        assert report.changed()["speculative_num_draft_tokens"] == (16, 2)
        labels = [fix.label for fix in rewrite.fixes]
        assert any("steps 15" in label for label in labels)


def test_ready_profiles_are_accepted_by_sglang(tmp_path_factory: pytest.TempPathFactory) -> None:
    from pathlib import Path

    for path in sorted(Path(__file__).resolve().parents[2].joinpath("profiles").glob("*.toml")):
        report = check_profile(load_profile(path))
        assert sglang_verdict(report) == "ok", (
            path.name,
            [(f.rule, f.message) for f in report.errors],
        )


def test_memory_plan_is_a_warning_with_profile_fixes(qwen36: str) -> None:
    argv = _argv(
        qwen36,
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-steps",
        "1",
        "--speculative-eagle-topk",
        "1",
        "--mamba-scheduler-strategy",
        "extra_buffer",
        "--tensor-parallel-size",
        "2",
    )
    report = check_argv(argv, sglang_version="0.5.11", gpu="A6000", gpus=2)
    plan = next(f for f in report.findings if f.rule == "R-MEMORY-PLAN")
    assert plan.severity == "warning" and "tight" in plan.message
    assert any("memory.max_running_requests" in fix.edits for fix in plan.fixes)
    roomy = check_argv(
        [*argv, "--max-running-requests", "16"], sglang_version="0.5.11", gpu="H200", gpus=2
    )
    assert all(f.rule != "R-MEMORY-PLAN" for f in roomy.findings)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--speculative-num-draft-tokens", "2"), "--speculative-num-draft-tokens is set:"),
        (("--speculative-eagle-topk", "1"), "--speculative-eagle-topk is set:"),
        (
            ("--speculative-num-draft-tokens", "2", "--speculative-eagle-topk", "1"),
            "--speculative-eagle-topk and --speculative-num-draft-tokens are set:",
        ),
    ],
)
def test_incident2_trio_message_is_grammatical(flags: tuple[str, ...], said: str) -> None:
    """Incident 2 try 2 typed topk and draft tokens: the message said "... and ... is set"."""
    argv = _argv("/m", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "/d", *flags)
    report = check_argv(argv, sglang_version="0.5.23", gpu="H100", gpus=1)
    trio = next(f for f in report.findings if f.rule == "R-SPEC-STEPS-TRIO")
    assert said in trio.message
