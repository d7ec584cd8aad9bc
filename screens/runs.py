"""Runs launched from this machine (the run records): re-attach to a run's log, stop a run."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Log, Static

import wizard.remote as remote
from screens.launch import outcome_text, stage_text
from screens.state import WizardState, state_of
from wizard.remote.records import RunRecords


class RunsScreen(Screen[None]):
    """The local run records, newest first; enter follows a run's log, ctrl+x stops it."""

    CSS_PATH = "runs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "attach", "Follow log"),  # the table selects the row; shown here
        Binding("ctrl+x", "stop", "Stop run"),
        Binding("r", "reload", "Refresh"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.records: list[Any] = []
        self.outcome: str | None = None

    @property
    def wizard(self) -> WizardState:
        """The app's state, typed (`screens.state`)."""
        return state_of(self.app)

    def compose(self) -> ComposeResult:
        """Run table, status line, log."""
        yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="runs-status")
        yield Log(id="runs-log", max_lines=2000)
        yield Footer()

    def on_mount(self) -> None:
        """Columns and rows."""
        table = self.query_one(DataTable)
        table.border_title = "Runs launched from here"
        self.query_one("#runs-log").border_title = "Log"
        for label in ("run", "host", "started", "outcome", "start-up"):
            table.add_column(label, key=label)
        self.action_reload()

    def action_reload(self) -> None:
        """Re-read the run records."""
        table = self.query_one(DataTable)
        table.clear()
        try:
            self.records = sorted(RunRecords().load(), key=lambda r: r.started_at, reverse=True)
        except Exception as exc:  # an unreadable records file is reported, not raised
            self.records = []
            self._status(
                Content.assemble(("Cannot read the run records: ", "bold $error"), str(exc))
            )
            return
        for record in self.records:
            started = time.strftime("%Y-%m-%d %H:%M", time.localtime(record.started_at))
            startup = f"{record.startup_s:.0f} s" if record.startup_s else ""
            table.add_row(
                record.run_id,
                record.target or record.host,
                started,
                record.outcome,
                startup,
                key=record.run_id,
            )
        if not self.records:
            self._status(Content.styled("No runs yet: launch one from Review (l).", "$text-muted"))
        table.focus()

    def _status(self, content: Content | str) -> None:
        self.query_one("#runs-status", Static).update(content)

    def _selected(self) -> Any:
        table = self.query_one(DataTable)
        if not self.records or table.cursor_row is None or table.cursor_row >= len(self.records):
            return None
        return self.records[table.cursor_row]

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_attach()

    @work(exclusive=True, group="runs")
    async def action_attach(self) -> None:
        """Connect to the run's host and follow its log from the start (stops at ready or exit)."""
        record = self._selected()
        if record is None:
            return
        log = self.query_one("#runs-log", Log)
        log.clear()
        self._status(f"Connecting to {record.target} …")
        host = None
        try:
            host = await self.wizard.connect_host(
                record.target, record.jumps or None, record.runs_root, _reach_settings(record)
            )

            def on_chunk(watcher: Any, chunk: Any, events: list[Any]) -> None:
                log.write_lines(chunk.lines)
                if events:
                    self._status(stage_text(events[-1]))

            result = await remote.watch_run(
                host,
                record.run_id,
                port=record.port,
                sglang_version=record.sglang_version,
                on_chunk=on_chunk,
                check_ready=False,
            )
            self.outcome = result.outcome
            state = result.status.state if result.status is not None else ""
            self._status(
                Content.assemble(
                    outcome_text(result), (f"  ({state})" if state else "", "$text-muted")
                )
            )
        except Exception as exc:  # connection, missing run dir: shown, never raised
            self._status(Content.assemble(("Cannot follow the run: ", "bold $error"), str(exc)))
        finally:
            if host is not None:
                await host.close()

    @work(exclusive=True, group="runs-stop")
    async def action_stop(self) -> None:
        """Stop the selected run (TERM, then KILL) and confirm nothing is left."""
        record = self._selected()
        if record is None:
            return
        host = None
        try:
            host = await self.wizard.connect_host(
                record.target, record.jumps or None, record.runs_root, _reach_settings(record)
            )
            from wizard.remote import flow

            result = await flow.stop(host, record.run_id)  # marks the record, as `stop` does
        except Exception as exc:
            self._status(Content.assemble(("Stop failed: ", "bold $error"), str(exc)))
            return
        finally:
            if host is not None:
                await host.close()
        self.outcome = "stopped"
        clean = (
            "nothing left"
            if result.clean
            else f"left: {result.remaining or result.gpu_holders_left}"
        )
        self._status(f"Stopped {record.run_id} ({clean}).")

    def action_back(self) -> None:
        """Back to the wizard."""
        self.workers.cancel_group(self, "runs")
        self.dismiss(None)


def _reach_settings(record: Any) -> Any:
    """How the run's host was reached when it was launched (ssh config, known hosts, keys)."""
    from wizard.remote.flow import Reach

    return Reach.from_record(record).settings()
