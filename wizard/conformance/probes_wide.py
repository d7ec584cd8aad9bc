"""Release-data probes for the wide launch path: values SGLang derives from its own source that the
wide conformance cases reach (quantization method tables per platform, the MoE runner the model
overrides pick on SM100). Stdlib only; they read a release's source tree (`locate.SourceTree`).
"""

from __future__ import annotations

import ast
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


def _parents(module: ast.Module) -> dict[ast.AST, ast.AST]:
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
        current = parents.get(current)
    return None


def _guarded_by_sm100(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    current = parents.get(node)
    while current is not None:
        if isinstance(current, ast.If) and "sm100" in ast.unparse(current.test):
            return True
        current = parents.get(current)
    return False


def _assigns_runner(body: list[ast.stmt]) -> str | None:
    for stmt in body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)):
            continue
        target = ast.unparse(stmt.targets[0])
        if target.endswith(("moe_runner_backend", "['moe_runner_backend']")) and (
                "speculative" not in target):
            return str(stmt.value.value)
    return None


def moe_runner_sm100(tree: Any) -> list[dict[str, Any]]:
    """The MoE runner the model-specific step sets on SM100 when none is chosen: every
    `if <quantization test> and moe_a2a_backend == "none" and moe_runner_backend == "auto":
    moe_runner_backend = "<runner>"` under an SM100 test, with the architectures of the branch
    (or `@_register_for`) around it. Each entry: archs, the quantizations that qualify,
    whether an unquantized launch does (`quantization is None`), the runner."""
    found: list[dict[str, Any]] = []
    for rel in sorted(tree.trees):
        module = tree.trees[rel]
        parents: dict[ast.AST, ast.AST] | None = None
        for node in ast.walk(module):
            if not isinstance(node, ast.If):
                continue
            test = ast.unparse(node.test)
            if not ("moe_runner_backend == 'auto'" in test and "moe_a2a_backend == 'none'" in test
                    and "quantization" in test):
                continue
            runner = _assigns_runner(node.body)
            if runner is None:
                continue
            parents = parents or _parents(module)
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
            found.append({"archs": sorted(archs), "quantizations": sorted(set(quantizations)),
                          "unquantized": unquantized, "runner": runner,
                          "where": f"{rel}:{node.lineno}"})
    return found


def radix_disables_overlap(tree: Any) -> list[str]:
    """Architectures whose model-specific branch turns the overlap scheduler off whenever the
    radix cache is on (`if not self.disable_radix_cache: ... disable_overlap_schedule = True`,
    the hybrid models of releases before the mamba scheduler strategy)."""
    found: set[str] = set()
    for rel in sorted(tree.trees):
        module = tree.trees[rel]
        parents: dict[ast.AST, ast.AST] | None = None
        for node in ast.walk(module):
            if not (isinstance(node, ast.If)
                    and ast.unparse(node.test).endswith("not self.disable_radix_cache")
                    and ast.unparse(node.test).startswith("not ")):
                continue
            body = "\n".join(ast.unparse(b) for b in node.body)
            if ("disable_overlap_schedule = True" not in body or "no_buffer" in body
                    or "speculative" in body):
                continue
            parents = parents or _parents(module)
            found.update(_arch_names(node, parents) or ())
    return sorted(found)
