"""What every wizard step shares: the step bar, the footer, repaint on `ProfileChanged`."""

from __future__ import annotations

from collections.abc import Collection
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.events import Key
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input

from screens.forms import FieldInput
from screens.messages import EditRequested, InputRejected, ProfileChanged
from screens.state import WizardState, state_of
from screens.widgets.stepbar import StepBar
from wizard.rules.report import Report

if TYPE_CHECKING:
    from wizard.profile_schema import Profile


class WizardScreen(Screen[None]):
    """A wizard step: subclasses compose their body and implement `sync`."""

    STEP: ClassVar[str] = ""
    typed: tuple[str, ...] = ()
    """Fields being typed in right now (their inputs keep the user's text)."""

    @property
    def wizard(self) -> WizardState:
        """The app's state, typed (`screens.state`)."""
        return state_of(self.app)

    def step_bar(self) -> StepBar:
        """The step bar for this step."""
        return StepBar(self.STEP, id="stepbar")

    def footer(self) -> Footer:
        """The footer with this step's bindings."""
        return Footer()

    def on_mount(self) -> None:
        """Repaint when the theme changes (tables and code pick their colours per theme)."""
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        if self.is_current:
            self._repaint_current()

    def _repaint_current(self) -> None:
        """Repaint from the app's profile; while the first one loads, show that instead."""
        app = self.wizard
        if app.loading:
            self.show_loading()
        else:
            self._repaint(app.profile, app.report)

    def show_loading(self) -> None:
        """The first profile is still loading (the start-up thread): name it in the step bar."""
        app = self.wizard
        self.query_one(StepBar).show_loading(app.profile_name)

    def on_screen_resume(self) -> None:
        """Repaint from the app's current profile whenever the step is shown (entering a step
        focuses its first useful widget: `WizardApp.action_goto`)."""
        self._repaint_current()
        if self.focused is None:
            self.focus_first()
        focused = self.focused
        if self._select_on_entry and isinstance(focused, FieldInput) and not focused.pending:
            focused.select_all()  # typing replaces the value, as tabbing into a field does
        self._select_on_entry = False

    _select_on_entry = False

    def focus_first(self) -> None:
        """Focus the first visible, focusable widget matching `AUTO_FOCUS`."""
        for widget in self.query(self.AUTO_FOCUS or "*"):
            if widget.focusable and widget.display and widget.visible:
                self.set_focus(widget)
                if isinstance(widget, FieldInput):
                    widget.select_all()  # typing replaces the value, as tabbing in does
                self._select_on_entry = True  # again after the entry repaint, if it comes later
                self.call_after_refresh(self._entry_done)
                return

    def _entry_done(self) -> None:
        self._select_on_entry = False

    def on_key(self, event: Key) -> None:
        """A key that arrives while nothing has focus goes to the first useful widget."""
        if self.focused is not None or not event.is_printable or event.character is None:
            return
        self.focus_first()
        target = self.focused
        if isinstance(target, Input):
            event.stop()
            target.insert_text_at_cursor(event.character)

    def on_screen_suspend(self) -> None:
        """Answers to this step's edits go to the next step: nothing stays pending here."""
        self.release_updates()
        for field in self.query(FieldInput):
            field.pending = 0

    #: Longest a keystroke's frame waits for the app's answer (a lost answer costs no more).
    HOLD_SECONDS: ClassVar[float] = 0.25
    _hold: AbstractContextManager[None] | None = None
    _hold_timer: Timer | None = None

    def hold_updates(self) -> None:
        """Hold the screen's repaints (a field was typed in) until the repaint with the app's
        answer (`ProfileChanged`): otherwise the typed character gets a frame of its own and the
        verdict the next one, a frame period (1/60 s) later."""
        if self._hold is not None or not self.is_current:
            return
        self._hold = self.app.batch_update()
        self._hold.__enter__()
        self._hold_timer = self.set_timer(self.HOLD_SECONDS, self.release_updates)

    def release_updates(self) -> None:
        """Let the held repaints through (one frame)."""
        hold, self._hold = self._hold, None
        if self._hold_timer is not None:
            self._hold_timer.stop()
            self._hold_timer = None
        if hold is not None:
            hold.__exit__(None, None, None)

    @on(ProfileChanged)
    def _profile_changed(self, message: ProfileChanged) -> None:
        for field in self.query(FieldInput):
            if field.pending and field.path in (*message.typed, *message.answered):
                field.pending -= 1
        try:
            if self.is_current:
                self._repaint(message.profile, message.report, message.typed)
        finally:
            self._release_when_posted()

    def _release_when_posted(self) -> None:
        """Release the hold once every widget of the step has handed its repaint to the screen:
        a widget posts its update when it next goes idle, and `call_next` runs right after."""
        if self._hold is None:
            return
        widgets = list(self.walk_children())
        left = len(widgets)

        def one_done() -> None:
            nonlocal left
            left -= 1
            if left == 0:
                self.call_next(self.release_updates)

        for widget in widgets:
            widget.call_next(one_done)

    def _repaint(
        self, profile: Profile, report: Report | None, typed: tuple[str, ...] = ()
    ) -> None:
        self.typed = typed
        with self.app.batch_update():  # one screen update for the whole repaint
            self._repaint_now(profile, report, typed)

    def _repaint_now(
        self, profile: Profile, report: Report | None, typed: tuple[str, ...]
    ) -> None:
        app = self.wizard
        self.query_one(StepBar).show(
            app.profile_name, profile.sglang_version, report, app.dirty, checking=app.checking
        )
        self.sync(profile, report)

    def sync(self, profile: Profile, report: Report | None) -> None:
        """Show `profile` and `report` (subclasses)."""

    @on(Input.Changed)
    def _field_typed(self, event: Input.Changed) -> None:
        """Every keystroke in a profile field becomes an edit request (or a refused input)."""
        field = event.input
        if not isinstance(field, FieldInput):
            return
        event.stop()
        field.pending += 1  # until the app answers, repaints keep this text (keys are never lost)
        try:
            value = field.parse()
        except ValueError as exc:
            self.post_message(InputRejected((field.path,), {field.path: str(exc)}))
            return
        self.post_message(EditRequested({field.path: value}, {field.path: field.value}))

    @on(Input.Submitted)
    @on(Input.Blurred)
    def _field_left(self, event: Input.Submitted | Input.Blurred) -> None:
        """Leaving the env or extra-args field (or enter in it) hands it over as final: a literal
        secret typed there (HF_TOKEN=..., --api-key ...) becomes a reference to a variable
        before anything keeps it."""
        field = event.input
        if not isinstance(field, FieldInput) or field.kind not in ("env", "args"):
            return
        try:
            value = field.parse()
        except ValueError:
            return
        if value and (field.kind == "args" or any(value.values())):
            field.pending += 1
            self.post_message(EditRequested({field.path: value}, {field.path: field.value}, True))

    def show_fields(
        self,
        profile: Profile,
        offending: Collection[str] | None = None,
        adjusted: Collection[str] = (),
    ) -> None:
        """Put profile values into the form's inputs and mark the `offending` ones (default:
        refused) and the `adjusted` ones (`-offending` / `-adjusted`).

        Each input is restyled at most once per repaint (a restyle is the costly part of a class
        flip): a screen that marks the fields a finding names passes them here.
        """
        problems = self.wizard.input_problems
        marked = problems if offending is None else offending
        for field in self.query(FieldInput):
            if field.path not in problems and field.path not in self.typed and not field.pending:
                field.show(profile.get(field.path))
            before = set(field.classes)
            field.set_class(field.path in marked, "-offending", update=False)
            field.set_class(field.path in adjusted, "-adjusted", update=False)
            if field.classes != before:
                field.update_node_styles()
