"""Import a pasted SGLang launch command (or an argv) into a `Profile`.

Accepted: `[export A=1 &&] [ENV=V ...] [env ...] [nohup] python3 -m sglang.launch_server ARGS
[> log 2>&1] [&]` and `sglang serve ARGS`, with backslash-continued lines, comments and any shell
quoting; flags as `--flag value` or `--flag=value`, aliases and the unique prefixes the target
version's argparse accepts. The flags are checked by SGLang's own parser rebuilt from the version's
flag table, so an argv that SGLang would refuse is refused here with SGLang's exact message.
Values are kept as typed (`--speculative-algorithm nextn` stays `nextn`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wizard.sglang.errors import CommandError, FlagDataError, SglangArgparseError
from wizard.sglang.fields import BY_DEST, canonical_dest
from wizard.sglang.flags import (
    argparse_error,
    group_pieces,
    load_table,
    rename_for,
    run_argparse,
)
from wizard.sglang.releases import default_version
from wizard.sglang.shellwords import Word, is_name, is_run_prefix, split_commands, split_words
from wizard.sglang.versions import VersionError, effective_env, resolve_version

if TYPE_CHECKING:  # pydantic is imported only when a profile is built (cold `check` stays fast)
    from pydantic import ValidationError

    from wizard.profile_schema import Profile

__all__ = [
    "CommandError",
    "ImportResult",
    "ParsedFlags",
    "SglangArgparseError",
    "argparse_error",
    "parse_command",
    "parse_flags",
    "split_launch",
]


@dataclass
class ParsedFlags:
    """The flags of one argv, checked by the version's parser.

    `values`: canonical dest -> typed value, only for flags present. `unknown_to_profile`:
    the argv pieces of valid SGLang flags that no profile field holds (they go to
    `profile.extra_args`, in order, as typed). `notes`: prefixes expanded, deprecated flags, ...
    """

    values: dict[str, Any] = field(default_factory=dict)
    unknown_to_profile: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    spelled: dict[str, str] = field(default_factory=dict)  # canonical dest -> flag as typed


@dataclass
class ImportResult:
    """A profile made from a launch command, with what was noticed on the way."""

    profile: Profile
    notes: list[str]
    version_used: str
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# argv -> values


def parse_flags(argv: Sequence[str], version: str) -> ParsedFlags:
    """Check `argv` (the flags after `launch_server`) with SGLang `version`'s parser.

    Raises `CommandError` for anything SGLang's argparse would refuse (unknown or ambiguous flags,
    missing values, bad types, invalid choices; `exit_like_sglang=True` with SGLang's message).
    """
    try:
        supported, _ = resolve_version(version)
    except VersionError as exc:
        raise CommandError(
            str(exc), flag=version, suggestion=f"use --sglang-version {default_version()}"
        ) from None
    try:
        table = load_table(supported)
    except FlagDataError as exc:
        raise CommandError(str(exc)) from None
    argv = list(argv)
    namespace = run_argparse(table, argv)
    parsed = ParsedFlags()
    for match, pieces in group_pieces(table, argv):
        if match is None:
            continue  # not after a successful parse: SGLang's parser takes no positionals
        action, typed = match.action, match.typed
        if match.how == "prefix":
            parsed.notes.append(
                f"{typed} is a prefix; SGLang {supported} reads it as {match.option}"
            )
        if action.is_deprecated:
            change = rename_for(match.option, supported)
            parsed.notes.append(
                (change if typed == match.option else f"{typed} ({match.option}): {change}")
                if change
                else f"{typed} is deprecated in SGLang {supported} (it still works, with a warning)"
            )
        if action.server_field == "config":
            parsed.notes.append(
                f"{' '.join(pieces)}: the values inside the --config file are not imported "
                "(it is kept in extra_args and still read at launch)"
            )
        canonical = canonical_dest(action.server_field)
        spec = BY_DEST.get(canonical)
        if spec is None or spec.dest_for(supported) != action.server_field:
            parsed.unknown_to_profile.extend(pieces)
            continue
        if not hasattr(namespace, action.server_field):
            continue
        parsed.values[canonical] = getattr(namespace, action.server_field)
        parsed.spelled[canonical] = typed
    return parsed


# ---------------------------------------------------------------------------------------------
# text -> argv + env


_WRAPPERS = {"nohup", "exec", "time", "nice", "stdbuf", "setsid", "command", "builtin"}
_PYTHON_OPTIONS_WITH_VALUE = {"-W", "-X", "-c", "-Q"}


@dataclass
class LaunchParts:
    """The launch command found in pasted text."""

    env: dict[str, str]
    argv: list[str]
    launcher: str  # "python -m sglang.launch_server" or "sglang serve"
    notes: list[str]
    interpreter: str | None = None  # the python that ran `-m sglang.launch_server`
    container: Any = None  # `wizard.container.ImportedContainer` of a pasted `docker run ...`


def _is_python(word: str) -> bool:
    base = os.path.basename(word)
    if not base.startswith("python"):
        return False
    rest = base[len("python") :]
    return all(c.isdigit() or c == "." for c in rest)


def _find_launch(command: list[Word]) -> int | None:
    texts = [w.text for w in command]
    for i, text in enumerate(texts):
        if text == "sglang.launch_server" and i > 0 and texts[i - 1] == "-m":
            return i
        if text == "-msglang.launch_server":
            return i
        if os.path.basename(text) == "sglang" and i + 1 < len(texts) and texts[i + 1] == "serve":
            return i + 1
    return None


def split_launch(text: str | Sequence[str]) -> LaunchParts:
    """Find the SGLang launch in pasted text (or an argv list) and split off env + wrappers."""
    notes: list[str] = []
    if isinstance(text, str):
        words = split_words(text)
    else:
        words = [Word(str(t), "word") for t in text]
        # an argv list: leading NAME=value items are env assignments, like in a shell
        words = [Word(w.text, "word", assignment=_looks_like_assignment(w.text)) for w in words]
    commands = split_commands(words)
    env: dict[str, str] = {}
    launch: list[Word] | None = None
    launch_at: int | None = None
    for command in commands:
        at = _find_launch(command)
        if at is not None:
            if launch is not None:
                raise CommandError(
                    "the text holds more than one SGLang launch command",
                    flag=" ".join(w.text for w in command[: at + 1]),
                    suggestion="import one launch at a time",
                )
            launch, launch_at = command, at
            continue
        if launch is not None:
            if command and command[0].kind != "redir":
                notes.append(f"ignored the command after the launch: {_show(command)}")
            continue
        # before the launch: `export A=1 B=2`, `A=1` alone, `cd dir`, `source venv/bin/activate`
        head = command[0].text if command else ""
        if head == "export":
            for word in command[1:]:
                if word.assignment:
                    _assign(word, env, notes)
                elif not word.text.startswith("-"):
                    notes.append(f"export {word.text} without a value was ignored")
        elif command and all(w.assignment for w in command):
            for word in command:
                _assign(word, env, notes)
        elif command:
            notes.append(f"ignored a command before the launch: {_show(command)}")
    if launch is None or launch_at is None:
        nested = _nested_launch(words)
        if nested is not None:
            inner = split_launch(nested.text)
            inner.notes.insert(0, "read the launch command inside a quoted word (ssh/sh -c)")
            inner.env = {**env, **inner.env}
            return inner
        real = [c for c in commands if c]
        lead = (next((k for k, w in enumerate(real[0]) if not w.assignment), len(real[0]))
                if len(real) == 1 else 0)
        if (len(real) == 1 and lead < len(real[0]) and real[0][lead].kind == "word"
                and real[0][lead].text.startswith("--")):
            # only the flags were pasted (after `NAME=value` words: the environment): read
            # them as the flags of a launch
            for word in real[0][:lead]:
                _assign(word, env, notes)
            return LaunchParts(
                env,
                [w.text for w in real[0][lead:] if w.kind == "word"],
                "flags only",
                [*notes, "no launcher in the text; read it as the flags of a launch"],
            )
        raise CommandError(
            "no SGLang launch command found",
            suggestion="paste `python -m sglang.launch_server --model-path ...` "
            "or `sglang serve --model-path ...`",
        )
    prefix = launch[:launch_at]
    rest = launch[launch_at + 1 :]
    container = None
    start = next((k for k, w in enumerate(prefix) if not w.assignment), len(prefix))
    if is_run_prefix([w.text for w in prefix[start:]]) is not None:
        # Lazy: the container module reads the profile schema (pydantic), which the cold
        # `check` of a plain launch line never needs.
        from wizard.container import parse_run_words

        # `docker run [OPTIONS] IMAGE python3 -m sglang.launch_server ...`: the container table
        container = parse_run_words([w.text for w in prefix[start:]], _model_path_of(rest))
        notes.extend(container.notes)
        prefix = prefix[:start]
    launcher = (
        "sglang serve" if launch[launch_at].text == "serve" else ("python -m sglang.launch_server")
    )
    # prefix: [A=1 ...] [env [-u X] A=1 ...] [nohup|time|...] [python [-u] -m]
    interpreter: str | None = None
    i = 0
    seen_command = False
    while i < len(prefix):
        word = prefix[i]
        if word.kind == "redir":
            notes.append(f"removed the redirection {_redir_text(word.text, _next_text(prefix, i))}")
            i += 2  # every redirection operator is followed by its target
            continue
        if word.assignment and not seen_command:
            _assign(word, env, notes)
        elif word.text == "env" and not seen_command:
            i += 1
            while i < len(prefix) and prefix[i].text.startswith("-"):
                notes.append(f"ignored the env option {prefix[i].text}")
                i += 2 if prefix[i].text in {"-u", "--unset", "-C", "--chdir"} else 1
            continue
        elif word.text in _WRAPPERS:
            notes.append(f"removed the wrapper {word.text!r}")
        elif _is_python(word.text):
            seen_command = True
            interpreter = word.text
        elif word.text == "-m" or word.text.startswith("-"):
            if word.text in _PYTHON_OPTIONS_WITH_VALUE:
                i += 1
        elif os.path.basename(word.text) == "sglang":
            seen_command = True
        else:
            notes.append(f"removed {word.text!r} before the launch")
        i += 1
    argv: list[str] = []
    j = 0
    while j < len(rest):
        word = rest[j]
        if word.kind == "redir":
            target = _next_text(rest, j)
            notes.append(f"removed the redirection {_redir_text(word.text, target)}")
            j += 2  # every redirection operator is followed by its target
            continue
        if word.kind == "op":
            if word.text == "&":
                notes.append("removed the trailing & (the wizard runs the server detached)")
            j += 1
            continue
        _note_expansion(word, notes)
        argv.append(word.text)
        j += 1
    if launcher == "sglang serve":
        argv = _strip_model_type(argv, notes)
    return LaunchParts(env, argv, launcher, notes, interpreter, container)


def _model_path_of(words: list[Word]) -> str | None:
    texts = [w.text for w in words]
    for index, text in enumerate(texts):
        if text in ("--model-path", "--model") and index + 1 < len(texts):
            return texts[index + 1]
        if text.startswith(("--model-path=", "--model=")):
            return text.split("=", 1)[1]
    return None


def _nested_launch(words: list[Word]) -> Word | None:
    for word in words:
        if (
            word.kind == "word"
            and ("sglang.launch_server" in word.text or "sglang serve" in word.text)
            and (" " in word.text or "\n" in word.text)
        ):
            return word
    return None


def _strip_model_type(argv: list[str], notes: list[str]) -> list[str]:
    out: list[str] = []
    k = 0
    while k < len(argv):
        piece = argv[k]
        if piece == "--model-type" and k + 1 < len(argv):
            notes.append(f"`sglang serve --model-type {argv[k + 1]}` is not kept")
            k += 2
            continue
        if piece.startswith("--model-type="):
            notes.append(f"`sglang serve {piece}` is not kept")
            k += 1
            continue
        out.append(piece)
        k += 1
    return out


def _looks_like_assignment(text: str) -> bool:
    name, sep, _ = text.partition("=")
    return bool(sep) and is_name(name)


def _next_text(words: list[Word], i: int) -> str:
    return words[i + 1].text if i + 1 < len(words) else ""


def _assign(word: Word, env: dict[str, str], notes: list[str]) -> None:
    """A `NAME=value` word into the launch's environment (noting a shell expansion in it)."""
    name, _, value = word.text.partition("=")
    env[name] = value
    _note_expansion(word, notes)


def _note_expansion(word: Word, notes: list[str]) -> None:
    if word.expansion:
        notes.append(
            f"{word.text!r} uses a shell expansion that the wizard cannot resolve; "
            "it is kept as literal text"
        )


def _show(command: list[Word]) -> str:
    text = " ".join(w.text for w in command)
    return text if len(text) <= 80 else text[:77] + "..."


# ---------------------------------------------------------------------------------------------
# text -> Profile


def parse_command(text: str | Sequence[str], version: str | None = None) -> ImportResult:
    """Turn a pasted launch command (or an argv list) into a `Profile`.

    `version` is the SGLang version the command is meant for (default: the profile default
    release); another version than the supported ones uses the nearest rule set and says so in
    `notes`. Raises `CommandError` only.
    """
    from pydantic import ValidationError

    from wizard.profile_schema import DEFAULT_SGLANG_VERSION, Profile

    wanted = DEFAULT_SGLANG_VERSION if version is None else version
    try:
        supported, warning = resolve_version(wanted)
    except VersionError as exc:
        raise CommandError(str(exc), flag=str(wanted)) from None
    parts = split_launch(text)
    notes = list(parts.notes)
    if warning:
        notes.insert(0, warning)
    parsed = parse_flags(parts.argv, supported)
    notes.extend(parsed.notes)
    data: dict[str, Any] = {"sglang_version": wanted.strip().lstrip("vV")}
    for dest, value in parsed.values.items():
        spec = BY_DEST[dest]
        if isinstance(value, float) and not math.isfinite(value):
            flag = parsed.spelled.get(dest, spec.path)
            raise CommandError(
                f"{flag} {value!r}: not a finite number (profile field {spec.path})",
                flag=flag,
                suggestion="give a number such as 0.85",
            )
        section, _, name = spec.path.partition(".")
        data.setdefault(section, {})[name] = value
    if "model" not in data or "path" not in data["model"]:
        raise CommandError(
            "the command has no --model-path",
            flag="--model-path",
            suggestion="add --model-path /path/to/model (SGLang requires it)",
            exit_like_sglang=True,
        )
    if parsed.unknown_to_profile:
        data["extra_args"] = list(parsed.unknown_to_profile)
    if parts.container is not None:
        data["container"] = dict(parts.container.table)
        # `NAME=value docker run -e NAME`: the value before the command is what -e NAME passes
        passed = {k: v for k, v in parts.container.env.items()
                  if not (v == f"env:{k}" and k in parts.env)}
        parts.env = {**parts.env, **passed}
    if parts.env:
        data["env"] = dict(parts.env)
    if parts.interpreter is not None and parts.interpreter != "python3":
        data["ssh"] = {"python": parts.interpreter}
        notes.append(f"the interpreter {parts.interpreter} is kept as ssh.python")
    for name, value in parts.env.items():
        _, note = effective_env(name, value, supported)
        if note:
            notes.append(f"SGLang {supported}: {note}")
    try:
        profile = Profile.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(exc, parsed) from None
    from wizard.multinode import absorb_node_flags

    profile, node_notes = absorb_node_flags(profile)  # one node's command of a multi-node launch
    notes.extend(node_notes)
    return ImportResult(profile, notes, supported, list(parts.argv), dict(parts.env))


def _validation_error(exc: ValidationError, parsed: ParsedFlags) -> CommandError:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    path = ".".join(loc[:2])
    flag = None
    for dest, typed in parsed.spelled.items():
        if BY_DEST[dest].path == path:
            flag = typed
    where = flag or path
    value = err.get("input")
    message = f"{where} {value!r}: {err['msg']} (profile field {path})"
    if loc and loc[0] == "env":
        message = f"environment {'.'.join(loc[1:])}: {err['msg']}"
        where = "env"
    return CommandError(
        message,
        flag=flag or where,
        suggestion="change the value; the wizard's profile cannot hold it",
        exit_like_sglang=False,
    )


def _redir_text(op: str, target: str) -> str:
    return f"{op}{target}" if op.endswith("&") else f"{op} {target}".rstrip()
