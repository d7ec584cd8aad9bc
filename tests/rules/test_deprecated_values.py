"""R-DEPRECATED-VALUE on the real release data: SGLang's logged rewrites of deprecated values,
read from each release's source by `add-release` (`deprecated_values`). The expectations were
seen on the release's real SGLang (docs/conformance.md, "Deprecated values")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wizard.api import apply_fix, check_case, check_profile
from wizard.profile_schema import Profile
from wizard.rules.arg_sites import compile_condition
from wizard.sglang.flags import argparse_error
from wizard.sglang.releases import load_release

RULE = "R-DEPRECATED-VALUE"


def check(version: str, argv: str, public: dict[str, Path], gpu: str = "H100") -> dict[str, Any]:
    case = {"id": "t", "sglang_version": version, "gpu": gpu, "gpus": 1, "env": {},
            "argv": argv.format(**{k: str(v) for k, v in public.items()}).split()}
    return check_case(case)


def deprecated(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == RULE]


def profile(version: str, public: dict[str, Path], **update: Any) -> Profile:
    data: dict[str, Any] = {"sglang_version": version, "model": {"path": str(public["llama31_8b"])},
                            "gpu": {"kind": "H100", "count": 1}}
    data.update(update)
    return Profile.model_validate(data)


def test_qwen25_is_sglangs_warning_at_its_line(public: dict[str, Path]) -> None:
    report = check("0.5.23", "--model-path {llama31_8b} --tool-call-parser qwen25", public)
    [finding] = deprecated(report)
    assert finding["message"] == ("The tool_call_parser 'qwen25' is deprecated. Please use "
                                  "'qwen' instead.")
    assert finding["severity"] == "warning"
    assert finding["sglang"]["where"] == "sglang/srt/arg_groups/serving_hook.py:275"
    assert finding["sglang"]["exception"] is None  # a logged warning, not a raise
    assert "--tool-call-parser qwen" in finding["explanation"]
    assert report["sglang_verdict"] == "ok"
    # the same words and place are the release data's, read from the wheel
    entry = next(e for e in load_release("0.5.23").deprecated_values
                 if e["where"] == finding["sglang"]["where"])
    assert [w["field"] for w in entry["writes"]] == ["tool_call_parser"]
    # glm45, the other value of the same dict, gets its own replacement
    [glm] = deprecated(check("0.5.23", "--model-path {llama31_8b} --tool-call-parser glm45",
                             public))
    assert glm["message"] == "The tool_call_parser 'glm45' is deprecated. Please use 'glm' instead."


def test_no_finding_for_the_replacement(public: dict[str, Path]) -> None:
    assert deprecated(check("0.5.23", "--model-path {llama31_8b} --tool-call-parser qwen",
                            public)) == []
    assert deprecated(check("0.5.23", "--model-path {llama31_8b}", public)) == []


def test_the_fix_types_the_value_sglang_runs_with(public: dict[str, Path]) -> None:
    before = profile("0.5.23", public, extra_args=["--tool-call-parser", "qwen25"])
    finding = next(f for f in check_profile(before).findings if f.rule == RULE)
    [fix] = finding.fixes
    fixed = apply_fix(before, fix)
    assert fixed.extra_args == ["--tool-call-parser", "qwen"]
    assert RULE not in [f.rule for f in check_profile(fixed).findings]


def test_older_releases_read_the_same_rewrite_from_server_args(public: dict[str, Path]) -> None:
    [finding] = deprecated(check("0.5.11", "--model-path {llama31_8b} --tool-call-parser qwen25",
                                 public))
    assert finding["message"] == ("The tool_call_parser 'qwen25' is deprecated. Please use "
                                  "'qwen' instead.")
    assert finding["sglang"]["where"].startswith("sglang/srt/server_args.py:")


def test_a_release_without_the_rename_gives_none(public: dict[str, Path]) -> None:
    # 0.5.3 still lists qwen25 as a parser of its own (argparse accepts it) and rewrites nothing
    argv = "--model-path {llama31_8b} --tool-call-parser qwen25"
    assert argparse_error(argv.format(llama31_8b="m").split(), "0.5.3") is None
    assert not any("tool_call_parser" in str(e["writes"])
                   for e in load_release("0.5.3").deprecated_values)
    assert deprecated(check("0.5.3", argv, public)) == []


def test_an_attention_backend_alias_reaches_the_effective_values(public: dict[str, Path]) -> None:
    report = check("0.5.23", "--model-path {llama31_8b} --attention-backend compressed", public)
    [finding] = deprecated(report)
    assert finding["message"] == "--attention-backend=compressed is deprecated; use 'dsv4' instead."
    assert report["effective"]["attention_backend"] == "dsv4"
    # a profile field: the rule's own fix, which removes the finding
    before = profile("0.5.23", public, attention={"backend": "compressed"})
    fix = next(f for f in check_profile(before).findings if f.rule == RULE).fixes[0]
    assert fix.edits == {"attention.backend": "dsv4"}
    assert RULE not in [f.rule for f in check_profile(apply_fix(before, fix)).findings]


def test_a_flag_level_deprecation_is_left_to_r_deprecated_flag() -> None:
    # --enable-dp-attention is a DeprecatedStoreTrueAction in 0.5.23: R-DEPRECATED-FLAG's
    for entry in load_release("0.5.23").deprecated_values:
        assert "enable_dp_attention" not in entry["defaults"]


def test_dict_literals_and_subscripts_compile() -> None:
    aliases = ["dict", [["const", "qwen25"], ["const", "qwen"]], [["const", "glm45"],
                                                                  ["const", "glm"]]]
    test = compile_condition(["cmp", "in", ["flag", "tool_call_parser"], aliases],
                             {"tool_call_parser": None})
    value = compile_condition(["item", aliases, ["flag", "tool_call_parser"]],
                              {"tool_call_parser": None}, value=True)
    assert test({"tool_call_parser": "qwen25"}, frozenset())
    assert not test({}, frozenset())
    assert value({"tool_call_parser": "glm45"}, frozenset()) == "glm"
    with pytest.raises(KeyError):
        value({"tool_call_parser": "qwen"}, frozenset())


def test_a_deprecated_flag_the_words_name_is_replaced_not_kept(public: dict[str, Path]) -> None:
    # "--grpc-mode is deprecated ... Use --smg-grpc-mode ...": SGLang sets smg_grpc_mode; the
    # fix types --smg-grpc-mode instead of --grpc-mode
    before = profile("0.5.23", public, extra_args=["--grpc-mode"])
    finding = next(f for f in check_profile(before).findings if f.rule == RULE)
    assert finding.message.startswith("--grpc-mode is deprecated and will be removed")
    [fix] = finding.fixes
    assert fix.label == "Use --smg-grpc-mode and drop --grpc-mode"
    fixed = apply_fix(before, fix)
    assert fixed.extra_args == ["--smg-grpc-mode"]
    assert RULE not in [f.rule for f in check_profile(fixed).findings]


def test_a_command_gets_the_same_fix(public: dict[str, Path]) -> None:
    from wizard.api import check_argv

    model = ["--model-path", str(public["llama31_8b"])]
    argv = [*model, "--tool-call-parser", "qwen25", "--grpc-mode"]
    report = check_argv(argv, sglang_version="0.5.23", gpu="H100")
    [parser_fix] = next(f.fixes for f in report.findings
                        if f.rule == RULE and "tool_call_parser" in f.message)
    # the flags of the command no profile field holds, with the value SGLang runs with
    assert parser_fix.edits == {"extra_args": ["--tool-call-parser", "qwen", "--grpc-mode"]}
    after = check_argv([*model, *parser_fix.edits["extra_args"]], sglang_version="0.5.23",
                       gpu="H100")
    assert [f.message for f in after.findings if f.rule == RULE] == [
        f.message for f in report.findings if f.rule == RULE and "grpc" in f.message]


def test_the_value_sglang_keeps_not_the_one_it_names(public: dict[str, Path]) -> None:
    # 0.5.23 warns "use 'cutedsl_mla'" for a tokenspeed_mla prefill backend, then makes it
    # trtllm_mla (cutedsl_mla is decode-only): the effective value and the fix say trtllm_mla
    report = check("0.5.23", "--model-path {deepseek_v3} --prefill-attention-backend "
                   "tokenspeed_mla", public, gpu="B200")
    [finding] = deprecated(report)
    assert finding["message"] == ("--prefill-attention-backend=tokenspeed_mla is deprecated; "
                                  "use 'cutedsl_mla' instead.")
    assert report["effective"]["prefill_attention_backend"] == "trtllm_mla"
    assert finding["fixes"][0]["edits"] == {"attention.prefill_backend": "trtllm_mla"}
