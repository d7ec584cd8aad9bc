"""Property tests: valid profiles survive TOML and disk losslessly; garbage only ever gives `ProfileError`.

The profile strategy is built from the pydantic schema itself, so a field added to `Profile` is
generated without touching this file. Example counts (10,000 together) are in `EXAMPLES`; most
go to the cheap fuzz tests, since hypothesis spends ~6 ms drawing one full profile. Measure with
`.venv/bin/pytest tests/profile/test_roundtrip.py --durations=0`; `PROFILE_EXAMPLES_SCALE=0.05`
runs a quick subset while developing.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import re
import tomllib
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from wizard.gpus import CATALOG
from wizard.profile import (
    builtin_profiles_dir,
    load_profile,
    profile_from_data,
    profile_from_toml,
    profile_to_toml,
    save_profile,
)
from wizard.profile_problems import ProfileError, locate_keys
from wizard.profile_schema import Profile

EXAMPLES = {
    "toml_round_trip": 700,
    "disk_round_trip": 150,
    "located_mutation": 400,
    "fuzz_text": 6500,
    "fuzz_data": 2250,
}
assert sum(EXAMPLES.values()) >= 10_000


# for quick local runs: PROFILE_EXAMPLES_SCALE=0.05 (CI runs the full counts)
SCALE = float(os.environ.get("PROFILE_EXAMPLES_SCALE", "1"))


def _settings(name: str) -> settings:
    return settings(
        max_examples=max(1, int(EXAMPLES[name] * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# ---------------------------------------------------------------------------------------------
# Valid profiles, generated from the schema

# Strings that stress TOML quoting and UTF-8: spaces, quotes of both kinds, backslashes, newlines,
# control characters, TOML syntax, non-ASCII letters, emoji, right-to-left text, line separators.
NASTY_STRINGS = [
    "a b",
    "it's",
    'say "hi"',
    "'''",
    '"""',
    "line1\nline2",
    "crlf\r\n",
    "back\\slash",
    "C:\\models\\qwen",
    "tab\there",
    "nul\x00byte",
    "bell\x07 del\x7f",
    "ünïcødé ✓",
    "日本語のモデル",
    "emoji 🚀🤖",
    "rtl עברית",
    "sep\u2028\u2029",
    "zero\u200bwidth",
    "bom\ufeff",
    "#not a comment",
    "key = value",
    "[model]",
    "{ inline = 1 }",
    "$(rm -rf /)",
    " leading and trailing ",
    "\\u0041 not an escape",
    "/root/models/Qwen3.6-27B",
    "~/ml-env/bin/python3",
    "x" * 300,
]
# any character a UTF-8 file can hold (lone surrogates cannot be saved, so they are excluded);
# short random text plus the pool above keeps generation cheap (each character is one draw)
TEXT = st.sampled_from(NASTY_STRINGS) | st.text(st.characters(codec="utf-8"), max_size=10)
I64 = (-(2**63), 2**63 - 1)  # TOML integers are 64-bit
ENV_NAME = st.from_regex(re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,20}"), fullmatch=True)
# the versions `wizard.sglang.versions.parse_version` reads (the profile refuses the others)
VERSION = st.from_regex(
    re.compile(
        r"\d{1,3}\.\d{1,3}(\.\d{1,3})?([.-]?(post|dev|rc|a|b)\d{0,3}){0,2}(\+[A-Za-z0-9.]{1,8})?",
        re.ASCII,
    ),
    fullmatch=True,
)
GPU_KIND = st.sampled_from([name for g in CATALOG for name in (g.name, *g.aliases)])

# fields whose values a validator restricts beyond their type
SPECIAL: dict[str, st.SearchStrategy[Any]] = {
    "Profile.sglang_version": VERSION,
    "GpuSection.kind": st.none() | GPU_KIND,
    "NodeEntry.gpu_kind": st.none() | GPU_KIND,
    "ContainerSection.shm_size": st.none() | st.from_regex(r"[1-9][0-9]{0,5}[kmgKMG]?", fullmatch=True),
    # an image reference has no whitespace and does not start with "-" (it would be an option)
    "ContainerSection.image": TEXT.filter(
        lambda t: bool(t) and not t.startswith("-") and not any(c.isspace() for c in t)),
    # a host folder is a path (/, ~, ./) or a volume name; `data/x` is neither (refused)
    "ContainerSection.hf_cache": st.sampled_from(["", "~/.cache/huggingface", "/hf", "./hf"])
    | st.builds(lambda t: "/" + t, TEXT),
    "ContainerSection.mounts": st.lists(
        st.builds(lambda h, c, ro: f"{h}:/{c}{ro}",
                  st.sampled_from(["/", "~/", "./"]).flatmap(
                      lambda prefix: TEXT.map(lambda t: prefix + t))
                  .filter(lambda t: ":" not in t and "\x00" not in t)
                  | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,8}", fullmatch=True),
                  st.text(st.characters(codec="utf-8", exclude_characters=":\x00"), max_size=8),
                  st.sampled_from(["", ":ro", ":rw"])),
        max_size=3),
    "ContainerSection.runtime_args": st.lists(
        st.sampled_from(["--privileged", "--cap-add=SYS_PTRACE", "--ulimit", "memlock=-1",
                         "--entrypoint", "", "-v", "/x:/y", "日本"]), max_size=4),
    # ipc_host = true with shm_size is refused; generated without ipc_host
    "ContainerSection.ipc_host": st.none() | st.just(False),
}


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for meta in metadata:
        for item in [meta, *getattr(meta, "metadata", [])]:
            for name in ("ge", "gt", "le", "lt", "min_length", "allow_inf_nan"):
                value = getattr(item, name, None)
                if value is not None:
                    out[name] = value
    return out


def strategy_for(annotation: Any, bounds: dict[str, Any] | None = None) -> st.SearchStrategy[Any]:
    """A strategy for every value pydantic accepts for `annotation` (and TOML can carry)."""
    bounds = dict(bounds or {})
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *metadata = get_args(annotation)
        return strategy_for(base, {**bounds, **_bounds(metadata)})
    if origin in (Union, types.UnionType):
        return st.one_of([strategy_for(a, bounds) for a in get_args(annotation)])
    if origin is Literal:
        return st.sampled_from(get_args(annotation))
    if origin is list:
        (item,) = get_args(annotation)
        return st.lists(strategy_for(item), max_size=4)
    if origin is dict:
        _, value = get_args(annotation)
        return st.dictionaries(ENV_NAME, strategy_for(value), max_size=4)
    if annotation is type(None):
        return st.none()
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        low = bounds.get("ge", I64[0] if "gt" not in bounds else bounds["gt"] + 1)
        high = bounds.get("le", I64[1] if "lt" not in bounds else bounds["lt"] - 1)
        return st.integers(low, high)  # hypothesis already favours small and boundary values
    if annotation is float:
        return st.floats(
            min_value=bounds.get("ge", bounds.get("gt")),
            max_value=bounds.get("le", bounds.get("lt")),
            exclude_min="gt" in bounds,
            exclude_max="lt" in bounds,
            allow_nan=False,
            allow_infinity=False,
        )
    if annotation is str:
        return TEXT.filter(bool) if bounds.get("min_length") else TEXT
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return section(annotation)
    raise AssertionError(f"no strategy for {annotation!r}: teach strategy_for this type")


def section(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict of field values for one section: the required fields and any subset of the others."""
    strategies: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in model.model_fields.items():
        if name == "schema_version":
            continue
        special = f"{model.__name__}.{name}"
        strategies[name] = (
            SPECIAL[special]
            if special in SPECIAL
            else strategy_for(info.annotation, _bounds(info.metadata))
        )
    required = [n for n in strategies if model.model_fields[n].is_required()]
    optional = [n for n in strategies if n not in required]

    @st.composite
    def values(draw: st.DrawFn) -> dict[str, Any]:
        # one draw of random bytes picks the subset of optional fields (each about half the
        # time; shrinks towards none); only the chosen fields draw a value: cheap generation
        size = (len(optional) + 7) // 8
        mask = int.from_bytes(draw(st.binary(min_size=size, max_size=size)), "little")
        chosen = [name for bit, name in enumerate(optional) if mask >> bit & 1]
        return {name: draw(strategies[name]) for name in [*required, *chosen]}

    return values()


_PROFILES = section(Profile).map(Profile.model_validate)  # built once: building is slow


def profiles() -> st.SearchStrategy[Profile]:
    """Valid Profiles with any mix of sections and values."""
    return _PROFILES


# ---------------------------------------------------------------------------------------------
# Round trips


@_settings("toml_round_trip")
@given(profiles())
def test_toml_round_trip_is_lossless(profile: Profile) -> None:
    text = profile_to_toml(profile)
    assert profile_from_toml(text) == profile
    assert text.startswith("schema_version = 1\n")


@pytest.fixture(scope="module")
def save_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("saved")


@_settings("disk_round_trip")
@given(profile=profiles())
def test_save_then_load_is_lossless(profile: Profile, save_dir: Path) -> None:
    path = save_profile(profile, save_dir / "p.toml", overwrite=True)
    assert load_profile(path) == profile
    assert [p.name for p in save_dir.iterdir()] == ["p.toml"], "no temp files left behind"


def test_strategy_reaches_every_field() -> None:
    """Every field of every section takes a non-default value in some generated profile."""
    seen: set[str] = set()
    wanted = {
        f"{name}.{field}" if field else name
        for name, info in Profile.model_fields.items()
        if name != "schema_version"
        for model in [_table_model(info.annotation)]
        for field in (list(model.model_fields) if model is not None else [""])
    }

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(profiles())
    def collect(profile: Profile) -> None:
        seen.update(_set_paths(profile.model_dump(exclude_defaults=True)))

    collect()
    assert wanted - seen == set()


def _table_model(annotation: Any) -> type[BaseModel] | None:
    """The section model of a table field (`ContainerSection | None` included), else None."""
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _set_paths(data: dict[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in data.items():
        if isinstance(value, dict) and key != "env" and not prefix:
            yield from _set_paths(value, f"{key}.")
        else:
            yield prefix + key


# ---------------------------------------------------------------------------------------------
# Located errors for a single wrong value in an otherwise valid profile

WRONG = st.one_of(
    st.text(max_size=5, alphabet="abc 1-"),
    st.integers(-5, 70_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["x", "value"]), st.integers(0, 3), max_size=1),
    st.just(dt.date(2026, 11, 29)),
)


@_settings("located_mutation")
@given(profile=profiles(), data=st.data())
def test_one_wrong_value_is_located_at_its_key_and_line(
    profile: Profile, data: st.DataObject
) -> None:
    doc = tomllib.loads(profile_to_toml(profile))
    tables = [k for k, v in doc.items() if isinstance(v, dict) and k != "env"]
    table = data.draw(st.sampled_from(["model", *tables]))
    field_names = list(type(getattr(profile, table)).model_fields)
    name = data.draw(st.sampled_from(field_names))
    value = data.draw(WRONG)
    doc[table][name] = value
    text = tomli_w.dumps(doc)
    try:
        result = profile_from_toml(text, "m.toml")
    except ProfileError as err:
        key = f"{table}.{name}"
        assert err.problems
        for problem in err.problems:
            assert problem.key is not None and problem.key.startswith(key), (problem, key)
            assert problem.line == locate_keys(text)[key]
            assert problem.allowed, problem
            assert "Input should" not in problem.message
    else:  # the value happens to be valid for that key: it is kept as written
        kept = getattr(getattr(result, table), name)
        assert kept == value or (table, name) == ("gpu", "kind")  # GPU names are normalised


# ---------------------------------------------------------------------------------------------
# Fuzz: nothing but ProfileError escapes

FRAGMENT_LIST = [
    "schema_version = 1\n",
    "schema_version = 2\n",
    "[model]\n",
    'path = "/m"\n',
    "[speculative]\n",
    "num_steps = 3\n",
    "eagle_topk = [1]\n",
    "[[model]]\n",
    "[env]\n",
    'A = "1"\n',
    "A = 1\n",
    "x = {a = {b = 1}}\n",
    "tp = 1.5\n",
    "[parallel]\n",
    '"""\n',
    "'''\n",
    "= 3\n",
    "[",
    "]",
    "{",
    "}",
    '"',
    "'",
    "\\",
    "#",
    ".",
    "\n",
    " ",
    "\t",
    "\r\n",
    "\x00",
    "nan",
    "inf",
    "1979-05-27T07:32:00Z",
    "0x1F",
    "1_000",
    "é",
    "\u2028",
    "\ufeff",
    "model.path = 'x'\n",
    "gpu = { kind = 'H1000' }\n",
]


def _tomlish(picks: bytes, noise: str, at: int) -> str:
    """Fragments chosen by the bytes (one cheap draw that shrinks well), random text at `at`."""
    parts = [FRAGMENT_LIST[b % len(FRAGMENT_LIST)] for b in picks]
    return "".join([*parts[:at], noise, *parts[at:]])


TOMLISH = st.builds(_tomlish, st.binary(max_size=24), st.text(max_size=4), st.integers(0, 24))


@_settings("fuzz_text")
@given(TOMLISH)
def test_any_text_gives_a_profile_or_a_profile_error(text: str) -> None:
    try:
        profile_from_toml(text, "fuzz.toml")
    except ProfileError as err:
        assert err.problems
        rendered = str(err)
        assert rendered.startswith("fuzz.toml")
        for problem in err.problems:
            assert problem.line is None or 1 <= problem.line <= text.count("\n") + 1


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.sampled_from(
        [dt.datetime(1979, 5, 27, 7, 32), dt.date(2026, 11, 29), dt.time(7, 32), "", "H100"]
    ),
)
NESTED = st.sampled_from(
    [[[1]], [{"path": "/m"}], {"a": {"b": [1, "x"]}}, [[], {}], {"kind": ["H100"]}, [[[[]]]]]
)
SHAPES = st.one_of(
    SCALARS,
    NESTED,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(st.sampled_from(["path", "tp", "kind", "", "x y"]), SCALARS, max_size=2),
)
TABLES = {
    name: list(info.annotation.model_fields)
    for name, info in Profile.model_fields.items()
    if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
}


BASE_DOCS = [
    {},
    {"schema_version": 1, "model": {"path": "/m"}},
    *(tomllib.loads(path.read_text("utf-8")) for path in builtin_profiles_dir().glob("*.toml")),
]


MADE_UP_KEYS = ["", "x y", "Path", "num-steps", "speculative_num_steps", "ünï", "[model]"]


@st.composite
def wrong_shapes(draw: st.DrawFn) -> dict[str, Any]:
    """A valid or empty document with one to three keys (real or made up) set to any shape.

    One draw of bytes picks the document, the tables and the keys (cheap, shrinks towards fewer
    and earlier choices); only the values are drawn one by one.
    """
    picks = draw(st.binary(min_size=3, max_size=7))
    doc = copy.deepcopy(BASE_DOCS[picks[0] % len(BASE_DOCS)])
    tables = ["", *TABLES]
    for at in range(1, len(picks) - 1, 2):
        table = tables[picks[at] % len(tables)]
        names = [*(TABLES[table] if table else Profile.model_fields), *MADE_UP_KEYS]
        key = names[picks[at + 1] % len(names)]
        value = draw(SHAPES)
        if not table:
            doc[key] = value
            continue
        if not isinstance(doc.get(table), dict):
            doc[table] = {}
        doc[table][key] = value
    return doc


@_settings("fuzz_data")
@given(wrong_shapes())
def test_any_data_gives_a_profile_or_a_profile_error(doc: dict[str, Any]) -> None:
    try:
        profile = profile_from_data(doc, "fuzz.toml")
    except ProfileError as err:
        assert err.problems
        assert all(isinstance(p.message, str) and p.message for p in err.problems)
        str(err)
    else:
        assert isinstance(profile, Profile)


@pytest.mark.parametrize("data", [[], "x", 3, None])
def test_non_table_document_is_a_profile_error(data: Any) -> None:
    with pytest.raises(ProfileError) as caught:
        profile_from_data(data, "odd.toml")
    assert "expected a table of keys" in caught.value.first.message
