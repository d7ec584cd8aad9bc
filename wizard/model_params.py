"""Parameter counts: the estimate from config.json, part by part (`estimate_params`), the exact count
from a checkpoint's element counts per safetensors dtype (`checkpoint_params`, as the Hub's metadata
or the shards' headers give them), and the checkpoint's size in bytes.
"""

from __future__ import annotations

from collections.abc import Mapping

from wizard.limits import MAX_CHECKPOINT_BYTES
from wizard.model_facts import (
    AttentionKind,
    HybridLayout,
    LinearAttentionDims,
    ModelFacts,
    MoeInfo,
    ParamBreakdown,
    QuantInfo,
)
from wizard.model_files import Layered, Section


def checkpoint_params(
    counts: Mapping[str, int], quant: QuantInfo | None
) -> tuple[int, str] | None:
    """Parameters stored in a checkpoint from its element counts per safetensors dtype.

    `counts` is the Hub's `safetensors.parameters` (`{"BF16": n, "U8": m, ...}`: stored elements,
    not parameters). Packed formats are unpacked and scales / zero points left out:
    FP4 (ModelOpt, compressed-tensors NVFP4) = 2 per U8 element, F8 block scales dropped;
    MXFP4 = 2 per U8 element with its U8 scales (1 per 32) dropped; AWQ / GPTQ / pack-quantized
    INT-n = 32/n per I32 element, zero points (1 per group) and F16 scales (1 per group) dropped.
    Returns (parameters, how) or None for a layout this does not know.
    """
    c = {str(k).upper(): int(v) for k, v in counts.items()
         if 0 <= int(v) <= MAX_CHECKPOINT_BYTES}  # a count beyond 1 PiB is not a checkpoint
    floats = sum(c.get(k, 0) for k in ("BF16", "F16", "F32", "F64"))
    f8 = c.get("F8_E4M3", 0) + c.get("F8_E5M2", 0)
    u8 = c.get("U8", 0)
    i32 = c.get("I32", 0) + c.get("U32", 0)
    if quant is None:
        return sum(c.values()), "sum of the tensors' elements"
    method = quant.method
    fp4 = method == "modelopt_fp4" or (method == "compressed-tensors" and "NVFP4" in quant.scheme)
    if fp4 and u8:
        return 2 * u8 + floats, "packed FP4 (2 per U8 element) + unquantized tensors, scales left out"
    if method == "mxfp4" and u8:
        group = quant.group_size or 32
        # U8 blocks (2 values each) and, unless stored as F8_E8M0, U8 scales (1 per group)
        weights = 2 * u8 if c.get("F8_E8M0") else round(u8 * 2 * group / (group + 2))
        return weights + floats, "packed MXFP4 (2 per U8 element) + unquantized tensors, scales left out"
    if method in ("fp8", "modelopt_fp8") or (
        method == "compressed-tensors" and quant.scheme.startswith("FP8")
    ):
        if f8:
            return f8 + floats, "FP8 weights + unquantized tensors"
        return None
    packed = method in ("awq", "gptq") or (method == "compressed-tensors" and quant.weight_bits < 8)
    if packed and i32:
        pack = 32 // int(quant.weight_bits)
        size = quant.group_size or 0
        zeros = method in ("awq", "gptq")
        weights = i32 * pack
        if zeros and size:
            weights = round(weights * size / (size + 1))  # qzeros: 1 I32 per group and pack
        scales = weights // size if size else 0
        how = f"INT{int(quant.weight_bits)} packed {pack} per I32 element + unquantized tensors"
        return weights + max(floats - scales, 0) + c.get("I8", 0), how + ", scales left out"
    if method == "compressed-tensors" and c.get("I8"):
        return c["I8"] + floats, "INT8 weights + unquantized tensors"
    return None


_SAFETENSORS_BYTES = {
    "F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
    "U16": 2, "I8": 1, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
}


def checkpoint_size(counts: Mapping[str, int]) -> int | None:
    """Bytes the checkpoint stores, from its element counts per safetensors dtype (None when a
    dtype is unknown)."""
    total = 0
    for dtype, count in counts.items():
        size = _SAFETENSORS_BYTES.get(str(dtype).upper())
        if size is None:
            return None
        total += size * int(count)
    return total


def with_checkpoint_params(facts: ModelFacts, counts: Mapping[str, int]) -> ModelFacts:
    """`facts` with the exact parameter count of the checkpoint (Hub safetensors metadata).

    Published sizes leave MTP layers out, so the estimated MTP part is taken off as for the
    index; the active count of an MoE model is scaled by the same factor as the total.
    Unknown layouts keep the estimate, with a note saying so.
    """
    from dataclasses import replace

    if facts.checkpoint_bytes is None:
        stored_bytes = checkpoint_size(counts)
        if stored_bytes:
            facts = replace(facts, checkpoint_bytes=stored_bytes)
    got = checkpoint_params(counts, facts.quant)
    if got is None:
        note = (
            "parameters estimated from config.json: the safetensors metadata "
            f"({', '.join(sorted(counts))}) has a layout the wizard does not unpack"
        )
        return replace(facts, notes=(*facts.notes, note))
    stored, how = got
    estimate = facts.params_estimate
    mtp = estimate.mtp if estimate is not None else 0
    total = max(stored - mtp, 0)
    active = facts.params_active
    if facts.moe is not None and estimate is not None and estimate.total > 0 and active:
        active = int(active * total / estimate.total)
    elif facts.moe is None:
        active = total
    notes = tuple(n for n in facts.notes if "parameters estimated from config.json" not in n)
    note = f"parameters: exact count from the safetensors metadata ({how})"
    return replace(
        facts,
        params_total=total,
        params_active=active,
        params_source="safetensors",
        notes=(*notes, note),
    )


def estimate_params(
    cfg: Layered,
    top: Section,
    *,
    hidden: int,
    num_layers: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    vocab: int,
    attention: AttentionKind,
    hybrid: HybridLayout | None,
    linear_dims: LinearAttentionDims | None,
    moe: MoeInfo | None,
    mtp_layers: int,
    tie: bool,
    is_eagle3: bool,
    draft_vocab: int | None,
    target_hidden: int | None,
) -> ParamBreakdown:
    """Count the weights from the config, part by part (biases and norms included roughly)."""
    embedding = vocab * hidden
    lm_head = 0 if tie else (draft_vocab or vocab) * hidden
    intermediate = cfg.opt_int("intermediate_size") or 4 * hidden
    bias = bool(cfg.opt_bool("attention_bias")) or bool(cfg.opt_bool("qkv_bias"))

    # One full-attention layer.
    replicated_layer = 0
    if attention == "MLA":
        q_lora = cfg.opt_int("q_lora_rank")
        qk_nope = cfg.req_int("qk_nope_head_dim", 128)
        qk_rope = cfg.req_int("qk_rope_head_dim", 64)
        v_dim = cfg.req_int("v_head_dim", 128)
        kv_lora = cfg.req_int("kv_lora_rank")
        qk = qk_nope + qk_rope
        q_part = hidden * q_lora + q_lora * heads * qk + q_lora if q_lora else hidden * heads * qk
        kv_part = hidden * (kv_lora + qk_rope) + kv_lora * heads * (qk_nope + v_dim) + kv_lora
        attn_layer = q_part + kv_part + heads * v_dim * hidden
        replicated_layer = hidden * ((q_lora or 0) + kv_lora + qk_rope)
        index_dim, index_heads = cfg.opt_int("index_head_dim"), cfg.opt_int("index_n_heads")
        if index_dim and index_heads:
            # DeepSeek sparse attention's indexer (wq_b, wk, weights_proj, k_norm)
            indexer = ((q_lora or hidden) * index_heads * index_dim + hidden * index_dim
                       + hidden * index_heads + 2 * index_dim)
            attn_layer += indexer
            replicated_layer += indexer
    else:
        gated = bool(cfg.opt_bool("attn_output_gate")) or (
            hybrid is not None and linear_dims is not None
        )
        q_out = heads * head_dim * (2 if gated else 1)
        kv_out = 2 * kv_heads * head_dim
        attn_layer = hidden * (q_out + kv_out) + heads * head_dim * hidden
        if bias:
            attn_layer += q_out + kv_out + hidden
        attn_layer += 2 * head_dim  # q/k norms where present (tiny)
        if top.opt_str("model_type") == "gpt_oss":
            attn_layer += heads  # attention sinks

    full_layers = hybrid.full_layers if hybrid is not None else num_layers
    linear_layers = hybrid.linear_layers if hybrid is not None else 0

    linear_layer = 0
    if linear_dims is not None:
        key_dim = linear_dims.num_key_heads * linear_dims.key_head_dim
        value_dim = linear_dims.num_value_heads * linear_dims.value_head_dim
        linear_layer = (
            hidden * (2 * key_dim + 2 * value_dim)  # in_proj q, k, v, z
            + hidden * 2 * linear_dims.num_value_heads  # in_proj b, a
            + (2 * key_dim + value_dim) * linear_dims.conv_kernel  # conv1d
            + value_dim * hidden  # out_proj
            + 2 * linear_dims.num_value_heads
            + linear_dims.value_head_dim
        )
    elif linear_layers:
        # A mamba-style layer without Gated DeltaNet dims: count it like an attention layer.
        linear_layer = attn_layer

    mlp_bias = top.opt_str("model_type") == "gpt_oss"
    dense_layer = 3 * hidden * intermediate
    routed = shared = router = 0
    dense_layers = num_layers
    routed_layer = shared_layer = router_layer = 0
    if moe is not None:
        dense_layers = num_layers - moe.moe_layers
        per_expert = 3 * hidden * moe.expert_intermediate_size
        if mlp_bias:
            per_expert += 2 * moe.expert_intermediate_size + hidden
        routed_layer = moe.experts * per_expert
        shared_size = cfg.opt_int("shared_expert_intermediate_size")
        if shared_size:
            shared_layer = 3 * hidden * shared_size + hidden  # + shared-expert gate
        elif moe.shared_experts:
            shared_layer = moe.shared_experts * 3 * hidden * moe.expert_intermediate_size
        router_layer = moe.experts * hidden + (moe.experts if mlp_bias else 0)
        routed = routed_layer * moe.moe_layers
        shared = shared_layer * moe.moe_layers
        router = router_layer * moe.moe_layers

    norms = (2 * num_layers + 1) * hidden
    if is_eagle3:
        # EAGLE-3 draft: fc over three target hidden states; its single layer reads 2 x hidden.
        fc_in = 3 * (target_hidden or hidden)
        embedding += fc_in * hidden + hidden * heads * head_dim  # fc + wider qkv input
    mtp = 0
    if mtp_layers:
        last_is_moe = moe is not None and moe.moe_layers > 0
        mtp_layer = (
            (attn_layer if full_layers else linear_layer)
            + (routed_layer + shared_layer + router_layer if last_is_moe else dense_layer)
            + 2 * hidden * hidden  # eh_proj / fc over [embedding, hidden]
            + 4 * hidden
        )
        mtp = mtp_layers * mtp_layer
    return ParamBreakdown(
        embedding=embedding,
        lm_head=lm_head,
        attention=attn_layer * full_layers,
        linear_attention=linear_layer * linear_layers,
        dense_mlp=dense_layer * dense_layers,
        routed_experts=routed,
        shared_experts=shared,
        router=router,
        norms=norms,
        vision=_vision_params(top),
        mtp=mtp,
        attention_replicated=replicated_layer * full_layers,
    )


def _vision_params(top: Section) -> int:
    """Rough size of a vision tower from `vision_config` (ViT blocks + merger)."""
    vision = top.opt_section("vision_config")
    if vision is None:
        return 0
    width = (
        vision.opt_int("hidden_size")
        or vision.opt_int("embed_dim")
        or vision.opt_int("vt_hidden_size")
    )
    depth = (
        vision.opt_int("depth")
        or vision.opt_int("num_hidden_layers")
        or vision.opt_int("vt_num_hidden_layers")
    )
    if not width or not depth:
        return 0
    inner = (
        vision.opt_int("intermediate_size") or vision.opt_int("vt_intermediate_size") or 4 * width
    )
    out = vision.opt_int("out_hidden_size") or width
    merge = (vision.opt_int("spatial_merge_size") or 2) ** 2
    blocks = depth * (4 * width * width + 2 * width * inner + 4 * width)
    merger = width * merge * width * merge + width * merge * out
    return blocks + merger


def active_params(breakdown: ParamBreakdown, moe: MoeInfo | None) -> int | None:
    """Parameters used per token, counted like the gpt-oss model card: the input embedding is a
    lookup and does not count, the output head does. Dense models: the total."""
    if moe is None:
        return breakdown.total
    routed_active = breakdown.routed_experts * moe.active_experts // moe.experts
    return breakdown.total - breakdown.routed_experts + routed_active - breakdown.embedding
