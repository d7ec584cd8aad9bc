"""The GPU memory plan as rules: the plan's inputs from the resolved arguments (`wizard.memory`
computes the plan; it loads once model facts are read), one cached plan per set of inputs, the two
findings (tight, will not fit), and the fix that raises max running requests only where it fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wizard.rules.common import algo, attention_dp_size, dp_attention, hip_attention_backend
from wizard.rules.hybrid import strategy
from wizard.rules.model import RUNTIME, Args, Ctx, Raises, Rule
from wizard.rules.multinode import nnodes
from wizard.rules.parallelism import pp_partition
from wizard.rules.report import Fix


def more_requests_fixes(ctx: Ctx, a: Args, count: int) -> list[Fix]:
    """Raising max running requests, unless the memory plan says it would not fit: a rule never
    suggests the opposite of what the memory plan asks for."""
    inputs = memory_inputs(ctx, a)
    if inputs is not None:
        from wizard.memory import bare_plan

        try:
            after = bare_plan(inputs.with_edits(max_running_requests=count))
        except ValueError:
            return []
        if after.verdict != "fits":
            return []
    return [Fix(f"Set max running requests to {count}", {"memory.max_running_requests": count})]


def _plan_attention_backend(ctx: Ctx, a: Args) -> str | None:
    """The attention backend the pool is sized with: SGLang's resolved one, else on ROCm the
    model runner's default where the release picks it there at load time (trait
    `attention_default` "model_runner": the argument code leaves it None, and
    `hip_attention_default` holds the runner's branches)."""
    backend = a.get("attention_backend")
    if backend is not None or not ctx.gpu.is_hip:
        return backend
    if ctx.release.traits.get("attention_default", "server_args") == "server_args":
        return None
    hip = ctx.release.traits.get("hip_attention_default") or {}
    return hip_attention_backend(ctx, a, hip) if hip else None


def _env_true(ctx: Ctx, name: str | None) -> bool:
    """SGLang's `get_bool_env_var`: the variable is "1" or "true" (any case)."""
    return bool(name) and str(ctx.env.get(str(name), "")).lower() in ("1", "true")


def memory_inputs(ctx: Ctx, a: Args) -> Any:
    """The memory plan's inputs from the resolved arguments, or None when there is no plan:
    no model facts, or no GPU kind given (a plan for an assumed card would be a guess)."""
    if ctx.facts is None or ctx.gpu_assumed:
        return None
    cache = a.derived_cache()
    if cache is None:
        return _memory_inputs(ctx, a)
    if "memory_inputs" not in cache:
        cache["memory_inputs"] = _memory_inputs(ctx, a)
    return cache["memory_inputs"]


def _memory_inputs(ctx: Ctx, a: Args) -> Any:
    assert ctx.facts is not None  # memory_inputs returns None without facts
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
        attention_backend=_plan_attention_backend(ctx, a),
        nnodes=nnodes(a),
        aiter_honor_env=ctx.env.get("SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION", "").lower()
        in ("1", "true"),
        use_aiter=_env_true(ctx, (ctx.release.traits.get("aiter_moe_keeps_unshuffled") or {})
                            .get("env")),
        deepep_dispatch_tokens=_env_int(ctx, "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK"),
        pp_layer_partition=pp_partition(ctx),
        **_memory_flag_inputs(a),
        **_prefill_graph_inputs(ctx),
    )


def _prefill_graph_inputs(ctx: Ctx) -> dict[str, Any]:
    """The prefill CUDA graph's max tokens and capture sizes as the user typed them (each
    release has one spelling of each: piecewise_* until the cuda_graph_*_prefill flags)."""
    tokens = ctx.typed_value("piecewise_cuda_graph_max_tokens")
    if tokens is None:
        tokens = ctx.typed_value("cuda_graph_max_bs_prefill")
    sizes = ctx.typed_value("piecewise_cuda_graph_tokens")
    if sizes is None:
        sizes = ctx.typed_value("cuda_graph_bs_prefill")
    return {
        "prefill_graph_max_tokens": tokens if isinstance(tokens, int) and tokens > 0 else None,
        "prefill_graph_sizes": len(sizes) if isinstance(sizes, list | tuple) and sizes else None,
    }


def _env_int(ctx: Ctx, name: str) -> int | None:
    """An integer environment variable of the launch, or None when unset or not a number."""
    try:
        return int(str(ctx.env[name]).strip())
    except (KeyError, ValueError):
        return None


def _memory_flag_inputs(a: Args) -> dict[str, Any]:
    """The plan inputs of the flags that move memory beyond the core layout: PD role, prefill
    CUDA graphs, MoE all-to-all (DeepEP), hierarchical cache, DP LM head, dense TP, Mamba slots,
    expert offload (OffloaderV2 groups, KTransformers)."""
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
        "deepep_mode": str(a.get("deepep_mode") or "auto"),
        "ep_num_redundant_experts": int(a.get("ep_num_redundant_experts") or 0),
        "enable_hierarchical_cache": bool(a.get("enable_hierarchical_cache")),
        "hicache_ratio": float(a.get("hicache_ratio") or 2.0),
        "hicache_size_gb": float(a.get("hicache_size") or 0),
        "enable_dp_lm_head": bool(a.get("enable_dp_lm_head")),
        "moe_dense_tp_size": a.get("moe_dense_tp_size"),
        "max_mamba_cache_size": a.get("max_mamba_cache_size"),
        "offload_group_size": int(a.get("offload_group_size") or 0),
        "offload_num_in_group": int(a.get("offload_num_in_group") or 1),
        "offload_prefetch_step": int(a.get("offload_prefetch_step") or 1),
        "offload_mode": str(a.get("offload_mode") or "cpu"),
        "kt_num_gpu_experts": (a.get("kt_num_gpu_experts") if a.get("kt_weight_path") else None),
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
