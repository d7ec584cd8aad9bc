"""`sglang-wizard check`: what SGLang will do with a profile or a pasted command, before launching it."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from wizard.api import check_argv, check_case, check_profile, report_json
from wizard.errors import ToolInputError
from wizard.gpus import gpu_count_arg, gpu_kind_arg
from wizard.rules.report import Finding, Report
from wizard.sglang.errors import CommandError
from wizard.sglang.parse import split_launch
from wizard.sglang.releases import default_version
from wizard.sglang.versions import VersionError, resolve_version
from wizard.verdict import verdict_of

EPILOG = """\
exit codes: 0 SGLang would start it (adjustments allowed), 1 SGLang would refuse it,
            2 the wizard's own input errors (bad file, unknown flag in the tool's own options).

examples:
  sglang-wizard check profiles/qwen3.6-27b-mtp-a6000.toml
  sglang-wizard check --sglang-version {default} --gpu A6000 -- \\
      SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --model-path /m/Qwen3.6-27B \\
      --speculative-algorithm NEXTN --speculative-num-draft-tokens 1
  sglang-wizard check --gpu A6000 --gpus 2 -- --model-path Qwen/Qwen3.6-27B --tp 2 \\
      --speculative-algorithm NEXTN          # a Hub id: its config.json is read (HF_* honoured)
  sglang-wizard check --gpu MI300X --gpus 8 -- --model-path /m/DeepSeek-V3 --tp 8
  sglang-wizard check --gpu custom:sm=8.6,mem=24GB -- --model-path /m/Qwen3-8B   # any other GPU
  sglang-wizard check --jsonl cases.jsonl      # one JSON report per input line
"""


def register(sub: Any) -> None:
    """Add the `check` subcommand."""
    p = sub.add_parser(
        "check",
        help="check a profile or a launch command against SGLang's rules",
        description="Check a TOML profile or a pasted launch command against SGLang's own argument rules: "
        "findings in the order SGLang hits them, and the values SGLang will really use.",
        epilog=EPILOG.format(default=default_version()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "target",
        nargs="*",
        metavar="PROFILE.toml | -- COMMAND",
        help="a profile TOML file, or after `--` a launch command (env prefix allowed) or just its flags",
    )
    p.add_argument(
        "--sglang-version", help=f"SGLang version (default: the profile's, else {default_version()})"
    )
    p.add_argument(
        "--gpu",
        metavar="KIND",
        type=gpu_kind_arg,
        help="GPU kind: a catalog name (H100, A6000, L40S, B200, MI300X, ...; README lists them) "
        "or any other GPU as custom:sm=8.9,mem=48GB (NVIDIA) / custom:arch=gfx942,mem=192GB "
        "(AMD); default: the profile's, else H100",
    )
    p.add_argument("--gpus", metavar="N", type=gpu_count_arg, help="number of GPUs (1 or more)")
    p.add_argument("--json", action="store_true", help="print the JSON report")
    p.add_argument(
        "--jsonl",
        metavar="FILE",
        help="batch mode: JSON lines in (FILE or -), one report per line out",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run `check`."""
    if args.jsonl:
        return _batch(args.jsonl, sys.stdout)
    words = list(args.target or [])
    if len(words) == 1 and _names_a_file(words[0]):
        report = _check_profile_file(words[0], args)
    elif words:
        report = _check_command(words, args)
    else:
        raise ToolInputError(
            "nothing to check: give a profile file, `-- COMMAND...` or --jsonl FILE"
        )
    if args.json:
        json.dump(report_json(report), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(report))
    return 1 if report.verdict == "error" else 0


def _names_a_file(word: str) -> bool:
    """One word is a profile (a path or a name) unless it reads as a pasted command: a path with a
    space (`My Profiles/x.toml`, a directory) is still a path when it exists or ends in .toml."""
    if word.lstrip().startswith("-"):
        return False
    if " " not in word:
        return True
    if os.path.lexists(os.path.expanduser(word)):
        return True
    return word.rstrip().endswith(".toml") and "sglang" not in word


def _check_profile_file(path: str, args: argparse.Namespace) -> Report:
    from wizard.profile import load_profile
    from wizard.profile_problems import ProfileError

    try:
        profile = load_profile(path)
    except ProfileError as exc:
        raise ToolInputError(str(exc)) from None
    if args.sglang_version is not None:
        _check_version_option(args.sglang_version)
        profile = profile.model_copy(update={"sglang_version": args.sglang_version})
    return check_profile(profile, gpu=args.gpu, gpus=args.gpus)


def _check_version_option(version: str) -> None:
    """`--sglang-version` must name a version (exit 2 otherwise, before anything is checked)."""
    try:
        resolve_version(version)
    except VersionError as exc:
        raise ToolInputError(f"--sglang-version: {exc}") from None


def _check_command(words: list[str], args: argparse.Namespace) -> Report:
    text: str | list[str] = words[0] if len(words) == 1 else words
    try:
        parts = split_launch(text)
    except CommandError as exc:
        raise ToolInputError(str(exc)) from None

    version = default_version() if args.sglang_version is None else args.sglang_version
    try:
        resolve_version(version)
    except VersionError as exc:
        raise ToolInputError(f"--sglang-version: {exc}") from None
    return check_argv(
        parts.argv, sglang_version=version, env=parts.env, gpu=args.gpu, gpus=args.gpus
    )


def _batch(source: str, out: TextIO) -> int:
    if source == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        return _batch_lines(sys.stdin if buffer is None else _utf8_lines(buffer), source, out)
    try:
        with open(source, "rb") as handle:
            return _batch_lines(_utf8_lines(handle), source, out)
    except OSError as exc:
        raise ToolInputError(f"{source}: cannot read: {exc.strerror}") from None


_NOT_UTF8 = "\x00not UTF-8\x00"  # stands for a line whose bytes are not UTF-8 (JSON has no NUL)


def _utf8_lines(raw: Iterable[bytes]) -> Iterable[str]:
    """Lines as text; a line that is not UTF-8 becomes a marker (that line's input error, the
    batch goes on; read as text it aborted a file's batch and garbled a value from stdin)."""
    for number, line in enumerate(raw, start=1):
        try:
            yield line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError:
            yield _NOT_UTF8 + line.decode("utf-8", "replace")


def _batch_lines(lines: Iterable[str], source: str, out: TextIO) -> int:
    """One report per input line, same order; exit 2 if any line was bad, else 1 if any refused.

    A bad line (not JSON, a field of the wrong type or range) gets an `input-error` report with
    its id (read from the text when the line is not JSON) and the batch goes on."""
    worst = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        case: Any = None
        if line.startswith(_NOT_UTF8):
            line = line[len(_NOT_UTF8):]
            result = _input_error(None, line, f"{source}:{number}: not UTF-8 text (JSON lines "
                                  "must be UTF-8)", number)
            out.write(json.dumps(result, default=str) + "\n")
            worst = 2
            continue
        try:
            case = json.loads(line)
            result = check_case(case)
        except (ValueError, TypeError, RecursionError) as exc:
            message = (
                "nested too deeply" if isinstance(exc, RecursionError)
                else f"not JSON ({exc})" if isinstance(exc, json.JSONDecodeError) else str(exc)
            )
            result = _input_error(case, line, f"{source}:{number}: {message}", number)
            worst = 2
        except Exception as exc:  # a bug must not lose the lines after this one
            result = _input_error(
                case, line, f"{source}:{number}: internal error ({type(exc).__name__}: {exc}); "
                "please report it with this line", number, verdict="internal-error",
            )
            worst = 2
        else:
            if result["verdict"] == "error" and worst == 0:
                worst = 1
        out.write(json.dumps(result, default=str) + "\n")
    return worst


_ID_IN_TEXT = re.compile(r'"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")')


def _input_error(
    case: Any, line: str, error: str, number: int, verdict: str = "input-error"
) -> dict[str, Any]:
    """The report of a line that could not be checked, with the line's id when it has one."""
    if isinstance(case, dict):
        case_id = case.get("id")
    else:
        match = _ID_IN_TEXT.search(line) if case is None else None
        try:
            case_id = json.loads(match.group(1)) if match else None
        except ValueError:
            case_id = None
    return {"id": case_id, "line": number, "verdict": verdict, "error": error}


_TAGS = {"error": "ERROR", "adjusted": "ADJUSTED", "warning": "WARNING", "info": "info"}


def _finding_text(f: Finding, first_error: bool) -> list[str]:
    lines = []
    mark = ">>" if first_error else "  "
    lines.append(f"{mark} [{_TAGS[f.severity]}] {f.rule}: {f.title}")
    lines.append(f"     {f.message}")
    if f.sglang is not None and f.sglang.exception:
        where = f" at {f.sglang.where}" if f.sglang.where else ""
        bare = " (bare assert: no message in the traceback)" if f.sglang.bare else ""
        lines.append(f"     SGLang: {f.sglang.exception}{where}{bare} [{f.sglang.stage}]")
    elif (
        f.sglang is not None and f.sglang.stage == "runtime" and f.severity in ("error", "warning")
    ):
        lines.append(
            "     SGLang: not checked at start; it fails or misbehaves later (model load, first decode)"
        )
    if f.severity in ("error", "warning", "adjusted"):
        lines.append(f"     why: {f.explanation}")
    for i, fix in enumerate(f.fixes, start=1):
        edits = ", ".join(f"{k}={'unset' if v is None else v}" for k, v in fix.edits.items())
        env = ", ".join(f"env {k}={'unset' if v is None else v}" for k, v in fix.env.items())
        lines.append(f"     fix {i}: {fix.label} [{', '.join(x for x in (edits, env) if x)}]")
    return lines


def render_text(report: Report) -> str:
    """Human-readable report: verdict, findings in SGLang's order, effective values."""
    out = []
    first = report.first_error

    summary = verdict_of(report)
    verdict = {
        "refuses": "SGLang would REFUSE this",
        "fails": "SGLang would FAIL at run time",
    }.get(summary.kind, f"SGLang would START this ({summary.headline})")
    out.append(
        f"SGLang {report.sglang_version} (rules {report.rules_version}), GPU {report.gpu}: {verdict}"
    )
    out.append(
        f"model facts from {report.model_source}"
        if report.model_source
        else "model facts: not read (see R-FACTS-MISSING)"
    )
    for f in report.findings:
        out.extend(_finding_text(f, f is first))
    if report.effective:
        out.append("")
        # after an error the values are those of the launch with the errors fixed (each error
        # rule recovers), as the TUI's table says; not what the refused launch would run
        fixed = " once the errors are fixed" if first is not None else ""
        out.append(f"values SGLang will use{fixed} (typed -> effective):")
        changed = report.changed()
        for name, value in report.effective.items():
            if value is None and name not in report.typed:
                continue
            if name in changed:
                out.append(f"  {name}: {changed[name][0]} -> {value}   (changed by SGLang)")
            elif name in report.typed:
                out.append(f"  {name}: {value}")
            else:
                out.append(f"  {name}: {value}   (SGLang's choice)")
    return "\n".join(out) + "\n"
