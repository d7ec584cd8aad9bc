"""The generated per-step code of R-ARG-SITE's late sites and replayed writes (`Placed.runs`)
answers exactly as a plain loop over the same compiled tests (the reference below: each item's
own test function on a merged copy of the values), on every release's real data and random
values drawn from the constants its conditions compare with. A replayed write of a field the
engine resolves goes into the engine's values `a` (both sides must leave the same `a`)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from wizard.rules import arg_sites as g
from wizard.rules.engine import _placed
from wizard.rules.pipeline import defaults_for
from wizard.sglang.releases import load_release, release_names


def _reference(placed: g.Placed, position: int, a: dict[str, Any], replayed: dict[str, Any],
               platforms: frozenset[str], model: Mapping[str, Any] | None, arch: str | None,
               chunked: int | None, env: Mapping[str, str] = g.NO_ENV) -> list[int]:
    values = dict(a) if chunked is None else {**a, "chunked_prefill_size": chunked}
    merged = {**values, **replayed}
    unknown = {k for k, v in replayed.items() if v is g._UNKNOWN}
    out = []
    for _seq, index, write in placed.late[position]:
        if write is not None and write.resolved:
            # into the engine's values (`a`, updated in place); one it cannot evaluate, or
            # over a field whose replayed value is unknown, leaves the engine's own
            if write.value_tree is None or (unknown and not unknown.isdisjoint(write.flags)):
                continue
            if write.skip_archs and (arch is None or arch in write.skip_archs):
                continue  # an override of this architecture may rewrite what it reads
            if any((arch is None or arch in archs) and _may(
                    g.compile_condition(condition, defaults, keys), values, merged, platforms,
                    model, env) for archs, condition, defaults, keys in write.skip_if):
                continue
            try:
                if not write.test(merged, platforms, model, env):
                    continue
                new = write.value(merged, platforms, model, env)
            except g._CAUGHT:
                continue
            a[write.field] = values[write.field] = new
            merged = {**values, **replayed}
            continue
        if write is not None:
            if unknown and not unknown.isdisjoint(write.flags):
                new: Any = g._UNKNOWN
            else:
                try:
                    if not write.test(merged, platforms, model, env):
                        continue
                    new = write.value(merged, platforms, model, env)
                except g._CAUGHT:
                    new = g._UNKNOWN
            replayed[write.field] = new
            if new is g._UNKNOWN:
                unknown.add(write.field)
            else:
                unknown.discard(write.field)
            merged = {**values, **replayed}
            continue
        site = placed.compiled.sites[index]
        if site.unknown_archs and (arch is None or arch in site.unknown_archs):
            continue
        if any((arch is None or arch in archs) and _may(
                g.compile_condition(condition, defaults, keys), values, merged, platforms, model,
                env) for archs, condition, defaults, keys in site.unknown_if):
            continue  # an override whose condition may hold may have rewritten a field
        if unknown and not unknown.isdisjoint(site.flags):
            continue
        try:
            if placed.compiled.late[index](merged, platforms, model, env):
                out.append(index)
        except g._CAUGHT:
            continue
    return out


def _may(test: Any, values: Mapping[str, Any], merged: Mapping[str, Any],
         platforms: frozenset[str], model: Mapping[str, Any] | None,
         env: Mapping[str, str]) -> bool:
    try:
        return bool(test(values, platforms, model, env) or test(merged, platforms, model, env))
    except g._CAUGHT:
        return True


def _constants(tree: Any, out: list[Any]) -> None:
    if isinstance(tree, list) and tree:
        if tree[0] == "const":
            value = tree[1]
            out.extend(value if isinstance(value, list) else [value])
            return
        for part in tree[1:]:
            _constants(part, out)


def _pool(items: Sequence[tuple[int, int, g.GenericWrite | None]],
          sites: Sequence[g.GenericSite]) -> tuple[list[str], list[Any], list[str], list[str]]:
    names: set[str] = set()
    env: set[str] = set()
    values: list[Any] = [None, True, False, 0, 1, 2, 8, -1, "auto", "", 0.5]
    archs: list[str] = ["LlamaForCausalLM"]
    for _seq, index, write in items:
        if write is not None:
            names.update(write.flags)
            names.add(write.field)
            archs.extend(sorted(write.skip_archs))
            for scope_archs, condition, _defaults, keys in write.skip_if:
                archs.extend(sorted(scope_archs))
                names.update(keys.values())
                _constants(condition, values)
            _constants(write.condition, values)
            _constants(write.value_tree, values)
            env.update(g.env_names(write.condition) + g.env_names(write.value_tree))
        else:
            site = sites[index]
            names.update(site.flags)
            _constants(site.condition, values)
            env.update(site.env)
            archs.extend(site.unknown_archs)
            for scope_archs, condition, _defaults, keys in site.unknown_if:
                archs.extend(sorted(scope_archs))
                names.update(keys.values())
                _constants(condition, values)
    hashable = [v for v in values if not isinstance(v, list | dict)]
    return sorted(names), hashable, archs, sorted(env)


# what users set variables to: SGLang's words for true and false, numbers, and words it refuses
ENV_VALUES = ("1", "0", "true", "False", "yes", "n", "on", "", "8", "4096", "-1", "0.5", "x")


@pytest.mark.parametrize("version", release_names())
def test_generated_late_code_matches_the_plain_loop(version: str) -> None:
    release = load_release(version)
    placed = _placed(release)
    base = defaults_for(release)
    rng = random.Random(f"late-{version}")
    probes = sorted(g.PLATFORM_PROBES)
    compared = held = 0
    for position, items in enumerate(placed.late):
        run = placed.runs[position]
        if not items:
            assert run is None
            continue
        names, pool, archs, env_vars = _pool(items, placed.compiled.sites)
        for _ in range(60):
            a = dict(base)
            for name in names:
                if rng.random() < 0.6:
                    a[name] = rng.choice(pool)
            replayed: dict[str, Any] = {}
            for write in placed.compiled.writes:  # (only writes of fields it does not resolve)
                if not write.resolved and rng.random() < 0.15:
                    replayed[write.field] = rng.choice([*pool[:12], g._UNKNOWN])
            platforms = frozenset(p for p in probes if rng.random() < 0.3)
            arch = rng.choice([None, *archs])
            model = (None if rng.random() < 0.2 else
                     {"architecture": arch or "LlamaForCausalLM",
                      "architectures": [arch or "LlamaForCausalLM"]})
            chunked = rng.choice([2048, 8192, -1]) if placed.reads_chunked[position] else None
            env = {name: rng.choice(ENV_VALUES) for name in env_vars if rng.random() < 0.4}
            expected_replayed = dict(replayed)
            expected_a = dict(a)
            expected = _reference(placed, position, expected_a, expected_replayed, platforms,
                                  model, arch, chunked, env)
            unknown = {k for k, v in replayed.items() if v is g._UNKNOWN}
            assert run is not None
            got = run(a, replayed, platforms, model, unknown, arch, chunked, env)
            assert got == expected, (version, position)
            assert replayed == expected_replayed, (version, position)
            assert a == expected_a, (version, position)
            compared += 1
            held += bool(got)
    assert compared > 0
    if placed.compiled.late:
        assert held > 0, "no random case made any late site hold: the comparison is vacuous"
    # the random values rarely meet a resolved field's write (SGLang's forced
    # `disable_radix_cache = True` of a PD decode server, in every release): that case itself
    forced = False
    model = {"architecture": "LlamaForCausalLM", "architectures": ["LlamaForCausalLM"]}
    for position, items in enumerate(placed.late):
        if not any(write is not None and write.resolved for _seq, _index, write in items):
            continue
        a = {**base, "model_path": "/models/m", "disaggregation_mode": "decode",
             "disable_radix_cache": False}
        expected_a = dict(a)
        chunked = 8192 if placed.reads_chunked[position] else None
        expected = _reference(placed, position, expected_a, {}, frozenset({"is_cuda"}), model,
                              None, chunked)
        run = placed.runs[position]
        assert run is not None
        got = run(a, {}, frozenset({"is_cuda"}), model, set(), None, chunked, {})
        assert (got, a) == (expected, expected_a), (version, position)
        forced |= a["disable_radix_cache"] is True
    assert forced, "no replayed write put the decode server's disable_radix_cache into `a`"
