"""Issue 10, one test per bug a first-time user hit: focus, keys at machine speed, unsaved work,
numbers, secrets, extra args, fixes by key, undo, keys overlay, exports, 80x24, themes."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.widgets import HelpPanel, OptionList, Select, Static, TextArea

from screens.app import WizardApp
from screens.dialogs import (
    ConfirmDialog,
    ImportCommandDialog,
    SaveProfileDialog,
    UnsavedDialog,
)
from screens.forms import FieldInput
from screens.messages import EditRequested
from screens.widgets.effective import EffectiveTable
from screens.widgets.findings import FindingsPanel
from screens.widgets.stepbar import StepBar
from wizard.profile import load_profile, profile_to_toml
from wizard.profile_schema import Profile
from wizard.sglang.render import render_yaml


def incident1(models: dict[str, Path], **speculative: object) -> Profile:
    spec = {"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1, **speculative}
    return Profile.model_validate(
        {
            "model": {"path": str(models["qwen36"])},
            "parallel": {"tp": 2},
            "speculative": spec,
            "hybrid": {"cache_strategy": "extra_buffer"},
            "gpu": {"kind": "RTX A6000", "count": 2},
        }
    )


def status(app: WizardApp) -> str:
    return str(app.screen.query_one(StepBar).query_one("#status", Static).visual)


def field(app: WizardApp, path: str) -> FieldInput:
    return next(f for f in app.screen.query(FieldInput) if f.path == path)


async def test_every_step_focuses_its_first_useful_widget(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.focused is app.screen.query_one("#profile-list")
        await pilot.press("f2")
        assert isinstance(app.focused, FieldInput) and app.focused.path == "model.path"
        await pilot.press("tab", "tab", "tab")  # somewhere else on F2 ...
        await pilot.press("f4")
        assert isinstance(app.focused, FieldInput) and app.focused.path == "speculative.num_steps"
        await pilot.press("f2")  # ... is not remembered: entering F2 starts at the model path
        assert isinstance(app.focused, FieldInput) and app.focused.path == "model.path"
        await pilot.press("f3")
        assert app.focused is app.screen.query_one("#algo-list")
        await pilot.press("f5")
        assert app.focused is app.screen.query_one("#review-body")
        # New profile: the Model step, focus in the model path, typing goes there at once.
        await pilot.press("f1", "n")
        await pilot.pause()
        assert app.current_mode == "model"
        assert isinstance(app.focused, FieldInput) and app.focused.path == "model.path"
        await pilot.press("end", "ctrl+u", "x")
        await pilot.pause()
        assert app.profile.model.path == "x"
        # Dialogs focus their input; a replace question focuses No.
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SaveProfileDialog)
        assert app.focused is app.screen.query_one("#save-name")
        await pilot.press("escape")


async def test_keys_at_machine_speed_are_neither_dropped_nor_reordered(
    models: dict[str, Path], ready_dir: Path
) -> None:
    """`2<Tab>2` pasted or sent by a macro fills Steps and Top-k, not Steps with 22; keys right
    after F4 land on the Parameters step."""
    app = WizardApp(initial=incident1(models, num_steps=None, eagle_topk=None), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        for key, char in (("2", "2"), ("tab", "\t"), ("2", "2")):
            app.post_message(events.Key(key, char))  # all queued before any is handled
        await pilot.pause()
        await pilot.pause()
        assert field(app, "speculative.num_steps").value == "2"
        assert field(app, "speculative.eagle_topk").value == "2"
        assert (app.profile.speculative.num_steps, app.profile.speculative.eagle_topk) == (2, 2)
        await pilot.press("f1")
        for key, char in (("f4", None), ("3", "3")):
            app.post_message(events.Key(key, char))
        await pilot.pause()
        await pilot.pause()
        assert app.current_mode == "parameters"
        assert app.profile.speculative.num_steps == 3
        assert app.profile.speculative.eagle_topk == 2


async def test_editing_keys_at_machine_speed_keep_their_order(
    models: dict[str, Path], ready_dir: Path
) -> None:
    """Backspace and the arrows are Input bindings, which Textual runs only after the key has
    bubbled back to the app: sent at machine speed (tmux send-keys, a macro) `<BS>16` gave `1`
    and `12<Left>3` gave `123`. They act in the order typed."""
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        burst = [("tab", "\t"), ("tab", "\t"), ("backspace", None), ("1", "1"), ("6", "6")]
        for key, char in burst:
            app.post_message(events.Key(key, char))  # all queued before any is handled
        await pilot.pause()
        await pilot.pause()
        assert field(app, "speculative.num_draft_tokens").value == "16"
        field(app, "attention.page_size").focus()
        await pilot.pause()
        for key, char in (("1", "1"), ("2", "2"), ("left", None), ("3", "3")):
            app.post_message(events.Key(key, char))
        await pilot.pause()
        await pilot.pause()
        assert field(app, "attention.page_size").value == "132"
        assert app.profile.attention.page_size == 132
        assert app.profile.speculative.num_draft_tokens == 16


async def test_emptying_the_draft_path_keeps_the_field_and_the_keys(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.press("d", "a", "b", "backspace", "backspace")
        await pilot.pause()
        draft = field(app, "speculative.draft_model_path")
        assert app.screen.query_one("#draft-row").display and app.focused is draft
        await pilot.press("c")
        await pilot.pause()
        assert draft.value == "c" and app.profile.speculative.draft_model_path == "c"


async def test_unsaved_work_is_never_dropped_silently(
    models: dict[str, Path], ready_dir: Path, profiles_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), initial_name="mine", ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4", "2")  # Steps 1 -> 2: entering a step selects its first field
        await pilot.pause()
        assert app.profile.speculative.num_steps == 2
        assert app.dirty and "mine*" in status(app)
        # Quit, New, Import and Open all ask; cancel keeps everything.
        for keys in (("ctrl+q",), ("f1", "n"), ("f1", "i")):
            await pilot.press(*keys)
            await pilot.pause()
            assert isinstance(app.screen, UnsavedDialog), keys
            await pilot.press("escape")
            await pilot.pause()
            assert app.is_running and app.profile.speculative.num_steps == 2
        ready = sorted(ready_dir.glob("*.toml"))[0]
        app.open_path(ready)
        await pilot.pause()
        assert isinstance(app.screen, UnsavedDialog)
        # Save first, then the open goes ahead; the Start list shows the new file at once.
        await pilot.press("s")
        assert isinstance(app.screen, SaveProfileDialog)
        await pilot.press("enter")  # the name "mine" is proposed
        await pilot.pause()
        await pilot.pause()
        assert load_profile(profiles_dir / "mine.toml").speculative.num_steps == 2
        assert app.profile_path == ready and not app.dirty
        await pilot.press("f1")
        listing = app.screen.query_one("#profile-list", OptionList)
        ids = [listing.get_option_at_index(i).id for i in range(listing.option_count)]
        assert f"saved:{profiles_dir / 'mine.toml'}" in ids
        # Discard drops the changes and quits.
        await pilot.press("f4", "5")
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
    assert not app.is_running
    assert load_profile(profiles_dir / "mine.toml").speculative.num_steps == 2


async def test_numbers_out_of_range_are_refused_next_to_the_field_by_its_label(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        steps = field(app, "speculative.num_steps")
        for text, message in (
            ("0", "Steps: must be at least 1, got 0"),
            ("-3", "Steps: must be at least 1, got -3"),
            ("99999999999999999999999", "must be at most 1024"),
        ):
            await pilot.press("end", "ctrl+u", *["minus" if c == "-" else c for c in text])
            await pilot.pause()
            assert steps.has_class("-offending")
            kept = app.profile.speculative.num_steps  # the last valid value, never the refused one
            assert kept is None or 1 <= kept <= 1024
            first = app.screen.query_one("#findings-list", OptionList).get_option_at_index(0)
            assert message in str(first.prompt)
            assert message in str(app.screen.query_one("#params-form").border_subtitle)
            assert "speculative.num_steps" not in str(first.prompt)


async def test_secrets_are_masked_everywhere_and_stored_as_a_reference(
    models: dict[str, Path], ready_dir: Path, profiles_dir: Path, isolated_dirs: Path
) -> None:
    token = "hf_verysecretvalue"
    app = WizardApp(initial=incident1(models), initial_name="tok", ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        env = field(app, "env")
        env.focus()
        await pilot.press(*"HF", "underscore", *"TOKEN=", *token.replace("_", ""))
        await pilot.press("tab")
        await pilot.pause()
        await pilot.pause()
        assert app.profile.env == {"HF_TOKEN": "env:HF_TOKEN"}
        assert env.value == "HF_TOKEN=env:HF_TOKEN"
        await pilot.press("f5")
        await pilot.pause()
        command = app.screen.query_one("#review-command")
        assert 'HF_TOKEN="$HF_TOKEN"' in command.text  # type: ignore[attr-defined]
        assert "hfverysecret" not in command.text  # type: ignore[attr-defined]
        await pilot.press("y", "enter")
        await pilot.pause()
        exported = isolated_dirs / "xdg_data_home" / "sglang-wizard" / "exports" / "tok.yaml"
        assert "hfverysecret" not in exported.read_text(encoding="utf-8")
        await pilot.press("ctrl+s", "enter")
        await pilot.pause()
        saved = (profiles_dir / "tok.toml").read_text(encoding="utf-8")
        assert "hfverysecret" not in saved and 'HF_TOKEN = "env:HF_TOKEN"' in saved

        # Importing a command with a literal token says so and keeps the reference.
        await pilot.press("f1", "i")
        assert isinstance(app.screen, ImportCommandDialog)
        app.screen.query_one(TextArea).text = (
            f"HF_TOKEN={token} python -m sglang.launch_server --model-path {models['qwen36']}"
        )
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.profile.env == {"HF_TOKEN": "env:HF_TOKEN"}
        assert any("Secret not stored" in (n.title or "") for n in app._notifications)
        assert app.dirty


async def test_extra_args_that_collide_with_a_field_are_a_finding_with_a_fix(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        extra = field(app, "extra_args")
        extra.focus()
        keys = {"-": "minus", " ": "space"}
        await pilot.press(*[keys.get(c, c) for c in "--speculative-num-steps 3"])
        await pilot.pause()
        panel = app.screen.query_one(FindingsPanel)
        assert panel.selected is not None and panel.selected.rule == "R-EXTRA-ARGS-FIELD"
        assert "✗ refuses" in status(app)
        await pilot.press("f5")
        await pilot.pause()
        shown = str(app.screen.query_one("#review-command", Static).visual)
        assert "Not written: extra_args sets --speculative-num-steps" in shown and "F4" in shown
        assert "refuses" in str(app.screen.query_one("#review-verdict", Static).visual)
        await pilot.press("f4", "alt+1")  # move the value into its field
        await pilot.pause()
        assert app.profile.speculative.num_steps == 3 and app.profile.extra_args == []
        assert field(app, "speculative.num_steps").value == "3"


async def test_fixes_by_digit_from_the_table_enter_jumps_to_the_field_and_ctrl_z_undoes(
    models: dict[str, Path], ready_dir: Path
) -> None:
    start = incident1(models, num_steps=None, eagle_topk=None, num_draft_tokens=1)
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        app.screen.query_one(EffectiveTable).focus()
        await pilot.press("2")  # fix 2 of the trio assert: let SGLang choose all three
        await pilot.pause()
        spec = app.profile.speculative
        assert (spec.num_steps, spec.eagle_topk, spec.num_draft_tokens) == (None, None, None)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.profile == start and not app.dirty
        await pilot.press("ctrl+g", "enter")  # Enter on the finding: its first field
        assert isinstance(app.focused, FieldInput)
        assert app.focused.path in ("speculative.num_steps", "speculative.num_draft_tokens")


async def test_question_mark_lists_the_keys_and_types_in_a_field(
    models: dict[str, Path], ready_dir: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5", "question_mark")
        await pilot.pause()
        assert app.screen.query(HelpPanel)
        await pilot.press("question_mark")
        await pilot.pause()
        assert not app.screen.query(HelpPanel)
        await pilot.press("f4")
        extra = field(app, "extra_args")
        extra.focus()
        await pilot.press("a", "question_mark")  # free text being edited: `?` is a character
        assert extra.value == "a?" and not app.screen.query(HelpPanel)


async def test_screenshot_goes_to_the_exports_dir(
    models: dict[str, Path], ready_dir: Path, isolated_dirs: Path
) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f8")
        await pilot.pause()
    exports = isolated_dirs / "xdg_data_home" / "sglang-wizard" / "exports"
    assert list(exports.glob("*.svg"))
    assert not list(isolated_dirs.glob("*.svg"))  # the working directory


async def test_80x24_keeps_the_verdict_and_what_sglang_runs(
    models: dict[str, Path], ready_dir: Path
) -> None:
    start = incident1(models, num_steps=1, eagle_topk=1, num_draft_tokens=16)
    app = WizardApp(initial=start, initial_name="a-rather-long-profile-name", ready_dir=ready_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        bar = app.screen.query_one(StepBar)
        assert "! starts, 1 warning" in str(bar.query_one("#status", Static).visual)
        assert bar.query_one("#steps-short").display and not bar.query_one("#steps").display
        table = app.screen.query_one(EffectiveTable)
        cells = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert ["speculative_num_draft_tokens", "  16 → 2"] in [c.splitlines() for c in cells]
        assert table.size.width >= len("speculative_num_draft_tokens") + 2


async def test_focus_ring_shows_in_dark_and_light(models: dict[str, Path], ready_dir: Path) -> None:
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        for theme in ("textual-dark", "textual-light"):
            app.theme = theme
            await pilot.pause()
            focused = field(app, "speculative.num_steps")
            other = field(app, "speculative.eagle_topk")
            assert app.focused is focused
            assert focused.styles.background_tint.a > 0.2
            assert other.styles.background_tint.a < 0.1
            label = focused.parent.query_one(".label")  # type: ignore[union-attr]
            assert label.styles.text_style.reverse


async def test_confirm_dialog_focuses_no(ready_dir: Path) -> None:
    app = WizardApp(initial=Profile.model_validate({"model": {"path": "/m"}}), ready_dir=ready_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        answers: list[bool | None] = []
        app.push_screen(ConfirmDialog("Replace?"), answers.append)
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert answers == [False]


async def test_select_is_left_alone_by_repaints(models: dict[str, Path], ready_dir: Path) -> None:
    """The hybrid cache select follows fixes (ctrl+z included)."""
    start = incident1(models)
    start = start.with_edits({"hybrid.cache_strategy": None, "speculative.num_steps": None,
                              "speculative.eagle_topk": None})
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4", "ctrl+f")
        await pilot.pause()
        select = app.screen.query_one("#hybrid-cache_strategy", Select)
        assert select.value == "extra_buffer"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert select.value == Select.NULL
        assert profile_to_toml(app.profile) == profile_to_toml(start)


def test_exports_yaml_helper_is_the_renderer(models: dict[str, Path]) -> None:
    """(The Review YAML and the export are the same renderer's output.)"""
    assert render_yaml(incident1(models)).startswith("# SGLang")


async def test_effective_table_colours_follow_the_theme(
    models: dict[str, Path], ready_dir: Path
) -> None:
    """Yellow and cyan text is unreadable on the light theme: the table switches to dark tones."""
    from screens.widgets.effective import CHOSEN

    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        table = app.screen.query_one(EffectiveTable)
        chosen = next(
            i for i in range(table.row_count) if str(table.get_row_at(i)[1]) == "(SGLang chooses)"
        )
        assert str(table.get_row_at(chosen)[2].style) == CHOSEN[True]
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert str(table.get_row_at(chosen)[2].style) == CHOSEN[False]


async def test_effective_table_columns_shrink_again(
    models: dict[str, Path], ready_dir: Path
) -> None:
    """Wide enough for every column (160 columns), a long value widens its column and the
    column shrinks back once the value is gone."""
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.press("f4")
        table = app.screen.query_one(EffectiveTable)
        narrow = table.column_width("typed")
        app.post_message(
            EditRequested(
                {"speculative.draft_model_path": "/a/very/long/draft/path/x"},
                {"speculative.draft_model_path": "/a/very/long/draft/path/x"},
            )
        )
        await pilot.pause()
        wide = table.column_width("typed")
        assert wide > narrow
        app.post_message(
            EditRequested({"speculative.draft_model_path": None}, {"speculative.draft_model_path": ""})
        )
        await pilot.pause()
        table_width = table.column_width("typed")
        assert table_width == narrow


def _painted(update: object) -> dict[tuple[int, int], str]:
    """The cells a compositor update paints: (line, column) -> character."""
    chops = getattr(update, "chops", [])
    cells: dict[tuple[int, int], str] = {}
    for y, x1, x2 in getattr(update, "spans", []):  # what the update writes: (line, from, to)
        for x, strip in (chops[y] or {}).items():
            column = x
            for seg in strip or ():
                for char in seg.text:
                    if x1 <= column < x2:
                        cells[(y, column)] = char
                    column += 1
    return cells


def _line(cells: dict[tuple[int, int], str], y: int) -> str:
    return "".join(cells[key] for key in sorted(k for k in cells if k[0] == y))


def _one_picture(frames: list[object]) -> dict[tuple[int, int], str]:
    """What the first frame paints, asserting that later frames change nothing of it: a frame
    after the first may re-send cells (a layout pass when the explanation's height changes) but
    never shows something the first frame did not."""
    assert frames, "no frame painted"
    first = _painted(frames[0])
    for later in frames[1:]:
        for cell, char in _painted(later).items():
            assert first.get(cell) == char, f"cell {cell} changed after the first frame"
    return first


async def test_a_keystroke_reaches_the_terminal_in_one_frame_with_its_verdict(
    models: dict[str, Path], ready_dir: Path
) -> None:
    """The typed digit, the verdict and the findings it changes are painted together: no frame
    shows the new digit beside the old verdict. (A second frame that only repeats lines of the
    first, Textual's layout pass when the explanation's height changes, is allowed.)"""
    app = WizardApp(initial=incident1(models, num_steps=None, eagle_topk=None), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        # the hold waits for the check's answer, not for the fallback timer (a loaded machine can
        # take longer than HOLD_SECONDS to answer; the timer is tested on its own below)
        app.screen.HOLD_SECONDS = 60.0  # type: ignore[misc]
        draft = field(app, "speculative.num_draft_tokens")
        draft.focus()
        await pilot.pause()
        assert "refuses" not in status(app)
        frames: list[object] = []
        display = app._display
        app._display = lambda screen, update: (frames.append(update), display(screen, update))  # type: ignore[method-assign]
        await pilot.press("1")  # NEXTN with draft tokens 1: SGLang refuses (the trio assert)
        await pilot.pause()
        assert draft.value == "1" and "refuses" in status(app)
        picture = _one_picture(frames)
        assert "refuses" in _line(picture, 0)  # the step bar's verdict, in the digit's frame
        box = draft.region  # the typed digit is in the same frame as the verdict
        assert any(char == "1" and box.contains(x, y) for (y, x), char in picture.items())
        assert len(frames) <= 2
        frames.clear()
        await pilot.press("backspace")
        await pilot.pause()
        assert "refuses" not in status(app)
        picture = _one_picture(frames)
        assert "refuses" not in _line(picture, 0) and len(frames) <= 2
        assert app._batch_count == 0  # the hold is released


async def test_a_hold_without_an_answer_is_released(
    models: dict[str, Path], ready_dir: Path
) -> None:
    """A typed key whose edit never comes back (no `ProfileChanged`) holds repaints for at most
    `HOLD_SECONDS`, and leaving the step releases at once."""
    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        screen = app.screen
        screen.HOLD_SECONDS = 0.001  # type: ignore[misc]
        screen.hold_updates()  # type: ignore[attr-defined]
        assert app._batch_count == 1
        await pilot.pause()  # the fallback timer fires
        assert app._batch_count == 0
        screen.HOLD_SECONDS = 60  # type: ignore[misc]
        screen.hold_updates()  # type: ignore[attr-defined]
        await pilot.press("f5")
        assert app._batch_count == 0
        assert app.screen.query_one(StepBar).region  # the next step is laid out and painted


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_notifications_sit_bottom_left_not_over_the_table(
    models: dict[str, Path], ready_dir: Path, size: tuple[int, int]
) -> None:
    from textual.widgets._toast import Toast

    app = WizardApp(initial=incident1(models), ready_dir=ready_dir)
    async with app.run_test(size=size, notifications=True) as pilot:
        await pilot.press("f4")
        app.notify("a message that takes some room on the screen", title="Note")
        await pilot.pause()
        toast = app.screen.query_one(Toast)
        table = app.screen.query_one(EffectiveTable)
        assert toast.region.x == 0
        assert not toast.region.overlaps(table.region)
        assert not toast.region.overlaps(app.screen.query_one(FindingsPanel).region)
