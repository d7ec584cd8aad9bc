"""Release-data probes for what an attention backend forces on the other attention flags: the page
sizes its kernels take (`if <backend typed>: if page_size not in [...]: page_size = N`) and the
prefill backend a decode-only backend fills in. Stdlib only; they read a release's source tree
(`locate.SourceTree`) in the order its statements stand.
"""

from __future__ import annotations

import ast
from typing import Any

from wizard.rules.arg_sites import RESOLVED_FIELDS

# The flags an `if` names a backend by (`view.attention_backend == "flashmla" or ...`).
BACKEND_FIELDS = (
    "attention_backend",
    "decode_attention_backend",
    "prefill_attention_backend",
    "speculative_draft_attention_backend",
)


def field_name(node: ast.AST) -> str | None:
    """`self.name` / `view.name` / `name` -> "name"."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def backend_test(test: ast.expr) -> tuple[str, list[str]] | None:
    """`X.f == "b" or X.g == "b" ...` over the attention-backend flags: ("b", ["f", "g"]); None
    for any other condition (another comparison, two backends, a platform check)."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    backend: str | None = None
    fields: list[str] = []
    for part in parts:
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1
                and isinstance(part.ops[0], ast.Eq)):
            return None
        name, right = field_name(part.left), part.comparators[0]
        if name not in BACKEND_FIELDS or not (isinstance(right, ast.Constant)
                                              and isinstance(right.value, str)):
            return None
        if backend is not None and right.value != backend:
            return None
        backend = right.value
        fields.append(name)
    return (backend, fields) if backend is not None else None


def _int_const(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(
            node.value, bool):
        return node.value
    return None


def _page_assign(stmt: ast.stmt) -> int | None:
    """N for `page_size = N` / `self.page_size = N`."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and field_name(
            stmt.targets[0]) == "page_size":
        return _int_const(stmt.value)
    return None


def _kept_pages(test: ast.expr) -> list[int] | None:
    """The pages `page_size not in [a, b]` / `page_size != a` keeps; None for another test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and field_name(test.left) == "page_size"):
        return None
    right = test.comparators[0]
    if isinstance(test.ops[0], ast.NotIn) and isinstance(right, ast.List | ast.Tuple | ast.Set):
        values = [_int_const(e) for e in right.elts]
        return sorted(v for v in values if v is not None) if None not in values else None
    if isinstance(test.ops[0], ast.NotEq) and (value := _int_const(right)) is not None:
        return [value]
    return None


def _page_snap(body: list[ast.stmt]) -> tuple[list[int] | None, int] | None:
    """(pages kept or None for always, the page written) for a backend block's own statements."""
    for stmt in body:
        if (value := _page_assign(stmt)) is not None:
            return None, value
        if isinstance(stmt, ast.If) and not stmt.orelse and (kept := _kept_pages(stmt.test)):
            value = next((v for v in map(_page_assign, stmt.body) if v is not None), None)
            if value is not None:
                return kept, value
    return None


def attention_page_rules(tree: Any) -> list[list[Any]]:
    """Every page-size snap the release's argument code makes for one attention backend, in
    source order: `[backend, [the flags it is named by], pages kept (None: always), page]`.
    SGLang chains them on one page size (the first flashmla `page_size = 64`, a later
    `if page_size not in [32, 64]: page_size = 64`)."""
    rules: list[list[Any]] = []
    for _rel, module in sorted(tree.trees.items()):
        found = []
        for node in ast.walk(module):
            if isinstance(node, ast.If) and (named := backend_test(node.test)) is not None:
                snap = _page_snap(node.body)
                if snap is not None:
                    found.append((node.lineno, [named[0], named[1], snap[0], snap[1]]))
        rules.extend(rule for _line, rule in sorted(found, key=lambda item: item[0]))
    return rules


def _prefill_default(stmt: ast.stmt) -> str | None:
    """"b" for `if X.prefill_attention_backend is None:` followed by `X.prefill_attention_backend
    = "b"` or `return {"prefill_attention_backend": "b"}`."""
    test = stmt.test if isinstance(stmt, ast.If) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Is) and field_name(test.left) == "prefill_attention_backend"
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return None
    assert isinstance(stmt, ast.If)
    for inner in stmt.body:
        if (isinstance(inner, ast.Assign) and len(inner.targets) == 1
                and field_name(inner.targets[0]) == "prefill_attention_backend"
                and isinstance(inner.value, ast.Constant) and isinstance(inner.value.value, str)):
            return inner.value.value
        if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Dict):
            for key, value in zip(inner.value.keys, inner.value.values, strict=True):
                if (isinstance(key, ast.Constant) and key.value == "prefill_attention_backend"
                        and isinstance(value, ast.Constant) and isinstance(value.value, str)):
                    return value.value
    return None


def _guarded_backend(function: ast.FunctionDef) -> tuple[str, list[str]] | None:
    """The backend of a function that starts `if not (<backend typed>): return {}` (a resolution
    step that only acts for that backend)."""
    for stmt in function.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        if (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.UnaryOp)
                and isinstance(stmt.test.op, ast.Not)
                and all(isinstance(s, ast.Return) for s in stmt.body)):
            return backend_test(stmt.test.operand)
        return None
    return None


def backend_prefill_defaults(tree: Any) -> dict[str, list[Any]]:
    """The prefill backend a (decode-only) backend fills in when none is typed: backend ->
    [the flags it is named by, the prefill backend], from `if prefill_attention_backend is None`
    inside that backend's block or in a step guarded by it."""
    out: dict[str, list[Any]] = {}
    for _rel, module in sorted(tree.trees.items()):
        for node in ast.walk(module):
            if isinstance(node, ast.If):
                named = backend_test(node.test)
            elif isinstance(node, ast.FunctionDef):
                named = _guarded_backend(node)
            else:
                continue
            if named is None:
                continue
            for stmt in node.body:
                if (value := _prefill_default(stmt)) is not None:
                    out.setdefault(named[0], [named[1], value])
    return out


# Fields other traits carry for a backend block (`attention_page_rules`,
# `backend_prefill_defaults`).
_OWN_TRAITS = frozenset({"page_size", "prefill_attention_backend"})


def attention_backend_writes(tree: Any) -> list[list[Any]]:
    """The constants a backend's block writes to fields the engine resolves itself (a generic
    write of such a field over another resolved field is not replayed), in source order:
    `[backend, [the flags it is named by], field, value]` (`dual_chunk_flash_attn` turns the
    radix cache off). Writes of other fields are replayed writes already."""
    out: list[list[Any]] = []
    for _rel, module in sorted(tree.trees.items()):
        found = []
        # blocks at a function's top level only: a block inside a model's or a platform's
        # branch writes for that model alone (the traits of those branches carry them)
        blocks = [stmt for fn in ast.walk(module) if isinstance(fn, ast.FunctionDef)
                  for stmt in fn.body if isinstance(stmt, ast.If)]
        for node in blocks:
            if (named := backend_test(node.test)) is None:
                continue
            for stmt in node.body:
                for name, value in _constant_writes(stmt):
                    if name in RESOLVED_FIELDS and name not in _OWN_TRAITS:
                        found.append((stmt.lineno, [named[0], named[1], name, value]))
        out.extend(entry for _line, entry in sorted(found, key=lambda item: item[0]))
    return out


def _constant_writes(stmt: ast.stmt) -> list[tuple[str, Any]]:
    """(field, constant) for `self.field = c` and for each `field=c` keyword of
    `declare_resolution(server_args, "<step>", field=c, ...)` (how the pipeline releases write)."""
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.value, ast.Constant)):
        name = field_name(stmt.targets[0])
        return [(name, stmt.value.value)] if name is not None else []
    call = declaration(stmt)
    return list(constant_keywords(call).items()) if call is not None else []


def declaration(stmt: ast.stmt) -> ast.Call | None:
    """The call of a `declare_resolution(server_args, "<step>", field=value, ...)` statement."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "declare_resolution"):
        return call
    return None


def constant_keywords(call: ast.Call) -> dict[str, Any]:
    """The `field=<constant>` keywords of a call."""
    return {kw.arg: kw.value.value for kw in call.keywords
            if kw.arg is not None and isinstance(kw.value, ast.Constant)}
