"""Modal dialogs: save as TOML (name validated, overwrite confirmed), import a command, export YAML."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static, TextArea
from textual.widgets.text_area import Selection

from screens import core
from screens.forms import OrderedInput
from screens.keys import types_question_mark
from screens.messages import ProfileReplaced, ProfileSaved, StepRequested
from wizard.profile import (
    atomic_write_text,
    exports_dir,
    profile_path,
    profiles_dir,
    save_profile,
    validate_profile_name,
)
from wizard.profile_schema import Profile

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 90; max-width: 100%; height: auto; max-height: 100%;
    border: thick $primary; background: $surface; padding: 0 1;
}}
{name} .buttons {{ height: auto; align-horizontal: right; margin-top: 1; }}
{name} .buttons Button {{ margin-left: 1; }}
{name} .error {{ color: $text-error; height: auto; }}
"""


class ConfirmDialog(ModalScreen[bool]):
    """Yes / no question."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmDialog")
    AUTO_FOCUS = "#no"  # enter never confirms a replacement by accident
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        """Question and buttons."""
        with Vertical():
            yield Static(self.question)
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", id="yes", variant="warning")
                yield Button("No (n)", id="no", variant="primary")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        """Close with the answer."""
        self.dismiss(answer)


class UnsavedDialog(ModalScreen[str]):
    """The profile has unsaved changes: save, discard or cancel (answers "save" / "discard" / "cancel")."""

    DEFAULT_CSS = DIALOG_CSS.format(name="UnsavedDialog")
    AUTO_FOCUS = "#save"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "answer('save')", "Save"),
        Binding("d", "answer('discard')", "Discard"),
        Binding("escape,c", "answer('cancel')", "Cancel"),
    ]

    def __init__(self, name: str | None, doing: str) -> None:
        super().__init__()
        self.question = (
            f"The profile {name or '(not saved yet)'} has unsaved changes.\n"
            f"Save them before you {doing}?"
        )

    def compose(self) -> ComposeResult:
        """Question and the three answers."""
        with Vertical():
            yield Static(self.question)
            with Horizontal(classes="buttons"):
                yield Button("Save… (s)", id="save", variant="primary")
                yield Button("Discard (d)", id="discard", variant="error")
                yield Button("Cancel (esc)", id="cancel")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or "cancel")

    def action_answer(self, answer: str) -> None:
        """Close with the answer."""
        self.dismiss(answer)


class SaveProfileDialog(ModalScreen[Path | None]):
    """Ask for a profile name, confirm overwriting, save atomically."""

    DEFAULT_CSS = DIALOG_CSS.format(name="SaveProfileDialog")
    AUTO_FOCUS = "#save-name"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Save", priority=True),
    ]

    def __init__(self, profile: Profile, name: str | None) -> None:
        super().__init__()
        self.profile = profile
        self.initial = name or ""

    def compose(self) -> ComposeResult:
        """Name input."""
        with Vertical():
            yield Label(f"Save profile as TOML in {profiles_dir()}")
            yield OrderedInput(self.initial, placeholder="profile name, e.g. qwen36-a6000", id="save-name")
            yield Static("", id="save-error", classes="error")
            with Horizontal(classes="buttons"):
                yield Button("Save (enter)", id="save", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        """Focus the name."""
        self.query_one("#save-name", Input).focus()

    @on(Input.Changed, "#save-name")
    def _validate(self, event: Input.Changed) -> None:
        self.query_one("#save-error", Static).update(self._problem(event.value) or "")

    @staticmethod
    def _problem(name: str) -> str | None:
        if not name.strip():
            return "Enter a name."
        try:
            validate_profile_name(name.strip())
        except ValueError as exc:
            return str(exc)
        return None

    @on(Input.Submitted, "#save-name")
    @on(Button.Pressed, "#save")
    def action_submit(self) -> None:
        """Save under the typed name (replacing a file asks first)."""
        name = self.query_one("#save-name", Input).value.strip()
        problem = self._problem(name)
        if problem:
            self.query_one("#save-error", Static).update(problem)
            return
        path = profile_path(name)
        if path.exists():
            self.app.push_screen(
                ConfirmDialog(f"{path} exists. Replace it?"),
                lambda yes: self._write(path, overwrite=True) if yes else None,
            )
        else:
            self._write(path, overwrite=False)

    def _write(self, path: Path, *, overwrite: bool) -> None:
        try:
            save_profile(self.profile, path, overwrite=overwrite)
        except (OSError, FileExistsError) as exc:
            self.query_one("#save-error", Static).update(f"Not saved: {exc}")
            return
        self.app.post_message(ProfileSaved(path))
        self.app.notify(str(path), title="Profile saved")
        self.dismiss(path)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Close without saving."""
        self.dismiss(None)


class TextDialog(ModalScreen[None]):
    """Text to copy by hand: selectable, with where else it went (the clipboard fallback)."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="TextDialog")
        + """
    TextDialog TextArea { height: auto; max-height: 14; }
    """
    )
    AUTO_FOCUS = "TextArea"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, title: str, note: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.note = note
        self.text = text

    def compose(self) -> ComposeResult:
        """Title, where the text went, the text itself (read-only, selected)."""
        with Vertical():
            yield Label(self.title_text)
            yield Static(self.note, classes="hint")
            yield TextArea(self.text, read_only=True, soft_wrap=True, id="copy-text")
            with Horizontal(classes="buttons"):
                yield Button("Close (esc)", id="close", variant="primary")

    def on_mount(self) -> None:
        """Select everything, ready for the terminal's own copy."""
        self.query_one(TextArea).select_all()

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)


class ImportBox(TextArea):
    """The paste box of the import dialog: an editable, wrapped text area where ctrl+a selects
    everything (as in a browser's text box; home goes to the line start) and `?` is typed once
    there is text to edit (`screens.keys.types_question_mark`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+a", "select_all", "Select all", show=False),
    ]

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        """`?` opens the keys panel while the box is empty or its text selected."""
        if character == "?" and not types_question_mark(self):
            return False
        return super().check_consume_key(key, character)

    def select_text(self, needle: str) -> bool:
        """Select the first whole-word occurrence of `needle` (a refused flag), so typing
        replaces it where it stands; False when it is not in the text."""
        import re

        match = re.search(rf"(?<![\w-]){re.escape(needle)}(?![\w-])", self.text)
        if match is None:
            return False
        def location(index: int) -> tuple[int, int]:
            before = self.text[:index]
            return before.count("\n"), index - (before.rfind("\n") + 1)

        self.selection = Selection(location(match.start()), location(match.end()))
        self.scroll_cursor_visible()
        return True


class ImportCommandDialog(ModalScreen[None]):
    """Paste a launch command; it becomes the current profile."""

    DEFAULT_CSS = (
        DIALOG_CSS.format(name="ImportCommandDialog")
        + """
    ImportCommandDialog TextArea { height: 10; }
    """
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        # ctrl+s commits a dialog everywhere (save, import, export); enter is a newline here.
        Binding("ctrl+s", "run_import", "Import", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, version: str | None = None) -> None:
        super().__init__()
        self.version = version  # None: the default SGLang version of a new profile

    def compose(self) -> ComposeResult:
        """Paste box."""
        with Vertical():
            yield Label(
                "Paste a `python -m sglang.launch_server ...` command (backslash lines are fine)"
            )
            yield ImportBox(id="import-text", soft_wrap=True, show_line_numbers=False)
            yield Static("", id="import-error", classes="error")
            with Horizontal(classes="buttons"):
                yield Button("Import (ctrl+s)", id="import", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        """Focus the paste box."""
        self.query_one(ImportBox).focus()

    @on(Button.Pressed, "#import")
    def action_run_import(self) -> None:
        """Parse the pasted command and make it the current profile."""
        text = self.query_one(ImportBox).text
        error = self.query_one("#import-error", Static)
        if not text.strip():
            error.update("Paste a command first.")
            return
        try:
            result = core.parse_command(text, self.version)
        except core.command_error_type() as exc:
            flag = getattr(exc, "flag", None)
            message = getattr(exc, "message", str(exc))
            suggestion = getattr(exc, "suggestion", None)
            # The refused flag is selected where it stands: typing replaces it, in place.
            box = self.query_one(ImportBox)
            selected = bool(flag) and box.select_text(str(flag))
            error.update(
                (f"{flag}: " if flag else "")
                + str(message)
                + (f"\n{suggestion}" if suggestion and suggestion not in str(message) else "")
                + ("\n(selected in the box: type to replace it, ctrl+s to import again)"
                   if selected else "")
            )
            box.focus()
            return
        except Exception as exc:  # the parser must never take the UI down
            error.update(f"Could not import: {type(exc).__name__}: {exc}")
            return
        app = self.app
        app.post_message(ProfileReplaced(result.profile))
        for note in getattr(result, "notes", ()) or ():
            app.notify(str(note), title="Import note", timeout=8)
        self.dismiss(None)
        app.post_message(StepRequested("parameters"))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Close without importing."""
        self.dismiss(None)


class ExportYamlDialog(ModalScreen[Path | None]):
    """Write SGLang `--config` YAML to a file (atomic; overwrite confirmed)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ExportYamlDialog")
    AUTO_FOCUS = "#yaml-path"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Export", priority=True),
    ]

    def __init__(self, profile: Profile, name: str | None) -> None:
        super().__init__()
        self.profile = profile
        self.folder = exports_dir()
        self.default = str(self.folder / f"{name or 'sglang-config'}.yaml")

    def compose(self) -> ComposeResult:
        """File name input."""
        with Vertical():
            yield Label(f"Export SGLang --config YAML to (a bare name goes to {self.folder})")
            yield OrderedInput(self.default, id="yaml-path")
            yield Static("", id="yaml-error", classes="error")
            with Horizontal(classes="buttons"):
                yield Button("Export (enter)", id="export", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    @on(Input.Submitted, "#yaml-path")
    @on(Button.Pressed, "#export")
    def action_submit(self) -> None:
        """Write the YAML (replacing a file asks first)."""
        error = self.query_one("#yaml-error", Static)
        raw = self.query_one("#yaml-path", Input).value.strip()
        if not raw:
            error.update("Enter a file name.")
            return
        try:
            text = core.render_yaml(self.profile)
        except Exception as exc:
            error.update(f"Could not render: {type(exc).__name__}: {exc}")
            return
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = self.folder / path
        if path.exists():
            self.app.push_screen(
                ConfirmDialog(f"{path} exists. Replace it?"),
                lambda yes: self._write(path, text) if yes else None,
            )
        else:
            self._write(path, text)

    def _write(self, path: Path, text: str) -> None:
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            self.query_one("#yaml-error", Static).update(f"Not written: {exc}")
            return
        self.app.notify(str(path), title="YAML written")
        self.dismiss(path)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Close without writing."""
        self.dismiss(None)
