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
