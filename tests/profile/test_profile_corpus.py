"""Every broken profile in `corpus/` fails with one located, plain-language `ProfileError`.

`corpus/expected.toml` holds, per file, the dotted key, the line, a phrase of the message and a
phrase of what is allowed; this test reads it and loads each file through `load_profile`.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from wizard.profile import load_profile, profile_from_toml
from wizard.profile_problems import ProfileError

CORPUS = Path(__file__).parent / "corpus"
EXPECTED: dict[str, dict[str, Any]] = tomllib.loads((CORPUS / "expected.toml").read_text("utf-8"))
BROKEN = sorted(p.name for p in CORPUS.glob("*.toml") if p.name != "expected.toml")

# pydantic's own wording must never reach the user
JARGON = re.compile(
    r"Input should|valid dictionary|instance of|<class|pydantic|Value error|\[type=|"
    r"errors\.pydantic\.dev|model_type|Optional\[|Annotated\["
)


def test_corpus_is_large_and_fully_described() -> None:
    assert len(BROKEN) >= 30
    assert set(EXPECTED) == set(BROKEN), "every corpus file needs an entry in expected.toml"
    for name, entry in EXPECTED.items():
        assert set(entry) == {"why", "key", "line", "says", "allowed"}, name
    # each file makes a different mistake
    assert len({e["why"] for e in EXPECTED.values()}) == len(EXPECTED)


@pytest.mark.parametrize("name", BROKEN)
def test_broken_profile_is_located(name: str) -> None:
    expected = EXPECTED[name]
    path = CORPUS / name
    with pytest.raises(ProfileError) as caught:  # never another exception type
        load_profile(path)
    err = caught.value
    text = str(err)

    assert err.file == str(path)
    assert err.problems, "a ProfileError always lists at least one problem"
    for line in text.splitlines():
        assert line.startswith(str(path)), f"every rendered line names the file: {line!r}"

    key = expected["key"] or None
    matching = [p for p in err.problems if p.key == key]
    assert matching, f"no problem for key {key!r}; got {[p.key for p in err.problems]}"
    problem = matching[0]
    assert problem.line == (expected["line"] or None)
    assert expected["says"] in problem.message
    assert problem.allowed, "says what is allowed"
    assert expected["allowed"] in problem.allowed

    rendered = problem.render(str(path))
    where = f"{path}:{problem.line}:" if problem.line else f"{path}:"
    assert rendered.startswith(where)
    if key:
        assert f" {key}: " in rendered
    assert f"(allowed: {problem.allowed})" in rendered
    assert not JARGON.search(text), text


@pytest.mark.parametrize("name", [n for n in BROKEN if (CORPUS / n).is_file()])
def test_text_and_file_give_the_same_problems(name: str) -> None:
    """`profile_from_toml` on the text reports what `load_profile` reports for the file."""
    raw = (CORPUS / name).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: only the file loader sees bytes")
    with pytest.raises(ProfileError) as from_text:
        profile_from_toml(text, "x.toml")
    with pytest.raises(ProfileError) as from_file:
        load_profile(CORPUS / name)
    assert from_text.value.problems == from_file.value.problems


def test_missing_file_names_it_and_says_what_to_give(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ProfileError) as caught:
        load_profile(missing)
    assert str(caught.value).startswith(f"{missing}: file not found")
    assert "sglang-wizard profiles" in (caught.value.first.allowed or "")


def test_unreadable_file_is_a_profile_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "locked.toml"
    path.write_text("schema_version = 1\n")

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)  # as root, chmod 0 would not stop reads
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert str(caught.value) == f"{path}: cannot read: Permission denied"


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbfschema_version = 1\n[model]\npath = '/m'\n")
    assert load_profile(path).model.path == "/m"


def test_every_problem_is_reported_not_only_the_first() -> None:
    text = (
        "schema_version = 1\n"
        "[model]\n"
        'path = "/m"\n'
        "[parallel]\n"
        'tp = "2"\n'
        "[server]\n"
        "port = 0\n"
        "[speculative]\n"
        "topk = 1\n"
    )
    with pytest.raises(ProfileError) as caught:
        profile_from_toml(text, "many.toml")
    located = {(p.key, p.line) for p in caught.value.problems}
    assert located == {("parallel.tp", 5), ("server.port", 7), ("speculative.topk", 9)}
    assert len(str(caught.value).splitlines()) == 3


def test_union_member_tags_never_leak_into_keys() -> None:
    """pydantic reports `memory.mem_fraction_static.float` and `.int`: the user sees one key."""
    text = 'schema_version = 1\n[model]\npath = "/m"\n[memory]\nmem_fraction_static = "0.9"\n'
    with pytest.raises(ProfileError) as caught:
        profile_from_toml(text)
    assert [p.key for p in caught.value.problems] == ["memory.mem_fraction_static"]
    problem = caught.value.first
    assert problem.message == (
        'expected a number greater than 0 and at most 1, got "0.9" (a string: remove the quotes)'
    )
    assert problem.line == 5


def test_deeply_nested_toml_is_a_profile_error() -> None:
    with pytest.raises(ProfileError) as caught:
        profile_from_toml("a = " + "[" * 3000 + "]" * 3000)
    assert "nested too deeply" in caught.value.first.message


def test_syntax_error_at_end_of_document_has_a_line() -> None:
    text = 'schema_version = 1\n[model]\npath = "/m"\nextra = """never closed\n'
    with pytest.raises(ProfileError) as caught:
        profile_from_toml(text)
    assert caught.value.first.line is not None
    assert caught.value.first.message.startswith("not valid TOML")
