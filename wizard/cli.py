"""`sglang-wizard` command line: with no arguments it starts the TUI; subcommands serve scripts and CI.

Each area registers its subcommands from its own module (see `COMMAND_MODULES`): a module exposes
`register(subparsers)` and sets `func` on its parsers; `func(args) -> int` is the exit code.
Exit codes: 0 ok, 1 SGLang would refuse / the remote action failed, 2 the tool's own input errors
(141 when the reader of its output went away, as for any filter killed by SIGPIPE).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from wizard import __version__
from wizard.errors import ToolInputError

# Modules that add subcommands. Each area appends its own module here.
COMMAND_MODULES: list[str] = ["wizard.check_cli", "wizard.sglang.cli", "wizard.inspect_cli", "wizard.remote.cli", "wizard.conformance.cli", "wizard.profiles_cli", "wizard.export_cli", "wizard.remote.multinode_cli"]


# Subcommands parsed with their own module only, so they start without importing the checker
# (`logs --follow` and `stop` are often run in a loop or a script).
FAST_COMMANDS: dict[str, str] = {
    **{name: "wizard.remote.cli" for name in ("launch", "preflight", "runs", "logs", "stop")},
    "check": "wizard.check_cli",  # the cold `check` loads only the checker (issue 13: <= 0.1 s)
}


def build_parser(modules: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Build the argument parser with every registered subcommand (or those of `modules`)."""
    parser = argparse.ArgumentParser(
        prog="sglang-wizard",
        description=(
            "Make SGLang launches right the first time. Without a subcommand the terminal UI starts."
        ),
        epilog=(
            "exit codes: 0 fine (SGLang would start it), 1 SGLang would refuse it / the remote action "
            "failed, 2 the tool's own input errors.\n"
            "examples:\n"
            "  sglang-wizard check profiles/qwen3.6-27b-mtp-a6000.toml\n"
            "  sglang-wizard check --gpu A6000 -- python -m sglang.launch_server --model-path M ...\n"
            "  sglang-wizard import -o my.toml -- 'python -m sglang.launch_server ...'\n"
            "  sglang-wizard launch my.toml --host gpu-box"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sglang-wizard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES if modules is None else modules:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sglang-wizard` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list:
        from screens.app import run_app  # the UI is only imported when it is wanted

        return run_app()
    fast = FAST_COMMANDS.get(args_list[0])
    parser = build_parser([fast] if fast else None)
    args, extra = parser.parse_known_args(args_list)
    if extra and extra[0] == "--" and hasattr(args, "launch"):
        # `inspect MODEL --gpu H100 -- --tp 8`: argparse has already closed the positionals.
        args.launch = [*(args.launch or []), *extra[1:]]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        code = int(func(args))
        sys.stdout.flush()  # inside the try: a reader that went away is handled below
        return code
    except BrokenPipeError:
        # `sglang-wizard profiles list --json | head`: the reader closed the pipe. Quiet, like
        # any filter killed by SIGPIPE (exit 141), and no second error when Python flushes.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except ToolInputError as exc:
        print(f"sglang-wizard: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())  # ToolInputError lives in wizard.errors: one class either way
