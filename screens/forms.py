"""Form inputs bound to dotted profile paths: text <-> typed value (empty = let SGLang choose)."""

from __future__ import annotations

import shlex
from typing import Any, Literal

from textual import events
from textual.widgets import Input

from screens.keys import OPTION_DIGITS, types_question_mark

Kind = Literal["int", "float", "str", "env", "args", "int_list"]

#: Dotted profile path -> the label the screens show for it (messages name fields by label).
LABELS: dict[str, str] = {}


def label_for(path: str) -> str:
    """The on-screen label of a profile field (its dotted path when no screen shows it)."""
    return LABELS.get(path, path)


class OrderedInput(Input):
    """An Input whose editing keys keep the order they were typed in (every input of the app)."""

    free_text = False
    """`?` may be part of the text (typed while editing it; otherwise it opens the keys panel)."""

    ordered_editing = True
    """Its editing keys act in the order typed (`screens.keys.KeyGate` lets them through)."""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        """Printable keys are text, except `?` outside free text being edited (the keys panel)
        and a macOS Option+digit character (a fix on the Parameters step)."""
        if character == "?" and not types_question_mark(self):
            return False
        if character is not None and character in OPTION_DIGITS:
            return False
        return super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        """The input's own editing keys (backspace, delete, arrows, home, end, ...) act here, in
        the order typed. Textual runs a widget's key bindings only once the key has bubbled
        back up to the app, behind the characters typed after it: `<BS>16` sent at machine
        speed (tmux, a paste, a macro) would give `1`, the backspace eating the `6`. The
        bindings come from Input itself (the private map Textual keeps per widget)."""
        for key in event.aliases:
            bindings = self._bindings.key_to_bindings.get(key)
            if bindings and not bindings[0].priority:
                # An action that declines (copy with nothing selected) leaves the key to the
                # bindings of the screen and the app, as before.
                if await self.app.run_action(bindings[0].action, self):
                    event.stop()
                    event.prevent_default()  # Input's own handler does not see it either
                return


class FieldInput(OrderedInput):
    """An input for one profile field; `parse` turns its text into the profile value."""

    def __init__(
        self,
        path: str,
        kind: Kind,
        *,
        placeholder: str = "",
        id: str | None = None,
        tooltip: str | None = None,
        label: str | None = None,
    ) -> None:
        super().__init__(placeholder=placeholder, id=id or path.replace(".", "-"), compact=True)
        self.path = path
        self.kind: Kind = kind
        self.label = label or label_for(path)
        self.pending = 0  # edits sent to the app and not answered yet (see WizardScreen)
        # Free text where `?` may belong (typed there while editing; `screens.keys`).
        self.free_text = kind in ("env", "args")
        if tooltip:
            self.tooltip = tooltip

    def parse(self) -> Any:
        """The typed value for the profile; raises ValueError with a user-facing message."""
        return parse_text(self.value, self.kind)

    def show(self, value: Any) -> None:
        """Display a profile value without posting `Changed` (so it is not re-applied)."""
        text = format_value(value, self.kind)
        if text != self.value:
            self._showing = True
            try:
                with self.prevent(Input.Changed):
                    self.value = text
            finally:
                self._showing = False

    _showing = False

    def watch_value(self, _value: str) -> None:
        """Typed text: the screen holds its repaints until the app has answered the edit, so
        the keystroke, the verdict and the findings reach the terminal in one frame."""
        if not self._showing and self.is_attached:
            hold = getattr(self.screen, "hold_updates", None)
            if callable(hold):
                hold()


def parse_text(text: str, kind: Kind) -> Any:
    """Parse input text; empty text is `None` (let SGLang choose) or an empty collection."""
    text = text.strip()
    if kind == "env":
        env: dict[str, str] = {}
        for item in shlex.split(text):
            name, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"{item!r}: write NAME=value")
            env[name] = value
        return env
    if kind == "args":
        try:
            return shlex.split(text)
        except ValueError as exc:
            raise ValueError(f"cannot split the arguments: {exc}") from None
    if not text:
        return None
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError(
                f"{text!r} is not a whole number (leave it empty to let SGLang choose)"
            ) from None
    if kind == "float":
        try:
            return float(text)
        except ValueError:
            raise ValueError(
                f"{text!r} is not a number (leave it empty to let SGLang choose)"
            ) from None
    if kind == "int_list":
        try:
            return [int(x) for x in text.replace(",", " ").split()]
        except ValueError:
            raise ValueError(f"{text!r}: write whole numbers separated by spaces") from None
    return text


def format_value(value: Any, kind: Kind) -> str:
    """The input text for a profile value."""
    if value is None:
        return ""
    if kind == "env":
        return " ".join(f"{k}={shlex.quote(v)}" for k, v in dict(value).items())
    if kind == "args":
        return shlex.join(list(value))
    if kind == "int_list":
        return " ".join(str(v) for v in value)
    return str(value)
