"""A reader for the YAML subset `render_yaml` writes (PyYAML is not a dependency).

Reads what `yaml.safe_load` would return for: comments, `key: true|false`, integers,
double-quoted strings with escapes, and flow lists of those. Anything else is an error, so a
change in the writer that leaves this subset fails the tests instead of passing silently.
"""

from __future__ import annotations

import re
from typing import Any

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "0": "\0", "/": "/"}


def _string(text: str, i: int) -> tuple[str, int]:
    assert text[i] == '"'
    out: list[str] = []
    i += 1
    while text[i] != '"':
        ch = text[i]
        if ch == "\\":
            kind = text[i + 1]
            if kind in _ESCAPES:
                out.append(_ESCAPES[kind])
                i += 2
            elif kind in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[kind]
                out.append(chr(int(text[i + 2 : i + 2 + width], 16)))
                i += 2 + width
            else:
                raise ValueError(f"unknown escape \\{kind}")
        else:
            out.append(ch)
            i += 1
    return "".join(out), i + 1


def _scalar(text: str, i: int) -> tuple[Any, int]:
    if text[i] == '"':
        return _string(text, i)
    match = re.compile(r"true|false|-?\d+").match(text, i)
    if match is None:
        raise ValueError(f"unsupported scalar at {text[i:]!r}")
    token = match.group(0)
    if token in ("true", "false"):
        return token == "true", match.end()
    return int(token), match.end()


def load(text: str) -> dict[str, Any]:
    """Parse the subset into a dict (duplicate keys are an error)."""
    data: dict[str, Any] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, rest = line.partition(": ")
        if not sep or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", key):
            raise ValueError(f"not a `key: value` line: {line!r}")
        if key in data:
            raise ValueError(f"duplicate key {key}")
        if rest.startswith("["):
            items: list[Any] = []
            i = 1
            while rest[i] != "]":
                value, i = _scalar(rest, i)
                items.append(value)
                if rest[i] == ",":
                    i += 2 if rest[i + 1] == " " else 1
            if rest[i + 1 :]:
                raise ValueError(f"trailing text in {line!r}")
            data[key] = items
        else:
            value, end = _scalar(rest, 0)
            if rest[end:]:
                raise ValueError(f"trailing text in {line!r}")
            data[key] = value
    return data
