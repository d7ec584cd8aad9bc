"""Find a rule's raising statement in one SGLang release's source, by the statement itself.

Line numbers rot with every release; statements mostly do not. An *anchor* is a statement as it
stands in a release we know (its kind, its text with the receiver names stripped, and the function
it sits in). `locate` parses the argument code of another release with `ast` and returns where the
same statement stands there: an exact text match first (the enclosing function breaks ties), then
the most similar statement of the same kind (difflib ratio >= `FUZZY_MIN`), reported as fuzzy so a
reviewer reads it. Stdlib only: it runs on a plain source tree (an unpacked wheel or a venv).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Where SGLang's argument handling lives (relative to the folder that holds `sglang/`).
ARGUMENT_CODE: tuple[str, ...] = (
    "sglang/srt/server_args.py",
    "sglang/srt/arg_groups",
    "sglang/srt/kernel_plugins",  # the kernel plugins' resolution hooks (run_hook, 0.5.23)
    "sglang/srt/speculative/spec_info.py",
    "sglang/srt/speculative/adaptive_spec_params.py",
    "sglang/srt/configs/model_config.py",
    "sglang/srt/utils/hf_transformers_utils.py",  # loading the model's config.json
    "sglang/srt/utils/hf_transformers/config.py",  # (its later place)
    "sglang/srt/hf_transformers_utils.py",  # (its older place)
)
# Modules outside the argument code whose small pure helpers its checks call
# (`derive_attn_tp_size(tp_size=..., ...)`): parsed for the generic sites' reader to inline
# (`wizard.conformance.arg_sites`), never walked, located in or counted.
HELPER_CODE: tuple[str, ...] = (
    "sglang/srt/runtime_context.py",
)
FUZZY_MIN = 0.82
_RECEIVERS = re.compile(r"\b(?:self|cfg|view|server_args|args|sa)\.")
_KINDS = (ast.Assert, ast.Raise, ast.If, ast.Assign, ast.Expr, ast.FunctionDef, ast.AugAssign)


@dataclass(frozen=True)
class Anchor:
    """A statement as it stands in a known release."""

    kind: str  # "Assert", "Raise", "If", ...
    text: str  # normalised statement text (see `statement_text`)
    function: str | None  # the enclosing function's name
    exact: bool = False  # strict: same text in the same function, never fuzzy

    def to_json(self) -> dict[str, object]:
        """JSON form (the committed anchors file)."""
        out: dict[str, object] = {"kind": self.kind, "text": self.text, "function": self.function}
        if self.exact:
            out["exact"] = True
        return out


@dataclass(frozen=True)
class Located:
    """Where an anchor's statement stands in one release."""

    where: str  # "sglang/srt/server_args.py:3521"
    kind: str
    function: str | None
    source: str  # the statement's first source line, stripped (what a bare assert shows)
    bare: bool  # an `assert` without message
    exception: str | None  # AssertionError / the raised class / None
    match: str  # "exact" or "fuzzy 0.91"
    # A device the statement only runs on (`if get_platform().is_npu:` around it), else None.
    platform: str | None = None


@dataclass(frozen=True)
class _Stmt:
    path: str
    node: ast.stmt
    function: str | None
    text: str
    lines: list[str]


def statement_text(node: ast.stmt) -> str:
    """The statement's identity: `assert`/`raise`/`if` head text without receiver names."""
    if isinstance(node, ast.Assert):
        body = ast.unparse(node.test) + (", " + ast.unparse(node.msg) if node.msg else "")
    elif isinstance(node, ast.Raise):
        body = ast.unparse(node.exc) if node.exc else "raise"
    elif isinstance(node, ast.If):
        body = ast.unparse(node.test)
    elif isinstance(node, ast.FunctionDef):
        body = node.name
    else:
        body = ast.unparse(node).split("\n", 1)[0]
    return _RECEIVERS.sub("", " ".join(body.split()))


def _walk(tree: ast.AST, function: str | None = None) -> Iterator[tuple[ast.stmt, str | None]]:
    for child in ast.iter_child_nodes(tree):
        inner = function
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = child.name
        if isinstance(child, _KINDS):
            yield child, function if isinstance(child, ast.FunctionDef) else inner
        yield from _walk(child, inner)


_OTHER_PLATFORMS = ("npu", "hip", "xpu", "cpu", "mps", "hpu", "musa")


def _platform_probe(test: ast.expr) -> str | None:
    """`x.is_npu`, `is_npu()`, `_is_npu`: the non-CUDA platform an `if` test asks for."""
    if isinstance(test, ast.Call) and not test.args:
        test = test.func
    name = test.attr if isinstance(test, ast.Attribute) else (
        test.id if isinstance(test, ast.Name) else "")
    platform = name.lstrip("_").removeprefix("is_")
    return platform if platform in _OTHER_PLATFORMS else None


def _platform_of(tree: ast.AST, target: ast.stmt) -> str | None:
    """The platform of the innermost `if <platform probe>:` whose body holds `target`."""
    found: str | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        platform = _platform_probe(node.test)
        if platform and any(target is inner for stmt in node.body for inner in ast.walk(stmt)):
            found = platform
    return found


def _jump_compares(test: ast.expr) -> Iterator[ast.Compare]:
    """The comparisons CPython compiles as conditional jumps of an assert's test, in order."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _jump_compares(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _jump_compares(test.operand)
    elif isinstance(test, ast.Compare):
        yield test


def _assert_line(node: ast.Assert) -> int:
    """The line a failing assert's traceback names (CPython 3.11, the conformance venvs').

    The raising instructions keep the location last set while compiling the test's jumps: a
    comparison sets it (and keeps it), a plain name or attribute does not. So it is the line of
    the test's last comparison (whichever operand was false), else the `assert` line itself.
    """
    compares = list(_jump_compares(node.test))
    return compares[-1].lineno if compares else node.lineno


class SourceTree:
    """The parsed argument code of one release (root = the folder holding `sglang/`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.statements: list[_Stmt] = []
        self.files: dict[str, str] = {}
        self.trees: dict[str, ast.Module] = {}
        self.helpers: dict[str, ast.Module] = {}  # HELPER_CODE's modules, by path
        for entry in HELPER_CODE:
            path = root / entry
            if path.is_file():
                try:
                    self.helpers[entry] = ast.parse(path.read_text(encoding="utf-8",
                                                                   errors="replace"))
                except SyntaxError:
                    continue
        for entry in ARGUMENT_CODE:
            base = root / entry
            paths = sorted(base.rglob("*.py")) if base.is_dir() else [base]
            for path in paths:
                if not path.is_file():
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
                rel = path.relative_to(root).as_posix()
                self.files[rel] = text
                try:
                    tree = ast.parse(text)
                except SyntaxError:
                    continue
                self.trees[rel] = tree
                lines = text.splitlines()
                for node, function in _walk(tree):
                    self.statements.append(
                        _Stmt(rel, node, function, statement_text(node), lines))

    def exists(self, rel: str) -> bool:
        """Whether a file of the argument code exists in this release."""
        return rel in self.files

    def anchor_at(self, where: str) -> Anchor | None:
        """The anchor of the innermost statement at `file:line` (used to bootstrap anchors)."""
        rel, _, line_text = where.rpartition(":")
        line = int(line_text)
        best: _Stmt | None = None
        for stmt in self.statements:
            node = stmt.node
            if stmt.path != rel or not node.lineno <= line <= (node.end_lineno or node.lineno):
                continue
            if best is None or (node.end_lineno or 0) - node.lineno <= (
                (best.node.end_lineno or 0) - best.node.lineno
            ):
                best = stmt
        if best is None:
            return None
        return Anchor(type(best.node).__name__, best.text, best.function)

    def locate(self, anchors: list[Anchor]) -> Located | None:
        """Where the first matching anchor's statement stands here (exact, then fuzzy)."""
        for anchor in anchors:
            exact = [s for s in self.statements
                     if type(s.node).__name__ == anchor.kind and s.text == anchor.text]
            same = [s for s in exact if s.function == anchor.function]
            if anchor.exact:  # a strict anchor: the same text in the same function, or nothing
                exact = same
            if exact:
                return self._located((same or exact)[0], "exact")
        best: tuple[float, _Stmt] | None = None
        for anchor in anchors:
            if anchor.exact:
                continue
            for stmt in self.statements:
                if type(stmt.node).__name__ != anchor.kind:
                    continue
                matcher = difflib.SequenceMatcher(None, anchor.text, stmt.text, autojunk=False)
                if matcher.real_quick_ratio() < FUZZY_MIN or matcher.quick_ratio() < FUZZY_MIN:
                    continue
                ratio = matcher.ratio() + (0.02 if stmt.function == anchor.function else 0.0)
                if ratio >= FUZZY_MIN and (best is None or ratio > best[0]):
                    best = (ratio, stmt)
        if best is None:
            return None
        return self._located(best[1], f"fuzzy {min(best[0], 1.0):.2f}")

    def _located(self, stmt: _Stmt, match: str) -> Located:
        node = stmt.node
        exception: str | None = None
        bare = False
        if isinstance(node, ast.Assert):
            exception, bare = "AssertionError", node.msg is None
        elif isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            exception = ast.unparse(target).rsplit(".", 1)[-1]
        source = stmt.lines[node.lineno - 1].strip() if node.lineno <= len(stmt.lines) else ""
        # A traceback names the line Python reports for the raising instruction: for an assert
        # see `_assert_line`, for an `if` whose comparison crashes (a TypeError on None) the
        # first comparison's line, for a raise its first line.
        line = node.lineno
        if isinstance(node, ast.Assert):
            line = _assert_line(node)
        elif isinstance(node, ast.If):
            compare = next((n for n in ast.walk(node.test) if isinstance(n, ast.Compare)), None)
            line = compare.lineno if compare is not None else node.lineno
        return Located(f"{stmt.path}:{line}", type(node).__name__, stmt.function,
                       source, bare, exception, match, _platform_of(self.trees[stmt.path], node))

    def raise_sites(self) -> list[tuple[str, str]]:
        """Every `assert` and `raise` of the argument code: (file:line, statement text)."""
        return [(f"{s.path}:{_assert_line(s.node) if isinstance(s.node, ast.Assert) else s.node.lineno}",
                 s.text) for s in self.statements if isinstance(s.node, ast.Assert | ast.Raise)]
