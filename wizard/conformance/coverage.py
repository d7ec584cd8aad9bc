"""Coverage of a release's argument path: every `assert`/`raise` SGLang's launch can reach
before it touches a GPU, and which of them the wizard models as a rule.

Reachability is read from the source with `ast`: starting at the launch's entry points
(`ServerArgs.__post_init__`, `check_server_args`, the 0.5.2x `run_resolution_pipeline` and its
hooks, `ModelConfig.__init__`), every function called by name (`f()`, `self.f()`, `x.f()`,
`run_hook(f, ...)`) inside the argument code is followed. That over-approximates (a name shared
by two functions counts for both) and never follows code outside the argument files. Sites that
only run on another platform (`if is_npu():` around them) are not counted. Each reachable site
is either a rule's located statement or matched by a written reason in `unmodelled.json`; the rest
are listed as not yet reasoned.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wizard.conformance.locate import SourceTree, _assert_line, _platform_of

REASONS_PATH = Path(__file__).with_name("unmodelled.json")
ENTRY_POINTS = ("__post_init__", "check_server_args", "run_resolution_pipeline",
                "_run_resolution_pipeline", "resolve_once", "from_server_args")


@dataclass(frozen=True)
class Coverage:
    """The coverage of one release's argument path."""

    reachable: int  # raise sites reachable from the launch path (CUDA)
    rules: int  # of them, the located statement of a rule
    reasoned: list[tuple[str, str, str]]  # (where, statement, reason) not modelled, with a reason
    unreasoned: list[tuple[str, str]]  # (where, statement) not modelled, no reason written yet

    def lines(self) -> list[str]:
        """The review lines (`coverage`, then `unmodelled` / `unreasoned` per site)."""
        out = [f"coverage {self.reachable} raise sites reachable from the launch path: "
               f"{self.rules} are rules, {len(self.reasoned)} not modelled with a reason, "
               f"{len(self.unreasoned)} without a reason yet"]
        out += [f"unmodelled {where}: {text[:110]} -- {reason}"
                for where, text, reason in self.reasoned]
        out += [f"unreasoned {where}: {text[:150]}" for where, text in self.unreasoned]
        return out


def _called_names(function: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                names.add(func.id)
            elif isinstance(func, ast.Attribute):
                names.add(func.attr)
            for arg in node.args[:1]:  # run_hook(handle_x, server_args)
                if isinstance(arg, ast.Name):
                    names.add(arg.id)
    return names


def reachable_functions(tree: SourceTree) -> set[str]:
    """Names of the argument code's functions reachable from the launch's entry points."""
    calls: dict[str, set[str]] = {}
    for module in tree.trees.values():
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                calls.setdefault(node.name, set()).update(_called_names(node))
    seen: set[str] = set()
    todo = [name for name in ENTRY_POINTS if name in calls]
    if "__init__" in calls:  # ModelConfig.__init__ (and other constructors) run at launch
        todo.append("__init__")
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(n for n in calls.get(name, ()) if n in calls and n not in seen)
    return seen


def load_reasons() -> list[tuple[re.Pattern[str], str]]:
    """The written reasons: (pattern on the statement text or file:function, reason)."""
    data = json.loads(REASONS_PATH.read_text(encoding="utf-8"))
    return [(re.compile(entry["pattern"], re.I), entry["reason"]) for entry in data["reasons"]]


def coverage(tree: SourceTree, sites: dict[str, dict[str, Any]],
             generic: set[str] | frozenset[str] = frozenset()) -> Coverage:
    """Count the reachable raise sites of `tree` and match each against rules and reasons
    (`generic`: the `file:line` of the R-ARG-SITE sites, rules as well)."""
    functions = reachable_functions(tree)
    covered = {s["where"] for s in sites.values()} | set(generic)
    reasons = load_reasons()
    reachable = rules = 0
    reasoned: list[tuple[str, str, str]] = []
    unreasoned: list[tuple[str, str]] = []
    for stmt in tree.statements:
        node = stmt.node
        if not isinstance(node, ast.Assert | ast.Raise) or stmt.function not in functions:
            continue
        if _platform_of(tree.trees[stmt.path], node) is not None:
            continue
        line = _assert_line(node) if isinstance(node, ast.Assert) else node.lineno
        where = f"{stmt.path}:{line}"
        reachable += 1
        if where in covered:
            rules += 1
            continue
        subject = f"{stmt.path}:{stmt.function}: {stmt.text}"
        reason = next((text for pattern, text in reasons if pattern.search(subject)), None)
        if reason is None:
            unreasoned.append((where, stmt.text))
        else:
            reasoned.append((where, stmt.text, reason))
    return Coverage(reachable, rules, reasoned, unreasoned)
