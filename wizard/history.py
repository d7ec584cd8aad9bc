"""Undo history of a profile being edited: typing and fixes, one step per run of typing.

Pure: it only keeps earlier values. Typing in one field is one step however many keys it took
(consecutive edits of the same field merge); a fix, a choice from a list in another field or
typing in another field starts a new step. `ctrl+z` in the wizard walks back through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

#: Steps kept; older ones are dropped (a long session never grows without bound).
LIMIT = 200


@dataclass(frozen=True)
class Step(Generic[T]):
    """The value before a change, and what the change was (`typing in Steps`, `fix ...`)."""

    before: T
    what: str
    run: str | None  # edits with the same run merge into this step; None never merges


class History(Generic[T]):
    """Earlier values, newest last."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.steps: list[Step[T]] = []

    def record(self, before: T, what: str, run: str | None = None) -> None:
        """Remember `before` as the value to go back to, unless this change continues the
        newest step's run (the same field typed in again)."""
        if run is not None and self.steps and self.steps[-1].run == run:
            return
        self.steps.append(Step(before, what, run))
        del self.steps[: -self.limit]

    def undo(self) -> Step[T] | None:
        """Take the newest step back (None when there is nothing to undo)."""
        return self.steps.pop() if self.steps else None

    def clear(self) -> None:
        """Forget everything (another profile was opened)."""
        self.steps.clear()

    def __len__(self) -> int:
        return len(self.steps)
