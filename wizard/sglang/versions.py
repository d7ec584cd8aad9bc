"""Which SGLang versions the wizard knows exactly, and what each one reads from the environment.

Only two rule sets exist: SGLang 0.5.11 (the incidents' version) and 0.5.23 (newest). Any other
version gets the nearest of the two plus a warning that says so. Environment-variable facts are
data here (read from each version's `sglang/srt/environ.py`), so the rule engine and the importer
can tell what `SGLANG_ENABLE_SPEC_V2=1` really does in the chosen version.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SUPPORTED: tuple[str, ...] = ("0.5.11", "0.5.23")

_VERSION_RE = re.compile(
    r"^\s*v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?"
    r"(?P<suffix>(?:[.-]?(?:post|dev|rc|a|b)\d*)*(?:\+[A-Za-z0-9.]+)?)\s*$"
)


class VersionError(ValueError):
    """A version string that is not a version at all (`--sglang-version banana`)."""


def parse_version(version: str) -> tuple[tuple[int, int, int], str]:
    """`"0.5.11.post1"` -> ((0, 5, 11), ".post1"); raise `VersionError` when unparseable."""
    match = _VERSION_RE.match(version) if isinstance(version, str) else None
    if match is None:
        raise VersionError(
            f"{version!r} is not an SGLang version; use the form 0.5.11 "
            f"(supported exactly: {', '.join(SUPPORTED)})"
        )
    numbers = (int(match["major"]), int(match["minor"]), int(match["patch"] or 0))
    return numbers, match["suffix"] or ""


def _distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> tuple[int, int, int]:
    return (abs(a[0] - b[0]), abs(a[1] - b[1]), abs(a[2] - b[2]))


def resolve_version(version: str) -> tuple[str, str | None]:
    """The supported rule set to use for `version`, and a warning text when it is not exact.

    Older than every supported version -> the oldest (0.5.9 -> 0.5.11); newer than all -> the
    newest (0.6.0 -> 0.5.23); in between -> the numerically nearest (ties go to the newer one).
    A pre/post-release suffix (`0.5.11.post1`, `0.5.23rc0`) uses its base version's rules, with a
    warning. Unparseable text raises `VersionError`.
    """
    numbers, suffix = parse_version(version)
    known = [(parse_version(v)[0], v) for v in SUPPORTED]
    for known_numbers, name in known:
        if known_numbers == numbers:
            if suffix:
                return name, (
                    f"SGLang {version.strip()} is checked with the {name} rule set "
                    f"(same base version; the {suffix!r} suffix is not modelled separately)"
                )
            return name, None
    if numbers < known[0][0]:
        chosen = known[0][1]
        why = "it is older than every supported version"
    elif numbers > known[-1][0]:
        chosen = known[-1][1]
        why = "it is newer than every supported version"
    else:
        ranked = sorted(known, key=lambda item: (_distance(item[0], numbers), -item[0][2]))
        chosen = ranked[0][1]
        why = "it is the nearest supported version"
    return chosen, (
        f"SGLang {version.strip()} is not modelled exactly; using the {chosen} rule set because "
        f"{why} (exact: {', '.join(SUPPORTED)}). Flags and rules may differ."
    )


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

ENV_FACTS: dict[tuple[str, str], EnvVarFact] = {
    ("SGLANG_ENABLE_SPEC_V2", "0.5.11"): EnvVarFact(
        "SGLANG_ENABLE_SPEC_V2",
        "0.5.11",
        read=True,
        kind="EnvBool",
        default=True,
        source="sglang/srt/environ.py:459",
        meaning=(
            "spec v2 (overlap scheduler) for the EAGLE family; already on by default, "
            "false selects the slower non-overlap spec v1 path"
        ),
    ),
    ("SGLANG_ENABLE_SPEC_V2", "0.5.23"): EnvVarFact(
        "SGLANG_ENABLE_SPEC_V2",
        "0.5.23",
        read=False,
        meaning="removed: 0.5.23 never reads it (setting it has no effect and no warning)",
    ),
    ("SGLANG_ENABLE_PP_SPEC", "0.5.11"): EnvVarFact(
        "SGLANG_ENABLE_PP_SPEC", "0.5.11", read=False, meaning="does not exist in 0.5.11"
    ),
    ("SGLANG_ENABLE_PP_SPEC", "0.5.23"): EnvVarFact(
        "SGLANG_ENABLE_PP_SPEC",
        "0.5.23",
        read=True,
        kind="EnvBool",
        default=False,
        source="sglang/srt/environ.py:1557",
        meaning="allow pipeline parallelism + EAGLE outside PD prefill",
    ),
}


DATA_DIR = Path(__file__).resolve().parent / "data"


@cache
def env_table(version: str) -> dict[str, EnvVarFact]:
    """Every variable SGLang `version` (a supported one) reads, from `data/env-<V>.json`.

    The dump is made from SGLang's own `environ.py` by the conformance runner; a missing or broken
    file gives an empty table (then only the curated facts above are known).
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
        )
    return table


def env_fact(name: str, version: str) -> EnvVarFact | None:
    """What `version` (resolved to a supported rule set) does with env var `name`.

    Curated facts first (with meaning and source line), then the version's dumped `environ.py`
    table. An `SGLANG_*` name the version does not define is reported as not read; other unknown
    names (CUDA_VISIBLE_DEVICES, HF_HOME, ...) give None.
    """
    supported, _ = resolve_version(version)
    curated = ENV_FACTS.get((name, supported))
    if curated is not None:
        return curated
    dumped = env_table(supported).get(name)
    if dumped is not None:
        return dumped
    if name.startswith("SGLANG_") and env_table(supported):
        return EnvVarFact(
            name, supported, read=False, meaning=f"SGLang {supported} does not read it"
        )
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
