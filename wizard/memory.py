"""GPU memory plan for one launch: will the weights, the draft and the KV cache fit per GPU?

SGLang splits each GPU in two (0.5.11 `server_args._handle_gpu_memory_settings`,
`model_runner_kv_cache_mixin`):

* the *static pool* = card memory x `--mem-fraction-static`: the target weights, then the KV cache
  (and, for hybrid Gated DeltaNet models, the recurrent-state pool) fill it;
* the rest is left for activations and CUDA graphs, and (speculative decoding) the draft / MTP
  weights and the draft's KV cache, which are loaded *after* the target's pools are sized. The
  0.5.11 heuristic adds a fixed 4 GiB (6 GiB STANDALONE) for that; 0.5.23 adds nothing.

`plan_memory` follows those steps with the numbers from `ModelFacts` and the GPU catalog. It is an
estimate (weights from the safetensors index or the config, activations from SGLang's own
heuristic), meant to catch set-ups that cannot start and to show how much room is left.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from wizard.applicability import effective_draft_tokens
from wizard.gpus import GpuKind
from wizard.model_info import DTYPE_BYTES, ModelFacts, ParamBreakdown, is_float_dtype
from wizard.sglang.fields import version_tuple

GIB = 1 << 30
MIB = 1 << 20

Verdict = Literal["fits", "tight", "will_not_fit"]

# Algorithms whose draft lives in a separate set of weights (NEXTN = the checkpoint's MTP layers).
DRAFT_ALGORITHMS = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "DFLASH", "DSPARK"})
SPEC_ALGORITHMS = DRAFT_ALGORITHMS | {"NGRAM", "UNO"}

# SGLang constants (0.5.11 model_runner_kv_cache_mixin.py / server_args.py).
MAMBA_FULL_MEMORY_RATIO = 0.9
MAMBA_CACHE_RATIO = 3  # mamba slots per running request
MAMBA_EXTRA_BUFFER_RATIO_OVERLAP = 2
SPEC_DEFAULT_MAX_RUNNING_REQUESTS = 48
TIGHT_HEADROOM_GIB = 0.0
RUNTIME_OVERHEAD_GIB = 1.0


@dataclass(frozen=True)
class PlanFix:
    """A suggestion with the profile edits (dotted keys) that apply it; empty edits = advice."""

    label: str
    edits: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """Plain dict."""
        return {"label": self.label, "edits": dict(self.edits)}


@dataclass(frozen=True)
class MemoryPlan:
    """Per-GPU memory plan. All sizes are GiB per GPU unless the name says otherwise."""

    gpu: str
    gpus: int
    tp: int
    gpu_total_gib: float
    mem_fraction_static: float
    mem_fraction_source: Literal["given", "sglang-heuristic"]
    static_pool_gib: float
    weights_gib: float
    weights_source: Literal["index", "estimate"]
    draft_weights_gib: float
    draft_kind: str | None
    kv_budget_gib: float
    kv_bytes_per_token: int
    kv_tokens: int
    draft_kv_bytes_per_token: int
    draft_kv_gib: float
    mamba_state_per_request_mib: float
    mamba_pool_gib: float
    spec_mamba_buffer_gib: float
    max_running_requests: int | None
    max_running_requests_limit: int | None
    reserve_gib: float
    activation_estimate_gib: float
    cuda_graph_estimate_gib: float
    headroom_gib: float
    context_length: int | None
    verdict: Verdict
    reasons: tuple[str, ...]
    suggestions: list[str] = field(default_factory=list)
    assumptions: tuple[str, ...] = ()
    fixes: list[PlanFix] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Plain dict (GiB rounded to 0.01); keys documented in docs/inspect.md."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, float):
                value = round(value, 3 if name == "mem_fraction_static" else 2)
            elif isinstance(value, tuple):
                value = list(value)
            elif name == "fixes":
                value = [f.to_json() for f in value]
            out[name] = value
        return out

    def summary(self) -> str:
        """One line: verdict and the key numbers."""
        word = {"fits": "fits", "tight": "tight", "will_not_fit": "will not fit"}[self.verdict]
        return (
            f"{word}: per GPU {self.weights_gib:.1f} GiB weights + {self.kv_budget_gib:.1f} GiB "
            f"KV/state of {self.static_pool_gib:.1f} GiB static pool "
            f"({self.mem_fraction_static:.3f} x {self.gpu_total_gib:.1f} GiB), "
            f"{self.kv_tokens:,} KV tokens, headroom {self.headroom_gib:+.1f} GiB"
        )


@dataclass(frozen=True)
class _Weights:
    """Bytes of one model per GPU, split into what TP shards and what every GPU holds."""

    sharded: float
    replicated: float
    mtp_total: float  # bytes of the MTP layers (whole model, not per GPU)
    embedding: float
    lm_head: float
    source: Literal["index", "estimate"]

    def per_gpu(self, tp: int) -> float:
        return self.sharded / tp + self.replicated


def plan_memory(
    target: ModelFacts,
    gpu: GpuKind,
    gpus: int,
    tp: int,
    *,
    mem_fraction: float | None = None,
    draft: ModelFacts | None = None,
    algorithm: str | None = None,
    num_draft_tokens: int | None = None,
    max_running_requests: int | None = None,
    context_length: int | None = None,
    kv_cache_dtype: str | None = None,
    dtype: str | None = None,
    quantization: str | None = None,
    cuda_graph_max_bs: int | None = None,
    sglang_version: str = "0.5.11",
    chunked_prefill_size: int | None = None,
    disable_radix_cache: bool = False,
    mamba_extra_buffer: bool | None = None,
    num_steps: int | None = None,
    topk: int | None = None,
    _with_suggestions: bool = True,
) -> MemoryPlan:
    """Plan the memory of one GPU for `target` on `gpus` x `gpu` at tensor parallel `tp`.

    `num_draft_tokens` is what the user typed; with `num_steps`/`topk` the plan uses the count
    SGLang will really use (auto table, topk-1 rewrite). Raises ValueError for impossible inputs
    (tp larger than the GPU count, tp < 1, unknown algorithm).
    """
    if tp < 1 or gpus < 1:
        raise ValueError("tp and the GPU count must be at least 1")
    if tp > gpus:
        raise ValueError(f"tp {tp} needs {tp} GPUs but only {gpus} are given")
    algo = (algorithm or "").upper() or None
    if algo is not None and algo not in SPEC_ALGORITHMS:
        raise ValueError(f"unknown speculative algorithm {algorithm!r}")
    assumptions: list[str] = []
    total_mib = gpu.memory_mib
    total_gib = total_mib / 1024

    # --- SGLang's heuristic defaults -----------------------------------------------------------
    chunked = chunked_prefill_size or _default_chunked_prefill(total_mib)
    graph_bs = cuda_graph_max_bs or _default_cuda_graph_max_bs(total_mib, tp)
    base_reserve_mib = _sglang_base_reserve_mib(total_mib, chunked, graph_bs, tp, target)
    if mem_fraction is None:
        spec_reserve = 0
        if algo is not None and version_tuple(sglang_version) < (0, 5, 23):
            spec_reserve = 6 * 1024 if algo == "STANDALONE" else (0 if algo == "NGRAM" else 4096)
        fraction = round((total_mib - base_reserve_mib - spec_reserve) / total_mib, 3)
        fraction = _vlm_adjust(fraction, target)
        fraction_source: Literal["given", "sglang-heuristic"] = "sglang-heuristic"
        assumptions.append(
            f"--mem-fraction-static unset: SGLang {sglang_version}'s heuristic gives {fraction:.3f}"
        )
    else:
        fraction = mem_fraction
        fraction_source = "given"
    static_gib = total_gib * fraction
    reserve_gib = total_gib - static_gib

    # --- weights --------------------------------------------------------------------------------
    weights = _weights(target, dtype=dtype, quantization=quantization, tp=tp)
    weights_gib = weights.per_gpu(tp) / GIB

    # --- draft / MTP ---------------------------------------------------------------------------
    draft_gib = 0.0
    draft_kind: str | None = None
    draft_kv_per_token = 0
    kv_elem = _kv_bytes(kv_cache_dtype, dtype or target.dtype)
    if algo in DRAFT_ALGORITHMS:
        if draft is not None:
            draft_kind = f"draft model {draft.architecture or draft.family}"
            dw = _weights(draft, dtype=dtype or target.dtype, quantization=None, tp=tp)
            shared = dw.embedding if algo == "EAGLE3" else dw.embedding + dw.lm_head
            if algo in ("STANDALONE", "DFLASH"):
                shared = 0.0
            draft_gib = max(dw.per_gpu(tp) - shared / tp, 0.0) / GIB
            draft_kv_per_token = _kv_per_token(draft, tp, kv_elem, layers=draft.num_layers)
            if algo in ("EAGLE", "EAGLE3"):
                draft_kv_per_token = _kv_per_token(draft, tp, kv_elem, layers=1)
        elif weights.mtp_total > 0:
            draft_kind = f"{target.mtp_layers} MTP layer(s) of the checkpoint"
            draft_gib = weights.mtp_total / tp / GIB
            draft_kv_per_token = _kv_per_token(target, tp, kv_elem, layers=1)
        elif algo == "NEXTN":
            draft_kind = "MTP layer (not found in config.json: counted as one decoder layer)"
            draft_gib = (weights.sharded / max(target.num_layers, 1)) / tp / GIB
            draft_kv_per_token = _kv_per_token(target, tp, kv_elem, layers=1)
            assumptions.append("no MTP layer count in config.json; one decoder layer assumed")

    # --- requests ------------------------------------------------------------------------------
    running = max_running_requests
    if running is None and algo is not None:
        running = SPEC_DEFAULT_MAX_RUNNING_REQUESTS
    draft_tokens = effective_draft_tokens(
        algo, num_steps, topk, num_draft_tokens, target.architecture
    )
    if algo is not None and draft_tokens != num_draft_tokens:
        assumptions.append(f"draft tokens: SGLang will use {draft_tokens}")
    if draft_tokens is None and algo is not None:
        draft_tokens = 4
        assumptions.append("draft tokens unknown (mixed steps/topk/draft tokens): 4 assumed")

    # --- KV cache and recurrent state ----------------------------------------------------------
    kv_per_token = _kv_per_token(target, tp, kv_elem, layers=target.full_attention_layers)
    rest_gib = static_gib - weights_gib
    mamba_per_req = _mamba_state_per_request(target, tp)
    spec_mamba_gib = 0.0
    mamba_pool_gib = 0.0
    running_limit: int | None = None
    if mamba_per_req > 0:
        if algo is not None and running and draft_tokens:
            spec_mamba_gib = mamba_per_req * running * draft_tokens / GIB
        after_spec = rest_gib - spec_mamba_gib
        if disable_radix_cache and running:
            slots = running
        else:
            slots = max(
                int(after_spec * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO) * GIB)
                // mamba_per_req,
                0,
            )
        mamba_pool_gib = slots * mamba_per_req / GIB
        extra_buffer = mamba_extra_buffer if mamba_extra_buffer is not None else algo is not None
        ratio = (
            1
            if disable_radix_cache
            else MAMBA_CACHE_RATIO + (MAMBA_EXTRA_BUFFER_RATIO_OVERLAP if extra_buffer else 0)
        )
        running_limit = slots // ratio
        kv_budget_gib = after_spec - mamba_pool_gib
    else:
        kv_budget_gib = rest_gib
    kv_tokens = int(max(kv_budget_gib, 0) * GIB // kv_per_token) if kv_per_token else 0

    # --- what must fit outside the static pool -------------------------------------------------
    draft_kv_gib = kv_tokens * draft_kv_per_token / GIB
    activation_gib = (512 + max(chunked, 2048) * 1.5) / 1024
    graph_gib = graph_bs * 2 / 1024 * (2 if algo in DRAFT_ALGORITHMS else 1)
    need_gib = activation_gib + graph_gib + draft_gib + draft_kv_gib
    headroom = reserve_gib - need_gib
    # Below this the process cannot even start: CUDA context and NCCL buffers (~1 GiB), a quarter
    # of SGLang's (generous) activation estimate, the graphs and the whole draft.
    minimum_gib = (
        RUNTIME_OVERHEAD_GIB + 0.25 * activation_gib + graph_gib + draft_gib + draft_kv_gib
    )

    ctx = context_length or target.context_length
    reasons: list[str] = []
    verdict: Verdict = "fits"
    if rest_gib <= 0:
        verdict = "will_not_fit"
        reasons.append(
            f"weights need {weights_gib:.1f} GiB per GPU but the static pool is "
            f"{static_gib:.1f} GiB ({fraction:.3f} x {total_gib:.1f} GiB)"
        )
    elif kv_tokens <= 0:
        verdict = "will_not_fit"
        reasons.append("no memory left for the KV cache after weights and recurrent state")
    elif reserve_gib < minimum_gib:
        verdict = "will_not_fit"
        reasons.append(
            f"outside the static pool {reserve_gib:.1f} GiB must hold at least "
            f"{minimum_gib:.1f} GiB (CUDA context, activations, CUDA graphs"
            + (f", draft weights {draft_gib:.1f}, draft KV {draft_kv_gib:.1f}" if draft_gib else "")
            + ")"
        )
    if verdict == "fits":
        if headroom < 0:
            verdict = "tight"
            reasons.append(
                f"outside the static pool {reserve_gib:.1f} GiB is {-headroom:.1f} GiB short of "
                f"SGLang's own activation and graph estimate"
                + (" once the draft is loaded" if draft_gib else "")
            )
        if ctx and kv_tokens < ctx:
            verdict = "tight"
            reasons.append(
                f"{kv_tokens:,} KV tokens is less than one request of the context length {ctx:,}"
            )
        if running_limit is not None and running and running_limit < running:
            verdict = "tight"
            reasons.append(
                f"the recurrent-state pool holds {running_limit} running requests, "
                f"fewer than max running requests {running}"
            )

    plan = MemoryPlan(
        gpu=gpu.name,
        gpus=gpus,
        tp=tp,
        gpu_total_gib=total_gib,
        mem_fraction_static=fraction,
        mem_fraction_source=fraction_source,
        static_pool_gib=static_gib,
        weights_gib=weights_gib,
        weights_source=weights.source,
        draft_weights_gib=draft_gib,
        draft_kind=draft_kind,
        kv_budget_gib=kv_budget_gib,
        kv_bytes_per_token=kv_per_token,
        kv_tokens=kv_tokens,
        draft_kv_bytes_per_token=draft_kv_per_token,
        draft_kv_gib=draft_kv_gib,
        mamba_state_per_request_mib=mamba_per_req / MIB,
        mamba_pool_gib=mamba_pool_gib,
        spec_mamba_buffer_gib=spec_mamba_gib,
        max_running_requests=running,
        max_running_requests_limit=running_limit,
        reserve_gib=reserve_gib,
        activation_estimate_gib=activation_gib,
        cuda_graph_estimate_gib=graph_gib,
        headroom_gib=headroom,
        context_length=ctx,
        verdict=verdict,
        reasons=tuple(reasons),
        assumptions=tuple(assumptions),
    )
    if _with_suggestions:
        replan = partial(
            plan_memory,
            target,
            gpu,
            gpus,
            tp,
            mem_fraction=mem_fraction,
            draft=draft,
            algorithm=algorithm,
            num_draft_tokens=num_draft_tokens,
            context_length=context_length,
            kv_cache_dtype=kv_cache_dtype,
            dtype=dtype,
            quantization=quantization,
            cuda_graph_max_bs=cuda_graph_max_bs,
            sglang_version=sglang_version,
            chunked_prefill_size=chunked_prefill_size,
            disable_radix_cache=disable_radix_cache,
            mamba_extra_buffer=mamba_extra_buffer,
            num_steps=num_steps,
            topk=topk,
            _with_suggestions=False,
        )
        fixes = _suggest(plan, weights, gpus, graph_bs, kv_cache_dtype, replan)
        plan.fixes.extend(fixes)
        plan.suggestions.extend(f.label for f in fixes)
    return plan


# --------------------------------------------------------------------------------------------
# SGLang heuristics
# --------------------------------------------------------------------------------------------


def _default_chunked_prefill(total_mib: int) -> int:
    """0.5.11 `_handle_gpu_memory_settings`: chunked prefill size by card memory."""
    if total_mib < 35 * 1024:
        return 2048
    if total_mib < 60 * 1024:
        return 4096
    if total_mib < 160 * 1024:
        return 8192
    return 16384


def _default_cuda_graph_max_bs(total_mib: int, tp: int) -> int:
    """0.5.11 `_handle_gpu_memory_settings`: CUDA-graph max batch by card memory and tp."""
    if total_mib < 20 * 1024:
        return 8
    if total_mib < 35 * 1024:
        return 24 if tp < 4 else 80
    if total_mib < 60 * 1024:
        return 32 if tp < 4 else 160
    if total_mib < 160 * 1024:
        return 256 if tp < 4 else 512
    return 512


def _piecewise_graph_tokens(max_tokens: int) -> int:
    sizes = (
        list(range(4, 33, 4))
        + list(range(48, 257, 16))
        + list(range(288, 513, 32))
        + list(range(576, 1025, 64))
        + list(range(1280, 4097, 256))
        + list(range(4608, max_tokens + 1, 512))
    )
    return sum(1 for s in sizes if s <= max_tokens)


def _sglang_base_reserve_mib(
    total_mib: int, chunked: int, graph_bs: int, tp: int, target: ModelFacts
) -> float:
    """SGLang's estimate of activations + CUDA graphs (MiB), before the speculative reserve."""
    reserve = 512 + max(chunked, 2048) * 1.5 + graph_bs * 2 + tp / 8 * 1024
    if target.attention == "MLA":
        reserve += 1.5 * 1024
    else:
        reserve += _piecewise_graph_tokens(chunked) * 8
    if total_mib > 60 * 1024:
        reserve = max(reserve, 10 * 1024)
    return reserve


def _vlm_adjust(fraction: float, target: ModelFacts) -> float:
    """0.5.11 `adjust_mem_fraction_for_vlm` for checkpoints with a vision tower."""
    if not target.params_estimate or target.params_estimate.vision == 0:
        return fraction
    layers, width = target.vision_layers or 24, target.vision_hidden_size or 1024
    ratio = layers * width**2 / (24 * 1024**2)
    factor = max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))
    return round(fraction * 0.95 * factor, 3)


# --------------------------------------------------------------------------------------------
# Sizes
# --------------------------------------------------------------------------------------------


def _unquantized_bytes(dtype: str | None) -> float:
    name = (dtype or "bfloat16").removeprefix("torch.")
    if name in ("auto", "float32", "float"):
        return 2.0  # SGLang serves float32 checkpoints in bfloat16 under `auto`
    return DTYPE_BYTES.get(name, 2.0)


def _weights(
    facts: ModelFacts, *, dtype: str | None, quantization: str | None, tp: int
) -> _Weights:
    """Weight bytes split into TP-sharded and replicated parts, MTP layers apart."""
    parts = facts.params_estimate or ParamBreakdown(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    plain = _unquantized_bytes(dtype if dtype not in (None, "auto") else facts.dtype)
    online_fp8 = quantization in ("fp8", "w8a8_fp8") and facts.quant is None
    mtp_prefix = (
        "mtp.layers.0" if facts.family.startswith("qwen3") else f"model.layers.{facts.num_layers}"
    )
    shared_name = "shared_expert" if facts.family.startswith("qwen3") else "shared_experts"

    def linear(params: int, module: str) -> float:
        if facts.quant is not None and facts.quant.quantizes(module):
            return params * facts.quant.bytes_per_param()
        if online_fp8:
            return params * 1.0
        return params * plain

    layer = "model.layers.7"
    sharded = (
        parts.embedding * plain
        + parts.lm_head * plain
        + linear(parts.attention, f"{layer}.self_attn.o_proj")
        + linear(parts.linear_attention, f"{layer}.linear_attn.out_proj")
        + linear(parts.dense_mlp, "model.layers.0.mlp.down_proj")
        + linear(parts.routed_experts, f"{layer}.mlp.experts.3.down_proj")
        + linear(parts.shared_experts, f"{layer}.mlp.{shared_name}.down_proj")
        + parts.vision * plain
    )
    replicated = (parts.norms + parts.router) * plain
    if facts.attention == "MLA" and facts.kv_lora_rank:
        # q_a_proj / kv_a_proj_with_mqa are replicated on every TP rank.
        per_layer = facts.hidden_size * (facts.kv_lora_rank + (facts.qk_rope_head_dim or 0))
        replicated_mla = per_layer * facts.full_attention_layers
        replicated += linear(replicated_mla, f"{layer}.self_attn.kv_a_proj_with_mqa") * (1 - 1 / tp)
    elif facts.num_kv_heads < tp:
        # KV heads are replicated when tp exceeds them.
        kv = 2 * facts.hidden_size * facts.head_dim * facts.full_attention_layers
        replicated += linear(kv, f"{layer}.self_attn.k_proj") * (1 - facts.num_kv_heads / tp)
    mtp_module = (
        f"{mtp_prefix}.mlp.experts.3.down_proj" if facts.moe else f"{mtp_prefix}.mlp.down_proj"
    )
    mtp_total = linear(parts.mtp, mtp_module)
    source: Literal["index", "estimate"] = "estimate"
    if facts.checkpoint_bytes:
        # The index holds the stored size: scale the estimate to it (MTP layers included there).
        estimated = sharded + replicated * tp + mtp_total
        if estimated > 0:
            scale = facts.checkpoint_bytes / estimated
            sharded, replicated, mtp_total = sharded * scale, replicated * scale, mtp_total * scale
            source = "index"
    return _Weights(
        sharded=sharded,
        replicated=replicated,
        mtp_total=mtp_total,
        embedding=parts.embedding * plain,
        lm_head=parts.lm_head * plain,
        source=source,
    )


def _kv_bytes(kv_cache_dtype: str | None, model_dtype: str | None) -> float:
    name = (kv_cache_dtype or "auto").lower()
    if name.startswith("fp8"):
        return 1.0
    if name.startswith("fp4") or name == "nvfp4":
        return 0.5 + 1 / 16
    if name in ("bf16", "bfloat16", "float16", "half"):
        return 2.0
    return _unquantized_bytes(model_dtype) if is_float_dtype(model_dtype) else 2.0


def _kv_per_token(facts: ModelFacts, tp: int, elem: float, *, layers: int) -> int:
    """KV bytes per token per GPU over `layers` full-attention layers."""
    if facts.attention == "MLA" and facts.kv_lora_rank:
        # MLA stores one latent (kv_lora_rank + rope dim) per token, the same on every TP rank.
        return int((facts.kv_lora_rank + (facts.qk_rope_head_dim or 0)) * layers * elem)
    kv_heads = max(1, facts.num_kv_heads // tp)
    return int(2 * kv_heads * facts.head_dim * layers * elem)


def _mamba_state_per_request(facts: ModelFacts, tp: int) -> int:
    """Gated DeltaNet state of one request per GPU: conv (bf16) + recurrent state (fp32)."""
    dims = facts.linear_attention
    if facts.hybrid is None or dims is None:
        return 0
    key_dim = dims.num_key_heads * dims.key_head_dim
    value_dim = dims.num_value_heads * dims.value_head_dim
    conv = (2 * key_dim + value_dim) // tp * (dims.conv_kernel - 1) * 2
    ssm = (dims.num_value_heads // tp) * dims.value_head_dim * dims.key_head_dim * 4
    return (conv + ssm) * facts.hybrid.linear_layers


# --------------------------------------------------------------------------------------------
# Suggestions
# --------------------------------------------------------------------------------------------


def _best_running_requests(plan: MemoryPlan, replan: Callable[..., MemoryPlan]) -> int | None:
    """Largest common request count the recurrent-state pool can hold once the buffer shrinks."""
    for candidate in (64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1):
        if plan.max_running_requests and candidate >= plan.max_running_requests:
            continue
        trial = replan(max_running_requests=candidate)
        limit = trial.max_running_requests_limit
        if limit is not None and limit >= candidate and trial.kv_tokens > 0:
            return candidate
    return None


def _suggest(
    plan: MemoryPlan,
    weights: _Weights,
    gpus: int,
    graph_bs: int,
    kv_cache_dtype: str | None,
    replan: Callable[..., MemoryPlan],
) -> list[PlanFix]:
    out: list[PlanFix] = []
    total = plan.gpu_total_gib
    if plan.static_pool_gib <= plan.weights_gib:
        for tp in (2, 4, 8, 16):
            if plan.tp < tp <= gpus and weights.per_gpu(tp) / GIB < 0.75 * total:
                out.append(
                    PlanFix(
                        f"use --tp-size {tp}: weights drop to "
                        f"{weights.per_gpu(tp) / GIB:.1f} GiB per GPU",
                        {"parallel.tp": tp},
                    )
                )
                break
        else:
            need = weights.per_gpu(plan.tp) / GIB / 0.75
            out.append(
                PlanFix(
                    f"the weights need about {need * plan.tp:.0f} GiB of GPU memory at this tp; "
                    "use more or larger GPUs, or a quantized checkpoint (FP8 halves bf16 weights)",
                    {},
                )
            )
    if plan.headroom_gib < TIGHT_HEADROOM_GIB and plan.static_pool_gib > plan.weights_gib:
        deficit = TIGHT_HEADROOM_GIB - plan.headroom_gib + 1.0
        lower = round(plan.mem_fraction_static - deficit / total, 2)
        if plan.weights_gib + 1 < lower * total:
            out.append(
                PlanFix(
                    f"lower --mem-fraction-static to {lower:.2f}: leaves {deficit:.1f} GiB more "
                    "for activations, CUDA graphs and the draft (the KV cache shrinks by as much)",
                    {"memory.mem_fraction_static": lower},
                )
            )
        if graph_bs > 16:
            smaller = max(graph_bs // 2, 8)
            out.append(
                PlanFix(
                    f"lower --cuda-graph-max-bs from {graph_bs} to {smaller} to capture fewer, "
                    "smaller graphs",
                    {"memory.cuda_graph_max_bs": smaller},
                )
            )
    limited = (
        plan.max_running_requests_limit is not None
        and plan.max_running_requests
        and plan.max_running_requests_limit < plan.max_running_requests
    )
    if limited or (plan.spec_mamba_buffer_gib > 0.5 and plan.max_running_requests):
        best = _best_running_requests(plan, replan)
        if best is not None:
            trial = replan(max_running_requests=best)
            out.append(
                PlanFix(
                    f"set --max-running-requests {best}: the speculative state buffer "
                    f"({plan.spec_mamba_buffer_gib:.1f} GiB for {plan.max_running_requests} "
                    f"requests) shrinks to {trial.spec_mamba_buffer_gib:.1f} GiB and the state pool "
                    f"holds {trial.max_running_requests_limit} requests; KV tokens "
                    f"{plan.kv_tokens:,} -> {trial.kv_tokens:,}",
                    {"memory.max_running_requests": best},
                )
            )
    if plan.context_length and 0 < plan.kv_tokens < plan.context_length:
        fit = plan.kv_tokens // 1024 * 1024
        if fit > 0:
            out.append(
                PlanFix(
                    f"set --context-length {fit}: one request of that length fits the KV cache",
                    {"model.context_length": fit},
                )
            )
        if not (kv_cache_dtype or "").lower().startswith("fp8"):
            out.append(
                PlanFix(
                    "set --kv-cache-dtype fp8_e4m3: halves KV bytes per token",
                    {"model.kv_cache_dtype": "fp8_e4m3"},
                )
            )
    if (
        plan.verdict == "fits"
        and plan.headroom_gib > 6
        and plan.mem_fraction_source == "sglang-heuristic"
    ):
        higher = round(min(plan.mem_fraction_static + (plan.headroom_gib - 4) / total, 0.95), 2)
        out.append(
            PlanFix(
                f"room to spare: --mem-fraction-static {higher:.2f} would give the KV cache "
                f"{(higher - plan.mem_fraction_static) * total:.1f} GiB more",
                {"memory.mem_fraction_static": higher},
            )
        )
    return out
