"""The multi-node launch flow, once, for `sglang-wizard nodes ...` and the Nodes screen.

profile -> `NodesPlan` (every node's argv and env, secret references read from this process,
the masked profile text and its hash) -> `NodesFlow`: connect every node (asking before trusting
an unknown host key, through `confirm_host_key`) -> the local check -> preflight every node
(model and draft paths, the server port on rank 0, the rendezvous, GPUs per node, optionally
SGLang's own dry run) -> start (rank 0 first; each run directory keeps the masked profile, the
group record and one run record per node are saved) -> the merged log until rank 0 serves (probed
with the API key: a refusal is not ready) or a node exits -> stop every node.

Every step reports through `on_event` with the `NodesEvent` dataclasses below: the CLI prints
them, the screen renders them. How the server process is started on each host is
`RemoteHost.launch` (`LaunchRequest` in, `RunStatus` out): the one place a container runtime
plugs in, for one node and for several alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from wizard.api import check_profile
from wizard.exports import gpus_per_node
from wizard.multinode import NodeLaunch, dist_init_addr, node_launches
from wizard.remote.connection import (
    HostKeyPolicy,
    RemoteError,
    SshSettings,
    UnknownHostKeyError,
)
from wizard.remote.flow import is_host_path, masked_profile_toml, server_port, with_rule_fixes
from wizard.remote.multinode import (
    GroupRecord,
    GroupResult,
    NodeGroup,
    NodeLine,
    NodePreflight,
    group_record,
    launch_requests,
    save_node_records,
)
from wizard.remote.preflight import PreflightRequest
from wizard.remote.records import RunRecords, api_key_of, new_run_id, profile_hash
from wizard.remote.runs import StopResult
from wizard.remote.session import RemoteHost
from wizard.secrets import UnsetSecretError, resolve_argv, resolve_env

# ------------------------------------------------------------------------------------ events


@dataclass(frozen=True)
class Progress:
    """A step begins (`connecting to 2 nodes`, `checking every node`)."""

    text: str


@dataclass(frozen=True)
class Note:
    """Something the user should read (e.g. the flags were rendered for the hosts' SGLang)."""

    text: str


@dataclass(frozen=True)
class CheckFailed:
    """The local check finds errors: the launch does not go on."""

    errors: list[str]


@dataclass(frozen=True)
class Preflighted:
    """Every node's preflight, with the checks across nodes; `ok`: nothing blocks."""

    nodes: list[NodePreflight]
    ok: bool


@dataclass(frozen=True)
class Launched:
    """Every node started (rank 0 first); the group's record is saved."""

    group_id: str
    run_ids: dict[int, str]
    record: GroupRecord


@dataclass(frozen=True)
class LogLine:
    """One line of one node's log (the merged log)."""

    line: NodeLine


@dataclass(frozen=True)
class ConnectionNotice:
    """A node's connection was lost or stalled and is being re-made (the flow goes on)."""

    rank: int
    text: str


@dataclass(frozen=True)
class Finished:
    """How watching ended: ready, refused (not ready), crashed or stopped."""

    result: GroupResult


@dataclass(frozen=True)
class Stopped:
    """Every node stopped; each says whether anything of its run is left."""

    results: dict[int, StopResult]


NodesEvent = (
    Progress | Note | CheckFailed | Preflighted | Launched | LogLine | ConnectionNotice | Finished | Stopped
)
OnEvent = Callable[[NodesEvent], None]
ConfirmHostKey = Callable[[UnknownHostKeyError], Awaitable[bool]]


# -------------------------------------------------------------------------------------- plan


@dataclass
class NodesPlan:
    """A multi-node profile made ready to launch: one `NodeLaunch` per node (rank 0 first)."""

    profile: Any
    launches: list[NodeLaunch]
    port: int
    masked_toml: str
    digest: str
    rendezvous: str | None
    gpus_per_node: int | None

    @classmethod
    def from_profile(cls, profile: Any, version: str | None = None) -> NodesPlan:
        """Render every node (for `version` when given; RenderError when the profile cannot run
        on its nodes). Secret references (`env:HF_TOKEN`) are read from this process's
        environment here, as for one node; the texts kept anywhere are masked."""
        if version:
            profile = profile.model_copy(update={"sglang_version": version})

        launches = [replace(n, env=resolve_env(n.env)) for n in node_launches(profile)]
        masked = masked_profile_toml(profile)
        return cls(profile, launches, server_port(profile), masked, profile_hash(masked),
                   dist_init_addr(profile), gpus_per_node(profile))

    @property
    def api_key(self) -> str | None:
        """The server's `--api-key` (the ready probe sends it), if the profile sets one."""
        if not self.launches:
            return None

        try:  # a reference (`--api-key env:NAME`) is probed with the value the nodes get
            return api_key_of(resolve_argv(self.launches[0].argv))
        except UnsetSecretError:
            return None

    def preflight_requests(self, dry_run: bool = False) -> list[PreflightRequest]:
        """What each node's preflight checks: model and draft paths on every node, the server
        port on rank 0 (the only one serving HTTP), SGLang's dry run when asked; inside the
        profile's container image when it has one."""
        model = self.profile.model.path
        draft = self.profile.speculative.draft_model_path
        return [PreflightRequest(
            python=n.python, env=dict(n.env), port=self.port if n.rank == 0 else None,
            model_path=model if is_host_path(model) else None,
            draft_model_path=draft if is_host_path(draft) else None,
            argv=list(n.argv) if dry_run else None,
            container=self.profile if self.profile.container is not None else None)
            for n in self.launches]

    def launch_requests(self) -> list[Any]:
        """One `LaunchRequest` per node: the masked profile text and its hash go to the hosts."""
        return launch_requests(self.launches, self.masked_toml, self.port, self.digest,
                               profile=self.profile)


# -------------------------------------------------------------------------------------- flow


@dataclass
class NodesReach:
    """How the nodes are reached: ssh settings, trusted host keys, jump hosts, runs directory."""

    settings: SshSettings | None = None
    trusted: set[str] = field(default_factory=set)
    jumps: list[str] | None = None
    runs_root: str | None = None
    agent_python: str | None = None  # None: each node's own python


def local_check(profile: Any) -> tuple[list[str], dict[str, list[str]]]:
    """The local check's errors (`RULE: message`), as every launch runs it first, and the fixes
    it offers per rule (a node's crash of a known rule names them)."""
    report = check_profile(profile, verify_fixes=False)
    fixes = {f.rule: [fix.label for fix in f.fixes] for f in report.findings}
    return [f"{f.rule}: {f.message}" for f in report.errors], fixes


class HostConnector:
    """Connects nodes as a `NodesReach` says; an unknown host key is asked about through
    `confirm_host_key` (one question at a time; without it, UnknownHostKeyError says how to
    trust the key), and a trusted one is remembered for the other nodes."""

    def __init__(self, reach: NodesReach, confirm_host_key: ConfirmHostKey | None = None) -> None:
        self.reach = reach
        self.confirm_host_key = confirm_host_key
        self._ask = asyncio.Lock()

    async def __call__(self, target: str, jumps: Sequence[str] | None, python: str,
                       runs_root: str | None) -> RemoteHost:
        while True:
            try:
                return await RemoteHost.connect(
                    target, jumps=jumps, settings=self.reach.settings,
                    policy=HostKeyPolicy(trusted_fingerprints=set(self.reach.trusted)),
                    agent_python=self.reach.agent_python or python, runs_root=runs_root)
            except UnknownHostKeyError as exc:
                if self.confirm_host_key is None:
                    raise
                async with self._ask:
                    if exc.fingerprint not in self.reach.trusted:
                        if not await self.confirm_host_key(exc):
                            raise
                        self.reach.trusted.add(exc.fingerprint)


class NodesFlow:
    """One multi-node launch: connect, check, preflight, start, watch, stop (see module doc)."""

    def __init__(self, plan: NodesPlan, reach: NodesReach | None = None,
                 on_event: OnEvent | None = None,
                 confirm_host_key: ConfirmHostKey | None = None) -> None:
        self.plan = plan
        self.reach = reach or NodesReach()
        self.on_event = on_event or (lambda event: None)
        self.confirm_host_key = confirm_host_key
        self.connector = HostConnector(self.reach, confirm_host_key)
        self.group: NodeGroup | None = None
        self.record: GroupRecord | None = None
        self.preflight_nodes: list[NodePreflight] = []
        self.fixes_by_rule: dict[str, list[str]] = {}

    def _emit(self, event: NodesEvent) -> None:
        self.on_event(event)

    def _roots(self) -> dict[int, str]:
        root = self.reach.runs_root
        return {n.rank: root for n in self.plan.launches} if root else {}

    def _watch_connections(self, group: NodeGroup) -> None:
        for rank, host in enumerate(group.hosts):
            host.on_notice = (lambda text, rank=rank: self._emit(ConnectionNotice(rank, text)))

    async def connect(self) -> NodeGroup:
        """Every node connected (once; later calls return the same group)."""
        if self.group is not None:
            return self.group
        self._emit(Progress(f"connecting to {len(self.plan.launches)} nodes …"))
        self.group = await NodeGroup.connect(
            self.plan.launches, jumps=self.reach.jumps or list(self.plan.profile.ssh.jump) or None,
            agent_python=self.reach.agent_python, runs_roots=self._roots(),
            connector=self.connector)
        self._watch_connections(self.group)
        return self.group

    def check(self) -> bool:
        """The local check; False (and `CheckFailed`) when it finds errors."""
        errors, self.fixes_by_rule = local_check(self.plan.profile)
        if errors:
            self._emit(CheckFailed(errors))
        return not errors

    async def for_host_version(self) -> None:
        """Render the flags for the SGLang release rank 0 has (flags were renamed between
        releases), as a single launch does; preflight then checks that every node has it."""
        group = await self.connect()
        first = self.plan.launches[0]
        versions = await group.hosts[0].versions(first.python, first.env)
        host_version = versions.get("sglang")
        wanted = self.plan.profile.sglang_version
        if not host_version or host_version == wanted:
            return
        try:
            plan = NodesPlan.from_profile(self.plan.profile, str(host_version))
        except Exception as exc:  # a release the renderer does not know: the host's dry run decides
            self._emit(Note(f"rank 0 has SGLang {host_version}; keeping the profile's flags "
                            f"({exc})"))
            return
        self._emit(Note(f"rank 0 has SGLang {host_version} (profile: {wanted}); flags rendered "
                        "for the hosts' version"))
        self.plan = plan
        group.launches = list(plan.launches)

    async def preflight(self, dry_run: bool = False) -> bool:
        """Every node's preflight at once (flags rendered for the hosts' SGLang first); True
        when nothing blocks."""
        group = await self.connect()
        await self.for_host_version()
        self._emit(Progress("checking every node …"))
        self.preflight_nodes = await group.preflight(
            self.plan.preflight_requests(dry_run), rendezvous=self.plan.rendezvous,
            gpus_per_node=self.plan.gpus_per_node)
        ok = all(n.ok for n in self.preflight_nodes)
        self._emit(Preflighted(self.preflight_nodes, ok))
        return ok

    def _host_version(self) -> str | None:
        """The SGLang release rank 0 runs (preflight), else the profile's."""
        for node in self.preflight_nodes:
            if node.rank == 0 and node.report is not None and node.report.sglang_version:
                return str(node.report.sglang_version)
        return str(self.plan.profile.sglang_version) if self.plan.profile.sglang_version else None

    async def start(self) -> GroupRecord:
        """Start rank 0 first, then the others; save the group record and each node's run."""
        group = await self.connect()
        group_id = new_run_id()
        await group.start(self.plan.launch_requests(), group_id)
        record = group_record(group_id, group, self.plan.port,
                              jumps=self.reach.jumps or list(self.plan.profile.ssh.jump),
                              runs_roots=self._roots())
        record.save()
        save_node_records(group, record, self.plan.digest, self._host_version())
        self.record = record
        self._emit(Launched(group_id, dict(group.run_ids), record))
        return record

    async def watch(self) -> GroupResult:
        """The merged log until rank 0 serves or a node exits; the record keeps the outcome."""
        group = await self.connect()
        result = await group.watch(port=self.plan.port, sglang_version=self._host_version(),
                                   on_line=lambda line: self._emit(LogLine(line)),
                                   api_key=self.plan.api_key)
        if result.crash is not None:
            result = replace(result, crash=with_rule_fixes(result.crash, self.fixes_by_rule))
        if self.record is not None:
            self.record.outcome, self.record.detail = result.outcome, result.summary()
            self.record.save()
        self._emit(Finished(result))
        return result

    async def launch(self, follow: bool = True, dry_run: bool = False) -> GroupResult | None:
        """Check, preflight, start and (with `follow`) watch. None: nothing was started (the
        check or a node blocks) or started without following."""
        if not self.check():
            return None
        if not await self.preflight(dry_run):
            return None
        await self.start()
        return await self.watch() if follow else None

    async def stop(self, timeout_s: float = 30.0) -> dict[int, StopResult]:
        """Stop every node's run; the records say `stopped`."""
        group = await self.connect() if self.group is None else self.group
        results = await stop_group(group, self.record, timeout_s)
        self._emit(Stopped(results))
        return results

    async def close(self) -> None:
        """Close every connection (launched nodes keep running)."""
        if self.group is not None:
            with contextlib.suppress(RemoteError, OSError):
                await self.group.close()


async def stop_group(group: NodeGroup, record: GroupRecord | None,
                     timeout_s: float = 30.0) -> dict[int, StopResult]:
    """Stop every node of a group in parallel; the group record and each node's run record say
    `stopped` (what `nodes stop` and the screen's stop both do)."""
    results = await group.stop(timeout_s)
    if record is not None:
        record.outcome = "stopped"
        record.save()
    records = RunRecords()
    for rank, result in results.items():
        run = records.get(group.run_ids.get(rank, ""))
        if run is not None and result.was_running:
            run.outcome = "stopped"
            records.save(run)
    return results


def exit_code(result: GroupResult | None, started: bool) -> int:
    """0 ready (or started without following, or stopped by the user), 1 anything else."""
    if result is None:
        return 0 if started else 1
    return 0 if result.outcome in ("ready", "stopped") else 1
