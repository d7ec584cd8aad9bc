"""Nodes: one server across the nodes of a multi-node profile.

Pushed from the Review step (`l`) when the profile has several nodes. It lists every node (rank,
SSH target, rendezvous, interface, GPUs and its exact command), preflights every node at once
(one block per node), launches rank 0 first, shows one merged log with a `[nR]` prefix, and stops
every node. All remote work is `wizard.remote.multinode.NodeGroup`, run in an async worker.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Log, Static

from wizard.profile import Profile, profile_to_toml

if TYPE_CHECKING:
    from screens.app import WizardApp


def nodes_text(profile: Profile) -> Content:
    """The node table: rank, target, role, interface, GPUs, then each node's command."""
    from wizard.multinode import dist_init_addr, node_launches
    from wizard.remote.multinode import command_text
    from wizard.sglang.errors import RenderError

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


class NodesScreen(Screen[None]):
    """Preflight, launch and stop a multi-node profile on its nodes; the merged log."""

    CSS_PATH = "nodes.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "preflight", "Preflight all"),
        Binding("ctrl+l", "launch", "Launch"),
        Binding("ctrl+x", "stop", "Stop all", priority=True),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, profile: Profile) -> None:
        super().__init__()
        self.profile = profile
        self.group: Any = None
        self.outcome: str | None = None
        self.preflight: list[Any] = []

    @property
    def wizard(self) -> WizardApp:
        """The app, typed."""
        return cast("WizardApp", self.app)

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

    async def _connect(self) -> Any:
        from wizard.multinode import node_launches
        from wizard.remote.connection import HostKeyPolicy
        from wizard.remote.multinode import NodeGroup

        if self.group is not None:
            return self.group
        launches = node_launches(self.profile)
        root = self.wizard.remote_runs_root
        self._say(f"Connecting to {len(launches)} nodes …")
        self.group = await NodeGroup.connect(
            launches, settings=self.wizard.ssh_settings,
            policy=HostKeyPolicy(trusted_fingerprints=set(self.wizard.trusted_keys)),
            jumps=list(self.profile.ssh.jump) or None, agent_python=self.wizard.agent_python,
            runs_roots={n.rank: root for n in launches} if root else None)
        return self.group

    async def _preflight(self) -> bool:
        from wizard.exports import gpus_per_node
        from wizard.multinode import dist_init_addr
        from wizard.remote.session import PreflightRequest

        try:
            group = await self._connect()
            requests = [PreflightRequest(
                python=n.python, env=n.env,
                port=(self.profile.server.port or 30000) if n.rank == 0 else None,
                model_path=self.profile.model.path) for n in group.launches]
            self._say("Checking every node …")
            self.preflight = await group.preflight(
                requests, rendezvous=dist_init_addr(self.profile),
                gpus_per_node=gpus_per_node(self.profile))
        except Exception as exc:  # RemoteError, render errors: shown, never raised
            self._say(Content.assemble(("Preflight failed: ", "bold $error"), str(exc)))
            return False
        self._say(node_preflight_text(self.preflight))
        return all(n.ok for n in self.preflight)

    @work(exclusive=True, group="nodes")
    async def action_preflight(self) -> None:
        """Check every node without launching."""
        await self._preflight()

    @work(exclusive=True, group="nodes")
    async def action_launch(self) -> None:
        """Preflight all, start rank 0 then the others, follow the merged log."""
        from wizard.remote.multinode import group_record, launch_requests, save_node_records
        from wizard.remote.records import new_run_id, profile_hash

        if not await self._preflight():
            self.app.notify("A node blocks the launch.", severity="error")
            return
        group = self.group
        port = self.profile.server.port or 30000
        group_id = new_run_id()
        try:
            await group.start(launch_requests(group.launches, profile_to_toml(self.profile),
                                              port), group_id)
        except Exception as exc:
            self._say(Content.assemble(("Launch failed: ", "bold $error"), str(exc)))
            return
        root = self.wizard.remote_runs_root
        record = group_record(group_id, group, port, jumps=list(self.profile.ssh.jump),
                              runs_roots={n.rank: root for n in group.launches} if root else None)
        record.save()
        save_node_records(group, record, profile_hash(profile_to_toml(self.profile)),
                          self.profile.sglang_version)
        log = self.query_one("#nodes-log", Log)
        log.clear()
        self._say(f"Group {group_id}: started {len(group.launches)} nodes, watching …")
        try:
            result = await group.watch(port=port, sglang_version=self.profile.sglang_version,
                                       on_line=lambda line: log.write_line(line.text()))
        except Exception as exc:
            self._say(Content.assemble(("Lost the log: ", "bold $error"), str(exc)))
            return
        self.outcome = result.outcome
        record.outcome, record.detail = result.outcome, result.summary()
        record.save()
        style = "bold $success" if result.outcome == "ready" else "bold $error"
        self._say(Content.assemble((result.summary(), style)))

    @work(exclusive=True, group="nodes-stop")
    async def action_stop(self) -> None:
        """Stop every node; each confirms nothing of its run is left."""
        if self.group is None or not self.group.run_ids:
            self.app.notify("Nothing launched from here.", severity="warning")
            return
        self.workers.cancel_group(self, "nodes")
        try:
            results = await self.group.stop()
        except Exception as exc:
            self.app.notify(str(exc), title="Stop failed", severity="error")
            return
        self.outcome = "stopped"
        text = ", ".join(f"n{r} {'clean' if s.clean else 'LEFT ' + str(s.remaining)}"
                         for r, s in sorted(results.items()))
        self._say(f"Stopped every node ({text}).")

    async def action_back(self) -> None:
        """Back to Review (launched nodes keep running; `sglang-wizard nodes stop` finds them)."""
        self.workers.cancel_group(self, "nodes")
        if self.group is not None:
            with contextlib.suppress(Exception):
                await self.group.close()
        self.dismiss(None)
