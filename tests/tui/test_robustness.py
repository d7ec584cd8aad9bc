"""Bad input anywhere becomes a marked field or a finding, never a traceback."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from screens.app import WizardApp
from screens.forms import FieldInput
from screens.widgets.effective import EffectiveTable
from screens.widgets.findings import explain
from wizard.profile_schema import Profile

NASTY = ["-1", "99999999999999999999", '"a b', "=1"]


async def test_nasty_values_in_every_field_keep_the_app_alive(
    models: dict[str, Path], ready_dir: Path
) -> None:
    start = Profile.model_validate(
        {
            "model": {"path": str(models["qwen36"])},
            "speculative": {"algorithm": "NEXTN"},
            "gpu": {"kind": "RTX A6000", "count": 2},
        }
    )
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        for step in ("f4",):  # the Model step's fields are the same kinds of input
            await pilot.press(step)
            kinds_once = {}  # one field of each kind (int, float, str, env, args) is enough
            for field in app.screen.query(FieldInput):
                kinds_once.setdefault(field.kind, field)
            for field in kinds_once.values():
                field.focus()
                for value in NASTY:
                    field.value = value
                    await pilot.pause()
                    problem = app.input_problems.get(field.path)
                    if problem is not None:  # refused: marked, explained, profile unchanged
                        assert field.has_class("-offending")
                        assert isinstance(problem, str) and problem
                field.value = ""
                await pilot.pause()
        # every algorithm can be chosen and checked without a crash
        for version in ("0.5.23",):  # the version with the most algorithms
            app.action_switch_version(version)
            await pilot.press("f3")
            await app.workers.wait_for_complete()
            await pilot.pause()
            listing = app.screen.query_one("#algo-list", OptionList)
            for index in range(listing.option_count):
                listing.highlighted = index
                await pilot.press("enter")
                await pilot.pause()
                report = app.report
                assert report is not None
                # what the Parameters step would render for it: every explanation and table row
                for finding in report.findings:
                    assert finding.title in explain(finding, version).plain
                assert len(EffectiveTable.rows_for(report)) == len(report.effective)
        await pilot.press("f4")
        await pilot.pause()
        assert app.is_running
        assert app.report is not None


def test_a_runtime_error_is_not_called_no_exception(models: dict[str, Path]) -> None:
    """The explanation of a runtime trap (a draft of the wrong hidden size: SGLang starts, then
    fails loading it) said "0.5.11: no exception" under a red "✗ error"."""
    from wizard.api import check_profile

    profile = Profile.model_validate(
        {
            "model": {"path": str(models["qwen36"])},
            "speculative": {"algorithm": "EAGLE3", "draft_model_path": str(models["eagle3"]),
                            "num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4},
            "hybrid": {"cache_strategy": "extra_buffer"},
            "gpu": {"kind": "H100", "count": 1},
        }
    )
    report = check_profile(profile)
    runtime = [f for f in report.findings
               if f.sglang is not None and f.sglang.stage == "runtime" and f.severity == "error"
               and f.sglang.exception is None]
    assert runtime, [f.rule for f in report.findings]
    for finding in runtime:
        text = explain(finding, "0.5.11").plain
        assert "no exception" not in text
        assert "not checked at start" in text
