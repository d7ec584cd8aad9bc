"""One verdict for every screen and the CLI; extra args vs fields; argparse choices; trio bounds;
secrets kept as references; the Algorithm step's availability from the same findings as F4."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from wizard.api import apply_fix, check_profile, load_facts
from wizard.cli import main
from wizard.profile import load_profile, profile_to_toml
from wizard.profile_problems import problems_from_validation
from wizard.profile_schema import Profile
from wizard.secrets import protect_env, resolve_env
from wizard.sglang.render import render_env, render_shell, render_yaml
from wizard.verdict import algorithm_choices, verdict_of


def profile(models: dict[str, str], **sections: object) -> Profile:
    data: dict[str, object] = {"model": {"path": models["qwen35"]}, "parallel": {"tp": 2}}
    data.update(sections)
    return Profile.model_validate(data)


def test_verdict_kinds(models: dict[str, str]) -> None:
    refused = profile(models, speculative={"algorithm": "NEXTN", "num_draft_tokens": 1})
    verdict = verdict_of(check_profile(refused))
    assert (verdict.kind, verdict.headline, verdict.starts) == ("refuses", "refuses", False)
    assert verdict.findings[0].rule == "R-MAMBA-NOBUF-SPEC"

    adjusted = profile(
        models,
        gpu={"kind": "H200", "count": 2},  # roomy: no memory warning
        speculative={"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1},
        hybrid={"cache_strategy": "extra_buffer"},
    )
    verdict = verdict_of(check_profile(adjusted))
    assert (verdict.kind, verdict.headline) == ("adjusted", "starts, adjusted")
    assert "NEXTN → EAGLE" in verdict.detail

    plain = profile(models, gpu={"kind": "H200", "count": 2})
    assert verdict_of(check_profile(plain)).headline == "starts"


def test_memory_warning_is_part_of_the_verdict(models: dict[str, str]) -> None:
    """The header cannot say a plain "starts" while the memory plan warns (issue 10)."""
    tight = profile(
        models,
        gpu={"kind": "RTX A6000", "count": 2},
        speculative={"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1},
        hybrid={"cache_strategy": "extra_buffer"},
    )
    report = check_profile(tight)
    warnings = [f for f in report.findings if f.severity == "warning"]
    verdict = verdict_of(report)
    assert warnings, "the fixture is meant to be tight on 48 GB cards"
    assert verdict.kind == "warnings"
    assert verdict.headline == f"starts, {len(warnings)} warning" + ("s" if len(warnings) > 1 else "")
    assert warnings[0].message in verdict.detail


def test_check_text_uses_the_same_verdict(models: dict[str, str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.toml"
    path.write_text(profile_to_toml(profile(models, gpu={"kind": "H200", "count": 2})), encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert "SGLang would START this (starts)" in capsys.readouterr().out


def test_extra_args_setting_a_field_is_a_finding_with_fixes(models: dict[str, str]) -> None:
    p = profile(
        models,
        speculative={"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1},
        hybrid={"cache_strategy": "extra_buffer"},
        extra_args=["--speculative-num-steps", "3", "--enable-metrics"],
    )
    report = check_profile(p)
    finding = report.findings[0]
    assert finding.rule == "R-EXTRA-ARGS-FIELD" and finding.severity == "error"
    assert "--speculative-num-steps" in finding.message
    assert verdict_of(report).kind == "refuses"
    moved = apply_fix(p, finding.fixes[0])
    assert moved.speculative.num_steps == 3 and moved.extra_args == ["--enable-metrics"]
    assert all(f.rule != "R-EXTRA-ARGS-FIELD" for f in check_profile(moved).findings)
    render_shell(moved)  # the command renders once the finding is fixed


def test_argparse_choices_of_profile_fields(models: dict[str, str]) -> None:
    report = check_profile(profile(models, attention={"backend": "FA3"}))
    finding = report.findings[0]
    assert finding.rule == "R-ARGPARSE-CHOICE"
    assert "invalid choice: 'FA3'" in finding.message and "'fa3'" in finding.message
    assert [fix.edits for fix in finding.fixes] == [
        {"attention.backend": "fa3"},
        {"attention.backend": None},
    ]
    assert all(f.rule != "R-ARGPARSE-CHOICE" for f in check_profile(profile(models)).findings)


@pytest.mark.parametrize("value", [0, -3, 10**23, 1025])
def test_trio_values_out_of_range_are_refused_with_a_clear_message(
    models: dict[str, str], value: int
) -> None:
    with pytest.raises(ValidationError) as caught:
        profile(models).with_edits({"speculative.num_steps": value})
    (problem,) = problems_from_validation(caught.value)
    assert problem.key == "speculative.num_steps"
    assert problem.message in (f"must be at least 1, got {value}", f"must be at most 1024, got {value}")


def test_secrets_are_references_never_values(models: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    token = "hf_abcdefghijklmnop"
    p = profile(models, env={"HF_TOKEN": token, "SGLANG_ENABLE_SPEC_V2": "1"})
    env, moved = protect_env(p.env)
    assert env == {"HF_TOKEN": "env:HF_TOKEN", "SGLANG_ENABLE_SPEC_V2": "1"} and moved == ["HF_TOKEN"]
    # Whatever the profile holds, nothing written or shown carries the value.
    toml = profile_to_toml(p)
    assert token not in toml and 'HF_TOKEN = "env:HF_TOKEN"' in toml
    assert token not in render_shell(p) and token not in render_yaml(p)
    referenced = p.with_edits({"env": env})
    assert 'HF_TOKEN="$HF_TOKEN"' in render_shell(referenced)
    # The launch reads the variable from this environment.
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    assert render_env(referenced)["HF_TOKEN"] == "hf_from_env"
    assert resolve_env({"X_TOKEN": "env:NOT_SET_ANYWHERE"}, {}) == {}
    monkeypatch.delenv("HF_TOKEN")
    unset = [f for f in check_profile(referenced).findings if f.rule == "R-ENV-SECRET-UNSET"]
    assert len(unset) == 1 and "$HF_TOKEN" in unset[0].message


def test_algorithm_step_and_findings_agree_on_a_draft_vocab_mismatch(
    tmp_path: Path,
) -> None:
    """F3 said "not available: draft vocab differs" while F4 showed a warning: one source now."""
    target = tmp_path / "target"
    draft = tmp_path / "draft"
    target.mkdir()
    draft.mkdir()
    (target / "config.json").write_text(json.dumps({
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
        "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 64,
        "num_key_value_heads": 64, "vocab_size": 163840, "kv_lora_rank": 512,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
        "intermediate_size": 18432, "max_position_embeddings": 163840,
    }))
    (draft / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama",
        "hidden_size": 7168, "num_hidden_layers": 1, "num_attention_heads": 64,
        "num_key_value_heads": 8, "vocab_size": 129280, "intermediate_size": 18432,
        "max_position_embeddings": 163840,
    }))
    p = Profile.model_validate({
        "model": {"path": str(target)},
        "speculative": {"algorithm": "EAGLE3", "draft_model_path": str(draft)},
    })
    findings = {f.rule: f for f in check_profile(p).findings}
    assert findings["R-DRAFT-VOCAB"].severity == "warning"
    options = {o.name: o for o in algorithm_choices(p, load_facts(str(target))[0], load_facts(str(draft))[0])}
    assert options["EAGLE3"].available
    assert options["EAGLE3"].reason == "warning: " + findings["R-DRAFT-VOCAB"].message


def test_ready_profiles_still_load_and_check() -> None:
    for path in sorted(Path("profiles").glob("*.toml")):
        verdict_of(check_profile(load_profile(path)))


def test_a_memory_plan_that_will_not_fit_fails_at_run_time(models: dict[str, str]) -> None:
    """A bf16 DeepSeek-V3 on one 48 GB card: one verdict everywhere: the finding is an error
    (stage runtime), the report's verdict is error, SGLang's argument verdict stays ok."""
    p = Profile.model_validate(
        {"model": {"path": models["dsv3"]}, "gpu": {"kind": "RTX A6000", "count": 1}}
    )
    report = check_profile(p)
    assert report.memory_plan is not None and report.memory_plan.verdict == "will_not_fit"
    assert report.verdict == "error"
    from wizard.rules.engine import sglang_verdict

    assert sglang_verdict(report) == "ok"  # SGLang's argument code accepts it
    verdict = verdict_of(report)
    assert (verdict.kind, verdict.headline) == ("fails", "fails at run time")
    assert verdict.findings[0].rule == "R-MEMORY-NOFIT"
    nofit = verdict.findings[0]
    assert nofit.sglang is not None and nofit.sglang.stage == "runtime"
    assert "-" not in nofit.message.split("GiB")[0]  # no negative sizes
    assert "no room left for the KV cache" in nofit.message
