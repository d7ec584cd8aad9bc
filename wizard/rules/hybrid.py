"""Hybrid mamba models: the mamba radix-cache strategy (no_buffer / extra_buffer), its page size,
track interval and the overlap scheduler.

SGLang checks these in the model-specific step, before any speculative handling;
R-MAMBA-TRACK-INTERVAL-FINAL is the trap after its checks (auto-chosen draft tokens).
"""

from __future__ import annotations

from wizard.rules.common import algo, variant
from wizard.rules.model import RUNTIME, SILENT, Args, Ctx, Rule, raises
from wizard.rules.report import Fix

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


def is_hybrid(ctx: Ctx) -> bool:
    """The target is a hybrid mamba model that this release gives a mamba radix cache."""
    release = ctx.release
    if release.trait("hybrid_lists") == "radix":
        return ctx.arch in release.arch_set("mamba_radix")
    without = release.arch_set("hybrid_no_extra_buffer") or HYBRID_NO_EXTRA_BUFFER
    return ctx.arch in release.arch_set("hybrid_extra_buffer") or ctx.arch in without


def extra_buffer_supported(ctx: Ctx, a: Args | None = None) -> bool:
    """The arch supports the extra_buffer strategy in this release, with the linear-attention
    backend it needs where the release's check reads one (trait `extra_buffer_linear_backend`;
    the backend of `a` when given, else the typed one)."""
    release = ctx.release
    if release.trait("hybrid_lists") == "radix":
        listed = ctx.arch in release.arch_set("mamba_extra_buffer")
    else:
        listed = ctx.arch in release.arch_set("hybrid_extra_buffer")
    needed = release.traits.get("extra_buffer_linear_backend")
    if not (listed and needed):
        return listed
    backend = (a.get("linear_attn_backend") if a is not None
               else ctx.typed_value("linear_attn_backend"))
    return backend in (None, needed)


def strategy(a: Args) -> str | None:
    """The hybrid radix-cache strategy (`--mamba-scheduler-strategy` / `--mamba-radix-cache-strategy`)."""
    return a.get("mamba_scheduler_strategy")


def extra_buffer(a: Args) -> bool:
    """SGLang's `enable_mamba_extra_buffer()`: extra_buffer, or extra_buffer_lazy where the
    release has it (the releases without it refuse that choice first)."""
    return strategy(a) in ("extra_buffer", "extra_buffer_lazy")


def strategy_flag(ctx: Ctx) -> str:
    """The hybrid-cache flag spelling of the release."""
    return "--" + ctx.release.strategy_field.replace("_", "-")


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
    if not extra_buffer(a):
        return False
    if ctx.release.trait("extra_buffer_check_skips_disabled_radix") and a.get("disable_radix_cache"):
        return False
    return is_hybrid(ctx) and not extra_buffer_supported(ctx, a)


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
        and extra_buffer(a)
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
        is_hybrid(ctx) and extra_buffer(a) and bool(a.get("disable_radix_cache"))
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
        and extra_buffer(a)
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
    if not extra_buffer(a):
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
    if not extra_buffer(a) or a.get("page_size") is None:
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


TRACK_INTERVAL_FINAL = Rule(
    id="R-MAMBA-TRACK-INTERVAL-FINAL",
    title="Track interval below the final draft tokens",
    severity="warning",
    why="SGLang checks the track interval only against typed draft tokens; auto-chosen or rewritten values are never checked.",
    sglang=RUNTIME,
    fields=("hybrid.track_interval",),
    when=lambda ctx, a: (
        extra_buffer(a)
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
