"""Nodes: one server across the nodes of a multi-node profile.

Pushed from the Review step (`l`) when the profile has several nodes. It lists every node (rank,
SSH target, rendezvous, interface, GPUs and its exact command), preflights every node at once
(one block per node), launches rank 0 first, shows one merged log with a `[nR]` prefix, and stops
every node. The flow is the core's `wizard.remote.nodes_flow.NodesFlow`, the same one
`sglang-wizard nodes` runs, driven from an async worker; its events arrive here as `FlowEvent`
messages and this screen only renders them.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Log, Static

from screens.state import WizardState, state_of
from wizard.multinode import dist_init_addr, node_launches
from wizard.profile_schema import Profile
from wizard.sglang.errors import RenderError


def nodes_text(profile: Profile) -> Content:
    """The node table: rank, target, role, interface, GPUs, then each node's command."""
    from wizard.remote.multinode import command_text

    try:
        launches = node_launches(profile)
    except RenderError as exc:
        return Content.assemble(("Cannot render the nodes: ", "bold $error"), exc.message)
    parts: list[Content | tuple[str, str] | str] = [
        ("rendezvous ", "$text-muted"), (str(dist_init_addr(profile)), "bold"), "\n"]
    for launch in launches:
        role = "rank 0, serves HTTP" if launch.rank == 0 else f"rank {launch.rank}"
        gpus = f"{launch.gpu_count or '?'}x {launch.gpu_kind or '?'}"
        interface = launch.env.get("NCCL_SOCKET_IFNAME", "-")
        parts += [(f"n{launch.rank} ", "bold $accent"), f"{launch.host or '(no host)'}  ",
                  (f"{role}, {gpus}, iface {interface}", "$text-muted"), "\n",
                  ("   ", ""), (command_text(launch), "$text-muted"), "\n"]
    return Content.assemble(*parts)


def node_preflight_text(nodes: list[Any]) -> Content:
    """One block per node: its checks, then its verdict."""
    parts: list[Content | tuple[str, str] | str] = []
    for node in nodes:
        verdict = ("ok", "bold $success") if node.ok else ("BLOCKED", "bold $error")
        parts += [(f"n{node.rank} ", "bold $accent"), f"{node.host}  ", verdict, "\n"]
        for row in node.rows():
            mark = ("ok  ", "$success") if row.ok else (
                ("FAIL", "bold $error") if row.blocking else ("warn", "$warning"))
            parts += ["   ", mark, f" {row.name:<16} {row.detail}\n"]
    return Content.assemble(*parts)


@dataclass(frozen=True)
class StepFailed:
    """A step of the flow raised (a node unreachable, a host key refused): shown, not raised."""

    step: str
    error: str


class NodesScreen(Screen[None]):
    """Preflight, launch and stop a multi-node profile on its nodes; the merged log."""

    CSS_PATH = "nodes.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "preflight", "Preflight all"),
        Binding("ctrl+l", "launch", "Launch"),
        Binding("ctrl+x", "stop", "Stop all", priority=True),
        Binding("escape", "back", "Back"),
    ]

    class FlowEvent(Message):
        """One event of the core's multi-node flow (`wizard.remote.nodes_flow.NodesEvent`)."""

        def __init__(self, event: Any) -> None:
            super().__init__()
            self.event = event

    def __init__(self, profile: Profile) -> None:
        super().__init__()
        self.profile = profile
        self.flow: Any = None
        self.outcome: str | None = None
        self.preflight: list[Any] = []

    @property
    def wizard(self) -> WizardState:
        """The app's state, typed (`screens.state`)."""
        return state_of(self.app)

    @property
    def group(self) -> Any:
        """The connected nodes (`NodeGroup`), once the flow connected them."""
        return self.flow.group if self.flow is not None else None

    def compose(self) -> ComposeResult:
        """Node table, preflight/state, merged log."""
        with Vertical(id="nodes-top"):
            yield Static(nodes_text(self.profile), id="nodes-table")
            yield Static(id="nodes-state")
        yield Log(id="nodes-log", max_lines=4000, highlight=True)
        yield Footer()

    def on_mount(self) -> None:
        """Titles and a first hint."""
        count = len(self.profile.nodes.hosts) or self.profile.parallel.nnodes
        self.query_one("#nodes-top").border_title = f"Nodes ({count})"
        self.query_one("#nodes-log").border_title = "Merged log ([nR] = node rank R)"
        self._say("ctrl+r checks every node at once (versions, GPUs, model, rendezvous port on "
                  "rank 0, interfaces); ctrl+l launches rank 0 first, then the others.")

    def _say(self, text: str | Content, style: str = "") -> None:
        content = Content.styled(text, style) if isinstance(text, str) else text
        self.query_one("#nodes-state", Static).update(content)

    def _flow(self) -> Any:
        """The core's flow for this profile (made once); None when the nodes cannot render."""
        from wizard.remote.nodes_flow import NodesFlow, NodesPlan, NodesReach

        if self.flow is None:
            try:
                plan = NodesPlan.from_profile(self.profile)
            except RenderError as exc:
                self._say(Content.assemble(("Cannot render the nodes: ", "bold $error"),
                                           exc.message))
                return None
            reach = NodesReach(settings=self.wizard.ssh_settings,
                               trusted=self.wizard.trusted_keys,
                               runs_root=self.wizard.remote_runs_root)
            self.flow = NodesFlow(plan, reach, self._post,
                                  confirm_host_key=self.wizard.confirm_host_key)
        return self.flow

    def _post(self, event: Any) -> None:
        """The flow's events become messages to this screen (rendered by `_show_event`)."""
        self.post_message(self.FlowEvent(event))

    async def _run(self, step: str, action: Any) -> Any:
        """Run one step of the flow; a remote error is shown, never raised."""
        try:
            return await action
        except Exception as exc:  # RemoteError, OSError: shown, never raised
            # a message too, so it is shown after the events the flow posted before it
            self._post(StepFailed(step, str(exc)))
            return None

    @work(exclusive=True, group="nodes")
    async def action_preflight(self) -> None:
        """Check every node without launching."""
        flow = self._flow()
        if flow is not None:
            await self._run("Preflight", flow.preflight())

    @work(exclusive=True, group="nodes")
    async def action_launch(self) -> None:
        """Check, preflight all, start rank 0 then the others, follow the merged log."""
        flow = self._flow()
        if flow is None:
            return
        result = await self._run("Launch", flow.launch(follow=True))
        if result is not None:
            self.outcome = result.outcome

    @work(exclusive=True, group="nodes-stop")
    async def action_stop(self) -> None:
        """Stop every node; each confirms nothing of its run is left."""
        if self.group is None or not self.group.run_ids:
            self.app.notify("Nothing launched from here.", severity="warning")
            return
        self.workers.cancel_group(self, "nodes")
        if await self._run("Stop", self.flow.stop()) is not None:
            self.outcome = "stopped"

    @on(FlowEvent)
    def _show_event(self, message: FlowEvent) -> None:
        """Show one event of the flow."""
        from wizard.remote import nodes_flow as f

        event = message.event
        log = self.query_one("#nodes-log", Log)
        if isinstance(event, StepFailed):
            self._say(Content.assemble((f"{event.step} failed: ", "bold $error"), event.error))
        elif isinstance(event, f.Progress):
            self._say(event.text[:1].upper() + event.text[1:])
        elif isinstance(event, f.Note):
            log.write_line(f"note: {event.text}")
            self.app.notify(event.text, title="SGLang on the nodes")
        elif isinstance(event, f.CheckFailed):
            self._say(Content.assemble(("The check finds errors: ", "bold $error"),
                                       "; ".join(event.errors)))
        elif isinstance(event, f.Preflighted):
            self.preflight = event.nodes
            self._say(node_preflight_text(event.nodes))
            if not event.ok:
                self.app.notify("A node blocks the launch.", severity="error")
        elif isinstance(event, f.Launched):
            log.clear()
            self._say(f"Group {event.group_id}: started {len(event.run_ids)} nodes, watching …")
        elif isinstance(event, f.LogLine):
            log.write_line(event.line.text())
        elif isinstance(event, f.ConnectionNotice):
            log.write_line(f"-- node {event.rank}: {event.text}")
        elif isinstance(event, f.Finished):
            self.outcome = event.result.outcome
            style = "bold $success" if event.result.outcome == "ready" else "bold $error"
            lines = event.result.lines()
            self._say(Content.assemble((lines[0], style), "".join(f"\n{x}" for x in lines[1:])))
        elif isinstance(event, f.Stopped):
            self.outcome = "stopped"
            text = ", ".join(f"n{r} {'clean' if s.clean else 'LEFT ' + str(s.remaining)}"
                             for r, s in sorted(event.results.items()))
            self._say(f"Stopped every node ({text}).")

    async def action_back(self) -> None:
        """Back to Review (launched nodes keep running; `sglang-wizard nodes stop` finds them)."""
        self.workers.cancel_group(self, "nodes")
        if self.flow is not None:
            with contextlib.suppress(Exception):
                await self.flow.close()
        self.dismiss(None)
