"""Typed errors of the SGLang CLI layer (import, flag lookup, render).

Everything in `wizard.sglang` that can fail on user input raises one of these, never a bare
`ValueError`/`KeyError`: the CLI turns them into exit code 2 with a located message, the screens
show `message` and `suggestion`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SglangArgparseError:
    """What SGLang's own argparse parser would print and do for an argv (exit code 2).

    `message` is argparse's text (`unrecognized arguments: --x 1`, `argument --tp-size: invalid
    int value: 'two'`, `ambiguous option: --cuda-graph-max-bs could match ...`); `line` is the
    full last line SGLang prints to stderr.
    """

    message: str
    prog: str = "sglang serve"
    exit_code: int = 2

    @property
    def line(self) -> str:
        """`sglang serve: error: <message>`, exactly as argparse prints it."""
        return f"{self.prog}: error: {self.message}"


class CommandError(Exception):
    """A launch command (or argv) the wizard cannot turn into a profile.

    `flag` is the offending piece of the command, `suggestion` what to type instead (or None),
    `exit_like_sglang` is True when SGLang's own argparse would refuse it too (exit code 2;
    `sglang_error` then holds SGLang's exact message), False when only the wizard refuses it
    (e.g. a value the profile model cannot hold, or a shell construct that cannot be read).
    """

    def __init__(
        self,
        message: str,
        *,
        flag: str | None = None,
        suggestion: str | None = None,
        exit_like_sglang: bool = False,
        sglang_error: SglangArgparseError | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.flag = flag
        self.suggestion = suggestion
        self.exit_like_sglang = exit_like_sglang
        self.sglang_error = sglang_error

    def __str__(self) -> str:
        text = self.message
        if self.suggestion and self.suggestion not in text:
            text += f" ({self.suggestion})"
        return text


class FlagDataError(Exception):
    """The per-version flag table file is missing or malformed (a packaging problem, not input)."""


class RenderError(Exception):
    """A profile that cannot be written as a launch command for the chosen SGLang version."""

    def __init__(self, message: str, *, field: str | None = None, version: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        self.version = version
