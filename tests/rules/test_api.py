"""The check API: profiles with extra SGLang flags, version-only fields, batch cases, fixes."""

from __future__ import annotations

from wizard.api import apply_fix, check_case, check_profile
from wizard.profile_schema import ModelSection, Profile, SpeculativeSection


def _profile(models: dict[str, str], **spec: object) -> Profile:
    return Profile(
        model=ModelSection(path=models["llama"]),
        speculative=SpeculativeSection.model_validate(spec),
    )


def test_extra_args_reach_the_rules(models: dict[str, str]) -> None:
    profile = _profile(models, algorithm="EAGLE", draft_model_path=models["llama"]).model_copy(
        update={"extra_args": ["--enable-lora", "--lora-paths", f"a={models['llama']}"]}
    )
    report = check_profile(profile)
    assert [f.rule for f in report.errors] == ["R-LORA-SPEC"]
    assert check_profile(profile.model_copy(update={"sglang_version": "0.5.23"})).verdict == "ok"


def test_bad_extra_args_are_sglangs_argparse_error(models: dict[str, str]) -> None:
    profile = _profile(models).model_copy(update={"extra_args": ["--no-such-flag"]})
    first = check_profile(profile).first_error
    assert first is not None and first.rule == "R-ARGPARSE" and first.sglang is not None
    assert first.sglang.stage == "argparse" and "--no-such-flag" in first.message


def test_field_missing_in_version_is_unrecognized(models: dict[str, str]) -> None:
    profile = _profile(
        models, algorithm="EAGLE", draft_model_path=models["llama"], skip_dp_mlp_sync=True
    )
    report = check_profile(profile.model_copy(update={"sglang_version": "0.5.23"}))
    first = report.first_error
    assert first is not None and first.rule == "R-CLI-RENAMES"
    assert "--speculative-skip-dp-mlp-sync" in first.message


def test_fix_application_resolves_the_trio(models: dict[str, str]) -> None:
    profile = _profile(
        models,
        algorithm="EAGLE3",
        draft_model_path=models["eagle3"],
        num_draft_tokens=16,
        eagle_topk=1,
    )
    report = check_profile(profile)
    trio = next(f for f in report.errors if f.rule == "R-SPEC-STEPS-TRIO")
    for fix in trio.fixes:
        fixed = check_profile(apply_fix(profile, fix))
        assert all(f.rule != "R-SPEC-STEPS-TRIO" for f in fixed.findings)
    chain = apply_fix(profile, trio.fixes[0])
    assert (
        chain.speculative.num_steps,
        chain.speculative.eagle_topk,
        chain.speculative.num_draft_tokens,
    ) == (15, 1, 16)
    assert check_profile(chain).effective["speculative_num_draft_tokens"] == 16


def test_batch_case_shape(models: dict[str, str]) -> None:
    out = check_case(
        {
            "id": 7,
            "argv": ["--model-path", models["dsv3"], "--speculative-algorithm", "NEXTN"],
            "env": {},
            "sglang_version": "0.5.11",
            "gpu": "h100",
            "gpus": 8,
        }
    )
    # SGLang's arguments pass; the full-size DeepSeek-V3 in bf16 at tp 1 does not fit one H100,
    # which is a run-time failure: `verdict` says so, `sglang_verdict` (arguments only) does not.
    assert out["id"] == 7 and out["gpu"] == "H100"
    assert out["sglang_verdict"] == "ok" and out["verdict"] == "error"
    assert [f["rule"] for f in out["findings"] if f["severity"] == "error"] == ["R-MEMORY-NOFIT"]
    assert out["effective"]["speculative_algorithm"] == "EAGLE"
    assert set(out) >= {"id", "sglang_version", "gpu", "verdict", "findings", "effective"}
    bad = check_case(
        {
            "id": "x",
            "argv": ["--model-path", models["dsv3"], "--speculative-algorithm", "nextn"],
            "sglang_version": "0.5.11",
        }
    )
    assert bad["verdict"] == "error" and bad["findings"][0]["sglang"]["exception"] == "SystemExit"


def test_a_fix_sglang_would_undo_is_not_offered(models: dict[str, str]) -> None:
    """trtllm_mha forces pages of 64: "page size 1" cannot cure topk>1 with pages; flashinfer can."""
    profile = Profile.model_validate({
        "sglang_version": "0.5.11",
        "model": {"path": models["llama"]},
        "speculative": {"algorithm": "EAGLE", "draft_model_path": models["llama"],
                        "num_steps": 3, "eagle_topk": 4, "num_draft_tokens": 8},
        "attention": {"backend": "trtllm_mha"},
        "gpu": {"kind": "H100"},
    })
    raw = check_profile(profile, verify_fixes=False)
    checked = check_profile(profile)
    raw_labels = {f.label for x in raw.findings if x.rule == "R-TOPK-PAGE" for f in x.fixes}
    labels = {f.label for x in checked.findings if x.rule == "R-TOPK-PAGE" for f in x.fixes}
    assert "Page size 1" in raw_labels and "Page size 1" not in labels
    assert "Use flashinfer" in labels
    for finding in checked.findings:
        for fix in finding.fixes:
            after = check_profile(apply_fix(profile, fix), verify_fixes=False)
            assert finding.message not in {f.message for f in after.findings}
