"""Multi-node launches as data: a profile's nodes, the rendezvous, each node's exact command.

SGLang serves one model across several nodes itself: every node runs the same command with
`--nnodes N --node-rank R --dist-init-addr HOST:PORT`. A profile holds the shared launch once and
the node list in `[nodes]` (rank = position in `nodes.hosts`); this module renders what each node
runs and checks what SGLang does not check before the nodes hang in the rendezvous (see also
`wizard/rules/multinode.py` for the checks that read the arguments alone). Pure: no I/O.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from wizard.profile_schema import NodeEntry, Profile
from wizard.rendezvous import RendezvousError, format_rendezvous, parse_rendezvous
from wizard.rules.checks import (
    NODE_GPUS_SPARE,
    NODES_COUNT,
    NODES_DUPLICATE,
    NODES_EXTRA_ARGS,
    NODES_GPU_KIND,
    NODES_IFNAME,
)
from wizard.rules.model import Check
from wizard.rules.multinode import NODE_GPUS
from wizard.rules.report import Finding, Fix, SglangRaise
from wizard.sglang.errors import RenderError
from wizard.sglang.render import LAUNCH_MODULE, render_argv, shell_env, shell_words

# Flags the wizard writes per node; a profile must not carry them in extra_args.
NODE_FLAGS = ("--node-rank", "--dist-init-addr", "--nnodes")
IFNAME_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")
_HOST_SPEC = re.compile(r"^(?:(?P<user>[^@\s]+)@)?(?P<host>\[[^\]]+\]|[^:@\s]+)(?::(?P<port>\d+))?$")


def is_multinode(profile: Profile) -> bool:
    """The profile launches on several nodes (`parallel.nnodes > 1` or a node list)."""
    return profile.parallel.nnodes > 1 or bool(profile.nodes.hosts)


def node_count(profile: Profile) -> int:
    """How many nodes the launch has (the node list when given, else `parallel.nnodes`)."""
    return len(profile.nodes.hosts) or profile.parallel.nnodes


def ssh_host_name(node: NodeEntry) -> str:
    """The host part of a node's `host` (`user@gpu-a:2222` -> `gpu-a`)."""
    match = _HOST_SPEC.match(node.host.strip())
    return match["host"].strip("[]") if match else node.host


def rendezvous_host(profile: Profile) -> str | None:
    """Rank 0's address as every node reaches it (None when the profile does not say)."""
    if profile.nodes.rendezvous_host:
        return profile.nodes.rendezvous_host
    if profile.nodes.hosts:
        first = profile.nodes.hosts[0]
        return first.address or ssh_host_name(first)
    return None


def dist_init_addr(profile: Profile) -> str | None:
    """The `--dist-init-addr` every node gets (None when the profile has no rendezvous host)."""
    host = rendezvous_host(profile)
    return None if host is None else format_rendezvous(host, profile.nodes.rendezvous_port)


@dataclass(frozen=True)
class NodeLaunch:
    """What one node runs: its SSH target and the exact launch."""

    rank: int
    nnodes: int
    host: str  # ssh target as written in the profile (alias, host, user@host:port)
    user: str | None
    port: int | None
    python: str
    workdir: str | None
    argv: list[str]  # the flags after `python -m sglang.launch_server`
    env: dict[str, str] = field(default_factory=dict)
    gpu_kind: str | None = None
    gpu_count: int | None = None

    @property
    def label(self) -> str:
        """`node 1 (gpu-b)`."""
        return f"node {self.rank} ({self.host})"

    def command(self) -> list[str]:
        """The full argv: interpreter, module, flags."""
        return [self.python, "-m", LAUNCH_MODULE, *self.argv]

    def shell(self, multiline: bool = True) -> str:
        """The node's command as one copy-pasteable shell command (env prefix, quoted; secrets
        as `"$NAME"` for a reference, `***` for a literal)."""
        env = shell_env(self.env)
        head = f"{shlex.quote(self.python)} -m {LAUNCH_MODULE}"
        if env:
            head = f"{env} {head}"
        lines = [head]
        for group in _flag_groups(self.argv):
            lines.append(" ".join(shell_words(group)))
        return (" \\\n  " if multiline else " ").join(lines)


def _flag_groups(argv: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    for piece in argv:
        if piece.startswith("--") or not groups:
            groups.append([piece])
        else:
            groups[-1].append(piece)
    return groups


def _node_flags_in_extra(profile: Profile) -> list[str]:
    return [a.split("=", 1)[0] for a in profile.extra_args if a.split("=", 1)[0] in NODE_FLAGS]


def node_env(profile: Profile, rank: int) -> dict[str, str]:
    """The environment of node `rank`: shared env, interface hints, then the node's own env."""
    env = dict(profile.env)
    node = profile.nodes.hosts[rank] if rank < len(profile.nodes.hosts) else None
    interface = (node.interface if node else None) or profile.nodes.interface
    if interface:
        for name in IFNAME_VARS:
            env.setdefault(name, interface)
    if node is not None:
        env.update(node.env)
    return env


def node_launch(profile: Profile, rank: int, version: str | None = None) -> NodeLaunch:
    """Node `rank`'s exact launch; RenderError when the profile cannot be launched on nodes."""
    count = node_count(profile)
    if profile.nodes.hosts and len(profile.nodes.hosts) != profile.parallel.nnodes:
        raise RenderError(
            f"nodes.hosts lists {len(profile.nodes.hosts)} nodes but parallel.nnodes is "
            f"{profile.parallel.nnodes}; set parallel.nnodes = {len(profile.nodes.hosts)}",
            field="parallel.nnodes",
        )
    if not 0 <= rank < count:
        raise RenderError(
            f"node rank {rank} does not exist: this profile has {count} node(s), ranks 0.."
            f"{count - 1}",
            field="nodes.hosts",
        )
    clash = _node_flags_in_extra(profile)
    if clash:
        raise RenderError(
            f"extra_args sets {', '.join(clash)}, which the wizard writes per node; remove it "
            "(use parallel.nnodes and [nodes])",
            field="extra_args",
        )
    addr = dist_init_addr(profile)
    argv = render_argv(profile, version)
    if count > 1:
        if addr is None:
            raise RenderError(
                "several nodes need a rendezvous address: list [[nodes.hosts]] (rank 0 first) or "
                "set nodes.rendezvous_host",
                field="nodes.rendezvous_host",
            )
        if "--nnodes" not in argv:
            argv += ["--nnodes", str(count)]
        argv += ["--node-rank", str(rank), "--dist-init-addr", addr]
    node = profile.nodes.hosts[rank] if profile.nodes.hosts else None
    if node is None:
        return NodeLaunch(rank, count, profile.ssh.host or "", profile.ssh.user, profile.ssh.port,
                          profile.ssh.python, profile.ssh.workdir, argv, node_env(profile, rank),
                          profile.gpu.kind, profile.gpu.count)
    return NodeLaunch(
        rank=rank,
        nnodes=count,
        host=node.host,
        user=node.user or profile.ssh.user,
        port=node.port,
        python=node.python or profile.ssh.python,
        workdir=node.workdir or profile.ssh.workdir,
        argv=argv,
        env=node_env(profile, rank),
        gpu_kind=node.gpu_kind or profile.gpu.kind,
        gpu_count=node.gpu_count or profile.gpu.count,
    )


def node_launches(profile: Profile, version: str | None = None) -> list[NodeLaunch]:
    """Every node's launch, rank 0 first."""
    return [node_launch(profile, rank, version) for rank in range(node_count(profile))]


def render_all_nodes(profile: Profile, version: str | None = None, multiline: bool = True) -> str:
    """Every node's command, each under a `# node R: HOST` comment line."""
    parts = []
    for launch in node_launches(profile, version):
        where = f" ({launch.host})" if launch.host else ""
        parts.append(f"# node {launch.rank}{where}\n{launch.shell(multiline)}\n")
    return "\n".join(parts)


# --------------------------------------------------------------------- checks SGLang does not make


def _finding(check: Check, message: str, fixes: tuple[Fix, ...] = ()) -> Finding:
    return check.finding(message, fixes=fixes, order=10_000)


def node_findings(profile: Profile) -> list[Finding]:
    """The profile-level multi-node checks (node list vs nnodes, per-node GPUs, hints)."""
    if not is_multinode(profile):
        return []
    out: list[Finding] = []
    hosts = profile.nodes.hosts
    nnodes = profile.parallel.nnodes
    if hosts and len(hosts) != nnodes:
        out.append(_finding(
            NODES_COUNT,
            f"nodes.hosts lists {len(hosts)} node(s) but parallel.nnodes is {nnodes}",
            (Fix(f"nnodes {len(hosts)}", {"parallel.nnodes": len(hosts)}),),
        ))
    clash = _node_flags_in_extra(profile)
    if clash:
        out.append(_finding(
            NODES_EXTRA_ARGS,
            f"extra_args sets {', '.join(clash)}: the wizard writes --nnodes, --node-rank and "
            "--dist-init-addr for each node itself",
        ))
    seen: dict[tuple[str, str | None, int | None], int] = {}
    for rank, node in enumerate(hosts):
        key = (node.host, node.user, node.port)
        if key in seen:
            out.append(_finding(
                NODES_DUPLICATE,
                f"node {rank} ({node.host}) is the same SSH target as node {seen[key]}",
            ))
        seen.setdefault(key, rank)
    total = profile.parallel.tp * profile.parallel.pp
    per_node = total // nnodes if nnodes and total % nnodes == 0 else None
    kinds = {node.gpu_kind or profile.gpu.kind for node in hosts} - {None}
    if len(kinds) > 1:
        out.append(_finding(
            NODES_GPU_KIND,
            f"the nodes have {', '.join(sorted(str(k) for k in kinds))}: SGLang picks its defaults "
            "per node, so the nodes may disagree (attention backend, page size)",
        ))
    for rank, node in enumerate(hosts):
        count = node.gpu_count or profile.gpu.count
        if per_node is not None and count is not None and count != per_node and node.gpu_count:
            message = (f"node {rank} ({node.host}) has {count} GPUs; each node runs {per_node} "
                       f"(tp {profile.parallel.tp} * pp {profile.parallel.pp} / {nnodes} nodes)")
            if count > per_node:
                out.append(_finding(NODE_GPUS_SPARE, message))
                continue
            out.append(Finding(
                rule=NODE_GPUS.id, severity=NODE_GPUS.severity, title=NODE_GPUS.title,
                message=message, explanation=NODE_GPUS.why, fields=("nodes.hosts", "parallel.tp"),
                sglang=SglangRaise(NODE_GPUS.sglang.stage, None, None, False, message),
                order=10_000,
            ))
    has_ifname = profile.nodes.interface or any(n.interface for n in hosts) or any(
        v in profile.env for v in IFNAME_VARS)
    if nnodes > 1 and not has_ifname:
        out.append(_finding(
            NODES_IFNAME,
            "no nodes.interface: on hosts with several network interfaces NCCL and Gloo may pick "
            "one the other nodes cannot reach (the launch then hangs at init); preflight lists "
            "each host's interfaces",
        ))
    return out


def absorb_node_flags(profile: Profile) -> tuple[Profile, list[str]]:
    """A pasted node command (`--node-rank R --dist-init-addr H:P` in extra_args) as a profile:
    the rendezvous moves to `[nodes]`, the rank is dropped (the profile holds every node).
    Returns the profile and notes for the user; unchanged when there is nothing to absorb."""
    args = list(profile.extra_args)
    kept: list[str] = []
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name in ("--node-rank", "--dist-init-addr", "--nccl-init-addr"):
            if not eq and i + 1 < len(args):
                value = args[i + 1]
                i += 1
            found["--dist-init-addr" if name == "--nccl-init-addr" else name] = value
        else:
            kept.append(args[i])
        i += 1
    if not found:
        return profile, []
    notes: list[str] = []
    edits: dict[str, object] = {"extra_args": kept}
    addr = found.get("--dist-init-addr")
    if addr is not None:
        try:
            host, port = parse_rendezvous(addr)
        except RendezvousError as exc:
            return profile, [f"--dist-init-addr {addr!r} is kept in extra_args: {exc}"]
        edits["nodes.rendezvous_host"] = host
        edits["nodes.rendezvous_port"] = port
        notes.append(f"--dist-init-addr {addr} is now nodes.rendezvous_host/rendezvous_port")
    if "--node-rank" in found:
        notes.append(
            f"--node-rank {found['--node-rank']} is dropped: a profile holds every node; list "
            "them in [[nodes.hosts]] (rank 0 first) and print one with `command --node R`")
    return profile.with_edits(edits), notes
