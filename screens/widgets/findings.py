"""The findings panel: SGLang's findings in the order it hits them, and the selected one explained."""

from __future__ import annotations

import re
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from screens.forms import LABELS, label_for
from screens.messages import FindingSelected, FixRequested
from wizard.rules.report import Finding, Report

SEVERITY_STYLE: dict[str, tuple[str, str]] = {
    "error": ("✗ error", "bold $text-error"),
    "adjusted": ("↻ adjusted", "bold $text-warning"),
    "warning": ("! warning", "$text-warning"),
    "info": ("i info", "$text-muted"),
    "input": ("✗ input", "bold $text-error"),
}


class FindingList(OptionList):
    """The list part; digits apply the numbered fix of the highlighted finding."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "apply_fix(1)", "Apply fix 1"),
        *[Binding(str(n), f"apply_fix({n})", f"Fix {n}", show=False) for n in range(1, 10)],
    ]

    def action_apply_fix(self, number: int) -> None:
        """Apply the numbered fix of the highlighted finding."""
        panel = self.query_ancestor(FindingsPanel)
        panel.apply_fix(number)


class FindingsPanel(Vertical):
    """Findings of the current report plus rejected inputs; shows the highlighted one in full."""

    DEFAULT_CSS = """
    FindingsPanel { height: 1fr; }
    FindingsPanel > FindingList { height: auto; max-height: 45%; border: none; text-wrap: nowrap; text-overflow: ellipsis; }
    FindingsPanel > #finding-detail-scroll { height: 1fr; padding: 0 1; background: $surface; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.findings: tuple[Finding, ...] = ()
        self.problems: dict[str, str] = {}
        self.version = ""
        self._keys: list[str] = []
        self._last_relevant: str | None = None
        self._shown: list[tuple[str, tuple[str, str]]] | None = None
        self._explained: tuple[Finding, str] | None = None

    def compose(self) -> ComposeResult:
        """The list and the detail view."""
        yield FindingList(id="findings-list")
        with VerticalScroll(id="finding-detail-scroll"):
            yield Static(id="finding-detail")

    @property
    def selected(self) -> Finding | None:
        """The highlighted finding (None for an input problem or an empty list)."""
        index = self.query_one(FindingList).highlighted
        offset = len(self.problems)
        if index is None or index < offset or index - offset >= len(self.findings):
            return None
        return self.findings[index - offset]

    def show(
        self, report: Report | None, problems: dict[str, str], version: str, note: str | None
    ) -> None:
        """Repaint with a report and the inputs the profile refused."""
        listing = self.query_one(FindingList)
        previous = (
            self._keys[listing.highlighted]
            if listing.highlighted is not None and listing.highlighted < len(self._keys)
            else None
        )
        self.findings = report.findings if report is not None else ()
        self.problems = dict(problems)
        self.version = version
        options: list[Option] = []
        keys: list[str] = []
        for path, message in self.problems.items():
            options.append(
                Option(self._label("input", f"{label_for(path)}: {message}"), id=f"input:{path}")
            )
            keys.append(f"input:{path}")
        for finding in self.findings:
            key = finding.rule
            while key in keys:  # the same rule twice keeps distinct keys
                key += "+"
            options.append(Option(self._label(finding.severity, finding.title), id=key))
            keys.append(key)
        signature = [
            (key, finding_signature)
            for key, finding_signature in zip(keys, self._signatures(), strict=True)
        ]
        with listing.prevent(OptionList.OptionHighlighted):
            if signature != self._shown:  # rebuild the list only when its lines change
                listing.set_options(options)
                self._shown = signature
            self._keys = keys
            if keys:
                relevant = self._most_relevant()
                if previous in keys and keys[relevant] == self._last_relevant:
                    listing.highlighted = keys.index(previous)
                else:  # a new most relevant finding (e.g. a new error) takes the highlight
                    listing.highlighted = relevant
                self._last_relevant = keys[relevant]
        if not options:
            if report is None:
                text = note or "Not checked yet."
            else:
                text = f"✓ No findings: SGLang {version} starts this profile as typed."
            self._explained = None
            self.query_one("#finding-detail", Static).update(
                Content.styled(text, "$text-success" if report else "$text-warning")
            )
        else:
            self._explain()

    def _signatures(self) -> list[tuple[str, str]]:
        out = [("input", f"{path}: {message}") for path, message in self.problems.items()]
        return out + [(f.severity, f.title) for f in self.findings]

    def _most_relevant(self) -> int:
        """A refused input, else the error SGLang raises first, else the first adjustment/warning."""
        if self.problems:
            return 0
        offset = len(self.problems)
        for severity in ("error", "adjusted", "warning"):
            for index, finding in enumerate(self.findings):
                if finding.severity == severity:
                    return offset + index
        return 0

    @staticmethod
    def _label(severity: str, title: str) -> Content:
        tag, style = SEVERITY_STYLE.get(severity, (severity, ""))
        return Content.assemble((f"{tag:<11}", style), title)

    @on(OptionList.OptionHighlighted, "#findings-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._explain()
        if event.option_index is not None:
            self.post_message(FindingSelected(event.option_index))

    def _explain(self) -> None:
        detail = self.query_one("#finding-detail", Static)
        listing = self.query_one(FindingList)
        index = listing.highlighted or 0
        if index < len(self.problems):
            path, message = list(self.problems.items())[index]
            self._explained = None
            detail.update(
                Content.assemble(
                    ("Input refused: ", "bold $text-error"),
                    f"{label_for(path)}\n{message}\n\n",
                    "Correct the marked field; the profile keeps its last valid value meanwhile.",
                )
            )
            return
        finding = self.selected
        if finding is None:
            return
        key = (finding, self.version)
        if key != self._explained:  # same finding, same text: no repaint
            self._explained = key
            detail.update(explain(finding, self.version))

    def apply_fix(self, number: int) -> None:
        """Ask the app to apply fix `number` (1-based) of the highlighted finding."""
        finding = self.selected
        if finding is None or not finding.fixes:
            self.app.notify("This finding has no automatic fix.", severity="warning")
            return
        if not 1 <= number <= len(finding.fixes):
            self.app.notify(
                f"There is no fix {number} (1-{len(finding.fixes)}).", severity="warning"
            )
            return
        self.post_message(FixRequested(finding.rule, finding.fixes[number - 1]))


def with_labels(text: str) -> str:
    """`text` with the profile's dotted field names replaced by the labels on screen."""
    for path, label in LABELS.items():
        if path in text:
            text = re.sub(rf"(?<![\w.]){re.escape(path)}(?![\w])", label, text)
    return text


_NO_EXCEPTION = {
    # a runtime trap raises nothing at start: it fails later (the CLI says the same)
    "runtime": "not checked at start; fails or misbehaves later (model load, first decode)",
    "wizard": "the wizard's own note (SGLang raises nothing)",
}


def explain(finding: Finding, version: str) -> Content:
    """The full explanation of a finding: what SGLang raises and where (second line), the
    numbered fixes (right below, so they show without scrolling at 80x24), then the message, the
    source line of a bare assert and why the rule exists."""
    tag, style = SEVERITY_STYLE.get(finding.severity, (finding.severity, ""))
    parts: list[Content | tuple[str, str] | str] = [
        (f"{tag}  ", style),
        (finding.title, "bold"),
        (f"\n{finding.rule}", "$text-muted"),
    ]
    raised = finding.sglang
    if raised is not None:
        what = raised.exception or _NO_EXCEPTION.get(raised.stage, "no exception")
        parts += [
            (f" · {version}: ", "$text-muted"),
            (what, "bold $text-error" if raised.exception else "$text-muted"),
        ]
        if raised.bare:
            parts.append((" (bare assert: no message)", "$text-warning"))
        if raised.where:
            parts += [" at ", (raised.where, "underline")]
    if finding.fixes:
        parts += [
            "\n\n",
            ("Fixes", "bold"),
            ("  (number; in a field alt+number or ctrl+g number)", "$text-muted"),
        ]
        for number, fix in enumerate(finding.fixes, start=1):
            edits = ", ".join(
                f"{label_for(k)} = {'(let SGLang choose)' if v is None else v}"
                for k, v in fix.edits.items()
            )
            env = ", ".join(f"env {k}={'(unset)' if v is None else v}" for k, v in fix.env.items())
            detail = "; ".join(x for x in (edits, env) if x)
            parts += [
                "\n",
                (f" {number} ", "bold reverse"),
                f" {fix.label}",
                (f"  {detail}" if detail else "", "$text-muted"),
            ]
    parts += ["\n\n", with_labels(finding.message)]
    if raised is not None:
        parts += ["\n\n", ("SGLang stage: ", "bold"), raised.stage]
        if raised.message and raised.message != finding.message:
            parts += ["\n", ("SGLang's line: ", "bold"), (raised.message, "italic")]
    if finding.explanation:
        parts += ["\n\n", ("Why: ", "bold"), finding.explanation]
    return Content.assemble(*parts)
