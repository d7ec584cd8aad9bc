"""How a release's argument code reads its environment, read from the release's own source by
`ast` (stdlib only), for the generic sites' extractor (`wizard.conformance.arg_sites`).

SGLang reads environment variables in four ways, each with its own parsing:

* `envs.SGLANG_X.get()` (`envs.SGLANG_X.value` in early releases): the variable's field of the
  `Envs` class of `sglang/srt/environ.py` (`SGLANG_X = EnvBool(False)`): its class gives the
  parsing (`EnvBool.parse`: the words it takes as true and false after `.lower()`, `EnvInt.parse`:
  `int(value)`, ...), `EnvField.get` what an unset variable (the field's default) and a value
  `parse` refuses (`except ValueError: ... return default`) give; `envs.SGLANG_X.is_set()`
  whether it is in the environment at all. A `...WithAlias(default, deprecated_name="OLD")` field
  reads `OLD` when `SGLANG_X` is unset.
* `get_bool_env_var("X", "false")` / `get_int_env_var("X", 0)` of `sglang/srt/utils`: their own
  words (`truthy_values = ("true", "1")`: anything else is false) and fallbacks.
* `os.environ.get("X", d)` / `os.getenv("X", d)`: the string, `d` when unset.
* `"X" in os.environ`.

Everything here is derived from the release: a class, field or function whose shape the reader
does not know gives no parsing, and the extractor then leaves the site out (`EnvUnreadable`).

The tree node is `["env", NAME, PARSE, DEFAULT, ALIAS]` (`wizard.rules.arg_sites._env` evaluates
it on the launch's environment): PARSE is `["str"]`, `["int", INVALID]`, `["float", INVALID]`
or `["bool", TRUE_WORDS, FALSE_WORDS, INVALID]` (FALSE_WORDS None: every other word is false;
INVALID "default": a value the parse refuses gives DEFAULT, "raise": SGLang raises), DEFAULT the
value of an unset variable, ALIAS the deprecated name read when NAME is unset (or None); and
`["envset", NAME]`.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wizard.rules.arg_sites import parse_env

ENVIRON_FILE = "sglang/srt/environ.py"
UTILS_FILES = ("sglang/srt/utils/common.py", "sglang/srt/utils/__init__.py", "sglang/srt/utils.py")
_LITERALS = (bool, int, float, str, type(None))


class EnvUnreadable(Exception):
    """An environment read whose parsing the release's source does not show plainly."""


@dataclass
class EnvTable:
    """A release's `Envs` fields and env helper functions, as parse specs."""

    # field name -> (parse, default, alias) or the reason it is not readable
    fields: dict[str, tuple[list[Any], Any, str | None] | str] = field(default_factory=dict)
    # get_bool_env_var / get_int_env_var -> (parse, its default parameter's default) or reason
    functions: dict[str, tuple[list[Any], Any] | str] = field(default_factory=dict)

    def field_read(self, name: str) -> list[Any]:
        """The node of `envs.<name>.get()`."""
        spec = self.fields.get(name)
        if spec is None:
            raise EnvUnreadable(f"envs.{name} (not a field of this release's Envs)")
        if isinstance(spec, str):
            raise EnvUnreadable(f"envs.{name} ({spec})")
        parse, default, alias = spec
        return ["env", name, parse, default, alias]

    def function_read(self, function: str, name: str, default: ast.expr | None) -> list[Any]:
        """The node of `get_bool_env_var("X", d)` / `get_int_env_var("X", d)`."""
        spec = self.functions.get(function)
        if spec is None or isinstance(spec, str):
            raise EnvUnreadable(f"{function}({name!r}) ({spec or 'not found'})")
        parse, own_default = spec
        value = own_default
        if default is not None:
            value = _literal(default)
        if parse[0] == "bool":  # `os.getenv(name, default).lower()` then the same words
            if not isinstance(value, str):
                raise EnvUnreadable(f"{function}({name!r}) with a default that is not a string")
            value = parse_env(parse, value, None)
        elif not isinstance(value, _LITERALS):
            raise EnvUnreadable(f"{function}({name!r}) with a default that is not a literal")
        return ["env", name, parse, value, None]


def _literal(node: ast.expr) -> Any:
    """A literal, or a number computed from literals (`4 * 1024`); EnvUnreadable otherwise."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Add | ast.Sub
                                                       | ast.Pow | ast.FloorDiv)):
            left, right = _literal(node.left), _literal(node.right)
            if type(left) in (int, float) and type(right) in (int, float):
                ops = {ast.Mult: lambda x, y: x * y, ast.Add: lambda x, y: x + y,
                       ast.Sub: lambda x, y: x - y, ast.Pow: lambda x, y: x ** y,
                       ast.FloorDiv: lambda x, y: x // y}
                return ops[type(node.op)](left, right)
        raise EnvUnreadable(f"default {ast.unparse(node)[:40]} is not a literal") from None
    if not isinstance(value, _LITERALS):
        raise EnvUnreadable(f"default {ast.unparse(node)[:40]} is not a literal")
    return value


def _words(node: ast.expr) -> list[str] | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    if isinstance(value, list | tuple | set | frozenset) and all(isinstance(v, str) for v in value):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    return None


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for item in cls.body:
        if isinstance(item, ast.FunctionDef) and item.name == name:
            return item
    return None


def _parse_kind(method: ast.FunctionDef) -> list[Any] | str:
    """A field class's `parse(self, value)` as a parse spec (its invalid policy added later):
    `return value`, `return int(value)` / `float(value)` (in a `try` that re-raises ValueError),
    or `value = value.lower()` then `if value in [...]: return True/False` ... `raise`."""
    args = [a.arg for a in method.args.args]
    if len(args) != 2:
        return "parse takes other arguments"
    value = args[1]
    body = [s for s in method.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Name)
            and body[0].value.id == value):
        return ["str"]
    calls = {n.func.id for n in ast.walk(method) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and len(n.args) == 1
             and isinstance(n.args[0], ast.Name) and n.args[0].id == value}
    if len(body) == 1 and calls in ({"int"}, {"float"}):
        kind = calls.pop()
        stmt = body[0]
        if isinstance(stmt, ast.Return):
            return [kind]
        if (isinstance(stmt, ast.Try) and len(stmt.body) == 1
                and isinstance(stmt.body[0], ast.Return) and all(
                    isinstance(h.type, ast.Name) and h.type.id == "ValueError"
                    and h.body and isinstance(h.body[-1], ast.Raise) for h in stmt.handlers)):
            return [kind]
        return f"{kind} parse of another shape"
    true: list[str] | None = None
    false: list[str] | None = None
    lowered = False
    for stmt in body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == value
                and ast.unparse(stmt.value) == f"{value}.lower()"):
            lowered = True
        elif (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1
              and isinstance(stmt.body[0], ast.Return)
              and isinstance(stmt.body[0].value, ast.Constant)
              and isinstance(stmt.body[0].value.value, bool)
              and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1
              and isinstance(stmt.test.ops[0], ast.In)
              and isinstance(stmt.test.left, ast.Name) and stmt.test.left.id == value):
            words = _words(stmt.test.comparators[0])
            if words is None:
                return "bool words are not literal"
            if stmt.body[0].value.value:
                true = words
            else:
                false = words
        elif isinstance(stmt, ast.Raise) and stmt is body[-1]:
            pass
        else:
            return "parse of an unknown shape"
    if not lowered or true is None or false is None:
        return "bool parse of an unknown shape"
    return ["bool", true, false]


def _invalid_policy(get: ast.FunctionDef | None) -> str:
    """What `EnvField.get` does when `parse` raises ValueError: "default" when it catches it and
    returns the default, else "raise"."""
    if get is None:
        return "raise"
    for node in ast.walk(get):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id == "ValueError"
                and h.body and isinstance(h.body[-1], ast.Return) and h.body[-1].value is not None
                and "default" in ast.unparse(h.body[-1].value) for h in node.handlers):
            return "default"
    return "raise"


def _unset_is_default(get: ast.FunctionDef | None) -> bool:
    """`value = os.getenv(self.name)` ... `if value is None: return <the default>`."""
    if get is None:
        return False
    reads = any(isinstance(n, ast.Call) and ast.unparse(n.func) in ("os.getenv", "os.environ.get")
                and len(n.args) == 1 and ast.unparse(n.args[0]) == "self.name"
                for n in ast.walk(get))
    unset = any(isinstance(n, ast.If) and isinstance(n.test, ast.Compare)
                and len(n.test.ops) == 1 and isinstance(n.test.ops[0], ast.Is)
                and ast.unparse(n.test.comparators[0]) == "None"
                and n.body and isinstance(n.body[-1], ast.Return) and n.body[-1].value is not None
                and "default" in ast.unparse(n.body[-1].value) for n in ast.walk(get))
    return reads and unset


def _read_environ(module: ast.Module) -> dict[str, tuple[list[Any], Any, str | None] | str]:
    classes = {node.name: node for node in module.body if isinstance(node, ast.ClassDef)}

    def lookup(name: str, method: str, seen: frozenset[str] = frozenset()) -> ast.FunctionDef | None:
        cls = classes.get(name)
        if cls is None or name in seen:
            return None
        own = _method(cls, method)
        if own is not None:
            return own
        for base in cls.bases:  # (Python's MRO for these single-file hierarchies: left first)
            if isinstance(base, ast.Name):
                found = lookup(base.id, method, seen | {name})
                if found is not None:
                    return found
        return None

    def spec(name: str) -> list[Any] | str:
        parse = lookup(name, "parse")
        if parse is None:
            return f"class {name} has no parse"
        kind = _parse_kind(parse)
        if isinstance(kind, str):
            return f"{name}: {kind}"
        get = lookup(name, "get")
        if not _unset_is_default(get if get is not None and _is_base_get(get) else
                                 lookup("EnvField", "get")):
            return f"{name}.get reads the variable another way"
        policy = _invalid_policy(lookup("EnvField", "get"))
        return kind if kind[0] == "str" else [*kind, policy]

    def aliased(name: str) -> bool:
        get = lookup(name, "get")
        return get is not None and "deprecated_name" in ast.unparse(get)

    out: dict[str, tuple[list[Any], Any, str | None] | str] = {}
    envs = classes.get("Envs")
    bodies = [envs] if envs is not None else []
    for base in envs.bases if envs is not None else ():
        if isinstance(base, ast.Name) and base.id in classes:
            bodies.insert(0, classes[base.id])
    for cls in bodies:
        for stmt in cls.body:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Name)):
                continue
            name, call, cls_name = stmt.targets[0].id, stmt.value, stmt.value.func.id
            kind = spec(cls_name)
            if isinstance(kind, str):
                out[name] = kind
                continue
            keywords = {k.arg: k.value for k in call.keywords if k.arg}
            default_node = call.args[0] if call.args else keywords.get("default")
            try:
                default = _literal(default_node) if default_node is not None else None
            except EnvUnreadable as why:
                out[name] = str(why)
                continue
            alias: str | None = None
            if aliased(cls_name):
                node = keywords.get("deprecated_name") or (call.args[1] if len(call.args) > 1
                                                           else None)
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                    out[name] = "deprecated name is not a literal"
                    continue
                alias = node.value
            out[name] = (kind, default, alias)
    return out


def _is_base_get(get: ast.FunctionDef) -> bool:
    """A `get` that reads the variable itself (EnvField's), not one that defers to it."""
    return "super()" not in ast.unparse(get)


def _read_functions(module: ast.Module) -> dict[str, tuple[list[Any], Any] | str]:
    out: dict[str, tuple[list[Any], Any] | str] = {}
    for node in module.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if node.name == "get_bool_env_var":
            out[node.name] = _bool_function(node)
        elif node.name == "get_int_env_var":
            out[node.name] = _int_function(node)
    return out


def _param_default(function: ast.FunctionDef) -> Any:
    args = function.args
    if len(args.args) != 2 or len(args.defaults) != 1:
        raise EnvUnreadable(f"{function.name} takes other arguments")
    return _literal(args.defaults[0])


def _bool_function(function: ast.FunctionDef) -> tuple[list[Any], Any] | str:
    """`value = os.getenv(name, default)`, `value = value.lower()`, `truthy_values = (...)` and
    `return value in truthy_values`: true for those words, false for any other."""
    try:
        default = _param_default(function)
    except EnvUnreadable as why:
        return str(why)
    name, dflt = (a.arg for a in function.args.args)
    text = ast.unparse(function)
    words: dict[str, list[str]] = {}
    for stmt in function.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            found = _words(stmt.value)
            if found is not None:
                words[stmt.targets[0].id] = found
    last = function.body[-1]
    if not (f"os.getenv({name}, {dflt})" in text and ".lower()" in text
            and isinstance(last, ast.Return) and isinstance(last.value, ast.Compare)
            and len(last.value.ops) == 1 and isinstance(last.value.ops[0], ast.In)
            and isinstance(last.value.comparators[0], ast.Name)
            and last.value.comparators[0].id in words):
        return "get_bool_env_var of an unknown shape"
    return ["bool", words[last.value.comparators[0].id], None, "default"], default


def _int_function(function: ast.FunctionDef) -> tuple[list[Any], Any] | str:
    """`value = os.getenv(name)`; None or blank -> default; `try: return int(value) except
    ValueError: return default`."""
    try:
        default = _param_default(function)
    except EnvUnreadable as why:
        return str(why)
    tries = [n for n in ast.walk(function) if isinstance(n, ast.Try)]
    if not (len(tries) == 1 and len(tries[0].body) == 1 and isinstance(tries[0].body[0], ast.Return)
            and ast.unparse(tries[0].body[0]).startswith("return int(")
            and all(isinstance(h.type, ast.Name) and h.type.id == "ValueError"
                    and ast.unparse(h.body[-1]) == f"return {function.args.args[1].arg}"
                    for h in tries[0].handlers)):
        return "get_int_env_var of an unknown shape"
    # (a blank value: its own test returns the default, as `int("")` failing would)
    return ["int", "default"], default


def env_table(root: Path) -> EnvTable:
    """The release's env parsing (`root`: the folder holding `sglang/`)."""
    table = EnvTable()
    path = root / ENVIRON_FILE
    if path.is_file():
        with contextlib.suppress(SyntaxError):
            table.fields = _read_environ(ast.parse(path.read_text(encoding="utf-8")))
    for rel in UTILS_FILES:
        path = root / rel
        if not path.is_file():
            continue
        try:
            found = _read_functions(ast.parse(path.read_text(encoding="utf-8")))
        except SyntaxError:
            continue
        for name, spec in found.items():
            table.functions.setdefault(name, spec)
    return table


# ------------------------------------------------------------------------------- writes

_FIELD_WRITERS = frozenset({"set", "override", "clear"})
_ENVIRON_WRITERS = frozenset({"setdefault", "pop", "update", "clear", "popitem", "__setitem__",
                              "__delitem__"})
ANY = "*"  # a write whose variable the reader cannot name


def _is_environ(node: ast.expr) -> bool:
    return ast.unparse(node) in ("os.environ", "environ")


def _loop_keys(scope: ast.AST | None, name: str) -> list[str] | None:
    """The literal keys a loop variable of `scope` takes: `for name[, value] in D.items()` /
    `D.keys()` / `D` where `D` is a local bound only to a dict (or list, tuple, set) literal of
    strings, or the literal itself; None otherwise."""
    if scope is None:
        return None
    loops = [n for n in ast.walk(scope) if isinstance(n, ast.For | ast.AsyncFor) and (
        (isinstance(n.target, ast.Name) and n.target.id == name)
        or (isinstance(n.target, ast.Tuple) and n.target.elts
            and isinstance(n.target.elts[0], ast.Name) and n.target.elts[0].id == name))]
    stores = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name
              and isinstance(n.ctx, ast.Store)]
    if len(loops) != 1 or len(stores) != 1:
        return None
    source: ast.expr = loops[0].iter
    if (isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute)
            and source.func.attr in ("items", "keys") and not source.args):
        source = source.func.value
    if isinstance(source, ast.Name):
        values = [n.value for n in ast.walk(scope) if isinstance(n, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == source.id for t in n.targets)]
        bound = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == source.id
                 and isinstance(n.ctx, ast.Store)]
        if len(values) != 1 or len(bound) != 1:
            return None
        source = values[0]
    items = (source.keys if isinstance(source, ast.Dict)
             else source.elts if isinstance(source, ast.List | ast.Tuple | ast.Set) else None)
    if items is None or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                for k in items):
        return None
    return [str(k.value) for k in items]  # type: ignore[union-attr]


def env_written(node: ast.AST, scope: ast.AST | None = None) -> set[str]:
    """The variables a statement (or expression) may set or unset: `envs.X.set(...)` /
    `.override(...)` / `.clear()`, `os.environ["X"] = ...`, `del os.environ["X"]`,
    `os.environ.setdefault("X", ...)` / `.pop("X")`, `os.putenv("X", ...)`; a loop variable over
    a literal's keys in the function `scope` as those keys (`_loop_keys`); `ANY` for a write
    whose variable is not known (`os.environ.update(...)`, `os.environ[name] = ...`)."""
    out: set[str] = set()

    def key(sub: ast.expr | None) -> None:
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.add(sub.value)
            return
        keys = _loop_keys(scope, sub.id) if isinstance(sub, ast.Name) else None
        out.update(keys if keys is not None else [ANY])

    for sub in ast.walk(node):
        if isinstance(sub, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = (sub.targets if isinstance(sub, ast.Assign | ast.Delete)
                       else [sub.target])
            for target in targets:
                if isinstance(target, ast.Subscript) and _is_environ(target.value):
                    key(target.slice)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
            func = sub.func
            if (func.attr in _FIELD_WRITERS and isinstance(func.value, ast.Attribute)
                    and isinstance(func.value.value, ast.Name) and func.value.value.id == "envs"):
                out.add(func.value.attr)
            elif func.attr in _ENVIRON_WRITERS and _is_environ(func.value):
                key(sub.args[0] if sub.args and func.attr in ("setdefault", "pop") else None)
            elif func.attr in ("putenv", "unsetenv") and ast.unparse(func.value) == "os":
                key(sub.args[0] if sub.args else None)
    return out
