"""Step 4, Parameters: the speculative trio and friends, findings live on every keystroke."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, OptionList, Select, Static

from screens.base import WizardScreen
from screens.forms import LABELS, FieldInput, Kind, label_for
from screens.keys import option_key
from screens.messages import EditRequested
from screens.widgets.effective import EffectiveTable
from screens.widgets.findings import FindingList, FindingsPanel
from wizard.profile_schema import HybridSection, Profile
from wizard.rules.report import Report

LET_SGLANG = "let SGLang choose"

#: (dotted path, label, kind, placeholder, tooltip)
FIELDS: tuple[tuple[str, str, Kind, str, str], ...] = (
    ("speculative.num_steps", "Steps", "int", LET_SGLANG, "--speculative-num-steps"),
    ("speculative.eagle_topk", "Top-k", "int", LET_SGLANG, "--speculative-eagle-topk"),
    (
        "speculative.num_draft_tokens",
        "Draft tokens",
        "int",
        LET_SGLANG,
        "--speculative-num-draft-tokens",
    ),
    ("attention.page_size", "Page size", "int", LET_SGLANG, "--page-size"),
    ("attention.backend", "Attention", "str", LET_SGLANG, "--attention-backend"),
    ("parallel.tp", "TP", "int", "1", "--tensor-parallel-size"),
    ("parallel.dp", "DP", "int", "1", "--data-parallel-size"),
    ("memory.mem_fraction_static", "Mem fraction", "float", LET_SGLANG, "--mem-fraction-static"),
    ("server.port", "Port", "int", LET_SGLANG, "--port"),
    ("env", "Env vars", "env", "NAME=value ...", "environment of the server process"),
    ("extra_args", "Extra args", "args", "--flag value ...", "passed to launch_server as typed"),
)

CACHE_PATH = "hybrid.cache_strategy"
LABELS.update({path: label for path, label, *_ in FIELDS})
LABELS.setdefault(CACHE_PATH, "Hybrid cache")
LABELS.setdefault("speculative.draft_model_path", "Draft model")
LABELS.setdefault("speculative.algorithm", "Algorithm")


def _cache_strategies() -> list[str]:
    """The strategies the profile accepts (read from the profile model's Literal)."""
    annotation = repr(HybridSection.model_fields["cache_strategy"].annotation)
    import re

    return re.findall(r"'([^']*)'", annotation)


class ParametersScreen(WizardScreen):
    """Edit the launch parameters; the findings panel and effective table follow every keystroke."""

    STEP = "parameters"
    AUTO_FOCUS = "FieldInput"
    CSS_PATH = "parameters.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+f", "apply_fix(1)", "Apply fix"),
        Binding("ctrl+l", "let_sglang_choose", "SGLang picks"),
        Binding("ctrl+g", "focus_findings", "Findings"),
        # Fix N of the highlighted finding from anywhere on the step: the digit itself when focus
        # is not in a field (a field types it), alt+digit always.
        *[
            Binding(str(n), f"apply_fix({n})", f"Fix {n}", show=False)
            for n in range(1, 10)
        ],
        # alt+digit also arrives as ESC+digit (tmux `M-1`, xterm: `screens.keys`) and, on a Mac
        # terminal whose Option is not Meta, as the character Option+digit types (`¡` for 1).
        *[
            Binding(
                f"alt+{n},{option_key(n)}", f"apply_fix({n})", f"Fix {n}", show=False, priority=True
            )
            for n in range(1, 10)
        ],
    ]

    def compose(self) -> ComposeResult:
        """Form on the left, findings and effective values on the right."""
        yield self.step_bar()
        with Horizontal(id="params-body"):
            with VerticalScroll(id="params-form"):
                yield Static(id="params-algorithm")
                for path, label, kind, placeholder, tooltip in FIELDS[:3]:
                    yield from self._row(path, label, kind, placeholder, tooltip)
                with Horizontal(classes="row"):
                    yield Label("Hybrid cache", classes="label")
                    yield Select(
                        [(s, s) for s in _cache_strategies()],
                        prompt=LET_SGLANG,
                        value=self.wizard.profile.hybrid.cache_strategy or Select.NULL,
                        id="hybrid-cache_strategy",
                        compact=True,
                        tooltip="--mamba-scheduler-strategy (--mamba-radix-cache-strategy in the releases "
                        "that renamed it): the flag of the profile's release",
                    )
                for path, label, kind, placeholder, tooltip in FIELDS[3:]:
                    yield from self._row(path, label, kind, placeholder, tooltip)
            with Vertical(id="params-results"):
                yield FindingsPanel(id="findings")
                yield EffectiveTable(id="effective")
        yield self.footer()

    def _row(
        self, path: str, label: str, kind: Kind, placeholder: str, tooltip: str
    ) -> ComposeResult:
        with Horizontal(classes="row"):
            yield Label(label, classes="label")
            yield FieldInput(path, kind, placeholder=placeholder, tooltip=tooltip, label=label)

    def on_mount(self) -> None:
        """Titles and the first focus."""
        self.query_one("#findings").border_title = "Findings (in SGLang's order)"
        self.query_one("#effective").border_title = "Effective values: typed → SGLang runs"
        self.query_one("#params-form").border_title = "Parameters"

    # ---------------------------------------------------------------- render

    def sync(self, profile: Profile, report: Report | None) -> None:
        """Show the profile in the form and the report in the panels."""
        problems = self.wizard.input_problems
        offending, adjusted = self._flagged(report, problems)
        self.show_fields(profile, offending, adjusted)
        select = self.query_one("#hybrid-cache_strategy", Select)
        value = profile.hybrid.cache_strategy
        wanted: Any = Select.NULL if value is None else value
        if select.value != wanted:
            with select.prevent(Select.Changed):
                select.value = wanted
        algorithm = profile.speculative.algorithm or "none"
        draft = profile.speculative.draft_model_path
        self._set_static(
            "#params-algorithm",
            Content.assemble(
                "Algorithm ",
                (algorithm, "bold"),
                f"  draft {draft}" if draft else "",
                ("  (F3 changes it)", "$text-muted"),
            ),
        )
        self.query_one(FindingsPanel).show(
            report, problems, profile.sglang_version, self.wizard.core_problem
        )
        # A refused value is also named on the form's own border, next to the fields.
        form = self.query_one("#params-form")
        subtitle = next(
            (f"✗ {label_for(path)}: {message}" for path, message in problems.items()), ""
        )
        if form.border_subtitle != subtitle:
            form.border_subtitle = subtitle
        self.query_one(EffectiveTable).show(report)  # its width decides columns or stacked rows
        title = "Effective values: typed → SGLang runs"
        if report is not None and report.verdict == "error":
            title += " (once the errors are fixed)"
        effective = self.query_one("#effective")
        if effective.border_title != title:  # setting a title repaints the table, same or not
            effective.border_title = title
        self._mark_cache_select(offending, adjusted)

    def _set_static(self, selector: str, content: Content) -> None:
        static = self.query_one(selector, Static)
        if static.visual != content and getattr(static, "_shown", None) != content:
            static._shown = content  # type: ignore[attr-defined]
            static.update(content)

    @staticmethod
    def _flagged(report: Report | None, problems: dict[str, str]) -> tuple[set[str], set[str]]:
        """(offending, adjusted) paths: refused values and errors' fields; other findings' fields."""
        offending: set[str] = set(problems)
        adjusted: set[str] = set()
        for finding in report.findings if report is not None else ():
            target = offending if finding.severity == "error" else adjusted
            if finding.severity in ("error", "adjusted", "warning"):
                target.update(finding.fields)
        return offending, adjusted - offending

    def _mark_cache_select(self, offending: set[str], adjusted: set[str]) -> None:
        """Mark the cache select like the inputs (`show_fields` marks the inputs)."""
        select = self.query_one("#hybrid-cache_strategy", Select)
        select.set_class(CACHE_PATH in offending, "-offending")
        select.set_class(CACHE_PATH in adjusted, "-adjusted")

    # ---------------------------------------------------------------- dispatch

    @on(Select.Changed, "#hybrid-cache_strategy")
    def _cache_changed(self, event: Select.Changed) -> None:
        value = None if event.value is Select.NULL else event.value
        self.post_message(EditRequested({CACHE_PATH: value}, {CACHE_PATH: str(value or "")}))

    def action_apply_fix(self, number: int = 1) -> None:
        """Apply fix `number` of the highlighted finding."""
        self.query_one(FindingsPanel).apply_fix(number)

    @on(OptionList.OptionSelected, "#findings-list")
    def _jump_to_field(self, event: OptionList.OptionSelected) -> None:
        """Enter on a finding focuses the first field it names."""
        event.stop()
        panel = self.query_one(FindingsPanel)
        finding = panel.selected
        paths: tuple[str, ...]
        if finding is not None:
            paths = finding.fields
        else:
            index = event.option_index
            paths = tuple(panel.problems)[index : index + 1]
        for path in paths:
            target = (
                self.query_one("#hybrid-cache_strategy", Select)
                if path == CACHE_PATH
                else next((f for f in self.query(FieldInput) if f.path == path), None)
            )
            if target is not None:
                target.focus()
                return
        self.notify("This finding names no field of this step.", severity="information")

    def action_let_sglang_choose(self) -> None:
        """Empty the focused field: SGLang picks the value."""
        focused = self.focused
        if isinstance(focused, FieldInput):
            focused.value = ""
        elif isinstance(focused, Select):
            focused.clear()

    def action_focus_findings(self) -> None:
        """Move focus to the findings list (digits then apply fixes)."""
        self.query_one(FindingList).focus()
