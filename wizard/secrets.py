"""Secrets in a profile's environment: stored as a reference to a variable, never as the value.

A profile keeps `HF_TOKEN = "env:HF_TOKEN"`: the launch reads the value from the environment of
the process that launches (`resolve_env`), screens and exports show `$HF_TOKEN`, and a literal
token typed or imported is turned into such a reference (`protect_env`) before it is kept, saved
or shown. Which names are secret: `is_secret_name` (HF_TOKEN, *_API_KEY, *_SECRET, ...).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

#: A value of this form names the variable to read at launch: `env:HF_TOKEN`.
REF_PREFIX = "env:"
MASK = "***"

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:TOKEN|KEY|APIKEY|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|PRIVATE|AUTH)(?:_|$)",
    re.IGNORECASE,
)
_REF = re.compile(r"env:([A-Za-z_][A-Za-z0-9_]*)")


def is_secret_name(name: str) -> bool:
    """True for variable names that look like they hold a secret (HF_TOKEN, OPENAI_API_KEY, ...)."""
    return bool(_SECRET_NAME.search(name))


def reference_name(value: str) -> str | None:
    """The variable a reference names (`env:HF_TOKEN` -> `HF_TOKEN`), None for a plain value."""
    match = _REF.fullmatch(value)
    return match.group(1) if match else None


def protect_env(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """`env` with every literal secret value replaced by a reference to its own name, and the
    names that were replaced (an empty value is left alone: there is nothing to hide)."""
    out: dict[str, str] = {}
    moved: list[str] = []
    for name, value in env.items():
        if is_secret_name(name) and value and reference_name(value) is None:
            out[name] = REF_PREFIX + name
            moved.append(name)
        else:
            out[name] = value
    return out, moved


def display_value(name: str, value: str) -> str:
    """How screens and exports show a value: `$NAME` for a reference, `***` for a literal secret."""
    ref = reference_name(value)
    if ref is not None:
        return f"${ref}"
    return MASK if is_secret_name(name) and value else value


def display_env(env: Mapping[str, str]) -> dict[str, str]:
    """`display_value` for every variable."""
    return {name: display_value(name, value) for name, value in env.items()}


def unset_references(env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> list[str]:
    """Variables that references name and that are not set in `environ` (default: this process)."""
    environ = os.environ if environ is None else environ
    names = (reference_name(v) for v in env.values())
    return [n for n in names if n is not None and n not in environ]


def resolve_env(env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment to launch with: references read from `environ` (default: this process);
    an unset one is left out, so the server sees it unset rather than the text `env:NAME`."""
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name, value in env.items():
        ref = reference_name(value)
        if ref is None:
            out[name] = value
        elif ref in environ:
            out[name] = environ[ref]
    return out
