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

from wizard.cli import ToolInputError


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


def _policy(args: argparse.Namespace) -> Any:
    from wizard.remote.connection import HostKeyPolicy

    return HostKeyPolicy(trusted_fingerprints=set(args.trust_host_key))


def _run(coro: Any) -> int:
    from wizard.remote.connection import RemoteError

    try:
        return int(asyncio.run(coro))
    except RemoteError as exc:
        print(f"sglang-wizard: {exc}", file=sys.stderr)
        return 1


def _load(path: Path) -> tuple[Any, str, list[Any]]:
    from wizard.multinode import is_multinode, node_launches
    from wizard.profile import ProfileError, load_profile
    from wizard.sglang.errors import RenderError

    try:
        profile = load_profile(path)
        text = path.read_text(encoding="utf-8")
    except ProfileError as exc:
        raise ToolInputError(str(exc)) from None
    if not is_multinode(profile) or not profile.nodes.hosts:
        raise ToolInputError(f"{path}: no [[nodes.hosts]]: list every node (rank 0 first), see "
                             "docs/multinode.md")
    try:
        return profile, text, node_launches(profile)
    except RenderError as exc:
        raise ToolInputError(f"{path}: {exc.message}") from None


def _print_preflight(nodes: list[Any], out: TextIO) -> None:
    for node in nodes:
        mark = "ok" if node.ok else "BLOCKED"
        print(f"node {node.rank} {node.host}: {mark}", file=out)
        for row in node.rows():
            flag = "ok " if row.ok else ("!! " if row.blocking else "?  ")
            print(f"  {flag}{row.name}: {row.detail}", file=out)


async def _preflight(args: argparse.Namespace, profile: Any, launches: list[Any],
                     out: TextIO) -> tuple[Any, bool]:
    from wizard.exports import gpus_per_node
    from wizard.multinode import dist_init_addr
    from wizard.remote.multinode import NodeGroup
    from wizard.remote.session import PreflightRequest

    group = await NodeGroup.connect(launches, settings=_settings(args), policy=_policy(args),
                                    jumps=args.jump or profile.ssh.jump or None,
                                    runs_roots=_roots(args, launches))
    requests = [PreflightRequest(
        python=n.python, env=n.env, port=profile.server.port if n.rank == 0 else None,
        model_path=profile.model.path, draft_model_path=profile.speculative.draft_model_path,
        argv=list(n.argv) if getattr(args, "dry_run", False) else None,
        container=profile if profile.container is not None else None) for n in launches]
    nodes = await group.preflight(requests, rendezvous=dist_init_addr(profile),
                                  gpus_per_node=gpus_per_node(profile))
    _print_preflight(nodes, out)
    return group, all(n.ok for n in nodes)


def _roots(args: argparse.Namespace, launches: list[Any]) -> dict[int, str]:
    root = getattr(args, "remote_runs_dir", None)
    return {n.rank: root for n in launches} if root else {}


def _local_check(profile: Any, out: TextIO) -> bool:
    from wizard.api import check_profile

    report = check_profile(profile, verify_fixes=False)
    for finding in report.errors:
        print(f"[ERROR] {finding.rule}: {finding.message}", file=out)
    return not report.errors


def run_preflight(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`nodes preflight`."""
    stream = out or sys.stdout
    profile, _text, launches = _load(args.profile)

    async def go() -> int:
        group, ok = await _preflight(args, profile, launches, stream)
        await group.close()
        return 0 if ok else 1

    return _run(go())


def run_launch(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`nodes launch`: check, preflight every node, start rank 0 then the others, watch."""
    from wizard.remote.multinode import group_record, launch_requests, save_node_records
    from wizard.remote.records import new_run_id, profile_hash

    stream = out or sys.stdout
    profile, text, launches = _load(args.profile)
    if not _local_check(profile, stream):
        print("sglang-wizard: the check finds errors; fix them first (sglang-wizard check)",
              file=sys.stderr)
        return 1

    async def go() -> int:
        group, ok = await _preflight(args, profile, launches, stream)
        async with group:
            if not ok:
                print("sglang-wizard: a node blocks the launch (see above)", file=sys.stderr)
                return 1
            group_id = new_run_id()
            await group.start(launch_requests(launches, text, profile.server.port, profile),
                              group_id)
            record = group_record(group_id, group, profile.server.port,
                                  jumps=args.jump or profile.ssh.jump,
                                  runs_roots=_roots(args, launches))
            record.save()
            save_node_records(group, record, profile_hash(text), profile.sglang_version)
            print(f"group {group_id}: started {len(launches)} nodes "
                  f"({', '.join(group.run_ids[r] for r in sorted(group.run_ids))})", file=stream)
            if args.no_follow:
                return 0

            def show(line: Any) -> None:
                if not args.quiet_log:
                    print(line.text(), file=stream, flush=True)

            result = await group.watch(port=profile.server.port,
                                       sglang_version=profile.sglang_version, on_line=show)
            record.outcome = result.outcome
            record.detail = result.summary()
            record.save()
            print(result.summary(), file=stream)
            if result.crash is not None:
                for line in result.crash.explanation.summary().splitlines()[:20]:
                    print(f"  [n{result.failed_rank}] {line}", file=stream)
            return 0 if result.outcome == "ready" else 1

    return _run(go())


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
        group = await NodeGroup.reattach(record, settings=_settings(args), policy=_policy(args))
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

    stream = out or sys.stdout
    record = _record(args.group)

    async def go() -> int:
        group = await NodeGroup.reattach(record, settings=_settings(args), policy=_policy(args))
        async with group:
            results = await group.stop(args.timeout)
        for rank, result in sorted(results.items()):
            state = "clean" if result.clean else f"LEFT {result.remaining}"
            print(f"node {rank}: {'stopped' if result.was_running else 'not running'}, {state}",
                  file=stream)
        record.outcome = "stopped"
        record.save()
        return 0 if all(r.clean for r in results.values()) else 1

    return _run(go())
