"""Issue 22 in the TUI: the memory plan's verdict is the one the CLI gives, and no GPU kind means
no plan and no memory finding (the Model card and Parameters say the same thing)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from screens.app import WizardApp
from screens.widgets.findings import FindingsPanel
from screens.widgets.stepbar import StepBar
from wizard.api import check_profile
from wizard.profile_schema import Profile
from wizard.verdict import verdict_of

MEMORY_RULES = {"R-MEMORY-PLAN", "R-MEMORY-NOFIT"}


def _status(app: WizardApp) -> str:
    return str(app.screen.query_one(StepBar).query_one("#status", Static).visual)


def _qwen36(models: dict[str, Path], gpu: dict[str, object] | None, tp: int) -> Profile:
    data: dict[str, object] = {"model": {"path": str(models["qwen36"])}, "parallel": {"tp": tp}}
    if gpu is not None:
        data["gpu"] = gpu
    return Profile.model_validate(data)


async def test_a_plan_that_will_not_fit_fails_at_run_time_on_every_step(
    models: dict[str, Path], ready_dir: Path
) -> None:
    """Qwen3.6-27B bf16 (~51 GiB) at tp 1 on one 48 GB A6000: the header says what `check` says."""
    start = _qwen36(models, {"kind": "RTX A6000", "count": 1}, tp=1)
    cli = check_profile(start)
    assert cli.verdict == "error" and verdict_of(cli).headline == "fails at run time"
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        for key in ("f4", "f5"):
            await pilot.press(key)
            await pilot.pause()
            assert "fails at run time" in _status(app), key
        await pilot.press("f4")
        await pilot.pause()
        rules = [f.rule for f in app.screen.query_one(FindingsPanel).findings]
        assert "R-MEMORY-NOFIT" in rules and "R-MEMORY-PLAN" not in rules


async def test_no_gpu_kind_no_memory_finding_and_the_card_asks_for_it(
    models: dict[str, Path], ready_dir: Path
) -> None:
    start = _qwen36(models, None, tp=1)
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        rules = {f.rule for f in app.screen.query_one(FindingsPanel).findings}
        assert not rules & MEMORY_RULES
        assert "fails at run time" not in _status(app)
        await pilot.press("f2")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        card = str(app.screen.query_one("#model-card", Static).visual)
        assert "Choose the GPU kind to see the memory plan" in card
