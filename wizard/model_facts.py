"""What the wizard knows about one checkpoint, as plain frozen dataclasses: `ModelFacts` and its
parts (hybrid layout, MoE shape, linear-attention dimensions, quantization, the parameter
breakdown), and the bytes of a checkpoint dtype.

`wizard.model_info` fills them from the config files; everything else only reads them.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

AttentionKind = Literal["MHA", "GQA", "MLA"]


#: Where `params_total` comes from: the Hub's safetensors metadata (exact element counts per
#: dtype), the index's `total_size` with the dtype, or the estimate from config.json.
ParamsSource = Literal["safetensors", "index", "estimate"]


#: Where the files were read: a local folder, the Hub (or its cache), a GPU host over SSH.
Origin = Literal["local", "hub", "host", "example"]  # example: shipped config (wizard.example_models)


# Bytes of one element per checkpoint dtype name (config.json `torch_dtype` / `dtype`).
DTYPE_BYTES: dict[str, float] = {
    "float32": 4,
    "float": 4,
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}


@dataclass(frozen=True)
class HybridLayout:
    """Linear-attention (Gated DeltaNet / mamba-style) layers vs full-attention layers."""

    linear_layers: int
    full_layers: int
    full_attention_interval: int | None = None


@dataclass(frozen=True)
class MoeInfo:
    """Mixture-of-experts shape: routed experts, experts per token, shared experts."""

    experts: int
    active_experts: int
    shared_experts: int
    moe_layers: int
    expert_intermediate_size: int


@dataclass(frozen=True)
class LinearAttentionDims:
    """Gated DeltaNet dimensions (what sizes the recurrent state per request)."""

    num_key_heads: int
    num_value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int


@dataclass(frozen=True)
class QuantInfo:
    """How the checkpoint's weights are quantized.

    `method` is SGLang's `--quantization` name (`fp8`, `modelopt_fp4`, `compressed-tensors`,
    `awq`, `gptq`, `mxfp4`, ...), `scheme` a readable label (`NVFP4`, `FP8 block 128x128`,
    `INT4 W4A16 g32`), `weight_bits` the bits of a quantized weight and `group_size` its scale
    group (None = per channel/tensor). `excluded` lists the module patterns left unquantized.
    """

    method: str
    scheme: str
    weight_bits: float
    group_size: int | None
    excluded: tuple[str, ...] = ()

    def bytes_per_param(self) -> float:
        """Average bytes per quantized weight element, scales included."""
        scale_bytes = 0.0
        if self.group_size:
            scale_bytes = (
                1.0 if self.method in ("modelopt_fp4", "mxfp4") else 2.0
            ) / self.group_size
        return self.weight_bits / 8 + scale_bytes

    def quantizes(self, module: str) -> bool:
        """Whether a module of this name is quantized (not matched by `excluded`)."""
        return not any(_module_matches(pattern, module) for pattern in self.excluded)


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameters by part, as estimated from the config (main model, MTP layers apart)."""

    embedding: int
    lm_head: int
    attention: int
    linear_attention: int
    dense_mlp: int
    routed_experts: int
    shared_experts: int
    router: int
    norms: int
    vision: int
    mtp: int
    # Of `attention`, what every attention-TP rank holds whole: MLA's `fused_qkv_a_proj_with_mqa`
    # (q_a + kv_a projections) and the sparse-attention indexer (`wq_b`, `wk`, `weights_proj`),
    # all `ReplicatedLinear` in SGLang's DeepseekV2AttentionMLA / nsa_indexer.Indexer.
    attention_replicated: int = 0

    @property
    def total(self) -> int:
        """Main-model parameters (MTP layers not counted, as published sizes do)."""
        return (
            self.embedding
            + self.lm_head
            + self.attention
            + self.linear_attention
            + self.dense_mlp
            + self.routed_experts
            + self.shared_experts
            + self.router
            + self.norms
            + self.vision
        )

    def to_json(self) -> dict[str, int]:
        """Plain dict of the parts."""
        return {
            "embedding": self.embedding,
            "lm_head": self.lm_head,
            "attention": self.attention,
            "linear_attention": self.linear_attention,
            "dense_mlp": self.dense_mlp,
            "routed_experts": self.routed_experts,
            "shared_experts": self.shared_experts,
            "router": self.router,
            "norms": self.norms,
            "vision": self.vision,
            "mtp": self.mtp,
        }


@dataclass(frozen=True)
class ModelFacts:
    """What the wizard knows about one checkpoint. See docs/inspect.md for the JSON keys."""

    source: str
    architectures: tuple[str, ...]
    architecture: str | None
    model_type: str | None
    family: str
    mtp_layers: int
    hybrid: HybridLayout | None
    moe: MoeInfo | None
    attention: AttentionKind
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    context_length: int | None
    dtype: str | None
    quantization: str | None
    params_total: int | None
    params_active: int | None
    params_source: ParamsSource
    is_eagle_draft: bool = False
    is_eagle3_draft: bool = False
    target_hidden_size: int | None = None
    has_attention_sinks: bool = False
    # Details for the memory plan and the screens.
    quant: QuantInfo | None = None
    checkpoint_bytes: int | None = None
    params_estimate: ParamBreakdown | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    index_head_dim: int | None = None  # DeepSeek sparse attention (NSA) indexer key size
    # Dimensions the rotary embedding turns (`get_rope`'s rotary_dim after partial_rotary_factor;
    # qk_rope_head_dim for MLA): the width of its cos/sin cache
    rotary_dim: int | None = None
    linear_attention: LinearAttentionDims | None = None
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    draft_vocab_size: int | None = None
    tie_word_embeddings: bool = False
    vision_layers: int | None = None
    vision_hidden_size: int | None = None
    generation_defaults: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    config_model_type: str | None = None  # config.json's top-level model_type (what AutoConfig reads)
    # config.json's rope_scaling (or rope_parameters) names a `factor` (YaRN and friends)
    rope_scaling_factor: bool = False
    origin: Origin = "local"
    revision: str | None = None  # the commit the Hub resolved to (origin "hub")
    # SGLang's `get_context_length` of the text config (its key order and rope factor rule)
    sglang_context_length: int | None = None
    # config.json's `quantization_config.quant_method`, lower-cased, as SGLang compares it
    checkpoint_quant_method: str | None = None
    # SGLang's `get_total_num_kv_heads` (the first of its attributes the text config sets, else the
    # attention heads); MLA models keep their config's count here (`num_kv_heads` is 1 for them).
    config_kv_heads: int | None = None
    # config.json's top-level keys with a value: what SGLang's `getattr(hf_config, key, None) is
    # not None` model tests read (`is_deepseek_dsa`'s index_topk); None when not read from a file
    config_keys: frozenset[str] | None = None
    # a hybrid FP8 + NVFP4-MoE checkpoint: `quantization_config` names `quant_algo`
    # MIXED_PRECISION, `moe_quant_algo` NVFP4 and a `group_size` (what makes SGLang's
    # `ModelConfig.nvfp4_moe_meta` non-None)
    nvfp4_moe_hybrid: bool = False

    @property
    def full_attention_layers(self) -> int:
        """Layers that keep a KV cache for every token (all but linear-attention layers)."""
        if self.hybrid is not None:
            return self.hybrid.full_layers
        return self.num_layers

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form (docs/inspect.md)."""
        return {
            "source": self.source,
            "origin": self.origin,
            "revision": self.revision,
            "architecture": self.architecture,
            "architectures": list(self.architectures),
            "model_type": self.model_type,
            "family": self.family,
            "mtp_layers": self.mtp_layers,
            "hybrid": None
            if self.hybrid is None
            else {
                "linear": self.hybrid.linear_layers,
                "full": self.hybrid.full_layers,
                "full_attention_interval": self.hybrid.full_attention_interval,
            },
            "moe": None
            if self.moe is None
            else {
                "experts": self.moe.experts,
                "active": self.moe.active_experts,
                "shared": self.moe.shared_experts,
                "moe_layers": self.moe.moe_layers,
                "expert_intermediate_size": self.moe.expert_intermediate_size,
            },
            "attention": self.attention,
            "num_layers": self.num_layers,
            "hidden_size": self.hidden_size,
            "num_attention_heads": self.num_attention_heads,
            "num_kv_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "kv_lora_rank": self.kv_lora_rank,
            "vocab_size": self.vocab_size,
            "context_length": self.context_length,
            "dtype": self.dtype,
            "quantization": self.quantization,
            "quantization_scheme": None if self.quant is None else self.quant.scheme,
            "params_total": self.params_total,
            "params_active": self.params_active,
            "params_source": self.params_source,
            "mtp_params": None if self.params_estimate is None else self.params_estimate.mtp,
            "checkpoint_bytes": self.checkpoint_bytes,
            "is_eagle_draft": self.is_eagle_draft,
            "is_eagle3_draft": self.is_eagle3_draft,
            "target_hidden_size": self.target_hidden_size,
            "draft_vocab_size": self.draft_vocab_size,
            "has_attention_sinks": self.has_attention_sinks,
            "vision_tower": self.vision_layers is not None
            or self.vision_hidden_size is not None
            or bool(self.params_estimate and self.params_estimate.vision),
            "sliding_window": self.sliding_window,
            "sliding_window_layers": self.sliding_window_layers,
            "generation_defaults": dict(self.generation_defaults),
            "notes": list(self.notes),
        }


def is_float_dtype(dtype: str | None) -> bool:
    """Whether a checkpoint dtype is an unquantized float type (bf16, fp16, fp32)."""
    return (dtype or "bfloat16") in ("bfloat16", "float16", "half", "float32", "float")


def _module_matches(pattern: str, module: str) -> bool:
    """compressed-tensors `re:` patterns, ModelOpt / HF globs, or plain names.

    A glob or plain name matches the module or any enclosing module (`model.layers.*.self_attn`
    matches `model.layers.3.self_attn.q_proj`); a plain name also matches as a path part.
    """
    if pattern.startswith("re:"):
        return re.match(pattern[3:], module) is not None
    parts = module.split(".")
    prefixes = [".".join(parts[: i + 1]) for i in range(len(parts))]
    if any(ch in pattern for ch in "*?["):
        return any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes)
    return pattern in prefixes or module.endswith("." + pattern) or f".{pattern}." in f".{module}."
