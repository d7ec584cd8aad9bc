"""The locator names the line Python's traceback names, for every shape of assert SGLang writes."""

from __future__ import annotations

import ast
import textwrap
import traceback
from pathlib import Path

import pytest

from wizard.conformance.locate import Anchor, SourceTree

# (source of the assert, values that make it fail); `v` holds the attributes.
SHAPES = [
    ("assert (\n    v.a\n    and v.s is None\n    and not v.c\n), 'm'", {"a": True, "s": "x", "c": False}),
    ("assert (\n    v.c\n), 'm'", {"c": False}),
    ("assert (\n    v.a\n    and v.c\n), 'm'", {"a": True, "c": False}),
    ("assert (\n    v.c\n    and v.s is None\n), 'm'", {"c": False, "s": None}),
    ("assert (\n    v.s is None\n    and v.a\n), 'm'", {"s": "x", "a": True}),
    ("assert v.a and (\n    v.s is None\n), 'm'", {"a": True, "s": "x"}),
    ("assert not (\n    v.a\n    and v.n != 1\n    and not v.c\n), 'm'", {"a": True, "n": 2, "c": False}),
    ("assert v.n in (\n    1,\n    2,\n)", {"n": 3}),
    ("assert (\n    v.n * v.m\n) % v.k == 0, 'm'", {"n": 1, "m": 1, "k": 2}),
]


@pytest.mark.parametrize(("source", "values"), SHAPES)
def test_assert_line_is_the_line_python_reports(source: str, values: dict[str, object],
                                                tmp_path: Path) -> None:
    body = "def check(v):\n" + textwrap.indent(source, "    ") + "\n"
    root = tmp_path / "root"
    (root / "sglang" / "srt").mkdir(parents=True)
    path = root / "sglang" / "srt" / "server_args.py"
    path.write_text("# padding\n" * 7 + body)
    namespace: dict[str, object] = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    holder = type("V", (), values)()
    with pytest.raises(AssertionError) as raised:
        namespace["check"](holder)  # type: ignore[operator]
    reported = traceback.extract_tb(raised.value.__traceback__)[-1].lineno
    tree = SourceTree(root)
    node = next(n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Assert))
    anchor = Anchor("Assert", tree.anchor_at(f"sglang/srt/server_args.py:{node.lineno}").text,
                    "check")
    located = tree.locate([anchor])
    assert located is not None
    assert located.where == f"sglang/srt/server_args.py:{reported}"
