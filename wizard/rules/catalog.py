"""Every SGLang rule the wizard knows, as data: id, versions, what SGLang raises where, why, fixes.

Search this file for a `file:line` from an SGLang traceback to find the rule behind it. Line
numbers point at the raising statement in the SGLang wheel of that version (paths relative to the
installed package). Rules whose stage is `runtime` or `wizard` are not checked by SGLang's
argument code: they are traps SGLang only hits after loading weights, or advice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wizard.rules import multinode as mn
from wizard.rules.checks import CHECKS
from wizard.rules.model import (
    ALGORITHM_CHECK,
    RUNTIME,
    SILENT,
    WIZARD,
    Args,
    Check,
    Ctx,
    Raises,
    Rule,
    auto_params,
    gt,
    raises,
)
from wizard.rules.report import Fix
from wizard.sglang.releases import release_for
from wizard.sglang.versions import parse_env_bool

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")

NO_MTP_WARNING_ARCHS = frozenset({"MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"})

# auto_choose_speculative_params: read per release (Release.auto_params).

# Hybrid mamba models without the extra_buffer state in releases that keep split lists, where the
# release data derives no list of its own (its `hybrid_no_extra_buffer`, read from the
# `model_arch` branches, is used where it has one).
HYBRID_NO_EXTRA_BUFFER = frozenset(
    {
        "NemotronHForCausalLM",
        "FalconH1ForCausalLM",
        "JetNemotronForCausalLM",
        "JetVLMForConditionalGeneration",
        "Lfm2ForCausalLM",
        "Lfm2MoeForCausalLM",
        "GraniteMoeHybridForCausalLM",
    }
)
QWEN_HYBRID_SM100 = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration",
    }
)
MULTI_LAYER_EAGLE_ARCHS = frozenset(
    {"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "Step3p5ForCausalLM"}
)


def _mtp_capable(ctx: Ctx) -> bool:
    """The target's architecture has an MTP / NextN draft class in this release (wizard.applicability)."""
    from wizard.applicability import mtp_capable

    return ctx.arch is not None and mtp_capable(ctx.arch, ctx.version)


def draft_auto(ctx: Ctx) -> bool:
    """The target ships its MTP / NextN layer: SGLang sets `draft path = model path` itself."""
    return ctx.arch in ctx.release.arch_set("draft_auto")


def algo(a: Args) -> str | None:
    """The algorithm as SGLang holds it at this point (None when speculative decoding is off)."""
    value = a.get("speculative_algorithm")
    return value if value else None


def eagle_family(a: Args) -> bool:
    """EAGLE, EAGLE3 or STANDALONE (after NEXTN was aliased to EAGLE)."""
    return algo(a) in EAGLE_FAMILY


def is_hybrid(ctx: Ctx) -> bool:
    """The target is a hybrid mamba model that this release gives a mamba radix cache."""
    release = ctx.release
    if release.trait("hybrid_lists") == "radix":
        return ctx.arch in release.arch_set("mamba_radix")
    without = release.arch_set("hybrid_no_extra_buffer") or HYBRID_NO_EXTRA_BUFFER
    return ctx.arch in release.arch_set("hybrid_extra_buffer") or ctx.arch in without


def extra_buffer_supported(ctx: Ctx) -> bool:
    """The arch supports the extra_buffer strategy in this release."""
    release = ctx.release
    if release.trait("hybrid_lists") == "radix":
        return ctx.arch in release.arch_set("mamba_extra_buffer")
    return ctx.arch in release.arch_set("hybrid_extra_buffer")


def strategy(a: Args) -> str | None:
    """The hybrid radix-cache strategy (`--mamba-scheduler-strategy` / `--mamba-radix-cache-strategy`)."""
    return a.get("mamba_scheduler_strategy")


def attention_backends(a: Args) -> set[str]:
    """Every attention backend named (common, prefill, decode)."""
    return {
        b
        for b in (
            a.get("attention_backend"),
            a.get("prefill_attention_backend"),
            a.get("decode_attention_backend"),
        )
        if b
    }


def dp_attention(ctx: Ctx, a: Args) -> bool:
    """Attention data parallelism is on (the flag with dp > 1, or `attn_dp_size` > 1 where it exists)."""
    if not ctx.release.attn_dp_field:
        return bool(a.get("enable_dp_attention"))
    return (a.get("attn_dp_size") or 1) > 1


def attention_dp_size(ctx: Ctx, a: Args) -> int:
    """The attention-DP size SGLang divides tp by (`dp_size`, or `attn_dp_size` where it exists)."""
    return int((a.get("attn_dp_size") if ctx.release.attn_dp_field else a.get("dp_size")) or 1)


def strategy_flag(ctx: Ctx) -> str:
    """The hybrid-cache flag spelling of the release."""
    return "--" + ctx.release.strategy_field.replace("_", "-")


def variant(ctx: Ctx, rule_id: str) -> int:
    """Which wording of a rule's statement this release has (0: older, 1: newer)."""
    site = ctx.release.site(rule_id)
    return site.variant if site is not None else 0


# The fix shared by every rule that refuses attention data parallelism.
DP_ATTENTION_OFF = Fix(
    "Turn DP attention off", {"parallel.enable_dp_attention": False, "parallel.attn_dp_size": None}
)


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


def _set(**edits: object) -> dict[str, object]:
    return {k.replace("__", "."): v for k, v in edits.items()}


# ---------------------------------------------------------------------------------------------
# Argument parsing


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

# ---------------------------------------------------------------------------------------------
# Hybrid mamba models (checked in the model-specific step, before any speculative handling)

MAMBA_AUTO_NO_BUFFER = Rule(
    id="R-MAMBA-AUTO",
    title="Hybrid cache strategy 'auto' becomes no_buffer",
    severity="info",
    why=(
        "In the releases that hold this rule `auto` always resolves to no_buffer; later releases pick "
        "extra_buffer when the overlap scheduler (or paging) is wanted and the model supports it."
    ),
    sglang=SILENT,
    fields=("hybrid.cache_strategy",),
    when=lambda ctx, a: (
        ctx.release.trait("mamba_auto_resolves_no_buffer")
        and is_hybrid(ctx)
        and strategy(a) == "auto"
    ),
    message=lambda ctx, a: (
        f"mamba_scheduler_strategy 'auto' resolves to 'no_buffer' in SGLang {ctx.release.name}."
    ),
    apply=lambda ctx, a: a.__setitem__("mamba_scheduler_strategy", "no_buffer"),
)


def _extra_unsupported(ctx: Ctx, a: Args) -> bool:
    if strategy(a) not in ("extra_buffer", "extra_buffer_lazy"):
        return False
    if ctx.release.trait("extra_buffer_check_skips_disabled_radix") and a.get("disable_radix_cache"):
        return False
    return is_hybrid(ctx) and not extra_buffer_supported(ctx)


MAMBA_EXTRA_UNSUPPORTED = Rule(
    id="R-MAMBA-EXTRA-UNSUPPORTED",
    title="extra_buffer is not supported for this hybrid model",
    severity="error",
    why="Only some hybrid architectures implement the extra mamba state buffer the extra_buffer strategy keeps.",
    sglang=raises("resolve", "AssertionError"),
    fields=("hybrid.cache_strategy",),
    when=lambda ctx, a: _extra_unsupported(ctx, a),
    message=lambda ctx, a: (
        f"mamba extra_buffer is not supported for {ctx.arch} model"
        if variant(ctx, "R-MAMBA-EXTRA-UNSUPPORTED") == 0
        else f"extra_buffer is not supported for {ctx.arch}; use no_buffer."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Disable the radix cache instead",
            {"hybrid.cache_strategy": None, "scheduling.disable_radix_cache": True},
        )
    ],
)

MAMBA_NOT_HYBRID = Rule(
    id="R-MAMBA-EXTRA-NOT-HYBRID",
    title="extra_buffer on a model without mamba state",
    severity="error",
    why=(
        "Releases that hold this refuse an explicit extra_buffer strategy on a model that has no mamba "
        "layers: it would arm the mamba cache paths and crash at prefill. Older ones silently ignore it."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("hybrid.cache_strategy",),
    when=lambda ctx, a: (
        ctx.facts is not None
        and not is_hybrid(ctx)
        and strategy(a) in ("extra_buffer", "extra_buffer_lazy")
        and not a.get("disable_radix_cache")
    ),
    message=lambda ctx, a: (
        f"--mamba-radix-cache-strategy {strategy(a)} needs mamba state, got {ctx.arch}."
    ),
    fixes=lambda ctx, a: [Fix("Remove the hybrid cache strategy", {"hybrid.cache_strategy": None})],
)

MAMBA_EXTRA_NORADIX = Rule(
    id="R-MAMBA-EXTRA-NORADIX",
    title="extra_buffer with the radix cache disabled",
    severity="error",
    why="extra_buffer exists to keep mamba states for the radix (prefix) cache; without a radix cache the releases that hold this refuse it.",
    sglang=raises("resolve", "ValueError"),
    fields=("hybrid.cache_strategy", "scheduling.disable_radix_cache"),
    when=lambda ctx, a: (
        is_hybrid(ctx) and strategy(a) == "extra_buffer" and bool(a.get("disable_radix_cache"))
    ),
    message=lambda ctx, a: (
        "mamba extra_buffer is not compatible with --disable-radix-cache Overlap scheduling is "
        "already supported with no_buffer + disable_radix_cache. Please use "
        "--mamba-scheduler-strategy no_buffer instead."
    ),
    fixes=lambda ctx, a: [
        Fix("Keep the radix cache", {"scheduling.disable_radix_cache": False}),
        Fix("Use no_buffer", {"hybrid.cache_strategy": "no_buffer"}),
    ],
)

MAMBA_EXTRA_DEVICE = Rule(
    id="R-MAMBA-EXTRA-DEVICE",
    title="extra_buffer needs a CUDA device",
    severity="error",
    why=(
        "The extra mamba buffer relies on the FLA kernels, which the releases that hold this only run "
        "on CUDA and MUSA. SGLang asks the host platform (`is_cuda()`), not --device: it fires on "
        "the AMD Instinct kinds (ROCm) and never on the NVIDIA ones (--device cpu on a CUDA host "
        "passes; witnessed on real SGLang, tests/conformance/test_witnesses.py)."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("hybrid.cache_strategy",),
    when=lambda ctx, a: (
        is_hybrid(ctx)
        and strategy(a) == "extra_buffer"
        and not a.get("disable_radix_cache")
        and not ctx.gpu.is_cuda
    ),
    message=lambda ctx, a: (
        "Mamba extra_buffer is only supported on CUDA and MUSA devices with FLA backend"
        if variant(ctx, "R-MAMBA-EXTRA-DEVICE") == 0
        else "extra_buffer needs CUDA/MUSA/NPU (FLA)."
    ),
    fixes=lambda ctx, a: [Fix("Run on CUDA", {"server.device": None}),
                          Fix("Use no_buffer", {"hybrid.cache_strategy": "no_buffer"})],
)


def _track_interval_fires(ctx: Ctx, a: Args) -> bool:
    if strategy(a) not in ("extra_buffer", "extra_buffer_lazy"):
        return False
    if not (is_hybrid(ctx) and not a.get("disable_radix_cache")):
        return False
    if ctx.release.trait("hybrid_lists") == "split" and not extra_buffer_supported(ctx):
        return False
    draft = a.get("speculative_num_draft_tokens")
    return draft is not None and a.mamba_track_interval < draft


MAMBA_TRACK_INTERVAL = Rule(
    id="R-MAMBA-TRACK-INTERVAL",
    title="Track interval smaller than the typed draft tokens",
    severity="error",
    why=(
        "With extra_buffer the mamba state is checkpointed every `mamba_track_interval` decode tokens; "
        "a verify step may accept up to `speculative_num_draft_tokens` tokens at once and must not skip "
        "a checkpoint. SGLang checks the value as typed, before its own defaults and rewrites."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("hybrid.track_interval", "speculative.num_draft_tokens"),
    when=_track_interval_fires,
    message=lambda ctx, a: (
        f"mamba_track_interval {a.mamba_track_interval} must be greater than or equal to "
        f"speculative_num_draft_tokens {a.speculative_num_draft_tokens}"
    ),
    fixes=lambda ctx, a: [
        Fix("Use the default track interval (256)", {"hybrid.track_interval": None}),
        Fix(
            "Let SGLang choose the draft tokens",
            {
                "speculative.num_steps": None,
                "speculative.eagle_topk": None,
                "speculative.num_draft_tokens": None,
            },
        ),
    ],
)


def _extra_page_applies(ctx: Ctx, a: Args) -> bool:
    if strategy(a) not in ("extra_buffer", "extra_buffer_lazy") or a.get("page_size") is None:
        return False
    if ctx.release.trait("hybrid_lists") == "split" and not extra_buffer_supported(ctx):
        return False
    return is_hybrid(ctx) and not a.get("disable_radix_cache")


MAMBA_EXTRA_PAGE = Rule(
    id="R-MAMBA-EXTRA-PAGE",
    title="Track interval not divisible by the page size",
    severity="error",
    why="Mamba state checkpoints are taken on page boundaries, so the track interval must be a multiple of the KV page size.",
    sglang=raises("resolve", "AssertionError"),
    fields=("hybrid.track_interval", "attention.page_size"),
    when=lambda ctx, a: _extra_page_applies(ctx, a) and a.mamba_track_interval % a.page_size != 0,
    message=lambda ctx, a: (
        f"mamba_track_interval {a.mamba_track_interval} must be divisible by page_size {a.page_size}"
    ),
    fixes=lambda ctx, a: [
        Fix("Use page size 64", {"attention.page_size": 64}),
        Fix("Let SGLang choose the page size", {"attention.page_size": None}),
    ],
)

MAMBA_FLA_CHUNK = Rule(
    id="R-MAMBA-FLA-CHUNK",
    title="Page size and FLA chunk size (64) must divide one another",
    severity="error",
    why="The FLA kernels process 64-token chunks; extra_buffer checkpoints must line up with both chunks and pages.",
    sglang=raises("resolve", "AssertionError"),
    fields=("attention.page_size",),
    when=lambda ctx, a: (
        _extra_page_applies(ctx, a)
        and a.mamba_track_interval % a.page_size == 0
        and max(64, a.page_size) % min(64, a.page_size) != 0
    ),
    message=lambda ctx, a: (
        "For SSM models with extra buffer, either FLA_CHUNK_SIZE or page_size must be divisible "
        f"by the other, got FLA_CHUNK_SIZE=64, self.page_size={a.page_size}"
    ),
    fixes=lambda ctx, a: [Fix("Use page size 64", {"attention.page_size": 64})],
)

MAMBA_NOBUF_PAGE = Rule(
    id="R-MAMBA-NOBUF-PAGE",
    title="no_buffer forces page size 1",
    severity="adjusted",
    why=(
        "The no_buffer mamba radix cache only works with page size 1; the releases that hold this "
        "rewrite it (older ones keep the typed page size)."
    ),
    sglang=SILENT,
    fields=("attention.page_size",),
    when=lambda ctx, a: (
        ctx.release.site("R-MAMBA-NOBUF-PAGE") is not None
        and is_hybrid(ctx)
        and strategy(a) == "no_buffer"
        and not a.get("disable_radix_cache")
        and a.get("page_size") not in (None, 1)
    ),
    message=lambda ctx, a: (
        f"{ctx.arch} with radix cache requires page_size=1 (no_buffer); page_size {a.page_size} -> 1."
    ),
    apply=lambda ctx, a: a.__setitem__("page_size", 1),
)


def _nobuf_overlap(ctx: Ctx, a: Args) -> None:
    a.disable_overlap_schedule = True
    if a.get("attention_backend") == "trtllm_mha":
        a.disable_radix_cache = True
        a.disable_overlap_schedule = False


MAMBA_NOBUF_OVERLAP = Rule(
    id="R-MAMBA-NOBUF-OVERLAP",
    title="no_buffer turns the overlap scheduler off",
    severity="adjusted",
    why="Without speculative decoding, the no_buffer mamba radix cache is incompatible with the overlap scheduler.",
    sglang=SILENT,
    fields=("hybrid.cache_strategy",),
    when=lambda ctx, a: (
        is_hybrid(ctx)
        and strategy(a) == "no_buffer"
        and not a.get("disable_radix_cache")
        and algo(a) is None
        and (not a.get("disable_overlap_schedule") or a.get("attention_backend") == "trtllm_mha")
    ),
    message=lambda ctx, a: (
        "mamba no_buffer with trtllm_mha (pages of 16+): the radix cache is disabled and the overlap scheduler kept."
        if a.get("attention_backend") == "trtllm_mha"
        else "mamba no_buffer is not compatible with the overlap schedule: disable_overlap_schedule -> True."
    ),
    apply=_nobuf_overlap,
    fixes=lambda ctx, a: [
        Fix(
            "Use extra_buffer to keep the overlap scheduler",
            {"hybrid.cache_strategy": "extra_buffer"},
        )
    ],
)

MAMBA_NOBUF_SPEC = Rule(
    id="R-MAMBA-NOBUF-SPEC",
    title="Speculative decoding on a hybrid model needs extra_buffer",
    severity="error",
    why=(
        "Speculative verify rolls the mamba state back to the last accepted token; with the radix cache on, "
        "the releases that hold this can only do that with the extra_buffer strategy, and their default "
        "(auto) is no_buffer. SGLang "
        "checks this in the model-specific step, before the speculative flags, so it masks the "
        "steps/topk/draft-tokens rule. The message also says SGLANG_ENABLE_SPEC_V2=1, but where spec v2 "
        "is already the default it is not checked."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("hybrid.cache_strategy", "speculative.algorithm"),
    when=lambda ctx, a: (
        is_hybrid(ctx)
        and strategy(a) == "no_buffer"
        and not a.get("disable_radix_cache")
        and algo(a) is not None
    ),
    message=lambda ctx, a: (
        f"Speculative decoding for {ctx.arch} is not compatible with radix cache when using "
        "--mamba-scheduler-strategy no_buffer.To use radix cache with speculative decoding, please use "
        "--mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1."
    ),
    fixes=lambda ctx, a: (
        (
            [
                Fix(
                    "Use --mamba-scheduler-strategy extra_buffer",
                    {"hybrid.cache_strategy": "extra_buffer"},
                )
            ]
            if extra_buffer_supported(ctx)
            else []
        )
        + [
            Fix(
                "Disable the radix cache (loses prefix caching)",
                {"scheduling.disable_radix_cache": True},
            )
        ]
    ),
    recover=lambda ctx, a: (
        a.__setitem__("mamba_scheduler_strategy", "extra_buffer")
        if extra_buffer_supported(ctx)
        else a.__setitem__("disable_radix_cache", True)
    ),
)

MAMBA_NOBUF_PAGE_23 = Rule(
    id="R-MAMBA-NOBUF-PAGE-23",
    title="no_buffer only supports page size 1",
    severity="error",
    why="The no_buffer mamba radix cache stores one state per token position and needs page size 1.",
    sglang=raises("resolve", "AssertionError"),
    fields=("attention.page_size", "hybrid.cache_strategy"),
    when=lambda ctx, a: (
        is_hybrid(ctx)
        and not a.get("disable_radix_cache")
        and strategy(a) == "no_buffer"
        and a.get("page_size") not in (1, None)
    ),
    message=lambda ctx, a: "no_buffer only supports page_size=1.",
    fixes=lambda ctx, a: [
        Fix("Page size 1", {"attention.page_size": 1}),
        Fix("Use extra_buffer", {"hybrid.cache_strategy": "extra_buffer"}),
    ],
)

MAMBA_NOBUF_OVERLAP_23 = Rule(
    id="R-MAMBA-NOBUF-OVERLAP-23",
    title="no_buffer needs the overlap scheduler off",
    severity="error",
    why="An explicit no_buffer strategy cannot run with the overlap scheduler; the releases that hold this assert instead of switching it off.",
    sglang=raises("resolve", "AssertionError"),
    fields=("hybrid.cache_strategy", "scheduling.disable_overlap_schedule"),
    when=lambda ctx, a: (
        is_hybrid(ctx)
        and not a.get("disable_radix_cache")
        and strategy(a) == "no_buffer"
        and a.get("page_size") in (1, None)
        and not a.get("disable_overlap_schedule")
    ),
    message=lambda ctx, a: (
        "no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Let SGLang choose the strategy (auto -> extra_buffer)", {"hybrid.cache_strategy": None}
        ),
        Fix("Disable the overlap scheduler", {"scheduling.disable_overlap_schedule": True}),
    ],
)

MAMBA_NOBUF_TRTLLM_23 = Rule(
    id="R-MAMBA-NOBUF-TRTLLM-23",
    title="no_buffer does not support trtllm_mha",
    severity="error",
    why="trtllm_mha needs pages of 16 or more tokens; no_buffer needs page size 1.",
    sglang=raises("resolve", "AssertionError"),
    fields=("attention.backend", "hybrid.cache_strategy"),
    when=lambda ctx, a: (
        is_hybrid(ctx)
        and not a.get("disable_radix_cache")
        and strategy(a) == "no_buffer"
        and a.get("page_size") in (1, None)
        and bool(a.get("disable_overlap_schedule"))
        and a.get("attention_backend") == "trtllm_mha"
    ),
    message=lambda ctx, a: "no_buffer do not support trtllm_mha attention backend.",
    fixes=lambda ctx, a: [Fix("Use the triton attention backend", {"attention.backend": "triton"})],
)

MULTI_LAYER_EAGLE = Rule(
    id="R-NEXTN-MULTI-LAYER",
    title="Multi-layer EAGLE is only enabled for the literal algorithm EAGLE",
    severity="warning",
    why=(
        "MiMoV2 and Step3p5 turn on multi-layer EAGLE in the model-specific step, which runs before NEXTN is "
        "aliased to EAGLE; with NEXTN (or a lower-case eagle where the release upper-cases it) the "
        "multi-layer path is not enabled."
    ),
    sglang=RUNTIME,
    fields=("speculative.algorithm",),
    when=lambda ctx, a: (
        ctx.arch in MULTI_LAYER_EAGLE_ARCHS
        and ctx.typed_value("speculative_algorithm") is not None
        and ctx.typed_value("speculative_algorithm") != "EAGLE"
        and not a.get("enable_multi_layer_eagle")
    ),
    message=lambda ctx, a: (
        f"{ctx.arch}: use --speculative-algorithm EAGLE (or --enable-multi-layer-eagle) to use all MTP layers."
    ),
    fixes=lambda ctx, a: [
        Fix("Use EAGLE", {"speculative.algorithm": "EAGLE"}),
        Fix("Enable multi-layer EAGLE", {"speculative.enable_multi_layer_eagle": True}),
    ],
)

# ---------------------------------------------------------------------------------------------
# Attention backend and page size

FA4_DECODE = Rule(
    id="R-FA4-DECODE",
    title="fa4 is a prefill-only attention backend here",
    severity="error",
    why=(
        "Releases whose FA4 kernels have no decode path refuse fa4 as the attention or decode "
        "backend; only --prefill-attention-backend fa4 is accepted."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend",),
    when=lambda ctx, a: "fa4" in (a.get("attention_backend"), a.get("decode_attention_backend")),
    message=lambda ctx, a: (
        "FA4 backend is only supported for prefill. Please use `--prefill-attention-backend fa4` "
        "instead."
    ),
    fixes=lambda ctx, a: [
        Fix("Use fa4 for prefill only", {"attention.backend": None,
                                         "attention.prefill_backend": "fa4"}),
        Fix("Let SGLang choose the attention backend", {"attention.backend": None}),
    ],
)

MODEL_TYPE_UNKNOWN = Rule(
    id="R-MODEL-TYPE-UNKNOWN",
    title="This release cannot read the model's config",
    severity="error",
    why=(
        "SGLang reads config.json with the transformers it pins (plus its own config classes); "
        "a model type newer than that transformers stops the start with a ValueError."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("sglang_version",),
    when=lambda ctx, a: (
        ctx.facts is not None
        and bool(ctx.release.model_types)
        and bool(ctx.facts.config_model_type)
        and ctx.facts.config_model_type not in ctx.release.model_types
    ),
    message=lambda ctx, a: (
        f"The checkpoint you are trying to load has model type `{ctx.facts.config_model_type}` "
        "but Transformers does not recognize this architecture."
        if ctx.facts is not None else ""
    ),
)

MLA_ROPE_FACTOR = Rule(
    id="R-MLA-ROPE-FACTOR",
    title="This release cannot read an MLA config without a rope-scaling factor",
    severity="error",
    why=(
        "For DeepSeek-style MLA models SGLang reads `rope_scaling['factor']` whenever rope_scaling is set. "
        "Transformers 5 always sets rope_scaling (a default entry without a factor when config.json has "
        "none), so a release that pins transformers 5 and still indexes the key stops with a KeyError."
    ),
    sglang=raises("resolve", "KeyError"),
    fields=("sglang_version",),
    when=lambda ctx, a: (
        ctx.facts is not None
        and ctx.facts.attention == "MLA"
        and not ctx.facts.rope_scaling_factor
        and bool(ctx.release.trait("transformers_sets_rope_scaling"))
    ),
    message=lambda ctx, a: "'factor'",
)

FLEX_NO_SPEC = Rule(
    id="R-FLEX-NO-SPEC",
    title="Flex attention does not support speculative decoding",
    severity="error",
    why="The torch flex-attention backend has no tree-verify kernels.",
    sglang=raises("resolve", "AssertionError"),
    fields=("attention.backend", "speculative.algorithm"),
    when=lambda ctx, a: (
        a.get("attention_backend") == "flex_attention"
        and ctx.typed_value("speculative_algorithm") is not None
    ),
    message=lambda ctx, a: (
        "Speculative decoding is currently not supported with Flex Attention backend"
    ),
    fixes=lambda ctx, a: [
        Fix("Let SGLang choose the attention backend", {"attention.backend": None})
    ],
)

TRTLLM_MLA_GPU = Rule(
    id="R-TRTLLM-MLA-GPU",
    title="trtllm_mla needs a Blackwell GPU",
    severity="error",
    why="The TensorRT-LLM MLA kernels are only built for SM100/SM12x.",
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend",),
    when=lambda ctx, a: (
        "trtllm_mla" in (a.get("attention_backend"), a.get("decode_attention_backend"))
        and not (ctx.gpu.is_sm100 or ctx.gpu.is_sm120)
    ),
    message=lambda ctx, a: (
        "TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). Please use a different backend."
    ),
    fixes=lambda ctx, a: [
        Fix("Let SGLang choose the attention backend", {"attention.backend": None})
    ],
)

TRTLLM_MHA_PREFILL_GPU = Rule(
    id="R-TRTLLM-MHA-GPU",
    title="trtllm_mha prefill needs a supported GPU",
    severity="error",
    why="The TensorRT-LLM MHA prefill kernels exist only for some GPU generations.",
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend", "attention.prefill_backend"),
    when=lambda ctx, a: (
        (a.get("prefill_attention_backend") or a.get("attention_backend")) == "trtllm_mha"
        and not (
            ctx.gpu.is_sm100
            if variant(ctx, "R-TRTLLM-MHA-GPU") == 0
            else (ctx.gpu.is_hopper or ctx.gpu.is_sm100 or ctx.gpu.is_sm120)
        )
    ),
    message=lambda ctx, a: (
        "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100). Please use a "
        "different prefill backend."
        if variant(ctx, "R-TRTLLM-MHA-GPU") == 0
        else "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Let SGLang choose the attention backend",
            {"attention.backend": None, "attention.prefill_backend": None},
        )
    ],
)

TRTLLM_PAGE = Rule(
    id="R-TRTLLM-PAGE",
    title="trtllm_mha forces page size 64",
    severity="adjusted",
    why="TensorRT-LLM MHA kernels only support some page sizes (16, 32, 64; later releases also 128: the release data lists them).",
    sglang=SILENT,
    fields=("attention.page_size",),
    when=lambda ctx, a: (
        "trtllm_mha" in attention_backends(a)
        and a.get("page_size") not in ctx.release.trait("trtllm_mha_page_sizes")
    ),
    message=lambda ctx, a: f"trtllm_mha: page_size {a.get('page_size')} -> 64.",
    apply=lambda ctx, a: a.__setitem__("page_size", 64),
)

TRTLLM_MLA_PAGE = Rule(
    id="R-TRTLLM-MLA-PAGE",
    title="trtllm_mla forces page size 64",
    severity="adjusted",
    why="TensorRT-LLM MLA kernels only support pages of 32 or 64 tokens.",
    sglang=SILENT,
    fields=("attention.page_size",),
    when=lambda ctx, a: (
        "trtllm_mla" in (a.get("attention_backend"), a.get("decode_attention_backend"))
        and a.get("page_size") not in (32, 64)
    ),
    message=lambda ctx, a: f"trtllm_mla: page_size {a.get('page_size')} -> 64.",
    apply=lambda ctx, a: a.__setitem__("page_size", 64),
)

# ---------------------------------------------------------------------------------------------
# Speculative decoding

MOE_RUNNER = Rule(
    id="R-MOE-RUNNER",
    title="Draft MoE runner flashinfer_trtllm is rejected",
    severity="error",
    why=(
        "Releases that hold this check avoid trtllm MoE routing for draft models (their routing "
        "method is unknown); later releases allow it."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("speculative.moe_runner_backend",),
    when=lambda ctx, a: (
        ctx.typed_value("speculative_moe_runner_backend")
        in ("flashinfer_trtllm", "flashinfer_trtllm_routed")
    ),
    message=lambda ctx, a: (
        "Currently speculative MoE runner backend cannot be flashinfer_trtllm for risk in some "
        "draft models."
        if variant(ctx, "R-MOE-RUNNER") == 1
        else "Currently speculative MoE runner backend doesn't support flashinfer_trtllm, please use "
        "triton or auto backend for speculative moe runner instead."
    ),
    fixes=lambda ctx, a: [
        Fix("Use auto", {"speculative.moe_runner_backend": "auto"}),
        Fix("Use triton", {"speculative.moe_runner_backend": "triton"}),
    ],
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

DFLASH_DPATTN = Rule(
    id="R-DFLASH-DPATTN",
    title="DFLASH and DP attention",
    severity="error",
    why=(
        "The DFLASH worker does not synchronise drafts across attention-DP ranks (some releases: "
        "only on NPU; later ones: only with a DP LM head)."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.algorithm", "parallel.enable_dp_attention"),
    # Variants: 0 refuses dp attention, 1 asks for a DP LM head, 2 refuses it off NPU.
    when=lambda ctx, a: (
        algo(a) == "DFLASH"
        and dp_attention(ctx, a)
        and {
            0: True,
            1: not a.get("enable_dp_lm_head"),
            2: a.get("device") != "npu",
        }[variant(ctx, "R-DFLASH-DPATTN")]
    ),
    message=lambda ctx, a: (
        "Currently DFLASH speculative decoding does not support dp attention.",
        "DFLASH with dp attention requires --enable-dp-lm-head.",
        "Currently DFLASH speculative decoding does not support dp attention on non-NPU devices.",
    )[variant(ctx, "R-DFLASH-DPATTN")],
    fixes=lambda ctx, a: [DP_ATTENTION_OFF],
)

DFLASH_PP = Rule(
    id="R-DFLASH-PP",
    title="DFLASH needs pp 1",
    severity="error",
    why="DFLASH does not support pipeline parallelism.",
    sglang=raises("resolve", "ValueError"),
    fields=("parallel.pp",),
    when=lambda ctx, a: algo(a) == "DFLASH" and a.get("pp_size", 1) != 1,
    message=lambda ctx, a: "Currently DFLASH speculative decoding only supports pp_size == 1.",
    fixes=lambda ctx, a: [Fix("pp 1", {"parallel.pp": 1})],
)

DFLASH_DRAFT = Rule(
    id="R-DFLASH-DRAFT",
    title="DFLASH needs a draft model",
    severity="error",
    why="DFLASH drafts with a separate block-diffusion draft model; there is no default.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: algo(a) == "DFLASH" and a.get("speculative_draft_model_path") is None,
    message=lambda ctx, a: (
        "DFLASH speculative decoding requires setting --speculative-draft-model-path."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Set the DFLASH draft model path",
            {"speculative.draft_model_path": "/path/to/dflash-draft"},
        )
    ],
)

DFLASH_BLOCK_MISMATCH = Rule(
    id="R-DFLASH-BLOCK",
    title="DFLASH block size and draft tokens differ",
    severity="error",
    why="For DFLASH the verify window is the block size; the two flags name the same value.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.num_draft_tokens", "speculative.dflash_block_size"),
    when=lambda ctx, a: (
        algo(a) == "DFLASH"
        and gt(a.get("speculative_dflash_block_size"), 0)
        and a.get("speculative_num_draft_tokens") is not None
        and a.speculative_num_draft_tokens != a.speculative_dflash_block_size
    ),
    message=lambda ctx, a: (
        "Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they "
        f"differ. For DFLASH they must match. speculative_num_draft_tokens={a.speculative_num_draft_tokens}, "
        f"speculative_dflash_block_size={a.speculative_dflash_block_size}."
    ),
    fixes=lambda ctx, a: [
        Fix("Drop --speculative-num-draft-tokens", {"speculative.num_draft_tokens": None})
    ],
)

STANDALONE_DPATTN = Rule(
    id="R-STANDALONE-DPATTN",
    title="STANDALONE does not support DP attention",
    severity="error",
    why="The standalone draft worker has no DP-attention support.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.algorithm", "parallel.enable_dp_attention"),
    when=lambda ctx, a: algo(a) == "STANDALONE" and dp_attention(ctx, a),
    message=lambda ctx, a: (
        "Currently standalone speculative decoding does not support dp attention."
    ),
    fixes=lambda ctx, a: [DP_ATTENTION_OFF],
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
    fixes=lambda ctx, a: _more_requests_fixes(ctx, a, 128),
)


def _more_requests_fixes(ctx: Ctx, a: Args, count: int) -> list[Fix]:
    """Raising max running requests, unless the memory plan says it would not fit: a rule never
    suggests the opposite of what the memory plan asks for."""
    inputs = memory_inputs(ctx, a)
    if inputs is not None:
        from wizard.memory import plan_memory

        try:
            after = plan_memory(inputs.with_edits(max_running_requests=count),
                                _with_suggestions=False)
        except ValueError:
            return []
        if after.verdict != "fits":
            return []
    return [Fix(f"Set max running requests to {count}", {"memory.max_running_requests": count})]


def _v1_reason(ctx: Ctx, a: Args) -> str | None:
    # How the release selects spec v2 (probed; data written before the trait: the env variable,
    # or always where the release no longer reads it).
    switch = ctx.release.traits.get("spec_v2_switch")
    if switch == "none" and not a.get("disable_overlap_schedule"):
        return "this release has no overlapped speculative worker (spec v2)"
    if switch == "flag":  # --enable-beta-spec: spec v2 for any topk, nothing falls back
        if not a.get("enable_beta_spec") and not a.get("disable_overlap_schedule"):
            return "--enable-beta-spec is not set"
        return None
    if gt(a.get("speculative_eagle_topk"), 1) and not a.get("disable_overlap_schedule"):
        return "spec v2 currently only supports topk = 1"
    if not _spec_v2_env(ctx) and not a.get("disable_overlap_schedule"):
        return "SGLANG_ENABLE_SPEC_V2=False"
    return None


def _spec_v2_env(ctx: Ctx) -> bool:
    """Spec v2 is selected: always where the release no longer reads the variable."""
    if not ctx.release.reads_spec_v2_env:
        return True
    raw = ctx.env.get("SGLANG_ENABLE_SPEC_V2")

    return parse_env_bool("SGLANG_ENABLE_SPEC_V2", raw, ctx.release.spec_v2_default)[0]


DPATTN_TP_DIVISIBLE = Rule(
    id="R-DPATTN-TP-DIVISIBLE",
    title="tp must be a multiple of the attention-DP size",
    severity="error",
    why=(
        "DP attention splits the tensor-parallel group into dp attention groups, so tp must be divisible by "
        "dp (releases with --attn-dp-size: by it). SGLang checks it with a bare assert in its data-parallel step, "
        "before any speculative rule, so it hides them."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("parallel.tp", "parallel.dp", "parallel.attn_dp_size"),
    when=lambda ctx, a: (
        dp_attention(ctx, a)
        and (a.get("tp_size") or 1)
        % attention_dp_size(ctx, a)
        != 0
    ),
    message=lambda ctx, a: (
        f"tp {a.get('tp_size') or 1} is not a multiple of the attention-DP size "
        f"{attention_dp_size(ctx, a)}: SGLang raises a bare AssertionError."
    ),
    fixes=lambda ctx, a: [
        Fix("DP size = tp", {"parallel.dp": a.get("tp_size") or 1}),
        DP_ATTENTION_OFF,
    ],
)

FA4_PAGE_23 = Rule(
    id="R-FA4-PAGE",
    title="fa4 forces page size 128 on Blackwell",
    severity="adjusted",
    why=(
        "The FA4 kernels on SM100 only support pages of 128 tokens for non-MLA models (skipped when a draft tree "
        "with topk > 1 is typed, which needs page size 1)."
    ),
    sglang=SILENT,
    fields=("attention.page_size", "attention.backend"),
    when=lambda ctx, a: (
        "fa4" in attention_backends(a)
        and not ctx.is_mla
        and ctx.gpu.is_sm100
        and (ctx.typed_value("speculative_eagle_topk") or 0) <= 1
        and a.get("page_size") != 128
    ),
    message=lambda ctx, a: f"fa4: page_size {a.get('page_size')} -> 128.",
    apply=lambda ctx, a: a.__setitem__("page_size", 128),
)

SINK_NEEDS_WINDOW_23 = Rule(
    id="R-DRAFT-SINK-WINDOW",
    title="Draft attention sink needs a draft window",
    severity="error",
    why="Attention-sink tokens are kept at the start of the draft's sliding window; without a window there is nothing to pin them to.",
    sglang=raises("resolve", "ValueError"),
    fields=("extra_args", "speculative.draft_window_size"),
    when=lambda ctx, a: (
        a.get("speculative_draft_sink_size") is not None
        and a.get("speculative_dflash_draft_window_size") is None
        and a.get("speculative_draft_window_size") is None
    ),
    message=lambda ctx, a: (
        "--speculative-draft-sink-size requires --speculative-draft-window-size."
    ),
    fixes=lambda ctx, a: [
        Fix("Set a draft window of 2048", {"speculative.draft_window_size": 2048})
    ],
)

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

DRAFT_AUTO = Rule(
    id="R-DRAFT-AUTO",
    title="Draft model = the target checkpoint (built-in MTP)",
    severity="info",
    why="These checkpoints ship their MTP / NextN layer; the draft worker loads the same files.",
    sglang=SILENT,
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        eagle_family(a)
        and draft_auto(ctx)
        and a.get("speculative_draft_model_path") is None
    ),
    message=lambda ctx, a: (
        "speculative_draft_model_path unset -> the model path (the MTP layer inside the checkpoint)."
    ),
    apply=lambda ctx, a: a.update(
        speculative_draft_model_path=a.get("model_path"),
        speculative_draft_model_revision=a.get("revision"),
    ),
)

DRAFT_NOT_NEEDED = Rule(
    id="R-DRAFT-NOT-NEEDED",
    title="Built-in MTP does not need a draft path",
    severity="info",
    why=(
        "For DeepSeek-style MTP checkpoints SGLang loads the MTP layer from the target; with NEXTN a separate "
        "draft path is unusual. SGLang prints this warning for EAGLE3 with a real EAGLE-3 draft too (Kimi-K2.5 "
        "with a trained draft): there it is harmless and can be ignored."
    ),
    sglang=SILENT,
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        eagle_family(a)
        and draft_auto(ctx)
        and ctx.arch not in NO_MTP_WARNING_ARCHS
        and ctx.typed_value("speculative_draft_model_path") is not None
    ),
    message=lambda ctx, a: "DeepSeek MTP does not require setting speculative_draft_model_path.",
    fixes=lambda ctx, a: [Fix("Drop the draft path", {"speculative.draft_model_path": None})],
)

MTP_PAGE_FLASHINFER = Rule(
    id="R-MTP-PAGE-FLASHINFER",
    title="Built-in MTP with flashinfer needs page size 1",
    severity="error",
    why=(
        "The first built-in MTP draft path (DeepSeek-V3 / GLM-4.5 NextN layers) could not page the "
        "draft KV cache with the flashinfer backend, so SGLang refuses a page size other than 1 with "
        "it (only a typed --attention-backend flashinfer counts: these releases leave the default to "
        "the model runner)."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("attention.page_size", "attention.backend", "speculative.algorithm"),
    when=lambda ctx, a: (
        eagle_family(a)
        and draft_auto(ctx)
        and a.get("page_size") != 1
        and a.get("attention_backend") == "flashinfer"
    ),
    message=lambda ctx, a: (
        "Speculative decoding with page_size != 1 is not supported. Please set page_size to 1."
    ),
    fixes=lambda ctx, a: [
        Fix("Page size 1", {"attention.page_size": 1}),
        Fix("Let SGLang choose the attention backend", {"attention.backend": None}),
    ],
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
    message=lambda ctx, a: (
        "--speculative-num-steps is unset but "
        + " and ".join(
            n
            for n, v in (
                ("--speculative-eagle-topk", a.get("speculative_eagle_topk")),
                ("--speculative-num-draft-tokens", a.get("speculative_num_draft_tokens")),
            )
            if v is not None
        )
        + " is set: SGLang raises a bare AssertionError."
    ),
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

NGRAM_DEVICE = Rule(
    id="R-NGRAM-DEVICE",
    title="NGRAM device support",
    severity="error",
    why="The n-gram cache kernels run on CUDA only in the releases that hold this (later: CUDA, CPU, XPU).",
    sglang=raises("resolve", "ValueError"),
    fields=("server.device", "speculative.algorithm"),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and (
            not str(a.get("device")).startswith("cuda")
            if variant(ctx, "R-NGRAM-DEVICE") == 0
            else a.get("device") not in ("cuda", "cpu", "xpu")
        )
    ),
    message=lambda ctx, a: (
        "Ngram speculative decoding only supports CUDA device."
        if variant(ctx, "R-NGRAM-DEVICE") == 0
        else "Ngram speculative decoding only supports CUDA, CPU, or XPU devices."
    ),
    fixes=lambda ctx, a: [Fix("Run on CUDA", {"server.device": None})],
)

NGRAM_TOPK = Rule(
    id="R-NGRAM-DEFAULTS",
    title="NGRAM overwrites topk with the max BFS breadth",
    severity="adjusted",
    why="For NGRAM, topk is the tree breadth and always comes from --speculative-ngram-max-bfs-breadth (default 10); a typed topk is ignored.",
    sglang=SILENT,
    fields=("speculative.eagle_topk",),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and ctx.typed_value("speculative_eagle_topk") is not None
        and ctx.typed_value("speculative_eagle_topk") != a.speculative_ngram_max_bfs_breadth
    ),
    message=lambda ctx, a: (
        f"speculative_eagle_topk {ctx.typed_value('speculative_eagle_topk')} -> "
        f"{a.speculative_ngram_max_bfs_breadth} (--speculative-ngram-max-bfs-breadth)."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Set the breadth instead",
            {
                "speculative.eagle_topk": None,
                "speculative.ngram_max_bfs_breadth": ctx.typed_value("speculative_eagle_topk"),
            },
        )
    ],
)

NGRAM_CORPUS_BUDGET = Rule(
    id="R-NGRAM-CORPUS",
    title="NGRAM external corpus needs a SAM budget",
    severity="error",
    why="Draft nodes for the external corpus come out of --speculative-ngram-external-sam-budget, which defaults to 0.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.ngram_external_sam_budget", "speculative.ngram_external_corpus_path"),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and a.get("speculative_ngram_external_corpus_path") is not None
        and (a.get("speculative_ngram_external_sam_budget") or 0) <= 0
    ),
    message=lambda ctx, a: (
        "--speculative-ngram-external-sam-budget must be positive when --speculative-ngram-external-corpus-path is set."
    ),
    fixes=lambda ctx, a: [Fix("SAM budget 4", {"speculative.ngram_external_sam_budget": 4})],
)

NGRAM_CORPUS_LIMIT = Rule(
    id="R-NGRAM-CORPUS-LIMIT",
    title="SAM budget larger than the draft tokens allow",
    severity="error",
    why="The external-corpus draft nodes share the tree with the n-gram drafts: at most draft tokens - 1.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.ngram_external_sam_budget",),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and a.get("speculative_ngram_external_corpus_path") is not None
        and gt(a.get("speculative_ngram_external_sam_budget"), 0)
        and a.speculative_ngram_external_sam_budget
        > (a.get("speculative_num_draft_tokens") or 12) - 1
    ),
    message=lambda ctx, a: (
        "speculative_ngram_external_sam_budget must be less than or equal to speculative_num_draft_tokens - 1 "
        f"({(a.get('speculative_num_draft_tokens') or 12) - 1})."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Budget = draft tokens - 1",
            {
                "speculative.ngram_external_sam_budget": (
                    a.get("speculative_num_draft_tokens") or 12
                )
                - 1
            },
        )
    ],
)

NGRAM_PAGE = Rule(
    id="R-NGRAM-PAGE",
    title="NGRAM tree with paged KV needs flashinfer",
    severity="error",
    why=(
        "NGRAM's breadth (default 10) makes a tree; with pages larger than one token only flashinfer verifies it "
        "correctly. On Hopper the default backend was already fixed as fa3 before NGRAM set topk, so "
        "--page-size alone fails."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("attention.page_size", "attention.backend", "speculative.ngram_max_bfs_breadth"),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and gt(a.get("speculative_eagle_topk"), 1)
        and gt(a.get("page_size"), 1)
        and a.get("attention_backend") != "flashinfer"
    ),
    message=lambda ctx, a: (
        f"speculative_eagle_topk({a.speculative_eagle_topk}) > 1 with page_size({a.page_size}) > 1 is unstable "
        "and produces incorrect results for paged attention backends. This combination is only supported "
        "for the 'flashinfer' backend."
    ),
    fixes=lambda ctx, a: [
        Fix("Use flashinfer", {"attention.backend": "flashinfer"}),
        Fix("Page size 1", {"attention.page_size": 1}),
        Fix("Breadth 1", {"speculative.ngram_max_bfs_breadth": 1}),
    ],
)

NGRAM_DPATTN = Rule(
    id="R-NGRAM-DPATTN",
    title="NGRAM does not support DP attention",
    severity="error",
    why="The n-gram worker has no DP-attention support.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.algorithm", "parallel.enable_dp_attention"),
    when=lambda ctx, a: algo(a) == "NGRAM" and dp_attention(ctx, a),
    message=lambda ctx, a: "Currently ngram speculative decoding does not support dp attention.",
    fixes=lambda ctx, a: [DP_ATTENTION_OFF],
)


def chunked_prefill(ctx: Ctx, a: Args) -> int:
    """`chunked_prefill_size` as SGLang sets it: typed, else by GPU memory (and / dp with DP attention where the release splits it)."""
    size = a.get("chunked_prefill_size")
    if size is None:
        mem = ctx.gpu.memory_mib
        if mem < 20 * 1024:
            size = 2048
        elif mem < 35 * 1024:
            size = ctx.release.trait("chunked_prefill_24gb")
        elif mem < 60 * 1024:
            size = 4096
        elif mem < 160 * 1024:
            size = 8192
        else:
            size = 16384
    if (
        ctx.release.trait("chunked_prefill_split_by_dp")
        and a.get("enable_dp_attention")
        and (a.get("dp_size") or 1) > 1
    ):
        size //= a.dp_size
    return int(size)


CHUNKED_PAGE = Rule(
    id="R-CHUNKED-PAGE",
    title="Chunked prefill size must be a multiple of the page size",
    severity="error",
    why=(
        "Prefill chunks are cut on page boundaries: SGLang's default chunk (2k-16k tokens by GPU memory) is a power "
        "of two, so a page size that is not a power of two (e.g. 48) fails its final argument check."
    ),
    sglang=raises("check", "AssertionError"),
    fields=("attention.page_size", "memory.chunked_prefill_size"),
    when=lambda ctx, a: (
        a.get("disaggregation_mode") != "decode"
        and isinstance(a.get("page_size"), int)
        and a.page_size > 0
        and (size := chunked_prefill(ctx, a)) > 0
        and size % a.page_size != 0
    ),
    message=lambda ctx, a: (
        f"chunked_prefill_size must be divisible by page_size ({chunked_prefill(ctx, a)} % {a.page_size} != 0)"
    ),
    fixes=lambda ctx, a: [
        Fix("Page size 64", {"attention.page_size": 64}),
        Fix("Let SGLang choose the page size", {"attention.page_size": None}),
    ],
)

PP_SPEC_ALGO_23 = Rule(
    id="R-PP-SPEC-ALGO",
    title="Pipeline parallelism supports only EAGLE speculative decoding",
    severity="error",
    why="The releases that hold this relay draft state between pipeline stages only for the single-layer EAGLE worker (and DSPARK on PD prefill).",
    sglang=raises("check", "AssertionError"),
    fields=("parallel.pp", "speculative.algorithm"),
    when=lambda ctx, a: (
        a.get("pp_size", 1) > 1
        and algo(a) not in (None, "DSPARK")
        and (algo(a) != "EAGLE" or bool(a.get("enable_multi_layer_eagle")))
    ),
    message=lambda ctx, a: (
        "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"
    ),
    fixes=lambda ctx, a: [Fix("pp 1 (use tp instead)", {"parallel.pp": 1})],
)

PP_SPEC = Rule(
    id="R-PP-SPEC",
    title="Pipeline parallelism with speculative decoding",
    severity="error",
    why=(
        "Older releases refuse any speculative algorithm with pp > 1 in check_server_args (after a "
        "successful resolution); newer ones allow EAGLE only on PD-prefill nodes or with "
        "SGLANG_ENABLE_PP_SPEC=1."
    ),
    sglang=raises("check", "AssertionError"),
    fields=("parallel.pp", "speculative.algorithm"),
    when=lambda ctx, a: (
        a.get("pp_size", 1) > 1
        and (
            (
                algo(a) is not None
                and (
                    variant(ctx, "R-PP-SPEC") != 1
                    or (
                        algo(a) == "EAGLE"
                        and not a.get("enable_multi_layer_eagle")
                        and ctx.env.get("SGLANG_ENABLE_PP_SPEC", "").lower()
                        not in ("1", "true", "yes", "y")
                        and a.get("disaggregation_mode") != "prefill"
                    )
                )
            )
            # the wording that names mixed chunked prefill asserts it off too
            or (variant(ctx, "R-PP-SPEC") == 2 and bool(a.get("enable_mixed_chunk")))
        )
    ),
    message=lambda ctx, a: {
        0: "Pipeline parallelism is not compatible with overlap schedule, speculative decoding",
        2: "Pipeline parallelism is not compatible with overlap schedule, speculative decoding, "
        "mixed chunked prefill.",
    }.get(variant(ctx, "R-PP-SPEC"),
          "PP + speculative decoding (MTP) is only supported on prefill nodes "
          "(disaggregation-mode=prefill)"),
    fixes=lambda ctx, a: [Fix("pp 1 (use tp instead)", {"parallel.pp": 1})],
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


# ---------------------------------------------------------------------------------------------
# Beyond SGLang's argument code: runtime traps, environment, model/draft checks

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

TRACK_INTERVAL_FINAL = Rule(
    id="R-MAMBA-TRACK-INTERVAL-FINAL",
    title="Track interval below the final draft tokens",
    severity="warning",
    why="SGLang checks the track interval only against typed draft tokens; auto-chosen or rewritten values are never checked.",
    sglang=RUNTIME,
    fields=("hybrid.track_interval",),
    when=lambda ctx, a: (
        strategy(a) in ("extra_buffer", "extra_buffer_lazy")
        and a.get("speculative_num_draft_tokens") is not None
        and a.mamba_track_interval < a.speculative_num_draft_tokens
        and ctx.typed_value("speculative_num_draft_tokens") is None
    ),
    message=lambda ctx, a: (
        f"mamba_track_interval {a.mamba_track_interval} < speculative_num_draft_tokens {a.speculative_num_draft_tokens}."
    ),
    fixes=lambda ctx, a: [
        Fix("Use the default track interval (256)", {"hybrid.track_interval": None})
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

DRAFT_MISSING = Rule(
    id="R-DRAFT-MISSING",
    title="The algorithm needs a draft model",
    severity="error",
    why=(
        "SGLang does not check at launch that EAGLE/EAGLE3/STANDALONE have a draft: without one the draft worker "
        "loads the target checkpoint as its draft and fails or misbehaves at model load. NEXTN needs an "
        "architecture with a built-in MTP layer."
    ),
    sglang=RUNTIME,
    fields=("speculative.draft_model_path", "speculative.algorithm"),
    when=lambda ctx, a: (
        ctx.facts is not None
        and eagle_family(a)
        and a.get("speculative_draft_model_path") is None
        and not (
            _mtp_capable(ctx)
            and str(ctx.typed_value("speculative_algorithm")).upper() in ("NEXTN", "EAGLE")
        )
    ),
    message=lambda ctx, a: (
        f"{ctx.typed_value('speculative_algorithm')} on {ctx.arch} without --speculative-draft-model-path: "
        "SGLang would load the target as its own draft."
    ),
    fixes=lambda ctx, a: [
        Fix("Set the draft model path", {"speculative.draft_model_path": "/path/to/draft"}),
        Fix("Use NGRAM (no draft model)", {"speculative.algorithm": "NGRAM"}),
    ],
)

NEXTN_NO_MTP = Rule(
    id="R-NEXTN-NO-MTP",
    title="NEXTN on a model without MTP layers",
    severity="error",
    why="NEXTN drafts with the model's own MTP / NextN layer; this checkpoint declares none, so SGLang fails at model load.",
    sglang=RUNTIME,
    fields=("speculative.algorithm", "model.path"),
    when=lambda ctx, a: (
        ctx.facts is not None
        and str(ctx.typed_value("speculative_algorithm")).upper() == "NEXTN"
        and ctx.facts.mtp_layers == 0
        and ctx.typed_value("speculative_draft_model_path") is None
    ),
    message=lambda ctx, a: (
        f"{ctx.arch} declares no MTP layers (num_nextn_predict_layers / mtp_num_hidden_layers)."
    ),
    fixes=lambda ctx, a: [
        Fix("Use NGRAM (no draft model)", {"speculative.algorithm": "NGRAM"}),
        Fix(
            "Use EAGLE3 with a draft",
            {
                "speculative.algorithm": "EAGLE3",
                "speculative.draft_model_path": "/path/to/eagle3-draft",
            },
        ),
    ],
)

EAGLE3_DRAFT_AS_EAGLE = Rule(
    id="R-EAGLE3-DRAFT-WITH-EAGLE",
    title="An EAGLE-3 draft run as EAGLE accepts nothing",
    severity="error",
    why=(
        "EAGLE-3 drafts read hidden states from three target layers; run under EAGLE they get the wrong inputs and "
        "every draft token is rejected (accept length 1.00): slower than no speculation."
    ),
    sglang=RUNTIME,
    fields=("speculative.algorithm", "speculative.draft_model_path"),
    when=lambda ctx, a: (
        ctx.draft_facts is not None
        and ctx.draft_facts.is_eagle3_draft
        and str(ctx.typed_value("speculative_algorithm")).upper() in ("EAGLE", "NEXTN")
    ),
    message=lambda ctx, a: (
        "the draft is an EAGLE-3 model (architectures contain Eagle3) but the algorithm is "
        f"{str(ctx.typed_value('speculative_algorithm')).upper()}."
    ),
    fixes=lambda ctx, a: [Fix("Use EAGLE3", {"speculative.algorithm": "EAGLE3"})],
)


def _hidden_message(ctx: Ctx) -> str:
    assert ctx.facts is not None and ctx.draft_facts is not None
    draft = ctx.draft_facts.target_hidden_size or ctx.draft_facts.hidden_size
    return f"draft expects hidden size {draft}, the target has {ctx.facts.hidden_size}."


def _vocab_message(ctx: Ctx) -> str:
    assert ctx.facts is not None and ctx.draft_facts is not None
    return f"draft vocab {ctx.draft_facts.vocab_size} != target vocab {ctx.facts.vocab_size}."


DRAFT_HIDDEN_MISMATCH = Rule(
    id="R-DRAFT-HIDDEN-SIZE",
    title="Draft hidden size does not match the target",
    severity="error",
    why="The draft consumes the target's hidden states; a draft trained for another target fails at load or accepts nothing.",
    sglang=RUNTIME,
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        ctx.facts is not None
        and ctx.draft_facts is not None
        and algo(a) in ("EAGLE", "EAGLE3")
        and ctx.facts.hidden_size is not None
        and (ctx.draft_facts.target_hidden_size or ctx.draft_facts.hidden_size)
        not in (None, ctx.facts.hidden_size)
        and ctx.typed_value("speculative_draft_model_path") is not None
    ),
    message=lambda ctx, a: _hidden_message(ctx),
)

DRAFT_VOCAB_MISMATCH = Rule(
    id="R-DRAFT-VOCAB",
    title="Draft vocabulary differs from the target",
    severity="warning",
    why="Draft tokens must be target tokens; a smaller draft vocabulary needs a token map (--speculative-token-map / d2t).",
    sglang=RUNTIME,
    fields=("speculative.draft_model_path", "speculative.token_map"),
    when=lambda ctx, a: (
        ctx.facts is not None
        and ctx.draft_facts is not None
        and algo(a) is not None
        and ctx.facts.vocab_size is not None
        and ctx.draft_facts.vocab_size is not None
        and ctx.draft_facts.vocab_size != ctx.facts.vocab_size
        and a.get("speculative_token_map") is None
        and ctx.typed_value("speculative_draft_model_path") is not None
    ),
    message=lambda ctx, a: _vocab_message(ctx),
)

FACTS_MISSING = Rule(
    id="R-FACTS-MISSING",
    title="Model config not readable",
    severity="info",
    why=(
        "Several SGLang rules depend on the model's config.json (architecture, MTP and hybrid layers). Without it "
        "these checks assume a plain non-hybrid model without MTP: the auto values shown are the generic 3/1/4."
    ),
    sglang=WIZARD,
    fields=("model.path",),
    when=lambda ctx, a: ctx.facts is None,
    message=lambda ctx, a: _facts_missing_message(ctx),
)


def _facts_missing_message(ctx: Ctx) -> str:
    """Not computed: what, why, what was assumed instead and how to get the facts."""
    why = ctx.facts_error or "no model path"
    hub = "Hub" in why or "HF_" in why or "hf " in why
    how = (
        "do what the reason says (token, cache or repo id), then check again"
        if hub
        else "give the Hub id (ORG/NAME) or a local folder that holds config.json; for a folder "
        "on the GPU host press F6 on the Model screen (or `sglang-wizard inspect` there)"
    )
    return (
        f"not computed: the memory plan and the architecture-dependent checks (model config not "
        f"read: {why}). Assumed instead: a generic model (not hybrid, no MTP layers, no MoE, "
        f"auto draft values 3/1/4). To get them: {how}."
    )

GPU_ASSUMED = Rule(
    id="R-GPU-ASSUMED",
    title="GPU kind not given",
    severity="info",
    why="Default attention backend, page size and several checks depend on the GPU generation.",
    sglang=WIZARD,
    fields=("gpu.kind",),
    when=lambda ctx, a: ctx.gpu_assumed,
    message=lambda ctx, a: f"no GPU kind in the profile: assuming {ctx.gpu.name} (sm{ctx.gpu.sm}).",
    fixes=lambda ctx, a: [Fix(f"Set the GPU kind to {ctx.gpu.name}", {"gpu.kind": ctx.gpu.name})],
)

VERSION_NEAREST = Rule(
    id="R-VERSION-NEAREST",
    title="SGLang version without release data of its own",
    severity="warning",
    why=(
        "The wizard holds data for every release in its registry (derived from each wheel); a version "
        "outside it is checked with the nearest release, and the remote dry-run stays the authority."
    ),
    sglang=WIZARD,
    fields=("sglang_version",),
    when=lambda ctx, a: ctx.release_note is not None,
    message=lambda ctx, a: str(ctx.release_note),
)

DRAFT_PATH_MISSING_23 = Rule(
    id="R-DRAFT-CONFIG-READ",
    title="The draft config is opened at start",
    severity="error",
    why=(
        "Releases that hold this read the draft's config.json during argument resolution (to "
        "resolve the algorithm alias or detect assistant drafts), so a wrong draft path fails at "
        "once: a missing local folder is taken for a Hub repo id and refused."
    ),
    sglang=raises("resolve", "OSError"),
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        ctx.paths_local
        and ctx.draft_error is not None
        and ctx.typed_value("speculative_draft_model_path") is not None
        and str(ctx.typed_value("speculative_draft_model_path")).startswith(("/", "./", "../", "~"))
    ),
    message=lambda ctx, a: f"draft config not readable: {ctx.draft_error}",
    fixes=lambda ctx, a: [
        Fix("Fix the draft model path", {"speculative.draft_model_path": "/path/to/draft"})
    ],
)


def memory_inputs(ctx: Ctx, a: Args) -> Any:
    """The memory plan's inputs from the resolved arguments, or None when there is no plan:
    no model facts, or no GPU kind given (a plan for an assumed card would be a guess)."""
    if ctx.facts is None or ctx.gpu_assumed:
        return None
    from wizard.memory import MemoryInputs

    tp = int(a.get("tp_size") or 1)
    pp = int(a.get("pp_size") or 1)
    attn_dp = dp_attention(ctx, a)
    kv_dtype = a.get("kv_cache_dtype")
    strat = strategy(a)
    return MemoryInputs(
        ctx.facts,
        ctx.gpu,
        max(ctx.gpus or 0, tp * pp),
        tp,
        mem_fraction=a.get("mem_fraction_static"),
        draft=ctx.draft_facts,
        algorithm=_plan_algorithm(ctx, a),
        num_draft_tokens=a.get("speculative_num_draft_tokens"),
        max_running_requests=a.get("max_running_requests"),
        context_length=a.get("context_length"),
        kv_cache_dtype=kv_dtype if kv_dtype != "auto" else None,
        dtype=a.get("dtype"),
        quantization=a.get("quantization"),
        cuda_graph_max_bs=a.get("cuda_graph_max_bs"),
        sglang_version=ctx.version,
        chunked_prefill_size=a.get("chunked_prefill_size"),
        disable_radix_cache=bool(a.get("disable_radix_cache")),
        mamba_extra_buffer=strat in ("extra_buffer", "extra_buffer_lazy"),
        num_steps=a.get("speculative_num_steps"),
        topk=a.get("speculative_eagle_topk"),
        pp=pp,
        dp=attention_dp_size(ctx, a) if attn_dp else 1,
        enable_dp_attention=attn_dp,
        ep=int(a.get("ep_size") or 1),
        page_size=a.get("page_size"),
        free_gib=ctx.gpu_free_gib,
        disable_cuda_graph=bool(a.get("disable_cuda_graph")),
        swa_full_tokens_ratio=a.get("swa_full_tokens_ratio"),
        cpu_offload_gb=float(a.get("cpu_offload_gb") or 0),
        max_total_tokens=a.get("max_total_tokens"),
        attention_backend=a.get("attention_backend"),
        aiter_honor_env=ctx.env.get("SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION", "").lower()
        in ("1", "true"),
        **_memory_flag_inputs(a),
    )


def _memory_flag_inputs(a: Args) -> dict[str, Any]:
    """The plan inputs of the flags that move memory beyond the core layout: PD role, prefill
    CUDA graphs, MoE all-to-all, hierarchical cache, DP LM head, dense TP, Mamba slots."""
    backend = str(a.get("cuda_graph_backend_prefill") or "").lower()
    prefill_graph: bool | None = None
    if a.get("disable_piecewise_cuda_graph") or a.get("disable_prefill_cuda_graph") or (
        backend == "disabled"
    ):
        prefill_graph = False
    elif a.get("enforce_piecewise_cuda_graph") or backend in ("breakable", "tc_piecewise"):
        prefill_graph = True
    return {
        "disaggregation_mode": str(a.get("disaggregation_mode") or "null"),
        "disaggregation_decode_extra_slots": a.get("disaggregation_decode_extra_slots"),
        "prefill_graph": prefill_graph,
        "enable_piecewise_cuda_graph": bool(a.get("enable_piecewise_cuda_graph")),
        "enable_torch_compile": bool(a.get("enable_torch_compile")),
        "moe_a2a_backend": a.get("moe_a2a_backend"),
        "enable_hierarchical_cache": bool(a.get("enable_hierarchical_cache")),
        "hicache_ratio": float(a.get("hicache_ratio") or 2.0),
        "hicache_size_gb": float(a.get("hicache_size") or 0),
        "enable_dp_lm_head": bool(a.get("enable_dp_lm_head")),
        "moe_dense_tp_size": a.get("moe_dense_tp_size"),
        "max_mamba_cache_size": a.get("max_mamba_cache_size"),
    }


def memory_plan(ctx: Ctx, a: Args) -> Any:
    """The GPU memory plan for the resolved arguments (cached: the screens check on every keystroke)."""
    inputs = memory_inputs(ctx, a)
    if inputs is None:
        return None
    key = inputs.cache_key()
    if key in _PLANS:
        return _PLANS[key]
    from wizard.memory import plan_memory

    try:
        plan = plan_memory(inputs)
    except ValueError:
        plan = None
    if len(_PLANS) > 512:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


_PLANS: dict[tuple[Any, ...], Any] = {}


def _plan_algorithm(ctx: Ctx, a: Args) -> str | None:
    """The algorithm as typed (NEXTN tells the plan the draft is the built-in MTP layer), upper-cased."""
    typed = ctx.typed_value("speculative_algorithm")
    if typed is None or algo(a) is None:
        return algo(a)
    return str(typed).upper()


def _plan_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    plan = memory_plan(ctx, a)
    if plan is None:
        return ()
    return [Fix(f.label, dict(f.edits)) for f in plan.fixes if f.edits]


_MEMORY_WHY = (
    "SGLang sizes its static pool (weights + KV cache + state) as mem_fraction_static of the "
    "memory free before loading and takes the speculative state buffers (and, where the release "
    "loads the draft first, the draft weights) out of the same pool; everything else (request "
    "table, attention workspace, activations, CUDA graphs) must fit in the rest."
)
_MEMORY_FIELDS = (
    "memory.mem_fraction_static", "memory.max_running_requests", "parallel.tp", "gpu.kind"
)


def _plan_message(ctx: Ctx, a: Args) -> str:
    plan = memory_plan(ctx, a)
    return plan.summary() + ("; " + "; ".join(plan.reasons) if plan.reasons else "")


MEMORY_PLAN = Rule(
    id="R-MEMORY-PLAN",
    title="GPU memory plan",
    severity="warning",
    why=_MEMORY_WHY + (
        " A set-up that barely fits starts, then serves very few requests, refuses long ones "
        "or dies out of memory in CUDA-graph capture."
    ),
    sglang=RUNTIME,
    fields=_MEMORY_FIELDS,
    when=lambda ctx, a: (plan := memory_plan(ctx, a)) is not None and plan.verdict == "tight",
    message=_plan_message,
    fixes=_plan_fixes,
)

MEMORY_NO_FIT = Rule(
    id="R-MEMORY-NOFIT",
    title="GPU memory plan: will not fit",
    severity="error",
    why=_MEMORY_WHY + (
        " With no room for the KV cache SGLang stops at start-up (\"Not enough memory. Please "
        "try to increase --mem-fraction-static.\"); with too little outside the pool it runs "
        "out of memory while capturing CUDA graphs or on the first batch."
    ),
    sglang=Raises("runtime", "RuntimeError"),
    fields=_MEMORY_FIELDS,
    when=lambda ctx, a: (
        (plan := memory_plan(ctx, a)) is not None and plan.verdict == "will_not_fit"
    ),
    message=_plan_message,
    fixes=_plan_fixes,
)



# ---------------------------------------------------------------------------------------------
# Model config construction (configs/model_config.py), architecture checks, cache switches

ALLOW_LONGER_CONTEXT = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"


def _longer_context_allowed(ctx: Ctx) -> bool:
    return parse_env_bool(ALLOW_LONGER_CONTEXT, ctx.env.get(ALLOW_LONGER_CONTEXT), False)[0]


def _derived_context(ctx: Ctx) -> int | None:
    return ctx.facts.sglang_context_length if ctx.facts is not None else None


def _context_too_long(ctx: Ctx, a: Args) -> bool:
    derived = _derived_context(ctx)
    typed = a.get("context_length")
    return (
        derived is not None
        and isinstance(typed, int)
        and typed > derived
        and not _longer_context_allowed(ctx)
    )


CONTEXT_LEN = Rule(
    id="R-CONTEXT-LEN",
    title="--context-length above what the model supports",
    severity="error",
    why=(
        "SGLang derives the model's context length from its config.json (the first of "
        "max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings, "
        "times the rope scaling factor unless the scaling names original_max_position_embeddings "
        "or is llama3) and refuses a longer --context-length while it builds the model config: "
        "positions past it may give wrong outputs or CUDA errors. "
        f"{ALLOW_LONGER_CONTEXT}=1 turns the refusal into a warning."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("model.context_length",),
    when=_context_too_long,
    message=lambda ctx, a: (
        f"Warning: User-specified context_length ({a.get('context_length')}) is greater than the "
        f"derived context_length ({_derived_context(ctx)}). This may lead to incorrect model outputs "
        "or CUDA errors. Note that the derived context_length may differ from "
        "max_position_embeddings in the model's config. To allow overriding this maximum, set the "
        f"env var {ALLOW_LONGER_CONTEXT}=1"
    ),
    fixes=lambda ctx, a: [
        Fix(f"Use the model's context length ({_derived_context(ctx)})",
            {"model.context_length": _derived_context(ctx)}),
        Fix("Let SGLang use the model's context length", {"model.context_length": None}),
        Fix(f"Allow the longer context ({ALLOW_LONGER_CONTEXT}=1)",
            {"env": {**ctx.env, ALLOW_LONGER_CONTEXT: "1"}}),
    ],
    recover=lambda ctx, a: a.__setitem__("context_length", _derived_context(ctx)),
)

# Checkpoints whose method one of SGLang's quantization classes may swap for the typed one
# (`override_quantization_method`): GPTQ / AWQ checkpoints run as their Marlin or MoE-WNA16
# variants when `--quantization` names one of those (the conversion depends on the checkpoint's
# bits and groups), and ModelOpt checkpoints always pick their sub-method. The wizard does not
# predict these pairs: it names no mismatch for them.
QUANT_CONVERTIBLE_CHECKPOINT = frozenset({"gptq", "awq", "marlin", "gptq_marlin", "awq_marlin"})
QUANT_CONVERTIBLE_TYPED = frozenset({"marlin", "gptq", "gptq_marlin", "awq", "awq_marlin",
                                     "moe_wna16"})
QUANT_OVERRIDDEN_CHECKPOINT = frozenset({"modelopt", "modelopt_mixed", "modelopt_fp8",
                                         "modelopt_fp4"})


def _typed_quantization(a: Args) -> str | None:
    value = a.get("quantization")
    return str(value).lower() if value not in (None, "unquant") else None


def _quant_mismatch(ctx: Ctx, a: Args) -> bool:
    checkpoint = ctx.facts.checkpoint_quant_method if ctx.facts is not None else None
    typed = _typed_quantization(a)
    if not checkpoint or typed is None or typed == checkpoint:
        return False
    if checkpoint in QUANT_OVERRIDDEN_CHECKPOINT or (
            checkpoint in QUANT_CONVERTIBLE_CHECKPOINT and typed in QUANT_CONVERTIBLE_TYPED):
        return False
    if typed in (ctx.release.trait("quantization_requantize") or ()):
        return False  # online requantization of any checkpoint
    compatible = ctx.release.trait("quantization_compatible") or {}
    return checkpoint not in compatible.get(typed, ())


QUANT_MISMATCH = Rule(
    id="R-QUANT-MISMATCH",
    title="--quantization contradicts the checkpoint",
    severity="error",
    why=(
        "The checkpoint's config.json names how its weights are stored (quantization_config."
        "quant_method); SGLang loads them with that method and refuses a --quantization that "
        "names another one, unless the release lists the pair as compatible (e.g. w8a8_fp8 for "
        "a compressed-tensors checkpoint; the table is read from the release's source). GPTQ/AWQ "
        "Marlin conversions and ModelOpt sub-methods are chosen by SGLang's quantization classes "
        "and not predicted here."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("model.quantization",),
    when=_quant_mismatch,
    message=lambda ctx, a: (
        "Quantization method specified in the model config "
        f"({ctx.facts.checkpoint_quant_method if ctx.facts is not None else None}) does not match "
        "the quantization method specified in the `quantization` argument "
        f"({_typed_quantization(a)})."
    ),
    fixes=lambda ctx, a: [
        Fix("Let SGLang read the quantization from the checkpoint", {"model.quantization": None}),
    ],
    recover=lambda ctx, a: a.__setitem__("quantization", None),
)


def _platform_key(ctx: Ctx) -> str:
    """The platform SGLang's quantization table is built on: "cuda", "hip" or "hip_gfx95"."""
    if not ctx.gpu.is_hip:
        return "cuda"
    return "hip_gfx95" if str(ctx.gpu.gfx_arch or "").startswith("gfx95") else "hip"


def _resolved_quantization(ctx: Ctx, a: Args) -> str | None:
    """The method `_verify_quantization` checks against its tables: the typed one, else the
    checkpoint's; None where the wizard cannot tell (a checkpoint one of SGLang's quantization
    classes converts, `--quantization unquant`, another device than the GPU)."""
    if a.get("device") not in (None, "cuda") or a.get("quantization_refused"):
        return None  # another device, or SGLang refused the method already
    raw = a.get("quantization")
    if raw is not None and str(raw).lower() == "unquant":
        return None
    checkpoint = ctx.facts.checkpoint_quant_method if ctx.facts is not None else None
    if checkpoint in QUANT_OVERRIDDEN_CHECKPOINT or checkpoint in QUANT_CONVERTIBLE_CHECKPOINT:
        return None
    return _typed_quantization(a) or checkpoint


def _quant_table(ctx: Ctx) -> list[str]:
    return list((ctx.release.traits.get("quantization_methods") or {}).get(_platform_key(ctx))
                or ())


def _quant_unknown(ctx: Ctx, a: Args) -> bool:
    method = _resolved_quantization(ctx, a)
    table = _quant_table(ctx)
    return method is not None and bool(table) and method not in table


def _quant_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    """Leave the method to the checkpoint, where that one is accepted on this platform."""
    if _typed_quantization(a) is None:
        return []
    checkpoint = ctx.facts.checkpoint_quant_method if ctx.facts is not None else None
    rocm = ctx.release.traits.get("quantization_rocm") or ()
    if checkpoint is not None and (checkpoint not in _quant_table(ctx) or (
            ctx.gpu.is_hip and rocm and checkpoint not in rocm)):
        return []
    return [Fix("Let SGLang read the quantization from the checkpoint",
                {"model.quantization": None})]


QUANT_UNKNOWN = Rule(
    id="R-QUANT-UNKNOWN",
    title="A quantization method this SGLang does not have on this GPU",
    severity="error",
    why=(
        "SGLang checks the quantization method (typed, or read from the checkpoint's "
        "quantization_config) against the methods it registers on this platform. Some exist only "
        "on some platforms (MXFP4 on CUDA and AMD gfx95, not on MI300X), and releases drop "
        "methods (plain GPTQ on CUDA). The table is read from the release's source per platform."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("model.quantization",),
    when=_quant_unknown,
    message=lambda ctx, a: (
        f"Unknown quantization method: {_resolved_quantization(ctx, a)}. Must be one of "
        f"{_quant_table(ctx)}."
    ),
    fixes=_quant_fixes,
    recover=lambda ctx, a: a.__setitem__("quantization_refused", True),
)


def _quant_rocm(ctx: Ctx, a: Args) -> bool:
    if not ctx.gpu.is_hip:
        return False
    method = _resolved_quantization(ctx, a)
    rocm = ctx.release.traits.get("quantization_rocm") or ()
    return method is not None and bool(rocm) and method not in rocm


QUANT_ROCM = Rule(
    id="R-QUANT-ROCM",
    title="A quantization method SGLang does not support on ROCm",
    severity="error",
    why=(
        "On AMD GPUs SGLang accepts only the quantization methods of its ROCm list (read from the "
        "release's source); the others are CUDA kernels."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("model.quantization",),
    when=_quant_rocm,
    message=lambda ctx, a: (
        f"{_resolved_quantization(ctx, a)} quantization is currently not supported in ROCm."
    ),
    fixes=_quant_fixes,
    recover=lambda ctx, a: a.__setitem__("quantization_refused", True),
)


def _arch_backends(ctx: Ctx) -> list[str]:
    """The attention backends the release's architecture assert accepts for the target (GPT-OSS)."""
    if ctx.arch != "GptOssForCausalLM":
        return []
    return list(ctx.release.trait("gpt_oss_attention_backends") or [])


def _prefill_decode(a: Args) -> tuple[Any, Any]:
    backend = a.get("attention_backend")
    return (a.get("prefill_attention_backend") or backend,
            a.get("decode_attention_backend") or backend)


def _gpt_oss_checks_one_backend(ctx: Ctx) -> bool:
    """The first form of the assert (variants 2-3 of its anchors) checks only
    `attention_backend`, not the prefill and decode backends."""
    return variant(ctx, "R-GPT-OSS-ATTENTION") >= 2


def _arch_backend_refused(ctx: Ctx, a: Args) -> bool:
    allowed = _arch_backends(ctx)
    if not allowed:
        return False
    if _gpt_oss_checks_one_backend(ctx):
        return a.get("attention_backend") not in allowed
    prefill, decode = _prefill_decode(a)
    return prefill not in allowed or decode not in allowed


def _arch_backend_message(ctx: Ctx, a: Args) -> str:
    if _gpt_oss_checks_one_backend(ctx):
        return (f"GptOssForCausalLM requires one of {_arch_backends(ctx)} attention backend, but "
                f"got '{a.get('attention_backend')}'")
    return (f"GptOssForCausalLM requires one of {_arch_backends(ctx)} attention backend, but got "
            f"the following backends\n- Prefill: {_prefill_decode(a)[0]}\n- Decode: "
            f"{_prefill_decode(a)[1]}\n")


def _arch_backend_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    return [
        Fix("Let SGLang choose the attention backends", {
            "attention.backend": None, "attention.prefill_backend": None,
            "attention.decode_backend": None}),
        *(Fix(f"Use {name}", {"attention.backend": name, "attention.prefill_backend": None,
                                "attention.decode_backend": None})
          for name in ("triton", "fa3", "trtllm_mha") if name in _arch_backends(ctx)),
    ]


def _recover_arch_backend(ctx: Ctx, a: Args) -> None:
    a.prefill_attention_backend = None
    a.decode_attention_backend = None
    a.attention_backend = (
        "trtllm_mha" if ctx.gpu.is_sm100 else "fa3" if ctx.gpu.is_hopper else "triton"
    )


GPT_OSS_ATTENTION = Rule(
    id="R-GPT-OSS-ATTENTION",
    title="GPT-OSS needs an attention backend with sinks and sliding window",
    severity="error",
    why=(
        "GPT-OSS uses attention sinks and a sliding window; only some attention backends implement "
        "both, and SGLang asserts that the prefill and the decode backend are among them (the list "
        "is read from the release's source) in its model-specific step."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("attention.backend", "attention.prefill_backend", "attention.decode_backend"),
    when=_arch_backend_refused,
    message=_arch_backend_message,
    fixes=_arch_backend_fixes,
    recover=_recover_arch_backend,
)

HICACHE_NO_RADIX = Rule(
    id="R-HICACHE-NO-RADIX",
    title="Hierarchical cache without the radix cache",
    severity="error",
    why=(
        "The hierarchical cache offloads the radix (prefix) cache's KV to host memory; with the "
        "radix cache disabled (typed, or by SGLang for models it cannot prefix-cache) there is "
        "nothing to offload, and SGLang refuses the pair."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("scheduling.disable_radix_cache", "extra_args"),
    when=lambda ctx, a: bool(a.get("enable_hierarchical_cache")) and bool(
        a.get("disable_radix_cache")),
    message=lambda ctx, a: (
        "The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive "
        "and cannot be used at the same time. Please use only one of them."
    ),
    fixes=lambda ctx, a: (
        [Fix("Keep the radix cache", {"scheduling.disable_radix_cache": False})]
        if ctx.typed_value("disable_radix_cache") else []
    ),
    recover=lambda ctx, a: a.__setitem__("enable_hierarchical_cache", False),
)


def _deprecated_typed(ctx: Ctx) -> list[tuple[str, str | None]]:
    """(option, replacement) of every deprecated store-true flag the launch types."""
    table = ctx.release.trait("deprecated_store_true") or {}
    return [(entry["option"], entry.get("new_flag")) for dest, entry in table.items()
            if ctx.typed_value(dest) is True]


def _deprecation_text(option: str, new_flag: str | None) -> str:
    replacement = f" Use '{new_flag}' instead." if new_flag else ""
    return f"'{option}' is deprecated and will be removed in a future release.{replacement}"


def _deprecated_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    options = {option for option, _new in _deprecated_typed(ctx)}
    if "--enable-dp-attention" in options and ctx.release.attn_dp_field:
        size = int(ctx.typed_value("dp_size") or 1)
        return [Fix(f"Use --attn-dp-size {size} instead of --dp-size {size} --enable-dp-attention",
                    {"parallel.enable_dp_attention": False, "parallel.dp": 1,
                     "parallel.attn_dp_size": size if size > 1 else None})]
    return []


DEPRECATED_FLAG = Rule(
    id="R-DEPRECATED-FLAG",
    title="A deprecated flag",
    severity="warning",
    why=(
        "SGLang still accepts these flags but prints a deprecation warning when it parses them "
        "and will remove them; the release's own action names the replacement (read from its "
        "source). The launch behaves as the replacement would (e.g. --dp-size N with "
        "--enable-dp-attention runs as --attn-dp-size N: dp_size 1, enable_dp_attention False)."
    ),
    sglang=SILENT,
    fields=("parallel.enable_dp_attention", "extra_args"),
    when=lambda ctx, a: bool(_deprecated_typed(ctx)),
    message=lambda ctx, a: " ".join(
        _deprecation_text(option, new) for option, new in _deprecated_typed(ctx)),
    fixes=_deprecated_fixes,
)

RUNTIME_RULES: tuple[Rule, ...] = (
    MEMORY_NO_FIT,
    MEMORY_PLAN,
    V2_TREE,
    TRACK_INTERVAL_FINAL,
    TREE_CAPACITY,
    NEXTN_NO_MTP,
    DRAFT_MISSING,
    EAGLE3_DRAFT_AS_EAGLE,
    DRAFT_HIDDEN_MISMATCH,
    DRAFT_VOCAB_MISMATCH,
    *mn.RUNTIME_RULES,
)
CONTEXT_RULES: tuple[Rule, ...] = (
    VERSION_NEAREST,
    GPU_ASSUMED,
    FACTS_MISSING,
    SPEC_V2_ENV,
    MULTI_LAYER_EAGLE,
    DEPRECATED_FLAG,
)

ALL_RULES: tuple[Rule, ...] = (
    SPEC_V2_TOPK,
    FA4_DECODE,
    MODEL_TYPE_UNKNOWN,
    DPATTN_TP_DIVISIBLE,
    FA4_PAGE_23,
    SINK_NEEDS_WINDOW_23,
    REJECTION_TOPK_23,
    ALGO_CHOICE,
    MAMBA_AUTO_NO_BUFFER,
    MAMBA_EXTRA_UNSUPPORTED,
    MAMBA_NOT_HYBRID,
    MAMBA_EXTRA_NORADIX,
    MAMBA_EXTRA_DEVICE,
    MAMBA_TRACK_INTERVAL,
    MAMBA_EXTRA_PAGE,
    MAMBA_FLA_CHUNK,
    MAMBA_NOBUF_PAGE,
    MAMBA_NOBUF_OVERLAP,
    MAMBA_NOBUF_SPEC,
    MAMBA_NOBUF_PAGE_23,
    MAMBA_NOBUF_OVERLAP_23,
    MAMBA_NOBUF_TRTLLM_23,
    FLEX_NO_SPEC,
    TRTLLM_MLA_GPU,
    TRTLLM_MHA_PREFILL_GPU,
    TRTLLM_PAGE,
    TRTLLM_MLA_PAGE,
    MOE_RUNNER,
    NEXTN_ALIAS,
    SKIP_DP_MLP_SYNC,
    DFLASH_DPATTN,
    DFLASH_PP,
    DFLASH_DRAFT,
    DFLASH_BLOCK_MISMATCH,
    STANDALONE_DPATTN,
    MAXREQ_48,
    SPEC_V1_SELECT,
    MIXED_CHUNK_OFF,
    DRAFT_AUTO,
    DRAFT_NOT_NEEDED,
    MTP_PAGE_FLASHINFER,
    SPEC_STEPS_TRIO,
    AUTO_PARAMS,
    TOPK_NONE_TYPEERROR_TRTLLM,
    TOPK_NONE_TYPEERROR,
    TRTLLM_TOPK,
    TOPK1_REWRITE,
    TOPK_PAGE,
    NGRAM_DEVICE,
    NGRAM_TOPK,
    NGRAM_CORPUS_BUDGET,
    NGRAM_CORPUS_LIMIT,
    NGRAM_PAGE,
    NGRAM_DPATTN,
    PP_SPEC,
    PP_SPEC_ALGO_23,
    CHUNKED_PAGE,
    LORA_SPEC,
    ADAPTIVE_OFF,
    ADAPTIVE_STEPS_23,
    MLA_ROPE_FACTOR,
    DRAFT_PATH_MISSING_23,
    CONTEXT_LEN,
    QUANT_MISMATCH,
    QUANT_UNKNOWN,
    QUANT_ROCM,
    GPT_OSS_ATTENTION,
    HICACHE_NO_RADIX,
    *mn.CHECK_RULES,
    *RUNTIME_RULES,
    *CONTEXT_RULES,
)
# Every finding id the product emits: the engine's rules and the checks made outside its run
# (argparse, flags of another release, secrets, multi-node profile checks, unevaluable).
REGISTERED: tuple[Rule | Check, ...] = (*ALL_RULES, *CHECKS)
RULES_BY_ID: dict[str, Rule | Check] = {r.id: r for r in REGISTERED}


def rule_for_location(version: str, where: str) -> Rule | None:
    """The rule whose raising statement is at `where` (`sglang/srt/server_args.py:3521`) in `version`.

    Accepts a traceback's path in any prefix form (`.../site-packages/sglang/srt/...`) and a line
    anywhere inside a multi-line statement (within 3 lines after its first line).
    """
    release = release_for(version)
    idx = where.find("sglang/")
    if idx < 0:
        return None
    path, _, line_text = where[idx:].rpartition(":")
    try:
        line = int(line_text)
    except ValueError:
        return None
    best: Rule | None = None
    best_line = -1
    for rule in ALL_RULES:
        site = release.site(rule.id)
        if site is None or rule.sglang.exception is None:
            continue
        r_path, _, r_line = site.where.rpartition(":")
        if r_path != path or not r_line.isdigit():
            continue
        if 0 <= line - int(r_line) <= 3 and (best is None or int(r_line) > best_line):
            best, best_line = rule, int(r_line)
    return best
