"""`sglang-wizard nodes preflight|launch|list|logs|stop`: one server across the nodes of a profile.

    sglang-wizard nodes preflight PROFILE.toml       # every node at once: one table per node
    sglang-wizard nodes launch PROFILE.toml          # rank 0 first, merged log, ready on rank 0
    sglang-wizard nodes list                         # launches made from this machine
    sglang-wizard nodes logs GROUP [--node R] [-f]   # every node's log, or one node's
    sglang-wizard nodes stop GROUP                   # every node; confirms nothing is left

Exit codes: 0 ok, 1 the remote action failed (a node blocks preflight, a node crashed, a node
cannot be reached), 2 the tool's input (profile, not a multi-node profile, unknown group).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, TextIO

from wizard.errors import ToolInputError
from wizard.multinode import is_multinode
from wizard.profile import load_profile
from wizard.profile_problems import ProfileError
from wizard.sglang.errors import RenderError


def _options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ssh")
    group.add_argument("--jump", action="append", default=None, metavar="HOST",
                       help="jump host for every node (repeat for a chain; default: ssh.jump)")
    group.add_argument("--trust-host-key", action="append", default=[], metavar="SHA256:...",
                       help="accept this host-key fingerprint of an unknown node (repeatable)")
    group.add_argument("--ssh-config", type=Path, help="ssh client config (default ~/.ssh/config)")
    group.add_argument("--known-hosts", type=Path, help="known_hosts file")
    group.add_argument("-i", "--identity", type=Path, action="append", help="private key file")
    group.add_argument("--no-agent", action="store_true", help="do not use the ssh agent")
    group.add_argument("--remote-runs-dir",
                       help="runs directory on every node (default ~/.cache/sglang-wizard/runs)")


def register(sub: Any) -> None:
    """Add `nodes` and its actions."""
    nodes = sub.add_parser(
        "nodes", help="multi-node launch over SSH: preflight, launch, list, logs, stop",
        description="Run one SGLang server across the nodes of a profile's [nodes] list: every "
        "node gets the same command with its --node-rank and the rendezvous --dist-init-addr.")
    actions = nodes.add_subparsers(dest="nodes_command", metavar="ACTION")
    pre = actions.add_parser("preflight", help="preflight every node in parallel")
    pre.add_argument("profile", type=Path, help="profile TOML with [[nodes.hosts]]")
    pre.add_argument("--dry-run", action="store_true",
                     help="also run SGLang's own argument check on every node")
    _options(pre)
    pre.set_defaults(func=run_preflight)
    launch = actions.add_parser("launch", help="preflight, start rank 0 then the others, watch")
    launch.add_argument("profile", type=Path, help="profile TOML with [[nodes.hosts]]")
    launch.add_argument("--no-follow", action="store_true", help="start and return")
    launch.add_argument("--quiet-log", action="store_true", help="do not print the merged log")
    _options(launch)
    launch.set_defaults(func=run_launch)
    listing = actions.add_parser("list", help="multi-node launches made from this machine")
    listing.set_defaults(func=run_list)
    logs = actions.add_parser("logs", help="the merged log of a launch (or one node's)")
    logs.add_argument("group", help="group id (see `nodes list`)")
    logs.add_argument("--node", type=int, metavar="R", help="only node rank R")
    logs.add_argument("--follow", "-f", action="store_true", help="keep streaming")
    _options(logs)
    logs.set_defaults(func=run_logs)
    stop = actions.add_parser("stop", help="stop every node of a launch")
    stop.add_argument("group", help="group id (see `nodes list`)")
    stop.add_argument("--timeout", type=float, default=30.0, help="seconds before KILL")
    _options(stop)
    stop.set_defaults(func=run_stop)


def _settings(args: argparse.Namespace) -> Any:
    from wizard.remote.connection import SshSettings

    settings = SshSettings()
    if args.ssh_config is not None:
        settings.config_paths = [args.ssh_config]
    if args.known_hosts is not None:
        settings.known_hosts = args.known_hosts
    if args.identity:
        settings.client_keys = [Path(k).expanduser() for k in args.identity]
    settings.use_agent = not args.no_agent
    return settings


def _reach(args: argparse.Namespace, profile: Any = None) -> Any:
    from wizard.remote.nodes_flow import NodesReach

    jumps = args.jump or (list(profile.ssh.jump) if profile is not None else None) or None
    return NodesReach(settings=_settings(args), trusted=set(args.trust_host_key), jumps=jumps,
                      runs_root=getattr(args, "remote_runs_dir", None))


def _run(coro: Any) -> int:
    from wizard.remote.connection import RemoteError

    try:
        return int(asyncio.run(coro))
    except RemoteError as exc:
        print(f"sglang-wizard: {exc}", file=sys.stderr)
        return 1


def _load(path: Path) -> Any:
    """The profile's `NodesPlan` (ToolInputError for a profile that is not multi-node)."""
    from wizard.remote.nodes_flow import NodesPlan

    try:
        profile = load_profile(path)
    except ProfileError as exc:
        raise ToolInputError(str(exc)) from None
    if not is_multinode(profile) or not profile.nodes.hosts:
        raise ToolInputError(f"{path}: no [[nodes.hosts]]: list every node (rank 0 first), see "
                             "docs/multinode.md")
    try:
        return NodesPlan.from_profile(profile)
    except RenderError as exc:
        raise ToolInputError(f"{path}: {exc.message}") from None


def _print_preflight(nodes: list[Any], out: TextIO) -> None:
    for node in nodes:
        mark = "ok" if node.ok else "BLOCKED"
        print(f"node {node.rank} {node.host}: {mark}", file=out)
        for row in node.rows():
            flag = "ok " if row.ok else ("!! " if row.blocking else "?  ")
            print(f"  {flag}{row.name}: {row.detail}", file=out)


class _Printer:
    """Prints the flow's events (`wizard.remote.nodes_flow`) as the terminal lines."""

    def __init__(self, out: TextIO, show_log: bool = True) -> None:
        self.out = out
        self.show_log = show_log

    def __call__(self, event: Any) -> None:
        from wizard.remote import nodes_flow as f

        out = self.out
        if isinstance(event, f.CheckFailed):
            for error in event.errors:
                print(f"[ERROR] {error}", file=out)
            print("sglang-wizard: the check finds errors; fix them first (sglang-wizard check)",
                  file=sys.stderr)
        elif isinstance(event, f.Note):
            print(f"note: {event.text}", file=out)
        elif isinstance(event, f.Preflighted):
            _print_preflight(event.nodes, out)
            if not event.ok:
                print("sglang-wizard: a node blocks the launch (see above)", file=sys.stderr)
        elif isinstance(event, f.Launched):
            runs = ", ".join(event.run_ids[r] for r in sorted(event.run_ids))
            print(f"group {event.group_id}: started {len(event.run_ids)} nodes ({runs})",
                  file=out)
        elif isinstance(event, f.LogLine):
            if self.show_log:
                print(event.line.text(), file=out)
        elif isinstance(event, f.ConnectionNotice):
            print(f"-- node {event.rank}: {event.text}", file=out)
        elif isinstance(event, f.Finished):
            result = event.result
            for line in result.lines():
                print(line, file=out)
            if result.crash is not None:
                for line in result.crash.explanation.summary().splitlines()[:20]:
                    print(f"  [n{result.failed_rank}] {line}", file=out)
        out.flush()


def run_preflight(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`nodes preflight`."""
    from wizard.remote.nodes_flow import NodesFlow

    stream = out or sys.stdout
    plan = _load(args.profile)
    flow = NodesFlow(plan, _reach(args, plan.profile), _Printer(stream))

    async def go() -> int:
        try:
            ok = await flow.preflight(dry_run=args.dry_run)
        finally:
            await flow.close()
        return 0 if ok else 1

    return _run(go())


def run_launch(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`nodes launch`: check, preflight every node, start rank 0 then the others, watch."""
    from wizard.remote.nodes_flow import NodesFlow, exit_code

    stream = out or sys.stdout
    plan = _load(args.profile)
    flow = NodesFlow(plan, _reach(args, plan.profile), _Printer(stream, not args.quiet_log))

    async def go() -> int:
        try:
            result = await flow.launch(follow=not args.no_follow)
        finally:
            await flow.close()
        return exit_code(result, started=flow.record is not None)

    return _run(go())


def _connector(args: argparse.Namespace) -> Any:
    """How `nodes logs|stop` reach the recorded nodes (trusted keys, settings as given)."""
    from wizard.remote.nodes_flow import HostConnector

    return HostConnector(_reach(args))


def _record(group_id: str) -> Any:
    from wizard.remote.multinode import GroupRecord

    try:
        return GroupRecord.load(group_id)
    except (FileNotFoundError, ValueError):
        known = ", ".join(GroupRecord.list_ids()[-5:]) or "none"
        raise ToolInputError(f"no multi-node launch {group_id!r} from this machine "
                             f"(recent: {known})") from None


def run_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`nodes list`."""
    from wizard.remote.multinode import GroupRecord

    stream = out or sys.stdout
    for group_id in GroupRecord.list_ids():
        record = GroupRecord.load(group_id)
        hosts = ", ".join(str(n["target"]) for n in record.nodes)
        print(f"{group_id}  {record.outcome:9s} {len(record.nodes)} nodes: {hosts}", file=stream)
    return 0


def run_logs(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`nodes logs GROUP`: the merged log (`[nR]` prefix), to the end or following it."""
    from wizard.remote.multinode import NodeGroup, NodeLine

    stream = out or sys.stdout
    record = _record(args.group)

    async def go() -> int:
        group = await NodeGroup.reattach(record, connector=_connector(args))
        for rank, host in enumerate(group.hosts):  # a lost or stalled link is said, then re-made
            host.on_notice = (lambda text, rank=rank: print(f"-- node {rank}: {text}",
                                                            file=stream, flush=True))
        async with group:
            if args.node is not None:
                if args.node not in group.run_ids:
                    raise ToolInputError(f"group {args.group} has nodes "
                                         f"{sorted(group.run_ids)}, not {args.node}")
                group.run_ids = {args.node: group.run_ids[args.node]}
            if args.follow:
                async for rank, chunk in group.lines():
                    for line in chunk.lines if chunk else []:
                        print(NodeLine(rank, line).text(), file=stream, flush=True)
                return 0
            for rank in sorted(group.run_ids):
                host = group.hosts[rank]
                status = await host.run_status(group.run_ids[rank])
                result = await host.run(["tail", "-n", "200", f"{status.run_dir}/log"])
                for line in result.stdout.splitlines():
                    print(NodeLine(rank, line).text(), file=stream)
            return 0

    return _run(go())


def run_stop(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`nodes stop GROUP`: every node, in parallel; exit 1 when anything is left anywhere."""
    from wizard.remote.multinode import NodeGroup
    from wizard.remote.nodes_flow import stop_group

    stream = out or sys.stdout
    record = _record(args.group)

    async def go() -> int:
        group = await NodeGroup.reattach(record, connector=_connector(args))
        async with group:
            results = await stop_group(group, record, args.timeout)
        for rank, result in sorted(results.items()):
            state = "clean" if result.clean else f"LEFT {result.remaining}"
            print(f"node {rank}: {'stopped' if result.was_running else 'not running'}, {state}",
                  file=stream)
        return 0 if all(r.clean for r in results.values()) else 1

    return _run(go())
