"""`sglang-wizard launch | preflight | runs | logs | stop`: argparse wiring of the remote commands.

The implementation (`wizard.remote.commands`) imports asyncssh; it is loaded only when one of
these commands runs, so other subcommands start fast.

Exit codes: 0 ok (launch: the server is ready, or launched with --no-follow), 1 the remote action
failed (preflight blocks, crash, API key refused, unknown host key, connection failure), 2 the
tool's input (profile, flags, an invalid or unknown run id).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _lazy(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        commands = importlib.import_module("wizard.remote.commands")
        return int(getattr(commands, name)(args))

    run.__name__ = name
    return run


def _connection_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ssh")
    group.add_argument(
        "--host", help="ssh-config alias or USER@HOST[:PORT] (default: the profile's / the run's)"
    )
    group.add_argument(
        "--jump",
        action="append",
        default=None,
        metavar="HOST",
        help="jump host (repeat for a chain); default: the profile's ssh.jump or ProxyJump",
    )
    group.add_argument(
        "--trust-host-key",
        action="append",
        default=[],
        metavar="SHA256:...",
        help="accept this host-key fingerprint for an unknown host (and add it to known_hosts)",
    )
    group.add_argument(
        "--ssh-config",
        type=Path,
        help="ssh client config to read (default ~/.ssh/config; Include, ProxyCommand, ProxyJump, "
        "UserKnownHostsFile, GlobalKnownHostsFile, IdentityFile, IdentitiesOnly, CertificateFile, "
        "ConnectTimeout, ServerAliveInterval are honoured)",
    )
    group.add_argument(
        "--known-hosts",
        type=Path,
        help="known_hosts file instead of the config's UserKnownHostsFile "
        "(default ~/.ssh/known_hosts; /etc/ssh/ssh_known_hosts is read too)",
    )
    group.add_argument(
        "-i",
        "--identity",
        type=Path,
        action="append",
        help="private key file (repeatable; default: the profile's / the config's IdentityFile)",
    )
    group.add_argument("--no-agent", action="store_true", help="do not use the ssh agent")
    group.add_argument(
        "--remote-runs-dir", help="runs directory on the host (default ~/.cache/sglang-wizard/runs)"
    )
    group.add_argument(
        "--agent-python", default=None, help="python used for the wizard's helper on the host"
    )


def register(sub: Any) -> None:
    """Add launch, preflight, runs, logs and stop."""
    launch = sub.add_parser(
        "launch",
        help="check, preflight and start a profile on a GPU host over SSH",
        description="Check, preflight and start a profile on a GPU host over SSH, detached, and "
        "follow its log until ready. With a [container] table the server runs from that image "
        "(docker or podman): preflight runs inside the image (its SGLang version picks the "
        "rules), the container is named sglang-wizard-RUN and `stop` removes it.",
    )
    launch.add_argument("profile", type=Path, help="profile TOML")
    launch.add_argument(
        "--no-follow", action="store_true", help="start and return; do not watch the log"
    )
    launch.add_argument(
        "--skip-dry-run", action="store_true", help="skip SGLang's own argument check on the host"
    )
    launch.add_argument(
        "--quiet-log", action="store_true", help="show stages only, not every log line"
    )
    _connection_options(launch)
    launch.set_defaults(func=_lazy("launch"))

    preflight = sub.add_parser(
        "preflight",
        help="check the GPU host for a profile without launching",
        description="Check the GPU host for a profile without launching: python and SGLang "
        "version, GPUs, port, model paths, disk, SGLang's own dry run. With a [container] table: "
        "the runtime (docker/podman info), the image (pulled when missing), and the checks run "
        "inside the image.",
    )
    preflight.add_argument("profile", type=Path, help="profile TOML")
    preflight.add_argument(
        "--skip-dry-run", action="store_true", help="skip SGLang's own argument check on the host"
    )
    preflight.add_argument(
        "--fill-gpu",
        action="store_true",
        help="write the host's GPU kind and count (read with nvidia-smi, amd-smi or rocm-smi) "
        "into the profile's [gpu] table when they differ",
    )
    _connection_options(preflight)
    preflight.set_defaults(func=_lazy("preflight"))

    runs = sub.add_parser(
        "runs",
        help="list runs (on a host with --host, else the ones launched from here); --prune AGE",
    )
    runs.add_argument(
        "--prune",
        metavar="AGE",
        help="delete run directories on the host whose server ended more than AGE ago "
        "(7d, 12h, 30m, 0 = every ended run; a running one is never touched); without --host, "
        "on every host launched to from here",
    )
    runs.add_argument(
        "--dry-run", action="store_true", help="with --prune: list what would be deleted"
    )
    _connection_options(runs)
    runs.set_defaults(func=_lazy("runs"))

    logs = sub.add_parser("logs", help="show a run's log; --follow streams it with start-up stages")
    logs.add_argument("run", help="run id")
    logs.add_argument(
        "--follow", "-f", action="store_true", help="keep streaming until the server exits"
    )
    logs.add_argument(
        "--lines",
        "-n",
        type=int,
        default=None,
        help="start at the last N lines (default: 200; with --follow the whole log)",
    )
    _connection_options(logs)
    logs.set_defaults(func=_lazy("logs"))

    stop = sub.add_parser(
        "stop",
        help="stop a run: TERM its process group (a container: docker/podman stop), KILL after a "
        "timeout; a container is removed",
    )
    stop.add_argument("run", help="run id")
    stop.add_argument(
        "--timeout", type=float, default=30.0, help="seconds before KILL (default 30)"
    )
    _connection_options(stop)
    stop.set_defaults(func=_lazy("stop"))
