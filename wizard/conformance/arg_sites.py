"""The generic rule family's sites: every `raise` / `assert` of a release's argument code whose
condition is a pure expression over flags no resolution step has rewritten by then.

`add-release` calls `extract_sites` on the release's source (stdlib `ast` only). The launch path
is walked in call order from SGLang's entry points (`ServerArgs.__post_init__`, `resolve_once`,
`check_server_args`): statements in source order, a call followed into every argument-code
function of that name (a class name into its `__init__`), each function once. Every statement
gets a sequence number; a site's number is its order on the launch path, so the first error is
the first site that holds.

A site is kept when the whole path to it is known:

* the `if` tests around it in its function and around the call of every function on the way
  (taken or not taken), the earlier `return`s of those functions (not taken), and for an
  `assert` its negated test, are all *pure*: `self.<flag>` (`server_args.` / `cfg.` / `view.`
  in the hooks) of a flag of the release's table, literals and literal tuples, `and` / `or` /
  `not`, comparisons, `in`, `is None`, truthiness, `.lower()` / `.upper()` of a flag, and the
  platform probes `is_cuda()` / `is_hip()` / `is_npu()` ... and FlashInfer's presence
  (`is_flashinfer_available()`, `get_platform().has_flashinfer`: CUDA only), answered by the
  GPU kind, and environment reads (`envs.X.get()`, `get_bool_env_var("X")`, `os.environ`...,
  `_Reader.env_read`: parsed as the release's own `environ.py` parses them, answered by the
  launch's environment) of a variable the argument code does not set before;
* no flag it reads is written before it: an assignment `<x>.<flag> = ...`, `setattr(x,
  "<flag>", ...)`, a `"<flag>"` dict key or subscript, a `<flag>=` keyword of a call, anywhere
  earlier on the path or in any argument-code function the walk does not reach (the model
  override registries are called by reference);
* it is not inside a loop or a `try`, in a function called from more than one place, or already
  a hand-written rule's located statement (`sites`: de-duplicated by `file:line`);
* it does not hold on the release's defaults alone (it would refuse every launch: a guard the
  walk cannot see).

The condition is stored as a small JSON expression tree (`wizard.rules.arg_sites` compiles it),
the message as its literal parts with the flags' placeholders (`{"flag": ..., "conv": "r"}`).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from wizard.conformance.env_reads import (
    ANY,
    UTILS_FILES,
    EnvTable,
    EnvUnreadable,
    env_table,
    env_written,
)
from wizard.conformance.locate import SourceTree, _assert_line
from wizard.rules.arg_sites import (
    MODEL_FACTS,
    PLATFORM_PROBES,
    RESOLVED_FIELDS,
    compile_condition,
)
from wizard.sglang.fields import SERVER_ARGS_FIELDS, canonical_dest

RECEIVERS = frozenset({"self", "cfg", "server_args", "args", "sa", "view"})
STR_METHODS = frozenset({"lower", "upper", "strip"})
STR_TESTS = frozenset({"startswith", "endswith"})  # with one literal argument
ENTRY_POINTS = ("__post_init__", "resolve_once", "check_server_args")
_WRITERS = frozenset({"replace", "update", "dict", "setdefault", "set", "_replace"})
_LOGGING = frozenset({"warning", "warn", "info", "debug", "error", "exception", "critical"})


# An override's write limited to some architectures and read under a condition: (its
# architectures, the condition tree as JSON, the defaults of the flags it reads as JSON)
Scope = tuple[tuple[str, ...], str, str]


class Impure(Exception):
    """The expression reads something other than flags and literals."""


class _Choice(Impure):
    """A local assigned on every branch of an `if` / `elif` / `else` chain whose tests cannot be
    read: the site is kept only as "holds for every one of the values" (`_all_choices`)."""

    def __init__(self, key: tuple[int, str], count: int) -> None:
        super().__init__(f"{key[1]} (chosen by a test the walk cannot read)")
        self.key, self.count = key, count


@dataclass
class _Fn:
    path: str
    cls: str | None
    node: ast.FunctionDef | ast.AsyncFunctionDef

    @property
    def qualname(self) -> str:
        return f"{self.cls}.{self.node.name}" if self.cls else self.node.name

    @property
    def other_class(self) -> bool:
        """A method of a class outside the argument code (`ModelConfig`): its `self` is not the
        ServerArgs record."""
        return (self.cls is not None and not self.path.endswith("server_args.py")
                and "/arg_groups/" not in self.path)

    @property
    def reads_flags(self) -> bool:
        """Its `self.` / `server_args.` attributes are ServerArgs fields."""
        if self.path.endswith("server_args.py"):
            return self.cls in (None, "ServerArgs")
        return "/arg_groups/" in self.path and self.cls is None


@dataclass
class _Cond:
    node: ast.expr | None  # None: a condition the walk cannot read (loop, try, impure call guard)
    negate: bool
    seq: int
    fn: _Fn | None
    text: str = ""
    instance: int = 0  # which walk of its function (0: the first call, then each later call)


@dataclass
class _Site:
    fn: _Fn
    node: ast.Raise | ast.Assert
    seq: int
    stage: str
    conds: list[_Cond]
    multi: bool = False


@dataclass
class _Write:
    """One write of a flag on the launch path: `value` None when it is not a plain
    `x.flag = <expr>` / `declare_resolution(x, ..., flag=<expr>)` / `setattr(x, "flag", <expr>)`;
    `archs`: the architectures a model-override registry runs it for (`@_register_for(...)`)."""

    flag: str
    seq: int
    fn: _Fn | None
    conds: list[_Cond] | None
    value: ast.expr | None
    archs: frozenset[str] | None = None
    instance: int = 0  # the walk of its function it was logged in (see `_Cond.instance`)
    # a registered override's write (seq -1): "named" when its registry decorators name its
    # architectures (`@_register_for("A")`, replayable at the registry's call), "run" when the
    # registry runs it by a predicate or through a registered caller (a helper)
    override: str = ""


@dataclass
class _Walk:
    tree: SourceTree
    flags: frozenset[str]
    functions: dict[str, list[_Fn]] = field(default_factory=dict)
    classes: dict[str, list[_Fn]] = field(default_factory=dict)  # class name -> its __init__
    seq: int = 0
    visited: dict[int, int] = field(default_factory=dict)  # id(node) -> calls seen
    active: set[int] = field(default_factory=set)
    sites: list[_Site] = field(default_factory=list)
    writes: dict[str, int] = field(default_factory=dict)  # flag -> first seq written
    write_log: dict[str, list[_Write]] = field(default_factory=dict)  # flag -> every write
    # (flag, seq) of a write replayed for the sites after it -> its entry of `generic_writes`
    replayed: dict[tuple[str, int], dict[str, Any] | None] = field(default_factory=dict)
    # the same, read while a scope is being built (an override's writes then count as their
    # architectures, not their scopes): kept apart so that reading never reaches `replayed`
    replayed_in_scope: dict[int, dict[tuple[str, int], dict[str, Any] | None]] = field(
        default_factory=dict)  # (per function being scoped: its own writes are left out)
    lines: dict[str, int] = field(default_factory=dict)  # file:line of a statement -> its seq
    # (walk of a function, file:line) -> seq: where a statement stands at each call
    at: dict[tuple[int, str], int] = field(default_factory=dict)
    # (function, local name, walk) -> (value, seq): a local bound once, at the function's top
    # level, in one walk of the function
    bindings: dict[tuple[int, str, int], tuple[ast.expr, int]] = field(default_factory=dict)
    instance: int = 0  # the walk being made: 0 the first of each function, >0 a later call's
    instances: int = 0
    defaults: dict[str, Any] = field(default_factory=dict)  # flag -> its default
    # module-level function name -> (module path, definition), argument code and helpers
    helpers: dict[str, list[tuple[str, ast.FunctionDef]]] = field(default_factory=dict)
    # the write whose `_scope` is being read (one at a time): its own test reads the value
    # before it, and an override's reads do not see any of its writes (the registry applies
    # them after it returns)
    scoping: _Write | None = None
    # (id(if statement), local) -> the branch whose value a site is read with (`_all_choices`)
    forced: dict[tuple[int, str], int] = field(default_factory=dict)
    logged: int = 0  # writes logged so far
    writes_in: dict[int, int] = field(default_factory=dict)  # id(function) -> its first walk's
    # (function, parameter, walk) -> (argument, calling function, seq of the call, the caller's
    # walk): what the call that starts this walk of the function passes
    # (`validate(tp_size=cfg.tp_size)`), read where the call stands
    params: dict[tuple[int, str, int], tuple[ast.expr, _Fn | None, int, int]] = field(
        default_factory=dict)
    requirements: dict[str, str | None] = field(default_factory=dict)  # `_requirements`
    cold: int = 0  # inside a dummy-model branch: its calls are not followed (`_dummy_branch`)
    env: EnvTable = field(default_factory=EnvTable)  # how the release parses its environment
    # the release's utility functions that return config.json's quant_method
    # (`get_quantization_config(hf_config)`, `_quant_method_helpers`)
    quant_method_helpers: frozenset[str] = frozenset()
    # environment variable (or `ANY`) -> the first seq the argument code sets or unsets it at
    # (-1: a function the walk does not reach, or a module's top level: before everything)
    env_writes: dict[str, int] = field(default_factory=dict)
    # id(`if` / `for` statement) -> (its function, the statement, the path to it, its seq), at
    # the first walk of its function: where a logged deprecation stands (`_deprecated_values`)
    blocks: dict[int, tuple[_Fn, ast.stmt, list[_Cond], int]] = field(default_factory=dict)
    # (seq, path) of every call of a function that builds the model config (`_model_config_builds`)
    builds: list[tuple[int, list[_Cond]]] = field(default_factory=list)
    builders: dict[int, bool] = field(default_factory=dict)  # id(function) -> builds it
    # the methods of the release's `SpeculativeAlgorithm` by name (`_spec_method`), once read
    spec_methods: dict[str, ast.FunctionDef] | None = None
    # id(function) of the functions that read a model-override registry (`_registry_readers`)
    registry_fns: set[int] = field(default_factory=set)
    # (seq, path) of the first call on the launch path of such a function: where SGLang
    # collects the registered overrides' declarations (`_override_replay`)
    registry: tuple[int, list[_Cond]] | None = None
    override_fns: set[int] = field(default_factory=set)  # id(function) of registered overrides
    # private attribute -> where the argument code sets it (`_marker_branches`), once looked up
    markers: dict[str, tuple[_Fn, ast.If, tuple[ast.expr, ast.expr], int] | None] = field(
        default_factory=dict)


def _functions(tree: SourceTree) -> Iterator[_Fn]:
    for path, module in tree.trees.items():
        for node in module.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield _Fn(path, None, node)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        yield _Fn(path, node.name, item)


def _written(node: ast.AST, flags: frozenset[str], own_self: bool = False) -> set[str]:
    """The flags a statement (or expression) may write. `own_self`: the statement is in a method
    of another class (`ModelConfig`), whose `self.quantization = ...` sets its own attribute,
    not the ServerArgs field."""
    out: set[str] = set()

    def target(t: ast.AST) -> None:
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
            if not (own_self and t.value.id == "self"):
                out.add(t.attr)  # `x.flag = ...` (not `self.hf_config.flag = ...`)
        elif isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant):
            out.add(str(t.slice.value))
        elif isinstance(t, ast.Tuple | ast.List):
            for elt in t.elts:
                target(elt)
        elif isinstance(t, ast.Starred):
            target(t.value)

    for sub in ast.walk(node):
        if isinstance(sub, ast.Assign):
            for t in sub.targets:
                target(t)
        elif isinstance(sub, ast.AugAssign | ast.AnnAssign) and (
                not isinstance(sub, ast.AnnAssign) or sub.value is not None):
            target(sub.target)
        elif isinstance(sub, ast.Dict) and not own_self:  # (another class's dicts are its own)
            out.update(str(k.value) for k in sub.keys if isinstance(k, ast.Constant))
        elif isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else (
                func.id if isinstance(func, ast.Name) else "")
            if name in _LOGGING:
                continue
            if name == "setattr" and len(sub.args) >= 2 and isinstance(sub.args[1], ast.Constant) \
                    and not (own_self and isinstance(sub.args[0], ast.Name)
                             and sub.args[0].id == "self"):
                out.add(str(sub.args[1].value))
            if name in _WRITERS or "declare" in name or "override" in name:
                # declare_resolution(sa, source, field=value), dataclasses.replace(sa, field=...)
                out.update(k.arg for k in sub.keywords if k.arg and not (
                    isinstance(k.value, ast.Attribute) and k.value.attr == k.arg))
    return out & flags


def _write_values(stmt: ast.stmt, flags: frozenset[str], function: ast.AST | None = None,
                  ) -> dict[str, ast.expr | None]:
    """The value expression of each flag a simple statement writes in a plain form (None for
    a flag it writes otherwise, or more than once). With its `function`: a local dict literal
    the function later declares (`updates = {"flag": v}` ... `declare_resolution(sa, src,
    **updates)`) writes its keys here (nothing reads the record in between in the hooks' form;
    a key added to it later is its own write)."""
    if isinstance(stmt, ast.If | ast.While | ast.For | ast.AsyncFor | ast.With | ast.AsyncWith
                  | ast.Try | ast.Match) or type(stmt).__name__ == "TryStar":
        return {}
    found: dict[str, list[ast.expr]] = {}
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Attribute)
            and isinstance(stmt.targets[0].value, ast.Name)
            and stmt.targets[0].value.id in RECEIVERS):
        found.setdefault(stmt.targets[0].attr, []).append(stmt.value)
    elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
          and isinstance(stmt.targets[0], ast.Subscript)
          and isinstance(stmt.targets[0].value, ast.Name)
          and isinstance(stmt.targets[0].slice, ast.Constant)):
        # `overrides["flag"] = value`: the hooks' dicts of declarations (`declare_resolution(
        # server_args, source, **overrides)`)
        found.setdefault(str(stmt.targets[0].slice.value), []).append(stmt.value)
    elif (function is not None and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
          and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Dict)
          and stmt.targets[0].id in _handed_dicts(function)):
        for key, item in zip(stmt.value.keys, stmt.value.values, strict=True):
            if isinstance(key, ast.Constant):
                found.setdefault(str(key.value), []).append(item)
    elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Dict):
        # a post-process pass's `return {"flag": value}` (applied by `run_post_process_pass`)
        for key, item in zip(stmt.value.keys, stmt.value.values, strict=True):
            if isinstance(key, ast.Constant):
                found.setdefault(str(key.value), []).append(item)
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        name = call.func.attr if isinstance(call.func, ast.Attribute) else (
            call.func.id if isinstance(call.func, ast.Name) else "")
        if name == "declare_resolution" and call.args and isinstance(call.args[0], ast.Name) \
                and call.args[0].id in RECEIVERS:
            for k in call.keywords:
                if k.arg is not None:
                    found.setdefault(k.arg, []).append(k.value)
        elif (name == "setattr" and len(call.args) == 3 and isinstance(call.args[0], ast.Name)
              and call.args[0].id in RECEIVERS and isinstance(call.args[1], ast.Constant)):
            found.setdefault(str(call.args[1].value), []).append(call.args[2])
    nested = sum(1 for n in ast.walk(stmt) if isinstance(n, ast.Call | ast.NamedExpr))
    plain = nested <= (1 if isinstance(stmt, ast.Expr) else 0)  # no write hidden in a call
    return {flag: (values[0] if plain and len(values) == 1 else None)
            for flag, values in found.items() if flag in flags}


def _cli_renames(fn: _Fn) -> set[str]:
    """The fields `from_cli_args` only copies from their argparse dest (`args.ep_size =
    args.expert_parallel_size`): the flag as typed, not a rewrite."""
    if fn.node.name != "from_cli_args":
        return set()
    copies: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(fn.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Attribute):
            name = node.targets[0].attr
            value = node.value
            if isinstance(value, ast.Attribute) and SERVER_ARGS_FIELDS.get(value.attr) == name:
                copies.add(name)
            else:
                other.add(name)
    return copies - other


def _registered_archs(fn: _Fn) -> frozenset[str] | None:
    """The architectures of a model-override registry decorator (`@_register_for("A", "B")`,
    `@register_model_override("A")`), None when the function has no such decorator."""
    archs: set[str] = set()
    for deco in fn.node.decorator_list:
        if not isinstance(deco, ast.Call):
            continue
        name = deco.func.attr if isinstance(deco.func, ast.Attribute) else (
            deco.func.id if isinstance(deco.func, ast.Name) else "")
        if "register" not in name or deco.keywords or not deco.args:
            return None
        if len(deco.args) == 1 and isinstance(deco.args[0], ast.Lambda):
            named = _predicate_archs(deco.args[0])
            if named is None:
                return None
            archs |= named
            continue
        if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in deco.args):
            return None
        archs.update(str(a.value) for a in deco.args)  # type: ignore[attr-defined]
    return frozenset(archs) if archs else None


def _predicate_archs(predicate: ast.Lambda) -> set[str] | None:
    """The architectures an override's predicate names (`@register_model_override_predicate(
    lambda arch: "A" in arch or "B" in arch)`, `arch == "A"`, `arch in ("A", "B")`), None for
    any other predicate."""
    params = predicate.args.args
    if len(params) != 1:
        return None
    arg = params[0].arg
    tests = (predicate.body.values if isinstance(predicate.body, ast.BoolOp)
             and isinstance(predicate.body.op, ast.Or) else [predicate.body])
    out: set[str] = set()
    for test in tests:
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if (isinstance(op, ast.In) and isinstance(left, ast.Constant)
                and isinstance(left.value, str) and isinstance(right, ast.Name)
                and right.id == arg):
            out.add(left.value)  # `"A" in arch`: a part of the name; the name itself here
        elif (isinstance(op, ast.Eq) and isinstance(left, ast.Name) and left.id == arg
              and isinstance(right, ast.Constant) and isinstance(right.value, str)):
            out.add(right.value)
        elif (isinstance(op, ast.In) and isinstance(left, ast.Name) and left.id == arg
              and isinstance(right, ast.Tuple | ast.List | ast.Set)
              and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                      for e in right.elts)):
            out.update(str(e.value) for e in right.elts)  # type: ignore[attr-defined]
        else:
            return None
    return out


def _override_helper_archs(functions: list[_Fn]) -> dict[int, frozenset[str]]:
    """Module-level helpers that only registered model overrides call (`overrides.update(
    _dsa_dcp_overrides(cfg))`): by the helper's node id, the callers' architectures. Its writes
    are then scoped like the overrides' own (its `if`/`return` path read, the caller's path to
    the call not: a superset of when it writes)."""
    by_name: dict[str, list[_Fn]] = {}
    for fn in functions:
        if fn.cls is None:
            by_name.setdefault(fn.node.name, []).append(fn)
    archs: dict[int, set[str]] = {}
    other_callers: set[int] = set()
    for caller in functions:
        registered = _registered_archs(caller)
        for node in ast.walk(caller.node):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            for helper in by_name.get(node.func.id, ()):
                if helper is caller or _registered_archs(helper) is not None:
                    continue
                if registered is None:
                    other_callers.add(id(helper.node))
                else:
                    archs.setdefault(id(helper.node), set()).update(registered)
    return {key: frozenset(names) for key, names in archs.items() if key not in other_callers}


def _names_archs(fn: _Fn) -> bool:
    """Every registry decorator of `fn` names its architectures as strings (`@_register_for(
    "A", "B")`): the registry runs it for exactly those (a predicate's `"A" in arch` runs it
    for any name holding "A")."""
    return all(isinstance(deco, ast.Call) and deco.args and all(
        isinstance(a, ast.Constant) and isinstance(a.value, str) for a in deco.args)
        for deco in fn.node.decorator_list)


def _registry_readers(functions: list[_Fn]) -> set[int]:
    """The functions (by node id) that read a model-override registry: a module-level container
    that a decorator registering overrides (`register_model_override`, and the `register`
    functions it calls: `_register_for` calls it) fills (`_MODEL_OVERRIDE_FNS.setdefault(arch,
    []).append(fn)`). The walk's first call of one is where SGLang runs the overrides."""
    by_name: dict[str, list[_Fn]] = {}
    for fn in functions:
        if fn.cls is None:
            by_name.setdefault(fn.node.name, []).append(fn)
    pending: list[str] = []
    for fn in functions:
        if _registered_archs(fn) is not None:
            for deco in fn.node.decorator_list:
                if isinstance(deco, ast.Call):
                    pending.append(ast.unparse(deco.func).rsplit(".", 1)[-1])
    registering: set[str] = set()
    containers: set[str] = set()
    while pending:
        name = pending.pop()
        if name in registering or "register" not in name:
            continue
        registering.add(name)
        for fn in by_name.get(name, ()):
            for node in ast.walk(fn.node):
                if isinstance(node, ast.Call):
                    func = node.func
                    called = ast.unparse(func).rsplit(".", 1)[-1]
                    if isinstance(func, ast.Attribute) and func.attr in _MUTATING | {
                            "append", "setdefault", "extend", "add", "insert"}:
                        base: ast.expr = func.value
                        while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):
                            base = base.func.value  # `X.setdefault(a, []).append(fn)`
                        if isinstance(base, ast.Name | ast.Attribute):
                            containers.add(base.id if isinstance(base, ast.Name) else base.attr)
                    elif isinstance(func, ast.Name | ast.Attribute | ast.Call):
                        pending.append(called.split("(", 1)[0])
                elif isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Subscript) and isinstance(
                                target.value, ast.Name | ast.Attribute):
                            base = target.value
                            containers.add(base.id if isinstance(base, ast.Name) else base.attr)
    # (a name bound in the registering function itself is not a module's container)
    local = {n.id for name in registering for fn in by_name.get(name, ())
             for n in ast.walk(fn.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local |= {a.arg for name in registering for fn in by_name.get(name, ())
              for a in ast.walk(fn.node) if isinstance(a, ast.arg)}
    containers -= local
    out: set[int] = set()
    for fn in functions:
        if fn.node.name in registering:
            continue
        for node in ast.walk(fn.node):
            if (isinstance(node, ast.Name) and node.id in containers) or (
                    isinstance(node, ast.Attribute) and node.attr in containers):
                out.add(id(fn.node))
                break
    return out


def _override_paths(fn: _Fn, flags: frozenset[str],
                    ) -> dict[str, list[tuple[list[_Cond], ast.expr | None]]]:
    """The path inside a registered model override to each statement writing a flag (its `if`
    tests taken or not, its earlier returns not taken; a loop, `try` or `with` adds a test the
    walk cannot read) and the value it writes (`_write_values`, None when not plain), by flag
    in source order; a flag written in a nested function is left out (unconditional for the
    caller)."""
    out: dict[str, list[tuple[list[_Cond], ast.expr | None]]] = {}
    exits: list[list[_Cond]] = []
    unknown = _Cond(None, False, -1, fn, "compound statement")

    def block(body: list[ast.stmt], path: list[_Cond]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            here = [*[_exit_cond(ex, -1, fn) for ex in exits], *path]
            heads = _written_head(stmt, flags)
            values = _write_values(stmt, flags, fn.node) if heads else {}
            for flag in heads:
                out.setdefault(flag, []).append((here, values.get(flag)))
            if isinstance(stmt, ast.If):
                block(stmt.body, [*path, _Cond(stmt.test, False, -1, fn)])
                block(stmt.orelse, [*path, _Cond(stmt.test, True, -1, fn)])
            elif isinstance(stmt, ast.Return):
                exits.append(list(path))
            elif isinstance(stmt, ast.With | ast.AsyncWith):
                block(stmt.body, [*path, unknown])
            elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While | ast.Try | ast.Match) or \
                    type(stmt).__name__ == "TryStar":
                for sub in _bodies(stmt):
                    block(sub, [*path, unknown])

    block(fn.node.body, [])
    nested: set[str] = set()
    for node in ast.walk(fn.node):
        if node is not fn.node and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                              | ast.Lambda | ast.ClassDef):
            nested |= _written(node, flags)
    return {flag: paths for flag, paths in out.items() if flag not in nested}


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    """Calls in an expression or simple statement, nested calls' arguments first."""
    found = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    yield from sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _callees(walk: _Walk, call: ast.Call) -> list[_Fn]:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else None)
    out: list[_Fn] = []
    if name is not None:
        out += walk.functions.get(name, [])
        out += walk.classes.get(name, [])
    for arg in call.args:  # run_hook(handle_x, server_args), run_post_process_pass(sa, fn)
        if isinstance(arg, ast.Name):
            out += walk.functions.get(arg.id, [])
    return out


def _visit_calls(walk: _Walk, node: ast.AST, guard: list[_Cond], stage: str,
                 caller: _Fn | None = None) -> None:
    if walk.cold:
        return
    seq = walk.seq
    for call in _calls(node):
        for callee in _callees(walk, call):
            _visit_function(walk, callee, guard, stage,
                            (call, caller, seq) if caller is not None else None)


def _bind_params(walk: _Walk, call: ast.Call, callee: _Fn, caller: _Fn, seq: int,
                 instance: int) -> None:
    """The arguments a direct call passes to the callee's parameters (a keyword-only
    parameter not passed: its literal default), when the call's form is plain (no `*args` /
    `**kwargs`), for the walk `instance` of the callee that the call starts (read in the
    caller's walk, `walk.instance` here). `run_hook(handle_x, server_args)` binds nothing."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else None)
    if name != callee.node.name or any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return
    args = callee.node.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if callee.cls is not None and isinstance(func, ast.Attribute) and positional[:1] in (
            ["self"], ["cls"]):
        positional = positional[1:]
    if len(call.args) > len(positional):
        return
    key = id(callee.node)
    here = walk.instance
    if (callee.cls is not None and isinstance(func, ast.Attribute) and args.args
            and args.args[0].arg == "self" and isinstance(func.value, ast.Name)
            and func.value.id not in RECEIVERS):
        # `algo.handle_server_args(server_args)`: the method's `self` is that local
        walk.params[(key, "self", instance)] = (func.value, caller, seq, here)
    for param, arg in zip(positional, call.args, strict=False):
        walk.params[(key, param, instance)] = (arg, caller, seq, here)
    passed = {k.arg for k in call.keywords}
    for k in call.keywords:
        if k.arg in positional or k.arg in {a.arg for a in args.kwonlyargs}:
            walk.params[(key, str(k.arg), instance)] = (k.value, caller, seq, here)
    defaults = list(zip([a.arg for a in args.kwonlyargs], args.kw_defaults, strict=True))
    defaults += list(zip(positional[::-1], args.defaults[::-1], strict=False))
    for param, default in defaults:
        if (default is not None and param not in passed
                and (key, param, instance) not in walk.params
                and isinstance(default, ast.Constant)):
            walk.params[(key, param, instance)] = (default, None, seq, here)


def _visit_function(walk: _Walk, fn: _Fn, guard: list[_Cond], stage: str,
                    call: tuple[ast.Call, _Fn | None, int] | None = None) -> None:
    """Walk `fn` called from `call` ((the call, the calling function, its seq), whose arguments
    are bound to `fn`'s parameters for the walk it starts, `_bind_params`)."""
    key = id(fn.node)
    if key in walk.active:
        return
    if (key in walk.registry_fns and walk.registry is None and not walk.cold
            and not walk.instance):
        walk.registry = (walk.seq, list(guard))
    if not walk.cold and _builds_model_config(walk, fn):
        walk.builds.append((walk.seq, list(guard)))
    if key in walk.visited:
        walk.visited[key] += 1
        for site in walk.sites:
            if site.fn.node is fn.node:
                site.multi = True
        # A later call: its sites were read at the first call (where they raise first), but
        # its writes happen again on the values of this place, so the body is walked again
        # for them (a fresh walk number: its conditions read the values here); not when its
        # first walk, callees included, logged no write.
        if not walk.writes_in.get(key, 1):
            return
        saved = walk.instance
        walk.instances += 1
        if call is not None and call[1] is not None:
            _bind_params(walk, call[0], fn, call[1], call[2], walk.instances)
        walk.instance = walk.instances
        try:
            _walk_body(walk, fn, guard, stage)
        finally:
            walk.instance = saved
        return
    walk.visited[key] = 1
    if call is not None and call[1] is not None:
        _bind_params(walk, call[0], fn, call[1], call[2], walk.instance)
    before = walk.logged
    _walk_body(walk, fn, guard, stage)
    walk.writes_in[key] = walk.logged - before


def _builds_model_config(walk: _Walk, fn: _Fn) -> bool:
    """`fn` builds the model config (its body calls `ModelConfig.from_server_args(...)` or
    `ModelConfig(...)`): SGLang's `get_model_config` / `model_config_of`, memoized there."""
    key = id(fn.node)
    found = walk.builders.get(key)
    if found is None:
        found = walk.builders[key] = any(
            isinstance(node, ast.Call) and ast.unparse(node.func) in _MODEL_CONFIG_BUILDERS
            for node in ast.walk(fn.node))
    return found


_MODEL_CONFIG_BUILDERS = frozenset({"ModelConfig.from_server_args", "ModelConfig"})


def _model_config_builds(walk: _Walk, defaults: dict[str, Any]) -> list[dict[str, Any]]:
    """Where the launch path may build the model config, in order, each with the condition
    under which the call is reached (`None`: always), up to the first reached always.

    The first that holds for a launch is where SGLang runs ModelConfig's checks (context
    length, quantization) among the other checks: the releases that build it lazily (in the
    first hook that needs it) run it at different places for different launches. A part of
    a call's path the data cannot hold (a loop, a local, a field an earlier step rewrites, an
    override's write) is left out: the condition then holds where the call may be reached,
    so no build is passed over that SGLang may make."""
    out: list[dict[str, Any]] = []
    kept: list[set[str]] = []  # the conjuncts of each build kept
    for seq, conds in walk.builds:
        parts: list[Any] = []
        read: set[str] = set()
        for cond in conds:
            archs: set[str] = set()
            scopes: set[Scope] = set()
            try:
                tree, reads, resolved = _condition(walk, [cond], archs, scopes)
            except Impure:
                continue
            if resolved or archs or scopes:
                continue
            parts.append(tree)
            read |= reads
        condition = None if not parts else parts[0] if len(parts) == 1 else ["and", *parts]
        conjuncts = {json.dumps(part, sort_keys=True) for part in parts}
        if any(earlier <= conjuncts for earlier in kept):
            continue  # (it holds only where an earlier build holds too: never first)
        kept.append(conjuncts)
        out.append({"seq": seq, "condition": condition,
                    "defaults": {name: defaults[name] for name in sorted(read)}})
        if condition is None:
            break
    return out


def _walk_body(walk: _Walk, fn: _Fn, guard: list[_Cond], stage: str) -> None:
    key = id(fn.node)
    walk.active.add(key)
    once = _bound_once(fn.node)
    exits: list[list[_Cond]] = []
    for stmt in fn.node.body:
        for name, value in _top_bindings(stmt):
            if name in once:
                once[name] = value
    _block(walk, fn, fn.node.body, guard, [], exits, stage, once)
    walk.active.discard(key)


def _bound_once(function: ast.AST) -> dict[str, ast.expr | None]:
    """Local names assigned exactly once in the function, by a plain top-level `name = ...`."""
    counts: dict[str, int] = {}
    for node in ast.walk(function):
        names: list[str] = []
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, ast.arg):
            names.append(node.arg)
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    top = {name for stmt in getattr(function, "body", []) for name, _ in _top_bindings(stmt)}
    return {name: None for name, n in counts.items() if n == 1 and name in top}


def _call_item(call: ast.Call, index: int) -> ast.expr:
    """`call(...)[index]`: one name of `a, b = call(...)` (the same object at every call)."""
    return ast.copy_location(ast.Subscript(call, ast.Constant(index), ast.Load()), call)


def _top_bindings(stmt: ast.stmt) -> list[tuple[str, ast.expr]]:
    """The locals a top-level statement binds and their values: `name = value`, and `a, b =
    helper(...)` as `helper(...)[0]`, `helper(...)[1]` (the same objects at every call)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return []
    target = stmt.targets[0]
    if isinstance(target, ast.Name):
        return [(target.id, stmt.value)]
    if (isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Call)
            and all(isinstance(e, ast.Name) for e in target.elts)):
        cached: list[tuple[str, ast.expr]] | None = getattr(stmt, "_items", None)
        if cached is None:
            cached = [(e.id, _call_item(stmt.value, i))
                      for i, e in enumerate(target.elts) if isinstance(e, ast.Name)]
            stmt._items = cached  # type: ignore[attr-defined]
        return cached
    return []


def _unknown(walk: _Walk, fn: _Fn, text: str) -> _Cond:
    return _Cond(None, False, walk.seq, fn, text, walk.instance)


def _block(walk: _Walk, fn: _Fn, body: list[ast.stmt], guard: list[_Cond], path: list[_Cond],
           exits: list[list[_Cond]], stage: str,
           once: dict[str, ast.expr | None] | None = None) -> None:
    for stmt in body:
        walk.seq += 1
        seq = walk.seq
        wheres = [f"{fn.path}:{stmt.lineno}"]
        if isinstance(stmt, ast.Assert):
            wheres.append(f"{fn.path}:{_assert_line(stmt)}")
        elif isinstance(stmt, ast.If):
            wheres += [f"{fn.path}:{compare.lineno}" for compare in ast.walk(stmt.test)
                       if isinstance(compare, ast.Compare)]
        for where in wheres:
            walk.lines.setdefault(where, seq)
            walk.at.setdefault((walk.instance, where), seq)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for name in env_written(stmt, stmt):  # (a nested function may run from here on)
                walk.env_writes.setdefault(name, seq)
            continue
        for name in _env_written_head(stmt, fn.node):
            walk.env_writes.setdefault(name, seq)
        here = [*guard, *[_exit_cond(ex, seq, fn) for ex in exits], *path]
        if isinstance(stmt, ast.If | ast.For) and not walk.instance and not walk.cold:
            walk.blocks.setdefault(id(stmt), (fn, stmt, here, seq))
        head_writes = _written_head(stmt, walk.flags, fn.other_class)
        values = _write_values(stmt, walk.flags, fn.node) if head_writes else {}
        for flag in head_writes:
            walk.logged += 1
            walk.writes.setdefault(flag, seq)
            walk.write_log.setdefault(flag, []).append(
                _Write(flag, seq, fn, here, values.get(flag), instance=walk.instance))
        if isinstance(stmt, ast.If):
            _visit_calls(walk, stmt.test, here, stage, fn)
            test = _Cond(stmt.test, False, seq, fn, instance=walk.instance)
            cold = _dummy_branch(stmt)
            walk.cold += cold
            _block(walk, fn, stmt.body, guard, [*path, test], exits, stage)
            walk.cold -= cold
            _block(walk, fn, stmt.orelse, guard,
                   [*path, _Cond(stmt.test, True, seq, fn, instance=walk.instance)], exits, stage)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                _visit_calls(walk, stmt.value, here, stage, fn)
            exits.append(list(path))
        elif isinstance(stmt, ast.Raise | ast.Assert):
            conds = list(here)
            if isinstance(stmt, ast.Assert):
                conds.append(_Cond(stmt.test, True, seq, fn))
            if not walk.instance:  # (a later call's: read at the first, where it raises first)
                walk.sites.append(_Site(fn, stmt, seq, stage, conds))
        elif isinstance(stmt, ast.Try) and _import_probe(stmt) is not None:
            # `try: import granian except ImportError: raise ValueError(...)`: the handler
            # runs when the package is not installed (`_Reader` reads the marker test)
            probe = ast.Call(ast.Name(MISSING_PACKAGE, ast.Load()),
                             [ast.Constant(_import_probe(stmt))], [])
            for handler in stmt.handlers:
                _block(walk, fn, handler.body, guard,
                       [*path, _Cond(probe, False, seq, fn, instance=walk.instance)], exits, stage)
        elif isinstance(stmt, ast.Try) and _reraises(stmt):
            # `try: ... except BaseException: <cleanup>; raise`: the body's errors propagate
            _block(walk, fn, stmt.body, guard, path, exits, stage)
            for sub in (*[h.body for h in stmt.handlers], stmt.orelse, stmt.finalbody):
                _block(walk, fn, sub, [*here, _unknown(walk, fn, "Try")], [], [], stage)
        elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While | ast.Try | ast.Match
                        | getattr(ast, "TryStar", ast.Try)):
            blocked = [*here, _unknown(walk, fn, type(stmt).__name__.lower())]
            for head in _heads(stmt):
                _visit_calls(walk, head, blocked, stage, fn)
            inner_exits: list[list[_Cond]] = []
            for sub in _bodies(stmt):  # (after the earlier returns, like the statement)
                _block(walk, fn, sub, [*here, _unknown(walk, fn, type(stmt).__name__)],
                       [], inner_exits, stage)
            if inner_exits:
                exits.append([_unknown(walk, fn, "return inside a loop or try")])
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                _visit_calls(walk, item.context_expr, here, stage, fn)
            _block(walk, fn, stmt.body, guard, path, exits, stage)
        else:
            _visit_calls(walk, stmt, here, stage, fn)
            for name, value in _top_bindings(stmt) if once else ():
                if once is not None and once.get(name) is value:
                    walk.bindings[(id(fn.node), name, walk.instance)] = (value, seq)


def _dummy_branch(stmt: ast.If) -> bool:
    """`if <x>.model_path.lower() in ["none", "dummy"]: ...; return`: the early exit of a
    launch without a model (SGLang's test mode). The functions it calls are not followed from
    there: a function reached first there would take its place on the launch path from that
    branch (0.5.23's `resolve_boundary_reduction` would put ModelConfig's checks before the
    serving hooks), while every launch with a model reaches it later."""
    test = stmt.test
    if (not stmt.body or not isinstance(stmt.body[-1], ast.Return) or stmt.orelse
            or not isinstance(test, ast.Compare) or len(test.ops) != 1
            or not isinstance(test.ops[0], ast.In)):
        return False
    left, right = test.left, test.comparators[0]
    if not (isinstance(left, ast.Call) and not left.args and isinstance(left.func, ast.Attribute)
            and left.func.attr == "lower" and isinstance(left.func.value, ast.Attribute)
            and left.func.value.attr == "model_path"):
        return False
    try:
        words = ast.literal_eval(right)
    except (ValueError, SyntaxError, TypeError):
        return False
    return isinstance(words, list | tuple | set) and bool(words) and set(words) <= {
        "none", "dummy"}


MISSING_PACKAGE = "<package missing>"  # the test of an import probe's handler


def _import_probe(stmt: ast.Try) -> str | None:
    """The top-level module a `try` only imports, when every handler catches ImportError (or
    ModuleNotFoundError) and there is no `else` / `finally`: its handlers run exactly when
    the package is not installed."""
    if stmt.orelse or stmt.finalbody or not stmt.handlers or not stmt.body:
        return None
    names: set[str] = set()
    for sub in stmt.body:
        if isinstance(sub, ast.Import):
            names |= {alias.name.split(".")[0] for alias in sub.names}
        elif isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0:
            names.add(sub.module.split(".")[0])
        else:
            return None
    for handler in stmt.handlers:
        if not (isinstance(handler.type, ast.Name)
                and handler.type.id in ("ImportError", "ModuleNotFoundError")):
            return None
    return names.pop() if len(names) == 1 and "sglang" not in names else None


def _requirements(root: Any) -> dict[str, str | None]:
    """The wheel's declared requirements (`Requires-Dist` of its METADATA), normalised name ->
    None for the base install, else the first extra that declares it."""
    out: dict[str, str | None] = {}
    for meta in sorted(root.glob("sglang-*.dist-info/METADATA")):
        for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.startswith("Requires-Dist:"):
                continue
            spec, _, marker = line[len("Requires-Dist:"):].partition(";")
            name = re.split(r"[\s\[<>=!~(]", spec.strip(), maxsplit=1)[0].lower().replace(
                "_", "-")
            extra = re.search(r"extra\s*==\s*[\"']([^\"']+)[\"']", marker)
            if extra is None:
                out[name] = None
            elif name not in out:
                out[name] = extra.group(1)
    return out


def _reraises(stmt: ast.Try) -> bool:
    """Every handler ends in a bare `raise` (and there is no `else`): errors pass through."""
    return bool(stmt.handlers) and not stmt.orelse and all(
        h.body and isinstance(h.body[-1], ast.Raise) and h.body[-1].exc is None
        for h in stmt.handlers)


def _exit_cond(path: list[_Cond], seq: int, fn: _Fn) -> _Cond:
    """`not (the path of an earlier return)`: one node when the path is one condition."""
    if not path:
        return _Cond(None, False, seq, fn, "unconditional return")
    if any(c.node is None for c in path):
        return _Cond(None, False, seq, fn, "return under an unreadable condition")
    if len(path) == 1:
        c = path[0]
        return _Cond(c.node, not c.negate, c.seq, c.fn, instance=c.instance)
    # not (a and b) == (not a) or (not b): kept as a synthetic BoolOp over the parts
    parts: list[ast.expr] = [c.node if c.negate else ast.UnaryOp(ast.Not(), c.node)
                             for c in path if c.node is not None]
    return _Cond(ast.BoolOp(ast.Or(), parts), False, max(c.seq for c in path), path[0].fn,
                 instance=path[0].instance)


def _heads(stmt: ast.stmt) -> list[ast.AST]:
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return [stmt.iter]
    if isinstance(stmt, ast.While):
        return [stmt.test]
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    return []


def _bodies(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return [stmt.body, *[h.body for h in stmt.handlers], stmt.orelse,  # type: ignore[attr-defined]
                stmt.finalbody]  # type: ignore[attr-defined]
    if isinstance(stmt, ast.Match):
        return [case.body for case in stmt.cases]
    return [stmt.body, stmt.orelse]  # type: ignore[attr-defined]


def _env_written_head(stmt: ast.stmt, scope: ast.AST) -> set[str]:
    """The environment variables a statement itself sets (a compound statement's head), in the
    function `scope` (`with envs.X.override(v):` sets it for the body)."""
    out: set[str] = set()
    for node in _own_parts(stmt):
        out |= env_written(node, scope)
    return out


def _written_head(stmt: ast.stmt, flags: frozenset[str], own_self: bool = False) -> set[str]:
    """Writes of a statement itself (a compound statement's head; its bodies are walked)."""
    out: set[str] = set()
    for node in _own_parts(stmt):
        out |= _written(node, flags, own_self)
    return out


def _own_parts(stmt: ast.stmt) -> list[ast.AST]:
    """What a statement runs itself: a compound statement's head (its bodies are walked on
    their own), a simple statement whole."""
    if isinstance(stmt, ast.If | ast.While):
        return [stmt.test]
    if isinstance(stmt, ast.For | ast.AsyncFor):
        return [stmt.iter]
    if isinstance(stmt, ast.With | ast.AsyncWith):
        return [item.context_expr for item in stmt.items]
    if isinstance(stmt, ast.Try | ast.Match) or type(stmt).__name__ == "TryStar":
        return []
    return [stmt]


# ------------------------------------------------------------------------------- expressions

_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
        ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


class _Reader:
    """Converts an `ast` condition into the JSON tree, or raises `Impure`."""

    def __init__(self, walk: _Walk, fn: _Fn | None, seq: int, instance: int = 0) -> None:
        self.walk, self.fn, self.seq, self.instance = walk, fn, seq, instance
        self.depth = 0  # helpers inlined so far (`inline`)
        self.read: set[str] = set()
        self.resolved: set[str] = set()
        self.archs: set[str] = set()  # architectures whose overrides may write what it reads
        self.scopes: set[Scope] = set()  # ... only when a condition holds (`_scope`)
        self.optional: dict[str, str] = {}  # module -> the extra that installs it (`missing`)
        self.loop_var: str | None = None  # the variable of the `any(...)` being read (`each`)

    def absorb(self, inner: _Reader) -> None:
        """What a reader of a part read elsewhere (a binding, a parameter's argument) read."""
        self.read |= inner.read
        self.resolved |= inner.resolved
        self.archs |= inner.archs
        self.scopes |= inner.scopes
        self.optional.update(inner.optional)

    def flag(self, node: ast.Attribute) -> list[Any]:
        if not (isinstance(node.value, ast.Name) and node.value.id in RECEIVERS
                and self.fn is not None and self.fn.reads_flags):
            raise Impure(ast.unparse(node))
        name = node.attr
        if name not in self.walk.flags:
            constant = _class_constant(self.walk.tree, "sglang/srt/server_args.py", "ServerArgs",
                                       name)
            if constant is not None:  # `server_args.LANGUAGE_MODEL_ONLY_ARCHITECTURES`
                return ["const", constant]
            marker = self.marker(name) if name.startswith("_") else None
            if marker is not None:  # `server_args._quantization_explicitly_unset`
                return marker
            bound = self.record_binding(node)
            if bound is not None:  # `self.x_str, self.y_str = self.get_attention_backends()`
                return self._at(*bound)
            raise Impure(f"{ast.unparse(node)} (not a flag)")
        written = self.walk.writes.get(name)
        if written is not None and written < self.seq:
            if canonical_dest(name) not in RESOLVED_FIELDS:
                archs, scopes = _replayable(self.walk, name, self.seq)
                self.archs |= archs
                self.scopes |= scopes
            self.resolved.add(name)  # resolved by the engine or replayed: read where it stands
        self.read.add(name)
        return ["flag", name]

    def record_binding(self, node: ast.Attribute) -> tuple[ast.stmt, ast.expr] | None:
        """The binding statement and value of a record attribute that is not a flag, bound once
        in the reading function by a top-level statement before the read
        (`self.prefill_attention_backend_str, self.decode_attention_backend_str =
        self.get_attention_backends()`, 0.5.7-0.5.14's KV4 check): the call (`[i]` of it for a
        tuple target), read like a local; None for any other."""
        fn = self.fn
        if fn is None or not isinstance(fn.node, ast.FunctionDef | ast.AsyncFunctionDef):
            return None

        def names_it(target: ast.expr) -> bool:
            return (isinstance(target, ast.Attribute) and target.attr == node.attr
                    and isinstance(target.value, ast.Name) and target.value.id in RECEIVERS)

        stores = [t for n in ast.walk(fn.node) if isinstance(n, ast.Assign | ast.AugAssign)
                  for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                  for t in (t.elts if isinstance(t, ast.Tuple) else [t]) if names_it(t)]
        if len(stores) != 1:
            return None
        for stmt in fn.node.body:
            if stmt.lineno >= node.lineno:
                break
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                continue
            target = stmt.targets[0]
            if names_it(target):
                return stmt, stmt.value
            if (isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Call)
                    and any(names_it(e) for e in target.elts)):
                index = next(i for i, e in enumerate(target.elts) if names_it(e))
                return stmt, _call_item(stmt.value, index)
        return None

    def marker(self, name: str) -> list[Any] | None:
        """A private attribute of the record (not a flag) that the argument code sets in one
        place, both branches of one `if` it walked before this read (`if self.quantization ==
        "unquant": ...; self._x = True` / `else: self._x = False`): `["if", test, a, b]`, read
        where that `if` stands. None for any other."""
        if name not in self.walk.markers:
            self.walk.markers[name] = _marker_branches(self.walk, name)
        found = self.walk.markers[name]
        if found is None or found[3] >= self.seq:
            return None
        fn, stmt, values, seq = found
        inner = _Reader(self.walk, fn, seq)
        tree = ["if", inner.expr(stmt.test), inner.expr(values[0]), inner.expr(values[1])]
        typed: set[str] = set()
        registry = self.walk.registry
        for name_read in inner.read:
            # (the engine reads a flag where the item stands: one written between that `if`
            # and here is read as typed, when nothing wrote it before the `if`)
            seqs = [w.seq for w in self.walk.write_log.get(name_read, []) if w.seq < self.seq
                    and not (w.override and registry is not None and self.seq <= registry[0])]
            if any(s >= seq for s in seqs):
                if any(s < seq for s in seqs) or canonical_dest(name_read) in RESOLVED_FIELDS:
                    raise Impure(f"{name} (its test reads {name_read}, written since)")
                typed.add(name_read)
        self.absorb(inner)
        return _as_typed(tree, typed) if typed else tree

    def local(self, node: ast.Name) -> list[Any]:
        """A local assigned at the function's top level and in top-level `if` blocks before the
        read: `x = a` then `if c: x = b` reads as `b if c else a`."""
        fn = self.fn
        assert fn is not None
        stores = [n for n in ast.walk(fn.node) if isinstance(n, ast.Name) and n.id == node.id
                  and isinstance(n.ctx, ast.Store)]
        nested = _block_assignment(fn.node, stores, node)
        if nested is not None:  # `if c:` then `x = int(cfg.f)`, `if x <= 0: raise` in that body
            return self._mutated(node, node.lineno, self._at(nested, nested.value))
        tree: list[Any] | None = None
        plain: set[int] = set()
        for stmt in fn.node.body:
            if (stmt.end_lineno or stmt.lineno) >= node.lineno:  # (or the read is inside it)
                break
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == node.id):
                tree = self._at(stmt, stmt.value)
                plain.add(id(stmt.targets[0]))
            elif isinstance(stmt, ast.If) and stmt.orelse and any(
                    isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store)
                    for n in ast.walk(stmt)):
                branches = _assigning_branches(stmt, node.id)
                if branches is None:
                    raise Impure(f"{node.id} (assigned inside a block)")
                plain |= {id(assign.targets[0]) for _tests, assign in branches}
                try:
                    tree = self._chain(branches)
                except _Choice:
                    raise
                except Impure:
                    key = (id(stmt), node.id)
                    if key not in self.walk.forced:
                        raise _Choice(key, len(branches)) from None
                    chosen = branches[self.walk.forced[key]][1]
                    tree = self._at(chosen, chosen.value)
            elif isinstance(stmt, ast.If) and not stmt.orelse and any(
                    isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store)
                    for n in ast.walk(stmt)):
                # (the one assignment is a statement of the body itself, logging around it)
                last = next((b for b in stmt.body if isinstance(b, ast.Assign)
                             and len(b.targets) == 1 and isinstance(b.targets[0], ast.Name)
                             and b.targets[0].id == node.id), None)
                if tree is None or last is None:
                    raise Impure(f"{node.id} (assigned inside a block)")
                inner = [n for n in ast.walk(stmt) if isinstance(n, ast.Name)
                         and n.id == node.id and isinstance(n.ctx, ast.Store)]
                if len(inner) != 1:
                    raise Impure(f"{node.id} (assigned more than once in a block)")
                plain.add(id(last.targets[0]))
                tree = ["if", self._at(stmt, stmt.test), self._at(last, last.value), tree]
        if tree is None or any(id(n) not in plain for n in stores
                               if n.lineno < node.lineno):
            raise Impure(node.id)
        return self._mutated(node, node.lineno, tree)

    def _mutated(self, node: ast.Name, since: int, tree: list[Any]) -> list[Any]:
        """A local's value after the method calls that change it before the read: a top-level
        `x.discard(v)` / `x.remove(v)` after line `since` as `x - {v}`; any other mutating call
        on it before the read raises `Impure`, as does an item assignment (`x[k] = v`)."""
        assert self.fn is not None
        if any(isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store | ast.Del)
               and isinstance(n.value, ast.Name) and n.value.id == node.id
               and n.lineno < node.lineno for n in ast.walk(self.fn.node)):
            raise Impure(f"{node.id} (changed by an item assignment)")
        top = {id(stmt.value) for stmt in self.fn.node.body if isinstance(stmt, ast.Expr)}
        # `if <test>: x.append(v)` at the function's top level (0.5.22's list of what a policy
        # does not support, raised when not empty)
        guarded = {id(stmt.body[0].value): stmt for stmt in self.fn.node.body
                   if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1
                   and isinstance(stmt.body[0], ast.Expr)}
        calls = sorted((n for n in ast.walk(self.fn.node) if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATING
                        and isinstance(n.func.value, ast.Name) and n.func.value.id == node.id
                        and n.lineno < node.lineno), key=lambda n: n.lineno)
        for call in calls:
            if call.lineno <= since and since != node.lineno:
                continue  # before the binding read
            if (id(call) in top and call.lineno > since and isinstance(call.func, ast.Attribute)
                    and call.func.attr in ("discard", "remove") and len(call.args) == 1):
                tree = ["op", "-", tree, ["set", self.expr(ast.Tuple(call.args, ast.Load()))]]
                continue
            if (call.lineno > since and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "append" and len(call.args) == 1 and not call.keywords
                    and (id(call) in top or id(call) in guarded) and tree[0] in ("const", "op")):
                item = self.expr(call.args[0])
                if item[0] == "const":
                    added: list[Any] = ["const", [item[1]]]
                    if id(call) in guarded:
                        test = guarded[id(call)]
                        added = ["if", self._at(test, test.test), added, ["const", []]]
                    tree = ["op", "+", tree, added]
                    continue
            raise Impure(f"{node.id} (changed by .{getattr(call.func, 'attr', '')}())")
        return tree

    def _chain(self, branches: list[tuple[list[tuple[ast.If, bool]], ast.Assign]]) -> list[Any]:
        """`if a: x = 1 elif b: x = 2 else: x = 3` as nested `["if", ...]` trees."""
        tree: list[Any] | None = None
        for tests, last in reversed(branches):
            value = self._at(last, last.value)
            if tree is None:
                tree = value
                continue
            test, _negated = tests[-1]
            tree = ["if", self._at(test, test.test), value, tree]
        assert tree is not None
        return tree

    def _at(self, stmt: ast.stmt, value: ast.expr) -> list[Any]:
        """`value` read where `stmt` stands on the launch path."""
        assert self.fn is not None
        return self._read_at(self.walk.at.get((self.instance, f"{self.fn.path}:{stmt.lineno}"),
                                              self.seq), value)

    def _read_at(self, seq: int, value: ast.expr) -> list[Any]:
        """`value` read at launch-path position `seq`, what it reads counted as read here."""
        inner = _Reader(self.walk, self.fn, seq, self.instance)
        tree = inner.expr(value)
        self.absorb(inner)
        return tree

    def _platform_local(self, node: ast.Name) -> bool:
        """A local only ever bound to `get_platform()` (the host's platform object)."""
        assert self.fn is not None
        values = _assigned(self.fn.node, node.id)
        return bool(values) and all(
            isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
            and v.func.id == "get_platform" and not v.args and not v.keywords for v in values)

    def hf_config(self, node: ast.expr) -> bool:
        """`<x>.hf_config` (the model config's transformers config, `self.get_model_config()
        .hf_config`, `model_config_of(server_args).hf_config`) or a local only ever bound to it
        or to `self.get_hf_config()` (0.5.4's `_handle_model_specific_adjustments`), or a
        registered model override's parameter `hf_config` (the registry passes it the model's)."""
        if isinstance(node, ast.Name) and self.fn is not None:
            if (node.id == "hf_config" and id(self.fn.node) in self.walk.override_fns
                    and _is_param(self.fn.node, node.id)):
                return True
            values = _assigned(self.fn.node, node.id)
            return bool(values) and all(_is_hf_config(v) for v in values)
        return _is_hf_config(node)

    def quantization_config(self, node: ast.expr) -> bool:
        """config.json's `quantization_config` section: `getattr(hf_config,
        "quantization_config", None)`, `hf_config.quantization_config`, or a local only ever
        bound to one of them."""
        if isinstance(node, ast.Name) and self.fn is not None:
            values = _assigned(self.fn.node, node.id)
            return bool(values) and all(
                not isinstance(v, ast.Name) and self.quantization_config(v) for v in values)
        if isinstance(node, ast.Attribute):
            return node.attr == "quantization_config" and self.hf_config(node.value)
        return self.hf_config_getattr(node) == "quantization_config"

    def hf_config_getattr(self, node: ast.expr) -> str | None:
        """The attribute `getattr(hf_config, "<attribute>", None)` reads, else None."""
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "getattr" and len(node.args) == 3 and not node.keywords
                and self.hf_config(node.args[0]) and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
                and isinstance(node.args[2], ast.Constant) and node.args[2].value is None):
            return node.args[1].value
        return None

    def model_fact(self, node: ast.expr) -> str | None:
        """The model fact an expression reads (`MODEL_FACTS`), else None."""
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and node.slice.value == 0 and isinstance(node.value, ast.Attribute)
                and node.value.attr == "architectures" and self.hf_config(node.value.value)):
            return "architecture" if "architecture" in MODEL_FACTS else None
        if (isinstance(node, ast.Attribute) and node.attr == "architectures"
                and self.hf_config(node.value)):
            return "architectures"  # the whole list (`architectures[0] if architectures ...`)
        if (isinstance(node, ast.Attribute) and node.attr == "model_type"
                and self.hf_config(node.value) and "model_type" in MODEL_FACTS):
            return "model_type"  # config.json's own `model_type`
        if self.hf_config_getattr(node) == "model_type" and "model_type" in MODEL_FACTS:
            return "model_type"  # `getattr(hf_config, "model_type", None)`: always set there
        if self.hf_config_getattr(node) == "architectures":
            return "architectures"  # `getattr(model_config_of(sa).hf_config, "architectures",
            # None) or []` (the DeepEP v2 architecture check)
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and node.slice.value == 0 and self.model_fact(node.value) == "architectures"):
            return "architecture"
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and len(node.args) == 1 and not node.keywords
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "quant_method"
                and self.quantization_config(node.func.value)):
            return "quant_method"  # `quantization_config.get("quant_method")`
        if (isinstance(node, ast.IfExp) and isinstance(node.orelse, ast.Constant)
                and node.orelse.value is None and self.model_fact(node.body) == "quant_method"
                and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1
                and isinstance(node.test.ops[0], ast.IsNot)
                and isinstance(node.test.comparators[0], ast.Constant)
                and node.test.comparators[0].value is None
                and self.quantization_config(node.test.left)):
            return "quant_method"  # `... .get("quant_method") if quantization_config is not None
            # else None`: None without a quantization_config, as the fact is
        if (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
                and isinstance(node.func, ast.Name)
                and node.func.id in self.walk.quant_method_helpers
                and node.func.id not in self.walk.functions and self.hf_config(node.args[0])):
            return "quant_method"  # `get_quantization_config(hf_config)` (utils/common.py)
        if _is_mla_test(node):
            return "mla"  # `model_config.attention_arch == AttentionArch.MLA`
        if isinstance(node, ast.Attribute) and node.attr == "nvfp4_moe_meta":
            return "nvfp4_moe_meta"  # `self.get_model_config().nvfp4_moe_meta` (a ModelConfig
            # attribute: set for hybrid FP8 + NVFP4-MoE checkpoints)
        if (isinstance(node, ast.Call) and not node.keywords and len(node.args) <= 1
                and isinstance(node.func, ast.Attribute | ast.Name)):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id
            defined = [fn for fn in self.walk.functions.get(name, ())
                       if isinstance(fn.node, ast.FunctionDef)]
            if defined and all(fn.node.body and isinstance(fn.node.body[-1], ast.Return)
                               and _is_mla_test(fn.node.body[-1].value) for fn in defined):
                return "mla"  # `use_mla_backend(server_args)` / `self.use_mla_backend()`
        if isinstance(node, ast.Name) and self.fn is not None:
            bound = self.walk.bindings.get((id(self.fn.node), node.id, self.instance))
            if bound is not None:
                return self.model_fact(bound[0])
            facts = {self.model_fact(v) for v in _assigned(self.fn.node, node.id)}
            return facts.pop() if len(facts) == 1 else None  # `model_arch = ...[0]` in a branch
        return None

    def env_read(self, node: ast.expr) -> list[Any] | None:
        """An environment read (`wizard.conformance.env_reads`): `envs.X.get()` /
        `envs.X.value`, `envs.X.is_set()`, `get_bool_env_var("X", d)` / `get_int_env_var("X",
        d)`, `os.environ.get("X", d)` / `os.getenv("X", d)`, `"X" in os.environ`, as its tree
        node; None for any other expression. Raises `Impure` for a read whose parsing the
        release does not show plainly, or of a variable the argument code sets before here."""
        table = self.walk.env
        tree: list[Any] | None = None
        try:
            if (isinstance(node, ast.Call) and not node.args and not node.keywords
                    and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "is_set")
                    and _envs_field(node.func.value) is not None):
                name = str(_envs_field(node.func.value))
                tree = (table.field_read(name) if node.func.attr == "get"
                        else ["envset", name])
            elif (isinstance(node, ast.Attribute) and node.attr == "value"
                  and _envs_field(node.value) is not None):
                tree = table.field_read(str(_envs_field(node.value)))  # (early releases)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("get_bool_env_var", "get_int_env_var")
                  and 1 <= len(node.args) <= 2 and not node.keywords
                  and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)):
                tree = table.function_read(node.func.id, node.args[0].value,
                                           node.args[1] if len(node.args) == 2 else None)
            elif (isinstance(node, ast.Call) and 1 <= len(node.args) <= 2 and not node.keywords
                  and ast.unparse(node.func) in ("os.environ.get", "os.getenv")
                  and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)):
                default = node.args[1] if len(node.args) == 2 else None
                if default is not None and not (isinstance(default, ast.Constant) and (
                        default.value is None or isinstance(default.value, str))):
                    raise Impure(f"{ast.unparse(node)} (a default that is not a string)")
                tree = ["env", node.args[0].value, ["str"],
                        default.value if isinstance(default, ast.Constant) else None, None]
            elif (isinstance(node, ast.Compare) and len(node.ops) == 1
                  and isinstance(node.ops[0], ast.In | ast.NotIn)
                  and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
                  and ast.unparse(node.comparators[0]) == "os.environ"):
                tree = ["envset", node.left.value]
                if isinstance(node.ops[0], ast.NotIn):
                    tree = ["not", tree]
        except EnvUnreadable as why:
            raise Impure(str(why)) from None
        if tree is None:
            return None
        core = tree[1] if tree[0] == "not" else tree
        for variable in (core[1], core[4] if core[0] == "env" else None):
            if variable is None:
                continue
            name = str(variable)
            written = min(self.walk.env_writes.get(name, self.seq),
                          self.walk.env_writes.get(ANY, self.seq))
            if written < self.seq:
                raise Impure(f"env {name} (set by the argument code before)")
        return tree

    def expr(self, node: ast.expr) -> list[Any]:
        if isinstance(node, ast.Name) and node.id == self.loop_var:
            return ["each"]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("any", "all") and len(node.args) == 1 and not node.keywords
                and isinstance(node.args[0], ast.GeneratorExp)):
            return self.quantified(node.func.id, node.args[0])
        fact = self.model_fact(node)
        if fact is not None:  # hf_config.architectures[0]: a fact of the launch's model
            return ["model", fact]
        env = self.env_read(node)
        if env is not None:
            return env
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == MISSING_PACKAGE):
            return self.missing(str(node.args[0].value))  # type: ignore[attr-defined]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "len" and len(node.args) == 1 and not node.keywords):
            return ["len", self.expr(node.args[0])]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("int", "float") and len(node.args) == 1
                and not node.keywords):
            return ["conv", node.func.id, self.expr(node.args[0])]  # `int(cfg.window_size)`
        if (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], ast.Eq | ast.NotEq)
                and isinstance(node.left, ast.Call) and isinstance(node.left.func, ast.Name)
                and node.left.func.id == "parse_connector_type" and len(node.left.args) == 1
                and isinstance(node.comparators[0], ast.Attribute)
                and isinstance(node.comparators[0].value, ast.Name)
                and node.comparators[0].value.id == "ConnectorType"):
            # `parse_connector_type(self.model_path) == ConnectorType.INSTANCE`: a
            # `<type>://` model path (never a folder or a Hub id)
            path = node.left.args[0]
            if (isinstance(path, ast.Attribute) and path.attr == "model_path"
                    and isinstance(path.value, ast.Name) and path.value.id in RECEIVERS
                    and self.fn is not None and self.fn.reads_flags and "model_path" in
                    self.walk.flags):
                # SGLang rewrites the model path only to a local folder (a download), which
                # keeps a path without `<type>://` without one
                self.read.add("model_path")
                test = ["connector", ["flag", "model_path"]]
            else:
                test = ["connector", self.expr(path)]
            return test if isinstance(node.ops[0], ast.Eq) else ["not", test]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1
                and not node.keywords and self.hf_config(node.args[0])):
            # `is_deepseek_dsa(hf_config)`: a model test of configs/model_config.py, inlined; or
            # one the calling module imports (`model_supports_deepep_v2(hf_config)`)
            if _test_function(self.walk, node.func.id) is None and self.fn is not None:
                found = _imported_function(self.walk.tree, self.fn.path, node.func.id,
                                           self.fn.node)
                if found is not None:
                    return _ModelTest(self.walk, found[1], found[0], {}, 0).body()
            return _model_test(self.walk, node.func.id)
        if (isinstance(node, ast.Attribute) and node.attr in PLATFORM_PROBES
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "get_platform" and not node.value.args):
            return ["platform", node.attr]  # get_platform().is_npu
        if (isinstance(node, ast.Attribute) and node.attr in PLATFORM_PROBES
                and isinstance(node.value, ast.Name) and self.fn is not None
                and self._platform_local(node.value)):
            return ["platform", node.attr]  # `platform = get_platform()` ... `platform.is_hip`
        if isinstance(node, ast.Attribute) and _is_view_call(node.value):
            # `resolved_view(server_args).flag`: the record's field as resolved so far
            return self.flag(ast.Attribute(ast.Name("self", ast.Load()), node.attr, ast.Load()))
        if isinstance(node, ast.Attribute):
            return self.flag(node)
        if isinstance(node, ast.Name) and self.fn is not None:
            param = self.walk.params.get((id(self.fn.node), node.id, self.instance))
            if param is not None and _is_param(self.fn.node, node.id):
                # a parameter the call that started this walk binds, read where it stands
                arg, caller, seq, instance = param
                inner = _Reader(self.walk, caller, seq, instance)
                tree = inner.expr(arg)
                self.absorb(inner)
                return tree
            bound = self.walk.bindings.get((id(self.fn.node), node.id, self.instance))
            if bound is None:
                constant = _module_constant(self.walk.tree, self.fn.path, node.id)
                if constant is not None:  # `_METHODS = ("a", "b")` at the module's top level
                    return ["const", constant]
                return self.local(node)
            value, seq = bound
            return self._mutated(node, value.lineno, self._read_at(seq, value))
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(
                node.value, bool | int | float | str)):
            return ["const", node.value]
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            values = [self.expr(e) for e in node.elts]
            if isinstance(node, ast.Set):  # `{"triton", "fa3"}`: a set (`backends <= {...}`)
                items = ([["const", sorted((v[1] for v in values), key=repr)]]
                         if all(v[0] == "const" for v in values) else [["tuple", *values]])
                return ["set", *items]
            if all(v[0] == "const" for v in values):
                return ["const", [v[1] for v in values]]
            return ["tuple", *values]  # `x in (None, 1, cfg.tp_size)`
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("set", "frozenset") and len(node.args) == 1
                and not node.keywords):
            return ["set", self.expr(node.args[0])]  # `set(attention_backends_of(view))`
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return ["not", self.expr(node.operand)]
            if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) and \
                    isinstance(node.operand.value, int | float):
                return ["const", -node.operand.value]
        if isinstance(node, ast.IfExp):  # `"a" if x else "b"`
            return ["if", self.expr(node.test), self.expr(node.body), self.expr(node.orelse)]
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
                and isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant)
                and type(node.left.value) is int and type(node.right.value) is int
                and 0 <= node.right.value <= 64):
            return ["const", node.left.value ** node.right.value]  # `2**32`: a literal
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            return ["op", _ARITH[type(node.op)], self.expr(node.left), self.expr(node.right)]
        if isinstance(node, ast.BoolOp | ast.Compare):
            return _logic(node, self.expr)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "getattr" and len(node.args) == 3 and not node.keywords
                and isinstance(node.args[0], ast.Name) and node.args[0].id in RECEIVERS
                and isinstance(node.args[1], ast.Constant) and str(node.args[1].value)[:1] == "_"
                and isinstance(node.args[2], ast.Constant)):
            # `getattr(self, "_resolution_finished", False)`: a private marker a fresh record
            # does not have yet (set by the resolution itself), so its default
            return ["const", node.args[2].value]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "getattr" and len(node.args) in (2, 3) and not node.keywords
                and (_is_view_call(node.args[0]) or (isinstance(node.args[0], ast.Name)
                                                     and node.args[0].id in RECEIVERS))
                and isinstance(node.args[1], ast.Constant)
                and str(node.args[1].value) in self.walk.flags):
            # `getattr(self._resolved(), "attention_backend", None)`: a field every record
            # has, so the default is never taken
            return self.expr(ast.Attribute(node.args[0], str(node.args[1].value), ast.Load()))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance" and len(node.args) == 2
                and isinstance(node.args[1], ast.Name) and node.args[1].id == "CustomSpecAlgo"
                and _is_spec_member(self.expr(node.args[0]))):
            # a plugin's algorithm: never one of the release's own argparse choices
            return ["const", False]
        algorithm = _spec_algorithm_call(node)
        if algorithm is not None:
            # `SpeculativeAlgorithm.from_string(cfg.speculative_algorithm)`: its member's name
            return _spec_member(self.walk, self.expr(algorithm))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in STR_TESTS and len(node.args) == 1 and not node.keywords):
            # `backend.startswith("lora")`: a literal prefix (or a tuple of them)
            try:
                prefix = ast.literal_eval(node.args[0])
            except (ValueError, SyntaxError, TypeError):
                raise Impure(ast.unparse(node)) from None
            if isinstance(prefix, str) or (isinstance(prefix, tuple) and prefix
                                           and all(isinstance(p, str) for p in prefix)):
                return ["strtest", node.func.attr, self.expr(node.func.value),
                        ["const", list(prefix) if isinstance(prefix, tuple) else prefix]]
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in STR_METHODS:
                return ["str", func.attr, self.expr(func.value)]
            if isinstance(func, ast.Attribute) and (
                    func.attr.lstrip("_") not in PLATFORM_PROBES):
                method = _spec_method(self.walk, func.attr)
                if method is not None:  # `algo.is_eagle()`, `algo.supports_mixed_chunk()`
                    try:                # on a from_string member
                        member = self.expr(func.value)
                    except Impure:
                        member = None
                    if member is not None and _is_spec_member(member):
                        return method(member)
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else "")
            if name.lstrip("_") in PLATFORM_PROBES:  # is_hip(), _is_hip()
                return ["platform", name.lstrip("_")]
        if _is_torch_cuda_call(node, "is_available"):
            # `torch.cuda.is_available()`: a CUDA or ROCm GPU (torch's HIP build answers True),
            # SGLang's own `is_cuda_alike()`
            return ["platform", "is_cuda_alike"]
        if (isinstance(node, ast.Subscript) and _is_torch_cuda_call(node.value, "get_device_capability")
                and isinstance(node.slice, ast.Constant) and node.slice.value == 0):
            # `torch.cuda.get_device_capability()[0] >= 10`, `major, _ = torch.cuda.
            # get_device_capability()`: the GPU's compute-capability major
            return ["cc_major"]
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call)
                and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int):
            # `_, width = derive_widths(...)` (bound as `derive_widths(...)[1]`): the item of
            # the tuple the helper returns
            body = self.inline(node.value)
            if isinstance(body, ast.Tuple) and 0 <= node.slice.value < len(body.elts):
                return self.expr(body.elts[node.slice.value])
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, int) and not isinstance(node.slice.value, bool)):
            return ["index", self.expr(node.value), node.slice.value]
        if isinstance(node, ast.Dict) and not node.keys:
            return ["dict"]  # `cfg.radix_eviction_policy_config or {}`
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and not node.keywords and 1 <= len(node.args) <= 2
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            # `config.get("threshold", 0)` on a dictionary the record holds (a JSON flag, or
            # `flag or {}`): a missing key gives the default, a value that is no dictionary
            # does not hold
            default = self.expr(node.args[1]) if len(node.args) == 2 else ["const", None]
            return ["get", self.expr(node.func.value), node.args[0].value, default]
        if isinstance(node, ast.Call):
            body = self.inline(node)
            if body is not None:
                return self.expr(body)

        raise Impure(ast.unparse(node))

    def quantified(self, kind: str, generator: ast.GeneratorExp) -> list[Any]:
        """`any(a in ARCHS for a in architectures)`: one loop over a value, no filter, no
        nesting (the loop's variable reads as `["each"]`)."""
        if (self.loop_var is not None or len(generator.generators) != 1
                or generator.generators[0].ifs or generator.generators[0].is_async
                or not isinstance(generator.generators[0].target, ast.Name)):
            raise Impure(ast.unparse(generator))
        loop = generator.generators[0]
        iterable = self.expr(loop.iter)
        self.loop_var = loop.target.id  # type: ignore[attr-defined]
        try:
            element = self.expr(generator.elt)
        finally:
            self.loop_var = None
        return [kind, iterable, element]

    def missing(self, module: str) -> list[Any]:
        """Whether `import <module>` fails on a plain install of the release (`pip install
        sglang==V`): never for a base requirement of the wheel (the handler is dead code
        there), always for a package only an extra declares (noted in `optional`: on a host
        that installed it the check passes, which the wizard cannot see); a package the wheel
        does not declare is not read."""
        requirements = self.walk.requirements
        name = module.lower().replace("_", "-")
        if name not in requirements:
            raise Impure(f"import {module} (not declared by the wheel)")
        extra = requirements[name]
        if extra is None:
            raise Impure(f"import {module} (a base requirement: never missing)")
        self.optional[module] = extra
        return ["const", True]

    def inline(self, call: ast.Call) -> ast.expr | None:
        """A call of a small pure helper (a module-level function of the argument code or of
        `HELPER_CODE`, its name defined once; else one the calling module defines or imports
        from the package, `_imported_function`: `is_muse_spark_architecture(architecture)`
        from `sglang/srt/layers/`) as the expression it returns, its parameters replaced by
        the call's arguments (read where the call stands) and its module's constants by their
        values; None for any other."""
        if self.depth >= _MAX_HELPER_DEPTH:
            return None
        func = call.func
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in RECEIVERS and self.fn is not None and self.fn.reads_flags):
            # `self._resolved_attention_backends()`: a ServerArgs method, `self` bound to the
            # record the caller reads
            methods = [fn for fn in self.walk.functions.get(func.attr, ())
                       if fn.cls == "ServerArgs" and isinstance(fn.node, ast.FunctionDef)]
            if len(methods) != 1 or not isinstance(methods[0].node, ast.FunctionDef):
                return None
            call = ast.Call(ast.Name(methods[0].node.name, ast.Load()),
                            [ast.Name(func.value.id, ast.Load()), *call.args], call.keywords)
            found = [(methods[0].path, methods[0].node)]
        elif isinstance(func, ast.Name):
            found = self._helper(call, func.id)
        else:
            return None
        if len(found) != 1:
            return None
        body = _helper_body(self.walk, *found[0], call)
        if body is not None:
            self.depth += 1
        return body


    def _helper(self, call: ast.Call, name: str) -> list[tuple[str, ast.FunctionDef]]:
        """The helper a call by name reaches: from inside an inlined helper's body (its calls
        carry that module, `_HELPER_MODULE`) the one that module has or imports; else the
        argument code's or `HELPER_CODE`'s (its name defined once), else one the calling
        module defines or imports from the package."""
        tree = self.walk.tree
        module: str | None = getattr(call, _HELPER_MODULE, None)
        candidates = self.walk.helpers.get(name, [])
        if module is not None:
            own = [h for h in candidates if h[0] == module]
            if len(own) == 1:
                return own
            found = _imported_function(tree, module, name, None)
            if found is not None:
                return [found]
        if len(candidates) == 1:
            return candidates
        if self.fn is not None:
            found = _imported_function(tree, self.fn.path, name, self.fn.node)
            if found is not None:
                return [found]
        return candidates


_MAX_HELPER_DEPTH = 8
_HELPER_MODULE = "_helper_module"  # attribute of a call in an inlined helper: the helper's module
_MUTATING = frozenset({"discard", "remove", "add", "append", "extend", "update", "pop", "clear",
                       "insert", "setdefault", "popitem", "difference_update",
                       "intersection_update", "symmetric_difference_update", "sort", "reverse"})


def _helper_body(walk: _Walk, path: str, function: ast.FunctionDef,
                 call: ast.Call) -> ast.expr | None:
    """The expression `function` returns for `call`: its body is a docstring, imports, plain
    `name = <expr>` locals and one final `return <expr>`; every name it reads is a parameter
    (bound by the call, or to a literal default), a local, a literal module constant of its
    module, or the name of a function it calls."""
    args = function.args
    if args.vararg or args.kwarg or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    positional = [*args.posonlyargs, *args.args]
    if len(call.args) > len(positional):
        return None
    bound: dict[str, ast.expr] = {p.arg: a for p, a in zip(positional, call.args, strict=False)}
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg in bound:
            return None
        bound[keyword.arg] = keyword.value
    defaults = dict(zip([p.arg for p in positional][len(positional) - len(args.defaults):],
                        args.defaults, strict=True))
    defaults.update({p.arg: d for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                     if d is not None})
    for param in [*positional, *args.kwonlyargs]:
        if param.arg not in bound:
            default = defaults.get(param.arg)
            if not isinstance(default, ast.Constant):
                return None
            bound[param.arg] = default
    if set(bound) - {p.arg for p in [*positional, *args.kwonlyargs]}:
        return None
    stmts = [stmt for stmt in function.body
             if not isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass)]
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
        stmts = stmts[1:]
    if not stmts or not isinstance(stmts[-1], ast.Return) or stmts[-1].value is None:
        return None
    called = {n.func.id for n in ast.walk(function)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    # `from sglang.test.test_utils import is_in_ci` inside the helper: its calls of that name
    # reach the imported function, not the module's own of the same name
    imported: dict[str, tuple[str, str]] = {}
    for stmt in function.body:
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                source = _import_source(walk.tree, path, alias.asname or alias.name, stmt)
                if source is not None:
                    imported[alias.asname or alias.name] = source

    # `envs` of `from sglang.srt.environ import envs`: `envs.X.get()` is an environment read
    module = getattr(walk.tree, "helpers", {}).get(path) or _parsed(walk.tree, path)
    registry = {"envs"} if module is not None and any(
        isinstance(n, ast.ImportFrom) and n.module == "sglang.srt.environ"
        and any(a.name == "envs" and a.asname is None for a in n.names)
        for n in module.body) else set()

    def substitute(node: ast.expr, names: dict[str, ast.expr]) -> ast.expr | None:
        free = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                and n.id not in names and n.id not in called and n.id not in registry}
        constants: dict[str, ast.expr] = {}
        for name in free:
            value = (_helper_constant(walk, path, name)
                     if path in getattr(walk.tree, "helpers", {}) else
                     _module_constant(walk.tree, path, name))
            if value is None:
                return None
            constants[name] = ast.parse(repr(value), mode="eval").body

        class Swap(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.AST:
                if n.id in names:
                    return copy.deepcopy(names[n.id])
                return copy.deepcopy(constants.get(n.id, n))

        own = copy.deepcopy(node)
        for sub in ast.walk(own):  # the helper's own calls resolve in its module
            if isinstance(sub, ast.Call) and not hasattr(sub, _HELPER_MODULE):
                if isinstance(sub.func, ast.Name) and sub.func.id in imported:
                    module, original = imported[sub.func.id]
                    sub.func.id = original
                    setattr(sub, _HELPER_MODULE, module)
                else:
                    setattr(sub, _HELPER_MODULE, path)
        return ast.fix_missing_locations(Swap().visit(own))

    scope = dict(bound)
    for stmt in stmts[:-1]:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            return None
        value = substitute(stmt.value, scope)
        if value is None:
            return None
        scope[stmt.targets[0].id] = value
    return substitute(stmts[-1].value, scope)


def _helper_constant(walk: _Walk, path: str, name: str) -> Any:
    """A literal module constant of a `HELPER_CODE` module (see `_module_constant`)."""
    module = getattr(walk.tree, "helpers", {}).get(path)
    if module is None:
        return None
    values = [stmt.value for stmt in module.body if isinstance(stmt, ast.Assign)
              and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
              and stmt.targets[0].id == name]
    if len(values) != 1:
        return None
    try:
        value = ast.literal_eval(values[0])
    except (ValueError, SyntaxError, TypeError):
        return None
    return value if value is None or isinstance(value, bool | int | float | str | tuple) else None


def _assigning_branches(stmt: ast.If, name: str,
                        ) -> list[tuple[list[tuple[ast.If, bool]], ast.Assign]] | None:
    """The branches of an `if` / `elif` / `else` chain, each ending in the one `name = value`
    of that branch (the tests on the way, the final assignment); None when a branch does not."""
    out: list[tuple[list[tuple[ast.If, bool]], ast.Assign]] = []
    node: ast.If | None = stmt
    tests: list[tuple[ast.If, bool]] = []
    while node is not None:
        last = _sole_assignment(node.body, name)
        if last is None:
            return None
        out.append(([*tests, (node, False)], last))
        tests = [*tests, (node, True)]
        orelse = node.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If):
            node = orelse[0]
            continue
        last = _sole_assignment(orelse, name)
        if last is None:
            return None
        out.append((tests, last))
        node = None
    return out


def _block_assignment(function: ast.AST, stores: list[ast.Name],
                      read: ast.Name) -> ast.Assign | None:
    """The only assignment of a local before the read, made in a nested body (an `if`'s, a
    `with`'s) before the statement of that same body the read is in: it holds whenever the read
    runs (the function's own top level is `local`'s walk). Stores after the read do not count
    unless a loop holds both."""
    loops = [n for n in ast.walk(function) if isinstance(n, ast.For | ast.While | ast.AsyncFor)
             and n.lineno <= read.lineno <= (n.end_lineno or n.lineno)]
    stores = [n for n in stores if n.lineno < read.lineno or any(
        loop.lineno <= n.lineno <= (loop.end_lineno or loop.lineno) for loop in loops)]
    if len(stores) != 1:
        return None
    for parent in ast.walk(function):
        if parent is function:
            continue
        for name in ("body", "orelse", "finalbody"):
            body = getattr(parent, name, None)
            if not isinstance(body, list):
                continue
            for index, stmt in enumerate(body):
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
                    continue
                target = stmt.targets[0]
                unpacked = (isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Call)
                            and all(isinstance(e, ast.Name) for e in target.elts)
                            and any(e is stores[0] for e in target.elts))
                if target is not stores[0] and not unpacked:
                    continue
                if not any(later.lineno <= read.lineno <= (later.end_lineno or later.lineno)
                           for later in body[index + 1:]):
                    return None
                if not unpacked:
                    return stmt
                # `major, _ = torch.cuda.get_device_capability()` in that body: the call's item
                assert isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Call)
                item = next(i for i, e in enumerate(target.elts) if e is stores[0])
                return ast.copy_location(ast.Assign([stores[0]], _call_item(stmt.value, item)),
                                         stmt)
    return None


def _sole_assignment(body: list[ast.stmt], name: str) -> ast.Assign | None:
    """The block's last statement when it is `name = value` and the block's only store of
    `name`, else None."""
    last = body[-1] if body else None
    stores = [n for b in body for n in ast.walk(b) if isinstance(n, ast.Name)
              and n.id == name and isinstance(n.ctx, ast.Store)]
    if (isinstance(last, ast.Assign) and len(last.targets) == 1
            and isinstance(last.targets[0], ast.Name) and last.targets[0].id == name
            and len(stores) == 1):
        return last
    return None


_MAX_CHOICES = 16


def _all_choices(walk: _Walk, conds: list[_Cond], archs: set[str], scopes: set[Scope],
                 optional: dict[str, str] | None = None,
                 ) -> tuple[list[Any], set[str], set[str]]:
    """`_condition`, and for a local chosen by tests the walk cannot read (`_Choice`) the
    conjunction of the condition read with each value in turn: the site holds for certain
    only when it holds whichever branch SGLang took."""
    try:
        return _condition(walk, conds, archs, scopes, optional)
    except _Choice as choice:
        if choice.key in walk.forced or len(walk.forced) >= 4:
            raise
        trees: list[Any] = []
        read: set[str] = set()
        resolved: set[str] = set()
        try:
            for branch in range(choice.count):
                walk.forced[choice.key] = branch
                tree, more_read, more_resolved = _all_choices(walk, conds, archs, scopes,
                                                              optional)
                trees.append(tree)
                read |= more_read
                resolved |= more_resolved
                if sum(len(str(t)) for t in trees) > 20000 or len(trees) > _MAX_CHOICES:
                    raise Impure("too many choices") from None
        finally:
            walk.forced.pop(choice.key, None)
        return ["and", *trees], read, resolved


def _is_torch_cuda_call(node: ast.expr, name: str) -> bool:
    """`torch.cuda.<name>()` without arguments (`is_available`, `get_device_capability`: the
    current GPU)."""
    return (isinstance(node, ast.Call) and not node.args and not node.keywords
            and isinstance(node.func, ast.Attribute) and node.func.attr == name
            and ast.unparse(node.func.value) in ("torch.cuda", "cuda"))


def _logic(node: ast.BoolOp | ast.Compare, expr: Callable[[ast.expr], list[Any]]) -> list[Any]:
    """`and` / `or` and (chained) comparisons as trees, their operands read with `expr`."""
    if isinstance(node, ast.BoolOp):
        return ["and" if isinstance(node.op, ast.And) else "or", *[expr(v) for v in node.values]]
    parts: list[list[Any]] = []
    left = expr(node.left)
    for cmpop, right_node in zip(node.ops, node.comparators, strict=True):
        right = expr(right_node)
        parts.append(["cmp", _CMP[type(cmpop)], left, right])
        left = right
    return parts[0] if len(parts) == 1 else ["and", *parts]


def _assigned(function: ast.AST, name: str) -> list[ast.expr]:
    """Every value a local is bound to by `name = ...` in a function; [] when it is also bound
    another way (a parameter, a loop target, `+=`, a tuple target)."""
    memo: dict[str, list[ast.expr]] = function.__dict__.setdefault("_assigned", {})
    if name not in memo:
        memo[name] = _read_assigned(function, name)
    return memo[name]


def _read_assigned(function: ast.AST, name: str) -> list[ast.expr]:
    values: list[ast.expr] = []
    plain: set[int] = set()
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name):
            values.append(node.value)
            plain.add(id(node.targets[0]))
    for node in ast.walk(function):
        if ((isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
             and id(node) not in plain) or (isinstance(node, ast.arg) and node.arg == name)):
            return []
    return values


# Model tests SGLang calls on the transformers config (`is_deepseek_dsa(hf_config)`), read from
# configs/model_config.py when their body is a readable expression over the config.
MODEL_TEST_FILE = "sglang/srt/configs/model_config.py"
_MAX_INLINE = 3


class _ModelTest:
    """One model-test function inlined into a condition tree: `config` (its first parameter) is
    the transformers config; `getattr(config, "architectures", None)` / `config.architectures` is
    the model's architecture list, `getattr(config, key, None) is (not) None` whether config.json
    sets `key`, `isinstance(config, dict)` is False (a PretrainedConfig), helpers of the same
    file are inlined with their literal arguments."""

    def __init__(self, walk: _Walk, function: ast.FunctionDef, path: str,
                 consts: dict[str, Any], depth: int) -> None:
        args = [a.arg for a in function.args.args]
        if not args or depth > _MAX_INLINE:
            raise Impure(f"model test {function.name}")
        self.walk, self.function, self.path, self.depth = walk, function, path, depth
        self.config = args[0]
        self.consts = consts
        self.locals: dict[str, ast.expr] = {}

    def body(self) -> list[Any]:
        """The tree of the function's returned expression."""
        return self.expr(self.returned())

    def returned(self) -> ast.expr:
        """The expression the function returns, its locals bound: the body is a docstring,
        plain `name = <expr>` locals, guards that change nothing and one final `return`."""
        stmts = list(self.function.body)
        if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
            stmts = stmts[1:]  # the docstring
        for stmt in stmts[:-1]:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id not in self.locals):
                self.locals[stmt.targets[0].id] = stmt.value
            elif (isinstance(stmt, ast.If) and not stmt.orelse
                  and self.is_dict_test(stmt.test)):
                continue  # `if isinstance(config, dict): ...`: never a transformers config
            elif self.is_empty_guard(stmt):
                continue  # `if not architectures: return None`: a lookup of [0] gives None too
            else:
                raise Impure(f"model test {self.function.name}: {type(stmt).__name__}")
        if not stmts or not isinstance(stmts[-1], ast.Return) or stmts[-1].value is None:
            raise Impure(f"model test {self.function.name}")
        return stmts[-1].value

    def is_empty_guard(self, stmt: ast.stmt) -> bool:
        """`if not <architectures local>: return None`: the lookup after it reads item 0, which
        the engine reads as None for an empty list, so the guard changes nothing."""
        return (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1
                and isinstance(stmt.body[0], ast.Return)
                and (stmt.body[0].value is None or (isinstance(stmt.body[0].value, ast.Constant)
                                                    and stmt.body[0].value.value is None))
                and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not)
                and self.key(stmt.test.operand) == "architectures")

    def registry_lookup(self, node: ast.expr) -> list[Any] | None:
        """`REGISTRY.get(<architectures>[0])` (a module-level dict of architecture names, its
        values anything) or a helper returning it: the first architecture and the dict's
        literal keys, for an `is (not) None` test."""
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Attribute):
            inner = self.helper(node)
            if inner is None:
                return None
            try:
                return inner.registry_lookup(inner.returned())
            except Impure:
                return None
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and len(node.args) == 1
                and isinstance(node.func.value, ast.Name)):
            return None
        arch = node.args[0]
        if not (isinstance(arch, ast.Subscript) and isinstance(arch.slice, ast.Constant)
                and arch.slice.value == 0 and self.key(arch.value) == "architectures"):
            return None
        keys = _module_dict_keys(self.walk.tree, self.path, node.func.value.id)
        if keys is None:
            return None
        return ["cmp", "in", ["index", ["model", "architectures"], 0], ["const", keys]]

    def is_dict_test(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance" and len(node.args) == 2
                and isinstance(node.args[0], ast.Name) and node.args[0].id == self.config
                and isinstance(node.args[1], ast.Name) and node.args[1].id == "dict")

    def key(self, node: ast.expr) -> str | None:
        """The config key an expression reads as `getattr(config, key, None)`, else None."""
        if isinstance(node, ast.Name) and node.id in self.locals:
            return self.key(self.locals[node.id])
        if isinstance(node, ast.IfExp) and self.is_dict_test(node.test):
            return self.key(node.orelse)
        if (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2
                and isinstance(node.values[1], ast.Tuple | ast.List) and not node.values[1].elts):
            return self.key(node.values[0])  # `getattr(config, "architectures", None) or ()`
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == self.config):
            return node.attr
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if (node.func.id == "getattr" and len(node.args) == 3
                    and isinstance(node.args[0], ast.Name) and node.args[0].id == self.config
                    and isinstance(node.args[2], ast.Constant) and node.args[2].value is None):
                name = self.const(node.args[1])
                return name if isinstance(name, str) else None
            inner = self.helper(node)
            if inner is not None:
                stmts = [s for s in inner.function.body
                         if not (isinstance(s, ast.If) and inner.is_dict_test(s.test))
                         and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                last = stmts[-1] if stmts else None
                if isinstance(last, ast.Return) and last.value is not None and len(stmts) == 1:
                    return inner.key(last.value)
        return None

    def const(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.consts:
            return self.consts[node.id]
        raise Impure(ast.unparse(node))

    def helper(self, node: ast.Call) -> _ModelTest | None:
        """A call of another function of the file with the config first, literals after."""
        if not (isinstance(node.func, ast.Name) and node.args
                and isinstance(node.args[0], ast.Name) and node.args[0].id == self.config):
            return None
        function = _test_function(self.walk, node.func.id)
        if function is None and self.path != MODEL_TEST_FILE:
            module = _parsed(self.walk.tree, self.path)
            local = [n for n in (module.body if module else [])
                     if isinstance(n, ast.FunctionDef) and n.name == node.func.id]
            function = local[0] if len(local) == 1 else None
        if function is None:
            return None
        params = [a.arg for a in function.args.args]
        if len(params) != len(node.args):
            return None
        consts = {p: self.const(a) for p, a in zip(params[1:], node.args[1:], strict=True)}
        return _ModelTest(self.walk, function, self.path, consts, self.depth + 1)

    def expr(self, node: ast.expr) -> list[Any]:
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return self.expr(self.locals[node.id])
            if node.id in self.consts:
                return ["const", self.consts[node.id]]
            constant = _module_constant(self.walk.tree, self.path, node.id)
            if constant is not None:
                return ["const", constant]
            raise Impure(node.id)
        if self.is_dict_test(node):
            return ["const", False]
        key = self.key(node)
        if key == "architectures":
            return ["model", "architectures"]
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
                node.ops[0], ast.Is | ast.IsNot) and isinstance(node.comparators[0], ast.Constant) \
                and node.comparators[0].value is None:
            lookup = self.registry_lookup(node.left)
            if lookup is not None:
                return lookup if isinstance(node.ops[0], ast.IsNot) else ["not", lookup]
            read = self.key(node.left)
            if read is not None and read.isidentifier():
                has = ["model", f"has:{read}"]
                return has if isinstance(node.ops[0], ast.IsNot) else ["not", has]
        if isinstance(node, ast.IfExp):
            if self.is_dict_test(node.test):
                return self.expr(node.orelse)
            return ["if", self.expr(node.test), self.expr(node.body), self.expr(node.orelse)]
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, int) and not isinstance(node.slice.value, bool)):
            return ["index", self.expr(node.value), node.slice.value]
        if isinstance(node, ast.Call):
            inner = self.helper(node)
            if inner is not None:
                return inner.body()
            raise Impure(ast.unparse(node))
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(
                node.value, bool | int | float | str)):
            return ["const", node.value]
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            values = [self.expr(e) for e in node.elts]
            if all(v[0] == "const" for v in values):
                items = [v[1] for v in values]
                return ["const", sorted(items, key=repr) if isinstance(node, ast.Set) else items]
            raise Impure(ast.unparse(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ["not", self.expr(node.operand)]
        if isinstance(node, ast.BoolOp | ast.Compare):
            return _logic(node, self.expr)
        raise Impure(ast.unparse(node))


def _module_dict_keys(tree: SourceTree, path: str, name: str) -> list[str] | None:
    """The string keys of a module-level dict literal `name = {"A": ..., ...}` (its values may be
    anything), sorted; None where `name` is not such a dict."""
    module = _parsed(tree, path)
    for stmt in module.body if module else []:
        target = (stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  else stmt.target if isinstance(stmt, ast.AnnAssign) else None)
        if not (isinstance(target, ast.Name) and target.id == name):
            continue
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Dict) and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys):
            return sorted(str(k.value) for k in value.keys if isinstance(k, ast.Constant))
        return None
    return None


def _test_function(walk: _Walk, name: str) -> ast.FunctionDef | None:
    found = [fn.node for fn in walk.functions.get(name, ())
             if fn.cls is None and fn.path == MODEL_TEST_FILE
             and isinstance(fn.node, ast.FunctionDef)]
    return found[0] if len(found) == 1 else None


def _model_test(walk: _Walk, name: str) -> list[Any]:
    """The condition tree of `name(hf_config)` (a model test of configs/model_config.py)."""
    function = _test_function(walk, name)
    if function is None:
        raise Impure(f"{name}(hf_config)")
    return _ModelTest(walk, function, MODEL_TEST_FILE, {}, 0).body()


_MODULES: dict[tuple[str, str], ast.Module | None] = {}


def _parsed(tree: SourceTree, path: str) -> ast.Module | None:
    """A module of the release's package: the argument code's own parse, else the file read
    from the wheel (a constant or helper the argument code imports from elsewhere)."""
    module = tree.trees.get(path)
    if module is not None:
        return module
    key = (str(tree.root), path)
    if key not in _MODULES:
        file = tree.root / path
        try:
            _MODULES[key] = ast.parse(file.read_text(encoding="utf-8")) if file.is_file() \
                else None
        except (SyntaxError, OSError, ValueError):
            _MODULES[key] = None
    return _MODULES[key]


def _import_source(tree: SourceTree, path: str, name: str,
                   scope: ast.AST | None = None) -> tuple[str, str] | None:
    """(module file, name there) of `from sglang... import name` in the module or `scope`
    (a function importing lazily), when the module is a file of the release's package."""
    nodes = [scope] if scope is not None else []
    module = _parsed(tree, path)
    if module is not None:
        nodes.append(module)
    for node in nodes:
        for imp in ast.walk(node):
            if not (isinstance(imp, ast.ImportFrom) and imp.module and imp.level == 0
                    and imp.module.split(".")[0] == "sglang"):
                continue
            for alias in imp.names:
                if (alias.asname or alias.name) == name:
                    base = imp.module.replace(".", "/")
                    for rel in (f"{base}.py", f"{base}/__init__.py"):
                        if _parsed(tree, rel) is not None:
                            return rel, alias.name
    return None


def _imported_function(tree: SourceTree, path: str, name: str, scope: ast.AST | None,
                       ) -> tuple[str, ast.FunctionDef] | None:
    """A top-level function `name` of the module itself or imported from the package."""
    where: tuple[str, str] | None = (path, name)
    module = _parsed(tree, path)
    if module is None or not any(isinstance(n, ast.FunctionDef) and n.name == name
                                 for n in module.body):
        where = _import_source(tree, path, name, scope)
    if where is None:
        return None
    found = [n for n in (_parsed(tree, where[0]) or ast.Module([], [])).body
             if isinstance(n, ast.FunctionDef) and n.name == where[1]]
    return (where[0], found[0]) if len(found) == 1 else None


def _is_mla_test(node: ast.expr | None) -> bool:
    """`<model config>.attention_arch == AttentionArch.MLA` (SGLang's `use_mla_backend`)."""
    return (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], ast.Eq) and isinstance(node.left, ast.Attribute)
            and node.left.attr == "attention_arch"
            and isinstance(node.comparators[0], ast.Attribute)
            and node.comparators[0].attr == "MLA"
            and isinstance(node.comparators[0].value, ast.Name)
            and node.comparators[0].value.id == "AttentionArch")


def _is_hf_config(node: ast.expr) -> bool:
    """`<x>.hf_config` or `<receiver>.get_hf_config()`: the model's transformers config."""
    if isinstance(node, ast.Attribute):
        return node.attr == "hf_config"
    return (isinstance(node, ast.Call) and not node.args and not node.keywords
            and isinstance(node.func, ast.Attribute) and node.func.attr == "get_hf_config"
            and isinstance(node.func.value, ast.Name) and node.func.value.id in RECEIVERS)


SPEC_INFO = "sglang/srt/speculative/spec_info.py"


def _spec_algorithm_call(node: ast.expr) -> ast.expr | None:
    """The argument of `SpeculativeAlgorithm.from_string(arg)`, else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "from_string" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "SpeculativeAlgorithm" and len(node.args) == 1
            and not node.keywords):
        return node.args[0]
    return None


def _spec_class(walk: _Walk) -> ast.ClassDef | None:
    module = _parsed(walk.tree, SPEC_INFO)
    return next((n for n in (module.body if module is not None else ())
                 if isinstance(n, ast.ClassDef) and n.name == "SpeculativeAlgorithm"), None)


def _spec_member(walk: _Walk, name: list[Any]) -> list[Any]:
    """`SpeculativeAlgorithm.from_string(name)` as the name of the member it returns: NONE for
    None, else the upper-cased name, a reserved alias (`_RESERVED_ALIASES`, NEXTN) as the
    member `from_string` returns for it. An unknown name raises in SGLang before any test
    reads the member (argparse choices), so it is not modelled."""
    cls = _spec_class(walk)
    method = next((n for n in (cls.body if cls is not None else ())
                   if isinstance(n, ast.FunctionDef) and n.name == "from_string"), None)
    if method is None or "cls.NONE" not in ast.unparse(method):
        raise Impure("SpeculativeAlgorithm.from_string")
    upper: list[Any] = ["str", "upper", name]
    for test in ast.walk(method):
        if (isinstance(test, ast.If) and "_RESERVED_ALIASES" in ast.unparse(test.test)
                and isinstance(test.body[0], ast.Return)
                and isinstance(test.body[0].value, ast.Attribute)):
            aliases = _module_constant(walk.tree, SPEC_INFO, "_RESERVED_ALIASES")
            if not isinstance(aliases, list | tuple | set | frozenset):
                raise Impure("SpeculativeAlgorithm.from_string (aliases)")
            upper = ["if", ["cmp", "in", upper, ["const", sorted(aliases)]],
                     ["const", test.body[0].value.attr], upper]
    return ["if", ["cmp", "is", name, ["const", None]], ["const", "NONE"], upper]


def _is_spec_member(tree: list[Any]) -> bool:
    """A tree `_spec_member` built (an `if` whose None branch is the NONE member), or a choice
    between such members and None (`algo = None`, then `algo = from_string(...)` under a test)."""
    if len(tree) != 4 or tree[0] != "if":
        return False
    if (tree[2] == ["const", "NONE"] and isinstance(tree[1], list)
            and tree[1][:2] == ["cmp", "is"] and tree[1][3] == ["const", None]):
        return True
    return all(branch == ["const", None] or _is_spec_member(branch) for branch in tree[2:])


def _spec_method(walk: _Walk, name: str) -> Callable[[list[Any]], list[Any]] | None:
    """`SpeculativeAlgorithm.<name>()` read from its one `return` as a test of the member's
    name: `self == / != / is SpeculativeAlgorithm.X`, `self in (A, B)`, `and` / `or` / `not`
    of those and of other such methods; None when the method is another shape."""
    methods = walk.spec_methods
    if methods is None:
        cls = _spec_class(walk)
        methods = walk.spec_methods = {n.name: n for n in (cls.body if cls is not None else ())
                                       if isinstance(n, ast.FunctionDef)}

    def member(node: ast.expr) -> str | None:
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in ("SpeculativeAlgorithm", "cls")):
            return node.attr
        return None

    def test(node: ast.expr, self_tree: list[Any], depth: int) -> list[Any]:
        if depth > 8:
            raise Impure("SpeculativeAlgorithm (recursion)")
        if isinstance(node, ast.BoolOp):
            return ["and" if isinstance(node.op, ast.And) else "or",
                    *(test(v, self_tree, depth) for v in node.values)]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ["not", test(node.operand, self_tree, depth)]
        if (isinstance(node, ast.Call) and not node.args and not node.keywords
                and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "self"):
            return body(node.func.attr, self_tree, depth + 1)
        if (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.left, ast.Name) and node.left.id == "self"):
            op, right = node.ops[0], node.comparators[0]
            if isinstance(op, ast.Eq | ast.Is | ast.NotEq | ast.IsNot):
                name = member(right)
                if name is not None:
                    equal = ["cmp", "==", self_tree, ["const", name]]
                    return equal if isinstance(op, ast.Eq | ast.Is) else ["not", equal]
            if isinstance(op, ast.In | ast.NotIn) and isinstance(right, ast.Tuple | ast.List
                                                                  | ast.Set):
                names = [member(e) for e in right.elts]
                if all(names):
                    inside = ["cmp", "in", self_tree, ["const", sorted(str(n) for n in names)]]
                    return inside if isinstance(op, ast.In) else ["not", inside]
        raise Impure(f"SpeculativeAlgorithm: {ast.unparse(node)}")

    def body(method_name: str, self_tree: list[Any], depth: int) -> list[Any]:
        method = methods.get(method_name)
        statements = [s for s in (method.body if method is not None else [])
                      if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if (len(statements) != 1 or not isinstance(statements[0], ast.Return)
                or statements[0].value is None):
            raise Impure(f"SpeculativeAlgorithm.{method_name}")
        return test(statements[0].value, self_tree, depth)

    if name not in methods:
        return None
    return lambda self_tree: body(name, self_tree, 0)


def _module_constant(tree: SourceTree, path: str, name: str, depth: int = 0) -> Any:
    """A module-level name bound once to a literal (a tuple / list / set of literals, a
    string, a number; a union `A | frozenset({...})` of such sets) and never rebound in the
    module, or one the module imports from another module of the package, else None."""
    if depth:
        return _read_module_constant(tree, path, name, depth)
    memo: dict[tuple[str, str], Any] = tree.__dict__.setdefault("_constants", {})
    key = (path, name)
    if key not in memo:
        memo[key] = _read_module_constant(tree, path, name, 0)
    return memo[key]


def _module_bindings(module: ast.Module, name: str) -> tuple[list[ast.expr], int]:
    """The values a module's top level binds `name` to, and how often anything stores it."""
    values = [stmt.value for stmt in module.body if isinstance(stmt, ast.Assign)
              and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)]
    values += [stmt.value for stmt in module.body if isinstance(stmt, ast.AnnAssign)
               and isinstance(stmt.target, ast.Name) and stmt.target.id == name and stmt.value]
    stored = sum(1 for n in ast.walk(module) if isinstance(n, ast.Name) and n.id == name
                 and isinstance(n.ctx, ast.Store))
    return values, stored


def _read_module_constant(tree: SourceTree, path: str, name: str, depth: int) -> Any:
    module = _parsed(tree, path)
    if module is None or depth > 4:
        return None
    values, stored = _module_bindings(module, name)
    if not values and not stored:
        source = _import_source(tree, path, name)
        return _module_constant(tree, *source, depth + 1) if source is not None else None
    if len(values) != 1 or stored != 1:
        return None
    node = values[0]
    keys = _dict_keys(tree, path, node)
    if keys is not None:
        return keys
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)):
        parts = [_constant_part(tree, path, side, depth) for side in (node.left, node.right)]
        if all(isinstance(p, list) for p in parts):
            return sorted({*parts[0], *parts[1]}, key=repr)
        return None
    return _literal(node)


def _dict_keys(tree: SourceTree, path: str, node: ast.expr) -> list[str] | None:
    """The string keys of a module-level dict, sorted, read where only membership is asked
    (`backend in _NVFP4_PREFILL_DEQUANT_DTYPE`: a key list answers it alike): a literal
    `{"a": ..., "b": ...}`, or `{v: k for k, v in OTHER.items()}` over such a literal (its
    values then). None for any other dict (a subscript of the list would not be the dict's)."""
    if isinstance(node, ast.Dict):
        if node.keys and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                             for k in node.keys):
            return sorted(str(k.value) for k in node.keys)  # type: ignore[union-attr]
        return None
    if not (isinstance(node, ast.DictComp) and len(node.generators) == 1):
        return None
    loop = node.generators[0]
    source = loop.iter
    if (loop.ifs or loop.is_async or not isinstance(loop.target, ast.Tuple)
            or len(loop.target.elts) != 2 or not isinstance(node.key, ast.Name)
            or not isinstance(source, ast.Call) or source.args
            or not isinstance(source.func, ast.Attribute) or source.func.attr != "items"
            or not isinstance(source.func.value, ast.Name)):
        return None
    names = [e.id if isinstance(e, ast.Name) else None for e in loop.target.elts]
    if node.key.id not in names:
        return None
    module = _parsed(tree, path)
    values, stored = (_module_bindings(module, source.func.value.id) if module is not None
                      else ([], 0))
    literal = values[0] if len(values) == 1 and stored == 1 else None
    if not isinstance(literal, ast.Dict):
        return None
    column = literal.keys if names.index(node.key.id) == 0 else literal.values
    if not all(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in column):
        return None
    return sorted({str(c.value) for c in column})  # type: ignore[union-attr]


def _literal(node: ast.expr) -> Any:
    """The value of a literal (a tuple / list / set of literals, a string, a number; a set
    sorted), else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1
            and node.func.id in ("frozenset", "set", "tuple", "list") and not node.keywords):
        node = node.args[0]  # `_ARCHS = frozenset({"A", "B"})`
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    if isinstance(value, tuple | list | set | frozenset):
        items = list(value)
        if all(v is None or isinstance(v, bool | int | float | str) for v in items):
            return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
        return None
    return value if isinstance(value, bool | int | float | str) else None


def _class_constant(tree: SourceTree, path: str, cls: str, name: str) -> Any:
    """A class attribute bound once, unannotated, in the class body to a literal,
    else None: `ServerArgs.LANGUAGE_MODEL_ONLY_ARCHITECTURES = ("A", "B")`."""
    memo: dict[tuple[str, str, str], Any] = tree.__dict__.setdefault("_class_constants", {})
    key = (path, cls, name)
    if key not in memo:
        module = _parsed(tree, path)
        body = next((stmt.body for stmt in (module.body if module is not None else [])
                     if isinstance(stmt, ast.ClassDef) and stmt.name == cls), [])
        values = [stmt.value for stmt in body if isinstance(stmt, ast.Assign)
                  and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                  and stmt.targets[0].id == name]
        # (an annotated one is a dataclass field: a value per record, not a constant)
        memo[key] = _literal(values[0]) if len(values) == 1 else None
    return memo[key]


def _constant_part(tree: SourceTree, path: str, node: ast.expr, depth: int) -> Any:
    """One side of a constant set union: a name of the module or a literal set."""
    if isinstance(node, ast.Name):
        return _module_constant(tree, path, node.id, depth + 1)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1
            and node.func.id in ("frozenset", "set") and not node.keywords):
        node = node.args[0]
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    return sorted(value, key=repr) if isinstance(value, set | frozenset) else None


def _is_param(function: ast.AST, name: str) -> bool:
    """`name` is a parameter of the function that nothing in it rebinds."""
    args = getattr(function, "args", None)
    if args is None or name not in {a.arg for a in (*args.posonlyargs, *args.args,
                                                     *args.kwonlyargs)}:
        return False
    return not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                   for n in ast.walk(function))


def _envs_field(node: ast.expr) -> str | None:
    """`envs.SGLANG_X`: the field's name."""
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "envs"):
        return node.attr
    return None


def _is_view_call(node: ast.expr) -> bool:
    """`resolved_view(server_args)` / `resolving_view(cfg)` / `self._resolved()`: a view of the
    record itself."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "_resolved" and not node.args and not node.keywords
            and isinstance(node.func.value, ast.Name) and node.func.value.id in RECEIVERS):
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id.endswith("_view") and len(node.args) == 1 and not node.keywords
            and isinstance(node.args[0], ast.Name) and node.args[0].id in RECEIVERS)


def _condition(walk: _Walk, conds: list[_Cond], archs: set[str] | None = None,
               scopes: set[Scope] | None = None, optional: dict[str, str] | None = None,
               reader: type[_Reader] | None = None) -> tuple[list[Any], set[str], set[str]]:
    """The conjunction of `conds` as a tree, the flags it reads and those read resolved;
    `archs` collects the architectures whose overrides may write what it reads (`scopes`: the
    overrides that write it only when a condition holds), `optional` the packages of extras
    it assumes missing (`_Reader.missing`); `reader` the reader class (`_Reader`)."""
    make = reader or _Reader
    parts: list[list[Any]] = []
    read: set[str] = set()
    resolved: set[str] = set()
    for cond in conds:
        if cond.node is None:
            raise Impure(cond.text or "unreadable")
        this = make(walk, cond.fn, cond.seq, cond.instance)
        tree = this.expr(cond.node)
        read |= this.read
        resolved |= this.resolved
        if archs is not None:
            archs |= this.archs
        if scopes is not None:
            scopes |= this.scopes
        if optional is not None:
            optional.update(this.optional)
        elif this.optional:
            raise Impure("a write under a package probe")
        parts.append(["not", tree] if cond.negate else tree)
    if not parts:
        raise Impure("unconditional")
    return (parts[0] if len(parts) == 1 else ["and", *parts]), read, resolved


def _arch_scope(walk: _Walk, conds: list[_Cond]) -> frozenset[str] | None:
    """The architectures a path is limited to by one of its (taken) tests `<arch> in (...)` /
    `<arch> == "..."`, where `<arch>` is `....architectures[0]` or a local bound once to it:
    a write under such a test happens only for those models, whatever else its path reads."""
    tests: list[tuple[_Cond, ast.Compare]] = []
    for cond in conds:
        if cond.node is None:
            continue
        if cond.negate:  # `if arch not in X: return` before the write: `not (arch not in X)`
            if (isinstance(cond.node, ast.Compare) and len(cond.node.ops) == 1
                    and isinstance(cond.node.ops[0], ast.NotIn | ast.NotEq)):
                tests.append((cond, cond.node))
            continue
        stack = [cond.node]
        while stack:  # the conjuncts of `a and (b and c)`
            node = stack.pop()
            if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
                stack.extend(node.values)
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
                    node.ops[0], ast.In | ast.Eq):
                tests.append((cond, node))
    for cond, node in tests:
        left = node.left
        if isinstance(left, ast.Name) and cond.fn is not None:
            bound = walk.bindings.get((id(cond.fn.node), left.id, cond.instance))
            left = bound[0] if bound is not None else left
        if not (isinstance(left, ast.Subscript) and isinstance(left.value, ast.Attribute)
                and left.value.attr == "architectures" and isinstance(left.slice, ast.Constant)
                and left.slice.value == 0):
            continue
        right = node.comparators[0]
        try:
            value = ast.literal_eval(right)
        except (ValueError, SyntaxError, TypeError):
            value = (_module_constant(walk.tree, cond.fn.path, right.id)
                     if isinstance(right, ast.Name) and cond.fn is not None else None)
        if isinstance(value, str):
            return frozenset({value})
        if isinstance(value, list | tuple | set | frozenset) and value and all(
                isinstance(v, str) for v in value):
            return frozenset(value)
    return None


def _replayable(walk: _Walk, name: str, seq: int) -> tuple[set[str], set[Scope]]:
    """Make `name`, written before `seq`, readable there: every write before it must be one the
    engine can replay (a write under a readable path, kept in `walk.replayed`: its value when
    readable, else the field is unknown once the path holds) or one limited to some
    architectures (returned: a site reading the field
    is not reported for those models, nor for a model whose architecture is unknown; with the
    scopes of the overrides that write it only under a readable condition, `_scope`).
    Raises `Impure` otherwise."""
    archs: set[str] = set()
    scopes: set[Scope] = set()
    scoped = walk.scoping
    replayed = (walk.replayed_in_scope.setdefault(_scoped_key(scoped), {}) if scoped is not None
                else walk.replayed)
    for write in walk.write_log.get(name, []):
        if write.seq >= seq or (scoped is not None and (
                (write.flag, write.seq) == (scoped.flag, scoped.seq)
                or (write.seq < 0 and write.fn is not None and scoped.fn is not None
                    and write.fn.node is scoped.fn.node))):
            continue
        if write.override and walk.registry is not None and seq <= walk.registry[0]:
            continue  # (the registry has not run yet where it is read)
        if write.archs is not None and scoped is None and write.override == "named":
            entry = _override_replay(walk, write, seq)
            if entry is not None:
                archs |= set(entry["archs"])
                scopes |= entry["scopes"]
                continue
        if write.archs is not None:
            # (inside another override's condition: not read, that condition part holds)
            scope = None if scoped is not None else _scope(walk, write, seq)
            if scope is None:
                archs |= write.archs
            else:
                scopes.add(scope)
            continue
        key = (name, write.seq)
        if key in replayed:
            entry = replayed[key]
            if entry is None:  # being read right now (a write reading its own field)
                raise Impure(f"{name} is written from itself")
            archs |= set(entry["archs"])
            scopes |= entry["scopes"]
            continue
        try:
            if write.conds is None:
                raise Impure(f"{name} is written before")
            replayed[key] = None
            inner: set[str] = set()
            inner_scopes: set[Scope] = set()
            condition, read, resolved = (_condition(walk, write.conds, inner, inner_scopes)
                                         if write.conds else (["const", True], set(), set()))
        except Impure as why:
            replayed.pop(key, None)
            limited = _arch_scope(walk, write.conds) if write.conds else None
            if limited is None:
                raise Impure(f"{name} is written before ({str(why)[:60]})") from None
            # (its readable tests, a GPU probe say, still bound when it may run: a scope)
            scope = (None if scoped is not None
                     else _scope(walk, replace(write, archs=limited), seq))
            if scope is None:
                archs |= limited
            else:
                scopes.add(scope)
            continue
        value: list[Any] | None = None  # a value it cannot read: unknown after the write
        if write.value is not None:
            reader = _Reader(walk, write.fn, write.seq, write.instance)
            try:
                value = reader.expr(write.value)
            except Impure:
                pass
            else:
                inner |= reader.archs
                inner_scopes |= reader.scopes
                read |= reader.read
                resolved |= reader.resolved
        archs |= inner
        scopes |= inner_scopes
        replayed[key] = {
            "field": name, "seq": write.seq, "condition": condition, "value": value,
            "defaults": {}, "read": sorted(read), "resolved": sorted(resolved),
            "archs": sorted(inner), "scopes": inner_scopes,
        }
    return archs, scopes


def _override_replay(walk: _Walk, write: _Write, seq: int) -> dict[str, Any] | None:
    """A registered override's write (`write.override == "named"`) replayed where the launch
    path runs the registry (`walk.registry`, before `seq`), when the whole write is readable
    there: its condition is the model's architecture among the override's, the path to the
    registry's call and the override's own path to the write (its tests read the record as it
    stands at that call: the registry's declarations are applied after it returns); its value
    the write's. None (the caller keeps the override's scope) when a part is unreadable, when
    another override of one of these architectures writes the field too (their order), or when
    a test reads a field such an override writes."""
    registry = walk.registry
    if (registry is None or registry[0] >= seq or write.archs is None or write.fn is None
            or write.conds is None or write.value is None):
        return None
    for other in walk.write_log.get(write.flag, []):
        if (other.override and other.fn is not None and other.fn.node is not write.fn.node
                and (other.archs is None or other.archs & write.archs)):
            return None
    key = (write.flag, _override_key(walk, write))
    if key in walk.replayed:
        return walk.replayed[key]
    walk.replayed[key] = None
    at, call_path = registry
    archs: set[str] = set()
    scopes: set[Scope] = set()
    try:
        parts: list[Any] = [["cmp", "in", ["model", "architecture"],
                             ["const", sorted(write.archs)]]]
        read: set[str] = set()
        resolved: set[str] = set()
        conds = [*call_path, *[replace(cond, seq=at) for cond in write.conds]]
        if conds:
            tree, read, resolved = _condition(walk, conds, archs, scopes)
            parts += tree[1:] if tree[0] == "and" else [tree]
        reader = _Reader(walk, write.fn, at)
        value = reader.expr(write.value)
    except Impure:
        walk.replayed.pop(key, None)
        return None
    archs |= reader.archs
    scopes |= reader.scopes
    if archs & write.archs or any(set(scope[0]) & write.archs for scope in scopes):
        walk.replayed.pop(key, None)  # (a field an override of these models writes is read)
        return None
    entry = walk.replayed[key] = {
        "field": write.flag, "seq": at, "condition": ["and", *parts], "value": value,
        "defaults": {}, "read": sorted(read | reader.read),
        "resolved": sorted(resolved | reader.resolved), "archs": sorted(archs),
        "scopes": scopes,
    }
    return entry


def _override_key(walk: _Walk, write: _Write) -> int:
    """A replayed override write's key in `walk.replayed` (beside the launch path's `(field,
    seq)`): negative, in source order (a later write of the same override wins)."""
    assert write.fn is not None and write.value is not None
    files = sorted(walk.tree.trees)
    index = files.index(write.fn.path) if write.fn.path in files else len(files)
    return -(1 << 40) + index * (1 << 20) + write.value.lineno * 64 + write.value.col_offset % 64


def _as_typed(tree: Any, names: set[str]) -> Any:
    """`tree` with its reads of the flags `names` as typed (`["typed", name]`)."""
    if isinstance(tree, list) and len(tree) == 2 and tree[0] == "flag" and tree[1] in names:
        return ["typed", tree[1]]
    if isinstance(tree, list) and tree and tree[0] != "const":
        return [_as_typed(part, names) for part in tree]
    return tree


def _marker_branches(walk: _Walk, name: str,
                     ) -> tuple[_Fn, ast.If, tuple[ast.expr, ast.expr], int] | None:
    """The one walked `if` whose body and `else` each set the private attribute `name` of the
    record (`<receiver>.name = value`, one statement each, and no other store of it in the
    argument code): its function, the statement, the two values and its seq."""
    stores: list[ast.stmt] = []
    for module in walk.tree.trees.values():
        for node in ast.walk(module):
            targets = (node.targets if isinstance(node, ast.Assign) else [node.target]
                       if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
            if any(isinstance(t, ast.Attribute) and t.attr == name for t in targets):
                stores.append(node)  # type: ignore[arg-type]
            elif isinstance(node, ast.Call) and any(
                    isinstance(a, ast.Constant) and a.value == name for a in node.args):
                return None  # (`setattr(x, "_name", v)`)
    if len(stores) != 2 or not all(
            isinstance(st, ast.Assign) and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Attribute)
            and isinstance(st.targets[0].value, ast.Name)
            and st.targets[0].value.id in RECEIVERS for st in stores):
        return None
    for fn, stmt, _path, seq in walk.blocks.values():
        if (isinstance(stmt, ast.If) and any(st is stores[0] for st in stmt.body)
                and any(st is stores[1] for st in stmt.orelse)):
            first, second = stores
            assert isinstance(first, ast.Assign) and isinstance(second, ast.Assign)
            return fn, stmt, (first.value, second.value), seq
    return None


def _scoped_key(write: _Write) -> int:
    """The cache of replays made while `write`'s scope is read: one per override function (its
    own writes are left out of them), else per write."""
    return id(write.fn.node) if write.fn is not None else id(write)


def _conjuncts(node: ast.expr | None, negate: bool) -> Iterator[tuple[ast.expr, bool]]:
    """A test (negated or not) as the parts that must all hold: `a and b` taken, `a or b` not
    taken (`not a`, `not b`), `not a` flipped; nothing for a test the walk cannot read."""
    if node is None:
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield from _conjuncts(node.operand, not negate)
    elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or if negate else ast.And):
        for value in node.values:
            yield from _conjuncts(value, negate)
    else:
        yield node, negate


def _scope(walk: _Walk, write: _Write, seq: int) -> Scope | None:
    """An override's write (limited to `write.archs`) read at `seq` as (its architectures, the
    condition under which it may run, the defaults of the flags that reads): the conjunction of
    the readable tests on its path in the override (a test it cannot read, or one over a field
    an override of one of these architectures writes, counts as holding; overrides of other
    models do not run for these), None when none is readable. The engine
    abstains for those architectures only when the condition holds on the values as typed or as
    they stand at the reading site (an override reads the record as it is when the registry
    runs, which is between the two)."""
    if walk.scoping is not None or write.archs is None:
        return None
    walk.scoping = write
    parts: list[Any] = []
    read: set[str] = set()
    try:
        for cond in write.conds or []:
            for node, negate in _conjuncts(cond.node, cond.negate):
                reader = _Reader(walk, write.fn, seq)
                try:
                    tree = reader.expr(node)
                except Impure:
                    continue
                if reader.archs & write.archs or any(
                        set(scope[0]) & write.archs for scope in reader.scopes):
                    continue  # (a field an override for these same models writes)
                part = ["not", tree] if negate else tree
                if _holds_for_archs(part, write.archs):
                    continue  # (an architecture test the scope's own architectures pass)
                parts.append(part)
                read |= reader.read
    finally:
        walk.scoping = None
    if not parts:
        return None
    tree = parts[0] if len(parts) == 1 else ["and", *parts]
    return (tuple(sorted(write.archs)), json.dumps(tree),
            json.dumps({name: walk.defaults.get(name) for name in sorted(read)}))


def _holds_for_archs(tree: list[Any], archs: frozenset[str]) -> bool:
    """A test of the model's architecture alone (`arch in [...]`, `arch == "X"`, `"Llama4" in
    arch`, negated) that every one of `archs` passes: implied by the scope's architectures."""
    negate = tree[0] == "not"
    test = tree[1] if negate else tree
    if not (isinstance(test, list) and len(test) == 4 and test[0] == "cmp"
            and test[1] in ("in", "==", "!=")):
        return False
    left, right = test[2], test[3]
    arch = ["model", "architecture"]
    if test[1] != "in":  # `arch == "X"` / `arch != "X"`
        other = right if left == arch else left if right == arch else None
        if other is None or other[0] != "const" or not isinstance(other[1], str):
            return False
        results = {(name == other[1]) == (test[1] == "==") for name in archs}
    elif right == arch and left[0] == "const" and isinstance(left[1], str):
        results = {(left[1] in name) for name in archs}
    elif left == arch and right[0] == "const" and isinstance(right[1], list | tuple):
        results = {(name in right[1]) for name in archs}
    else:
        return False
    return results == {not negate}


def _resolved_writes(walk: _Walk) -> None:
    """Replay SGLang's plain writes of the fields the engine resolves itself (`RESOLVED_FIELDS`)
    where the whole write is readable: a path the walk reads, a value it reads (where it reads a
    field some model override rewrites, those architectures keep the engine's value:
    `skip_archs` / `skip_if`). The engine applies them at their place on the launch path, so a
    write none of its steps models (`disable_radix_cache = True` for a PD decode server) reaches the values
    it resolves, the later checks and the effective table."""
    for name, log in walk.write_log.items():
        if canonical_dest(name) not in RESOLVED_FIELDS:
            continue
        for write in log:
            key = (name, write.seq)
            if (write.override == "named" and write.archs is not None
                    and walk.registry is not None):
                _resolved_override(walk, write)
                continue
            if (key in walk.replayed or write.seq < 0 or write.conds is None
                    or write.archs is not None or write.value is None):
                continue
            walk.replayed[key] = None
            inner: set[str] = set()
            scopes: set[Scope] = set()
            try:
                condition, read, resolved = (_condition(walk, write.conds, inner, scopes)
                                             if write.conds else (["const", True], set(), set()))
                reader = _Reader(walk, write.fn, write.seq, write.instance)
                value = reader.expr(write.value)
            except Impure:
                walk.replayed.pop(key, None)
                continue
            read |= reader.read
            if any(canonical_dest(n) in RESOLVED_FIELDS for n in read):
                # (over a field the engine resolves, a write could land on the other side of
                # the step that resolves it: the engine's steps model those writes)
                walk.replayed.pop(key, None)
                continue
            # (a field some model override rewrites is read: for those architectures the
            # engine keeps its own value, `skip_archs`)
            skip = inner | reader.archs
            skip_if = _scopes_json(scopes | reader.scopes, skip)
            walk.replayed[key] = {
                "field": name, "seq": write.seq, "condition": condition, "value": value,
                "defaults": {}, "read": sorted(read),
                "resolved": sorted(resolved | reader.resolved), "archs": [], "scopes": set(),
                **({"skip_archs": sorted(skip)} if skip else {}),
                **({"skip_if": skip_if} if skip_if else {}),
            }


def _resolved_override(walk: _Walk, write: _Write) -> None:
    """A registered override's write of a field the engine resolves, replayed where the launch
    path runs the registry (`_override_replay`) when it reads no field the engine resolves
    (DeepSeek's MLA prefill context parallelism turns DP attention on: `overrides[
    "enable_dp_attention"] = True` under `enable_prefill_cp and use_mla_backend(...)`)."""
    assert walk.registry is not None
    entry = _override_replay(walk, write, walk.registry[0] + 1)
    if entry is not None and any(canonical_dest(n) in RESOLVED_FIELDS for n in entry["read"]):
        walk.replayed.pop((write.flag, _override_key(walk, write)), None)


def _message(node: ast.expr | None, flags: frozenset[str],
             reader: _Reader | None = None) -> list[Any] | None:
    """The message's literal parts and flag (and model fact) placeholders; None when it is
    not a literal."""
    if node is None:
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        out: list[Any] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                out.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                inner = value.value
                spec = ast.unparse(value.format_spec)[2:-1] if value.format_spec else None
                conv = chr(value.conversion) if value.conversion and value.conversion > 0 else None
                fact = reader.model_fact(inner) if reader is not None else None
                read = _message_value(inner, reader) if fact is None else None
                if (isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)
                        and inner.value.id in RECEIVERS and inner.attr in flags):
                    out.append({"flag": inner.attr, "conv": conv, "spec": spec})
                elif fact is not None:
                    out.append({"model": fact, "conv": conv, "spec": spec})
                elif read is not None and read[0] == "flag":
                    out.append({"flag": read[1], "conv": conv, "spec": spec})
                elif read is not None and read[0] == "model":
                    out.append({"model": read[1], "conv": conv, "spec": spec})
                elif read is not None and read[0] == "env":
                    out.append({"env": read, "conv": conv, "spec": spec})
                elif read is not None and read[0] == "const" and not spec:
                    value = read[1]
                    out.append(repr(value) if conv == "r" else str(value))
                elif (tree := _message_tree(inner, reader) if fact is None else None) is not None:
                    # a value SGLang computes from flags (`threshold = config.get(...)`): the
                    # engine evaluates it as it evaluates the site's condition
                    out.append({"expr": tree[0], "defaults": tree[1], "conv": conv,
                                "spec": spec, "text": "{" + ast.unparse(inner) + "}"})
                else:
                    out.append("{" + ast.unparse(inner) + "}")
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _message(node.left, flags, reader), _message(node.right, flags, reader)
        return None if left is None or right is None else [*left, *right]
    return None


def _message_value(node: ast.expr, reader: _Reader | None) -> list[Any] | None:
    """A placeholder of a message read as a flag, a model fact or a constant (a parameter bound
    to `cfg.flag`, `sorted(<module constant>)`), else None. `architecture` bound to
    `architectures[0] if architectures else None` is the model's architecture."""
    if reader is None:
        return None
    sort = (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "sorted" and len(node.args) == 1 and not node.keywords)
    probe = _Reader(reader.walk, reader.fn, reader.seq, reader.instance)
    try:
        tree = probe.expr(node.args[0] if sort else node)  # type: ignore[attr-defined]
    except (Impure, RecursionError):
        return None
    if (tree[0] == "if" and tree[1] == ["model", "architectures"]
            and tree[2] == ["model", "architecture"] and tree[3] == ["const", None]):
        return ["model", "architecture"]
    if sort:
        if tree[0] == "const" and isinstance(tree[1], list):
            return ["const", sorted(tree[1], key=repr)]
        return None
    return tree if tree[0] in ("flag", "model", "const", "env") else None


def _message_tree(node: ast.expr, reader: _Reader | None,
                  ) -> tuple[list[Any], dict[str, Any]] | None:
    """A placeholder SGLang computes from flags, model facts or the environment, as an expression
    tree the engine compiles (and the defaults of the flags it reads); None when the reader
    cannot read it, it reads a loop variable, or the engine's compiler does not take it."""
    if reader is None:
        return None
    probe = _Reader(reader.walk, reader.fn, reader.seq, reader.instance)
    try:
        tree = probe.expr(node)
    except (Impure, RecursionError):
        return None
    heads: set[str] = set()

    def visit(item: Any) -> None:
        if isinstance(item, list) and item and isinstance(item[0], str):
            heads.add(item[0])
            for child in item[1:]:
                visit(child)

    visit(tree)
    if not heads & {"flag", "typed", "model", "env", "envset"} or heads & {"each", "any", "all"}:
        return None
    defaults = {name: reader.walk.defaults.get(name) for name in sorted(probe.read)}
    try:
        compile_condition(tree, defaults, value=True)
    except (ValueError, TypeError, KeyError, IndexError, SyntaxError):
        return None
    return tree, defaults


def _local_message(function: ast.AST, name: str) -> ast.expr | None:
    """The literal a local message variable is first bound to (`flashinfer_error = ("...")`),
    when one plain assignment binds it; a later `+=` under a further flag (0.5.17's
    stochastic-rounding sentence) is not followed."""
    values = [node.value for node in ast.walk(function)
              if isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name]
    return values[0] if len(values) == 1 else None


def _message_arg(node: ast.Raise | ast.Assert) -> tuple[str | None, ast.expr | None, bool]:
    """(exception class, message expression, usable)."""
    if isinstance(node, ast.Assert):
        return "AssertionError", node.msg, True
    exc = node.exc
    if not isinstance(exc, ast.Call):
        return None, None, False
    func = exc.func
    name = func.attr if isinstance(func, ast.Attribute) else (
        func.id if isinstance(func, ast.Name) else None)
    if name is None or not name[:1].isupper():
        return None, None, False
    return name, (exc.args[0] if exc.args else None), True


@dataclass(frozen=True)
class Extraction:
    """The generic sites of one release and the review lines (why a site was left out)."""

    sites: list[dict[str, Any]]
    seq_of: dict[str, int]  # file:line of every statement walked -> its order on the path
    skipped: list[str]
    # the plain writes of flags the engine does not resolve, replayed for the sites after them
    writes: list[dict[str, Any]] = field(default_factory=list)
    # SGLang's logged rewrites of deprecated values (`_deprecated_values`) and the review lines
    # of those it logs but the data cannot hold
    deprecations: list[dict[str, Any]] = field(default_factory=list)
    deprecation_skipped: list[str] = field(default_factory=list)
    # where the launch path may build the model config (`_model_config_builds`)
    builds: list[dict[str, Any]] = field(default_factory=list)


def _quant_method_helpers(tree: SourceTree) -> frozenset[str]:
    """The release's utility functions (`UTILS_FILES`) of one parameter that return config.json's
    `quantization_config.quant_method`, read from their bodies: `q = getattr(p,
    "quantization_config", None)`, `if q is not None: return q.get("quant_method")`, `return
    None` (0.5.x `get_quantization_config`, which the model branches call to default
    `--quantization` to the checkpoint's method)."""
    found: set[str] = set()
    for rel in UTILS_FILES:
        module = _parsed(tree, rel)
        for node in module.body if module is not None else ():
            if isinstance(node, ast.FunctionDef) and _returns_quant_method(node):
                found.add(node.name)
    return frozenset(found)


def _returns_quant_method(fn: ast.FunctionDef) -> bool:
    """Whether `fn` is exactly the three statements `_quant_method_helpers` names (compared as
    normalised source, whatever its parameter and local are called)."""
    params = fn.args
    if (len(params.args) != 1 or params.vararg or params.kwarg or params.kwonlyargs
            or params.defaults or params.posonlyargs):
        return False
    body = [stmt for stmt in fn.body
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))]
    if len(body) != 3 or not (isinstance(body[0], ast.Assign) and len(body[0].targets) == 1
                              and isinstance(body[0].targets[0], ast.Name)):
        return False
    param, local = params.args[0].arg, body[0].targets[0].id
    expected = (f"{local} = getattr({param}, 'quantization_config', None)\n"
                f"if {local} is not None:\n    return {local}.get('quant_method')\n")
    text = "\n".join(ast.unparse(stmt) for stmt in body)
    return text in (expected + "return None", expected + "return")


def extract_sites(tree: SourceTree, flag_table: dict[str, Any],
                  located: dict[str, dict[str, Any]]) -> Extraction:
    """The generic sites of the release whose source is `tree` (see the module docstring)."""
    actions = [a for a in flag_table.get("actions", []) if a.get("dest") not in (None, "help")]
    defaults = {a["dest"]: a.get("default") for a in actions}
    for dest, name in SERVER_ARGS_FIELDS.items():  # `--ep-size` (dest expert_parallel_size)
        if dest in defaults:                     # sets the field `ep_size` the code reads
            defaults.setdefault(name, defaults[dest])
    walk = _Walk(tree, frozenset(defaults), defaults=defaults,
                 requirements=_requirements(tree.root), env=env_table(tree.root),
                 quant_method_helpers=_quant_method_helpers(tree))
    walk.registry_fns = _registry_readers(list(_functions(tree)))
    for module in tree.trees.values():  # a module's top level runs at import: before the walk
        for node in module.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for name in env_written(node, module):
                    walk.env_writes[name] = -1
    for path, module in [*tree.trees.items(), *getattr(tree, "helpers", {}).items()]:
        for node in module.body:
            if isinstance(node, ast.FunctionDef):
                walk.helpers.setdefault(node.name, []).append((path, node))
    for fn in _functions(tree):
        walk.functions.setdefault(fn.node.name, []).append(fn)
        if fn.node.name == "__init__" and fn.cls:
            walk.classes.setdefault(fn.cls, []).append(fn)
    entries = [fn for name in ENTRY_POINTS for fn in walk.functions.get(name, [])
               if fn.cls == "ServerArgs" and fn.path.endswith("server_args.py")]
    has_resolve_once = any(fn.node.name == "resolve_once" for fn in entries)
    for fn in entries:
        stage = {"__post_init__": "argparse" if has_resolve_once else "resolve",
                 "resolve_once": "resolve", "check_server_args": "check"}[fn.node.name]
        _visit_function(walk, fn, [], stage)
    # Functions the walk never reaches by name (override registries, called by reference)
    # may run at any point: their writes count as before everything.
    unvisited = [fn for fn in _functions(tree) if id(fn.node) not in walk.visited]
    helper_archs = _override_helper_archs(unvisited)
    for fn in unvisited:
        for name in env_written(fn.node, fn.node):
            walk.env_writes[name] = -1
        named = _registered_archs(fn)
        registered = named or helper_archs.get(id(fn.node))
        override = ("" if registered is None else "named" if named is not None
                    and _names_archs(fn) else "run")
        paths = _override_paths(fn, walk.flags) if registered is not None else {}
        if registered is not None:
            walk.override_fns.add(id(fn.node))
        for flag in _written(fn.node, walk.flags, fn.other_class) - _cli_renames(fn):
            walk.writes[flag] = -1
            log = walk.write_log.setdefault(flag, [])
            paths_of: list[tuple[list[_Cond] | None, ast.expr | None]] = [
                *paths.get(flag, [])] or [(None, None)]
            for conds, value in reversed(paths_of):
                log.insert(0, _Write(flag, -1, fn, conds, value if override == "named" else None,
                                     registered, override=override))
    taken = {site["where"] for site in located.values()}
    out: list[dict[str, Any]] = []
    skipped: list[str] = []
    seq_of = walk.lines
    for site in walk.sites:
        node = site.node
        line = _assert_line(node) if isinstance(node, ast.Assert) else node.lineno
        where = f"{site.fn.path}:{line}"
        if where in taken:
            continue
        if not site.fn.reads_flags:
            continue
        exception, message_node, usable = _message_arg(node)
        if not usable:
            skipped.append(f"{where}: raises a prebuilt or lower-case exception")
            continue
        # (a function called from more than one place: its site is read at the first call,
        # where it raises first when it holds; a later call is not modelled)
        archs: set[str] = set()
        scopes: set[Scope] = set()
        optional: dict[str, str] = {}
        try:
            condition, read, resolved = _all_choices(walk, site.conds, archs, scopes, optional)
        except Impure as why:
            skipped.append(f"{where}: guard {str(why)[:100]}")
            continue
        flag_defaults = {name: defaults[name] for name in sorted(read)}
        test = compile_condition(condition, flag_defaults)
        try:  # (a resolved field's flag default is not what the site reads: not checked)
            on_defaults = not resolved and test({}, frozenset({
                "is_cuda", "is_cuda_alike", "is_flashinfer_available", "has_flashinfer"}))
        except (TypeError, ValueError, AttributeError):
            on_defaults = False
        if on_defaults:
            skipped.append(f"{where}: holds on the defaults alone")
            continue
        if isinstance(message_node, ast.Name):  # `raise ValueError(flashinfer_error)`
            message_node = _local_message(site.fn.node, message_node.id)
        message = _message(message_node, walk.flags, _Reader(walk, site.fn, site.seq))
        entry: dict[str, Any] = {
            "where": where,
            "function": site.fn.qualname,
            "stage": site.stage,
            "seq": site.seq,
            "exception": exception,
            "bare": isinstance(node, ast.Assert) and node.msg is None,
            "condition": condition,
            "defaults": flag_defaults,
            "resolved": sorted(resolved),
            "message": message,
            "source": ast.unparse(node).split("\n", 1)[0][:200],
        }
        if archs:
            entry["unknown_archs"] = sorted(archs)
        conditional = _scopes_json(scopes, archs)
        if conditional:
            entry["unknown_if"] = conditional
        if optional:  # holds on a plain install only: these packages come with extras
            entry["optional"] = dict(sorted(optional.items()))
        out.append(entry)
    _resolved_writes(walk)
    writes = []
    for key in sorted(k for k, v in walk.replayed.items() if v is not None):
        write = dict(walk.replayed[key] or {})
        write["defaults"] = {name: defaults[name] for name in write.pop("read")}
        write.pop("archs")
        write.pop("scopes")
        writes.append(write)
    deprecated_dests = frozenset(str(a["dest"]) for a in actions
                                 if str(a.get("action") or "").startswith("Deprecated"))
    deprecations, deprecation_skipped = _deprecated_values(walk, deprecated_dests)
    writes = _with_deprecation_writes(writes, deprecations)
    return Extraction(out, seq_of, skipped, writes, deprecations, deprecation_skipped,
                      _model_config_builds(walk, defaults))


def _scopes_json(scopes: set[Scope], archs: set[str]) -> list[dict[str, Any]]:
    """A site's conditional scopes as data (`unknown_if`), without the architectures it
    abstains on anyway: the same condition's architectures merged, sorted."""
    merged: dict[tuple[str, str], set[str]] = {}
    for scope_archs, condition, defaults in scopes:
        rest = set(scope_archs) - archs
        if rest:
            merged.setdefault((condition, defaults), set()).update(rest)
    return [{"archs": sorted(names), "condition": json.loads(condition),
             "defaults": json.loads(defaults)}
            for (condition, defaults), names in sorted(merged.items())]


def rule_order(extraction: Extraction, located: dict[str, dict[str, Any]]) -> dict[str, int]:
    """The launch-path order of each hand-written rule's located statement (rules whose
    statement the walk does not reach are left out)."""
    return {rule_id: extraction.seq_of[site["where"]] for rule_id, site in sorted(located.items())
            if site["where"] in extraction.seq_of}


# ------------------------------------------------------------------- logged deprecated values
#
# SGLang rewrites some values it still accepts and logs that they are deprecated (0.5.23's
# `handle_deprecated_args`: `--tool-call-parser qwen25` becomes `qwen`, the attention-backend
# aliases `compressed` / `tokenspeed_mla`). Each is an `if <cond>:` block (or the body of a loop
# over a literal tuple of field names) on the launch path whose own statements log a warning
# saying "deprecated" and write a field. Read here into `deprecations` (rule
# R-DEPRECATED-VALUE, `wizard.rules.deprecated_values`). Flags whose argparse action is a
# `Deprecated*Action` are R-DEPRECATED-FLAG's and left out.

_WARNING_CALLS = frozenset({"warning", "warn"})


class _ValueReader(_Reader):
    """A `_Reader` that also reads dict literals (`["dict", [key, value], ...]`) and a
    subscript of one by any key (`["item", container, key]`): `aliases[cfg.flag]`."""

    def expr(self, node: ast.expr) -> list[Any]:
        if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
            return ["dict", *[[self.expr(k), self.expr(v)]  # type: ignore[arg-type]
                              for k, v in zip(node.keys, node.values, strict=True)]]
        if (isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice)
                and not (isinstance(node.slice, ast.Constant)
                         and type(node.slice.value) is int)):
            container = self.expr(node.value)
            if container[0] != "dict" and not (container[0] == "const"
                                               and isinstance(container[1], dict)):
                raise Impure(f"{ast.unparse(node)} (a subscript of a non-literal)")
            return ["item", _dict_tree(container), self.expr(node.slice)]
        return _dict_tree(super().expr(node))

    def _read_at(self, seq: int, value: ast.expr) -> list[Any]:
        inner = _ValueReader(self.walk, self.fn, seq, self.instance)
        tree = inner.expr(value)
        self.absorb(inner)
        return tree


def _dict_tree(tree: list[Any]) -> list[Any]:
    """A module constant read as a dict (`["const", {...}]`) as a `["dict", ...]` node."""
    if tree[0] == "const" and isinstance(tree[1], dict):
        return ["dict", *[[["const", k], ["const", v]] for k, v in tree[1].items()]]
    return tree


class _Unroll(ast.NodeTransformer):
    """A loop body with the loop variable and the locals it binds replaced by their values,
    and `"a_b".replace("_", "-")` (a string method of constants) folded."""

    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            return ast.copy_location(copy.deepcopy(self.names[node.id]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant)
                and isinstance(func.value.value, str)
                and func.attr in ("replace", "lower", "upper", "strip") and not node.keywords
                and all(isinstance(a, ast.Constant) for a in node.args)):
            args = [a.value for a in node.args]  # type: ignore[attr-defined]
            return ast.copy_location(
                ast.Constant(getattr(func.value.value, func.attr)(*args)), node)
        return node


def _unrolled(loop: ast.For) -> list[tuple[str, list[ast.stmt]]]:
    """`for name in ("a", "b"): body` as (item, body with `name` = item) per item, the locals
    the body binds at its top level substituted into the statements after them; [] for any
    other loop."""
    if not isinstance(loop.target, ast.Name) or loop.orelse:
        return []
    try:
        items = ast.literal_eval(loop.iter)
    except (ValueError, SyntaxError, TypeError):
        return []
    if not isinstance(items, tuple | list) or not all(isinstance(i, str) for i in items):
        return []
    out = []
    for item in items:
        names: dict[str, ast.expr] = {loop.target.id: ast.Constant(item)}
        body: list[ast.stmt] = []
        for stmt in loop.body:
            new = _Unroll(dict(names)).visit(copy.deepcopy(stmt))
            if (isinstance(new, ast.Assign) and len(new.targets) == 1
                    and isinstance(new.targets[0], ast.Name)):
                names[new.targets[0].id] = new.value
                continue
            body.append(new)
        out.append((item, body))
    return out


def _is_deprecation_warning(stmt: ast.stmt) -> ast.Call | None:
    """A statement `logger.warning(<message>, ...)` / `warnings.warn(...)` whose literal text
    says "deprecat"; None otherwise."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in _WARNING_CALLS) or not call.args:
        return None
    text = "".join(str(n.value) for n in ast.walk(call.args[0])
                   if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return call if "deprecat" in text.lower() else None


def _logged_message(call: ast.Call, flags: frozenset[str], reader: _ValueReader,
                    ) -> list[Any] | None:
    """A logged warning's words as literal parts and placeholders (`_message`'s form), and
    `{"tree": <value tree>}` for a placeholder `_message` cannot read
    (`{aliases[cfg.flag]}`); a `%`-formatted `logger.warning(fmt, *args)` with its arguments
    read the same way. None when the words are not literal."""
    head = call.args[0]
    if len(call.args) > 1:  # logger.warning("--%s=%s is deprecated", name, old)
        if not (isinstance(head, ast.Constant) and isinstance(head.value, str)):
            return None
        pieces = re.split(r"(%[srd])", head.value)
        args = list(call.args[1:])
        out: list[Any] = []
        for piece in pieces:
            if not re.fullmatch(r"%[srd]", piece):
                if piece:
                    out.append(piece.replace("%%", "%"))
                continue
            if not args:
                return None
            part = _placeholder(args.pop(0), "r" if piece == "%r" else None, None, reader)
            if part is None:
                return None
            out.append(part)
        return _joined(out) if not args else None
    if not isinstance(head, ast.JoinedStr):
        return _message(head, flags, reader)
    out = []
    for value in head.values:
        if isinstance(value, ast.Constant):
            out.append(str(value.value))
            continue
        assert isinstance(value, ast.FormattedValue)
        parts = _message(ast.JoinedStr([value]), flags, reader)
        if parts and not (isinstance(parts[0], str) and parts[0] == "{"
                          + ast.unparse(value.value) + "}"):
            out.extend(parts)
            continue
        conv = chr(value.conversion) if value.conversion and value.conversion > 0 else None
        spec = ast.unparse(value.format_spec)[2:-1] if value.format_spec else None
        part = _placeholder(value.value, conv, spec, reader)
        if part is None:
            return None
        out.append(part)
    return _joined(out)


def _joined(parts: list[Any]) -> list[Any]:
    """Adjacent literal parts as one."""
    out: list[Any] = []
    for part in parts:
        if isinstance(part, str) and out and isinstance(out[-1], str):
            out[-1] += part
        else:
            out.append(part)
    return out


def _placeholder(node: ast.expr, conv: str | None, spec: str | None,
                 reader: _ValueReader) -> Any:
    """One placeholder of a logged message: a literal, a flag, or a value tree; None when
    unreadable."""
    probe = _ValueReader(reader.walk, reader.fn, reader.seq, reader.instance)
    try:
        tree = probe.expr(node)
    except (Impure, RecursionError):
        return None
    reader.absorb(probe)
    if tree[0] == "const" and not spec:
        return repr(tree[1]) if conv == "r" else str(tree[1])
    if tree[0] == "flag":
        return {"flag": tree[1], "conv": conv, "spec": spec}
    return {"tree": tree, "conv": conv, "spec": spec}


def _handed_dicts(function: ast.AST) -> set[str]:
    """Local dicts a call declares as field writes: `declare_resolution(sa, source, **d)`."""
    out = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else (
                func.id if isinstance(func, ast.Name) else "")
            if "declare" in name or "override" in name:
                out |= {k.value.id for k in node.keywords
                        if k.arg is None and isinstance(k.value, ast.Name)}
    return out


def _key_rewrites(function: ast.AST, name: str, key: str, after: int,
                  ) -> list[tuple[ast.expr, ast.expr]] | None:
    """The function's later top-level rewrites of `name[key]` in the one readable form `if
    name.get(key) == <literal>: name[key] = <literal>` (0.5.23: `cutedsl_mla` is decode-only, so
    the prefill backend becomes `trtllm_mla`), as (test literal, new literal) in order; None
    when `name[key]` changes after line `after` in any other way."""
    out: list[tuple[ast.expr, ast.expr]] = []
    plain: set[int] = set()
    for stmt in getattr(function, "body", []):
        if stmt.lineno <= after or not isinstance(stmt, ast.If) or stmt.orelse:
            continue
        test, body = stmt.test, stmt.body
        if (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq) and isinstance(test.comparators[0], ast.Constant)
                and isinstance(test.left, ast.Call) and isinstance(test.left.func, ast.Attribute)
                and test.left.func.attr == "get" and isinstance(test.left.func.value, ast.Name)
                and test.left.func.value.id == name and len(test.left.args) == 1
                and isinstance(test.left.args[0], ast.Constant) and test.left.args[0].value == key
                and len(body) == 1 and isinstance(body[0], ast.Assign)
                and len(body[0].targets) == 1 and isinstance(body[0].targets[0], ast.Subscript)
                and isinstance(body[0].targets[0].value, ast.Name)
                and body[0].targets[0].value.id == name
                and isinstance(body[0].targets[0].slice, ast.Constant)
                and body[0].targets[0].slice.value == key
                and isinstance(body[0].value, ast.Constant)):
            out.append((test.comparators[0], body[0].value))
            plain.add(id(body[0].targets[0]))
    for node in ast.walk(function):
        if getattr(node, "lineno", 0) <= after:
            continue
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del)
                and isinstance(node.value, ast.Name) and node.value.id == name
                and isinstance(node.slice, ast.Constant) and node.slice.value == key
                and id(node) not in plain):
            return None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name
                and node.func.attr in _WRITERS | {"pop", "clear", "popitem"}):
            return None
    return out


def _block_writes(walk: _Walk, fn: _Fn, body: list[ast.stmt], after: int,
                  ) -> tuple[dict[str, ast.expr | None], list[str]]:
    """The fields the block's own statements write, with their value expressions (None: not
    readable as the value SGLang keeps), and why a value is not kept."""
    handed = _handed_dicts(fn.node)
    found: dict[str, ast.expr | None] = {}
    notes: list[str] = []
    for stmt in body:
        for name, value in _write_values(stmt, walk.flags).items():
            if value is None and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                # (an unrolled loop's `d[name] = aliases[getattr(sa, name, None)]`: the reader
                # refuses any call it cannot read as a pure value)
                value = stmt.value
            if (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Subscript)):
                target = stmt.targets[0].value
                if not (isinstance(target, ast.Name) and target.id in handed):
                    continue  # a dict nothing declares as writes
                rewrites = _key_rewrites(fn.node, target.id, name, after)
                if rewrites is None:
                    notes.append(f"{name}: {target.id}[{name!r}] changes after the warning")
                    value = None
                for literal, new in rewrites or ():
                    if value is not None:  # `new if value == literal else value`
                        value = ast.IfExp(ast.Compare(value, [ast.Eq()], [literal]), new, value)
            found[name] = value
    return found, notes


def _deprecated_values(walk: _Walk, deprecated_dests: frozenset[str],
                       ) -> tuple[list[dict[str, Any]], list[str]]:
    """The logged deprecated-value rewrites on the launch path (see the section comment) and the
    review lines of those the data cannot hold."""
    out: list[dict[str, Any]] = []
    skipped: list[str] = []
    for fn, stmt, here, seq in walk.blocks.values():
        if not fn.reads_flags:
            continue
        if isinstance(stmt, ast.If):
            if any(c.node is None and c.text == "For" for c in here):
                continue  # inside a loop: read with the loop (`_unrolled`)
            cases = [("", [(stmt, here)])]
        else:
            assert isinstance(stmt, ast.For)
            if not any(_is_deprecation_warning(s) for sub in stmt.body for s in
                       (sub.body if isinstance(sub, ast.If) else [sub])):
                continue
            unrolled = _unrolled(stmt)
            if not unrolled:
                skipped.append(f"{fn.path}:{stmt.lineno}: a deprecation logged in a loop over "
                               "something other than a literal tuple of names")
                continue
            loop_path = [c for c in here]
            cases = [(item, [(s, loop_path) for s in body if isinstance(s, ast.If)])
                     for item, body in unrolled]
        for item, blocks in cases:
            for block, path in blocks:
                assert isinstance(block, ast.If)
                entry, why = _deprecation_entry(walk, fn, block, path, seq,
                                                getattr(stmt, "end_lineno", stmt.lineno) or 0,
                                                deprecated_dests)
                if why is not None:
                    where = f"{fn.path}:{block.lineno}" + (f" ({item})" if item else "")
                    skipped.append(f"{where}: {why}")
                if entry is not None:
                    out.append(entry)
    out.sort(key=lambda e: (e["seq"], e["where"], [w["field"] for w in e["writes"]]))
    return out, skipped


def _deprecation_entry(walk: _Walk, fn: _Fn, block: ast.If, path: list[_Cond], seq: int,
                       end: int, deprecated_dests: frozenset[str],
                       ) -> tuple[dict[str, Any] | None, str | None]:
    """One `if` block's entry when it logs a deprecation and writes a field (else (None,
    None)), or (None, why) when the data cannot hold it; (entry, note) when a value is not
    kept."""
    warning = next((call for s in block.body if (call := _is_deprecation_warning(s))), None)
    if warning is None:
        return None, None
    writes, notes = _block_writes(walk, fn, block.body, end)
    if not writes:
        return None, "logs a deprecation but writes no field in its own statements"
    where = f"{fn.path}:{warning.lineno}"
    conds = [*path, _Cond(block.test, False, seq, fn)]
    try:
        condition, read, resolved = _value_condition(walk, conds)
    except Impure as why:
        return None, f"guard {str(why)[:100]}"
    if read & deprecated_dests:
        return None, (f"a Deprecated*Action flag ({', '.join(sorted(read & deprecated_dests))}):"
                      " R-DEPRECATED-FLAG")
    late = sorted(n for n in resolved if canonical_dest(n) not in RESOLVED_FIELDS)
    if late:  # (a field the engine resolves is read as it stands: `resolved` below)
        return None, f"reads {', '.join(late)} after SGLang rewrote it"
    write_seq = walk.at.get((0, f"{fn.path}:{block.body[-1].lineno}"), seq)
    out_writes = []
    for name, node in sorted(writes.items()):
        value: list[Any] | None = None
        if node is not None:
            reader = _ValueReader(walk, fn, write_seq)
            try:
                value = reader.expr(node)
            except Impure as why:
                notes.append(f"{name}: value {str(why)[:80]}")
            else:
                if reader.archs or reader.scopes or any(
                        canonical_dest(n) not in RESOLVED_FIELDS for n in reader.resolved):
                    notes.append(f"{name}: value reads fields rewritten before it")
                    value = None
                else:
                    read |= reader.read
                    resolved |= reader.resolved
        out_writes.append({"field": name, "value": value})
    reader = _ValueReader(walk, fn, seq)
    message = _logged_message(warning, walk.flags, reader)
    read |= reader.read
    if any(canonical_dest(n) not in RESOLVED_FIELDS for n in reader.resolved):
        message = None
    resolved |= reader.resolved if message is not None else set()
    entry = {
        "where": where,
        "function": fn.qualname,
        "seq": seq,
        "condition": condition,
        "defaults": {name: walk.defaults.get(name) for name in sorted(read)},
        "writes": out_writes,
        # fields the engine resolves that it reads as they stand at the warning (the rule
        # reads them as typed: SGLang rewrites no typed value into a deprecated one)
        "resolved": sorted(resolved),
        "message": message,
        "source": ast.unparse(warning).split("\n", 1)[0][:200],
    }
    return entry, ("; ".join(notes) if notes else None)


def _value_condition(walk: _Walk, conds: list[_Cond]) -> tuple[list[Any], set[str], set[str]]:
    """`_condition` read with `_ValueReader` (dict literals and their subscripts); a path
    under a package probe or an override limited to some architectures is not read."""
    archs: set[str] = set()
    scopes: set[Scope] = set()
    optional: dict[str, str] = {}
    found = _condition(walk, conds, archs, scopes, optional, reader=_ValueReader)
    if archs or scopes or optional:
        raise Impure("a path under a package probe or a model override")
    return found


def _with_deprecation_writes(writes: list[dict[str, Any]],
                             deprecations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The replayed writes with the deprecation rewrites of fields the engine resolves (its
    effective table) added where the walk has none at that place: `--attention-backend
    compressed` runs as `dsv4`."""
    have = {(w["field"], w["seq"]) for w in writes}
    out = list(writes)
    for entry in deprecations:
        for write in entry["writes"]:
            key = (write["field"], entry["seq"])
            if (write["value"] is None or canonical_dest(write["field"]) not in RESOLVED_FIELDS
                    or key in have):
                continue
            have.add(key)
            out.append({"field": write["field"], "seq": entry["seq"],
                        "condition": entry["condition"], "value": write["value"],
                        "defaults": dict(entry["defaults"]),
                        "resolved": list(entry["resolved"])})
    return out
