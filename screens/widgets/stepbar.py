"""The step bar: where you are in the wizard, the profile name and SGLang's verdict."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from screens.steps import STEPS
from wizard.rules.report import Report
from wizard.verdict import verdict_of

#: Style of each verdict kind (`wizard.verdict.Verdict.kind`).
VERDICT_STYLE = {
    "refuses": "bold $text-error",
    "fails": "bold $text-error",
    "warnings": "bold $text-warning",
    "adjusted": "bold $text-success",
    "starts": "bold $text-success",
}


def verdict_content(report: Report | None) -> Content:
    """`✗ refuses` / `✗ fails at run time` / `! starts, 2 warnings` / `✓ starts, adjusted` / `✓ starts`."""
    if report is None:
        return Content.styled("? not checked", "$text-warning")
    verdict = verdict_of(report)
    return Content.styled(f"{verdict.symbol} {verdict.headline}", VERDICT_STYLE[verdict.kind])


class StepBar(Horizontal):
    """`F1 Start  F2 Model ...` (current step highlighted, each clickable), then name and verdict."""

    DEFAULT_CSS = """
    StepBar { height: 1; background: $panel; color: $text-muted; }
    StepBar > .steps { width: auto; }
    StepBar > #steps-short { display: none; }
    StepBar > #status { width: 1fr; height: 1; text-align: right; text-wrap: nowrap; text-overflow: ellipsis; padding-right: 1; }
    """

    def __init__(self, current: str, *, id: str | None = None, extra: str | None = None) -> None:
        super().__init__(id=id)
        self.current = current
        self.extra = extra  # a screen beyond the steps (`Launch`), shown highlighted after them
        self._status: Content | None = None

    def compose(self) -> ComposeResult:
        """Steps on the left, status on the right."""
        for short in (False, True):
            parts: list[Content] = []
            for number, (step, title) in enumerate(STEPS.items(), start=1):
                # Narrow terminals name only the current step, so the verdict keeps its room.
                label = f" F{number} " if short and step != self.current else f" F{number} {title} "
                if step == self.current:
                    parts.append(Content.styled(label, "bold reverse"))
                else:
                    parts.append(
                        Content.from_markup(f"[@click=app.goto('{step}')]$label[/]", label=label)
                    )
            if self.extra:
                parts.append(Content.styled(f" {self.extra} ", "bold reverse"))
            yield Static(
                Content("").join(parts), id="steps-short" if short else "steps", classes="steps"
            )
        yield Static(id="status")

    def show(
        self,
        name: str | None,
        version: str,
        report: Report | None,
        dirty: bool,
        *,
        checking: bool = False,
    ) -> None:
        """Repaint the status for a profile name, its SGLang version and its report."""
        verdict = (
            Content.styled("… checking", "$text-muted") if checking else verdict_content(report)
        )
        title = f"{name or 'unsaved'}{'*' if dirty else ''} · {version} "
        # The verdict comes first in the box, so a narrow terminal cuts the name, never the verdict.
        status = Content.assemble(verdict, "  ", (title, "$text-muted"))
        self._show(status)

    def show_loading(self, name: str | None) -> None:
        """The first profile is being loaded and checked."""
        self._show(
            Content.assemble(("… loading", "$text-muted"), "  ", (f"{name or 'profile'} ", "$text-muted"))
        )

    def _show(self, status: Content) -> None:
        if status != self._status:
            self._status = status
            self.query_one("#status", Static).update(status, layout=False)  # fixed 1-line box
