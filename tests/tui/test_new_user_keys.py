"""Issue 25, TUI items 11-17: what new users hit in tmux at 120x40 and 80x24 (help key, undo of
typing, alt+digit sent as ESC+digit, keys at machine speed, the shipped example models, the
Algorithm cursor, the import version and box, labels, the unsaved mark, the launch header)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual._xterm_parser import XTermParser
from textual.widgets import HelpPanel, OptionList, Select, Static, TextArea
from textual.widgets._select import SelectOverlay

from screens.app import EXAMPLE_PROFILE, WizardApp
from screens.dialogs import ImportCommandDialog, UnsavedDialog
from screens.widgets.findings import FindingsPanel
from screens.widgets.stepbar import StepBar
from wizard.profile_schema import DEFAULT_SGLANG_VERSION, Profile

from .test_daily_use import field, incident1, status


def trio_error(models: dict[str, Path]) -> Profile:
    """Incident 1 with draft tokens 1: the trio AssertionError, whose fixes are numbered 1..N."""
    return incident1(models, num_steps=None, eagle_topk=None, num_draft_tokens=1)


def burst(app: WizardApp, *keys: tuple[str, str | None]) -> None:
    """Queue keys before any is handled (what tmux send-keys or a paste does)."""
    for key, char in keys:
        app.post_message(events.Key(key, char))


def parsed(text: str) -> list[events.Key]:
    """The key events Textual's terminal parser makes of `text` (what tmux sends)."""
    return [e for e in XTermParser().feed(text) if isinstance(e, events.Key)]


# ---------------------------------------------------------------- 11: `?` and undo


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_question_mark_opens_help_from_a_selected_field_without_touching_it(
    models: dict[str, Path], ready_dir: Path, size: tuple[int, int]
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f2", "question_mark")
        await pilot.pause()
        assert app.screen.query(HelpPanel)
        assert field(app, "model.path").value == str(models["qwen36"])
        assert app.profile.model.path == str(models["qwen36"])
        await pilot.press("question_mark")
        assert not app.screen.query(HelpPanel)
        await pilot.press("f4", "question_mark")  # Steps is focused, its text selected
        await pilot.pause()
        assert app.screen.query(HelpPanel)
        assert field(app, "speculative.num_steps").value == "1"
        assert app.profile.speculative.num_steps == 1 and not app.dirty


async def test_question_mark_is_typed_inside_free_text_being_edited(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        extra = field(app, "extra_args")
        extra.focus()
        await pilot.pause()
        await pilot.press("question_mark")  # empty field: help
        assert app.screen.query(HelpPanel) and extra.value == ""
        await pilot.press("question_mark")
        await pilot.press(*"--x", "space", "a", "question_mark")
        await pilot.pause()
        assert extra.value == "--x a?" and not app.screen.query(HelpPanel)


async def test_ctrl_z_undoes_typing_field_by_field(
    models: dict[str, Path], ready_dir: Path
) -> None:
    start = incident1(models)
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4", "5")  # Steps (selected on entry) becomes 5
        await pilot.press("tab", "2", "backspace", "3")  # Top-k 3
        await pilot.pause()
        assert (app.profile.speculative.num_steps, app.profile.speculative.eagle_topk) == (5, 3)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert (app.profile.speculative.num_steps, app.profile.speculative.eagle_topk) == (5, 1)
        assert field(app, "speculative.eagle_topk").value == "1"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.profile == start and not app.dirty
        assert field(app, "speculative.num_steps").value == "1"
        assert "*" not in status(app)


# ---------------------------------------------------------------- 12: ESC+digit applies fixes


def test_esc_digit_from_tmux_is_alt_digit() -> None:
    WizardApp()  # the app installs the mapping
    assert [k.key for k in parsed("\x1b2")] == ["alt+2"]
    assert [k.key for k in parsed("\x1b9")] == ["alt+9"]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_esc_digit_applies_that_fix_from_inside_a_field(
    models: dict[str, Path], ready_dir: Path, size: tuple[int, int]
) -> None:
    app = WizardApp(initial=trio_error(models), ready_dir=ready_dir)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f4")
        steps = field(app, "speculative.num_steps")
        assert app.focused is steps
        panel = app.screen.query_one(FindingsPanel)
        assert panel.selected is not None and len(panel.selected.fixes) >= 2
        fix2 = panel.selected.fixes[1]
        for key in parsed("\x1b2"):  # M-2 in tmux
            app.post_message(key)
        await pilot.pause()
        await pilot.pause()
        assert all(app.profile.get(path) == value for path, value in fix2.edits.items())
        assert "™" not in steps.value and "™" not in field(app, "extra_args").value


async def test_macos_option_digit_applies_the_fix_too(
    models: dict[str, Path], ready_dir: Path
) -> None:
    """Option+1 on a Mac terminal without "Option as Meta" types `¡`: it is fix 1 there."""
    app = WizardApp(initial=trio_error(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        fix1 = app.screen.query_one(FindingsPanel).selected.fixes[0]  # type: ignore[union-attr]
        for key in parsed("¡"):
            app.post_message(key)
        await pilot.pause()
        await pilot.pause()
        assert all(app.profile.get(path) == value for path, value in fix1.edits.items())
        assert "¡" not in field(app, "speculative.num_steps").value


# ---------------------------------------------------------------- 13: machine-speed keys


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_select_keys_at_machine_speed_are_not_dropped(
    models: dict[str, Path], ready_dir: Path, size: tuple[int, int]
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f2")
        gpu = app.screen.query_one("#gpu-kind", Select)
        options = [value for _label, value in gpu._options if value is not Select.NULL]
        wanted = options[options.index("RTX A6000") + 1]
        burst(app, ("tab", "\t"), ("tab", "\t"), ("enter", "\r"), ("down", None), ("enter", "\r"))
        await pilot.pause()
        await pilot.pause()
        assert app.profile.gpu.kind == wanted
        assert not gpu.expanded and not isinstance(app.focused, SelectOverlay)


async def test_ctrl_g_then_a_digit_at_machine_speed_applies_that_fix(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=trio_error(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        steps = field(app, "speculative.num_steps")
        fix2 = app.screen.query_one(FindingsPanel).selected.fixes[1]  # type: ignore[union-attr]
        burst(app, ("ctrl+g", None), ("2", "2"))
        await pilot.pause()
        await pilot.pause()
        assert all(app.profile.get(path) == value for path, value in fix2.edits.items())
        assert steps.value in ("", str(app.profile.speculative.num_steps or ""))


# ---------------------------------------------------------------- 14: shipped example models


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_opening_example_has_model_facts_without_the_model(
    ready_dir: Path, size: tuple[int, int]
) -> None:
    app = WizardApp(ready_dir=ready_dir)
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.profile_name == EXAMPLE_PROFILE
        assert app.profile.model.path == "/root/models/Qwen3.6-27B"  # the user's path is kept
        report = app.report
        assert report is not None and report.model_source is not None
        assert "example" in report.model_source
        assert all(f.rule != "R-FACTS-MISSING" for f in report.findings)
        await pilot.press("f2")
        await app.workers.wait_for_complete()
        await pilot.pause()
        card = str(app.screen.query_one("#model-card", Static).visual)
        assert "Qwen3_5ForConditionalGeneration" in card and "example" in card
        assert "Memory per GPU" in card


# ---------------------------------------------------------------- 15: cursor and import version


async def test_algorithm_list_starts_on_the_profiles_algorithm(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        listing = app.screen.query_one("#algo-list", OptionList)
        assert listing.highlighted_option is not None
        assert listing.highlighted_option.id == "NEXTN"
        await pilot.press("down", "down")  # look around, choose nothing
        assert listing.highlighted_option.id != "NEXTN"
        await pilot.press("f1", "n")  # a new profile: no algorithm
        await pilot.pause()
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        listing = app.screen.query_one("#algo-list", OptionList)
        assert listing.highlighted_option is not None and listing.highlighted_option.id == "none"
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.profile.speculative.algorithm == "NEXTN"


async def test_import_does_not_keep_the_version_of_a_discarded_profile(
    models: dict[str, Path], ready_dir: Path
) -> None:
    from screens import core

    other = next(v for v in core.supported_versions() if v != DEFAULT_SGLANG_VERSION)
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4", "5")
        app.action_switch_version(other)
        await pilot.pause()
        assert app.profile.sglang_version == other and app.dirty
        await pilot.press("f1", "i")
        assert isinstance(app.screen, UnsavedDialog)
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ImportCommandDialog)
        app.screen.query_one(TextArea).text = (
            f"python -m sglang.launch_server --model-path {models['qwen36']} --tp 2"
        )
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.profile.sglang_version == DEFAULT_SGLANG_VERSION


# ---------------------------------------------------------------- 16: labels, `*`, header


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_parameters_labels_are_whole_after_visiting_model(
    models: dict[str, Path], ready_dir: Path, size: tuple[int, int]
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f4", "f2", "f4")
        await pilot.pause()
        for label in app.screen.query(".row > .label"):
            text = str(label.visual)
            assert label.content_region.width >= len(text), text


async def test_retyping_the_saved_value_clears_the_unsaved_mark(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir, initial_name="mine")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4", "5")
        await pilot.pause()
        assert app.dirty and "mine*" in status(app)
        await pilot.press("backspace", "1")
        await pilot.pause()
        assert app.profile.speculative.num_steps == 1
        assert not app.dirty and "mine*" not in status(app) and "mine" in status(app)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_launch_screen_has_the_step_and_verdict_header(
    models: dict[str, Path], ready_dir: Path, size: tuple[int, int]
) -> None:
    from screens.launch import LaunchScreen

    app = WizardApp(initial=incident1(models), ready_dir=ready_dir, initial_name="mine")
    async with app.run_test(size=size) as pilot:
        await pilot.press("f5")
        app.push_screen(LaunchScreen(app.profile))
        await pilot.pause()
        bar = app.screen.query_one(StepBar)
        assert bar.region.y == 0
        text = str(bar.query_one("#status", Static).visual)
        assert "starts" in text and "mine" in text
        assert "Launch" in str(bar.query_one("#steps", Static).visual)


# ---------------------------------------------------------------- 17: the import box


async def test_import_box_select_all_and_in_place_correction(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f1", "i")
        box = app.screen.query_one(TextArea)
        box.text = "python -m sglang.launch_server --tp 2"
        await pilot.press("ctrl+a")
        assert box.selected_text == box.text
        command = (
            f"python -m sglang.launch_server --model-path {models['qwen36']} "
            "--num-speculative-tokens 4 --tp 2"
        )
        await pilot.press("backspace")
        app.screen.post_message(events.Paste(command))
        await pilot.pause()
        assert box.text == command
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ImportCommandDialog)  # refused: the flag is vLLM's
        assert box.selected_text == "--num-speculative-tokens"  # selected where it stands
        await pilot.press(*"--speculative-num-draft-tokens")
        assert box.text == command.replace(
            "--num-speculative-tokens", "--speculative-num-draft-tokens"
        )
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, ImportCommandDialog)
        assert app.profile.speculative.num_draft_tokens == 4


async def test_ctrl_z_undoes_choices_one_at_a_time(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        gpu = app.screen.query_one("#gpu-kind", Select)
        gpu.value = "H100"
        await pilot.pause()
        gpu.value = "H200"
        await pilot.pause()
        assert app.profile.gpu.kind == "H200"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.profile.gpu.kind == "H100" and gpu.value == "H100"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.profile.gpu.kind == "RTX A6000" and not app.dirty
