"""Start-up example, import, review (copy, YAML export), palette, theme, and errors kept off screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.command import CommandList
from textual.widgets import Static, TextArea

from screens.app import EXAMPLE_PROFILE, WizardApp
from screens.dialogs import ExportYamlDialog, ImportCommandDialog, TextDialog
from screens.messages import EditRequested
from screens.widgets.effective import EffectiveTable
from wizard.profile import load_profile
from wizard.profile_schema import Profile
from wizard.sglang.render import render_shell, render_yaml

INCIDENT_1_TRY_1 = """SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server \\
    --model-path {model} \\
    --tensor-parallel-size 2 --host 0.0.0.0 --port 30000 \\
    --speculative-algorithm NEXTN --speculative-num-draft-tokens 1
"""


async def test_opens_with_the_ready_example_when_nothing_is_saved(profiles_dir: Path) -> None:
    from wizard.profile import builtin_profiles_dir

    app = WizardApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.profile_name == EXAMPLE_PROFILE
        assert app.profile == load_profile(builtin_profiles_dir() / f"{EXAMPLE_PROFILE}.toml")
        assert app.current_mode == "start"
        # The first check runs in a thread while the first screen is already up.
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not app.checking and app.report is not None
        preview = str(app.screen.query_one("#preview", Static).visual)
        # With the example's shipped model config the memory plan is checked: tight on 48 GB
        # (the incident's set-up started, with a warning that matters).
        assert EXAMPLE_PROFILE in preview and "SGLang starts this" in preview
        status = str(app.screen.query_one("#status", Static).visual)
        assert status.startswith("! starts, 1 warning")


async def test_an_edit_during_the_first_check_wins(
    profiles_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread's report of the first profile never replaces the check of a newer edit."""
    import threading

    from screens import core

    release = threading.Event()
    real = core.check_profile

    def slow_in_thread(profile: Profile, facts: object = None) -> object:
        if threading.current_thread() is not threading.main_thread():
            assert release.wait(10)
        return real(profile, facts=facts)

    monkeypatch.setattr(core, "check_profile", slow_in_thread)
    app = WizardApp()
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(EditRequested({"parallel.tp": 4}, {"parallel.tp": "4"}))
        await pilot.pause()
        assert app.report is not None and app.report.typed["tp_size"] == 4
        release.set()  # now the first profile's report arrives, late
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.profile.parallel.tp == 4
        assert app.report is not None and app.report.typed["tp_size"] == 4


async def test_import_a_pasted_command(models: dict[str, Path], ready_dir: Path) -> None:
    app = WizardApp(initial=Profile.model_validate({"model": {"path": "/m"}}), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("i")
        assert isinstance(app.screen, ImportCommandDialog)
        app.screen.query_one(TextArea).text = INCIDENT_1_TRY_1.format(model=models["qwen36"])
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.current_mode == "parameters"
        spec = app.profile.speculative
        assert (spec.algorithm, spec.num_draft_tokens, spec.num_steps) == ("NEXTN", 1, None)
        assert app.profile.parallel.tp == 2
        assert app.profile.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
        assert app.report is not None and app.report.first_error is not None
        assert app.report.first_error.rule == "R-MAMBA-NOBUF-SPEC"


async def test_import_names_a_wrong_flag_and_keeps_the_profile(ready_dir: Path) -> None:
    start = Profile.model_validate({"model": {"path": "/m"}})
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("i")
        app.screen.query_one(
            TextArea
        ).text = "python -m sglang.launch_server --model-path /m --num-speculative-tokens 16"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ImportCommandDialog)
        error = str(app.screen.query_one("#import-error", Static).visual)
        assert "--num-speculative-tokens" in error
        assert "--speculative-num-draft-tokens" in error
        await pilot.press("escape")
        assert app.profile == start


async def test_review_copies_the_command_and_exports_yaml(
    models: dict[str, Path], ready_dir: Path, isolated_dirs: Path
) -> None:
    profile = load_profile(ready_dir / f"{EXAMPLE_PROFILE}.toml").with_edits(
        {"model.path": str(models["qwen36"])}
    )
    app = WizardApp(initial=profile, initial_name="demo", ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5")
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == render_shell(profile)
        # The fallback that always works: the text selectable in a dialog, and a file; the
        # message says where it went and that OSC 52 depends on the terminal.
        assert isinstance(app.screen, TextDialog)
        assert app.screen.query_one(TextArea).text == render_shell(profile)
        exports = isolated_dirs / "xdg_data_home" / "sglang-wizard" / "exports"
        assert (exports / "demo.sh").read_text(encoding="utf-8") == render_shell(profile) + "\n"
        note = str(app.screen.query_one(".hint", Static).visual)
        assert "OSC 52" in note and str(exports / "demo.sh") in note
        await pilot.press("escape")
        await pilot.press("y")
        assert isinstance(app.screen, ExportYamlDialog)
        await pilot.press("enter")
        await pilot.pause()
        # Exports go to the exports dir (named in the dialog), never the working directory.
        assert not (isolated_dirs / "demo.yaml").exists()
        written = exports / "demo.yaml"
        assert written.read_text(encoding="utf-8") == render_yaml(profile)


async def test_command_palette_reaches_the_wizard_actions(ready_dir: Path) -> None:
    app = WizardApp(initial=Profile.model_validate({"model": {"path": "/m"}}), ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for wanted in (
            "Import command",
            "Export SGLang --config YAML",
            "Save profile",
            "Open profile",
            "Screenshot",
        ):
            assert wanted in titles
        await pilot.press("ctrl+p", *"0.5.23")
        results = app.screen.query_one(CommandList)
        for _ in range(200):  # the palette searches its providers in a worker
            if results.option_count:
                break
            await pilot.pause()
        assert "0.5.23" in str(results.get_option_at_index(0).prompt)
        await pilot.press("enter")
        await pilot.pause()
        assert app.profile.sglang_version == "0.5.23"
        assert app.report is not None and app.report.sglang_version == "0.5.23"


async def test_theme_toggle_and_broken_model_stay_on_screen(
    isolated_dirs: Path, ready_dir: Path
) -> None:
    broken = isolated_dirs / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{ not json", encoding="utf-8")
    profile = Profile.model_validate({"model": {"path": str(broken)}, "gpu": {"kind": "H100"}})
    app = WizardApp(initial=profile, ready_dir=ready_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        dark = app.current_theme.dark
        await pilot.press("ctrl+t")
        assert app.current_theme.dark is not dark
        await pilot.press("f2")
        await app.workers.wait_for_complete()
        await pilot.pause()
        card = str(app.screen.query_one("#model-card", Static).visual)
        assert "Cannot read the model" in card and "config.json" in card
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.query_one("#algo-list").option_count > 1  # type: ignore[attr-defined]


class TableHost(App[None]):
    """An app with just the effective-values table (the table tests feed it reports)."""

    def compose(self) -> ComposeResult:
        yield EffectiveTable()


async def test_effective_cell_restyled_when_only_its_style_changes() -> None:
    """A value SGLang chose (cyan) that is then typed as the same value is shown plain: rich's
    Text equality ignores the base style, so the in-place update must compare it too."""
    from types import SimpleNamespace

    from textual.coordinate import Coordinate


    def report(typed: dict[str, object]) -> object:
        effective = {"page_size": 1, "attention_backend": "fa3"}
        return SimpleNamespace(effective=effective, typed=typed, changed=dict)


    app = TableHost()
    async with app.run_test() as pilot:
        table = app.query_one(EffectiveTable)
        table.show(report({}))  # type: ignore[arg-type]
        await pilot.pause()
        # Rows are positions (page_size is the first row), columns field / typed / effective.
        assert table.get_cell_at(Coordinate(0, 2)).style == "cyan"
        table.show(report({"page_size": 1}))  # type: ignore[arg-type]
        await pilot.pause()
        assert str(table.get_cell_at(Coordinate(0, 1))) == "1"
        assert table.get_cell_at(Coordinate(0, 2)).style == ""


async def test_effective_rows_reordered_in_place_and_repainted() -> None:
    """A field SGLang starts to change moves to the top: the cursor stays on its row and what is
    painted is the new order, not a cached row."""
    from types import SimpleNamespace



    effective = {"page_size": 12345, "attention_backend": "fa3"}  # same column widths after

    def report(changed: dict[str, tuple[object, object]]) -> object:
        typed = {name: typed for name, (typed, _) in changed.items()}
        return SimpleNamespace(effective=effective, typed=typed, changed=lambda: changed)


    def painted(table: EffectiveTable) -> list[str]:
        return [table.render_line(y).text for y in range(1, 1 + table.row_count)]

    app = TableHost()
    async with app.run_test() as pilot:
        table = app.query_one(EffectiveTable)
        table.show(report({}))  # type: ignore[arg-type]
        await pilot.pause()
        assert [line.split()[0] for line in painted(table)] == ["page_size", "attention_backend"]
        table.focus()
        table.move_cursor(row=1)
        table.show(report({"attention_backend": ("fa2", "fa3")}))  # type: ignore[arg-type]
        await pilot.pause()
        assert table.cursor_row == 1
        lines = painted(table)
        assert [line.split()[0] for line in lines] == ["attention_backend", "page_size"]
        assert "fa2" in lines[0] and "→ fa3" in lines[0]
        table.show(report({}))  # type: ignore[arg-type]
        await pilot.pause()
        assert table.cursor_row == 1
        assert [line.split()[0] for line in painted(table)] == ["page_size", "attention_backend"]
        assert "fa2" not in " ".join(painted(table))


async def test_effective_rows_stack_when_the_three_columns_do_not_fit() -> None:
    """'SGLang runs' is never cut off: a table narrower than its three columns stacks its rows
    (field, then what SGLang runs) and goes back to columns when it is wide enough again."""
    from types import SimpleNamespace



    effective = {"speculative_num_draft_tokens": 2, "attention_backend": "fa3"}
    changed = {"speculative_num_draft_tokens": (16, 2)}
    report = SimpleNamespace(
        effective=effective, typed={"speculative_num_draft_tokens": 16}, changed=lambda: changed
    )


    app = TableHost()
    async with app.run_test(size=(50, 12)) as pilot:
        table = app.query_one(EffectiveTable)
        table.show(report)  # type: ignore[arg-type]
        await pilot.pause()
        assert table.columns == ("field",)
        lines = [table.render_line(y).text.rstrip() for y in range(1, 3)]
        assert lines == [" speculative_num_draft_tokens", "   16 → 2"]
        await pilot.resize_terminal(100, 12)
        assert table.columns == ("field", "typed", "effective")
        assert "→ 2" in table.render_line(1).text


async def test_a_long_typed_value_is_shortened_before_the_rows_stack() -> None:
    from types import SimpleNamespace

    from screens.widgets.effective import TYPED_MIN

    path = "/models/some-org/a-rather-long-draft-model-name"
    report = SimpleNamespace(
        effective={"speculative_draft_model_path": path, "page_size": 1},
        typed={"speculative_draft_model_path": path},
        changed=dict,
    )


    app = TableHost()
    async with app.run_test(size=(80, 12)) as pilot:
        table = app.query_one(EffectiveTable)
        table.show(report)  # type: ignore[arg-type]
        await pilot.pause()
        assert table.columns == ("field", "typed", "effective")
        assert table.column_width("typed") >= TYPED_MIN
        line = table.render_line(1).text
        assert "…" in line and line.rstrip().endswith("draft-model-name")  # what SGLang runs
        assert sum(table.column_width(c) for c in table.columns) <= table.size.width
