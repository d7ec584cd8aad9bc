"""Launch one SGLang server across several nodes over SSH (the async side of `wizard.multinode`).

`NodeGroup` holds one `RemoteHost` per node and does every multi-node step:

* `preflight`: every node's preflight in parallel (versions, GPUs, paths, port, dry run), plus
  what only makes sense across nodes: the same SGLang release and the same model config
  (`config.json` hash) on every node, the rendezvous port free on rank 0 and the rendezvous host
  resolvable from every node, and the network interfaces of each host (NCCL/Gloo hints).
* `start`: rank 0 first (it hosts the rendezvous), then the others in parallel; run ids
  `GROUP-nR` so records and run directories never collide (two nodes may be one machine).
* `watch`: one merged live log (`NodeLine`, shown with a `[nR]` prefix) with a `RunWatcher` per
  node; ready when rank 0 serves; when any node's server exits before that, every other node is
  stopped and the result names that node and its traceback.
* `stop`: every node in parallel, each confirming nothing of its run is left.

`GroupRecord` is the local record of a launch (hosts and run ids, no secret values), so `nodes
logs` / `nodes stop` find every node again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import shlex
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wizard.files import write_text
from wizard.multinode import IFNAME_VARS, NodeLaunch, format_rendezvous, parse_rendezvous
from wizard.remote.connection import HostKeyPolicy, RemoteError, SshSettings
from wizard.remote.container import launch_spec, run_preflight
from wizard.remote.preflight import PreflightCheck, PreflightReport, PreflightRequest
from wizard.remote.records import RunRecord, RunRecords, mask_argv, mask_env, new_run_id, state_dir
from wizard.remote.runs import (
    CrashReport,
    LaunchRequest,
    LogChunk,
    ReadyReport,
    RunStatus,
    StopResult,
)
from wizard.remote.session import RemoteHost
from wizard.remote.watch import RunWatcher
from wizard.secrets import UnsetSecretError, resolve_argv, resolve_env


def asyncssh_errors() -> type[Exception]:
    """asyncssh's base error (imported late: the module is only needed for remote work)."""
    import asyncssh

    return asyncssh.Error


def target_spec(launch: NodeLaunch) -> str:
    """What `RemoteHost.connect` gets for a node: its host with the node's user and port."""
    spec = launch.host
    if launch.user and "@" not in spec:
        spec = f"{launch.user}@{spec}"
    if launch.port and not spec.rsplit("@", 1)[-1].count(":"):
        spec = f"{spec}:{launch.port}"
    return spec


@dataclass(frozen=True)
class NodeLine:
    """One log line of one node (the merged log)."""

    rank: int
    line: str

    def text(self) -> str:
        """`[n1] line`."""
        return f"[n{self.rank}] {self.line}"


@dataclass
class NodePreflight:
    """One node's preflight: the host's own report plus the cross-node checks for it."""

    rank: int
    host: str
    report: PreflightReport | None
    error: str | None = None
    checks: list[PreflightCheck] = field(default_factory=list)
    interfaces: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing blocks this node."""
        return (self.error is None and self.report is not None and self.report.ok
                and all(c.ok or not c.blocking for c in self.checks))

    def rows(self) -> list[PreflightCheck]:
        """Every check of this node, host checks first."""
        if self.error is not None:
            return [PreflightCheck("connect", False, self.error)]
        return [*(self.report.checks if self.report else []), *self.checks]


@dataclass
class GroupResult:
    """How a multi-node start ended."""

    outcome: str  # ready | refused (rank 0 serves but refused the probe) | crashed | stopped
    failed_rank: int | None = None
    crash: CrashReport | None = None
    ready: ReadyReport | None = None
    statuses: dict[int, RunStatus] = field(default_factory=dict)
    stopped: dict[int, StopResult] = field(default_factory=dict)
    startup_s: float | None = None

    def summary(self) -> str:
        """One line for the terminal."""
        if self.outcome == "ready":
            return f"ready: every node joined, rank 0 serves ({self.startup_s or 0:.1f} s)"
        if self.outcome == "refused":
            why = self.ready.problem if self.ready is not None else "refused"
            return f"not ready: every node joined, but rank 0 {why}"
        if self.outcome == "crashed":
            why = self.crash.explanation.summary() if self.crash else "no traceback found"
            return f"node {self.failed_rank} crashed, every other node was stopped: {why}"
        return "stopped by the user"

    def lines(self) -> list[str]:
        """The summary, then what rank 0 answered (as for one node: /health, the test prompt)."""
        lines = [self.summary()]
        if self.ready is not None:
            lines += self.ready.summary_lines()
            if self.outcome == "refused" and "API key" in str(self.ready.problem):
                lines.append("  the probe sent the profile's --api-key; check it matches the server's")
        return lines


@dataclass
class GroupRecord:
    """The local record of a multi-node launch (no secret values)."""

    group_id: str
    nodes: list[dict[str, Any]]  # rank, target, run_id, runs_root, python, argv, env
    port: int | None
    started_at: float
    jumps: list[str] = field(default_factory=list)
    outcome: str = "launched"
    detail: str = ""

    def save(self, directory: Path | None = None) -> Path:
        """Write `<state>/multinode/<group>.json` atomically, secrets masked."""
        folder = directory or state_dir() / "multinode"
        folder.mkdir(parents=True, exist_ok=True)
        data = asdict(self)
        for node in data["nodes"]:
            node["env"] = mask_env(node.get("env") or {})
            node["argv"] = mask_argv(node.get("argv") or [])
        path = folder / f"{self.group_id}.json"
        write_text(path, json.dumps(data, indent=1, sort_keys=True))
        return path

    @classmethod
    def load(cls, group_id: str, directory: Path | None = None) -> GroupRecord:
        """Read a record (FileNotFoundError when this machine has none of that id)."""
        folder = directory or state_dir() / "multinode"
        data = json.loads((folder / f"{group_id}.json").read_text())
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    @staticmethod
    def list_ids(directory: Path | None = None) -> list[str]:
        """Every recorded group id, oldest first."""
        folder = directory or state_dir() / "multinode"
        return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


class NodeGroup:
    """The connected nodes of one multi-node launch, rank 0 first."""

    def __init__(self, launches: Sequence[NodeLaunch], hosts: Sequence[RemoteHost]) -> None:
        self.launches = list(launches)
        self.hosts = list(hosts)
        self.run_ids: dict[int, str] = {}

    @classmethod
    async def connect(
        cls,
        launches: Sequence[NodeLaunch],
        *,
        settings: SshSettings | None = None,
        policy: HostKeyPolicy | None = None,
        jumps: Sequence[str] | None = None,
        agent_python: str | None = None,
        runs_roots: dict[int, str] | None = None,
        connector: Connector | None = None,
    ) -> NodeGroup:
        """Connect every node at once; RemoteError names the nodes that could not be reached.
        `connector` replaces the plain `RemoteHost.connect` (e.g. one that asks before trusting
        an unknown host key)."""

        targets = [(n.label, target_spec(n), agent_python or n.python,
                    (runs_roots or {}).get(n.rank)) for n in launches]
        return cls(launches, await connect_targets(targets, settings=settings, policy=policy,
                                                   jumps=jumps, connector=connector))

    @classmethod
    async def reattach(cls, record: GroupRecord, *, settings: SshSettings | None = None,
                       policy: HostKeyPolicy | None = None,
                       connector: Connector | None = None) -> NodeGroup:
        """The nodes of a recorded launch, connected again (for logs and stop)."""
        nodes = sorted(record.nodes, key=lambda n: int(n["rank"]))
        targets = [(f"node {n['rank']} ({n['target']})", str(n["target"]),
                    str(n.get("python") or "python3"), n.get("runs_root")) for n in nodes]
        hosts = await connect_targets(targets, settings=settings, policy=policy,
                                      jumps=record.jumps or None, connector=connector)
        launches = [NodeLaunch(int(n["rank"]), len(nodes), str(n["target"]), None, None,
                               str(n.get("python") or "python3"), None,
                               list(n.get("argv") or [])) for n in nodes]
        group = cls(launches, hosts)
        group.run_ids = {int(n["rank"]): str(n["run_id"]) for n in nodes if n.get("run_id")}
        return group

    async def close(self) -> None:
        """Close every connection."""
        await asyncio.gather(*(h.close() for h in self.hosts), return_exceptions=True)

    async def __aenter__(self) -> NodeGroup:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -------------------------------------------------------------------------------- preflight

    async def preflight(
        self, requests: Sequence[PreflightRequest], *, rendezvous: str | None = None,
        gpus_per_node: int | None = None,
    ) -> list[NodePreflight]:
        """Every node's preflight in parallel, then the checks across nodes (`gpus_per_node`:
        tp * pp / nnodes, compared with each host's GPU count)."""

        async def one(rank: int) -> NodePreflight:
            host = self.hosts[rank]
            try:
                report = await run_preflight(host, requests[rank])
            except RemoteError as exc:
                return NodePreflight(rank, host.label, None, str(exc))
            result = NodePreflight(rank, host.label, report)
            result.interfaces = await self._interfaces(host, requests[rank].python)
            model = requests[rank].model_path
            if model:
                try:
                    files = await host.model_files(model, ["config.json"])
                except RemoteError as exc:
                    files = {}
                    result.checks.append(PreflightCheck("model config", False, str(exc), False))
                if "config.json" in files:
                    digest = hashlib.sha256(files["config.json"].encode()).hexdigest()[:12]
                    result.checks.append(PreflightCheck("model config", True, digest, False))
            return result

        nodes = list(await asyncio.gather(*(one(r) for r in range(len(self.hosts)))))
        if gpus_per_node:
            for node in nodes:
                gpus = node.report.gpus if node.report else None
                if gpus is not None and gpus.error is None:
                    node.checks.append(PreflightCheck(
                        "GPUs per node", gpus.count >= gpus_per_node,
                        f"{gpus.count} GPUs, the node runs {gpus_per_node} (tp * pp / nnodes)"))
        self._compare(nodes)
        if rendezvous:
            await self._rendezvous_checks(nodes, requests, rendezvous)
        self._interface_hints(nodes, requests)
        return nodes

    @staticmethod
    def _compare(nodes: list[NodePreflight]) -> None:
        """Same SGLang release and the same model config on every node."""
        versions = {n.rank: n.report.sglang_version for n in nodes if n.report}
        if len(set(versions.values())) > 1:
            text = ", ".join(f"node {r}: {v or 'none'}" for r, v in sorted(versions.items()))
            for node in nodes:
                node.checks.append(PreflightCheck(
                    "same SGLang", False, f"the nodes run different SGLang releases ({text})"))
        digests = {n.rank: c.detail for n in nodes for c in n.checks if c.name == "model config"}
        if len(set(digests.values())) > 1:
            text = ", ".join(f"node {r}: {d}" for r, d in sorted(digests.items()))
            for node in nodes:
                node.checks.append(PreflightCheck(
                    "same model", False, f"config.json differs between nodes ({text})"))

    async def _rendezvous_checks(self, nodes: list[NodePreflight],
                                 requests: Sequence[PreflightRequest], rendezvous: str) -> None:
        """Rank 0 binds the rendezvous port (it must be free) and listens while every other node
        connects to HOST:PORT as SGLang's workers will: the address is reachable or it is not."""
        host_name, port = parse_rendezvous(rendezvous)
        others = [n for n in nodes if n.rank != 0 and n.error is None]
        rank0 = nodes[0]
        if rank0.error is not None:
            return
        python = requests[0].python
        listen = (
            "import socket,sys\n"
            "try:\n s = socket.create_server(('', int(sys.argv[1])))\n"
            "except OSError as e:\n print('busy', e, flush=True); sys.exit(1)\n"
            "print('listening', flush=True)\ns.settimeout(float(sys.argv[3]))\n"
            "for _ in range(int(sys.argv[2])):\n"
            " try:\n  s.accept()[0].close()\n except OSError:\n  break\n")
        command = shlex.join([python, "-c", listen, str(port), str(len(others)), "30"])
        try:
            process = await self.hosts[0].connection.create_process(command)
            first = await asyncio.wait_for(process.stdout.readline(), 30)
        except (OSError, TimeoutError, asyncssh_errors()) as exc:
            rank0.checks.append(PreflightCheck("rendezvous port", False, f"cannot test: {exc}"))
            return
        if not str(first).startswith("listening"):
            rank0.checks.append(PreflightCheck(
                "rendezvous port", False, f"port {port} is taken on rank 0: {str(first).strip()}"))
            process.close()
            return
        rank0.checks.append(PreflightCheck("rendezvous port", True, f"{port} free on rank 0"))
        connect = ("import socket,sys\ntry:\n socket.create_connection((sys.argv[1], "
                   "int(sys.argv[2])), timeout=10).close()\nexcept OSError as e:\n"
                   " print(e); sys.exit(1)")

        async def reach(node: NodePreflight) -> None:
            try:
                result = await self.hosts[node.rank].run(
                    [requests[node.rank].python, "-c", connect, host_name, str(port)],
                    timeout_s=30)
            except RemoteError as exc:  # the node's connection went meanwhile: said, not raised
                node.checks.append(PreflightCheck("rendezvous", False, f"cannot test: {exc}"))
                return
            node.checks.append(PreflightCheck(
                "rendezvous", result.exit_status == 0,
                f"reaches {format_rendezvous(host_name, port)}" if result.exit_status == 0
                else f"cannot reach {format_rendezvous(host_name, port)}: "
                f"{result.stdout.strip()}"))

        try:
            await asyncio.gather(*(reach(n) for n in others))
        finally:
            process.close()

    @staticmethod
    async def _interfaces(host: RemoteHost, python: str) -> list[str]:
        code = ("import os\ntry:\n print(' '.join(sorted(os.listdir('/sys/class/net'))))\n"
                "except OSError:\n print('')")
        try:
            result = await host.run([python, "-c", code], timeout_s=30)
        except RemoteError:
            return []
        return [n for n in result.stdout.split() if n != "lo"]

    def _interface_hints(self, nodes: list[NodePreflight],
                         requests: Sequence[PreflightRequest]) -> None:
        for node in nodes:
            env = requests[node.rank].env
            if len(node.interfaces) > 1 and not any(v in env for v in IFNAME_VARS):
                node.checks.append(PreflightCheck(
                    "interface", False,
                    f"{len(node.interfaces)} interfaces ({', '.join(node.interfaces)}) and no "
                    "NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME: set nodes.interface to the one the "
                    "nodes reach each other on", blocking=False))

    # ------------------------------------------------------------------------------- launch

    async def start(self, requests: Sequence[LaunchRequest],
                    group_id: str | None = None) -> list[RunStatus]:
        """Start rank 0 first (it hosts the rendezvous), then every other node in parallel."""
        group = group_id or new_run_id()
        for rank, request in enumerate(requests):
            request.run_id = f"{group}-n{rank}"
        first = await self.hosts[0].launch(requests[0])
        self.run_ids[0] = first.run_id
        results = await asyncio.gather(*(self.hosts[r].launch(requests[r])
                                         for r in range(1, len(requests))),
                                       return_exceptions=True)
        started: list[RunStatus] = [first]
        failed: list[str] = []
        for rank, result in enumerate(results, start=1):
            if isinstance(result, BaseException):
                failed.append(f"node {rank}: {result}")
            else:
                self.run_ids[rank] = result.run_id
                started.append(result)
        if failed:  # never leave a partial group running
            with contextlib.suppress(RemoteError):
                await self.stop()
            raise RemoteError("launch failed, every started node was stopped: "
                              + "; ".join(failed))
        return started

    async def lines(self, offsets: dict[int, int] | None = None
                    ) -> AsyncGenerator[tuple[int, LogChunk | None], None]:
        """Every node's log chunks as they come (merged); `(rank, None)` when a node's server exited."""
        queue: asyncio.Queue[tuple[int, LogChunk | BaseException | None]] = asyncio.Queue()

        async def pump(rank: int) -> None:
            try:
                async for chunk in self.hosts[rank].follow_log(
                        self.run_ids[rank], (offsets or {}).get(rank, 0), poll_s=0.05):
                    await queue.put((rank, chunk))
                await queue.put((rank, None))
            except (RemoteError, OSError) as exc:
                await queue.put((rank, exc))

        tasks = [asyncio.create_task(pump(rank)) for rank in sorted(self.run_ids)]
        try:
            remaining = len(tasks)
            while remaining:
                rank, item = await queue.get()
                if isinstance(item, BaseException):
                    raise RemoteError(f"node {rank}: {item}") from item
                if item is None:
                    remaining -= 1
                yield rank, item
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def watch(
        self,
        *,
        port: int | None,
        sglang_version: str | None = None,
        on_line: Callable[[NodeLine], None] | None = None,
        check_ready: bool = True,
        until_ready: bool = True,
        api_key: str | None = None,
    ) -> GroupResult:
        """Follow every node until rank 0 is ready (probed with the server's API key: a refusal
        is `refused`, not ready), or until a node's server exits (then stop the others and
        explain that node's crash)."""
        watchers = {rank: RunWatcher() for rank in self.run_ids}
        started = time.monotonic()
        async with contextlib.aclosing(self.lines()) as stream:
            return await self._watch(stream, watchers, started, port, sglang_version, on_line,
                                     check_ready, until_ready, api_key)

    async def _watch(self, stream: AsyncIterator[tuple[int, LogChunk | None]],
                     watchers: dict[int, RunWatcher], started: float, port: int | None,
                     sglang_version: str | None, on_line: Callable[[NodeLine], None] | None,
                     check_ready: bool, until_ready: bool,
                     api_key: str | None = None) -> GroupResult:
        drain: dict[int, int] | None = None
        ready_at = 0.0
        async for rank, chunk in stream:
            if chunk is None:
                status = await self.hosts[rank].run_status(self.run_ids[rank])
                if status.stopped:
                    return GroupResult("stopped", statuses={rank: status})
                crash = await self.hosts[rank].crash_report(self.run_ids[rank], sglang_version)
                stopped = await self.stop()
                return GroupResult("crashed", rank, crash, statuses={rank: status},
                                   stopped=stopped)
            watchers[rank].feed(chunk)
            if on_line is not None:
                for line in chunk.lines:
                    on_line(NodeLine(rank, line))
            if rank == 0 and watchers[0].tracker.ready and until_ready and drain is None:
                ready_at = time.monotonic() - started
                # show what the other nodes logged up to now before returning
                drain = {r: (await self.hosts[r].run_status(self.run_ids[r])).log_size
                         for r in self.run_ids if r != 0}
            if drain is not None and all(watchers[r].offset >= size for r, size in drain.items()):
                ready = (await self.hosts[0].check_ready(port, api_key=api_key)
                         if check_ready and port else None)
                outcome = "refused" if ready is not None and ready.problem else "ready"
                return GroupResult(outcome, ready=ready, startup_s=ready_at)
        return GroupResult("stopped")

    async def stop(self, timeout_s: float = 30.0) -> dict[int, StopResult]:
        """Stop every node's run in parallel; each confirms nothing of it is left."""
        ranks = sorted(self.run_ids)
        results = await asyncio.gather(
            *(self.hosts[r].stop(self.run_ids[r], timeout_s) for r in ranks),
            return_exceptions=True)
        out: dict[int, StopResult] = {}
        errors = []
        for rank, result in zip(ranks, results, strict=True):
            if isinstance(result, BaseException):
                errors.append(f"node {rank}: {result}")
            else:
                out[rank] = result
        if errors:
            raise RemoteError("; ".join(errors))
        return out


Connector = Callable[[str, Sequence[str] | None, str, str | None], Awaitable[RemoteHost]]
"""Connects (target, jumps, agent python, runs root) to a host."""


async def connect_targets(
    targets: Sequence[tuple[str, str, str, str | None]],
    *,
    settings: SshSettings | None = None,
    policy: HostKeyPolicy | None = None,
    jumps: Sequence[str] | None = None,
    connector: Connector | None = None,
) -> list[RemoteHost]:
    """Connect (label, target, agent python, runs root) all at once; RemoteError names every
    node that could not be reached (the others are closed again)."""

    async def one(target: str, python: str, runs_root: str | None) -> RemoteHost:
        if connector is not None:
            return await connector(target, jumps, python, runs_root)
        return await RemoteHost.connect(target, jumps=jumps, settings=settings, policy=policy,
                                        agent_python=python, runs_root=runs_root)

    results = await asyncio.gather(*(one(t, p, r) for _label, t, p, r in targets),
                                   return_exceptions=True)
    failed = [(label, r) for (label, *_rest), r in zip(targets, results, strict=True)
              if isinstance(r, BaseException)]
    if failed:
        for result in results:
            if isinstance(result, RemoteHost):
                await result.close()
        raise RemoteError("; ".join(f"{label}: {r}" for label, r in failed))
    return [r for r in results if isinstance(r, RemoteHost)]


def launch_requests(launches: Sequence[NodeLaunch], profile_toml: str = "",
                    port: int | None = None, profile_hash: str | None = None,
                    profile: Any = None) -> list[LaunchRequest]:
    """One LaunchRequest per node from the rendered per-node launches (in the profile's
    container image, with host networking, when it has a `[container]` table). `profile_toml`
    is what each node's run directory keeps: give the masked text (`flow.masked_profile_toml`),
    never the profile file as written. Secret references (`env:HF_TOKEN`, `--api-key
    env:SGLANG_WIZARD_API_KEY`) are read from this environment (RemoteError when a secret
    flag's variable is unset: no node starts without its key)."""
    def box(n: NodeLaunch) -> dict[str, Any] | None:
        if profile is None or profile.container is None:
            return None
        return launch_spec(profile, n.env, multinode=n.nnodes > 1)

    try:
        return [LaunchRequest(argv=resolve_argv(n.argv), env=resolve_env(n.env),
                              python=n.python, profile_toml=profile_toml,
                              port=port if n.rank == 0 else None, workdir=n.workdir,
                              profile_hash=profile_hash, container=box(n)) for n in launches]
    except UnsetSecretError as exc:
        raise RemoteError(str(exc)) from None


def group_record(group_id: str, group: NodeGroup, port: int | None,
                 jumps: Sequence[str] = (), runs_roots: dict[int, str] | None = None
                 ) -> GroupRecord:
    """The record of a started group (targets and run ids per node)."""
    nodes = [{"rank": n.rank, "target": target_spec(n), "run_id": group.run_ids.get(n.rank),
              "runs_root": (runs_roots or {}).get(n.rank), "python": n.python,
              "argv": list(n.argv), "env": dict(n.env)} for n in group.launches]
    return GroupRecord(group_id, nodes, port, time.time(), list(jumps))


def command_text(launch: NodeLaunch) -> str:
    """The node's command as a shell line (secrets masked) for tables and logs."""
    env = mask_env(launch.env)
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return (prefix + " " if prefix else "") + shlex.join(mask_argv(launch.command()))


def save_node_records(group: NodeGroup, record: GroupRecord, profile_digest: str,
                      sglang_version: str | None = None) -> None:
    """One run record per node (`runs.jsonl`), so `sglang-wizard runs/logs/stop GROUP-nR` find
    each node's run like any single launch."""
    records = RunRecords()
    for node in record.nodes:
        rank = int(node["rank"])
        if not node.get("run_id"):
            continue
        records.save(RunRecord(
            run_id=str(node["run_id"]), host=group.hosts[rank].host_key,
            profile_hash=profile_digest, started_at=record.started_at,
            target=str(node["target"]), jumps=list(record.jumps),
            runs_root=node.get("runs_root"), port=record.port if rank == 0 else None,
            python=str(node.get("python") or "python3"), argv=list(node.get("argv") or []),
            env=dict(node.get("env") or {}), sglang_version=sglang_version,
            detail=f"node {rank} of group {record.group_id}"))
