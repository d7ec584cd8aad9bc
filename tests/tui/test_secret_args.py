"""`--api-key` typed in Extra args or pasted into the import box (issue 25 item 2): the profile keeps
a reference, and no screen, copy, export, saved file or F8 screenshot holds the value."""

from __future__ import annotations

import stat
from pathlib import Path

from textual.widgets import TextArea

from screens.app import WizardApp
from screens.dialogs import ImportCommandDialog, TextDialog
from screens.forms import FieldInput
from wizard.profile_schema import Profile

KEY = "skLIVE0123456789"
REFERENCE = ["--api-key", "env:SGLANG_WIZARD_API_KEY"]
_KEYS = {"-": "minus", " ": "space", "_": "underscore", "=": "equals_sign"}


def _incident1(models: dict[str, Path]) -> Profile:
    return Profile.model_validate({
        "model": {"path": str(models["qwen36"])},
        "parallel": {"tp": 2},
        "speculative": {"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1},
        "hybrid": {"cache_strategy": "extra_buffer"},
        "gpu": {"kind": "RTX A6000", "count": 2},
    })


def _keys(text: str) -> list[str]:
    return [_KEYS.get(c, c) for c in text]


def _field(app: WizardApp, path: str) -> FieldInput:
    return next(f for f in app.screen.query(FieldInput) if f.path == path)


def _private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


async def test_an_api_key_typed_in_extra_args_is_never_kept_shown_or_written(
    models: dict[str, Path], ready_dir: Path, profiles_dir: Path, isolated_dirs: Path
) -> None:
    exports = isolated_dirs / "xdg_data_home" / "sglang-wizard" / "exports"
    app = WizardApp(initial=_incident1(models), initial_name="tok", ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        extra = _field(app, "extra_args")
        extra.focus()
        await pilot.press(*_keys(f"--api-key {KEY}"))
        await pilot.pause()
        await pilot.press("f8")  # a screenshot while the key is still being typed
        await pilot.pause()
        shots = list(exports.glob("*.svg"))
        assert len(shots) == 1 and _private(shots[0])
        assert KEY not in shots[0].read_text(encoding="utf-8")

        await pilot.press("tab")  # leaving the field hands it over: the key becomes a reference
        await pilot.pause()
        await pilot.pause()
        assert app.profile.extra_args == REFERENCE
        assert extra.value == "--api-key env:SGLANG_WIZARD_API_KEY"
        assert any("Secret not stored" in (n.title or "") for n in app._notifications)

        await pilot.press("f5")
        await pilot.pause()
        command = app.screen.query_one("#review-command")
        assert '--api-key "$SGLANG_WIZARD_API_KEY"' in command.text  # type: ignore[attr-defined]
        await pilot.press("c")  # copy: OSC 52, exports/tok.sh and a dialog
        await pilot.pause()
        assert isinstance(app.screen, TextDialog)
        copied = exports / "tok.sh"
        assert KEY not in copied.read_text(encoding="utf-8") and _private(copied)
        assert "SGLANG_WIZARD_API_KEY" in copied.read_text(encoding="utf-8")
        await pilot.press("escape")
        await pilot.press("y", "enter")
        await pilot.pause()
        exported = exports / "tok.yaml"
        assert KEY not in exported.read_text(encoding="utf-8") and _private(exported)
        await pilot.press("ctrl+s", "enter")
        await pilot.pause()
        saved = (profiles_dir / "tok.toml").read_text(encoding="utf-8")
        assert KEY not in saved and '"env:SGLANG_WIZARD_API_KEY"' in saved
        assert all(KEY not in p.read_text(errors="replace") for p in isolated_dirs.rglob("*")
                   if p.is_file() and p.suffix in (".toml", ".sh", ".yaml", ".svg", ".json"))


async def test_an_api_key_in_an_imported_command_becomes_a_reference(
    models: dict[str, Path], ready_dir: Path, isolated_dirs: Path
) -> None:
    app = WizardApp(initial=_incident1(models), initial_name="tok", ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f1", "i")
        assert isinstance(app.screen, ImportCommandDialog)
        app.screen.query_one(TextArea).text = (
            f"python -m sglang.launch_server --model-path {models['qwen36']} --api-key {KEY}")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.profile.extra_args == REFERENCE
        assert any("Secret not stored" in (n.title or "") for n in app._notifications)
        await pilot.press("f5")
        await pilot.pause()
        command = app.screen.query_one("#review-command")
        assert KEY not in command.text  # type: ignore[attr-defined]
