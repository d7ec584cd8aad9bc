"""`sglang-wizard profiles`: list, show, locate and validate profile files.

    sglang-wizard profiles [list] [--json]      saved profiles and the ready ones, with descriptions
    sglang-wizard profiles show NAME|PATH        print a profile's TOML
    sglang-wizard profiles path [--ready]        print the profiles directory
    sglang-wizard profiles validate [FILE|NAME|- ...] [--json] [--quiet]

A NAME is looked up in the profiles directory first, then among the ready profiles (`profiles/`).
Exit codes: 0 ok, 2 a profile is broken or not found (with file, line, key and what is allowed).
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wizard.errors import ToolInputError
from wizard.profile import (
    PROFILES_DIR_ENV,
    builtin_profiles_dir,
    find_profile,
    list_profiles,
    load_profile,
    profile_from_toml,
    profiles_dir,
    validate_profile_name,
)
from wizard.profile_problems import Problem, ProfileError


def register(subparsers: Any) -> None:
    """Add the `profiles` subcommand and its actions."""
    parser = subparsers.add_parser(
        "profiles",
        help="list, show and validate saved and ready profiles",
        description=(
            "Profiles are TOML files. Saved ones live in the profiles directory "
            f"(`sglang-wizard profiles path`; ${PROFILES_DIR_ENV} overrides it); ready ones for "
            "known set-ups ship in profiles/. Without an action, lists both."
        ),
    )
    parser.set_defaults(func=run_list, json=False)
    actions = parser.add_subparsers(dest="action", metavar="ACTION")

    listing = actions.add_parser("list", help="saved and ready profiles with their descriptions")
    listing.add_argument("--json", action="store_true", help="print JSON: name, path, source, ...")
    listing.set_defaults(func=run_list)

    show = actions.add_parser("show", help="print a profile's TOML")
    show.add_argument("profile", metavar="NAME|PATH", help="a saved or ready name, or a file")
    show.set_defaults(func=run_show)

    path = actions.add_parser("path", help="print the profiles directory")
    path.add_argument(
        "--ready", action="store_true", help="print the ready profiles' directory instead"
    )
    path.set_defaults(func=run_path)

    validate = actions.add_parser(
        "validate",
        help="check profile files; exit 2 with located errors if any is broken",
        description=(
            "Load each profile and report every problem as FILE:LINE: KEY: MESSAGE (allowed: ...). "
            "Without arguments, validates every saved and ready profile. `-` reads standard input."
        ),
    )
    validate.add_argument("files", nargs="*", metavar="FILE|NAME|-", help="profiles to check")
    validate.add_argument("--json", action="store_true", help="print JSON, one entry per file")
    validate.add_argument("--quiet", "-q", action="store_true", help="print only problems")
    validate.set_defaults(func=run_validate)


# ---------------------------------------------------------------------------------------------
# Finding profiles


@dataclass(frozen=True)
class Entry:
    """One profile file found by `list`."""

    name: str
    path: Path
    source: str  # "saved" or "ready"


def _entries() -> list[Entry]:
    saved = [Entry(p.stem, p, "saved") for p in list_profiles()]
    ready_dir = builtin_profiles_dir()
    ready = sorted(ready_dir.glob("*.toml")) if ready_dir.is_dir() else []
    return saved + [Entry(p.stem, p, "ready") for p in ready]


def resolve(reference: str) -> Path:
    """A file path as given, else a saved profile name, else a ready profile name."""
    as_path = Path(reference).expanduser()
    try:
        exists = as_path.exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL character
        exists = False
    if exists or "/" in reference:
        return as_path
    try:
        stem = validate_profile_name(reference)
    except ValueError as exc:
        shown = reference if len(reference) <= 80 else reference[:77] + "..."
        message = str(exc).replace(repr(reference), repr(shown))
        raise ToolInputError(f"{shown}: no such file, and {message}") from None
    found = find_profile(reference)
    if found is not None:
        return found
    if reference.endswith(".toml"):  # `foo.toml` in the current directory that does not exist
        return as_path
    names = sorted({e.name for e in _entries()})
    close = difflib.get_close_matches(stem, names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    known = f" Known profiles: {', '.join(names)}." if names else " No profiles are saved yet."
    raise ToolInputError(
        f"no profile named {stem!r} in {profiles_dir()} or {builtin_profiles_dir()}{hint}{known}"
    )


# ---------------------------------------------------------------------------------------------
# Actions


def _summary(description: str, width: int) -> str:
    """The first sentence of a description, cut to `width` characters."""
    text = " ".join(description.split())
    first, dot, _ = text.partition(". ")
    text = first + ("." if dot else "")
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def run_list(args: argparse.Namespace) -> int:
    """Print saved and ready profiles with their descriptions (or JSON)."""
    rows: list[dict[str, Any]] = []
    for entry in _entries():
        row: dict[str, Any] = {
            "name": entry.name,
            "source": entry.source,
            "path": str(entry.path),
            "description": "",
            "sglang_version": None,
            "error": None,
        }
        try:
            profile = load_profile(entry.path)
        except ProfileError as exc:
            row["error"] = exc.first.render(str(entry.path))
            first = exc.first
            where = f"line {first.line}: " if first.line else ""
            key = f"{first.key}: " if first.key else ""
            row["broken"] = f"BROKEN ({where}{key}{first.message})"
        else:
            row["description"] = profile.description
            row["sglang_version"] = profile.sglang_version
        rows.append(row)
    if args.json:
        public = [{k: v for k, v in row.items() if k != "broken"} for row in rows]
        print(json.dumps(public, indent=2, ensure_ascii=False))
        return 0
    width = shutil.get_terminal_size((100, 24)).columns
    for source, title, where, empty in (
        (
            "saved",
            "Saved profiles",
            str(profiles_dir()),
            "none yet: save one from the wizard or with `sglang-wizard import -o FILE`",
        ),
        ("ready", "Ready profiles", str(builtin_profiles_dir()), "none"),
    ):
        group = [r for r in rows if r["source"] == source]
        print(f"{title} ({where}):")
        if not group:
            print(f"  ({empty})")
        name_width = max((len(r["name"]) for r in group), default=0)
        for row in group:
            text = row["broken"] if row["error"] else row["description"]
            room = max(20, width - name_width - 4)
            print(f"  {row['name']:<{name_width}}  {_summary(text, room)}".rstrip())
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print a profile file as stored; exit 2 (errors on stderr) if it does not load."""
    path = resolve(args.profile)
    try:
        profile_text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        profile_text = None
    if profile_text is not None:
        sys.stdout.write(profile_text if profile_text.endswith("\n") else profile_text + "\n")
    try:
        load_profile(path)
    except ProfileError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    return 0


def run_path(args: argparse.Namespace) -> int:
    """Print the profiles directory (or the ready profiles' directory)."""
    print(builtin_profiles_dir() if args.ready else profiles_dir())
    return 0


def _problem_json(problem: Problem) -> dict[str, Any]:
    return {
        "key": problem.key,
        "line": problem.line,
        "message": problem.message,
        "allowed": problem.allowed,
    }


def run_validate(args: argparse.Namespace) -> int:
    """Validate profiles; 0 when all load, 2 when any is broken (every problem is printed)."""
    results = [_validate_one(label, path, error) for label, path, error in _targets(args.files)]
    broken = [r for r in results if not r["ok"]]
    if args.json:
        out = [{**r, "problems": [_problem_json(p) for p in r["problems"]]} for r in results]
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 2 if broken else 0
    for result in results:
        if result["ok"]:
            if not args.quiet:
                print(f"{result['file']}: ok")
            continue
        for problem in result["problems"]:
            print(problem.render(result["file"]))
    if not args.quiet or broken:
        print(f"{len(results) - len(broken)} of {len(results)} profiles valid", file=sys.stderr)
    return 2 if broken else 0


def _targets(references: list[str]) -> list[tuple[str, Path | None, str | None]]:
    """(label, path or None for stdin, error when the reference names nothing)."""
    if not references:
        entries = _entries()
        if not entries:
            raise ToolInputError("nothing to validate: give profile files or save a profile first")
        return [(str(e.path), e.path, None) for e in entries]
    targets: list[tuple[str, Path | None, str | None]] = []
    for reference in references:
        if reference == "-":
            targets.append(("<stdin>", None, None))
            continue
        try:
            path = resolve(reference)
        except ToolInputError as exc:
            targets.append((reference, None, str(exc)))
            continue
        targets.append((str(path), path, None))
    return targets


def _stdin_text(label: str) -> str:
    """Standard input as text, checked like a file: bytes that are not UTF-8 are "not UTF-8
    text" at their line (read as text they became a garbled value of some key)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (already decoded)
        return sys.stdin.read()
    raw = buffer.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ProfileError(
            label, [Problem(None, line, "not UTF-8 text", "TOML files must be UTF-8")]
        ) from None


def _validate_one(label: str, path: Path | None, error: str | None) -> dict[str, Any]:
    problems: list[Problem] = []
    if error is not None:
        problems = [Problem(None, None, error)]
    else:
        try:
            if path is None:
                profile_from_toml(_stdin_text(label), label)
            else:
                load_profile(path)
        except ProfileError as exc:
            problems = exc.problems
    return {"file": label, "ok": not problems, "problems": problems}
