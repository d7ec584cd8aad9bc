"""`sglang-wizard export PROFILE.toml --format sbatch|lws`: a multi-node profile for Slurm or Kubernetes.

The profile is checked first (as `sglang-wizard check` does): a launch SGLang would refuse is not
exported (its findings are printed, exit 1) unless `--force`.

Exit codes: 0 written, 1 the check finds errors (SGLang would refuse it; --force exports anyway),
2 input errors (unreadable profile, not a multi-node profile, a secret value in extra_args, an
existing -o file without --force, an -o path that cannot be written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from wizard.api import check_profile
from wizard.check_cli import render_text
from wizard.errors import ToolInputError
from wizard.exports import EXPORT_HOST, k8s_name, render_lws, render_sbatch
from wizard.files import write_text
from wizard.profile import load_profile
from wizard.profile_problems import ProfileError
from wizard.sglang.errors import RenderError
from wizard.sglang.versions import VersionError, resolve_version


def register(subparsers: Any) -> None:
    """Add the `export` subcommand."""
    parser = subparsers.add_parser(
        "export",
        help="write a multi-node profile as a Slurm sbatch script or a Kubernetes LeaderWorkerSet",
        description="Write a multi-node profile (parallel.nnodes >= 2) for a scheduler: a Slurm "
        "batch script (one srun task per node, rank from SLURM_NODEID, rendezvous at the first "
        "host of the allocation) or a Kubernetes LeaderWorkerSet manifest (leader = rank 0, "
        "workers ranked by their LWS worker index, GPUs per pod, secrets as secretKeyRef). "
        "Both serve on 0.0.0.0. The profile is checked first: a launch SGLang would refuse is "
        "not exported (exit 1) unless --force. Secret values are never written: HF_TOKEN and "
        "a --api-key reference (--api-key env:VAR) are read from the job's environment "
        "(sbatch) or a Kubernetes Secret (lws). "
        "A profile with [container] runs its image: sbatch through Pyxis/Enroot "
        "(--container-image, --container-mounts) or apptainer exec, LWS with that image and its "
        "python.",
    )
    parser.add_argument("profile", metavar="PROFILE.toml", help="profile file")
    parser.add_argument("--format", choices=("sbatch", "lws"), required=True,
                        help="sbatch (Slurm batch script) or lws (LeaderWorkerSet YAML)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing -o file, and export even when the check finds "
                        "errors")
    parser.add_argument("--sglang-version", metavar="V",
                        help="write the flags for this SGLang version (default: the profile's)")
    parser.add_argument("--name", help="job / LeaderWorkerSet name (default: from the description)")
    parser.add_argument("--image", help="lws: container image (default: the profile's [container] "
                        "image, else lmsysorg/sglang:vVERSION)")
    parser.add_argument("--python", metavar="PATH",
                        help="the interpreter that runs SGLang (default: python3 in the lws "
                        "image; the profile's ssh.python on the sbatch nodes)")
    parser.add_argument("--secret-name",
                        help="lws: the Secret holding the profile's secret env vars "
                        "(default NAME-secrets)")
    parser.add_argument("--partition", help="sbatch: #SBATCH --partition")
    parser.add_argument("--time", dest="time_limit", help="sbatch: #SBATCH --time (e.g. 24:00:00)")
    parser.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """Render the export and write it."""
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
                                 time_limit=args.time_limit, python=args.python)
        else:
            text = render_lws(profile, version, name=name, image=args.image,
                              secret_name=args.secret_name, python=args.python)
    except RenderError as exc:
        raise ToolInputError(f"{args.profile}: {exc.message}") from None
    if not _check_passes(profile, version, args.profile, force=args.force):
        return 1
    if profile.server.host not in (None, EXPORT_HOST):
        print(f"sglang-wizard: note: the export serves on {EXPORT_HOST}, not the profile's "
              f"server.host {profile.server.host}: the scheduler's clients and Kubernetes' "
              "readiness probe reach the server by the node / pod address", file=sys.stderr)
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
        written = write_text(path, text, mode=0o700 if args.format == "sbatch" else 0o600)
    except OSError as exc:  # a name too long for the file system, no such folder, no permission
        raise ToolInputError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL character in the name
        raise ToolInputError(f"{shown!r}: not a usable file name ({exc})") from None
    print(f"sglang-wizard: wrote {written}", file=sys.stderr)
    return 0


def _check_passes(profile: Any, version: str, source: str, *, force: bool) -> bool:
    """Run the check (`sglang-wizard check`); print its findings when SGLang would refuse the
    launch. False: refuse the export (unless `force`, which exports with a warning)."""
    report = check_profile(profile.model_copy(update={"sglang_version": version}),
                           verify_fixes=False)
    if report.verdict != "error":
        return True
    sys.stderr.write(render_text(report))
    if force:
        print(f"sglang-wizard: warning: {source}: SGLang would refuse this launch (findings "
              "above); exported anyway (--force)", file=sys.stderr)
        return True
    print(f"sglang-wizard: {source}: not exported: SGLang would refuse this launch (findings "
          "above); fix the profile (sglang-wizard check), or pass --force to export it anyway",
          file=sys.stderr)
    return False
