"""`sglang-wizard export PROFILE.toml --format sbatch|lws`: a multi-node profile for Slurm or Kubernetes.

Exit codes: 0 written, 2 input errors (unreadable profile, not a multi-node profile, a secret on
the command line, an existing -o file without --force).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from wizard.cli import ToolInputError


def register(subparsers: Any) -> None:
    """Add the `export` subcommand."""
    parser = subparsers.add_parser(
        "export",
        help="write a multi-node profile as a Slurm sbatch script or a Kubernetes LeaderWorkerSet",
        description="Write a multi-node profile (parallel.nnodes >= 2) for a scheduler: a Slurm "
        "batch script (one srun task per node, rank from SLURM_NODEID, rendezvous at the first "
        "host of the allocation) or a Kubernetes LeaderWorkerSet manifest (leader = rank 0, "
        "workers ranked by their LWS worker index, GPUs per pod, secrets as secretKeyRef). "
        "Secret values are never written.",
    )
    parser.add_argument("profile", metavar="PROFILE.toml", help="profile file")
    parser.add_argument("--format", choices=("sbatch", "lws"), required=True,
                        help="sbatch (Slurm batch script) or lws (LeaderWorkerSet YAML)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    parser.add_argument("--force", action="store_true", help="replace an existing -o file")
    parser.add_argument("--sglang-version", metavar="V",
                        help="write the flags for this SGLang version (default: the profile's)")
    parser.add_argument("--name", help="job / LeaderWorkerSet name (default: from the description)")
    parser.add_argument("--image", help="lws: container image (default lmsysorg/sglang:vVERSION)")
    parser.add_argument("--secret-name",
                        help="lws: the Secret holding the profile's secret env vars "
                        "(default NAME-secrets)")
    parser.add_argument("--partition", help="sbatch: #SBATCH --partition")
    parser.add_argument("--time", dest="time_limit", help="sbatch: #SBATCH --time (e.g. 24:00:00)")
    parser.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """Render the export and write it."""
    from wizard.exports import k8s_name, render_lws, render_sbatch
    from wizard.profile import ProfileError, atomic_write_text, load_profile
    from wizard.sglang.errors import RenderError
    from wizard.sglang.versions import VersionError, resolve_version

    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        raise ToolInputError(str(exc)) from None
    version = profile.sglang_version if args.sglang_version is None else args.sglang_version
    try:
        resolve_version(version)
    except VersionError as exc:
        raise ToolInputError(f"--sglang-version: {exc}") from None
    name = k8s_name(args.name) if args.name else None
    try:
        if args.format == "sbatch":
            text = render_sbatch(profile, version, job_name=name, partition=args.partition,
                                 time_limit=args.time_limit)
        else:
            text = render_lws(profile, version, name=name, image=args.image,
                              secret_name=args.secret_name)
    except RenderError as exc:
        raise ToolInputError(f"{args.profile}: {exc.message}") from None
    if not args.output:
        sys.stdout.write(text)
        return 0
    path = Path(args.output)
    shown = str(path) if len(str(path)) <= 120 else f"{str(path)[:60]}…{str(path)[-60:]}"
    try:
        if path.exists() and not args.force:
            raise ToolInputError(
                f"{shown} exists; pass --force to replace it (nothing was written)"
            )
        atomic_write_text(path, text)
        if args.format == "sbatch":
            path.chmod(0o755)
    except OSError as exc:  # a name too long for the file system, no such folder, no permission
        raise ToolInputError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL character in the name
        raise ToolInputError(f"{shown!r}: not a usable file name ({exc})") from None
    print(f"sglang-wizard: wrote {path}", file=sys.stderr)
    return 0
