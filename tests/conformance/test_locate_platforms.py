"""`locate` names the line a failing assert's traceback names (checked against this Python)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from wizard.conformance.locate import Anchor, SourceTree

# Each function's assert fails; v.a/v.c are False, v.b is True, v.n is None, v.s is "x".
ASSERTS = '''
def attribute_only(v):
    assert (
        v.a
    ), "m1"


def compare_only(v):
    assert (
        v.s == "y"
    ), "m2"


def and_with_failing_attribute_last(v):
    assert (
        v.b
        and v.n is None
        and v.a
    ), "m3"


def and_with_failing_compare_first(v):
    assert (
        v.s.upper() == "EAGLE"
        and not v.c
    ), "m4"


def and_of_attributes(v):
    assert (
        v.b
        and v.a
    ), "m5"


def negated(v):
    assert not (
        v.b
        and v.n
        is None
    ), "m6"
'''


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the conformance venvs' CPython")
def test_assert_lines_match_the_traceback(tmp_path: Path) -> None:
    folder = tmp_path / "sglang" / "srt"
    folder.mkdir(parents=True)
    (folder / "server_args.py").write_text(ASSERTS)
    namespace: dict[str, object] = {}
    exec(compile(ASSERTS, "server_args.py", "exec"), namespace)
    values = type("V", (), {"a": False, "b": True, "c": False, "n": None, "s": "x"})()
    tree = SourceTree(tmp_path)
    asserts = [s for s in tree.statements if isinstance(s.node, ast.Assert)]
    assert len(asserts) == 6
    for stmt in asserts:
        with pytest.raises(AssertionError) as failure:
            namespace[str(stmt.function)](values)  # type: ignore[operator]
        traceback_line = failure.tb.tb_next.tb_lineno  # type: ignore[union-attr]
        located = tree.locate([Anchor("Assert", stmt.text, stmt.function)])
        assert located is not None
        assert located.where == f"sglang/srt/server_args.py:{traceback_line}", stmt.function


def test_a_statement_under_a_platform_probe_names_that_platform(tmp_path: Path) -> None:
    folder = tmp_path / "sglang" / "srt"
    folder.mkdir(parents=True)
    (folder / "server_args.py").write_text(
        "def check(cfg):\n"
        "    if get_platform().is_npu:\n"
        "        assert cfg.a, 'npu only'\n"
        "    else:\n"
        "        assert cfg.b, 'elsewhere'\n"
        "    if _is_hip:\n"
        "        raise ValueError('hip only')\n"
    )
    tree = SourceTree(tmp_path)
    platforms = {
        text: located.platform
        for text, kind in (("a, 'npu only'", "Assert"), ("b, 'elsewhere'", "Assert"),
                           ("ValueError('hip only')", "Raise"))
        if (located := tree.locate([Anchor(kind, text, "check")])) is not None
    }
    assert platforms == {"a, 'npu only'": "npu", "b, 'elsewhere'": None,
                         "ValueError('hip only')": "hip"}
