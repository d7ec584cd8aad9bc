"""Step 5, Review: the exact command, SGLang `--config` YAML, save as TOML, launch."""

from __future__ import annotations

import os
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from screens import core
from screens.base import WizardScreen
from screens.dialogs import TextDialog
from screens.launch import LaunchScreen
from screens.nodes import NodesScreen
from screens.widgets.command import CodeView
from screens.widgets.stepbar import VERDICT_STYLE
from wizard.multinode import is_multinode
from wizard.profile import atomic_write_text, exports_dir
from wizard.profile_schema import Profile
from wizard.rules.report import Report
from wizard.verdict import verdict_of


class ReviewScreen(WizardScreen):
    """What will run: the verdict, the command, the YAML; copy, export, save, launch."""

    STEP = "review"
    AUTO_FOCUS = "#review-body"
    CSS_PATH = "review.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy_command", "Copy command"),
        Binding("y", "app.export_yaml", "Export YAML"),
        Binding("l", "launch", "Launch"),
    ]

    def compose(self) -> ComposeResult:
        """Verdict, command, YAML."""
        yield self.step_bar()
        with VerticalScroll(id="review-body"):
            yield Static(id="review-verdict")
            yield Static("Command", classes="section-title")
            yield CodeView("bash", id="review-command")
            yield Static("SGLang --config YAML", classes="section-title")
            yield CodeView("yaml", id="review-yaml")
        yield self.footer()

    def sync(self, profile: Profile, report: Report | None) -> None:
        """Render the command and YAML for the current profile."""
        self.query_one("#review-verdict", Static).update(verdict(report, self.wizard.core_problem))
        for selector, render in (
            ("#review-command", core.render_shell),
            ("#review-yaml", core.render_yaml),
        ):
            view = self.query_one(selector, CodeView)
            try:
                view.show(render(profile))
            except Exception as exc:  # a renderer problem is shown, never raised
                message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
                view.show_message(
                    f"Not written: {message}. The Parameters step (F4) shows this as a finding "
                    "with its fix."
                )

    def action_copy_command(self) -> None:
        """Copy the command: OSC 52 to the terminal, a file in the exports dir, and a dialog with
        the text selected (whatever the terminal does with OSC 52, one of them works)."""
        text = self.query_one("#review-command", CodeView).text
        if not text:
            self.notify("There is no command to copy.", severity="warning")
            return
        self.app.copy_to_clipboard(text)
        name = self.wizard.profile_name or "command"
        path = exports_dir() / f"{name}.sh"
        try:
            atomic_write_text(path, text + "\n")
            written = f"Also written to {path}."
        except OSError as exc:
            written = f"Not written to {path}: {exc}."
        where = (
            "inside tmux it reaches the system clipboard only with `set -g set-clipboard on`"
            if os.environ.get("TMUX")
            else "it arrives only if the terminal accepts OSC 52"
        )
        self.app.push_screen(
            TextDialog(
                "Copy the command",
                f"Sent to the terminal clipboard with OSC 52 ({where}). {written} "
                "Or select it below.",
                text,
            )
        )

    def action_launch(self) -> None:
        """Hand over to the launch screens."""
        report = self.wizard.report
        summary = verdict_of(report) if report is not None else None
        if summary is not None and not summary.starts:
            self.notify(
                f"{summary.sentence}. Fix it on the Parameters step (F4) first.",
                title="Not launched",
                severity="error",
            )
            return

        if is_multinode(self.wizard.profile):
            self.app.push_screen(NodesScreen(self.wizard.profile))
            return

        self.app.push_screen(LaunchScreen(self.wizard.profile))


def verdict(report: Report | None, note: str | None) -> Content:
    """The one verdict (`wizard.verdict`) as a paragraph: what SGLang does and why."""
    if report is None:
        return Content.styled(note or "Not checked.", "$text-warning")
    summary = verdict_of(report)
    style = VERDICT_STYLE[summary.kind]
    parts: list[Content | tuple[str, str] | str] = [
        (f"{summary.symbol} {summary.sentence.split(': ', 1)[0]}.", style)
    ]
    if summary.kind in ("refuses", "fails"):
        first = summary.findings[0]
        where = f" at {first.sglang.where}" if first.sglang and first.sglang.where else ""
        exc = first.sglang.exception if first.sglang and first.sglang.exception else "an error"
        parts += ["\n", f"{exc}{where}: {first.title}. ", ("F4 shows the fixes.", "$text-muted")]
    else:
        for finding in summary.findings if summary.kind == "warnings" else ():
            parts += ["\n", ("! ", "$text-warning"), f"{finding.title}: {finding.message}"]
        changed = report.changed()
        if changed:
            parts += ["\n", ("SGLang will change: ", "$text-warning")]
            parts.append(
                ", ".join(f"{name} {typed} → {value}" for name, (typed, value) in changed.items())
            )
    return Content.assemble(*parts)
