"""The step bar: where you are in the wizard, the profile name and SGLang's verdict."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from wizard.rules.report import Report


class StepBar(Static):
    """`Start > Model > Algorithm > Parameters > Review` with the current step highlighted."""

    DEFAULT_CSS = """
    StepBar { height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, current: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.current = current

    def show(self, name: str | None, version: str, report: Report | None, dirty: bool) -> None:
        """Repaint for a profile name, its SGLang version and its report."""
        from screens.app import STEPS

        parts: list[Content] = []
        for number, (step, title) in enumerate(STEPS.items(), start=1):
            label = f" F{number} {title} "
            if step == self.current:
                parts.append(Content.styled(label, "bold reverse"))
            else:
                parts.append(Content.from_markup(f"[@click=app.goto('{step}')]$label[/]", label=label))
        if report is None:
            verdict = Content.styled(" ? not checked ", "$warning")
        elif report.verdict == "ok":
            verdict = Content.styled(" ✓ SGLang would start ", "bold $success")
        else:
            verdict = Content.styled(" ✗ SGLang would refuse ", "bold $error")
        title = f" {name or 'unsaved'}{' *' if dirty else ''} · SGLang {version} "
        self.update(Content("").join([*parts, Content(title), verdict]))
