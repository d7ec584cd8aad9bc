"""A profile's problems in plain words: `Problem` (dotted key, line, what is wrong, what is
allowed) and `ProfileError` (every problem of one file), made from pydantic's validation errors
(each location followed through the schema's types) and from TOML syntax errors, with the line of
each key found in the TOML text (`locate_keys`).
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
import tomllib
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from wizard.profile_schema import Profile
from wizard.sglang.fields import BY_DEST


@dataclass(frozen=True)
class Problem:
    """One located problem in a profile file."""

    key: str | None
    line: int | None
    message: str
    allowed: str | None = None

    def render(self, file: str) -> str:
        """`file:line: key: message (allowed: ...)`."""
        where = f"{file}:{self.line}" if self.line else file
        key = f" {self.key}:" if self.key else ""
        allowed = f" (allowed: {self.allowed})" if self.allowed else ""
        return f"{where}:{key} {self.message}{allowed}"


@dataclass
class ProfileError(Exception):
    """A profile that cannot be read or saved; lists every located problem."""

    file: str
    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(p.render(self.file) for p in self.problems) or self.file

    @property
    def first(self) -> Problem:
        """The first problem (files always report at least one)."""
        return self.problems[0]


# What a value of a given type looks like, in the user's words: (singular, plural).
_NOUNS: dict[type, tuple[str, str]] = {
    bool: ("true or false", "true/false values"),
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    str: ("a string", "strings"),
}


# pydantic error type -> what the value should have been (type errors).
_EXPECTED: dict[str, str] = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number (no decimal point)",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false (lower case, no quotes)",
    "bool_parsing": "true or false (lower case, no quotes)",
    "string_type": "a string in double quotes",
    "list_type": "a list in brackets [ ... ]",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}


# pydantic error type -> the broken bound (range and length errors); `{...}` come from the ctx.
_BOUNDS: dict[str, str] = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be greater than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "string_too_short": "must not be empty",
    "too_short": "must have at least {min_length} item(s)",
    "too_long": "must have at most {max_length} item(s)",
    "finite_number": "must be a finite number",
    "string_unicode": "contains a character that cannot be saved as UTF-8",
}


# tomllib message prefix -> (plain message, what to do).
_TOML_SYNTAX: tuple[tuple[str, str, str], ...] = (
    (
        "Cannot overwrite a value",
        "this key is set twice",
        "each key once per table; delete one of the two lines",
    ),
    (
        "Duplicate inline table key",
        "this key is set twice in the inline table",
        "each key once; delete one of them",
    ),
    (
        "Cannot declare",
        "this table is declared twice",
        "each [table] once; merge the two sections into one",
    ),
    (
        "Cannot mutate immutable namespace",
        "this table was already written as an inline table { ... }",
        "either `name = { ... }` or a [name] section, not both",
    ),
    (
        "Cannot redefine namespace",
        "this name is already a table",
        "each [table] once; merge the sections",
    ),
    (
        "Invalid value",
        "the value is not valid TOML",
        'a quoted string "...", a number, true or false (lower case), a list [...] or a '
        "table { ... }",
    ),
    (
        "Unterminated string",
        "a string is not closed",
        'close the quote on the same line, or use """...""" for text over several lines',
    ),
    ("Unclosed array", "a list [ ... ] is not closed", "close it with ']'"),
    (
        "Unclosed inline table",
        "an inline table { ... } is not closed",
        "close it with '}' on the same line",
    ),
    ("Expected '=' after a key", "expected '=' after the key", "key = value"),
    (
        "Expected ']' at the end of a table",
        "a [table] header is not closed",
        "[table] with its closing ']'",
    ),
    (
        "Expected ']]' at the end of an array",
        "an [[array]] header is not closed",
        "[[name]] with its closing ']]'",
    ),
    (
        "Invalid initial character for a key part",
        "a key starts with a character that keys cannot start with",
        "keys of letters, digits, '_' and '-' (or in double quotes)",
    ),
    (
        "Invalid statement",
        "this line is neither `key = value` nor a [table] header",
        "key = value or [table]",
    ),
    (
        "Expected newline or end of document",
        "unexpected text after the value",
        "one key = value per line; comments start with #",
    ),
    (
        "Unescaped '\\' in a string",
        "a backslash in a string is not escaped",
        "write \\\\ for a backslash, or use a 'literal string' in single quotes",
    ),
    ("Invalid hex value", "a \\u or \\U escape is not valid", "\\uXXXX or \\UXXXXXXXX"),
    (
        "Escaped character is not a Unicode scalar value",
        "a \\u or \\U escape is not a valid character",
        "a Unicode code point outside the surrogate range",
    ),
    (
        "Illegal character '\\n'",
        "a string is not closed before the end of the line",
        'close the quote on the same line, or use """...""" for text over several lines',
    ),
    (
        "Illegal character",
        "a control character is not allowed here",
        "printable text; write control characters as escapes like \\t",
    ),
    ("Invalid date or datetime", "not a valid date or time", "1979-05-27 or 07:32:00"),
    ("Found invalid character", "unexpected character", "see docs/profiles.md for the syntax"),
)


def _unwrap(annotation: Any) -> tuple[Any, dict[str, Any], bool]:
    """Strip `Annotated` and `| None`: (base type, bounds like {'ge': 1}, whether it may be left out)."""
    bounds: dict[str, Any] = {}
    optional = False
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            args = get_args(annotation)
            for meta in args[1:]:
                items = getattr(meta, "metadata", None)
                for item in [meta, *(items if isinstance(items, list) else [])]:
                    for name in ("ge", "gt", "le", "lt", "min_length"):
                        value = getattr(item, name, None)
                        if isinstance(value, int | float) and not isinstance(value, bool):
                            bounds.setdefault(name, value)
            annotation = args[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            optional = optional or len(members) < len(get_args(annotation))
            if len(members) != 1:
                return Union[tuple(members)], bounds, optional  # noqa: UP007
            annotation = members[0]
        else:
            return annotation, bounds, optional


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _bounds_text(bounds: Mapping[str, Any]) -> str:
    low = (
        ("at least", bounds["ge"])
        if "ge" in bounds
        else ("greater than", bounds["gt"])
        if "gt" in bounds
        else None
    )
    high = (
        ("at most", bounds["le"])
        if "le" in bounds
        else ("less than", bounds["lt"])
        if "lt" in bounds
        else None
    )
    if low and high and low[0] == "at least" and high[0] == "at most":
        return f" from {_number(low[1])} to {_number(high[1])}"
    parts = [f"{bound[0]} {_number(bound[1])}" for bound in (low, high) if bound is not None]
    if not parts:
        return ""
    return (" of " if parts[0].startswith("at ") else " ") + " and ".join(parts)


def _describe(annotation: Any, plural: bool = False) -> str:
    """Plain words for a field type: `an integer from 1 to 65535`, `a list of strings`, ..."""
    base, bounds, _ = _unwrap(annotation)
    origin = get_origin(base)
    if origin is Literal:
        values = ", ".join(json.dumps(v) for v in get_args(base))
        return f"{'values' if plural else 'one'} of {values}"
    if origin in (Union, types.UnionType):
        kinds = {_unwrap(a)[0] for a in get_args(base)}
        if kinds <= {int, float}:
            noun = _NOUNS[float][1 if plural else 0]
        else:
            noun = " or ".join(_describe(a, plural) for a in get_args(base))
        return noun + _bounds_text(bounds)
    if origin is list:
        (item,) = get_args(base) or (Any,)
        return ("lists" if plural else "a list") + " of " + _describe(item, plural=True)
    if origin is dict:
        _, value = get_args(base) or (Any, Any)
        return (
            ("tables" if plural else "a table")
            + " of NAME = value pairs, each value "
            + (_describe(value))
        )
    if isinstance(base, type) and issubclass(base, BaseModel):
        return f"{'tables' if plural else 'a table'} with keys {', '.join(base.model_fields)}"
    if base is str and bounds.get("min_length") == 1:
        return "non-empty strings" if plural else "a non-empty string"
    if isinstance(base, type) and base in _NOUNS:
        return _NOUNS[base][1 if plural else 0] + _bounds_text(bounds)
    return "values" if plural else "a value"


def _field_annotation(model: type[BaseModel], name: str) -> Any:
    """A model field's type with its constraints put back (pydantic moves them to `metadata`)."""
    info = model.model_fields[name]
    if info.metadata:
        return Annotated[(info.annotation, *info.metadata)]
    return info.annotation


@dataclass
class _Where:
    """An error location followed through the Profile's types."""

    loc: list[str | int]
    annotation: Any = None  # the leaf's type (None when the location leaves the schema)
    owner: type[BaseModel] | None = None  # the model whose field (or unknown key) the leaf is
    about_key: bool = False  # the problem is a table key itself (e.g. an env var name)
    description: str | None = None
    key_type: Any = None  # key type of the last dict passed (pydantic reports bad keys as `[key]`)


def _walk(loc: Iterable[Any]) -> _Where:
    """Follow a pydantic location through the schema, dropping union-member tags (`float`, `int`)."""
    where = _Where([], Profile)
    for part in loc:
        if part == "[key]":
            where.about_key = True
            where.annotation = where.key_type
            continue
        if where.annotation is None:
            where.loc.append(part)
            continue
        base, _, _ = _unwrap(where.annotation)
        origin = get_origin(base)
        if isinstance(base, type) and issubclass(base, BaseModel):
            where.loc.append(part)
            where.owner = base
            if isinstance(part, str) and part in base.model_fields:
                where.annotation = _field_annotation(base, part)
                where.description = base.model_fields[part].description
            else:
                where.annotation = None
        elif origin is list and isinstance(part, int):
            where.loc.append(part)
            where.annotation = get_args(base)[0]
        elif origin is dict:
            where.key_type, where.annotation = get_args(base)
            where.loc.append(part)
        elif origin in (Union, types.UnionType):
            continue  # pydantic names the union member it tried; the user wrote one value
        else:
            where.loc.append(part)
            where.annotation = None
    return where


def _dotted(loc: Iterable[Any]) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts[-1:] = [f"{parts[-1]}[{p}]"] if parts else [f"[{p}]"]
        else:
            parts.append(str(p))
    return ".".join(parts)


def show_value(value: Any, limit: int = 60) -> str:
    """A value as the user wrote it in TOML (strings in double quotes, true/false, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table { ... }"
    if isinstance(value, dt.date | dt.time):
        return f"the date/time {value.isoformat()}"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, list):
        text = (
            "["
            + ", ".join(show_value(v, limit) for v in value[:5])
            + (", ...]" if len(value) > 5 else "]")
        )
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _quoted_hint(value: Any, expected: str) -> str:
    """`(remove the quotes)` when a string holds exactly the number or boolean that was wanted."""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    try:
        parsed = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return ""
    wanted = {"integer": int, "whole number": int, "number": int | float, "true or false": bool}
    for word, kind in wanted.items():
        if expected.startswith(("an " + word, "a " + word, word)) and isinstance(parsed, kind):
            if kind is not bool and isinstance(parsed, bool):
                continue
            return " (a string: remove the quotes)"
    return ""


def _unknown_key_hint(name: str, owner: type[BaseModel] | None, section: str) -> str:
    """`did you mean ...?` for an unknown key: near names in the table, SGLang's own names, other tables."""
    known = list(owner.model_fields) if owner is not None else []
    lowered = name.lower().lstrip("-").replace("-", "_")
    if section and lowered in Profile.model_fields:
        return (
            f"; {lowered!r} is a top-level key, but every key below a [table] header belongs to "
            "that table: move it above the first [table]"
        )

    spec = BY_DEST.get(lowered) or BY_DEST.get(f"{section}_{lowered}" if section else lowered)
    if spec is not None:
        table, _, key = spec.path.partition(".")
        return f"; SGLang's --{spec.dest.replace('_', '-')} is {key!r} in [{table}]"
    close = difflib.get_close_matches(lowered, known, n=1)
    contains = [k for k in known if len(lowered) >= 3 and (lowered in k or k in lowered)]
    if close or contains:
        return f"; did you mean {(close or contains)[0]!r}?"
    elsewhere = _keys_by_table()
    close = difflib.get_close_matches(
        lowered, [k for k in elsewhere if elsewhere[k] != section], n=1
    )
    return f"; did you mean {close[0]!r} in [{elsewhere[close[0]]}]?" if close else ""


@lru_cache(maxsize=1)
def _keys_by_table() -> dict[str, str]:
    """Every section key and the table it belongs to (the first table, for shared names)."""
    out: dict[str, str] = {}
    for table, info in Profile.model_fields.items():
        model = _unwrap(info.annotation)[0]  # [container] is optional: `ContainerSection | None`
        if isinstance(model, type) and issubclass(model, BaseModel):
            for key in model.model_fields:
                out.setdefault(key, table)
    return out


def _toml_lines(text: str) -> list[str]:
    """Lines as TOML (and tomllib's line numbers) count them: only \\n ends a line."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _scan_keys(text: str) -> Iterable[tuple[int, str, bool]]:
    """(line, dotted key, is a [table] header) for each table header and `key =` line of TOML text."""
    table: list[str] = []
    header = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    keyline = re.compile(r"^\s*([A-Za-z0-9_\-\"'. ]+?)\s*=")
    in_multiline: str | None = None
    for number, raw in enumerate(_toml_lines(text), start=1):
        if in_multiline is not None:  # inside a """ or ''' string: no keys here
            if in_multiline in raw:
                in_multiline = None
            continue
        match = header.match(raw)
        if match:
            table = [p.strip().strip("\"'") for p in match.group(1).split(".")]
            yield number, ".".join(table), True
            continue
        match = keyline.match(raw)
        if match:
            key = [p.strip().strip("\"'") for p in match.group(1).split(".")]
            full = ".".join(table + key)
            yield number, full, False
            rest = raw[match.end() :]
            # inline table keys: `gpu = { kind = "H100" }`
            for inner in re.findall(r"([A-Za-z0-9_\-]+)\s*=", rest):
                yield number, f"{full}.{inner}", False
            value = rest.lstrip()
            for quotes in ('"""', "'''"):
                if value.startswith(quotes) and quotes not in value[3:]:
                    in_multiline = quotes
                    break


def locate_keys(text: str) -> dict[str, int]:
    """Map dotted keys to the 1-based line where they are defined in TOML text (tables and keys).

    Keys under an array of tables are also mapped with their index (`nodes.hosts[1].host`), so a
    problem in the second node points at the second node's line."""
    lines: dict[str, int] = {}
    raw = _toml_lines(text)
    counts: dict[str, int] = {}
    array: tuple[str, str] | None = None  # (table, table[index]) of the current [[table]]
    for number, key, is_header in _scan_keys(text):
        if is_header:
            array = None
            if raw[number - 1].lstrip().startswith("[["):
                index = counts.get(key, 0)
                counts[key] = index + 1
                array = (key, f"{key}[{index}]")
        lines.setdefault(key, number)
        if array is not None and (key == array[0] or key.startswith(array[0] + ".")):
            lines.setdefault(array[1] + key[len(array[0]):], number)
    return lines


def _key_at_line(text: str, line: int) -> str | None:
    """The dotted key defined (or table declared) on a line, for syntax errors.

    Lines too broken for `_scan_keys` (`tp 2`, `[speculative`) fall back to their first word.
    """
    table = ""
    for number, key, is_header in _scan_keys(text):
        if number == line:
            return key
        if number > line:
            break
        if is_header:
            table = key
    lines = _toml_lines(text)
    raw = lines[line - 1] if 0 < line <= len(lines) else ""
    header = re.match(r"^\s*\[+\s*([A-Za-z0-9_.\-]+)", raw)
    if header:
        return header.group(1)
    word = re.match(r"^\s*([A-Za-z0-9_\-]+)", raw)
    if word:
        return f"{table}.{word.group(1)}" if table else word.group(1)
    return None


def line_for(key: str, located: Mapping[str, int]) -> int | None:
    if key in located:
        return located[key]
    probe = re.sub(r"\[\d+\]", "", key)
    while probe:
        if probe in located:
            return located[probe]
        probe = probe.rpartition(".")[0]
    return None


def _problem_for(err: Mapping[str, Any], where: _Where) -> tuple[str, str | None]:
    """(message, allowed) for one pydantic error, in plain words, driven by the error type."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    value = err.get("input")
    got = f", got {show_value(value)}" if "input" in err else ""
    allowed = _describe(where.annotation) if where.annotation is not None else None
    if allowed is not None and where.annotation is not None and _unwrap(where.annotation)[2]:
        allowed += ", or leave the key out"
    if allowed is not None and where.description:
        allowed += f"; {where.description}"
    if kind == "extra_forbidden":
        name = str(where.loc[-1]) if where.loc else "?"
        section = str(where.loc[-2]) if len(where.loc) > 1 else ""
        hint = _unknown_key_hint(name, where.owner, section)
        known = list(where.owner.model_fields) if where.owner is not None else []
        return f"unknown key {name!r}{hint}", ("keys " + ", ".join(known)) if known else None
    if kind == "missing":
        return "required key is missing", allowed
    if kind == "literal_error":
        choices = (
            [str(c) for c in get_args(_unwrap(where.annotation)[0])] if where.annotation else []
        )
        close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.5)
        hint = f"; did you mean {json.dumps(close[0])}?" if close else ""
        return f"{show_value(value)} is not an allowed value{hint}", allowed
    if kind in ("value_error", "assertion_error") and ctx.get("error") is not None:
        error = ctx["error"]
        return str(error), getattr(error, "allowed", None) or allowed
    if kind in _BOUNDS:
        try:
            message = _BOUNDS[kind].format(**{k: _number(v) for k, v in ctx.items()})
        except (KeyError, ValueError, TypeError):
            message = _BOUNDS[kind].split(" {")[0]
        return message + got, allowed
    if kind in _EXPECTED:
        expected = _EXPECTED[kind]
        return f"expected {expected}{got}{_quoted_hint(value, expected)}", allowed
    return str(err.get("msg", "invalid value")) + got, allowed


def problems_from_validation(exc: ValidationError, text: str | None = None) -> list[Problem]:
    """Turn pydantic errors into located, plain-language problems (one per key)."""
    located = locate_keys(text) if text is not None else {}
    grouped: dict[str, list[tuple[Mapping[str, Any], _Where]]] = {}
    for err in exc.errors():
        where = _walk(err["loc"])
        grouped.setdefault(_dotted(where.loc), []).append((err, where))
    problems: list[Problem] = []
    for key, errors in grouped.items():
        first, where = errors[0]
        message, allowed = _problem_for(first, where)
        type_errors = [e for e, _ in errors if e["type"] in _EXPECTED]
        if len(errors) > 1 and len(type_errors) == len(errors) and where.annotation is not None:
            # several union members refused the value: say once what the key takes
            expected = _describe(where.annotation)
            got = f", got {show_value(first['input'])}" if "input" in first else ""
            message = f"expected {expected}{got}{_quoted_hint(first.get('input'), expected)}"
        problems.append(Problem(key or None, line_for(key, located), message, allowed))
    return problems


def syntax_problem(exc: tomllib.TOMLDecodeError, text: str) -> Problem:
    """A located problem for a TOML syntax error, with plain words and what to write instead."""
    raw = str(exc)
    match = re.search(r"\(at line (\d+), column (\d+)\)", raw)
    line: int | None = int(match.group(1)) if match else None
    if line is None and "end of document" in raw:
        line = max(1, len(_toml_lines(text.removesuffix("\n"))))  # the last line
    detail = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", raw)
    message, allowed = detail, "valid TOML; see docs/profiles.md"
    for prefix, plain, todo in _TOML_SYNTAX:
        if detail.startswith(prefix):
            message, allowed = plain, todo
            break
    lines = _toml_lines(text)
    raw_line = lines[line - 1] if line is not None and 0 < line <= len(lines) else ""
    if text.lstrip().startswith("{"):
        message = "this looks like JSON"
        allowed = "TOML: `key = value` lines and [table] headers (see docs/profiles.md)"
    elif raw_line.count("{") > raw_line.count("}"):
        # tomllib trips over the line break inside `{ ... }` with a message about keys
        message = "an inline table { ... } must be written on one line"
        allowed = "keep { ... } on one line, or use a [table] section"
    elif detail.startswith("Unclosed array") and line is not None:
        # reported where the parser gave up; point at the line that opened the list
        for number in range(line, 0, -1):
            candidate = lines[number - 1] if number <= len(lines) else ""
            if "=" in candidate and candidate.count("[") > candidate.count("]"):
                line, match = number, None
                break
    column = f" at column {match.group(2)}" if match else ""
    key = _key_at_line(text, line) if line is not None else None
    return Problem(key, line, f"not valid TOML: {message}{column}", allowed)
