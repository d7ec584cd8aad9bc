"""Release-data probes for the wide launch path: values SGLang derives from its own source that the
wide conformance cases reach (quantization method tables per platform, the MoE runner the model
overrides pick on SM100). Stdlib only; they read a release's source tree (`locate.SourceTree`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

# The platforms the wizard checks, as SGLang's platform predicates answer on each.
PLATFORMS: dict[str, dict[str, bool]] = {
    "cuda": {"is_cuda": True, "is_hip": False, "gfx95": False},
    "hip": {"is_cuda": False, "is_hip": True, "gfx95": False},
    "hip_gfx95": {"is_cuda": False, "is_hip": True, "gfx95": True},
}
# Platform predicates that are False on every platform above.
_OTHER_DEVICES = ("is_cpu", "is_npu", "is_xpu", "is_mps", "is_musa", "is_hpu")
_GFX95 = ("mxfp_supported", "_is_mxfp_supported", "is_gfx95_supported", "_is_gfx95_supported")


def _truth(node: ast.expr, platform: dict[str, bool]) -> bool | None:
    """A module-level platform condition on one platform; None when it reads something else."""
    if isinstance(node, ast.BoolOp):
        values = [_truth(v, platform) for v in node.values]
        if isinstance(node.op, ast.And):
            if any(v is False for v in values):
                return False
            return None if any(v is None for v in values) else True
        if any(v is True for v in values):
            return True
        return None if any(v is None for v in values) else False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, platform)
        return None if inner is None else not inner
    name = None
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Name):
        name = node.func.id
    elif isinstance(node, ast.Name):
        name = node.id
    if name is None:
        return None
    bare = name.lstrip("_")
    if bare in ("is_cuda", "is_hip"):
        return platform[bare]
    if bare in _OTHER_DEVICES:
        return False
    if name in _GFX95:
        return platform["gfx95"]
    return None


def _dict_keys(node: ast.expr) -> list[str] | None:
    if not isinstance(node, ast.Dict):
        return None
    keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return keys if len(keys) == len(node.keys) else None


def _updates(body: list[ast.stmt], table: str) -> list[str] | None:
    """The keys `table.update({...})` adds in a block (None when the block does anything else
    to the table than a literal update)."""
    keys: list[str] = []
    for stmt in body:
        if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Attribute)
                and isinstance(stmt.value.func.value, ast.Name)
                and stmt.value.func.value.id == table and stmt.value.func.attr == "update"):
            found = _dict_keys(stmt.value.args[0]) if stmt.value.args else None
            if found is None:
                return None
            keys += found
    return keys


def quantization_methods(root: Path) -> dict[str, list[str]] | None:
    """`QUANTIZATION_METHODS`' keys per platform ("cuda", "hip", "hip_gfx95"), in SGLang's
    order: the base table's literal keys plus the `if <platform>: BASE.update({...})` blocks of
    `srt/layers/quantization/__init__.py`. None when the module has another shape or a block
    depends on something other than the platform."""
    path = root / "sglang" / "srt" / "layers" / "quantization" / "__init__.py"
    if not path.is_file():
        return None
    module = ast.parse(path.read_text(encoding="utf-8"))
    tables: dict[str, list[str]] = {}
    blocks: list[tuple[str, ast.If]] = []
    final: list[str] | None = None
    for stmt in module.body:
        target = None
        value = None
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            target, value = stmt.target.id, stmt.value
        elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
              and isinstance(stmt.targets[0], ast.Name)):
            target, value = stmt.targets[0].id, stmt.value
        if target is not None and isinstance(value, ast.Dict):
            if target == "QUANTIZATION_METHODS":
                # {**BASE, **VLLM}: the tables it spreads, in order
                final = [ast.unparse(v) for k, v in zip(value.keys, value.values, strict=True)
                         if k is None]
            elif (keys := _dict_keys(value)) is not None:
                tables[target] = keys
        elif isinstance(stmt, ast.If):
            for name in tables:
                if f"{name}.update(" in ast.unparse(stmt):
                    blocks.append((name, stmt))
    if not final or any(name not in tables for name in final):
        return None
    out: dict[str, list[str]] = {}
    for platform, truth in PLATFORMS.items():
        current = {name: list(keys) for name, keys in tables.items()}
        for name, node in blocks:
            branch: ast.If | None = node
            while branch is not None:
                taken = _truth(branch.test, truth)
                if taken is None:
                    return None
                if taken:
                    added = _updates(branch.body, name)
                    if added is None:
                        return None
                    current[name] += [k for k in added if k not in current[name]]
                    break
                orelse = branch.orelse
                if len(orelse) == 1 and isinstance(orelse[0], ast.If):
                    branch = orelse[0]
                else:
                    if orelse:
                        added = _updates(orelse, name)
                        if added is None:
                            return None
                        current[name] += [k for k in added if k not in current[name]]
                    branch = None
        merged: list[str] = []
        for name in final:
            merged += [k for k in current[name] if k not in merged]
        out[platform] = merged
    return out


@lru_cache(maxsize=4)
def _parents(module: ast.AST) -> dict[ast.AST, ast.AST]:
    """Child -> parent of a module's nodes (kept for the last few modules asked)."""
    return {child: node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _arch_names(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> list[str] | None:
    """The architectures a statement is guarded by: the innermost `model_arch in [...]` /
    `model_arch == "X"` test around it, or the `@_register_for(...)` of its function."""
    current: ast.AST | None = node
    while current is not None:
        if isinstance(current, ast.If):
            for compare in ast.walk(current.test):
                if (isinstance(compare, ast.Compare) and ast.unparse(compare.left).endswith(
                        "model_arch") and isinstance(compare.ops[0], ast.In | ast.Eq)):
                    names = _strings(compare.comparators[0])
                    if names:
                        return names
        if isinstance(current, ast.FunctionDef):
            for decorator in current.decorator_list:
                if (isinstance(decorator, ast.Call)
                        and ast.unparse(decorator.func).endswith("_register_for")):
                    return [a.value for a in decorator.args
                            if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            family = _early_return_archs(current, parents)
            if family:
                return family
        current = parents.get(current)
    return None


def _early_return_archs(function: ast.FunctionDef,
                        parents: dict[ast.AST, ast.AST]) -> list[str] | None:
    """`if model_arch not in _FAMILY: return {}` at the top of a function (0.5.2x's
    `_deepseek_moe_quant_resolution`): the names of that module-level set."""
    module: ast.AST = function
    while module in parents:
        module = parents[module]
    for stmt in function.body:
        if not (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)
                and ast.unparse(stmt.test.left).endswith("model_arch")
                and isinstance(stmt.test.ops[0], ast.NotIn)
                and stmt.body and isinstance(stmt.body[0], ast.Return)):
            continue
        right = stmt.test.comparators[0]
        if isinstance(right, ast.Name) and isinstance(module, ast.Module):
            for top in module.body:
                if (isinstance(top, ast.Assign) and len(top.targets) == 1
                        and isinstance(top.targets[0], ast.Name)
                        and top.targets[0].id == right.id):
                    value = top.value
                    if (isinstance(value, ast.Call) and ast.unparse(value.func) in (
                            "frozenset", "set", "tuple") and len(value.args) == 1):
                        value = value.args[0]
                    return _strings(value) or None
        return _strings(right) or None
    return None


def _guarded_by_sm100(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    current = parents.get(node)
    while current is not None:
        if isinstance(current, ast.If) and "sm100" in ast.unparse(current.test):
            return True
        current = parents.get(current)
    return False


def _plain_sm100_default(node: ast.If, parents: dict[ast.AST, ast.AST]) -> bool:
    """`if [moe_a2a_backend == "none" and] moe_runner_backend == "auto":` right in the body of
    the SM100 test (a DeepSeek branch that picks the runner whatever the quantization): the test
    compares nothing else and no other condition stands between it and the SM100 guard."""
    parent = parents.get(node)
    if not (isinstance(parent, ast.If) and "sm100" in ast.unparse(parent.test)
            and node in parent.body):
        return False
    compares = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(
        node.test.op, ast.And) else [node.test]
    return all(isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], ast.Eq)
               and ast.unparse(c.left).endswith(("moe_runner_backend", "moe_a2a_backend"))
               for c in compares)


def _assigns_runner(body: list[ast.stmt]) -> str | None:
    for stmt in body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)):
            continue
        target = ast.unparse(stmt.targets[0])
        if target.endswith(("moe_runner_backend", "['moe_runner_backend']")) and (
                "speculative" not in target):
            return str(stmt.value.value)
    return None


def moe_runner_platform(tree: Any) -> list[dict[str, Any]]:
    """The MoE runner the argument code sets for any model when none is chosen, on a platform:
    `if moe_runner_backend == "auto" and <x>.quantization == "<q>" and <platform probes, or-ed>:
    moe_runner_backend = "<runner>"` (0.5.13 on: `modelopt_fp4` on SM120 -> flashinfer_cutlass,
    the trtllm-gen MoE kernels being SM100-only). Each entry: the quantization, the probes (one
    holding is enough), the runner. A test of anything else (an architecture) is not this shape."""
    def probe(node: ast.expr) -> str | None:
        if isinstance(node, ast.Call) and not node.args:
            node = node.func
        name = (node.attr if isinstance(node, ast.Attribute)
                else node.id if isinstance(node, ast.Name) else "")
        name = name.lstrip("_")
        return name if name.startswith("is_sm") else None

    def is_field(node: ast.expr, field: str) -> bool:
        return ((isinstance(node, ast.Name) and node.id == field)
                or (isinstance(node, ast.Attribute) and node.attr == field))

    found: list[dict[str, Any]] = []
    for rel in sorted(tree.trees):
        for node in ast.walk(tree.trees[rel]):
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp)
                    and isinstance(node.test.op, ast.And)):
                continue
            auto = quantization = None
            probes: list[str] = []
            shaped = True
            for part in node.test.values:
                if (isinstance(part, ast.Compare) and len(part.ops) == 1
                        and isinstance(part.ops[0], ast.Eq)
                        and isinstance(part.comparators[0], ast.Constant)):
                    value = part.comparators[0].value
                    if is_field(part.left, "moe_runner_backend") and value == "auto":
                        auto = True
                        continue
                    if is_field(part.left, "quantization") and isinstance(value, str):
                        quantization = value
                        continue
                parts = (part.values if isinstance(part, ast.BoolOp)
                         and isinstance(part.op, ast.Or) else [part])
                names = [probe(p) for p in parts]
                if all(names):
                    probes += [str(n) for n in names]
                    continue
                shaped = False
            if not (shaped and auto and quantization and probes):
                continue
            runner = _runner_written(node.body, is_field)
            if runner is None:
                continue
            entry = {"quantization": quantization, "probes": sorted(set(probes)),
                     "runner": runner}
            if entry not in found:
                found.append(entry)
        for node in ast.walk(tree.trees[rel]):
            nested = _quantization_runner(node, probe, is_field)
            if nested is not None and nested not in found:
                found.append(nested)
    return found


def _runner_written(body: list[ast.stmt],
                    is_field: Callable[[ast.expr, str], bool]) -> str | None:
    """"r" for the first `moe_runner_backend = "r"` among the statements."""
    return next((stmt.value.value for stmt in body
                 if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                 and is_field(stmt.targets[0], "moe_runner_backend")
                 and isinstance(stmt.value, ast.Constant)
                 and isinstance(stmt.value.value, str)), None)


def _quantization_runner(node: ast.AST, probe: Callable[[ast.expr], str | None],
                         is_field: Callable[[ast.expr, str], bool]) -> dict[str, Any] | None:
    """The nested form of `moe_runner_platform`'s entry: `if <x>.quantization == "<q>":`, then
    guards that raise unless a platform probe holds (`if not is_sm100_supported(): raise`), then
    `if moe_runner_backend == "auto": moe_runner_backend = "<runner>"` (`--quantization
    nvfp4_online` -> flashinfer_trtllm). No guard: any platform (`probes` empty)."""
    test = node.test if isinstance(node, ast.If) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq) and is_field(test.left, "quantization")
            and isinstance(test.comparators[0], ast.Constant)
            and isinstance(test.comparators[0].value, str)):
        return None
    assert isinstance(node, ast.If)
    probes: list[str] = []
    for stmt in node.body:
        inner = stmt.test if isinstance(stmt, ast.If) else None
        if inner is None:
            return None
        assert isinstance(stmt, ast.If)
        if all(isinstance(s, ast.Raise) for s in stmt.body) and not stmt.orelse:
            if not (isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not)
                    and (name := probe(inner.operand)) is not None):
                return None
            probes.append(name)
            continue
        if (isinstance(inner, ast.Compare) and len(inner.ops) == 1
                and isinstance(inner.ops[0], ast.Eq) and is_field(inner.left, "moe_runner_backend")
                and isinstance(inner.comparators[0], ast.Constant)
                and inner.comparators[0].value == "auto"):
            runner = _runner_written(stmt.body, is_field)
            if runner is None:
                return None
            return {"quantization": test.comparators[0].value, "probes": sorted(set(probes)),
                    "runner": runner}
        return None
    return None


def moe_runner_sm100(tree: Any) -> list[dict[str, Any]]:
    """The MoE runner the model-specific step sets on SM100 when none is chosen: every
    `if <quantization test> [and moe_a2a_backend == "none"] and moe_runner_backend == "auto":
    moe_runner_backend = "<runner>"` under an SM100 test, with the architectures of the branch
    (or `@_register_for`) around it. Each entry: archs, the quantizations that qualify,
    whether an unquantized launch does (`quantization is None`), the runner, `any_a2a` where
    the branch does not test the all-to-all backend, `any_quantization` where it tests no
    quantization at all, and `typed_only` where its function never copies the checkpoint's
    quantization method into the flag (the test reads it as typed)."""
    found: list[dict[str, Any]] = []
    for rel in sorted(tree.trees):
        module = tree.trees[rel]
        parents: dict[ast.AST, ast.AST] | None = None
        for node in ast.walk(module):
            if not isinstance(node, ast.If):
                continue
            test = ast.unparse(node.test)
            if "moe_runner_backend == 'auto'" not in test:
                continue
            runner = _assigns_runner(node.body)
            if runner is None:
                continue
            parents = parents or _parents(module)
            if "quantization" not in test and not _plain_sm100_default(node, parents):
                continue
            archs = _arch_names(node, parents)
            if not archs or not _guarded_by_sm100(node, parents):
                continue
            quantizations: list[str] = []
            unquantized = False
            for compare in ast.walk(node.test):
                if not (isinstance(compare, ast.Compare)
                        and ast.unparse(compare.left).endswith("quantization")):
                    continue
                op, right = compare.ops[0], compare.comparators[0]
                if isinstance(op, ast.In):
                    for element in getattr(right, "elts", ()):
                        if isinstance(element, ast.Constant) and element.value is None:
                            unquantized = True
                        elif isinstance(element, ast.Constant) and isinstance(element.value, str):
                            quantizations.append(element.value)
                elif isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
                    quantizations.append(str(right.value))
                elif isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value is None:
                    unquantized = True
            for compare in ast.walk(node.test):  # `not model_arch.startswith("LongcatFlash")`
                if (isinstance(compare, ast.UnaryOp) and isinstance(compare.op, ast.Not)
                        and isinstance(compare.operand, ast.Call)
                        and isinstance(compare.operand.func, ast.Attribute)
                        and compare.operand.func.attr == "startswith"
                        and ast.unparse(compare.operand.func.value).endswith("model_arch")
                        and compare.operand.args
                        and isinstance(compare.operand.args[0], ast.Constant)):
                    prefix = str(compare.operand.args[0].value)
                    archs = [a for a in archs if not a.startswith(prefix)]
            entry = {"archs": sorted(archs), "quantizations": sorted(set(quantizations)),
                     "unquantized": unquantized, "runner": runner,
                     "where": f"{rel}:{node.lineno}"}
            if "quantization" not in test:
                entry["any_quantization"] = True  # (the branch takes any checkpoint)
            if "moe_a2a_backend == 'none'" not in test:
                entry["any_a2a"] = True  # (0.5.3: no all-to-all test in the branch)
            function: ast.AST = node
            while function in parents and not isinstance(function, ast.FunctionDef):
                function = parents[function]
            source = ast.unparse(function)
            if "quant_method" not in source and "get_quantization_config" not in source:
                entry["typed_only"] = True  # (the checkpoint's method is never copied in)
            found.append(entry)
    return found


def radix_disables_overlap(tree: Any) -> list[str]:
    """Architectures whose model-specific branch turns the overlap scheduler off whenever the
    radix cache is on (`if not self.disable_radix_cache: ... disable_overlap_schedule = True`,
    the hybrid models of releases before the mamba scheduler strategy)."""
    found: set[str] = set()
    for node, body, module in _branches(
            tree, lambda test: test.startswith("not ")
            and test.endswith("not self.disable_radix_cache")):
        if ("disable_overlap_schedule = True" not in body or "no_buffer" in body
                or "speculative" in body):
            continue
        found.update(_arch_names(node, _parents(module)) or ())
    return sorted(found)


def _branches(tree: Any, test: Callable[[str], bool]) -> Iterator[tuple[ast.If, str, ast.Module]]:
    """Every `if` of the argument code whose test (as source text) `test` accepts, with its
    body as source text and its module (`_parents(module)` gives the parent map)."""
    for rel in sorted(tree.trees):
        module = tree.trees[rel]
        for node in ast.walk(module):
            if isinstance(node, ast.If) and test(ast.unparse(node.test)):
                yield node, "\n".join(ast.unparse(b) for b in node.body), module


def _named_strings(stmt: ast.AST) -> tuple[str, list[str]] | None:
    """`name = [strings]` (or a tuple of strings): the name and the strings, else None."""
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.List | ast.Tuple)):
        values = [e.value for e in stmt.value.elts
                  if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(values) == len(stmt.value.elts):
            return stmt.targets[0].id, values
    return None


def _module_lists(tree: Any) -> dict[str, list[str]]:
    """Module-level `NAME = [strings]` of the argument code (last one wins)."""
    found: dict[str, list[str]] = {}
    for rel in sorted(tree.trees):
        for stmt in tree.trees[rel].body:
            listed = _named_strings(stmt)
            if listed is not None:
                found[listed[0]] = listed[1]
    return found


def _module_lists_in(node: ast.AST) -> dict[str, list[str]]:
    """`name = [strings]` assignments anywhere under `node` (a function's own lists)."""
    found: dict[str, list[str]] = {}
    for stmt in ast.walk(node):
        listed = _named_strings(stmt)
        if listed is not None:
            found[listed[0]] = listed[1]
    return found


def _calls_in_order(function: ast.FunctionDef, names: tuple[str, ...]) -> list[str]:
    """The names of `names` a function's statements call (`f(x)`, `self.f()`, `run_hook(f, x)`),
    in source order."""
    seen: list[tuple[int, str]] = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        refs = [node.func, *node.args]
        for ref in refs:
            name = ref.attr if isinstance(ref, ast.Attribute) else (
                ref.id if isinstance(ref, ast.Name) else None)
            if name is not None and name.lstrip("_") in names:
                seen.append((node.lineno, name.lstrip("_")))
    return [name for _line, name in sorted(seen)]


def _string_list(node: ast.AST, lists: dict[str, list[str]]) -> list[str] | None:
    """A literal string list, or the module list a name refers to."""
    if isinstance(node, ast.List | ast.Tuple):
        values = [e.value for e in node.elts
                  if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return values if len(values) == len(node.elts) else None
    if isinstance(node, ast.Name):
        return lists.get(node.id)
    return None


def deterministic_inference(tree: Any) -> dict[str, Any]:
    """What `--enable-deterministic-inference` (or `--rl-on-policy-target`) does to the attention
    backend and the radix cache, read from the release's handler (`_handle_deterministic_inference`
    and, in the pipeline releases, its `_deterministic_*` passes):

    * ``position``: ``before_default`` where the handler runs before the default attention backend
      is chosen (it then sees an untyped backend as None and picks its fallback), ``after_default``
      where it runs after (it sees the default and checks it like a typed one);
    * ``fallback``: the backend an unset one becomes: ``blackwell_mla`` (SM100/SM120, the
      DeepSeek-style architectures of ``fallback_archs``), ``blackwell`` (other models there),
      ``other`` (every other GPU);
    * ``choices``: `DETERMINISTIC_ATTENTION_BACKEND_CHOICES` (another backend is a ValueError);
    * ``mla_archs`` / ``mla_backends``: the architectures whose backend must be one of
      ``mla_backends`` (else a ValueError);
    * ``radix_backends``: `RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND` (another backend turns
      the radix cache off; None where the handler leaves the radix cache alone).

    {} where the release has no such handler."""
    lists = _module_lists(tree)
    choices = lists.get("DETERMINISTIC_ATTENTION_BACKEND_CHOICES")
    handlers = [node for module in tree.trees.values() for node in ast.walk(module)
                if isinstance(node, ast.FunctionDef) and "deterministic" in node.name]
    radix = None
    for function in handlers:
        for node in ast.walk(function):
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                    and len(node.test.ops) == 1
                    and ast.unparse(node.test.left).endswith("attention_backend")
                    and "disable_radix_cache" in "\n".join(ast.unparse(b) for b in node.body)):
                continue
            op, right = node.test.ops[0], node.test.comparators[0]
            if isinstance(op, ast.NotIn):
                radix = _string_list(right, lists)
            elif isinstance(op, ast.NotEq) and isinstance(right, ast.Constant):
                radix = [str(right.value)]
    if choices is None or not handlers:
        return {}
    out: dict[str, Any] = {"choices": choices, "radix_backends": radix}
    functions = [node for module in tree.trees.values() for node in ast.walk(module)
                 if isinstance(node, ast.FunctionDef)]
    for function in functions:
        order = _calls_in_order(function, ("handle_deterministic_inference",
                                           "handle_attention_backend_compatibility"))
        if "handle_deterministic_inference" in order and (
                "handle_attention_backend_compatibility" in order):
            first = order.index("handle_deterministic_inference")
            out["position"] = ("before_default" if first < order.index(
                "handle_attention_backend_compatibility") else "after_default")
            break
    for function in handlers:
        text = ast.unparse(function)
        if "Falling back to" in text and "for deterministic inference" in text:
            assigned = sorted(
                (node.lineno, node.value.value) for node in ast.walk(function)
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and ast.unparse(node.targets[0]).split(".")[-1] in ("attention_backend",
                                                                    "backend"))
            fallback = [value for _line, value in assigned]
            if len(fallback) == 2:  # no MLA branch yet: Blackwell, everything else
                fallback.insert(0, fallback[0])
            if len(fallback) == 3:  # Blackwell MLA, Blackwell other, everything else
                out["fallback"] = dict(zip(("blackwell_mla", "blackwell", "other"), fallback,
                                           strict=True))
        for node in ast.walk(function):
            # `model_arch in [...]` beside `is_deepseek_model` (the handler), or the
            # `architectures[0] in [...]` of `_deterministic_is_deepseek_model`
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1
                    and isinstance(node.ops[0], ast.In)):
                continue
            left = ast.unparse(node.left)
            archs = _string_list(node.comparators[0], lists)
            if archs is None or not (left == "model_arch" or left.endswith("architectures[0]")):
                continue
            key = ("fallback_archs" if function.name == "_deterministic_is_deepseek_model"
                   else "mla_archs")
            out.setdefault(key, archs)
        parents = _parents(function)
        local = {**lists, **_module_lists_in(function)}  # a list the handler itself names
        for node in ast.walk(function):
            # the MLA refusal: a raise naming DeepSeek / absorbed-MLA models, under an
            # `attention_backend not in [...]` test (inside or around `if is_deepseek_model`)
            if not (isinstance(node, ast.Raise) and node.exc is not None and any(
                    word in ast.unparse(node.exc) for word in ("DeepSeek", "absorbed-MLA"))):
                continue
            current = parents.get(node)
            while current is not None and "mla_backends" not in out:
                if isinstance(current, ast.If):
                    for inner in ast.walk(current.test):
                        if (isinstance(inner, ast.Compare) and len(inner.ops) == 1
                                and isinstance(inner.ops[0], ast.NotIn)
                                and ast.unparse(inner.left).endswith("attention_backend")):
                            backends = _string_list(inner.comparators[0], local)
                            if backends is not None:
                                out["mla_backends"] = backends
                current = parents.get(current)
    out.setdefault("mla_archs", [])
    out.setdefault("fallback_archs", out["mla_archs"])
    return out


# The speculative hook's per-algorithm handlers and the algorithms each serves.
_SPEC_HANDLERS: dict[str, tuple[str, ...]] = {
    "_handle_eagle_family": ("EAGLE", "EAGLE3", "STANDALONE"),
    "_handle_ngram": ("NGRAM",),
    "_handle_dflash": ("DFLASH",),
    "_handle_dspark": ("DSPARK",),
}


def _sets_mixed_chunk_off(stmt: ast.stmt) -> bool:
    text = ast.unparse(stmt)
    return ("enable_mixed_chunk = False" in text or "enable_mixed_chunk=False" in text)


def mixed_chunk_off_algorithms(tree: Any) -> list[str] | None:
    """The algorithms whose handler turns `--enable-mixed-chunk` off, in releases whose speculative
    step is split into per-algorithm handlers (`arg_groups/speculative_hook.py`): a handler that
    turns it off whenever it is on counts for all its algorithms; one that turns it off only where
    `SpeculativeAlgorithm.supports_mixed_chunk()` is False counts for the algorithms that method
    leaves out. None where the release has no such hook (the monolithic step: its template)."""
    hook = tree.trees.get("sglang/srt/arg_groups/speculative_hook.py")
    if hook is None:
        return None
    supports: list[str] | None = None
    spec_info = tree.trees.get("sglang/srt/speculative/spec_info.py")
    for node in ast.walk(spec_info) if spec_info is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name == "supports_mixed_chunk":
            supports = [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
                        and isinstance(n.value, ast.Name) and n.value.id == "SpeculativeAlgorithm"]
    off: set[str] = set()
    for node in hook.body:
        if not (isinstance(node, ast.FunctionDef) and node.name in _SPEC_HANDLERS):
            continue
        family = _SPEC_HANDLERS[node.name]
        for stmt in node.body:
            if isinstance(stmt, ast.If) and "enable_mixed_chunk" in ast.unparse(stmt.test):
                if not any(_sets_mixed_chunk_off(s) for s in stmt.body):
                    continue
                test = ast.unparse(stmt.test)
                if "supports_mixed_chunk" in test and supports is not None:
                    off.update(a for a in family if a not in supports)
                elif (isinstance(stmt.test, ast.Attribute | ast.Name)
                      and test.split(".")[-1] == "enable_mixed_chunk"):
                    off.update(family)
            elif not isinstance(stmt, ast.If) and _sets_mixed_chunk_off(stmt):
                off.update(family)
    return sorted(off)


def trtllm_disables_radix(tree: Any) -> list[str]:
    """Architectures whose model-specific branch, on SM100, turns the radix cache off (and the
    overlap scheduler back on) when the attention backend is trtllm_mha and the radix cache is on
    (`if ... attention_backend == "trtllm_mha": disable_radix_cache = True`: trtllm_mha cannot
    run the page size 1 their mamba radix cache needs; the hybrid models' branches of the releases
    before the mamba scheduler strategy)."""
    found: set[str] = set()
    for node, body, module in _branches(
            tree, lambda test: "attention_backend == 'trtllm_mha'" in test):
        if "disable_radix_cache = True" not in body:
            continue
        parents = _parents(module)
        archs = _arch_names(node, parents)
        if archs and _guarded_by_sm100(node, parents):
            found.update(archs)
    return sorted(found)


def mis_disables_radix(tree: Any) -> bool:
    """Whether `--enable-mis` turns the radix cache off (the multi-item scoring step)."""
    for module in tree.trees.values():
        for node in ast.walk(module):
            if (isinstance(node, ast.FunctionDef) and "multi_item_scoring" in node.name
                    and ("disable_radix_cache = True" in ast.unparse(node)
                         or "disable_radix_cache=True" in ast.unparse(node))):
                return True
    return False


_TEMPLATE_NAMES = {"option_string": "option", "replacement": "replacement",
                   "self.new_flag": "new_flag"}


def _template(node: ast.AST) -> str | None:
    """An f-string as a `str.format` template: `option_string` -> {option}, `replacement` ->
    {replacement}, `self.new_flag` -> {new_flag}; None when it reads anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if not isinstance(node, ast.JoinedStr):
        return None
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out.append(part.value.replace("{", "{{").replace("}", "}}"))
        elif isinstance(part, ast.FormattedValue) and ast.unparse(part.value) in _TEMPLATE_NAMES:
            out.append("{" + _TEMPLATE_NAMES[ast.unparse(part.value)] + "}")
        else:
            return None
    return "".join(out)


def deprecated_actions(tree: Any, flags: dict[str, Any]) -> dict[str, Any]:
    """Every flag of the release's parser whose action is one of SGLang's `Deprecated*Action`
    classes, and what that class prints when the flag is typed (read from its `__call__`):

    ``{"messages": {class: {"message": template, "replacement": template}}, "options":
    {option: {"action": class, "new_flag": str | None, "refused": bool}}}``, where ``message``
    is the `print_deprecated_warning` f-string ({option}, {replacement}), ``replacement`` the text
    a `new_flag` adds ({new_flag}); ``refused`` where the class stops the launch instead (a
    `raise`, or `parser.error` for a flag registered with an `error_message`)."""
    messages: dict[str, dict[str, Any]] = {}
    raising: set[str] = set()
    error_param: set[str] = set()
    for module in tree.trees.values():
        for cls in ast.walk(module):
            if not (isinstance(cls, ast.ClassDef) and cls.name.startswith("Deprecated")
                    and cls.name.endswith("Action")):
                continue
            call = next((f for f in cls.body if isinstance(f, ast.FunctionDef)
                         and f.name == "__call__"), None)
            if call is None:
                continue
            text = ast.unparse(call)
            if "error_message" in text and "parser.error" in text:
                error_param.add(cls.name)
            entry: dict[str, Any] = {}
            for node in ast.walk(call):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id == "print_deprecated_warning" and node.args):
                    entry["message"] = _template(node.args[0])
                if (isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "replacement"
                        and isinstance(node.value, ast.IfExp)):
                    entry["replacement"] = _template(node.value.body)
            if entry.get("message"):
                messages[cls.name] = {"message": entry["message"],
                                      "replacement": entry.get("replacement") or ""}
            elif any(isinstance(n, ast.Raise) for n in ast.walk(call)):
                raising.add(cls.name)
    kwargs: dict[str, dict[str, Any]] = {}
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                continue
            words = {k.arg: k.value for k in node.keywords if k.arg}
            action = words.get("action")
            if not (isinstance(action, ast.Name) and action.id.startswith("Deprecated")):
                continue
            new = words.get("new_flag")
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    kwargs[arg.value] = {
                        "new_flag": str(new.value) if isinstance(new, ast.Constant) else None,
                        "error": "error_message" in words}
    options: dict[str, Any] = {}
    for action in flags.get("actions", []):
        name = str(action.get("action") or "")
        if name not in messages and name not in raising:
            continue
        for option in action.get("option_strings", []):
            seen = kwargs.get(option, {"new_flag": None, "error": False})
            options[option] = {"action": name, "new_flag": seen["new_flag"],
                               "refused": name in raising or (seen["error"]
                                                              and name in error_param)}
    if not options:
        return {}
    return {"messages": dict(sorted(messages.items())), "options": dict(sorted(options.items()))}


def spec_v2_runs_trees(tree: Any) -> bool:
    """Whether the overlapped speculative worker (spec v2) takes a typed topk > 1 itself: the
    release's EAGLE-family handler (`_handle_eagle_family` of `arg_groups/speculative_hook.py`,
    else `server_args.py`) has no branch on topk that turns the overlap scheduler off (the spec v1
    fallback, 0.5.11-0.5.2x) or raises for spec v2 (0.5.7-0.5.10). 0.5.5-0.5.6.x turn overlap on
    for spec v2 whatever the topk. False where the release has no spec v2 branch."""
    hook = tree.trees.get("sglang/srt/arg_groups/speculative_hook.py")
    handler = next((n for n in (hook.body if hook is not None else ())
                    if isinstance(n, ast.FunctionDef) and n.name == "_handle_eagle_family"), None)
    if handler is None:
        handler = tree.trees.get("sglang/srt/server_args.py")
        if handler is None or not any(
                isinstance(n, ast.If) and "SGLANG_ENABLE_SPEC_V2" in ast.unparse(n.test)
                and any("disable_overlap_schedule = False" in ast.unparse(b) for b in n.body)
                for n in ast.walk(handler)):
            return False
    for node in ast.walk(handler):
        if not (isinstance(node, ast.If) and "speculative_eagle_topk" in ast.unparse(node.test)):
            continue
        body = "\n".join(ast.unparse(b) for b in node.body)
        if ("disable_overlap_schedule = True" in body or "disable_overlap_schedule=True" in body
                or ("raise" in body and "Spec v2" in body)):
            return False
    return True


def extra_buffer_linear_backend(tree: Any) -> str | None:
    """The linear-attention backend the mamba extra buffer needs (the `linear_attn_backend ==
    "<backend>"` of `supports_mamba_cache_extra_buffer`, 0.5.15-0.5.19); None where the release's
    check reads no such flag."""
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not (isinstance(node, ast.FunctionDef)
                    and node.name.lstrip("_") in ("supports_mamba_cache_extra_buffer",
                                                  "support_mamba_cache_extra_buffer")):
                continue
            for inner in ast.walk(node):
                if (isinstance(inner, ast.Compare) and len(inner.ops) == 1
                        and isinstance(inner.ops[0], ast.Eq)
                        and ast.unparse(inner.left).endswith("linear_attn_backend")
                        and isinstance(inner.comparators[0], ast.Constant)):
                    return str(inner.comparators[0].value)
    return None


class _NotLiteral(Exception):
    """The expression reads something other than literals and the given names."""


def _fold(node: ast.expr, names: dict[str, Any]) -> Any:
    """The value of a message expression: string literals, f-strings, `+`, the given names
    (locals bound to literals), `sorted(x)` and `"sep".join(x)`; `_NotLiteral` otherwise."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.JoinedStr):
        return "".join(str(_fold(v, names)) for v in node.values)
    if isinstance(node, ast.FormattedValue) and node.format_spec is None:
        value = _fold(node.value, names)
        return repr(value) if node.conversion == ord("r") else str(value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _fold(node.left, names) + _fold(node.right, names)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "sorted":
            return sorted(_fold(node.args[0], names))
        if (isinstance(func, ast.Attribute) and func.attr == "join"
                and isinstance(func.value, ast.Constant) and isinstance(func.value.value, str)):
            return func.value.value.join(_fold(node.args[0], names))
    raise _NotLiteral(ast.unparse(node))


def _literal_message(node: ast.expr, names: dict[str, Any]) -> str | None:
    """A raise's message as SGLang prints it, when it is built from literals only."""
    try:
        value = _fold(node, names)
    except (_NotLiteral, TypeError):
        return None
    return value if isinstance(value, str) else None


def quantize_and_serve(tree: Any) -> dict[str, Any] | None:
    """`ModelConfig._validate_quantize_and_serve_config` (`--quantize-and-serve`): the
    quantization methods it accepts (the local list it tests `self.quantization` against) and
    its two refusals' words: `needs_method` (a method outside the list) and `disabled` (the
    feature is turned off for every method). None where the release has no such check."""
    module = tree.trees.get("sglang/srt/configs/model_config.py")
    if module is None:
        return None
    function = next((n for n in ast.walk(module) if isinstance(n, ast.FunctionDef)
                     and n.name == "_validate_quantize_and_serve_config"), None)
    if function is None:
        return None
    names: dict[str, Any] = {}
    for stmt in function.body:
        found = _named_strings(stmt)
        if found is not None:
            names[found[0]] = found[1]
    methods: list[str] | None = None
    for node in ast.walk(function):  # `self.quantization in <list, or a local bound to one>`
        if (isinstance(node, ast.Compare) and len(node.ops) == 1
                and isinstance(node.ops[0], ast.In)):
            methods = _string_list(node.comparators[0], names)
    raises = sorted((n for n in ast.walk(function) if isinstance(n, ast.Raise)
                     and isinstance(n.exc, ast.Call) and n.exc.args), key=lambda n: n.lineno)
    if methods is None or len(raises) != 2:
        return None
    messages = [_literal_message(r.exc.args[0], names) for r in raises]  # type: ignore[union-attr]
    kinds = [r.exc.func.id if isinstance(r.exc.func, ast.Name) else None  # type: ignore[union-attr]
             for r in raises]
    if None in messages or kinds[1] != "NotImplementedError":
        return None
    return {"methods": sorted(methods), "needs_method": messages[0],
            "disabled": messages[1]}


_MODEL_CONFIG_CALLS = frozenset({"model_config_of", "get_model_config", "from_server_args"})


def _top_level_calls(function: ast.FunctionDef) -> list[str]:
    """The names a function calls in its own top-level statements (not inside a branch, loop
    or nested function), in source order."""
    out: list[str] = []
    for stmt in function.body:
        if isinstance(stmt, ast.If | ast.For | ast.While | ast.Try | ast.With
                      | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Call)),
                           key=lambda n: (n.lineno, n.col_offset)):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else (
                func.id if isinstance(func, ast.Name) else None)
            if name is not None:
                out.append(name)
            out += [a.id for a in node.args if isinstance(a, ast.Name)]  # run_hook(f, sa)
    return out


def config_read_first(tree: Any) -> bool | None:
    """Whether the resolution pipeline reads config.json itself (`get_config(...)` in a step's
    own top-level statements) before any step builds the model config (`model_config_of`), so
    a model type transformers does not know stops the launch before ModelConfig's first check
    (--quantize-and-serve). None without a `run_resolution_pipeline`."""
    functions: dict[str, ast.FunctionDef] = {}
    for rel, module in tree.trees.items():
        if "/arg_groups/" in rel or rel.endswith("server_args.py"):
            for node in module.body:
                if isinstance(node, ast.FunctionDef):
                    functions.setdefault(node.name, node)
    pipeline = functions.get("run_resolution_pipeline")
    if pipeline is None:
        return None
    for name in _top_level_calls(pipeline):
        step = functions.get(name)
        if step is None or step is pipeline:
            continue
        calls = _top_level_calls(step)
        builds = next((i for i, c in enumerate(calls) if c in _MODEL_CONFIG_CALLS), None)
        reads = next((i for i, c in enumerate(calls) if c == "get_config"), None)
        if reads is not None and (builds is None or reads < builds):
            return True
        if builds is not None:
            return False
    return False
