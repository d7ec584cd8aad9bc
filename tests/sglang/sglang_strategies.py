"""Hypothesis strategies: valid profiles for a version (from the flag table) and wild command lines."""

from __future__ import annotations

import re
import typing
from typing import Any

from hypothesis import strategies as st

from wizard.profile_schema import Profile
from wizard.sglang.fields import FIELDS, FieldSpec, canonical_dest
from wizard.sglang.flags import FlagTable

NASTY = [
    "a b",
    "it's",
    'say "hi"',
    "$(rm -rf /)",
    "`id`",
    "$HOME",
    "line1\nline2",
    "back\\slash",
    "tab\there",
    "semi;colon && pipe | amp &",
    "#hash",
    "~/tilde",
    "* ? [glob]",
    "-leading-dash",
    "--looks-like-a-flag",
    "=",
    "ünïcødé ✓",
    "\\\nnot-a-continuation",
    "'",
    '"',
    "a=b",
    "> /tmp/redir 2>&1",
]

text_values = st.one_of(
    st.sampled_from(NASTY),
    st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12),
)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)


def _annotation_text(spec: FieldSpec) -> tuple[str, Any]:
    section, _, name = spec.path.partition(".")
    section_type = Profile.model_fields[section].annotation
    info = section_type.model_fields[name]  # type: ignore[union-attr]
    return repr(info.annotation) + repr(info.metadata), info


def _literal_args(info: Any) -> list[str]:
    found: list[str] = []

    def walk(tp: Any) -> None:
        if typing.get_origin(tp) is typing.Literal:
            found.extend(typing.get_args(tp))
        for arg in typing.get_args(tp):
            walk(arg)

    walk(info.annotation)
    return found


_STRATEGIES: dict[tuple[str, str, int], st.SearchStrategy[Any]] = {}


def value_strategy(spec: FieldSpec, table: FlagTable, version: str) -> st.SearchStrategy[Any]:
    """Values of one profile field that SGLang `version`'s argparse accepts (cached)."""
    key = (spec.path, version, id(table))
    if key not in _STRATEGIES:
        _STRATEGIES[key] = _value_strategy(spec, table, version)
    return _STRATEGIES[key]


def _value_strategy(spec: FieldSpec, table: FlagTable, version: str) -> st.SearchStrategy[Any]:
    text, info = _annotation_text(spec)
    dest = spec.dest_for(version)
    action = table.by_dest.get(dest) if dest else None
    literal = _literal_args(info)
    if action is not None and action.choices:
        choices = [c for c in action.choices if isinstance(c, str)]
        if literal:
            choices = [c for c in choices if c in literal]
        return st.sampled_from(choices)
    if literal:
        return st.sampled_from(literal)
    if "bool" in text:
        return st.booleans()
    if "list" in text:
        return st.lists(st.integers(1, 4096), min_size=1, max_size=4)
    if "float" in text:
        if "gt=0" in text:
            return st.floats(0, 1, exclude_min=True)
        return finite_floats
    if "int" in text:  # the field's own bounds (ge=/le= in its annotation), within +-10**6
        low = re.search(r"ge=(-?\d+)", text)
        high = re.search(r"le=(-?\d+)", text)
        return st.integers(max(int(low.group(1)), -(10**6)) if low else -(10**6),
                           min(int(high.group(1)), 10**6) if high else 10**6)
    return text_values


_EXTRA: dict[int, st.SearchStrategy[list[str]]] = {}


def extra_flag_strategy(table: FlagTable) -> st.SearchStrategy[list[str]]:
    """argv pieces of valid flags that no profile field holds (store_true or one free value)."""
    if id(table) not in _EXTRA:
        _EXTRA[id(table)] = _extra_flag_strategy(table)
    return _EXTRA[id(table)]


def _extra_flag_strategy(table: FlagTable) -> st.SearchStrategy[list[str]]:
    from wizard.sglang.fields import BY_DEST

    store_true: list[str] = []
    one_value: list[str] = []
    for action in table.actions:
        if not action.long_options or action.dest in {"help", "config", "version"}:
            continue
        if BY_DEST.get(canonical_dest(action.server_field)) is not None:
            continue
        if action.kind == "store_true":
            store_true.append(action.primary)
        elif (
            action.kind == "store"
            and action.nargs is None
            and action.choices is None
            and action.type in (None, "str")
        ):
            one_value.append(action.primary)

    def with_value(flag: str, value: str) -> list[str]:
        return [f"{flag}={value}"] if value.startswith("-") else [flag, value]

    options = [st.sampled_from(store_true).map(lambda f: [f])] if store_true else []
    if one_value:
        options.append(st.builds(with_value, st.sampled_from(one_value), text_values))
    return st.one_of(*options)


env_names = st.one_of(
    st.sampled_from(["SGLANG_ENABLE_SPEC_V2", "CUDA_VISIBLE_DEVICES", "_X", "a1", "HF_HOME"]),
    st.text("abcXYZ_09", min_size=1, max_size=6).map(lambda t: "V" + t),
)


@st.composite
def profiles(draw: st.DrawFn, table: FlagTable, version: str) -> Profile:
    """A valid profile whose every launch field exists in `version` and passes its argparse."""
    available = [
        spec
        for spec in FIELDS
        if spec.path != "model.path"
        and spec.dest_for(version) is not None
        and spec.dest_for(version) in table.by_dest
    ]
    chosen = draw(st.lists(st.sampled_from(available), max_size=12, unique_by=lambda s: s.path))
    data: dict[str, Any] = {"sglang_version": version, "model": {"path": draw(text_values)}}
    for spec in chosen:
        section, _, name = spec.path.partition(".")
        data.setdefault(section, {})[name] = draw(value_strategy(spec, table, version))
    data["env"] = draw(st.dictionaries(env_names, text_values, max_size=3))
    data["extra_args"] = [
        piece for group in draw(st.lists(extra_flag_strategy(table), max_size=3)) for piece in group
    ]
    data["ssh"] = {
        "python": draw(
            st.sampled_from(["python3", "/opt/my env/bin/python3.11", "~/ml-env/bin/python3"])
        )
    }
    return Profile.model_validate(data)


@st.composite
def command_lines(draw: st.DrawFn, table: FlagTable) -> str | list[str]:
    """Wild launch commands: real, abbreviated, misspelt and foreign flags, values, shell noise."""
    options = table.long_options()
    piece = st.one_of(
        st.sampled_from(options),
        st.sampled_from(options).map(lambda o: o[: max(3, len(o) // 2)]),
        st.builds(lambda o, v: f"{o}={v}", st.sampled_from(options), text_values),
        st.sampled_from(
            [
                "--num-speculative-tokens",
                "--mamba-scheduler-strategy",
                "--mamba-radix-cache-strategy",
                "--cuda-graph-bs",
                "--cuda-graph-max-bs",
                "--help",
                "--",
                "-",
                "-1",
                "-1e-5",
                "nan",
                "inf",
                "0",
                "2",
                "0.5",
                "NEXTN",
                "nextn",
                "extra_buffer",
                "&",
                "&&",
                "|",
                ";",
                ">",
                "2>&1",
                "\\",
                "\\\n",
                "\n",
                "#",
                "'",
                '"',
                "$(x)",
                "A=1",
                "nohup",
                "env",
            ]
        ),
        text_values,
        st.integers(-5, 5000).map(str),
    )
    head = draw(
        st.sampled_from(
            [
                "python3 -m sglang.launch_server",
                "sglang serve",
                "SGLANG_ENABLE_SPEC_V2=1 nohup python -m sglang.launch_server",
                "export X=1 && sglang serve",
                "",
            ]
        )
    )
    words = draw(st.lists(piece, max_size=12))
    if draw(st.booleans()):
        words = ["--model-path", draw(text_values), *words]
    if draw(st.booleans()):
        return [*head.split(), *words]
    joiner = draw(st.sampled_from([" ", " \\\n  ", "  "]))
    return joiner.join([head, *words])


_FIXED_PIECES = [
    "--num-speculative-tokens",
    "--mamba-scheduler-strategy",
    "--mamba-radix-cache-strategy",
    "--cuda-graph-bs",
    "--cuda-graph-max-bs",
    "--help",
    "--",
    "-",
    "-1",
    "-1e-5",
    "nan",
    "inf",
    "0",
    "2",
    "0.5",
    "NEXTN",
    "nextn",
    "extra_buffer",
    "&",
    "&&",
    "|",
    ";",
    ">",
    "2>&1",
    "\\",
    "\\\n",
    "\n",
    "#",
    "'",
    '"',
    "$(x)",
    "A=1",
    "nohup",
    "env",
    "python3",
    "-m",
    "sglang.launch_server",
    "sglang",
    "serve",
    *NASTY,
]
_HEADS = [
    "python3 -m sglang.launch_server",
    "sglang serve",
    "SGLANG_ENABLE_SPEC_V2=1 nohup python -m sglang.launch_server",
    "export X=1 && sglang serve",
    "CUDA_VISIBLE_DEVICES=0,1 env A=b /venv/bin/python3 -u -m sglang.launch_server",
    "",
]
_JOINERS = [" ", " \\\n  ", "  ", "\t"]


def _decode_command(options: list[str], raw: bytes) -> str | list[str]:
    """Build a command line from bytes (cheap to generate, shrinks towards simple commands)."""
    head = _HEADS[raw[0] % len(_HEADS)] if raw else _HEADS[0]
    words: list[str] = []
    if len(raw) > 1 and raw[1] % 2 == 0:
        words += ["--model-path", "/m"]
    i = 2
    while i + 1 < len(raw):
        kind, index = raw[i] % 6, raw[i + 1]
        i += 2
        if kind == 0:
            words.append(options[(index * 7919) % len(options)])
        elif kind == 1:
            option = options[(index * 7919) % len(options)]
            words.append(option[: max(3, len(option) * (1 + index % 3) // 4)])
        elif kind == 2:
            value = _FIXED_PIECES[index % len(_FIXED_PIECES)]
            words.append(f"{options[(index * 31) % len(options)]}={value}")
        elif kind == 3:
            words.append(_FIXED_PIECES[index % len(_FIXED_PIECES)])
        elif kind == 4:
            words.append(str(index - 8))
        else:
            words.append(raw[i : i + 1 + index % 6].decode("latin-1"))
            i += 1 + index % 6
    if raw and raw[-1] % 3 == 0:
        return [*head.split(), *words]
    joiner = _JOINERS[(raw[-1] if raw else 0) % len(_JOINERS)]
    return joiner.join([head, *words])


def fast_command_lines(table: FlagTable) -> st.SearchStrategy[str | list[str]]:
    """Wild command lines from one byte-string draw each (see `_decode_command`)."""
    options = table.long_options()
    return st.binary(min_size=1, max_size=40).map(lambda raw: _decode_command(options, raw))
