"""Keys as terminals really send them: one key at a time, ESC+digit as alt+digit, and where `?`
is typed rather than opening the keys panel."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from textual import events
from textual.keys import _character_to_key
from textual.widgets import Input, TextArea

if TYPE_CHECKING:
    from textual.app import App

#: What a Mac keyboard types for Option+1 ... Option+9 when Option is not Meta (Terminal.app and
#: iTerm2 by default). Textual also turns ESC+digit into these (WezTerm on macOS sends ESC+digit
#: for Option+digit), which is why `M-1` from tmux or xterm used to end up as `¡` in a field.
OPTION_DIGITS = "¡™£¢∞§¶•ª"


def option_key(number: int) -> str:
    """The key name Textual gives the Option+`number` character (`inverted_exclamation_mark`)."""
    char = OPTION_DIGITS[number - 1]
    return char if char.isalnum() else _character_to_key(char)


class _KeyName(str):
    """A key name in Textual's sequence table (it reads `.value`, as of its `Keys` enum)."""

    @property
    def value(self) -> str:
        return str(self)


def install_meta_digits() -> None:
    """Make the terminal parser read ESC+digit as alt+digit, as xterm, tmux (`M-1`), VS Code and
    most Linux terminals mean it (Textual reads it as a macOS Option character). Idempotent."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    table: Any = ANSI_SEQUENCES_KEYS
    for digit in "0123456789":
        table[f"\x1b{digit}"] = (_KeyName(f"alt+{digit}"),)


def types_question_mark(widget: object) -> bool:
    """`?` is a character here, not the keys panel: free text (Env vars, Extra args, the import
    box) that is being edited, i.e. it holds text and nothing is selected. A field entered with
    its text selected, an empty one, a number field, a list: `?` opens the keys panel."""
    if isinstance(widget, TextArea):
        return not widget.read_only and bool(widget.text) and widget.selection.is_empty
    if isinstance(widget, Input):
        return (
            bool(getattr(widget, "free_text", False))
            and bool(widget.value)
            and widget.selection.is_empty
        )
    return False


#: Keys an `OrderedInput` edits with in the order typed (never a focus change).
EDITING_KEYS = frozenset(
    {"backspace", "delete", "left", "right", "home", "end", "ctrl+a", "ctrl+e", "ctrl+d",
     "ctrl+k", "ctrl+u", "ctrl+w", "shift+left", "shift+right", "shift+home", "shift+end",
     "ctrl+left", "ctrl+right"}
)


class KeyGate:
    """Hands the app one key at a time: the next key is posted only once everything the previous
    one set off has run (its handler, the bindings it bubbles to, the focus change and the
    messages they posted), so a key never lands on the widget that had focus before.

    Textual forwards a key to the focused widget's own queue and takes the next key at once; a
    key whose binding moves focus (enter on a Select, ctrl+g) moves it only later, after the keys
    queued behind it went to the old widget. Waiting is bounded: a screen that never goes quiet
    (a streaming log) lets the next key through after `MAX_HOPS` turns of the event loop, and a
    screen that asks keys to wait (`keys_wait`, a list still loading) after `MAX_WAIT_S`.

    Typing does not wait for typing: a printable key for a focused text box, or an editing key
    for an input that runs its own editing keys in order (`OrderedInput`), never moves focus, so
    it follows the typing before it at once (a 40-key burst into Extra args stays one quick run
    instead of one repaint per key). Any other key waits until that typing has settled too.
    """

    MAX_HOPS = 64
    MAX_WAIT_S = 1.0

    def __init__(self, app: App[Any], post: Any) -> None:
        self.app = app
        self._post = post  # the app's own post_message (not the gated one)
        self.backlog: deque[events.Key] = deque()
        self.busy = False  # a key that may move focus is in flight: every key waits
        self.typing = False  # typed keys are in flight: only more typing goes on
        self._settling = False
        self._since = 0.0

    def offer(self, key: events.Key) -> bool:
        """Post `key` now, or after the keys before it have settled."""
        self.backlog.append(key)
        self._drain()
        return True

    def _drain(self) -> None:
        while self.backlog and not self.busy:
            key = self.backlog[0]
            if self._typing(key):
                self.typing = True
            elif self.typing:
                break  # after the typing before it has settled
            else:
                self.busy = True
            self.backlog.popleft()
            self._post(key)
            self._watch()
        if self.backlog:
            self._watch()

    def _watch(self) -> None:
        """Start the settle loop (one at a time)."""
        if not self._settling:
            self._settling = True
            self._since = time.monotonic()
            self.app.call_later(self._settle, 0)

    def _typing(self, key: events.Key) -> bool:
        """Text typed into the focused text box: it cannot move focus, no need to wait."""
        focused = self.app.focused
        if key.is_printable:
            return isinstance(focused, (Input, TextArea))
        # an `OrderedInput` (screens.forms, which imports this module) says so itself
        return bool(getattr(focused, "ordered_editing", False)) and key.key in EDITING_KEYS

    async def _settle(self, hops: int) -> None:
        await asyncio.sleep(0)  # let the widgets' tasks run
        if self._quiet() or hops >= self.MAX_HOPS:
            if self._screen_waits() and time.monotonic() - self._since < self.MAX_WAIT_S:
                self.app.set_timer(0.01, lambda: self.app.call_later(self._settle, hops))
                return
            self.busy = self.typing = self._settling = False
            self._drain()
            return
        self.app.call_later(self._settle, hops + 1)

    def _screen_waits(self) -> bool:
        try:
            return bool(getattr(self.app.screen, "keys_wait", False))
        except Exception:  # no screen yet / any more
            return False

    def _quiet(self) -> bool:
        """No message waiting or being handled anywhere on the current screen (the app's own
        queue: nothing behind this check)."""
        if self.app._message_queue.qsize():
            return False
        try:
            screen = self.app.screen
        except Exception:
            return True
        for node in (screen, *screen.walk_children()):
            queue = node._message_queue
            if getattr(queue, "_unfinished_tasks", queue.qsize()) or node._pending_message:
                return False
        return True
