"""Launch over SSH: host, preflight, launch, live log with stages, crash explanation, stop.

Pushed from the Review step (`l`). All remote work is `wizard.remote` (asyncssh) run in an async
worker, so the screen keeps taking keys while a host is checked or a log streams. The screen only
builds the requests from the profile with the core's renderers and shows what comes back.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Log, Static

from screens.forms import OrderedInput
from screens.messages import EditRequested
from screens.state import WizardState, state_of
from screens.widgets.stepbar import StepBar
from wizard.profile_schema import Profile


def _flow() -> Any:
    from wizard.remote import flow

    return flow


def host_target(profile: Profile, typed: str) -> str:
    """The host spec to connect to: what was typed, else the profile's `[ssh]` host (+ user/port)."""
    return str(_flow().reach_for_profile(profile, typed).host)


class LaunchScreen(Screen[None]):
    """Preflight and launch the current profile on a GPU host; follow its start-up."""

    CSS_PATH = "launch.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "preflight", "Preflight"),
        Binding("ctrl+l", "launch", "Launch"),
        Binding("ctrl+x", "stop", "Stop run", priority=True),  # over the Input's cut
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, profile: Profile) -> None:
        super().__init__()
        self.profile = profile
        self.run_id: str | None = None
        self.host: Any = None
        self.run_host: Any = None
        """The connection the followed run was launched over (`host` is dropped on a host edit)."""
        self.outcome: str | None = None
        self.preflight_ok = False

    @property
    def wizard(self) -> WizardState:
        """The app's state, typed (`screens.state`)."""
        return state_of(self.app)

    def compose(self) -> ComposeResult:
        """Step bar (verdict, profile, version), host line, preflight table, stage line, log."""
        yield StepBar("launch", id="stepbar", extra="Launch")
        with Horizontal(id="launch-host-row"):
            yield Label("Host", classes="label")
            yield OrderedInput(
                self.profile.ssh.host or "",
                placeholder="~/.ssh/config alias or user@host:port",
                id="launch-host",
                compact=True,
            )
        with Vertical(id="launch-top"):
            yield Static(id="launch-preflight")
            yield Static(id="launch-stage")
        yield Log(id="launch-log", max_lines=2000, highlight=True)
        yield Footer()

    def on_mount(self) -> None:
        """Titles, the step bar and a first hint."""
        app = self.wizard
        self.query_one(StepBar).show(
            app.profile_name, self.profile.sglang_version, app.report, app.dirty
        )
        self.query_one("#launch-top").border_title = "Preflight and start-up"
        self.query_one("#launch-log").border_title = "Server log"
        self._say(
            "ctrl+r checks the host (python, SGLang version, GPUs and left-over processes, port, "
            "model paths, and a dry run of SGLang's own argument code); ctrl+l launches."
        )

    def _say(self, text: str | Content, style: str = "") -> None:
        content = Content.styled(text, style) if isinstance(text, str) else text
        self.query_one("#launch-preflight", Static).update(content)

    # ---------------------------------------------------------------- remote work (workers)

    async def _connect(self) -> Any:
        """Connect (asking to trust an unknown host key); None when refused or failed."""
        target = host_target(self.profile, self.query_one("#launch-host", Input).value)
        if not target:
            self._say("Enter a host (or set [ssh] host in the profile).", "$error")
            return None
        if self.host is not None:
            return self.host
        self._say(f"Connecting to {target} …")
        try:
            self.host = await self.wizard.connect_host(
                target, list(self.profile.ssh.jump) or None, settings=self._reach().settings()
            )
        except Exception as exc:  # RemoteError, OSError, config errors: shown, never raised
            self._say(Content.assemble(("Cannot connect: ", "bold $error"), str(exc)))
            return None
        self.host.on_notice = self._connection_notice
        return self.host

    def _connection_notice(self, text: str) -> None:
        """The connection was lost or stalled and is being re-made: said in the log."""
        self.query_one("#launch-log", Log).write_line(f"-- {text}")

    def _reach(self) -> Any:
        """How this screen reaches the host (what the run record keeps for logs/stop)."""
        flow = _flow()
        reach = flow.reach_for_profile(self.profile, self.query_one("#launch-host", Input).value)
        reach.runs_root = self.wizard.remote_runs_root
        settings = self.wizard.ssh_settings
        if settings is not None:
            if settings.config_paths:
                reach.ssh_config = str(settings.config_paths[0])
            if settings.known_hosts is not None:
                reach.known_hosts = [str(settings.known_hosts)]
            if settings.client_keys:
                reach.identity = [str(k) for k in settings.client_keys]
            reach.use_agent = settings.use_agent
        return reach

    async def _preflight(self) -> tuple[Any, Any, Any] | None:
        """(host, launch plan, preflight report) from the core's launch flow, or None when the
        host cannot be reached or checked."""
        host = await self._connect()
        if host is None:
            return None
        profile = self.profile
        flow = _flow()
        said: list[str] = []
        self._say(f"Checking {host.label} …")
        try:
            plan = await flow.for_host_version(
                host, flow.LaunchPlan.from_profile(profile), said.append
            )
            report, ok = await flow.preflight(host, plan, said.append)
        except Exception as exc:
            self._say(Content.assemble(("Preflight failed: ", "bold $error"), str(exc)))
            return None
        table = set(flow.preflight_lines(report))
        notes = [
            line.strip()
            for line in said
            if line not in table and not line.startswith("preflight on ")
        ]
        self._say(preflight_text(report, notes, ok))
        detected = report.sglang_version
        if detected and detected != profile.sglang_version:
            # The host's SGLang decides: check and render the flags for the version it really has.
            self.profile = profile.with_edits({"sglang_version": detected})
            self.app.post_message(
                EditRequested({"sglang_version": detected}, {"sglang_version": detected})
            )
            self.app.notify(
                f"The host runs SGLang {detected}; the profile now uses its rules "
                f"(was {profile.sglang_version}).",
                title="SGLang version detected",
            )
        self.preflight_ok = ok
        return host, plan, report

    @work(exclusive=True, group="remote")
    async def action_preflight(self) -> None:
        """Check the host without launching."""
        await self._preflight()

    @work(exclusive=True, group="remote")
    async def action_launch(self) -> None:
        """Preflight, then launch detached and follow the log until ready or crashed (the
        core's launch flow: the same steps and record as `sglang-wizard launch`)."""
        if self.run_id is not None and self.outcome is None:
            self.app.notify("A run is being followed; ctrl+x stops it.", severity="warning")
            return
        checked = await self._preflight()
        if checked is None:
            return
        # This host from here on: editing the host field meanwhile drops `self.host`.
        host, plan, report = checked
        if not self.preflight_ok:
            self.app.notify("Preflight blocks the launch.", severity="error")
            return
        flow = _flow()
        reach = self._reach()
        try:
            started = await flow.start(host, plan, report, reach)
        except Exception as exc:
            self._say(Content.assemble(("Launch failed: ", "bold $error"), str(exc)))
            return
        self.run_id, self.outcome, self.run_host = started.status.run_id, None, host
        log = self.query_one("#launch-log", Log)
        log.clear()
        stage = self.query_one("#launch-stage", Static)

        def on_chunk(watcher: Any, chunk: Any, events: list[Any]) -> None:
            if chunk.lines:
                log.write_lines(chunk.lines)
            if events:
                stage.update(stage_text(events[-1]))

        def on_tick(watcher: Any, event: Any) -> None:
            stage.update(stage_text(event))  # the clock moves while a stage prints no line

        try:
            result = await flow.watch(host, plan, started, report, on_chunk, on_tick)
        except Exception as exc:
            self._say(Content.assemble(("Lost the log: ", "bold $error"), str(exc)))
            return
        self.outcome = result.outcome
        stage.update(outcome_text(result, reach))

    @work(exclusive=True, group="remote-stop")
    async def action_stop(self) -> None:
        """TERM the run's process group (KILL after a timeout) and confirm nothing is left."""
        if self.run_id is None or self.run_host is None:
            self.app.notify("Nothing launched from here.", severity="warning")
            return
        self.workers.cancel_group(self, "remote")
        try:
            result = await _flow().stop(self.run_host, self.run_id)
        except Exception as exc:
            self.app.notify(str(exc), title="Stop failed", severity="error")
            return
        self.outcome = "stopped"
        clean = (
            "nothing left"
            if result.clean
            else f"left: {result.remaining or result.gpu_holders_left}"
        )
        self.query_one("#launch-stage", Static).update(f"Stopped {self.run_id} ({clean}).")

    async def action_back(self) -> None:
        """Back to Review (a launched server keeps running; `sglang-wizard runs` finds it)."""
        self.workers.cancel_group(self, "remote")
        for host in {id(h): h for h in (self.host, self.run_host) if h is not None}.values():
            with contextlib.suppress(Exception):
                await host.close()
        self.dismiss(None)

    @on(Input.Changed, "#launch-host")
    def _host_changed(self) -> None:
        self.host = None  # connect again to the new host


def preflight_text(report: Any, notes: list[str] | None = None, ok: bool | None = None) -> Content:
    """The preflight table: one line per check, the flow's notes (memory plan, local check,
    disagreements), then the verdict."""
    parts: list[Content | tuple[str, str] | str] = []
    if report.sglang_version:
        parts += [("SGLang on the host: ", "bold"), str(report.sglang_version), "\n"]
    for check in report.checks:
        if check.ok:
            mark = ("ok  ", "$success")
        elif check.blocking:
            mark = ("FAIL", "bold $error")
        else:
            mark = ("warn", "$warning")
        parts += [mark, f" {check.name:<18} {check.detail}\n"]
    crash = report.dry_run_crash
    if crash is not None:
        parts += [
            ("dry run: ", "bold $error"),
            str(getattr(crash, "summary", lambda: crash)()),
            "\n",
        ]
    for note in notes or []:
        if not note.startswith("launch blocked"):
            parts += [note, "\n"]
    if report.ok and ok is not False:
        parts.append(("Nothing blocks the launch.", "bold $success"))
    elif report.ok:
        parts.append(("Blocked by the local check (see above).", "bold $error"))
    else:
        parts += [("Blocked by: ", "bold $error"), ", ".join(c.name for c in report.blocking)]
    return Content.assemble(*parts)


def stage_text(event: Any) -> Content:
    """`weights 7/15  42 s  (ETA 1 min)`."""
    name = getattr(event.stage, "value", str(event.stage))
    progress = f" {event.done}/{event.total}" if event.done is not None and event.total else ""
    eta = f"  ETA {event.eta_s:.0f} s" if event.eta_s is not None else ""
    return Content.assemble(
        ("stage ", "$text-muted"), (f"{name}{progress}", "bold"), f"  {event.elapsed_s:.0f} s{eta}"
    )


def outcome_text(result: Any, reach: Any = None) -> Content:
    """Ready (with what the server really uses) or why it is not (API key refused, crash,
    SIGKILL and the processes it left, with the `stop` command)."""
    if result.outcome == "refused":
        problem = result.ready.problem if result.ready is not None else "refused"
        return Content.assemble(("✗ not ready: ", "bold $error"), str(problem))
    if result.outcome == "ready":
        parts: list[Content | tuple[str, str] | str] = [("✓ ready", "bold $success")]
        if result.startup_s is not None:
            parts.append(f" after {result.startup_s:.0f} s")
        ready = result.ready
        if ready is not None:
            spec = ", ".join(f"{k} {v}" for k, v in ready.speculative.items())
            if spec:
                parts += ["\n", ("server runs: ", "$text-muted"), spec]
            if ready.avg_spec_accept_length is not None:
                parts.append(f"\naccept length {ready.avg_spec_accept_length:.2f}")
        return Content.assemble(*parts)
    status = result.status
    if status is not None and status.stopped and result.outcome in ("exited", "stopped"):
        was_ready = "was ready, then " if result.startup_s is not None else ""
        return Content.styled(f"■ the server {was_ready}was stopped by the user", "$warning")
    if result.crash is not None:
        explanation = result.crash.explanation
        summary = explanation.summary() if hasattr(explanation, "summary") else str(explanation)
        run_id = result.status.run_id if result.status is not None else "RUN"
        hint = (
            reach.command("stop", run_id) if reach is not None else f"sglang-wizard stop {run_id}"
        )
        killed = result.crash.killed_lines(run_id, hint)
        extra = "".join(f"\n{line}" for line in killed)
        return Content.assemble((f"✗ {result.outcome}: ", "bold $error"), summary + extra)
    return Content.styled(f"{result.outcome}", "$warning")
