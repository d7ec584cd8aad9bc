"""R-DEPRECATED-VALUE: a value SGLang still accepts but rewrites, logging that it is deprecated
(`--tool-call-parser qwen25` runs as `qwen`; `--attention-backend compressed` as `dsv4`).

Each release's rewrites are read from its source by `add-release`
(`wizard.conformance.arg_sites._deprecated_values`) into the release data
(`deprecated_values`): where SGLang logs the warning, the condition (the same JSON tree language
as R-ARG-SITE's sites), the fields it writes and their value trees, and the warning's words as
literal parts and placeholders. This module is version-neutral: it evaluates those entries on
the launch's values as typed. Flags whose argparse action is itself deprecated
(`Deprecated*Action`) are R-DEPRECATED-FLAG's, not this rule's. The rewrites of fields the
engine resolves (its effective table: the attention backends) also reach the effective values,
as replayed writes (`generic_writes`) at their place on the launch path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from wizard.rules.arg_sites import (
    _CAUGHT,
    NO_ENV,
    compile_condition,
    compile_conditions,
    format_part,
    model_values,
    platforms_of,
)
from wizard.rules.model import SILENT, Args, Ctx, Rule
from wizard.rules.report import Finding, Fix, SglangRaise
from wizard.sglang.fields import BY_DEST, canonical_dest
from wizard.sglang.releases import Release

DEPRECATED_VALUE = Rule(
    id="R-DEPRECATED-VALUE",
    title="A deprecated value SGLang rewrites",
    severity="warning",
    why=(
        "SGLang still accepts this value but logs that it is deprecated and runs with another "
        "one (read from the release's source: the warning, when SGLang logs it and the value it "
        "writes instead). A later release may refuse the old spelling; the fix types the value "
        "SGLang runs with."
    ),
    sglang=SILENT,
    fields=("extra_args",),
    when=lambda ctx, a: False,  # the engine evaluates the release's entries (`findings`)
    message=lambda ctx, a: "",
)

_MISSING = object()


@dataclass(frozen=True)
class Deprecation:
    """One logged rewrite of the release data, ready to evaluate."""

    where: str
    function: str
    seq: int
    condition: Any
    defaults: Mapping[str, Any]  # the release's dests it reads -> their defaults
    keys: Mapping[str, str]  # release dest -> canonical name
    writes: tuple[tuple[str, Any], ...]  # (canonical field, value tree or None)
    message: tuple[Any, ...] | None
    source: str

    @cached_property
    def _test(self) -> Callable[..., Any]:
        # (the code cache keeps the compiled text between processes: a cold `check` compiles
        # nothing)
        return compile_conditions([(self.condition, self.defaults, self.keys, False)])[0]

    @cached_property
    def _values(self) -> dict[str, Callable[..., Any] | None]:
        trees = [(name, tree) for name, tree in self.writes if tree is not None]
        compiled = compile_conditions([(tree, self.defaults, self.keys, True)
                                       for _name, tree in trees])
        out: dict[str, Callable[..., Any] | None] = {name: None for name, _tree in self.writes}
        out.update({name: test for (name, _tree), test in zip(trees, compiled, strict=True)})
        return out

    def holds(self, a: Mapping[str, Any], platforms: frozenset[str],
              model: Mapping[str, Any] | None = None, env: Mapping[str, Any] = NO_ENV) -> bool:
        """Whether SGLang logs it and rewrites on these values (a value it would crash on, or
        a model fact the wizard lacks: not)."""
        try:
            return bool(self._test(a, platforms, model, env))
        except _CAUGHT:
            return False

    def written(self, a: Mapping[str, Any], platforms: frozenset[str],
                model: Mapping[str, Any] | None = None,
                env: Mapping[str, Any] = NO_ENV) -> dict[str, Any]:
        """The values SGLang writes instead (canonical field -> value; a field whose value the
        data does not hold is left out)."""
        out: dict[str, Any] = {}
        for name, compiled in self._values.items():
            if compiled is None:
                continue
            try:
                out[name] = compiled(a, platforms, model, env)
            except _CAUGHT:
                continue
        return out

    def words(self, a: Mapping[str, Any], platforms: frozenset[str],
              model: Mapping[str, Any] | None = None, env: Mapping[str, Any] = NO_ENV) -> str:
        """SGLang's warning with the values filled in (its statement when not literal)."""
        if self.message is None:
            return self.source
        return "".join(self._fill(part, a, platforms, model, env) for part in self.message)

    def _fill(self, part: Any, a: Mapping[str, Any], platforms: frozenset[str],
              model: Mapping[str, Any] | None, env: Mapping[str, Any]) -> str:
        if isinstance(part, str):
            return part
        if "tree" in part:
            try:
                value = compile_condition(part["tree"], self.defaults, self.keys, value=True)(
                    a, platforms, model, env)
            except _CAUGHT:
                value = "?"
        elif "model" in part:
            value = (model or {}).get(part["model"])
        else:
            name = part["flag"]
            value = a.get(self.keys.get(name, canonical_dest(name)), self.defaults.get(name))
        return format_part(value, part)


def _of(entry: Mapping[str, Any]) -> Deprecation:
    keys = {name: canonical_dest(name) for name in entry["defaults"]}
    writes = tuple((canonical_dest(w["field"]), w["value"]) for w in entry["writes"])
    message = entry.get("message")
    return Deprecation(entry["where"], entry["function"], int(entry["seq"]), entry["condition"],
                       dict(entry["defaults"]), keys, writes,
                       tuple(message) if message is not None else None, entry["source"])


_BY_RELEASE: dict[tuple[str, str], tuple[Deprecation, ...]] = {}


def deprecations(release: Release) -> tuple[Deprecation, ...]:
    """The release's logged rewrites (cached per release file)."""
    key = (release.name, release.digest)
    cached = _BY_RELEASE.get(key)
    if cached is None:
        cached = _BY_RELEASE[key] = tuple(_of(e) for e in release.deprecated_values)
    return cached


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def replacement(entry: Deprecation, a: Mapping[str, Any], platforms: frozenset[str],
                model: Mapping[str, Any] | None = None,
                env: Mapping[str, Any] = NO_ENV) -> dict[str, Any] | None:
    """The values to type instead (canonical field -> value, `None`: leave the flag out) after
    which SGLang no longer logs this: the fields it writes set to what it writes, the typed
    flags of its condition that its words name left out, and if that is not enough, its other
    typed flags back to their defaults, one at a time, until it does not hold. None when
    nothing found does it."""
    written = entry.written(a, platforms, model, env)
    if not written:
        return None
    edits: dict[str, Any] = dict(written)
    values = {**a, **written}
    words = entry.words(a, platforms, model, env)
    typed = [(name, entry.defaults.get(dest)) for dest, name in entry.keys.items()
             if name not in written and name != "model_path"
             and a.get(name, entry.defaults.get(dest)) != entry.defaults.get(dest)]
    # a typed flag SGLang's words name ("--grpc-mode is deprecated ... Use --smg-grpc-mode")
    # goes first: the fix types the replacement instead of it, not next to it
    typed.sort(key=lambda item: not _named(item[0], words))
    for name, default in typed:
        if not entry.holds(values, platforms, model, env) and not _named(name, words):
            break
        edits[name] = None
        values[name] = default
    return edits if not entry.holds(values, platforms, model, env) else None


def _named(name: str, words: str) -> bool:
    """Whether SGLang's words name the flag (`--grpc-mode`, not inside `--smg-grpc-mode`)."""
    return re.search(rf"(?<![\w-]){re.escape(_option(name))}(?![\w-])", words) is not None


def findings(ctx: Ctx, a: Args, order: int) -> list[Finding]:
    """The release's logged rewrites that hold on the values as typed (`a`: the defaults and
    the typed values), each with SGLang's words and `file:line`."""
    entries = deprecations(ctx.release)
    if not entries:
        return []
    platforms = platforms_of(ctx)
    model = model_values(ctx)
    out = []
    for entry in entries:
        if not entry.holds(a, platforms, model, ctx.env):
            continue
        order += 1
        out.append(finding(entry, ctx, a, order, platforms, model))
    return out


def finding(entry: Deprecation, ctx: Ctx, a: Mapping[str, Any], order: int,
            platforms: frozenset[str], model: Mapping[str, Any] | None) -> Finding:
    """The finding of a holding entry: SGLang's words at its `file:line`, what it runs with,
    and a fix for the fields the profile holds (flags typed in extra args get theirs in
    `wizard.api`, which knows the extra args)."""
    message = entry.words(a, platforms, model, ctx.env)
    written = entry.written(a, platforms, model, ctx.env)
    runs = ", ".join(f"{_option(n)} {v}" for n, v in written.items())
    explanation = (f"{DEPRECATED_VALUE.why} Here: {entry.function} in {entry.where} logs this"
                   + (f" and runs with {runs}." if runs else "."))
    return Finding(
        rule=DEPRECATED_VALUE.id,
        severity=DEPRECATED_VALUE.severity,
        title=DEPRECATED_VALUE.title,
        message=message,
        explanation=explanation,
        fields=DEPRECATED_VALUE.fields,
        sglang=SglangRaise("resolve", None, entry.where, False, message),
        fixes=tuple(_profile_fixes(entry, a, platforms, model, ctx.env)),
        order=order,
    )


def _profile_fixes(entry: Deprecation, a: Mapping[str, Any], platforms: frozenset[str],
                   model: Mapping[str, Any] | None, env: Mapping[str, Any]) -> Sequence[Fix]:
    edits = replacement(entry, a, platforms, model, env)
    if edits is None:
        return []
    paths = {name: BY_DEST[name].path for name in edits if name in BY_DEST}
    if len(paths) != len(edits):
        return []  # a flag only extra args can hold: `wizard.api` builds that fix
    return [Fix(_label(edits), {paths[name]: value for name, value in edits.items()})]


def _label(edits: Mapping[str, Any]) -> str:
    parts = [f"drop {_option(n)}" if v is None or v is False
             else _option(n) if v is True else f"{_option(n)} {v}" for n, v in edits.items()]
    return "Use " + " and ".join(parts)


def fix_label(edits: Mapping[str, Any]) -> str:
    """The label of the fix typing `edits` (canonical field -> value, None: drop the flag)."""
    return _label(edits)
