"""SGLANG_PP_LAYER_PARTITION: SGLang's `get_pp_indices` reads it only when the model is built and
raises a ValueError unless it is one integer per pipeline stage adding up to the model's layers.
The wizard says so before the launch, with the release's own message and line (trait
`pp_partition_checks`), and plans memory with the partition when SGLang accepts it."""

from __future__ import annotations

import pytest

from wizard.api import check_argv
from wizard.sglang.releases import release_for

RULE = "R-PP-PARTITION"


def _finding(models: dict[str, str], value: str, version: str = "0.5.11", pp: int = 4):
    report = check_argv(["--model-path", models["llama"], "--pp-size", str(pp)],
                        sglang_version=version, env={"SGLANG_PP_LAYER_PARTITION": value},
                        gpu="H100", gpus=8)
    return report, next((f for f in report.findings if f.rule == RULE), None)


@pytest.mark.parametrize("version", ["0.5.1", "0.5.11", "0.5.23"])
def test_the_release_says_where_it_checks_the_partition(version: str) -> None:
    checks = release_for(version).traits["pp_partition_checks"]
    assert checks["env"] == "SGLANG_PP_LAYER_PARTITION"
    for kind in ("parse", "count", "sum"):
        assert checks[kind]["site"].startswith("sglang/srt/distributed/utils.py:")


@pytest.mark.parametrize(("value", "said"), [
    ("8,8,x,8", "Invalid partition string: 8,8,x,8"),
    ("16,16", "len(partitions)=2 does not match pp_size=4."),
    ("8,8,8,4", "sum(partitions)=28 does not match num_hidden_layers=32."),
])
def test_a_partition_sglang_refuses_is_an_error_with_its_own_message(
        models: dict[str, str], value: str, said: str) -> None:
    report, finding = _finding(models, value)
    assert finding is not None and finding.severity == "error", report.findings
    assert finding.message.startswith(said)
    assert "sglang/srt/distributed/utils.py:" in finding.message
    assert report.verdict == "error"
    labels = [fix.label for fix in finding.fixes]
    assert labels[0].startswith("Remove SGLANG_PP_LAYER_PARTITION")
    assert finding.fixes[0].env == {"SGLANG_PP_LAYER_PARTITION": None}
    assert finding.fixes[1].env == {"SGLANG_PP_LAYER_PARTITION": "8,8,8,8"}


def test_a_partition_sglang_accepts_says_nothing_and_reaches_the_plan(
        models: dict[str, str]) -> None:
    report, finding = _finding(models, "5,9,9,9")
    assert finding is None
    plan = report.memory_plan
    assert plan is not None and plan.layers_per_gpu == 9
    assert any("SGLANG_PP_LAYER_PARTITION" in a for a in plan.assumptions)


def test_without_the_variable_nothing_is_said(models: dict[str, str]) -> None:
    report = check_argv(["--model-path", models["llama"], "--pp-size", "4"],
                        sglang_version="0.5.11", gpu="H100", gpus=8)
    assert all(f.rule != RULE for f in report.findings)


def test_a_traceback_at_the_partition_check_names_the_rule() -> None:
    from wizard.rules.catalog import rule_for_location

    site = release_for("0.5.11").traits["pp_partition_checks"]["count"]["site"]
    rule = rule_for_location("0.5.11", "/usr/lib/python3/site-packages/" + site)
    assert rule is not None and rule.id == RULE
