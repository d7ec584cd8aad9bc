"""The step bar: where you are in the wizard, the profile name and SGLang's verdict."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from wizard.rules.report import Report


class StepBar(Horizontal):
    """`F1 Start  F2 Model ...` (current step highlighted, each clickable), then name and verdict."""

    DEFAULT_CSS = """
    StepBar { height: 1; background: $panel; color: $text-muted; }
    StepBar > #steps { width: auto; }
    StepBar > #status { width: 1fr; height: 1; text-align: right; text-wrap: nowrap; text-overflow: ellipsis; padding-right: 1; }
    """

    def __init__(self, current: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.current = current
        self._status: Content | None = None

    def compose(self) -> ComposeResult:
        """Steps on the left, status on the right."""
        from screens.app import STEPS

        parts: list[Content] = []
        for number, (step, title) in enumerate(STEPS.items(), start=1):
            label = f" F{number} {title} "
            if step == self.current:
                parts.append(Content.styled(label, "bold reverse"))
            else:
                parts.append(
                    Content.from_markup(f"[@click=app.goto('{step}')]$label[/]", label=label)
                )
        yield Static(Content("").join(parts), id="steps")
        yield Static(id="status")

    def show(self, name: str | None, version: str, report: Report | None, dirty: bool) -> None:
        """Repaint the status for a profile name, its SGLang version and its report."""
        if report is None:
            verdict = Content.styled("? not checked", "$warning")
        elif report.verdict == "ok":
            verdict = Content.styled("✓ starts", "bold $success")
        else:
            verdict = Content.styled("✗ refused", "bold $error")
        title = f"{name or 'unsaved'}{'*' if dirty else ''} · {version} "
        status = Content.assemble(title, verdict)
        if status != self._status:
            self._status = status
            self.query_one("#status", Static).update(status, layout=False)  # fixed 1-line box
