"""The rule engine: run one release's resolution order over a profile's arguments, collect findings
in SGLang's own order and the values SGLang will really use. Pure and fast: no I/O, no imports of
anything heavy, well under a millisecond per check."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from wizard.rules import arg_sites as g
from wizard.rules import catalog as c
from wizard.rules import deprecated_values as dv
from wizard.rules.checks import UNEVALUABLE
from wizard.rules.gpu_memory import memory_plan
from wizard.rules.model import Args, Ctx, Rule
from wizard.rules.pipeline import ORDERS, Gated, Resolver, defaults_for
from wizard.rules.report import Finding, Report, SglangRaise
from wizard.sglang.fields import canonical_dest, release_dest
from wizard.sglang.releases import Release

# Fields reported as effective values (canonical names; output uses the version's spelling).
EFFECTIVE_FIELDS: tuple[str, ...] = (
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_draft_model_path",
    "speculative_moe_runner_backend",
    "speculative_adaptive",
    "disable_overlap_schedule",
    "mamba_scheduler_strategy",
    "mamba_track_interval",
    "page_size",
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "max_running_requests",
    "enable_mixed_chunk",
    "disable_radix_cache",
    "enable_dp_attention",
    "tp_size",
    "dp_size",
    "pp_size",
    "enable_multi_layer_eagle",
    "device",
)
EFFECTIVE_FIELDS_ATTN_DP: tuple[str, ...] = (*EFFECTIVE_FIELDS, "attn_dp_size")


# The checks of SGLang's ModelConfig.__init__ (context length, MLA rope factor, quantization).
MODEL_CONFIG_RULES = frozenset({
    "R-CONTEXT-LEN", "R-MLA-ROPE-FACTOR", "R-QUANT-MISMATCH", "R-QUANT-UNKNOWN", "R-QUANT-ROCM",
    "R-QUANTIZE-SERVE-METHOD", "R-QUANTIZE-SERVE-DISABLED",
})


def _typed_fraction_build(ctx: Ctx) -> list[str]:
    """Where SGLang builds the model config when the user typed --mem-fraction-static (trait
    `model_config_at_args`, read from the release: ["runtime"], or the steps from the one that
    builds it on); [] where the fraction changes nothing."""
    if ctx.typed.get("mem_fraction_static") is None:
        return []
    return list(ctx.release.traits.get("model_config_at_args") or [])


def _model_config_deferred(ctx: Ctx) -> bool:
    """The argument code builds no model config for a typed fraction (its checks run when the
    scheduler builds the model at start-up, after the arguments were accepted)."""
    return _typed_fraction_build(ctx) == ["runtime"]


def _typed_fraction_moves(ctx: Ctx, steps: tuple[Rule | Resolver, ...],
                          ) -> tuple[int | None, tuple[int, ...], bool]:
    """With a typed fraction the model config's checks run where SGLang first builds it then:
    (the step they run before, their step indexes, whether SGLang's statements placed before
    that step come first), or (None, (), False). The steps keep their indexes: the release data
    places SGLang's own statements between them by index. The statements before the step come
    first when the step is the method that builds the config; when that method is one the
    engine has no step for, the build stands among them, and the checks come first."""
    build = _typed_fraction_build(ctx)
    if not build or build == ["runtime"]:
        return None, (), False
    # the pipeline releases name their steps without the leading underscore the server_args
    # methods of the trait carry (`handle_model_specific_adjustments`)
    later = {name.lstrip("_") for name in build}
    moved = tuple(i for i, s in enumerate(steps)
                  if isinstance(s, Rule) and s.id in MODEL_CONFIG_RULES)
    at = next((i for i, s in enumerate(steps)
               if i not in moved and isinstance(s, Resolver) and s.name.lstrip("_") in later),
              None)
    if at is None or not moved:
        return None, (), False
    named = getattr(steps[at], "name", "").lstrip("_") == build[0].lstrip("_")
    return at, moved, named


def _model_config_deferral(ctx: Ctx, steps: tuple[Rule | Resolver, ...], placed: g.Placed,
                           a: Args, platforms: frozenset[str], model: Any,
                           ) -> tuple[tuple[int, ...], tuple[int, int] | None]:
    """The model config's checks (`MODEL_CONFIG_RULES`) that wait for where SGLang first builds
    the model config for this launch (their step indexes), and that place: (the step it goes
    before, its launch-path position). Nothing waits where the release builds it no later than
    the engine's order has them, or a typed fraction moves them already
    (`_typed_fraction_moves`)."""
    if not placed.builds or _typed_fraction_build(ctx):
        return (), None
    build = placed.model_config_build(a, platforms, model, ctx.env)
    group = _model_config_steps(ctx.release, steps)
    if build is None or not group or build[0] <= group[-1]:
        return (), None
    return group, build


_MODEL_CONFIG_STEPS: dict[str, tuple[int, ...]] = {}


def _model_config_steps(release: Release, steps: tuple[Rule | Resolver, ...]) -> tuple[int, ...]:
    """The indexes of the model config's checks among the release's steps (the unknown model
    type is one of them too, unless a step reads config.json before it is built)."""
    cached = _MODEL_CONFIG_STEPS.get(release.name)
    if cached is None:
        ids = MODEL_CONFIG_RULES if release.behaviour.config_read_first else (
            MODEL_CONFIG_RULES | {"R-MODEL-TYPE-UNKNOWN"})
        cached = _MODEL_CONFIG_STEPS[release.name] = tuple(
            i for i, s in enumerate(steps) if isinstance(s, Rule) and s.id in ids)
    return cached


_STEPS: dict[str, tuple[tuple[Rule, ...], tuple[Rule | Resolver, ...], tuple[Rule, ...]]] = {}


def _steps(release: Release) -> tuple[tuple[Rule, ...], tuple[Rule | Resolver, ...], tuple[Rule, ...]]:
    """The release's context rules, resolution steps and runtime rules (rules it lacks dropped)."""
    cached = _STEPS.get(release.name)
    if cached is None:
        context = tuple(r for r in c.CONTEXT_RULES if r.holds_for(release))
        steps = (s.rule if isinstance(s, Gated) else s for s in ORDERS[release.resolution]
                 if not isinstance(s, Gated) or s.where(release))
        order = tuple(s for s in steps if not isinstance(s, Rule) or s.holds_for(release))
        runtime = tuple(r for r in c.RUNTIME_RULES if r.holds_for(release))
        cached = _STEPS[release.name] = (context, order, runtime)
    return cached


_PLACED: dict[str, g.Placed] = {}


def _placed(release: Release) -> g.Placed:
    """The release's generic sites (R-ARG-SITE), compiled and placed among its steps."""
    placed = _PLACED.get(release.name)
    if placed is None:
        placed = _PLACED[release.name] = g.place(release, _steps(release)[1], canonical_dest)
    return placed


def compiled_sites(release: Release) -> tuple[g.GenericSite, ...]:
    """The release's R-ARG-SITE sites as the engine evaluates them."""
    return _placed(release).compiled.sites


def rules_in(release: Release) -> tuple[Rule, ...]:
    """Every rule the engine evaluates for `release` (context, resolution order, runtime)."""
    context, order, runtime = _steps(release)
    return (*context, *(s for s in order if isinstance(s, Rule)), *runtime)


def _finding(rule: Rule, ctx: Ctx, a: Args, order: int) -> Finding:
    message = rule.message(ctx, a)
    shown = rule.sglang.for_release(ctx.release, rule.id, message)
    if rule.id in MODEL_CONFIG_RULES and _model_config_deferred(ctx):
        shown = SglangRaise("runtime", shown.exception, shown.where, shown.bare, shown.message)
    return Finding(
        rule=rule.id,
        severity=rule.severity,
        title=rule.title,
        message=message,
        explanation=rule.why,
        fields=rule.fields,
        sglang=shown,
        fixes=tuple(rule.fixes(ctx, a)),
        order=order,
    )


def _internal(step: object, ctx: Ctx, exc: Exception, order: int) -> Finding:
    name = getattr(step, "id", None) or getattr(step, "name", "?")
    return UNEVALUABLE.finding(
        f"{name}: {type(exc).__name__}: {exc}",
        sglang=SglangRaise("resolve", type(exc).__name__, None, False, str(exc)),
        order=order,
    )


def evaluate(ctx: Ctx) -> Report:
    """Run every rule of `ctx.release` in SGLang's order; the first error is the one SGLang raises first."""
    return _evaluate(ctx, True)


def _env_fed_triggers(ctx: Ctx, report: Report, fed: dict[str, tuple[str, ...]]) -> Report:
    """R-ARG-SITE findings over a field a replayed write set from an environment variable the
    launch sets (`GenericSite.fed_env`): the variables whose removal makes the finding go,
    found by checking again without each, said in the finding with a fix unsetting it."""
    findings = list(report.findings)
    changed = False
    for number, finding in enumerate(findings):
        where = finding.sglang.where if finding.sglang is not None else None
        names = [n for n in fed.get(where or "", ()) if ctx.env.get(n) is not None]
        triggers = []
        for name in names:
            other = replace(ctx, env={k: v for k, v in ctx.env.items() if k != name})
            again = _evaluate(other, False)
            if not any(f.rule == finding.rule and f.sglang is not None
                       and f.sglang.where == where for f in again.findings):
                triggers.append(name)
        if triggers:
            findings[number] = g.with_env_triggers(finding, triggers, ctx.env)
            changed = True
    return replace(report, findings=tuple(findings)) if changed else report


def _evaluate(ctx: Ctx, triggers: bool) -> Report:
    """`evaluate`; `triggers`: look for the environment variables behind replayed writes."""
    context, steps, runtime = _steps(ctx.release)
    moved_to, moved, sites_first = _typed_fraction_moves(ctx, steps)
    a = Args(defaults_for(ctx.release))
    a.update(ctx.typed)
    findings: list[Finding] = []
    order = 0
    for rule in context:
        order += 1
        if rule.when(ctx, a):
            findings.append(_finding(rule, ctx, a, order))
    # R-DEPRECATED-VALUE: the release's logged rewrites of deprecated values, on the values as
    # typed (what they write reaches the effective table as R-ARG-SITE's replayed writes)
    deprecated = dv.findings(ctx, a, order)
    findings.extend(deprecated)
    order += len(deprecated)
    # R-ARG-SITE: the sites read only flags nothing rewrites, so they are evaluated once on the
    # values as typed; each holding site is reported at its place on the launch path.
    placed = _placed(ctx.release)
    platforms = g.platforms_of(ctx)
    model = g.model_values(ctx)
    holding = (placed.compiled.holding(a, platforms, model, ctx.env)
               if placed.compiled.sites else [])
    due: dict[int, list[int]] = {}
    for index in holding:
        due.setdefault(placed.before[index], []).append(index)
    replayed: dict[str, Any] = {}  # the release's replayed writes of fields not resolved here
    culprits: dict[str, tuple[str, ...]] = {}  # R-ARG-SITE: the flags a drop fix may drop
    sites = placed.compiled.sites
    fed: dict[str, tuple[str, ...]] = {}  # file:line -> variables behind its replayed fields

    # The model config's checks run where SGLang first builds it for this launch: a release
    # that builds it lazily may do so after checks the engine's order puts behind them.
    deferred, build = _model_config_deferral(ctx, steps, placed, a, platforms, model)

    def report_sites(position: int) -> None:
        """The holding sites placed before step `position`, in SGLang's order: those over flags
        as typed and those over fields SGLang has resolved by this step, interleaved (and the
        model config's deferred checks where it is built)."""
        nonlocal order
        early = due.get(position)
        built = build is not None and build[0] == position
        if not placed.late[position]:
            if early is None and not built:
                return
            late: list[int] = []
        else:
            late = placed.late_holding(position, ctx, a, platforms, replayed, model)
            if not late and early is None and not built:
                return
        items = sorted([(sites[i].seq, i, False) for i in due.get(position, ())]
                       + [(sites[i].seq, i, True) for i in late])
        if built and build is not None:
            items.insert(next((k for k, item in enumerate(items) if item[0] > build[1]),
                              len(items)), (build[1], -1, False))
        for _seq, index, resolved in items:
            if index < 0:
                for step_index in deferred:
                    run_step(steps[step_index])
                continue
            order += 1
            findings.append(g.site_finding(sites[index], ctx,
                                           g.with_replayed(a, replayed) if resolved else a,
                                           order, canonical_dest, culprits))
            if sites[index].fed_env and triggers:
                fed[sites[index].where] = sites[index].fed_env

    def run_step(step: Rule | Resolver) -> None:
        nonlocal order
        order += 1
        try:
            if not isinstance(step, Rule):
                step.run(ctx, a)
                return
            if not step.when(ctx, a):
                return
            findings.append(_finding(step, ctx, a, order))
            if step.apply is not None:
                step.apply(ctx, a)
            if step.recover is not None:
                step.recover(ctx, a)
        except (TypeError, ValueError, ArithmeticError, AttributeError, KeyError) as exc:
            # Values SGLang itself would crash on (page size 0, strings where ints belong, ...).
            findings.append(_internal(step, ctx, exc, order))

    for position, step in enumerate(steps):
        if position == moved_to and not sites_first:
            for index in moved:
                run_step(steps[index])
        report_sites(position)
        if position == moved_to and sites_first:
            for index in moved:
                run_step(steps[index])
        if position not in deferred and position not in moved:
            run_step(step)
    report_sites(len(steps))
    # SGLang's replayed writes of fields the engine does not resolve (CUDA graphs off for
    # DeepEP's normal mode or the torch_native backend, ...) are the values SGLang runs with: the
    # runtime checks and the memory plan read them.
    a.update(g.with_replayed(Args(), replayed))
    a.settle()
    for rule in runtime:
        order += 1
        try:
            if rule.when(ctx, a):
                findings.append(_finding(rule, ctx, a, order))
        except (TypeError, ValueError, ArithmeticError, AttributeError, KeyError) as exc:
            findings.append(_internal(rule, ctx, exc, order))
    names = EFFECTIVE_FIELDS_ATTN_DP if ctx.release.attn_dp_field else EFFECTIVE_FIELDS
    # Only the fields this release has: a field SGLang added later (e.g. the mamba strategy on releases without it)
    # is not a value it runs with, so it is not shown.
    dests = ctx.release.dests
    effective = {dest: a.get(n) for n in names
                 if (dest := release_dest(n, ctx.release)) in dests or not dests}
    typed = {release_dest(n, ctx.release): v for n, v in ctx.typed.items()}
    report = Report(
        sglang_version=ctx.requested_version,
        rules_version=ctx.version,
        gpu=ctx.gpu.name,
        findings=tuple(findings),
        effective=effective,
        typed=typed,
        memory_plan=memory_plan(ctx, a),
        model_source=ctx.facts.source if ctx.facts is not None else None,
        depends_on=depends_on(ctx, effective),
        site_culprits=culprits,
    )
    return _env_fed_triggers(ctx, report, fed) if fed else report


# Effective fields whose value follows the GPU kind (its compute capability and memory).
GPU_DEPENDENT: tuple[str, ...] = (
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "page_size",
    "speculative_moe_runner_backend",
)


def depends_on(ctx: Ctx, effective: dict[str, Any]) -> dict[str, str]:
    """Effective fields whose shown value is not the one SGLang will run because it depends on
    something only the real GPU answers: field (the release's spelling) -> what it depends on.

    SGLang's argument code reads the GPU's compute capability and total memory (the catalog's
    for the kind) and nothing else of it; what it leaves unset is decided when the model loads:
    `max_running_requests` from the KV cache pool the GPU's free memory leaves after the
    weights (the memory plan estimates it), and, in releases whose argument code picks no
    default attention backend (trait `attention_default`), the backend the model runner picks.
    With no GPU kind given, every value that follows the kind is the assumed kind's."""
    out: dict[str, str] = {}
    spelled = {n: release_dest(n, ctx.release) for n in EFFECTIVE_FIELDS}
    if effective.get(spelled["max_running_requests"], 0) is None:
        out[spelled["max_running_requests"]] = (
            "the GPU's free memory when the model loads: SGLang sets it from the requests its KV "
            "cache pool holds, and the pool is what torch.cuda.mem_get_info leaves after the "
            "weights (the memory plan estimates it)")
    if (ctx.release.traits.get("attention_default", "server_args") != "server_args"
            and effective.get(spelled["attention_backend"], 0) is None):
        out[spelled["attention_backend"]] = (
            "the model runner, which picks it when it loads the model (this release's "
            "argument code chooses no default)")
    if ctx.gpu_assumed:
        for name in GPU_DEPENDENT:
            field = spelled[name]
            if (effective.get(field) is not None and field not in out
                    and ctx.typed_value(name) is None):
                out[field] = f"the GPU kind: none was given, {ctx.gpu.name} is assumed"
    return out


def sglang_verdict(report: Report) -> str:
    """What SGLang's argument code alone says: `error` only for argparse/resolve/check errors."""
    for f in report.errors:
        if f.sglang is not None and f.sglang.stage in ("argparse", "resolve", "check"):
            return "error"
    return "ok"


def first_sglang_error(report: Report) -> Finding | None:
    """The first error SGLang's argument code raises (runtime traps excluded)."""
    for f in report.errors:
        if f.sglang is not None and f.sglang.stage in ("argparse", "resolve", "check"):
            return f
    return None
