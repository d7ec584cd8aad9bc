"""The house (issue 26): no import circles, no import back up a floor, imports at module top.

The graph is read with `ast` from every module of `wizard/` and `screens/`. An import is a
(module, imported module) pair; every kind counts: at module top, inside a function, under
`if TYPE_CHECKING:` (a type is a dependency too) and a module named by a string constant
(`importlib.import_module("wizard.x")`, a registry of command modules). `from pkg import name`
imports `pkg.name` when that is a module, else `pkg`.

Run it as a script for the whole picture: `.venv/bin/python tests/test_architecture.py`.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("wizard", "screens")

#: The floors, lowest first: a module imports its own floor and the floors below, never one above.
#: A module sits on the floor of its longest matching pattern (`x.*` is `x` and what is under it).
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Helpers that know nothing of SGLang or the profile: limits, atomic files, YAML text,
    # where profiles live, undo history, the rendezvous address, the tool's own errors, the
    # compiled-code cache.
    ("helpers", ("wizard", "wizard.limits", "wizard.files", "wizard.yaml_text",
                 "wizard.profile_paths", "wizard.history", "wizard.rendezvous", "wizard.errors",
                 "wizard.codecache")),
    # SGLang's data and how to read it (releases, versions, flag tables, canonical fields), the
    # secret-flag list, the GPU catalog and what the SMI tools print, model facts from configs.
    ("sglang data and facts", ("wizard.sglang.*", "wizard.secrets", "wizard.gpus",
                               "wizard.nvidia_smi", "wizard.amd_smi", "wizard.model_files",
                               "wizard.model_facts", "wizard.model_params", "wizard.model_info",
                               "wizard.example_models")),
    # The Profile (pydantic): its schema, the wording of its problems, its TOML files; its launch
    # command (render); the report's data shapes (Finding, Fix, Report: plain dataclasses).
    ("profile", ("wizard.profile_schema", "wizard.profile_problems", "wizard.profile",
                 "wizard.sglang.render", "wizard.rules.report")),
    # Facts put together: what each algorithm needs, the memory plan (and the CUDA caching
    # allocator it replays for --cpu-offload-gb), the Hub reader.
    ("plans", ("wizard.applicability", "wizard.cuda_segments", "wizard.memory", "wizard.hub")),
    # The rule registry and the pure engine, and the report it writes.
    ("rules", ("wizard.rules.*",)),
    # A profile as launches: one per node (its checks are registered `Check`s), in a container,
    # as Slurm / LWS exports; and a pasted command read back into a profile.
    ("launches", ("wizard.multinode", "wizard.container", "wizard.exports", "wizard.sglang.parse")),
    # The core's public API and what builds on it: check, verdict, log stages, conformance.
    ("core", ("wizard.api", "wizard.choices", "wizard.verdict", "wizard.logstages",
              "wizard.conformance.*")),
    # The only async I/O: SSH, launch (one and several nodes), logs, run records.
    ("remote", ("wizard.remote.*",)),
    # Subcommands: argparse wiring and printing, one module per area.
    ("command line", ("wizard.check_cli", "wizard.inspect_cli", "wizard.profiles_cli",
                      "wizard.export_cli", "wizard.sglang.cli", "wizard.remote.cli",
                      "wizard.remote.commands", "wizard.remote.multinode_cli",
                      "wizard.conformance.cli")),
    # What every screen shares: the door to the core, messages, keys, form widgets, step names.
    ("screen parts", ("screens", "screens.core", "screens.messages", "screens.keys",
                      "screens.forms", "screens.steps", "screens.state", "screens.widgets.*")),
    ("screens", ("screens.*",)),
    ("app", ("screens.app",)),
    # The console script: a subcommand's module or the UI.
    ("entry point", ("wizard.cli",)),
)

_FIRST_SCREEN = ("the first screen paints before the profile model (pydantic) and the rule engine "
                 "load (tests/tui/test_startup.py)")
_SSH = "SSH (asyncssh) loads when a launch, runs or nodes screen first connects"
_LOGS = ("`logs --follow`, `stop` and `runs` start without the profile model, the checker and the "
         "rule registry (they run in loops and scripts)")

#: The imports kept inside a function (or named by a string), each for a start that must not pay
#: for it; every other import sits at module top. Importer -> (imported modules, why). Measured
#: per start: the cold `check -- CMD` (bench/bench_cold_check.py,
#: tests/rules/test_cold_check_imports.py), `logs` / `stop` / `runs`, the TUI's first screen.
LAZY: dict[str, tuple[tuple[str, ...], str]] = {
    # the console script
    "wizard.cli": (
        ("screens.app", "wizard.check_cli", "wizard.conformance.cli", "wizard.export_cli",
         "wizard.inspect_cli", "wizard.profiles_cli", "wizard.remote.cli",
         "wizard.remote.multinode_cli", "wizard.sglang.cli"),
        "a subcommand loads its own module only (COMMAND_MODULES / FAST_COMMANDS: `check` the "
        "checker alone), the UI only without a subcommand"),
    # the cold check
    "wizard.check_cli": (("wizard.profile", "wizard.profile_problems"),
                         "`check -- CMD` runs without the profile model; a profile file needs it"),
    "wizard.api": (("wizard.hub", "wizard.multinode", "wizard.profile_schema",
                    "wizard.sglang.render"),
                   "`check -- CMD` loads neither the profile model nor the Hub reader"),
    "wizard.sglang.parse": (("wizard.container", "wizard.multinode", "wizard.profile_schema"),
                            "argv is parsed for the cold check without building a Profile"),
    "wizard.rules.draft": (("wizard.applicability",),
                           "the MTP lists load once model facts are read"),
    "wizard.rules.gpu_memory": (("wizard.memory",),
                                "the memory plan loads once model facts are read"),
    "wizard.rules.parallelism": (("wizard.memory",),
                                 "the layer split of a partition fix needs the memory plan's "
                                 "reader of the release's split, only once model facts are read"),
    "wizard.sglang.flags": (("wizard.files",),
                            "only writing the derived indexes (onboarding) needs the atomic writer"),
    # logs / stop / runs
    "wizard.logstages": (("wizard.rules.catalog",), _LOGS),
    "wizard.nvidia_smi": (("wizard.gpus",), _LOGS),
    "wizard.remote.preflight": (("wizard.amd_smi",), _LOGS),
    "wizard.remote": (
        ("wizard.remote.burst", "wizard.remote.connection", "wizard.remote.nodes_flow",
         "wizard.remote.preflight", "wizard.remote.records", "wizard.remote.runs",
         "wizard.remote.session", "wizard.remote.watch"),
        "`import wizard.remote` stays cheap: its public names load on first use"),
    "wizard.remote.cli": (("wizard.remote.commands",),
                          "the remote subcommands parse their options without asyncssh"),
    "wizard.remote.commands": (("wizard.profile", "wizard.profile_problems",
                                "wizard.sglang.render"), _LOGS),
    "wizard.remote.flow": (
        ("wizard.api", "wizard.exports", "wizard.model_files", "wizard.model_info",
         "wizard.profile", "wizard.remote.container", "wizard.sglang.render"), _LOGS),
    "wizard.remote.multinode_cli": (
        ("wizard.remote.connection", "wizard.remote.multinode", "wizard.remote.nodes_flow"),
        "every subcommand's parser is built for --help and each other subcommand: SSH loads "
        "when a nodes command runs"),
    # the terminal UI
    "wizard.verdict": (("wizard.api", "wizard.choices"),
                       "the step bar shows the verdict, and " + _FIRST_SCREEN),
    "screens.app": (
        ("screens.algorithm", "screens.dialogs", "screens.model", "screens.parameters",
         "screens.review", "screens.runs", "wizard.files", "wizard.profile",
         "wizard.profile_problems", "wizard.profile_schema", "wizard.sglang.render"),
        _FIRST_SCREEN + "; each step and dialog is built when first shown"),
    "screens.start": (("wizard.profile", "wizard.profile_problems"), _FIRST_SCREEN),
    "screens.core": (
        ("wizard.api", "wizard.choices", "wizard.container", "wizard.gpus", "wizard.hub",
         "wizard.model_files", "wizard.model_info", "wizard.sglang.parse", "wizard.sglang.render",
         "wizard.sglang.versions"),
        "the door to the core loads each piece on first use: " + _FIRST_SCREEN),
    "screens.launch": (("wizard.remote.flow",), _SSH),
    "screens.runs": (("wizard.remote.flow",), _SSH),
    "screens.nodes": (("wizard.remote.multinode", "wizard.remote.nodes_flow"), _SSH),
}


def documented_lazy() -> set[tuple[str, str]]:
    """`LAZY` as (importer, imported) pairs."""
    return {(src, dst) for src, (dsts, _) in LAZY.items() for dst in dsts}


@dataclass(frozen=True)
class Import:
    """One import statement (or module-naming string) of `src` that reaches `dst`."""

    src: str
    dst: str
    line: int
    kind: str  # "top" | "function" | "typing" | "string"


def module_name(path: Path) -> str:
    """`wizard/sglang/flags.py` -> `wizard.sglang.flags` (a package is its `__init__`)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of the packages, by dotted name."""
    return {
        module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def _internal(name: str) -> str | None:
    """The innermost module of ours that `name` is or is inside of."""
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _base(src: str, level: int, module: str | None) -> str:
    """The absolute module of a (possibly relative) `from ... import`."""
    if not level:
        return module or ""
    parts = src.split(".")
    if modules()[src].name != "__init__.py":
        parts.pop()
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([module] if module else [])])


def imports_of(src: str) -> list[Import]:
    """The internal imports of one module, with where each sits."""
    tree = ast.parse(modules()[src].read_text(encoding="utf-8"))
    found: list[Import] = []

    def add(dst: str | None, node: ast.stmt | ast.expr, kind: str) -> None:
        if dst and dst != src:
            found.append(Import(src, dst, node.lineno, kind))

    def walk(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = kind
            if kind == "top" and isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            ):
                inner = "function"
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    visit(stmt, "typing")
                for stmt in child.orelse:
                    visit(stmt, kind)
                continue
            visit(child, inner)

    def visit(node: ast.AST, kind: str) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(_internal(alias.name), node, kind)
        elif isinstance(node, ast.ImportFrom):
            base = _base(src, node.level, node.module)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                add(full if full in modules() else _internal(base), node, kind)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "." in node.value
            and node.value in modules()
        ):
            add(node.value, node, "string" if kind != "typing" else kind)
        walk(node, kind)

    walk(tree, "top")
    return found


@cache
def all_imports() -> tuple[Import, ...]:
    """Every internal import of every module."""
    return tuple(i for name in sorted(modules()) for i in imports_of(name))


def pairs(kinds: Iterable[str] | None = None) -> set[tuple[str, str]]:
    """(importer, imported) of the imports of `kinds` (all when None)."""
    wanted = None if kinds is None else set(kinds)
    return {(i.src, i.dst) for i in all_imports() if wanted is None or i.kind in wanted}


def floor_of(module: str) -> int:
    """The floor a module sits on (its longest matching pattern)."""
    best: tuple[int, int] | None = None  # (pattern length, floor)
    for number, (_, patterns) in enumerate(FLOORS):
        for pattern in patterns:
            stem = pattern.removesuffix(".*")
            hit = module == stem or (pattern.endswith(".*") and module.startswith(stem + "."))
            if hit and (best is None or len(pattern) > best[0]):
                best = (len(pattern), number)
    if best is None:
        raise LookupError(f"{module} is on no floor: add it to FLOORS")
    return best[1]


def cycles() -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for src, dst in pairs():
        graph[src].add(dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(modules())))
    try:
        for name in sorted(modules()):
            if name not in index:
                strong(name)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(out)


def upward() -> list[Import]:
    """Imports of a module on a higher floor than the importer's."""
    return [i for i in all_imports() if floor_of(i.dst) > floor_of(i.src)]


def lazy() -> set[tuple[str, str]]:
    """(importer, imported) pairs imported inside a function or by a module-naming string."""
    return pairs(("function", "string"))


def third_party(src: str) -> Iterator[tuple[str, int]]:
    """Top-level package names `src` imports (any kind), with the line."""
    for node in ast.walk(ast.parse(modules()[src].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0], node.lineno


# ------------------------------------------------------------------------------------ tests


def test_every_module_has_a_floor() -> None:
    for name in modules():
        floor_of(name)


def test_no_import_circles() -> None:
    assert cycles() == []


def test_no_import_runs_back_up_a_floor() -> None:
    found = [f"{i.src}:{i.line} ({FLOORS[floor_of(i.src)][0]}) -> {i.dst} "
             f"({FLOORS[floor_of(i.dst)][0]})" for i in upward()]
    assert found == []


def test_imports_sit_at_module_top_except_the_documented_lazy_ones() -> None:
    assert sorted(lazy() - documented_lazy()) == []  # lazy without a reason: import at the top
    assert sorted(documented_lazy() - lazy()) == []  # documented, no longer lazy: drop it


def test_the_core_never_imports_textual() -> None:
    found = [f"{name}:{line}" for name in modules() if name.startswith("wizard")
             for package, line in third_party(name) if package == "textual"]
    assert found == []


def test_no_screen_imports_the_app() -> None:
    assert sorted(i.src for i in all_imports() if i.dst == "screens.app"
                  and i.src.startswith("screens")) == []


def report() -> str:
    """The numbers and every offender, for a reader."""
    every = pairs()
    kinds = Counter(i.kind for i in all_imports())
    lines = [
        f"{len(modules())} modules, {len(every)} internal imports (module pairs; statements by "
        f"kind: {dict(kinds)})",
        f"lazy (inside a function or by string): {len(lazy())} pairs, "
        f"{len(lazy() - documented_lazy())} without a documented reason, "
        f"{len(documented_lazy() - lazy())} documented but not lazy",
    ]
    circles = cycles()
    lines.append(f"circles: {len(circles)}")
    for group in circles:
        members = set(group)
        lines.append(f"  {len(group)} modules: {' '.join(group)}")
        lines += [f"    {i.src}:{i.line} -> {i.dst} [{i.kind}]" for i in all_imports()
                  if i.src in members and i.dst in members]
    up = upward()
    lines.append(f"upward: {len(up)} imports, {len({(i.src, i.dst) for i in up})} pairs")
    lines += [f"  {i.src}:{i.line} ({FLOORS[floor_of(i.src)][0]}) -> {i.dst} "
              f"({FLOORS[floor_of(i.dst)][0]}) [{i.kind}]" for i in up]
    by_src = Counter(src for src, _ in lazy() - documented_lazy())
    lines.append(f"undocumented lazy pairs by importer: {dict(by_src.most_common())}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
