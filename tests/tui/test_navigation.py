"""Keyboard navigation, input handling and saving, through Pilot (no rule engine needed)."""

from __future__ import annotations

from pathlib import Path

from textual.message import Message
from textual.widgets import Input

from screens.app import STEPS, WizardApp
from screens.dialogs import ConfirmDialog, SaveProfileDialog
from screens.forms import FieldInput
from screens.messages import EditRequested, InputRejected, ProfileSaved
from wizard.profile import load_profile, profile_to_toml
from wizard.profile_schema import Profile


def _profile(model: Path | str = "/models/m") -> Profile:
    return Profile.model_validate({"model": {"path": str(model)}, "parallel": {"tp": 2}})


async def test_every_step_is_reachable_by_keyboard(ready_dir: Path) -> None:
    app = WizardApp(initial=_profile(), ready_dir=ready_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.current_mode == "start"
        for number, step in enumerate(STEPS, start=1):
            await pilot.press(f"f{number}")
            assert app.current_mode == step
            assert type(app.screen).__name__.lower().startswith(step)
        await pilot.press("f1")
        visited = []
        for _ in STEPS:
            visited.append(app.current_mode)
            await pilot.press("ctrl+n")
        assert visited == list(STEPS)
        await pilot.press("ctrl+b", "ctrl+b")
        assert app.current_mode == "algorithm"


async def test_typing_a_value_edits_the_profile(ready_dir: Path) -> None:
    seen: list[Message] = []
    app = WizardApp(initial=_profile(), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await pilot.press("f4")
        field = app.screen.query_one("#speculative-num_steps", FieldInput)
        field.focus()
        await pilot.press("3")
        await pilot.pause()
        assert app.profile.speculative.num_steps == 3
        assert any(
            isinstance(m, EditRequested) and m.edits == {"speculative.num_steps": 3} for m in seen
        )
        await pilot.press("backspace")
        await pilot.pause()
        assert app.profile.speculative.num_steps is None  # empty = let SGLang choose


async def test_a_refused_value_is_marked_and_the_profile_kept(ready_dir: Path) -> None:
    seen: list[Message] = []
    app = WizardApp(initial=_profile(), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await pilot.press("f4")
        field = app.screen.query_one("#parallel-tp", FieldInput)
        field.focus()
        await pilot.press("end", "x")
        await pilot.pause()
        assert field.value == "2x"
        assert field.has_class("-offending")
        assert "parallel.tp" in app.input_problems
        assert app.profile.parallel.tp == 2
        assert any(isinstance(m, InputRejected) and "parallel.tp" in m.problems for m in seen)
        # empty = the default; a value pydantic refuses (tp must be >= 1) is marked the same way
        await pilot.press("backspace", "backspace")
        await pilot.pause()
        assert app.profile.parallel.tp == 1
        assert field.value == ""
        await pilot.press("0")
        await pilot.pause()
        assert "parallel.tp" in app.input_problems
        assert field.has_class("-offending")
        assert app.profile.parallel.tp == 1
        await pilot.press("backspace", "4")
        await pilot.pause()
        assert app.input_problems == {}
        assert not field.has_class("-offending")
        assert app.profile.parallel.tp == 4


async def test_save_validates_the_name_and_writes_the_toml(
    ready_dir: Path, profiles_dir: Path
) -> None:
    seen: list[Message] = []
    app = WizardApp(initial=_profile(), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SaveProfileDialog)
        await pilot.press(*"bad name!", "enter")
        assert isinstance(app.screen, SaveProfileDialog)  # refused, still asking
        assert list(profiles_dir.iterdir()) == []
        name_input = app.screen.query_one("#save-name", Input)
        name_input.value = "my-profile"
        await pilot.press("enter")
        await pilot.pause()
        saved = profiles_dir / "my-profile.toml"
        assert saved.read_text(encoding="utf-8") == profile_to_toml(app.profile)
        assert load_profile(saved) == app.profile
        assert app.profile_name == "my-profile"
        assert any(isinstance(m, ProfileSaved) and m.path == saved for m in seen)


async def test_overwrite_needs_confirmation(ready_dir: Path, profiles_dir: Path) -> None:
    existing = profiles_dir / "taken.toml"
    existing.write_text("# keep me\n", encoding="utf-8")
    app = WizardApp(initial=_profile(), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+s", *"taken", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("n")
        await pilot.pause()
        assert existing.read_text(encoding="utf-8") == "# keep me\n"
        assert isinstance(app.screen, SaveProfileDialog)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert existing.read_text(encoding="utf-8") == profile_to_toml(app.profile)
        assert not isinstance(app.screen, SaveProfileDialog)


async def test_opens_a_saved_profile_from_the_start_screen(
    ready_dir: Path, profiles_dir: Path
) -> None:
    saved = profiles_dir / "mine.toml"
    saved.write_text(profile_to_toml(_profile("/models/saved")), encoding="utf-8")
    broken = profiles_dir / "broken.toml"
    broken.write_text("schema_version = 1\n[model]\npath = 3\n", encoding="utf-8")
    app = WizardApp(ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        # the newest loadable saved profile is current; the broken one is reported, not raised
        assert app.profile.model.path == "/models/saved" or app.profile_name == "mine"
        app.open_path(broken)
        await pilot.pause()
        assert app.profile.model.path == "/models/saved"
        assert any("broken.toml" in n.message for n in app._notifications)


async def test_the_mouse_works_too(ready_dir: Path) -> None:
    app = WizardApp(initial=_profile(), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        # " F1 Start " is 10 cells wide: the next step name starts at x=10
        await pilot.click("#steps", offset=(12, 0))
        await pilot.pause()
        assert app.current_mode == "model"
        await pilot.click("#steps", offset=(35, 0))  # " F4 Parameters "
        await pilot.pause()
        assert app.current_mode == "parameters"
        await pilot.click("#parallel-tp")
        await pilot.press("end", "backspace", "4")
        await pilot.pause()
        assert app.profile.parallel.tp == 4
