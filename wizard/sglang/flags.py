"""Per-version SGLang flag tables, and a real argparse parser rebuilt from each one.

The tables are dumps of SGLang's own argparse parser (`data/flags-<V>.json`, written by the
conformance runner). From a table this module rebuilds an `argparse.ArgumentParser` with the same
option strings, nargs, types, choices, actions and `allow_abbrev`, so that "is this flag valid, which
one does this prefix mean, what error would SGLang print" is decided by argparse itself, exactly as
in SGLang. On top of that: flags renamed/removed between versions, and a did-you-mean for unknown
flags (flags from other engines such as vLLM, then close spellings).
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

from wizard.secrets import exact_secret_option, secret_flags
from wizard.sglang.errors import CommandError, FlagDataError, SglangArgparseError
from wizard.sglang.fields import SERVER_ARGS_FIELDS
from wizard.sglang.releases import release_names, version_key
from wizard.sglang.versions import resolve_version

DATA_DIR = Path(__file__).resolve().parent / "data"
_MISSING: Any = object()

# ---------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class FlagAction:
    """One argparse action of SGLang's parser, as dumped."""

    dest: str
    option_strings: tuple[str, ...]
    action: str = "store"
    nargs: int | str | None = None
    type: str | None = None
    choices: tuple[Any, ...] | None = None
    default: Any = None
    help: str | None = None
    deprecated: bool | str | None = None
    required: bool = False
    const: Any = None
    field: str = ""  # the ServerArgs field the value ends up in ("" = same as dest)

    @property
    def server_field(self) -> str:
        """SGLang's `ServerArgs` field name (SGLang copies e.g. `tensor_parallel_size` to `tp_size`)."""
        return self.field or self.dest

    @property
    def kind(self) -> str:
        """Normalised action kind: store, store_true, store_false, store_const, append, extend,
        count, boolean_optional, help, version, deprecated_noop, deprecated_store_true,
        deprecated_store_const, deprecated_alias_store, lora_path or custom."""
        return _action_kind(self.action)

    @property
    def is_deprecated(self) -> bool:
        """Deprecated in this version (still accepted, prints a warning)."""
        return bool(self.deprecated) or self.kind.startswith("deprecated")

    @property
    def long_options(self) -> tuple[str, ...]:
        """The `--` spellings (no `--no-` negations of BooleanOptional flags)."""
        longs = tuple(o for o in self.option_strings if o.startswith("--"))
        if self.kind == "boolean_optional":
            positives = {o for o in longs if not o.startswith("--no-")}
            longs = tuple(
                o for o in longs if not (o.startswith("--no-") and "--" + o[5:] in positives)
            )
        return longs

    @property
    def primary(self) -> str:
        """The spelling to write: the long option named after `dest`, else the first long one."""
        longs = self.long_options
        for name in (self.server_field, self.dest):
            want = "--" + name.replace("_", "-")
            if want in longs:
                return want
        return longs[0] if longs else self.option_strings[0]


def _action_kind(name: str | None) -> str:
    raw = (name or "store").strip()
    low = raw.lower().lstrip("_").replace("action", "")
    table = {
        "store": "store",
        "storetrue": "store_true",
        "store_true": "store_true",
        "storefalse": "store_false",
        "store_false": "store_false",
        "storeconst": "store_const",
        "store_const": "store_const",
        "append": "append",
        "appendconst": "append_const",
        "append_const": "append_const",
        "extend": "extend",
        "count": "count",
        "booleanoptional": "boolean_optional",
        "boolean_optional": "boolean_optional",
        "help": "help",
        "version": "version",
        "deprecated": "deprecated_noop",
        "deprecatedstoretrue": "deprecated_store_true",
        "deprecatedstoreconst": "deprecated_store_const",
        "deprecatedaliasstore": "deprecated_alias_store",
        "lorapath": "lora_path",
    }
    return table.get(low.replace(" ", ""), "custom")


@dataclass(frozen=True)
class FlagMatch:
    """How one command-line piece resolved: which action, through which spelling."""

    action: FlagAction
    option: str  # the full option string argparse matched (`--speculative-algorithm`)
    typed: str  # what the user typed before any `=` (`--speculative-algo`)
    explicit_value: str | None  # the part after `=`, if any
    how: str  # "exact", "alias" or "prefix"


@dataclass
class FlagTable:
    """All flags of one SGLang version, with lookup exactly like its argparse parser."""

    version: str
    prog: str
    allow_abbrev: bool
    actions: tuple[FlagAction, ...]
    by_option: dict[str, FlagAction] = field(init=False, repr=False)
    by_dest: dict[str, FlagAction] = field(init=False, repr=False)  # by ServerArgs field
    _parser: _SglangParser | None = field(default=None, init=False, repr=False)
    _lenient_parser: _SglangParser | None = field(default=None, init=False, repr=False)
    _matches: dict[str, FlagMatch | CommandError | None] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self.by_option = {o: a for a in self.actions for o in a.option_strings}
        self.by_dest = {}
        for a in self.actions:
            if a.kind in {"help", "version"}:
                continue
            current = self.by_dest.get(a.server_field)
            # several actions may share a dest (a deprecated alias next to the real flag)
            if current is None or (current.is_deprecated and not a.is_deprecated):
                self.by_dest[a.server_field] = a

    @property
    def parser(self) -> _SglangParser:
        """The argparse parser rebuilt from the table (cached)."""
        if self._parser is None:
            self._parser = _build_parser(self)
        return self._parser

    @property
    def lenient_parser(self) -> _SglangParser:
        """The same parser without required flags (for checking a part of an argv; cached)."""
        if self._lenient_parser is None:
            self._lenient_parser = _build_parser(self, enforce_required=False)
        return self._lenient_parser

    def long_options(self) -> list[str]:
        """Every `--` option string of this version."""
        return [o for o in self.by_option if o.startswith("--")]

    def match(self, piece: str) -> FlagMatch | None:
        """Resolve a command-line piece that looks like an option, exactly like argparse.

        None when argparse would treat the piece as a value (e.g. `-1`) or does not know it;
        raises `CommandError` (exit_like_sglang) for an ambiguous prefix.
        """
        cached = self._matches.get(piece, _MISSING)
        if cached is _MISSING:
            try:
                cached = self._match_uncached(piece)
            except CommandError as exc:
                cached = exc
            if len(self._matches) > 4096:
                self._matches.clear()
            self._matches[piece] = cached
        if isinstance(cached, CommandError):
            raise cached
        return cached

    def _match_uncached(self, piece: str) -> FlagMatch | None:
        parser = self.parser
        try:
            found = parser._parse_optional(piece)
        except _ArgparseFailure as failure:
            raise self._ambiguity_error(piece, failure.message) from None
        if found is None:
            return None
        # Python 3.11: (action, option_string, explicit_arg); 3.12+: a list of such tuples
        if isinstance(found, list):  # pragma: no cover - newer Pythons
            found = found[0]
        action_obj, option_string, explicit_arg = found[0], found[1], found[2]
        if action_obj is None:
            return None
        typed = piece.split("=", 1)[0] if "=" in piece else piece
        flag: FlagAction | None = getattr(action_obj, "wizard_flag", None)
        if flag is None:
            return None
        if typed == option_string:
            how = "exact" if option_string == flag.primary else "alias"
        else:
            how = "prefix"
        return FlagMatch(flag, option_string, typed, explicit_arg, how)

    def match_safe(self, piece: str) -> FlagMatch | None:
        """`match` that returns None instead of raising for an ambiguous prefix."""
        try:
            return self.match(piece)
        except CommandError:
            return None

    def lookup(self, option: str) -> FlagMatch:
        """Like `match`, but an unknown flag is a `CommandError` with a did-you-mean."""
        found = self.match(option)
        if found is None:
            raise unknown_flag_error(option.split("=", 1)[0], self)
        return found

    def _ambiguity_error(self, piece: str, message: str) -> CommandError:
        typed = piece.split("=", 1)[0]
        return CommandError(
            f"SGLang {self.version}: {message}",
            flag=typed,
            suggestion=_ambiguity_hint(typed, self.version),
            exit_like_sglang=True,
            sglang_error=SglangArgparseError(message, self.prog),
        )


def table_from_data(data: Mapping[str, Any], source: str = "<flag table>") -> FlagTable:
    """Build a table from the dump format; `FlagDataError` names the source and the bad entry."""
    try:
        version = str(data["sglang_version"])
        actions_raw = data["actions"]
        if not isinstance(actions_raw, list):
            raise TypeError("'actions' must be a list")
        actions = []
        renamed_fields = SERVER_ARGS_FIELDS
        for index, entry in enumerate(actions_raw):
            try:
                action = _action_from(entry)
                if action.dest in renamed_fields:
                    action = replace(action, field=renamed_fields[action.dest])
                actions.append(action)
            except (KeyError, TypeError, ValueError) as exc:
                raise FlagDataError(f"{source}: actions[{index}]: {exc}") from None
    except (KeyError, TypeError) as exc:
        raise FlagDataError(f"{source}: not a flag table dump: {exc}") from None
    return FlagTable(
        version=version,
        prog=str(data.get("prog") or "sglang serve"),
        allow_abbrev=bool(data.get("allow_abbrev", True)),
        actions=tuple(actions),
    )


def _action_from(entry: Mapping[str, Any]) -> FlagAction:
    options = entry["option_strings"]
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise TypeError("option_strings must be a list of strings")
    choices = entry.get("choices")
    if choices is not None and not isinstance(choices, list):
        raise TypeError("choices must be a list or null")
    dest = str(entry["dest"])
    required = entry.get("required")
    if required is None:
        # Both supported versions declare --model-path required; older dumps omit "required".
        required = dest == "model_path"
    nargs = entry.get("nargs")
    if isinstance(nargs, str) and nargs.isdigit():
        nargs = int(nargs)
    return FlagAction(
        dest=dest,
        option_strings=tuple(options),
        action=str(entry.get("action") or "store"),
        nargs=nargs,
        type=None if entry.get("type") is None else str(entry.get("type")),
        choices=None if choices is None else tuple(choices),
        default=entry.get("default"),
        help=entry.get("help"),
        deprecated=entry.get("deprecated"),
        required=bool(required),
        const=entry.get("const"),
    )


def table_path(version: str) -> Path:
    """Where the dump of a supported version lives."""
    return DATA_DIR / f"flags-{version}.json"


@cache
def load_table(version: str) -> FlagTable:
    """The flag table of `version` (resolved to the nearest supported version first)."""
    supported, _ = resolve_version(version)
    path = table_path(supported)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FlagDataError(
            f"{path}: the SGLang {supported} flag table is missing; it is part of the package "
            "(re-install sglang-wizard, or run the conformance dump)"
        ) from None
    except (OSError, ValueError) as exc:
        raise FlagDataError(f"{path}: cannot read the flag table: {exc}") from None
    return table_from_data(data, str(path))


# ---------------------------------------------------------------------------------------------
# The rebuilt argparse parser


class _ArgparseFailure(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _HelpRequested(Exception):
    def __init__(self, option: str) -> None:
        super().__init__(option)
        self.option = option


class _SglangParser(argparse.ArgumentParser):
    """argparse with errors raised instead of printed + `sys.exit(2)`."""

    # Set while `_build_parser` adds the flags: argparse asks for a new formatter per flag only to
    # check its metavar, and each new one queries the terminal size (about half the build time).
    _shared_formatter: argparse.HelpFormatter | None = None

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._shared_formatter is not None:
            return self._shared_formatter
        return super()._get_formatter()

    def error(self, message: str) -> NoReturn:
        raise _ArgparseFailure(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _ArgparseFailure(message or f"exit {status}")


class _RaiseHelp(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.pop("nargs", None)
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        raise _HelpRequested(option_string or self.option_strings[0])


# The namespace attribute (and typed key) listing the deprecated options typed, in order: SGLang's
# Deprecated*Action classes print a warning naming the option as typed.
DEPRECATED_OPTIONS = "_deprecated_options"


class _StoreValues(argparse.Action):
    """Stand-in for SGLang's custom actions: stores the values (or True for nargs=0); a deprecated
    action also records its option in `DEPRECATED_OPTIONS`."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, True if self.nargs == 0 else values)
        flag = getattr(self, "wizard_flag", None)
        if flag is not None and flag.is_deprecated and option_string:
            seen = list(getattr(namespace, DEPRECATED_OPTIONS, None) or ())
            setattr(namespace, DEPRECATED_OPTIONS, [*seen, option_string])


def _named(func: Callable[[str], Any], name: str) -> Callable[[str], Any]:
    """A type callable whose `__name__` is SGLang's (argparse puts it into error messages)."""

    def convert(value: str) -> Any:
        return func(value)

    convert.__name__ = name
    return convert


def _nullable_str(value: str) -> str | None:
    return None if not value or value == "None" else value


def _human_readable_int(value: str) -> int:
    """SGLang's `utils.common.human_readable_int` (the same in every release that has it)."""
    value = value.strip()
    si_multiplier = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    iec_multiplier = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        from decimal import Decimal  # only for a suffixed value

        number, suffix = match.groups()
        if suffix in iec_multiplier:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. "
                    f"Use an integer IEC value such as '{int(Decimal(number))}{suffix}', "
                    f"or an SI value such as '{number}{suffix[0]}'."
                )
            return int(number) * iec_multiplier[suffix]
        return int(Decimal(number) * si_multiplier[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: '{value}'. "
            "Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes (1Ki, 1Mi). "
            "Suffixes are case-sensitive."
        ) from None


def _cuda_graph_backend(raw: str) -> str:
    """SGLang's `model_executor/cuda_graph_config.parse_cuda_graph_backend_arg`."""
    if raw == "tc_piecewise":
        raise argparse.ArgumentTypeError(
            "tc_piecewise was removed; select breakable, full, or disabled"
        )
    return raw


_CUDA_GRAPH_PHASE_KEYS = {
    "decode": ("backend", "max_bs", "bs"),
    "prefill": (
        "backend",
        "max_bs",
        "bs",
        "max_context_size",
        "full_prefill_max_req",
        "full_prefill_prefix_chunk_tokens",
    ),
}


def _cuda_graph_config(raw: str) -> dict[str, dict[str, Any]]:
    """SGLang's `model_executor/cuda_graph_config.parse_cuda_graph_config_arg`."""
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"--cuda-graph-config must be JSON: {e}") from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(
            f"--cuda-graph-config must be a JSON object, got {type(parsed).__name__}"
        )
    result: dict[str, dict[str, Any]] = {}
    for phase, phase_settings in parsed.items():
        phase = str(phase)
        if phase not in _CUDA_GRAPH_PHASE_KEYS:
            raise argparse.ArgumentTypeError(
                f"--cuda-graph-config: unknown phase '{phase}', expected one of "
                f"{tuple(_CUDA_GRAPH_PHASE_KEYS)}"
            )
        if not isinstance(phase_settings, dict):
            raise argparse.ArgumentTypeError(
                f"--cuda-graph-config['{phase}'] must be a JSON object, got "
                f"{type(phase_settings).__name__}"
            )
        if "backend" in phase_settings:
            _cuda_graph_backend(phase_settings["backend"])
        allowed = _CUDA_GRAPH_PHASE_KEYS[phase]
        result[phase] = {}
        for key, value in phase_settings.items():
            if key not in allowed:
                raise argparse.ArgumentTypeError(
                    f"--cuda-graph-config['{phase}']: unknown key '{key}', expected one of "
                    f"{allowed}"
                )
            result[phase][key] = value
    return result


def _json_loads(value: str) -> Any:
    return json.loads(value)


def _json_list(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid JSON list: {value}. Please provide a valid JSON list."
        ) from None


_KNOWN_TYPES: dict[str, Callable[[str], Any]] = {
    "int": int,
    "float": float,
    "str": str,
    "nullable_str": _named(_nullable_str, "nullable_str"),
    "human_readable_int": _named(_human_readable_int, "human_readable_int"),
    "loads": _named(_json_loads, "loads"),
    "json.loads": _named(_json_loads, "loads"),
    "json_list_type": _named(_json_list, "json_list_type"),
    "parse_cuda_graph_backend_arg": _named(_cuda_graph_backend, "parse_cuda_graph_backend_arg"),
    "parse_cuda_graph_config_arg": _named(_cuda_graph_config, "parse_cuda_graph_config_arg"),
}


def _type_for(name: str | None) -> Callable[[str], Any] | None:
    if name is None:
        return None
    short = name.rsplit(".", 1)[-1] if name not in _KNOWN_TYPES else name
    known = _KNOWN_TYPES.get(name) or _KNOWN_TYPES.get(short)
    if known is not None:
        return known
    # A type we cannot reproduce: accept the text as-is, keep SGLang's name for messages.
    return _named(str, short or "str")


def _nargs(value: int | str | None) -> int | str | None:
    if value in ("?", "*", "+", "...", "A...", None) or isinstance(value, int):
        return value
    raise FlagDataError(f"unsupported nargs {value!r}")


def _build_parser(table: FlagTable, *, enforce_required: bool = True) -> _SglangParser:
    parser = _SglangParser(prog=table.prog, allow_abbrev=table.allow_abbrev, add_help=False)
    parser._shared_formatter = parser._get_formatter()
    try:
        _add_flags(parser, table, enforce_required)
    finally:
        parser._shared_formatter = None
    return parser


def _add_flags(parser: _SglangParser, table: FlagTable, enforce_required: bool) -> None:
    for flag in table.actions:
        options = list(flag.option_strings)
        if not options:
            continue  # positionals: SGLang's server parser has none
        kind = flag.kind
        common: dict[str, Any] = {"dest": flag.server_field, "default": argparse.SUPPRESS}
        if flag.help is not None:
            common["help"] = argparse.SUPPRESS
        if kind in {"help", "version"}:
            action = parser.add_argument(
                *options, action=_RaiseHelp, dest=flag.dest, default=argparse.SUPPRESS
            )
        elif kind in {"store_true", "store_false"}:
            action = parser.add_argument(*options, action=kind, **common)
        elif kind in {"store_const", "append_const"}:
            action = parser.add_argument(*options, action=kind, const=flag.const, **common)
        elif kind == "count":
            action = parser.add_argument(*options, action="count", **common)
        elif kind == "boolean_optional":
            action = parser.add_argument(
                *flag.long_options, action=argparse.BooleanOptionalAction, **common
            )
        elif kind in {"store", "append", "extend"}:
            kwargs: dict[str, Any] = dict(common)
            if flag.nargs is not None:
                kwargs["nargs"] = _nargs(flag.nargs)
            converter = _type_for(flag.type)
            if converter is not None:
                kwargs["type"] = converter
            if flag.choices is not None:
                kwargs["choices"] = list(flag.choices)
            if flag.required and enforce_required:
                kwargs["required"] = True
            action = parser.add_argument(*options, action=kind, **kwargs)
        else:
            nargs = flag.nargs  # the dump has the real nargs (0 for switch-like actions)
            kwargs = dict(common)
            kwargs["nargs"] = _nargs(nargs)
            if nargs != 0:
                converter = _type_for(flag.type)
                if converter is not None:
                    kwargs["type"] = converter
                if flag.choices is not None:
                    kwargs["choices"] = list(flag.choices)
            action = parser.add_argument(*options, action=_StoreValues, **kwargs)
        action.wizard_flag = flag  # type: ignore[attr-defined]


def _unknown_to_both(parser: _SglangParser, piece: str) -> bool:
    """`--name[=value]` where no option string of `parser` starts with `--name`: argparse reads it
    as an unrecognized option (or, holding a space, as a stray value) in the full parser and in
    any subset of it alike, abbreviations included, so the subset parser's error is SGLang's."""
    prefix = parser.prefix_chars
    if len(piece) < 3 or piece[0] not in prefix or piece[1] not in prefix:
        return False
    head = piece.split("=", 1)[0]
    options: list[str] | None = parser.__dict__.get("_wizard_sorted_options")
    if options is None:
        options = parser.__dict__["_wizard_sorted_options"] = sorted(parser._option_string_actions)
    at = bisect.bisect_left(options, head)
    return at == len(options) or not options[at].startswith(head)


def _subset_parser(parser: _SglangParser, argv: Sequence[str]) -> _SglangParser | None:
    """A parser holding only the actions `argv` names (and the required ones), when it parses
    `argv` exactly as `parser` does; None when it might not.

    argparse walks every action of its parser on each parse (defaults, required flags), a fixed
    0.15-0.25 ms on SGLang's 400-550 flags that a check on every keystroke pays. Every piece that
    starts with a prefix character must be an option string of `parser` as typed (`--flag` or
    `--flag=value`) or a negative number argparse reads as a value: then both parsers classify
    every piece alike and run the same action objects. A `--name` that no option string starts
    with is unrecognized to both. An abbreviation, `--`, or anything else option-like goes to the
    full parser. Cached per parser by the set of actions.
    """
    table = parser._option_string_actions
    prefix = parser.prefix_chars
    wanted: set[argparse.Action] = set()
    for piece in argv:
        if not piece or piece[0] not in prefix:
            continue
        action = table.get(piece)
        if action is None and len(piece) > 1 and "=" in piece:
            action = table.get(piece.split("=", 1)[0])
        if action is not None:
            wanted.add(action)
        elif len(piece) == 1 or (parser._negative_number_matcher.match(piece)
                                 and not parser._has_negative_number_optionals):
            continue  # a value to both parsers
        elif not _unknown_to_both(parser, piece):
            return None
    key = frozenset(wanted)
    subsets: dict[frozenset[argparse.Action], _SglangParser] = parser.__dict__.setdefault(
        "_wizard_subsets", {})
    small = subsets.get(key)
    if small is None:
        if len(subsets) >= 512:
            subsets.clear()
        small = _SglangParser(prog=parser.prog, allow_abbrev=parser.allow_abbrev, add_help=False,
                              prefix_chars=prefix)
        for action in parser._actions:  # the full parser's order: its error messages list it
            if action in key or action.required:
                container = getattr(action, "container", None)  # argparse re-points it
                small._add_action(action)
                action.container = container  # type: ignore[attr-defined]
        subsets[key] = small
    return small


def _parse_args(parser: _SglangParser, argv: Sequence[str]) -> argparse.Namespace:
    """`parser.parse_args(argv)`, through the subset parser where it is exact."""
    pieces = list(argv)
    return (_subset_parser(parser, pieces) or parser).parse_args(pieces)


def run_argparse(
    table: FlagTable, argv: Sequence[str], *, require: bool = True
) -> argparse.Namespace:
    """Parse `argv` with the rebuilt parser; only flags present end up in the namespace.

    Namespace attributes are SGLang's `ServerArgs` field names (the default release's argparse dest
    `tensor_parallel_size` is stored as `tp_size`, as `ServerArgs.from_cli_args` does).

    Raises `CommandError` (exit_like_sglang=True, with SGLang's exact message) on any argparse
    failure, and for `-h/--help`. `require=False` checks a part of an argv (e.g. a profile's
    `extra_args`) without asking for `--model-path`.
    """
    parser = table.parser if require else table.lenient_parser
    try:
        return _parse_args(parser, argv)
    except _ArgparseFailure as failure:
        raise _explain(table, list(argv), failure.message, parser) from None
    except _HelpRequested as help_request:
        raise CommandError(
            f"{help_request.option} prints SGLang's help and exits; it is not a launch flag",
            flag=help_request.option,
            suggestion=f"remove {help_request.option}",
            exit_like_sglang=False,
        ) from None


def group_pieces(table: FlagTable, argv: Sequence[str]) -> list[tuple[FlagMatch | None, list[str]]]:
    """Split argv into (flag, pieces) groups the way argparse consumes a valid argv.

    Each piece that argparse reads as an option starts a group; the values after it join it.
    Pieces before the first option (or after `--`) form a group with flag None.
    """
    groups: list[tuple[FlagMatch | None, list[str]]] = []
    after_dashdash = False
    for piece in argv:
        match = None if after_dashdash else table.match_safe(piece)
        if piece == "--" and not after_dashdash:
            after_dashdash = True
            match = None
        if match is not None:
            groups.append((match, [piece]))
        elif groups:
            groups[-1][1].append(piece)
        else:
            groups.append((None, [piece]))
    return groups


def argparse_error(argv: Sequence[str], version: str) -> SglangArgparseError | None:
    """SGLang's own argparse error for `argv` (flags after `launch_server`), or None if it parses.

    `-h/--help` gives None too: SGLang prints its help and exits 0.
    """
    table = load_table(version)
    try:
        _parse_args(table.parser, argv)
    except _ArgparseFailure as failure:
        return SglangArgparseError(failure.message, table.prog)
    except _HelpRequested:
        return None
    return None


def _explain(
    table: FlagTable, argv: list[str], message: str, parser: _SglangParser | None = None
) -> CommandError:
    """Turn argparse's message into a CommandError naming the first offending flag + a fix."""
    sglang = SglangArgparseError(message, table.prog)
    head = f"SGLang {table.version} would refuse this command: {message}"
    if message.startswith("unrecognized arguments: "):
        try:
            full = parser or table.parser
            _, extras = (_subset_parser(full, argv) or full).parse_known_args(argv)
        except (_ArgparseFailure, _HelpRequested):
            extras = []
        first_flag = next((a.split("=", 1)[0] for a in extras if a.startswith("-")), None)
        if first_flag is not None:
            err = unknown_flag_error(first_flag, table)
            return CommandError(
                f"{head}. {err.message}",
                flag=err.flag,
                suggestion=err.suggestion,
                exit_like_sglang=True,
                sglang_error=sglang,
            )
        stray = extras[0] if extras else None
        return CommandError(
            f"{head} (a value without a flag, or too many values for the flag before it)",
            flag=stray,
            suggestion="check the flag before it takes this many values, or quote a value "
            "that contains spaces",
            exit_like_sglang=True,
            sglang_error=sglang,
        )
    match = re.match(r"(?:ambiguous option: )(\S+?)(?:=\S*)? could match", message)
    if match:
        typed = match.group(1)
        return CommandError(
            f"{head}",
            flag=typed,
            suggestion=_ambiguity_hint(typed, table.version),
            exit_like_sglang=True,
            sglang_error=sglang,
        )
    match = re.match(r"argument (\S+?): (.*)$", message)
    if match:
        spelled = match.group(1).split("/")
        flag = spelled[0]
        typed = next((a.split("=", 1)[0] for a in argv if a.split("=", 1)[0] in spelled), flag)
        detail = match.group(2)
        suggestion = None
        if "invalid choice" in detail:
            action = table.by_option.get(flag)
            if action is not None and action.choices:
                value_match = re.search(r"invalid choice: (.+?) \(choose from", detail)
                wrong = value_match.group(1).strip("'\"") if value_match else ""
                upper = [c for c in action.choices if str(c).lower() == wrong.lower()]
                suggestion = (
                    f"use {upper[0]} (SGLang {table.version} choices are case-sensitive)"
                    if upper
                    else "choose one of " + ", ".join(map(str, action.choices))
                )
        elif "expected" in detail:
            suggestion = f"give {typed} a value"
        elif "invalid" in detail:
            suggestion = f"give {typed} a value of the right type"
        return CommandError(
            head, flag=typed, suggestion=suggestion, exit_like_sglang=True, sglang_error=sglang
        )
    if message.startswith("the following arguments are required"):
        return CommandError(
            head,
            flag="--model-path" if "--model-path" in message else None,
            suggestion="add --model-path /path/to/model",
            exit_like_sglang=True,
            sglang_error=sglang,
        )
    return CommandError(head, exit_like_sglang=True, sglang_error=sglang)


# ---------------------------------------------------------------------------------------------
# Flags that changed between versions


@dataclass(frozen=True)
class FlagChange:
    """A flag SGLang renamed or removed. Which release did it is read from the flag tables (the
    flag index): the first release with `new`, the first release after the last one with `old`.
    Deprecated flags need no entry: each release's table marks them, with SGLang's help text."""

    old: str
    new: str | None  # None: removed without replacement
    note: str = ""


FLAG_CHANGES: tuple[FlagChange, ...] = (
    FlagChange("--mamba-scheduler-strategy", "--mamba-radix-cache-strategy"),
    FlagChange("--speculative-skip-dp-mlp-sync", None, "SGLang has no such switch now; drop the flag"),
    FlagChange(
        "--speculative-dflash-draft-window-size",
        "--speculative-draft-window-size",
        "the draft window is no longer DFLASH's alone",
    ),
    FlagChange(
        "--cuda-graph-max-bs",
        "--cuda-graph-max-bs-decode",
        "the old name is an ambiguous prefix of --cuda-graph-max-bs-decode/-prefill",
    ),
    FlagChange(
        "--cuda-graph-bs",
        "--cuda-graph-bs-decode",
        "the old name is an ambiguous prefix of --cuda-graph-bs-decode/-prefill",
    ),
)


def releases_with_option(option: str) -> tuple[str, ...]:
    """Every release whose parser has `option`, oldest first (read from the flag index)."""
    names = release_names()
    index = _flag_index()
    if index is None:
        return tuple(n for n in names if option in _table_or_none(n))
    if option in index:
        return tuple(index[option])
    return names if option in _table_or_none(names[-1]) else ()


def deprecated_since(option: str) -> str | None:
    """The first release whose parser marks `option` deprecated (None: none does)."""
    releases = _deprecated_index().get(option)
    return releases[0] if releases else None


def _table_or_none(name: str) -> Mapping[str, FlagAction]:
    try:
        return load_table(name).by_option
    except FlagDataError:
        return {}


def _after(name: str) -> str | None:
    """The release after `name` in the registry (None: `name` is the newest)."""
    names = release_names()
    index = names.index(name)
    return names[index + 1] if index + 1 < len(names) else None


def rename_for(option: str, version: str) -> str | None:
    """Human text for a flag that changed name/meaning around `version`, or None.

    The releases named are read from the flag tables: where the new spelling first appears,
    where the old one is gone, where the parser first marks a flag deprecated."""
    supported, _ = resolve_version(version)
    table = load_table(supported)
    action = table.by_option.get(option)
    if action is not None and action.is_deprecated:
        since = deprecated_since(option) or supported
        help_text = f' (its help: "{action.help}")' if action.help else ""
        return f"{option} is deprecated since SGLang {since}{help_text}"
    for change in FLAG_CHANGES:
        if option == change.old and action is None:
            had = releases_with_option(change.old)
            if not had or version_key(supported) <= version_key(had[-1]):
                continue  # not yet there (or still there): not a change of this release
            gone = _after(had[-1]) or supported
            note = f" ({change.note})" if change.note else ""
            if change.new is None or change.new not in table.by_option:
                return f"{option} was removed in SGLang {gone}" + (
                    f"; {change.note}" if change.note else "")
            first_new = releases_with_option(change.new)[0]
            when = (f"in SGLang {gone}" if first_new == gone
                    else f"in SGLang {first_new} (the old name is gone from {gone})")
            return f"{option} was renamed {when}: use {change.new}{note}"
        if option == change.new and action is None and change.old in table.by_option:
            has = releases_with_option(change.new)
            if has and version_key(supported) < version_key(has[0]):
                return (f"{option} is the SGLang {has[0]} spelling; in {supported} use "
                        f"{change.old}, or choose SGLang {has[0]} or newer as the version if "
                        "the host runs it")
    return None


def _ambiguity_hint(typed: str, version: str) -> str:
    """What to type instead of an ambiguous prefix: the renamed flag, else the full name."""
    return rename_for(typed, version) or (
        "type the full flag name; SGLang accepts a prefix only when it is unique"
    )


# ---------------------------------------------------------------------------------------------
# Did-you-mean

# Flags of other engines (and common guesses) -> the SGLang flag that does the same.
SYNONYMS: dict[str, tuple[str, str]] = {
    "--num-speculative-tokens": ("--speculative-num-draft-tokens", "vLLM"),
    "--speculative-model": ("--speculative-draft-model-path", "vLLM"),
    "--speculative-draft-model-name": ("--speculative-draft-model-path", "guess"),
    "--draft-model": ("--speculative-draft-model-path", "guess"),
    "--model-draft": ("--speculative-draft-model-path", "llama.cpp"),
    "--speculative-config": (
        "--speculative-algorithm",
        "vLLM (SGLang takes separate --speculative-* flags)",
    ),
    "--speculate": ("--speculative-num-draft-tokens", "TGI"),
    "--draft-max": ("--speculative-num-draft-tokens", "llama.cpp"),
    "--num-draft-tokens": ("--speculative-num-draft-tokens", "guess"),
    "--speculative-num-tokens": ("--speculative-num-draft-tokens", "guess"),
    "--speculative-topk": ("--speculative-eagle-topk", "guess"),
    "--speculative-steps": ("--speculative-num-steps", "guess"),
    "--spec-algorithm": ("--speculative-algorithm", "guess"),
    "--speculative-method": ("--speculative-algorithm", "guess"),
    "--gpu-memory-utilization": ("--mem-fraction-static", "vLLM"),
    "--max-num-seqs": ("--max-running-requests", "vLLM"),
    "--max-concurrent-requests": ("--max-running-requests", "TGI"),
    "--parallel": ("--max-running-requests", "llama.cpp"),
    "--max-model-len": ("--context-length", "vLLM"),
    "--max-total-tokens": ("--context-length", "TGI"),
    "--ctx-size": ("--context-length", "llama.cpp"),
    "--max-num-batched-tokens": ("--chunked-prefill-size", "vLLM"),
    "--num-shard": ("--tp-size", "TGI"),
    "--tensor-parallel": ("--tp-size", "guess"),
    "--tp": ("--tp-size", "guess"),
    "--enforce-eager": ("--disable-cuda-graph", "vLLM"),
    "--block-size": ("--page-size", "vLLM"),
    "--tokenizer": ("--tokenizer-path", "vLLM"),
    "--seed": ("--random-seed", "vLLM"),
    "--no-enable-prefix-caching": ("--disable-radix-cache", "vLLM"),
    "--uvicorn-log-level": ("--log-level", "vLLM"),
    "--mamba-cache-strategy": ("--mamba-scheduler-strategy", "guess"),
}


def suggest_flag(option: str, table: FlagTable) -> str | None:
    """The best replacement for an unknown `option` in this version, with the reason, or None."""
    if table.match_safe(option) is not None:
        return None
    dashed = "--" + option.lstrip("-").replace("_", "-")
    dashed_match = table.match_safe(dashed) if dashed != option else None
    if dashed_match is not None:
        full = dashed_match.option
        return f"did you mean {full}? SGLang flags use '-', not '_'"
    if option in SYNONYMS:
        wanted, engine = SYNONYMS[option]
        target = _in_version(wanted, table)
        if target is not None:
            return f"did you mean {target}? ({option} is a {engine} flag)"
    import difflib  # only for a typo's suggestion

    close = difflib.get_close_matches(option, table.long_options(), n=1, cutoff=0.72)
    if close:
        return f"did you mean {close[0]}?"
    return None


def _in_version(target: str, table: FlagTable) -> str | None:
    """`target`, or its renamed spelling, if this version has it."""
    if target in table.by_option:
        return target
    for change in FLAG_CHANGES:
        if change.new is not None:
            if target == change.old and change.new in table.by_option:
                return change.new
            if target == change.new and change.old in table.by_option:
                return change.old
    return None


def unknown_flag_error(option: str, table: FlagTable) -> CommandError:
    """The error for a flag this version does not know: another version's flag, or a guess."""
    change = rename_for(option, table.version)
    if change is not None:
        return CommandError(
            f"{option} is not a flag of SGLang {table.version}",
            flag=option,
            suggestion=change,
            exit_like_sglang=True,
        )
    other = _release_with_option(option, table.version)
    if other is not None:
        return CommandError(
            f"{option} is a flag of SGLang {other}, not of {table.version}",
            flag=option,
            suggestion=suggest_flag(option, table)
            or f"remove it, or import with --sglang-version {other}",
            exit_like_sglang=True,
        )
    return CommandError(
        f"{option} is not an SGLang {table.version} flag",
        flag=option,
        suggestion=suggest_flag(option, table),
        exit_like_sglang=True,
    )


# ---------------------------------------------------------------------------------------------
# Which releases have a flag, without reading every release's table


FLAG_INDEX_PATH = DATA_DIR / "flag-releases.json"


def _release_with_option(option: str, version: str) -> str | None:
    """The newest release other than `version` whose parser has `option` (None: no release).

    Read from the flag index when it matches the flag tables present; otherwise every table is
    read, as the index is only a shortcut."""
    index = _flag_index()
    for other in reversed(release_names()):
        if other == version:
            continue
        if index is not None:
            if other in index.get(option, ()):
                return other
            continue
        try:
            other_table = load_table(other)
        except FlagDataError:
            continue
        if option in other_table.by_option:
            return other
    return None


def flag_index_data() -> dict[str, Any]:
    """The flag index derived from every flag table: the tables' sizes (to tell a stale index)
    and, for each option that not every release has, the releases that have it."""
    names = sorted((p.name[len("flags-"):-len(".json")] for p in DATA_DIR.glob("flags-*.json")),
                   key=version_key)
    found: dict[str, list[str]] = {}
    deprecated: dict[str, list[str]] = {}
    for name in names:
        data = json.loads(table_path(name).read_text(encoding="utf-8"))
        for option, action in table_from_data(data, str(table_path(name))).by_option.items():
            found.setdefault(option, []).append(name)
            if action.is_deprecated:
                deprecated.setdefault(option, []).append(name)
    return {
        "sizes": {name: table_path(name).stat().st_size for name in names},
        "options": {o: v for o, v in sorted(found.items()) if len(v) != len(names)},
        "deprecated": dict(sorted(deprecated.items())),
    }


def write_flag_index(path: Path = FLAG_INDEX_PATH) -> Path:
    """Write the flag index (`conformance add-release` does, after it dumps a flag table)."""
    from wizard.files import write_text

    write_text(path, json.dumps(flag_index_data(), indent=1) + "\n", mode=0o644)
    _flag_index.cache_clear()
    _deprecated_index.cache_clear()
    return path


@cache
def _flag_index() -> dict[str, list[str]] | None:
    """option -> releases that have it, from the index; None when it is missing or does not match
    the flag tables present (a table added, removed or dumped again since it was written)."""
    data = _current_index()
    return None if data is None else {str(k): list(v) for k, v in data["options"].items()}


@cache
def _deprecated_index() -> dict[str, list[str]]:
    """option -> releases whose parser marks it deprecated: from the index, else from the tables."""
    data = _current_index()
    if data is None:
        data = flag_index_data()
    return {str(k): list(v) for k, v in data.get("deprecated", {}).items()}


def _current_index() -> dict[str, Any] | None:
    """The flag index file when it matches the flag tables present, else None."""
    try:
        data = json.loads(FLAG_INDEX_PATH.read_text(encoding="utf-8"))
        sizes = {str(k): int(v) for k, v in data["sizes"].items()}
        if not isinstance(data["options"], dict) or not isinstance(data.get("deprecated", {}), dict):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    for name in release_names():
        path = table_path(name)
        try:
            size: int | None = path.stat().st_size
        except OSError:
            size = None
        if sizes.get(name) != size:
            return None
    return data


# ---------------------------------------------------------------------------------------------
# Which flags take a secret value (`--api-key`): derived from the tables, read by wizard.secrets


SECRET_FLAGS_PATH = DATA_DIR / "secret-flags.json"
#: The last word of a flag's dest that makes its value a secret (api_key, ssl_keyfile_password).
_SECRET_DEST_WORDS = frozenset({"key", "password", "passwd", "secret", "token", "credentials"})


def is_secret_action(flag: FlagAction) -> bool:
    """A flag whose one text value is a secret: a plain `store` of a `str` whose dest ends in
    key / password / secret / token (`--api-key`, `--admin-api-key`, `--ssl-keyfile-password`;
    not `--ssl-keyfile`, a path, nor `--kt-max-deferred-experts-per-token`, an int)."""
    return (flag.kind == "store" and flag.type in (None, "str") and flag.nargs is None
            and flag.dest.rsplit("_", 1)[-1] in _SECRET_DEST_WORDS)


def secret_flag_data() -> dict[str, Any]:
    """Every secret-valued option of every flag table (`is_secret_action`), with its dest and
    the releases that have it: what `wizard.secrets` masks and stores as references."""
    names = sorted((p.name[len("flags-"):-len(".json")] for p in DATA_DIR.glob("flags-*.json")),
                   key=version_key)
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        data = json.loads(table_path(name).read_text(encoding="utf-8"))
        for flag in table_from_data(data, str(table_path(name))).actions:
            if not is_secret_action(flag):
                continue
            for option in flag.option_strings:
                entry = found.setdefault(option, {"dest": flag.dest, "releases": []})
                entry["releases"].append(name)
    return {
        "rule": "argparse store of type str, nargs None, dest ending in "
                + " / ".join(sorted(_SECRET_DEST_WORDS)),
        "options": dict(sorted(found.items())),
    }


def write_secret_flags(path: Path = SECRET_FLAGS_PATH) -> Path:
    """Write `secret-flags.json` (`conformance add-release` does, after it dumps a flag table)."""
    from wizard.files import write_text

    write_text(path, json.dumps(secret_flag_data(), indent=1) + "\n", mode=0o644)
    return path


def secret_option_of(table: FlagTable | None) -> Callable[[str], str | None]:
    """A command-line word -> the secret option it names (`--api-key`, also an argparse prefix
    such as `--api-k` that `table` resolves to it), else None (`wizard.secrets.OptionOf`)."""
    if table is None:
        return exact_secret_option

    def option_of(word: str) -> str | None:
        match = table.match_safe(word)
        if match is not None and (is_secret_action(match.action)
                                  or match.option in secret_flags()):
            return match.option
        return exact_secret_option(word)

    return option_of
