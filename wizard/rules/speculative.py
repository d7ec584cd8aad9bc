"""Speculative decoding with the EAGLE family: the algorithm name, spec v1 / v2, the steps / topk /
draft-tokens trio SGLang chooses or checks, the draft tree, adaptive steps, and what speculative
decoding switches off (mixed chunked prefill, LoRA) or sets (max running requests).
"""

from __future__ import annotations

from collections.abc import Sequence

from wizard.rules.common import algo, attention_backends, dp_attention, eagle_family, variant
from wizard.rules.gpu_memory import more_requests_fixes
from wizard.rules.model import (
    ALGORITHM_CHECK,
    RUNTIME,
    SILENT,
    SILENT_LOCATED,
    WIZARD,
    Args,
    Ctx,
    Rule,
    auto_params,
    gt,
    raises,
)
from wizard.rules.report import Fix
from wizard.sglang.versions import parse_env_bool


def trio_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    """The two ways out of the steps/topk/draft-tokens rule."""
    topk = ctx.typed_value("speculative_eagle_topk")
    draft = ctx.typed_value("speculative_num_draft_tokens")
    fixes = [
        Fix(
            "Let SGLang choose all three (unset topk and draft tokens)",
            {"speculative.eagle_topk": None, "speculative.num_draft_tokens": None},
        )
    ]
    if topk in (None, 1):
        steps = max(1, (draft or 2) - 1)
        fixes.insert(
            0,
            Fix(
                f"Set all three: steps {steps}, topk 1, draft tokens {steps + 1} (a chain drafts steps + 1 tokens)",
                {
                    "speculative.num_steps": steps,
                    "speculative.eagle_topk": 1,
                    "speculative.num_draft_tokens": steps + 1,
                },
            ),
        )
    else:
        steps = 3
        fixes.insert(
            0,
            Fix(f"Set steps too: steps {steps} with topk {topk}", {"speculative.num_steps": steps}),
        )
    return fixes


def _recover_trio(ctx: Ctx, a: Args) -> None:
    """Continue as if the first fix of `trio_fixes` were applied (the rules after it, the memory plan)."""
    edits = trio_fixes(ctx, a)[0].edits
    steps = edits.get("speculative.num_steps")
    topk = edits.get("speculative.eagle_topk", a.get("speculative_eagle_topk"))
    draft = edits.get("speculative.num_draft_tokens", a.get("speculative_num_draft_tokens"))
    a.speculative_num_steps, a.speculative_eagle_topk, a.speculative_num_draft_tokens = (
        steps,
        topk,
        draft,
    )


def _recover_topk(ctx: Ctx, a: Args) -> None:
    a.speculative_eagle_topk = 1


def _typed_algorithm_case_wrong(ctx: Ctx, a: Args) -> bool:
    value = ctx.typed_value("speculative_algorithm")
    return (
        ctx.release.algorithm_choices and value is not None and value not in ctx.release.algorithms
    )


ALGO_CHOICE = Rule(
    id="R-ALGO-CHOICES",
    title="Unknown or wrongly cased speculative algorithm",
    severity="error",
    why=(
        "Releases that declare the algorithm as an argparse choice list need the exact spelling and case "
        "(NEXTN, not nextn). Later releases accept any case and upper-case it, but reject names "
        "it has no builtin or plugin for during resolution."
    ),
    sglang=ALGORITHM_CHECK,
    fields=("speculative.algorithm",),
    when=lambda ctx, a: (
        _typed_algorithm_case_wrong(ctx, a)
        or (
            not ctx.release.algorithm_choices
            and ctx.typed_value("speculative_algorithm") is not None
            and str(ctx.typed_value("speculative_algorithm")).upper() not in ctx.release.algorithms
        )
    ),
    message=lambda ctx, a: (
        f"argument --speculative-algorithm: invalid choice: {ctx.typed_value('speculative_algorithm')!r} "
        f"(choose from {', '.join(repr(x) for x in ctx.release.algorithms)})"
        if ctx.release.algorithm_choices
        else f"Unknown speculative algorithm name: {str(ctx.typed_value('speculative_algorithm')).upper()}"
    ),
    fixes=lambda ctx, a: (
        [
            Fix(f"Use {name}", {"speculative.algorithm": name})
            for name in ctx.release.algorithms
            if name.lower() == str(ctx.typed_value("speculative_algorithm")).lower()
        ]
        or [Fix("Turn speculative decoding off", {"speculative.algorithm": None})]
    ),
)


NEXTN_ALIAS = Rule(
    id="R-NEXTN-ALIAS",
    title="NEXTN runs as EAGLE",
    severity="info",
    why="NEXTN (the MTP head inside the checkpoint) runs on the EAGLE worker; SGLang renames it and every log says EAGLE.",
    sglang=SILENT,
    fields=("speculative.algorithm",),
    when=lambda ctx, a: algo(a) == "NEXTN",
    message=lambda ctx, a: (
        "speculative_algorithm NEXTN -> EAGLE (same worker; logs and server info say EAGLE)."
    ),
    apply=lambda ctx, a: a.__setitem__("speculative_algorithm", "EAGLE"),
)


SKIP_DP_MLP_SYNC = Rule(
    id="R-SKIP-DP-MLP-SYNC",
    title="--speculative-skip-dp-mlp-sync needs EAGLE",
    severity="error",
    why="The skip is implemented only in the EAGLE worker.",
    sglang=raises("resolve", "AssertionError"),
    fields=("speculative.skip_dp_mlp_sync", "speculative.algorithm"),
    when=lambda ctx, a: bool(a.get("speculative_skip_dp_mlp_sync")) and algo(a) != "EAGLE",
    message=lambda ctx, a: (
        f"--speculative-skip-dp-mlp-sync is only supported with speculative_algorithm == EAGLE, got {algo(a)}."
    ),
    fixes=lambda ctx, a: [
        Fix("Drop --speculative-skip-dp-mlp-sync", {"speculative.skip_dp_mlp_sync": False})
    ],
)


MAXREQ_48 = Rule(
    id="R-MAXREQ-48",
    title="Max running requests set to 48",
    severity="info",
    why=(
        "With speculative decoding and no --max-running-requests, SGLang caps concurrency at 48; the request pool and "
        "the decode CUDA graphs are sized from it. Set it explicitly for throughput serving."
    ),
    sglang=SILENT,
    fields=("memory.max_running_requests",),
    when=lambda ctx, a: (
        algo(a) in ("EAGLE", "EAGLE3", "STANDALONE", "NGRAM", "DFLASH")
        and a.get("max_running_requests") is None
    ),
    message=lambda ctx, a: "max_running_requests unset -> 48 (speculative decoding default).",
    apply=lambda ctx, a: a.__setitem__("max_running_requests", 48),
    fixes=lambda ctx, a: more_requests_fixes(ctx, a, 128),
)


def _v1_reason(ctx: Ctx, a: Args) -> str | None:
    # How the release selects spec v2 (probed; data written before the trait: the env variable,
    # or always where the release no longer reads it).
    switch = ctx.release.traits.get("spec_v2_switch")
    if switch == "none" and not a.get("disable_overlap_schedule"):
        return "this release has no overlapped speculative worker (spec v2)"
    if switch == "flag":  # --enable-beta-spec: spec v2 for any topk, nothing falls back
        if not _spec_v2_selected(ctx, a) and not a.get("disable_overlap_schedule"):
            return "--enable-beta-spec is not set"
        return None
    if (gt(a.get("speculative_eagle_topk"), 1) and not a.get("disable_overlap_schedule")
            and not ctx.release.traits.get("spec_v2_runs_trees")):
        return "spec v2 currently only supports topk = 1"
    if not _spec_v2_selected(ctx, a) and not a.get("disable_overlap_schedule"):
        return "SGLANG_ENABLE_SPEC_V2=False"
    return None


def _spec_v2_env(ctx: Ctx) -> bool:
    """Spec v2 is selected: always where the release no longer reads the variable."""
    if not ctx.release.reads_spec_v2_env:
        return True
    raw = ctx.env.get("SGLANG_ENABLE_SPEC_V2")

    return parse_env_bool("SGLANG_ENABLE_SPEC_V2", raw, ctx.release.spec_v2_default)[0]


def _spec_v2_switch_name(ctx: Ctx) -> str:
    """What selects spec v2 in this release: the --enable-beta-spec flag or the variable."""
    if ctx.release.traits.get("spec_v2_switch") == "flag":
        return "--enable-beta-spec"
    return "SGLANG_ENABLE_SPEC_V2"


def _spec_v2_selected(ctx: Ctx, a: Args) -> bool:
    """Spec v2 is asked for: --enable-beta-spec where that flag selects it, else the variable."""
    if ctx.release.traits.get("spec_v2_switch") == "flag":
        return bool(a.get("enable_beta_spec"))
    return _spec_v2_env(ctx)


REJECTION_TOPK_23 = Rule(
    id="R-REJECTION-SAMPLING-TOPK",
    title="Rejection sampling needs a chain (topk 1)",
    severity="error",
    why=(
        "The rejection-sampling verify kernel consumes one proposal per step; SGLang checks topk after choosing "
        "its auto values, so a Llama target's auto topk 4 fails too."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.use_rejection_sampling", "speculative.eagle_topk"),
    when=lambda ctx, a: (
        bool(a.get("speculative_use_rejection_sampling"))
        and algo(a) in ("EAGLE", "EAGLE3")
        and a.get("speculative_eagle_topk") != 1
    ),
    message=lambda ctx, a: (
        "--speculative-use-rejection-sampling requires --speculative-eagle-topk=1."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Chain: steps 3, topk 1, draft tokens 4",
            {
                "speculative.num_steps": 3,
                "speculative.eagle_topk": 1,
                "speculative.num_draft_tokens": 4,
            },
        )
    ],
)


SPEC_V2_TOPK = Rule(
    id="R-SPEC-V2-TOPK",
    title="Spec v2 drafts chains only (topk 1)",
    severity="error",
    why=(
        "With SGLANG_ENABLE_SPEC_V2 on, the releases that hold this check run the overlapped "
        "speculative worker, which only drafts chains; a typed topk > 1 is refused instead of "
        "falling back to spec v1."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.eagle_topk",),
    when=lambda ctx, a: (
        algo(a) in ctx.release.trait("spec_v2_topk_algorithms")
        and _spec_v2_env(ctx)
        and gt(a.get("speculative_eagle_topk"), 1)
    ),
    message=lambda ctx, a: "Spec v2 currently only supports topk = 1 for speculative decoding.",
    fixes=lambda ctx, a: [
        Fix("Use a chain (topk 1)", {"speculative.eagle_topk": 1,
                                     "speculative.num_draft_tokens": None}),
        Fix("Turn spec v2 off (SGLANG_ENABLE_SPEC_V2=0)", {}, {"SGLANG_ENABLE_SPEC_V2": "0"}),
    ],
)


def _overlap_on_fixes(ctx: Ctx, a: Args) -> list[Fix]:
    # where --enable-beta-spec selects spec v2, dropping it from the extra args is `drops`
    keep_off = ([Fix("Unset SGLANG_ENABLE_SPEC_V2 (spec v1, overlap scheduler off)", {},
                     {"SGLANG_ENABLE_SPEC_V2": None})]
                if ctx.release.traits.get("spec_v2_switch") != "flag" else [])
    return [*keep_off, Fix("Drop --disable-overlap-schedule (spec v2 runs overlapped)",
                           {"scheduling.disable_overlap_schedule": False})]


SPEC_V2_OVERLAP_ON = Rule(
    id="R-SPEC-V2-OVERLAP-ON",
    title="Overlap scheduler switched back on (spec v2)",
    severity="adjusted",
    why=(
        "Where the release holds this branch, asking for the overlapped speculative worker "
        "(SGLANG_ENABLE_SPEC_V2, or --enable-beta-spec where that flag selects it) sets "
        "disable_overlap_schedule = False for these algorithms whatever you typed: "
        "--disable-overlap-schedule has no effect then."
    ),
    sglang=SILENT_LOCATED,
    fields=("scheduling.disable_overlap_schedule",),
    when=lambda ctx, a: (
        algo(a) in ctx.release.trait("spec_v2_overlap_algorithms")
        and _spec_v2_selected(ctx, a)
        and bool(a.get("disable_overlap_schedule"))
    ),
    message=lambda ctx, a: (
        f"disable_overlap_schedule True -> False: {_spec_v2_switch_name(ctx)} turns the overlap "
        f"scheduler on for {algo(a)}."
    ),
    apply=lambda ctx, a: a.__setitem__("disable_overlap_schedule", False),
    fixes=_overlap_on_fixes,
    drops=("enable_beta_spec",),
)


SPEC_V1_SELECT = Rule(
    id="R-SPEC-V1-SELECT",
    title="Overlap scheduler switched off (spec v1)",
    severity="adjusted",
    why=(
        "The overlapped speculative worker (spec v2) only drafts chains (topk = 1). Where this holds, a typed topk > 1, or "
        "SGLANG_ENABLE_SPEC_V2=0, silently turns the overlap scheduler off and uses the slower spec v1 worker."
    ),
    sglang=SILENT,
    fields=("speculative.eagle_topk", "scheduling.disable_overlap_schedule"),
    when=lambda ctx, a: eagle_family(a) and _v1_reason(ctx, a) is not None,
    message=lambda ctx, a: (
        f"disable_overlap_schedule False -> True: spec v1 is used because {_v1_reason(ctx, a)}."
    ),
    apply=lambda ctx, a: a.__setitem__("disable_overlap_schedule", True),
    fixes=lambda ctx, a: (
        [Fix("Use a chain (topk 1) to keep spec v2", {"speculative.eagle_topk": 1})]
        if gt(a.get("speculative_eagle_topk"), 1)
        else [Fix("Unset SGLANG_ENABLE_SPEC_V2", {}, {"SGLANG_ENABLE_SPEC_V2": None})]
        if ctx.release.reads_spec_v2_env
        else []
    ),
)


MIXED_CHUNK_OFF = Rule(
    id="R-MIXED-CHUNK",
    title="Mixed chunked prefill switched off",
    severity="adjusted",
    why="The speculative workers cannot mix prefill chunks into verify batches (later releases keep it for EAGLE, EAGLE3, DFLASH).",
    sglang=SILENT,
    fields=("scheduling.enable_mixed_chunk",),
    when=lambda ctx, a: (
        bool(a.get("enable_mixed_chunk"))
        and algo(a) in ctx.release.trait("mixed_chunk_off_algorithms")
    ),
    message=lambda ctx, a: "enable_mixed_chunk True -> False.",
    apply=lambda ctx, a: a.__setitem__("enable_mixed_chunk", False),
    fixes=lambda ctx, a: [
        Fix("Drop --enable-mixed-chunk", {"scheduling.enable_mixed_chunk": False})
    ],
)


def _trio_message(a: Args) -> str:
    typed = [
        n
        for n, v in (
            ("--speculative-eagle-topk", a.get("speculative_eagle_topk")),
            ("--speculative-num-draft-tokens", a.get("speculative_num_draft_tokens")),
        )
        if v is not None
    ]
    verb = "are" if len(typed) > 1 else "is"
    return (
        f"--speculative-num-steps is unset but {' and '.join(typed)} {verb} set: "
        "SGLang raises a bare AssertionError."
    )


SPEC_STEPS_TRIO = Rule(
    id="R-SPEC-STEPS-TRIO",
    title="Steps, topk and draft tokens: all three or none",
    severity="error",
    why=(
        "SGLang's auto-selection returns steps, topk and draft tokens as one tuple and refuses to merge it with "
        "values you typed: when --speculative-num-steps is unset, --speculative-eagle-topk and "
        "--speculative-num-draft-tokens must be unset too. The assert is bare: the traceback shows no message."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("speculative.num_steps", "speculative.eagle_topk", "speculative.num_draft_tokens"),
    when=lambda ctx, a: (
        eagle_family(a)
        and a.get("speculative_num_steps") is None
        and not (ctx.release.trait("trio_skipped_when_adaptive") and a.get("speculative_adaptive"))
        and (
            a.get("speculative_eagle_topk") is not None
            or a.get("speculative_num_draft_tokens") is not None
        )
    ),
    message=lambda ctx, a: _trio_message(a),
    fixes=trio_fixes,
    recover=_recover_trio,
)


AUTO_PARAMS = Rule(
    id="R-SPEC-AUTO-PARAMS",
    title="SGLang chooses steps, topk and draft tokens",
    severity="info",
    why=(
        "With all three unset SGLang picks them from a table keyed on the target's architecture: Llama and Grok "
        "targets get 5/4/8 (a tree), everything else 3/1/4 (a chain); STANDALONE always 3/1/4. No log line says "
        "which values were chosen."
    ),
    sglang=SILENT,
    fields=("speculative.num_steps", "speculative.eagle_topk", "speculative.num_draft_tokens"),
    when=lambda ctx, a: (
        eagle_family(a)
        and a.get("speculative_num_steps") is None
        and a.get("speculative_eagle_topk") is None
        and a.get("speculative_num_draft_tokens") is None
    ),
    message=lambda ctx, a: "steps/topk/draft tokens chosen by SGLang: {}/{}/{}.".format(
        *_auto_for_message(ctx, a)
    ),
)


def _auto_for_message(ctx: Ctx, a: Args) -> tuple[int, int, int]:
    return auto_params(ctx, a)


TOPK_NONE_TYPEERROR_TRTLLM = Rule(
    id="R-TOPK-NONE-TYPEERROR-TRTLLM",
    title="Steps given without topk crashes (trtllm_mha check)",
    severity="error",
    why=(
        "With trtllm_mha selected SGLang compares topk with 1 before anything else; with --speculative-num-steps "
        "given and topk unset that comparison crashes with an internal-looking TypeError."
    ),
    sglang=raises("resolve", "TypeError"),
    fields=("speculative.num_steps", "speculative.eagle_topk"),
    when=lambda ctx, a: (
        eagle_family(a)
        and a.get("speculative_num_steps") is not None
        and a.get("speculative_eagle_topk") is None
        and "trtllm_mha" in attention_backends(a)
    ),
    message=lambda ctx, a: "TypeError: '>' not supported between instances of 'NoneType' and 'int'",
    fixes=lambda ctx, a: [Fix("Add topk 1 (a chain)", {"speculative.eagle_topk": 1})],
    recover=_recover_topk,
)


TOPK_NONE_TYPEERROR = Rule(
    id="R-TOPK-NONE-TYPEERROR",
    title="Steps given without topk crashes",
    severity="error",
    why=(
        "When --speculative-num-steps is given SGLang applies no default to topk and later compares it with an "
        "int: an internal-looking TypeError, not a validation message."
    ),
    sglang=raises("resolve", "TypeError"),
    fields=("speculative.num_steps", "speculative.eagle_topk"),
    when=lambda ctx, a: (
        eagle_family(a)
        and a.get("speculative_num_steps") is not None
        and a.get("speculative_eagle_topk") is None
    ),
    message=lambda ctx, a: "TypeError: '>' not supported between instances of 'NoneType' and 'int'",
    fixes=lambda ctx, a: [
        Fix("Add topk 1 (a chain)", {"speculative.eagle_topk": 1}),
        Fix(
            "Let SGLang choose all three",
            {"speculative.num_steps": None, "speculative.num_draft_tokens": None},
        ),
    ],
    recover=_recover_topk,
)


TRTLLM_TOPK = Rule(
    id="R-TRTLLM-TOPK",
    title="trtllm_mha only supports topk 1",
    severity="error",
    why="The TensorRT-LLM MHA kernels cannot verify a draft tree; auto-chosen topk 4 (Llama/Grok) counts too.",
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend", "speculative.eagle_topk"),
    when=lambda ctx, a: (
        eagle_family(a)
        and "trtllm_mha" in attention_backends(a)
        and gt(a.get("speculative_eagle_topk"), 1)
    ),
    message=lambda ctx, a: "trtllm_mha backend only supports topk = 1 for speculative decoding.",
    fixes=lambda ctx, a: [
        Fix(
            "Chain: steps 3, topk 1, draft tokens 4",
            {
                "speculative.num_steps": 3,
                "speculative.eagle_topk": 1,
                "speculative.num_draft_tokens": 4,
            },
        ),
        Fix("Let SGLang choose the attention backend", {"attention.backend": None}),
    ],
)


TOPK1_REWRITE = Rule(
    id="R-TOPK1-DRAFT-REWRITE",
    title="Draft tokens rewritten to steps + 1",
    severity="adjusted",
    why=(
        "With topk 1 the draft is a chain of exactly steps + 1 tokens, so SGLang overwrites "
        "--speculative-num-draft-tokens with steps + 1 and only logs a warning. To verify N tokens with a chain, "
        "set --speculative-num-steps N-1."
    ),
    sglang=SILENT,
    fields=("speculative.num_draft_tokens",),
    when=lambda ctx, a: (
        eagle_family(a)
        and a.get("speculative_eagle_topk") == 1
        and a.get("speculative_num_draft_tokens") is not None
        and a.get("speculative_num_steps") is not None
        and a.get("speculative_num_draft_tokens") != a.speculative_num_steps + 1
    ),
    message=lambda ctx, a: (
        f"speculative_num_draft_tokens {a.get('speculative_num_draft_tokens')} -> "
        f"{a.speculative_num_steps + 1} (steps {a.speculative_num_steps} + 1, because topk is 1)."
    ),
    apply=lambda ctx, a: a.__setitem__("speculative_num_draft_tokens", a.speculative_num_steps + 1),
    fixes=lambda ctx, a: (
        [
            Fix(
                f"Draft {a.get('speculative_num_draft_tokens')} tokens: steps {max(1, (a.get('speculative_num_draft_tokens') or 2) - 1)}",
                {"speculative.num_steps": max(1, (a.get("speculative_num_draft_tokens") or 2) - 1)},
            ),
            Fix(
                f"Accept {a.speculative_num_steps + 1} draft tokens",
                {"speculative.num_draft_tokens": a.speculative_num_steps + 1},
            ),
        ]
        if a.get("speculative_num_draft_tokens") is not None
        else []
    ),
)


def _topk_page_allowed(ctx: Ctx) -> tuple[str, ...]:
    """The backends the release lets a tree with paged KV through (read from its condition)."""
    return tuple(ctx.release.trait("topk_page_backends"))


TOPK_PAGE = Rule(
    id="R-TOPK-PAGE",
    title="Draft tree with paged KV needs flashinfer or fa3",
    severity="error",
    why=(
        "Tree drafting (topk > 1) with pages larger than one token needs a cascade draft-decode that only some "
        "backends implement; others produce wrong results. Only --attention-backend is consulted."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.eagle_topk", "attention.page_size", "attention.backend"),
    when=lambda ctx, a: (
        eagle_family(a)
        and gt(a.get("speculative_eagle_topk"), 1)
        and gt(a.get("page_size"), 1)
        and a.get("attention_backend") not in _topk_page_allowed(ctx)
    ),
    message=lambda ctx, a: (
        "speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results for paged "
        "attention backends. This combination is only supported for the 'flashinfer' backend."
        if variant(ctx, "R-TOPK-PAGE") == 0
        else f"speculative_eagle_topk > 1 with page_size > 1 is only supported on {_topk_page_allowed(ctx)}; "
        f"got attention_backend={a.get('attention_backend')!r}. Use page_size == 1 or one of those backends."
    ),
    fixes=lambda ctx, a: [
        Fix("Page size 1", {"attention.page_size": 1}),
        Fix("Use flashinfer", {"attention.backend": "flashinfer"}),
        Fix("Chain: topk 1", {"speculative.eagle_topk": 1}),
    ],
)


LORA_SPEC = Rule(
    id="R-LORA-SPEC",
    title="LoRA with speculative decoding (NGRAM only)",
    severity="error",
    why="The draft workers of the releases that hold this cannot apply LoRA adapters; only NGRAM (no draft model) works with LoRA.",
    sglang=raises("check", "ValueError"),
    fields=("speculative.algorithm", "extra_args"),
    when=lambda ctx, a: (
        bool(a.get("enable_lora") or a.get("lora_paths")) and algo(a) not in ("NGRAM", None)
    ),
    message=lambda ctx, a: "Currently LoRA is only compatible with NGRAM speculative decoding.",
    fixes=lambda ctx, a: [
        Fix("Use NGRAM", {"speculative.algorithm": "NGRAM", "speculative.draft_model_path": None})
    ],
)


ADAPTIVE_OFF = Rule(
    id="R-ADAPTIVE",
    title="Adaptive speculative decoding switched off",
    severity="adjusted",
    why=(
        "Adaptive steps only run on EAGLE/EAGLE3 chains; in some releases also only on the non-overlap worker, so with the "
        "default overlap scheduler it is always switched off."
    ),
    sglang=SILENT,
    fields=("speculative.adaptive",),
    when=lambda ctx, a: (
        bool(a.get("speculative_adaptive")) and _adaptive_reason(ctx, a) is not None
    ),
    message=lambda ctx, a: f"speculative_adaptive True -> False: {_adaptive_reason(ctx, a)}.",
    apply=lambda ctx, a: a.__setitem__("speculative_adaptive", False),
    fixes=lambda ctx, a: (
        [
            Fix(
                "Disable the overlap scheduler and use a chain",
                {"scheduling.disable_overlap_schedule": True, "speculative.eagle_topk": 1},
            )
        ]
        if ctx.release.trait("spec_v1_fallback_for_trees")
        else []
    ),
)


def adaptive_candidate_steps(ctx: Ctx) -> list[int]:
    """The steps adaptive mode may start from: the union of the release's default config."""
    return list(ctx.release.trait("adaptive_candidate_steps"))


ADAPTIVE_STEPS_23 = Rule(
    id="R-ADAPTIVE-STEPS",
    title="Adaptive steps must be one of the candidate steps",
    severity="error",
    why=(
        "The adaptive mode switches between precomputed step tiers (the candidate steps of its default config, "
        "which differ between releases); a typed --speculative-num-steps must be one of them."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.num_steps", "speculative.adaptive"),
    when=lambda ctx, a: (
        ctx.release.trait("adaptive_steps_check") != "none"
        and bool(a.get("speculative_adaptive"))
        and not a.get("speculative_adaptive_config")  # SGLang reads the user's own file then
        and a.get("speculative_num_steps") is not None
        and a.speculative_num_steps not in adaptive_candidate_steps(ctx)
    ),
    message=lambda ctx, a: (
        f"--speculative-num-steps={a.speculative_num_steps} is not in the adaptive config candidate_steps "
        f"{adaptive_candidate_steps(ctx)}. Pass one of those values."
    ),
    fixes=lambda ctx, a: [Fix(f"steps {s}", {"speculative.num_steps": s})
                          for s in adaptive_candidate_steps(ctx) if s > 0][:3],
)


def _adaptive_reason(ctx: Ctx, a: Args) -> str | None:
    """Why the release's `adaptive_unsupported_reason` turns adaptive off (None: it stays on)."""
    if algo(a) not in ("EAGLE", "EAGLE3"):
        return f"speculative_algorithm={algo(a)} (only EAGLE/EAGLE3 are supported)"
    topk = a.get("speculative_eagle_topk")
    explicit = ctx.release.trait("adaptive_needs_explicit_topk_one")
    if (explicit and topk != 1) or (not explicit and topk is not None and topk != 1):
        return f"speculative_eagle_topk={topk} (only topk=1 is supported)"
    for switch in ctx.release.trait("adaptive_unsupported_flags"):  # in the release's order
        if switch == "disable_overlap_schedule":
            if not a.get("disable_overlap_schedule"):
                return ("the overlap scheduler (spec v2) is enabled "
                        "(adaptive is only implemented for EAGLEWorker v1)")
        elif dp_attention(ctx, a) if switch == "enable_dp_attention" else a.get(switch):
            return f"{switch}=True is not supported"
    return None


SPEC_V2_ENV = Rule(
    id="R-SPEC-V2-ENV",
    title="SGLANG_ENABLE_SPEC_V2",
    severity="info",
    why=(
        "Releases that read SGLANG_ENABLE_SPEC_V2 with default True: setting it to 1 changes nothing, setting it "
        "to 0 selects the slower non-overlap spec v1 worker. The newest releases no longer read it at all (the "
        "release data says which). An unrecognised value is "
        "ignored with a Python warning."
    ),
    sglang=WIZARD,
    fields=("env",),
    when=lambda ctx, a: "SGLANG_ENABLE_SPEC_V2" in ctx.env,
    message=lambda ctx, a: _spec_v2_env_message(ctx),
    fixes=lambda ctx, a: [Fix("Remove SGLANG_ENABLE_SPEC_V2", {}, {"SGLANG_ENABLE_SPEC_V2": None})],
)


def _spec_v2_env_message(ctx: Ctx) -> str:
    raw = ctx.env.get("SGLANG_ENABLE_SPEC_V2", "")
    if not ctx.release.reads_spec_v2_env:
        return f"SGLANG_ENABLE_SPEC_V2={raw} has no effect in SGLang {ctx.version} (it does not read it)."
    if raw.strip().lower() not in ("true", "1", "yes", "y", "false", "0", "no", "n"):
        return (
            f"SGLANG_ENABLE_SPEC_V2={raw!r} is not a boolean: SGLang warns and uses the default "
            f"({ctx.release.spec_v2_default})."
        )
    if _spec_v2_env(ctx) == ctx.release.spec_v2_default:
        return f"SGLANG_ENABLE_SPEC_V2={raw} is already the default in SGLang {ctx.version}."
    if _spec_v2_env(ctx):
        return f"SGLANG_ENABLE_SPEC_V2={raw} selects the overlap spec v2 worker."
    return f"SGLANG_ENABLE_SPEC_V2={raw} selects the non-overlap spec v1 worker (slower)."


V2_TREE = Rule(
    id="R-V2-BEFORE-AUTO",
    title="Spec v2 with an auto-chosen tree",
    severity="warning",
    why=(
        "Where this holds SGLang decides spec v1/v2 before choosing the auto parameters, so a Llama/Grok target with the trio unset "
        "keeps the overlap (spec v2) worker although SGLang then picks topk 4; SGLang's own comment says spec v2 "
        "only supports topk 1."
    ),
    sglang=RUNTIME,
    fields=("speculative.num_steps", "speculative.eagle_topk", "speculative.num_draft_tokens"),
    when=lambda ctx, a: (
        ctx.release.trait("spec_v1_fallback_for_trees")
        and eagle_family(a)
        and gt(a.get("speculative_eagle_topk"), 1)
        and not a.get("disable_overlap_schedule")
        and ctx.typed_value("speculative_eagle_topk") is None
    ),
    message=lambda ctx, a: (
        "Spec v2 (overlap) runs with auto-chosen topk {} although it only supports chains.".format(
            a.get("speculative_eagle_topk")
        )
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Chain: steps 3, topk 1, draft tokens 4",
            {
                "speculative.num_steps": 3,
                "speculative.eagle_topk": 1,
                "speculative.num_draft_tokens": 4,
            },
        ),
        Fix(
            "Tree on spec v1: steps 5, topk 4, draft tokens 8",
            {
                "speculative.num_steps": 5,
                "speculative.eagle_topk": 4,
                "speculative.num_draft_tokens": 8,
            },
        ),
    ],
)


TREE_CAPACITY = Rule(
    id="R-TREE-CAPACITY",
    title="More draft tokens than the draft tree can hold",
    severity="error",
    why=(
        "A tree of `steps` levels with `topk` branches holds at most topk + (steps - 1) * topk^2 candidate tokens "
        "besides the root; SGLang only hits this at the first decode step."
    ),
    sglang=RUNTIME,
    fields=("speculative.num_draft_tokens", "speculative.num_steps", "speculative.eagle_topk"),
    when=lambda ctx, a: (
        eagle_family(a)
        and isinstance(a.get("speculative_num_steps"), int)
        and isinstance(a.get("speculative_eagle_topk"), int)
        and isinstance(a.get("speculative_num_draft_tokens"), int)
        and a.speculative_eagle_topk > 1
        and a.speculative_num_draft_tokens - 1
        > a.speculative_eagle_topk + (a.speculative_num_steps - 1) * a.speculative_eagle_topk**2
    ),
    message=lambda ctx, a: (
        f"draft tokens {a.speculative_num_draft_tokens} - 1 > topk + (steps - 1) * topk^2 = "
        f"{a.speculative_eagle_topk + (a.speculative_num_steps - 1) * a.speculative_eagle_topk**2}."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Draft tokens = tree capacity + 1",
            {
                "speculative.num_draft_tokens": a.speculative_eagle_topk
                + (a.speculative_num_steps - 1) * a.speculative_eagle_topk**2
                + 1
            },
        )
    ],
)
