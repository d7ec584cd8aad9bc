"""`sglang-wizard command` and `sglang-wizard import`: profile <-> SGLang launch command.

    sglang-wizard command PROFILE.toml [--format shell|yaml|argv-json] [--sglang-version V]
    sglang-wizard import [-o PROFILE.toml] [--force] [--sglang-version V] -- COMMAND...
    sglang-wizard import --from-file launch.sh -o PROFILE.toml
    pbpaste | sglang-wizard import -o PROFILE.toml -

Exit codes: 0 ok, 2 input errors (unknown flag, bad value, unreadable profile, ...), with a
message naming the file/line or flag and what to type instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from wizard.container import (
    container_command,
    exec_word,
    render_node_container,
    render_profile_container,
)
from wizard.errors import ToolInputError
from wizard.multinode import node_launch, node_launches, render_all_nodes
from wizard.profile import load_profile, profile_to_toml, protect_secrets, save_profile
from wizard.profile_paths import find_profile
from wizard.profile_problems import ProfileError, line_for, locate_keys
from wizard.profile_schema import Profile
from wizard.secrets import MASK, argv_references, is_secret_name, mask_argv, reference_name
from wizard.sglang.errors import CommandError, RenderError
from wizard.sglang.parse import parse_command
from wizard.sglang.releases import default_version
from wizard.sglang.render import (
    profile_secret_option_of,
    render_argv,
    render_argv_json,
    render_shell,
    render_yaml_form,
)
from wizard.sglang.versions import VersionError, resolve_version


def register(subparsers: Any) -> None:
    """Add the `command` and `import` subcommands."""
    command = subparsers.add_parser(
        "command",
        help="print the SGLang launch command of a profile",
        description="Print the exact SGLang launch for a profile: a shell command (env prefix, "
        "quoted argv), SGLang's own --config YAML, or JSON {env, argv}. A profile with a "
        "[container] table prints the docker/podman run command (GPUs, --ipc=host or --shm-size, "
        "network, mounts, -e NAME for every variable, --init, the image's python); argv-json "
        "adds it as `container`.",
    )
    command.add_argument("profile", metavar="PROFILE.toml", help="profile file")
    nodes = command.add_mutually_exclusive_group()
    nodes.add_argument(
        "--node", type=int, metavar="R",
        help="multi-node profile: the command node rank R runs (--nnodes, --node-rank R, "
        "--dist-init-addr and the node's env added)",
    )
    nodes.add_argument(
        "--all-nodes", action="store_true",
        help="multi-node profile: every node's command, rank 0 first (shell format)",
    )
    command.add_argument(
        "--format",
        choices=("shell", "yaml", "argv-json"),
        default="shell",
        help="shell (default), yaml (SGLang --config file) or argv-json",
    )
    command.add_argument(
        "--sglang-version",
        metavar="V",
        help="write the flags for this SGLang version (default: the profile's sglang_version)",
    )
    command.add_argument(
        "--single-line", action="store_true", help="shell format on one line (no continuations)"
    )
    command.add_argument(
        "--show-secrets",
        action="store_true",
        help="print secret values (env vars like HF_TOKEN, --api-key) instead of ***",
    )
    command.set_defaults(func=run_command)

    imp = subparsers.add_parser(
        "import",
        help="turn a pasted SGLang launch command into a profile",
        description="Read `[ENV=V ...] python -m sglang.launch_server ...` or `sglang serve ...` "
        "(after --, from --from-file, or - for stdin), check every flag against SGLang's own "
        "parser for the version, and write the profile (TOML) to -o or stdout.",
    )
    imp.add_argument("-o", "--output", metavar="PROFILE.toml", help="write the profile here")
    imp.add_argument("--force", action="store_true", help="replace an existing -o file")
    imp.add_argument(
        "--sglang-version",
        metavar="V",
        help=f"the SGLang version the command is for (default {default_version()})",
    )
    imp.add_argument("--from-file", metavar="FILE", help="read the command from a file")
    imp.add_argument(
        "words",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND...",
        help="the launch command (one quoted string or its words), or - for stdin",
    )
    imp.set_defaults(func=run_import)


def _located(reference: str, exc: RenderError) -> str:
    """`FILE:LINE: FIELD: MESSAGE` for a profile that loads but cannot be rendered (the line of
    the field when the file names it, as for a load error)."""
    if exc.field is None:
        return f"{reference}: {exc.message}"
    path = Path(reference)
    if not path.is_file():
        path = find_profile(reference) or path
    try:
        line = line_for(exc.field, locate_keys(path.read_text(encoding="utf-8-sig")))
    except (OSError, UnicodeDecodeError, ValueError):
        line = None
    where = f"{reference}:{line}" if line is not None else reference
    return f"{where}: {exc.field}: {exc.message}"


def _check_version(version: str | None) -> None:
    if version is None:
        return
    try:
        resolve_version(version)
    except VersionError as exc:
        raise ToolInputError(f"--sglang-version: {exc}") from None


def run_command(args: argparse.Namespace) -> int:
    """`command`: print the launch for a profile."""
    _check_version(args.sglang_version)
    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        raise ToolInputError(str(exc)) from None
    version = args.sglang_version or profile.sglang_version
    if not args.show_secrets:
        profile = _masked(profile)
    _, warning = resolve_version(version)
    if warning:
        print(f"sglang-wizard: warning: {warning}", file=sys.stderr)
    if args.node is not None or args.all_nodes:
        return _run_node_command(args, profile, version)
    try:
        if args.format == "yaml":
            form = render_yaml_form(profile, version)
            text = form.text
        elif args.format == "argv-json":
            text = render_argv_json(profile, version) + "\n"
            if profile.container is not None:
                text = _with_container_json(text, profile, version)
        elif profile.container is not None:
            text = render_profile_container(profile, version, multiline=not args.single_line,
                                            show_secrets=args.show_secrets) + "\n"
        else:
            text = render_shell(profile, multiline=not args.single_line, version=version,
                                show_secrets=args.show_secrets) + "\n"
    except RenderError as exc:
        raise ToolInputError(_located(args.profile, exc)) from None
    sys.stdout.write(text)
    return 0


def _with_container_json(text: str, profile: Profile, version: str) -> str:
    """argv-json of a container profile: `container` holds the runtime's whole argv."""
    import json

    data = json.loads(text)
    command = container_command(profile, render_argv(profile, version), profile.env, detach=False)
    home = os.path.expanduser("~")
    data["container"] = [exec_word(word, home) for word in command.argv]
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _all_nodes_container(profile: Profile, version: str, multiline: bool) -> str:
    """Every node's container command, each under a `# node R: HOST` comment line."""
    parts = []
    for launch in node_launches(profile, version):
        where = f" ({launch.host})" if launch.host else ""
        body = render_node_container(profile, launch.rank, version, multiline=multiline)
        parts.append(f"# node {launch.rank}{where}\n{body}\n")
    return "\n".join(parts)


def _masked(profile: Profile) -> Profile:
    """The profile with literal secret env values and secret flag values (--api-key ...) as
    `***`; references (`env:NAME`) are kept: they are shown as `"$NAME"`."""
    env = {k: (MASK if is_secret_name(k) and v and reference_name(v) is None else v)
           for k, v in profile.env.items()}
    argv = mask_argv(profile.extra_args, profile_secret_option_of(profile))
    return profile.model_copy(update={"env": env, "extra_args": argv})


def _read_source(args: argparse.Namespace) -> tuple[str | list[str], str]:
    words: list[str] = list(args.words or [])
    if words and words[0] == "--":
        words = words[1:]
    if args.from_file:
        if words:
            raise ToolInputError("give the command either after -- or with --from-file, not both")
        path = Path(args.from_file)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except FileNotFoundError:
            raise ToolInputError(f"{path}: file not found") from None
        except UnicodeDecodeError:
            raise ToolInputError(f"{path}: not UTF-8 text") from None
        except OSError as exc:
            raise ToolInputError(f"{path}: cannot read: {exc.strerror}") from None
    if words == ["-"]:
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # a text stream without bytes underneath (already decoded)
            return sys.stdin.read(), "<stdin>"
        raw = buffer.read()
        try:
            return raw.decode("utf-8"), "<stdin>"
        except UnicodeDecodeError as exc:  # as --from-file says it, with the line
            line = raw[: exc.start].count(b"\n") + 1
            raise ToolInputError(f"<stdin>:{line}: not UTF-8 text") from None
    if not words:
        raise ToolInputError(
            "no command given: use `import -- python -m sglang.launch_server ...`, "
            "`--from-file FILE` or `-` for stdin"
        )
    if len(words) == 1:
        return words[0], "<command>"  # one quoted string: read it like a shell would
    return words, "<command>"


def _locate(text: str | list[str], source: str, flag: str | None) -> str:
    if not isinstance(text, str) or flag is None or source in {"<command>"}:
        return source
    for number, line in enumerate(text.splitlines(), start=1):
        if flag in line:
            return f"{source}:{number}"
    return source


def run_import(args: argparse.Namespace) -> int:
    """`import`: read a launch command, write a profile."""
    _check_version(args.sglang_version)
    text, source = _read_source(args)
    try:
        result = parse_command(text, args.sglang_version)
    except CommandError as exc:
        where = _locate(text, source, exc.flag)
        message = f"{where}: {exc.message}"
        if exc.suggestion and exc.suggestion not in exc.message:
            message += f"\n  hint: {exc.suggestion}"
        if exc.exit_like_sglang and exc.sglang_error is not None:
            message += f"\n  SGLang would print: {exc.sglang_error.line}"
        raise ToolInputError(message) from None
    for note in result.notes:
        print(f"sglang-wizard: note: {note}", file=sys.stderr)
    _note_secrets(result.profile)
    if args.output:
        try:
            path = save_profile(result.profile, args.output, overwrite=args.force)
        except FileExistsError:
            raise ToolInputError(
                f"{args.output} exists; pass --force to replace it (nothing was written)"
            ) from None
        except OSError as exc:
            raise ToolInputError(f"{args.output}: cannot write: {exc.strerror}") from None
        print(f"sglang-wizard: wrote {path}", file=sys.stderr)
    else:
        sys.stdout.write(profile_to_toml(result.profile))
    return 0


def _note_secrets(profile: Profile) -> None:
    """Say which literal secrets the profile keeps as references, and what to export."""
    protected, moved = protect_secrets(profile)
    if not moved:
        return
    names = [reference_name(v) for k, v in protected.env.items() if k in moved]
    refs = argv_references(protected.extra_args, profile_secret_option_of(protected))
    names += [var for option, var in refs if option in moved]
    wanted = ", ".join(sorted({n for n in names if n}))
    print(f"sglang-wizard: note: the command had literal secrets ({', '.join(moved)}); the profile "
          f"keeps references, never the values: export {wanted} where you launch "
          "(the launch passes them to the server only)", file=sys.stderr)


def _run_node_command(args: argparse.Namespace, profile: Any, version: str) -> int:
    """`command --node R` / `--all-nodes`: the per-node commands of a multi-node profile."""
    import json

    try:
        if args.all_nodes:
            if args.format != "shell":
                raise ToolInputError("--all-nodes prints shell commands; use --node R with "
                                     f"--format {args.format}")
            text = render_all_nodes(profile, version, multiline=not args.single_line)
            if profile.container is not None:
                text = _all_nodes_container(profile, version, not args.single_line)
        else:
            launch = node_launch(profile, args.node, version)
            if args.format == "argv-json":
                text = json.dumps({"host": launch.host, "env": launch.env,
                                   "argv": launch.command()}, ensure_ascii=False, indent=2) + "\n"
            elif args.format == "yaml":
                raise ToolInputError("--node R prints a shell command or argv-json (a --config "
                                     "file is the same on every node: use --format yaml alone)")
            elif profile.container is not None:
                text = render_node_container(profile, args.node, version,
                                             multiline=not args.single_line) + "\n"
            else:
                text = launch.shell(multiline=not args.single_line) + "\n"
    except RenderError as exc:
        raise ToolInputError(_located(args.profile, exc)) from None
    sys.stdout.write(text)
    return 0
