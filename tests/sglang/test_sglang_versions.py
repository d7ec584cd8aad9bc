"""Supported versions, nearest rule set, and environment-variable facts."""

from __future__ import annotations

import re

import pytest

from wizard.sglang.versions import (
    VersionError,
    effective_env,
    env_fact,
    parse_env_bool,
    resolve_version,
    supported_versions,
)

EVERY_RELEASE = tuple(f"0.5.{n}" for n in (1, 2, 3, 4, *range(5, 24)))  # PyPI has no 0.5.0


def test_the_registry_holds_every_release_from_0_5_1_to_0_5_23() -> None:
    assert set(EVERY_RELEASE) <= set(supported_versions())


IDENTICAL_POSTS = ("0.5.1.post1", "0.5.8.post1", "0.5.10.post1", "0.5.13.post1")  # same hash
OWN_DATA_POSTS = ("0.5.1.post2", "0.5.1.post3", "0.5.3.post1", "0.5.3.post2", "0.5.3.post3",
                  "0.5.4.post1", "0.5.4.post2", "0.5.4.post3",
                  "0.5.5.post1", "0.5.5.post2", "0.5.5.post3", "0.5.6.post1", "0.5.6.post2",
                  "0.5.12.post1", "0.5.15.post1")


@pytest.mark.parametrize("version", [*EVERY_RELEASE, *IDENTICAL_POSTS])
def test_exact_versions_have_no_warning(version: str) -> None:
    expected = version.split(".post")[0]
    assert resolve_version(version) == (expected, None)


@pytest.mark.parametrize("version", OWN_DATA_POSTS)
def test_posts_with_changed_argument_code_have_their_own_data(version: str) -> None:
    from wizard.sglang.releases import known_versions, load_release, release_names

    assert resolve_version(version) == (version, None)
    assert version in release_names() and version in known_versions()
    base = load_release(version.split(".post")[0])
    assert load_release(version).name == version
    assert load_release(version).sites != {} and base.name != version


def test_every_held_version_is_offered_and_checked_exactly() -> None:
    from wizard.sglang.releases import known_versions

    offered = known_versions()
    assert set(EVERY_RELEASE) | set(IDENTICAL_POSTS) | set(OWN_DATA_POSTS) == set(offered)
    assert all(resolve_version(v)[1] is None for v in offered)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.5.5.post4", "0.5.5.post3"),  # the newest held release of the base, not newer
        ("0.5.15.post2", "0.5.15.post1"),
        ("0.5.12.post0", "0.5.12"),
        ("0.5.6rc0", "0.5.6"),
    ],
)
def test_unheld_suffixes_use_the_newest_held_release_of_their_base(
    version: str, expected: str
) -> None:
    chosen, warning = resolve_version(version)
    assert chosen == expected
    assert warning is not None and version in warning and expected in warning


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.4.0", "0.5.1"),
        ("0.6.0", "0.5.23"),
        ("1.0", "0.5.23"),
        ("0.5.24", "0.5.23"),
        ("0.5.11.post1", "0.5.11"),
        ("0.5.23rc0", "0.5.23"),
    ],
)
def test_other_versions_get_the_nearest_rule_set_and_a_warning(version: str, expected: str) -> None:
    chosen, warning = resolve_version(version)
    assert chosen == expected
    assert warning is not None
    assert expected in warning and version.strip() in warning


@pytest.mark.parametrize("version", ["", "banana", "0", "five.1", "0.5.x", "latest"])
def test_unparseable_versions_are_typed_errors(version: str) -> None:
    with pytest.raises(VersionError, match="not an SGLang version"):
        resolve_version(version)


def test_spec_v2_env_facts() -> None:
    old = env_fact("SGLANG_ENABLE_SPEC_V2", "0.5.11")
    assert old is not None and old.read and old.kind == "EnvBool" and old.default is True
    new = env_fact("SGLANG_ENABLE_SPEC_V2", "0.5.23")
    assert new is not None and not new.read
    assert env_fact("NOT_SGLANG_AT_ALL", "0.5.11") is None
    # an old release reads the variable with default False (spec v1 unless it is set)
    older = env_fact("SGLANG_ENABLE_SPEC_V2", "0.5.9")
    assert older is not None and older.read and older.default is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("1", True),
        ("YES", True),
        ("y", True),
        ("False", False),
        ("0", False),
        ("No", False),
        ("N", False),
        (None, True),
    ],
)
def test_env_bool_accepted_values(value: str | None, expected: bool) -> None:
    assert parse_env_bool("SGLANG_ENABLE_SPEC_V2", value, True) == (expected, None)


@pytest.mark.parametrize("value", ["on", "2", " 1", "", "enabled"])
def test_env_bool_other_values_warn_and_use_the_default(value: str) -> None:
    used, warning = parse_env_bool("SGLANG_ENABLE_SPEC_V2", value, True)
    assert used is True
    assert warning == (
        f'Invalid value for SGLANG_ENABLE_SPEC_V2: "{value.lower()}" is not a valid boolean '
        'value, using default "True"'
    )


def test_effective_env_per_version() -> None:
    assert effective_env("SGLANG_ENABLE_SPEC_V2", "0", "0.5.11") == (False, None)
    assert effective_env("SGLANG_ENABLE_SPEC_V2", None, "0.5.11") == (True, None)
    used, note = effective_env("SGLANG_ENABLE_SPEC_V2", "1", "0.5.23")
    assert used is None and note is not None and "no effect" in note
    assert effective_env("CUDA_VISIBLE_DEVICES", "0,1", "0.5.11") == ("0,1", None)


def test_env_bool_matches_sglang_envbool_semantics() -> None:
    """Cross-check against a transcription of 0.5.11 `EnvBool.parse` + `EnvField.get`."""

    def sglang_get(value: str | None, default: bool) -> bool:
        if value is None:
            return default
        lowered = value.lower()
        if lowered in ["true", "1", "yes", "y"]:
            return True
        if lowered in ["false", "0", "no", "n"]:
            return False
        return default  # SGLang warns and falls back

    for value in [None, "TRUE", "Y", "nO", "x", "", "0 ", "yes"]:
        assert parse_env_bool("X", value, True)[0] == sglang_get(value, True)
        assert parse_env_bool("X", value, False)[0] == sglang_get(value, False)


def test_env_facts_name_their_declaration_line_from_the_dump() -> None:
    """Kind, default and `environ.py` line come from each release's dump, none hand-copied."""
    from wizard.sglang.versions import env_table, supported_versions

    # The reference's lines (sglang-spec-rules.md) agree with what the dump derived by `ast`.
    v11 = env_fact("SGLANG_ENABLE_SPEC_V2", "0.5.11")
    assert v11 is not None and v11.source == "sglang/srt/environ.py:459"
    pp = env_fact("SGLANG_ENABLE_PP_SPEC", "0.5.23")
    assert pp is not None and pp.source == "sglang/srt/environ.py:1557"
    assert pp.meaning  # the explanation is ours; the facts are the dump's
    for version in supported_versions():
        table = env_table(version)
        assert table, version
        # releases with environ.py: its lines; 0.5.1-0.5.2 have none and read os.environ where
        # they need it (the dump scans those reads): a file:line of the package all the same
        declared = [f for f in table.values() if (f.source or "").startswith("sglang/srt/environ.py:")]
        scanned = [f for f in table.values() if re.fullmatch(r"sglang/srt/\S+\.py:\d+", f.source or "")]
        assert len(declared) == len(table) or len(scanned) == len(table), version


def test_env_facts_from_the_dumps() -> None:
    fact = env_fact("SGLANG_ENABLE_PP_SPEC", "0.5.23")
    assert fact is not None and fact.read and fact.default is False
    unknown = env_fact("SGLANG_DOES_NOT_EXIST_X", "0.5.11")
    assert unknown is not None and not unknown.read
    assert env_fact("HF_HOME", "0.5.11") is None


def test_effective_env_numbers_like_sglang() -> None:
    from wizard.sglang.versions import env_table

    ints = [f for f in env_table("0.5.11").values() if f.kind == "EnvInt"]
    assert ints
    name, default = ints[0].name, ints[0].default
    assert effective_env(name, "7", "0.5.11") == (7, None)
    used, warning = effective_env(name, "seven", "0.5.11")
    assert used == default
    assert warning == (
        f'Invalid value for {name}: "seven" is not a valid integer value, using default "{default}"'
    )
