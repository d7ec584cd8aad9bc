"""The compiled-code cache: a hit gives the same code, a damaged or unwritable cache only costs
the compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.codecache import compile_cached


def _run(code: object) -> object:
    scope: dict[str, object] = {}
    exec(code, scope)  # type: ignore[arg-type]
    return scope["answer"]


def test_a_second_compile_reads_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(tmp_path))
    first = compile_cached("answer = 6 * 7\n", "<test>")
    files = list((tmp_path / "code").iterdir())
    assert len(files) == 1 and _run(first) == 42
    assert _run(compile_cached("answer = 6 * 7\n", "<test>")) == 42
    assert _run(compile_cached("answer = 6 * 8\n", "<test>")) == 48  # other source, other entry
    assert len(list((tmp_path / "code").iterdir())) == 2


def test_a_damaged_or_unwritable_cache_only_costs_the_compile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(tmp_path))
    compile_cached("answer = 1\n", "<test>")
    (entry,) = (tmp_path / "code").iterdir()
    entry.write_bytes(b"not marshal data")
    assert _run(compile_cached("answer = 1\n", "<test>")) == 1
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(blocked))
    assert _run(compile_cached("answer = 2\n", "<test>")) == 2


def test_a_release_s_placed_code_is_kept_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`place` stores the release's generated code with its constants under the release file's
    digest; a second process (here: a second `place`) reads it back and answers alike."""
    from wizard.rules import arg_sites
    from wizard.rules.engine import _steps
    from wizard.rules.pipeline import defaults_for
    from wizard.sglang.fields import canonical_dest
    from wizard.sglang.releases import load_release

    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(tmp_path))
    release = load_release("0.5.23")
    steps = _steps(release)[1]
    first = arg_sites.place(release, steps, canonical_dest)
    stored = sorted((tmp_path / "code").iterdir())
    assert stored
    compiled = []
    monkeypatch.setattr(arg_sites, "compile", lambda *a: compiled.append(a), raising=False)
    second = arg_sites.place(release, steps, canonical_dest)
    assert compiled == [] and sorted((tmp_path / "code").iterdir()) == stored
    values = {**defaults_for(release), "enable_dp_attention": True, "tp_size": 3, "dp_size": 2}
    for position, run in enumerate(first.runs):
        other = second.runs[position]
        assert (run is None) == (other is None)
        if run is not None and other is not None:
            assert run(values, {}, frozenset({"is_cuda"}), None, set(), None, 8192, {}) == other(
                values, {}, frozenset({"is_cuda"}), None, set(), None, 8192, {})
    assert first.compiled.holding(values, frozenset({"is_cuda"})) == second.compiled.holding(
        values, frozenset({"is_cuda"}))


def test_a_release_file_is_parsed_once_and_a_damaged_entry_reparsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`load_release` keeps the parsed release file under its digest (a second process reads
    it back without json); a damaged or foreign entry is parsed again, never trusted."""
    import json

    from wizard.sglang import releases

    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(tmp_path))
    first = releases.load_release.__wrapped__("0.5.11")
    (entry,) = (tmp_path / "code").iterdir()
    parsed = []
    real = json.loads
    monkeypatch.setattr(releases.json, "loads", lambda text: parsed.append(1) or real(text))
    second = releases.load_release.__wrapped__("0.5.11")
    assert parsed == [] and second == first
    entry.write_bytes(b"not marshal data")
    assert releases.load_release.__wrapped__("0.5.11") == first and parsed == [1]
    import marshal

    entry.write_bytes(marshal.dumps({"name": "0.5.23"}))  # another release's data: not trusted
    assert releases.load_release.__wrapped__("0.5.11") == first and parsed == [1, 1]
