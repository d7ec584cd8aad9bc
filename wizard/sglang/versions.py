"""Which SGLang versions the wizard knows exactly, and what each one reads from the environment.

The versions are the release registry's (`wizard.sglang.releases`: one data file per release,
derived from its wheel); this module re-exports its version parsing and adds the environment
variable facts, read from each release's dumped `environ.py` table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from wizard.sglang.releases import (
    VersionError,
    known_versions,
    parse_version,
    release_names,
    resolve_version,
)

__all__ = ["VersionError", "known_versions", "parse_version", "release_names",
           "resolve_version", "supported_versions"]


def supported_versions() -> tuple[str, ...]:
    """Every release with data of its own (from the registry's index; no release file is read)."""
    return tuple(release_names())


# ---------------------------------------------------------------------------------------------
# Environment variables


@dataclass(frozen=True)
class EnvVarFact:
    """How one SGLang version reads one environment variable."""

    name: str
    version: str
    read: bool  # False: this version never looks at the variable
    kind: str | None = None  # "EnvBool", "EnvInt", "EnvStr", ...
    default: bool | int | str | None = None
    source: str | None = None  # `environ.py:line` in that version's wheel
    meaning: str = ""


ENV_BOOL_TRUE: tuple[str, ...] = ("true", "1", "yes", "y")
ENV_BOOL_FALSE: tuple[str, ...] = ("false", "0", "no", "n")

# What the variables the rules care about mean (explanation only: whether a release reads a
# variable, its kind, default and declaration line all come from that release's dumped table).
ENV_MEANINGS: dict[str, str] = {
    "SGLANG_ENABLE_SPEC_V2": (
        "spec v2 (overlap scheduler) for the EAGLE family; false selects the slower non-overlap "
        "spec v1 path"
    ),
    "SGLANG_ENABLE_PP_SPEC": "allow pipeline parallelism + EAGLE outside PD prefill",
}


DATA_DIR = Path(__file__).resolve().parent / "data"


@cache
def env_table(version: str) -> dict[str, EnvVarFact]:
    """Every variable SGLang `version` (a supported one) reads, from `data/env-<V>.json`.

    The dump is made from SGLang's own `environ.py` by the conformance runner (kind, default and
    declaration line of each variable); a missing or broken file gives an empty table.
    """
    path = DATA_DIR / f"env-{version}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        variables = data["variables"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    table: dict[str, EnvVarFact] = {}
    for entry in variables:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        default = entry.get("default")
        table[entry["name"]] = EnvVarFact(
            entry["name"],
            version,
            read=True,
            kind=str(entry.get("kind") or "") or None,
            default=default if isinstance(default, bool | int | str) else None,
            source=str(entry["source"]) if entry.get("source") else None,
            meaning=ENV_MEANINGS.get(entry["name"], ""),
        )
    return table


def env_fact(name: str, version: str) -> EnvVarFact | None:
    """What `version` (resolved to a supported rule set) does with env var `name`.

    From the version's dumped `environ.py` table. An `SGLANG_*` name the version does not declare
    is reported as not read; other unknown names (CUDA_VISIBLE_DEVICES, HF_HOME, ...) give None.
    """
    supported, _ = resolve_version(version)
    dumped = env_table(supported).get(name)
    if dumped is not None:
        return dumped
    if name.startswith("SGLANG_") and env_table(supported):
        meaning = f"SGLang {supported} never reads it (its environ.py does not declare it)"
        return EnvVarFact(name, supported, read=False, meaning=meaning)
    return None


def parse_env_bool(name: str, value: str | None, default: bool) -> tuple[bool, str | None]:
    """SGLang's `EnvBool.get()`: the value used and the Python warning text it would print.

    Unset -> default. Accepted (any case, no trimming): true/1/yes/y and false/0/no/n. Anything
    else -> `warnings.warn('Invalid value for NAME: "value" is not a valid boolean value, using
    default "True"')` and the default.
    """
    if value is None:
        return default, None
    lowered = value.lower()
    if lowered in ENV_BOOL_TRUE:
        return True, None
    if lowered in ENV_BOOL_FALSE:
        return False, None
    return default, (
        f'Invalid value for {name}: "{lowered}" is not a valid boolean value, '
        f'using default "{default}"'
    )


def effective_env(name: str, value: str | None, version: str) -> tuple[object, str | None]:
    """The value SGLang `version` really uses for env `name` set to `value` (None = unset).

    Returns (effective value, note). For a variable the version does not read the value is None
    and the note says so. Unknown variables return (value, None) unchanged.
    """
    fact = env_fact(name, version)
    if fact is None:
        return value, None
    if not fact.read:
        note = None if value is None else f"{name}={value} has no effect: {fact.meaning}"
        return None, note
    if fact.kind == "EnvBool":
        default = bool(fact.default)
        return parse_env_bool(name, value, default)
    if value is None:
        return fact.default, None
    converters: dict[str, tuple[type, str]] = {
        "EnvInt": (int, "integer"),
        "EnvFloat": (float, "float"),
    }
    if fact.kind in converters:
        convert, word = converters[fact.kind]
        try:
            return convert(value), None
        except ValueError:
            return fact.default, (
                f'Invalid value for {name}: "{value}" is not a valid {word} value, '
                f'using default "{fact.default}"'
            )
    return value, None
