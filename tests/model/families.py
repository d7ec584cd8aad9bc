"""Tiny `config.json` folders for real model families, built from public facts.

Each builder returns the config dict (and extra files) of a published checkpoint; the expected
sizes are the publishers' own numbers. Nothing is downloaded: the values below come from the public
model cards and config files and the `transformers` configuration classes (the keys and their
meaning). The incident checkpoints (Qwen3.6-27B, Qwen3.5-397B-A17B-NVFP4, Kimi-K2.5 INT4 and its
EAGLE-3 draft) are reconstructed from their public facts (layer counts, heads, experts, MTP layer,
quantization scheme) and checked against the published totals; their quantization exclude lists
and the draft's shape are assumptions stated where they are built.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Family:
    """One published checkpoint: its config, optional extra files and the published sizes."""

    name: str
    config: dict[str, Any]
    params_total: float  # published, in parameters
    params_active: float | None = None
    extra_files: dict[str, Any] = field(default_factory=dict)

    def write(self, folder: Path) -> Path:
        """Write config.json (and extra JSON files) into `folder`; return it."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(self.config), encoding="utf-8")
        for name, data in self.extra_files.items():
            (folder / name).write_text(json.dumps(data), encoding="utf-8")
        return folder


def llama31_8b() -> Family:
    """meta-llama/Llama-3.1-8B-Instruct: 8.03B."""
    return Family(
        "Llama-3.1-8B",
        {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 128256,
            "max_position_embeddings": 131072,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0},
        },
        8.03e9,
    )


def llama31_70b() -> Family:
    """meta-llama/Llama-3.1-70B-Instruct: 70.6B."""
    fam = llama31_8b()
    fam.name = "Llama-3.1-70B"
    fam.config.update(
        hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64
    )
    fam.params_total = 70.6e9
    return fam


def qwen3_32b() -> Family:
    """Qwen/Qwen3-32B: 32.8B."""
    return Family(
        "Qwen3-32B",
        {
            "architectures": ["Qwen3ForCausalLM"],
            "model_type": "qwen3",
            "hidden_size": 5120,
            "intermediate_size": 25600,
            "num_hidden_layers": 64,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 151936,
            "max_position_embeddings": 40960,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
        },
        32.8e9,
    )


def qwen3_next_80b() -> Family:
    """Qwen/Qwen3-Next-80B-A3B-Instruct: 80B total, 3B active, hybrid 36 linear + 12 full."""
    return Family(
        "Qwen3-Next-80B-A3B",
        {
            "architectures": ["Qwen3NextForCausalLM"],
            "model_type": "qwen3_next",
            "hidden_size": 2048,
            "intermediate_size": 5120,
            "num_hidden_layers": 48,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "head_dim": 256,
            "full_attention_interval": 4,
            "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 128,
            "linear_value_head_dim": 128,
            "linear_num_key_heads": 16,
            "linear_num_value_heads": 32,
            "num_experts": 512,
            "num_experts_per_tok": 10,
            "moe_intermediate_size": 512,
            "shared_expert_intermediate_size": 512,
            "decoder_sparse_step": 1,
            "mlp_only_layers": [],
            "num_nextn_predict_layers": 1,
            "vocab_size": 151936,
            "max_position_embeddings": 262144,
            "partial_rotary_factor": 0.25,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
        },
        80e9,
        3e9,
    )


def _deepseek_v3_text(**overrides: Any) -> dict[str, Any]:
    text: dict[str, Any] = {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "n_shared_experts": 1,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
        "first_k_dense_replace": 3,
        "moe_layer_freq": 1,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "num_nextn_predict_layers": 1,
        "vocab_size": 129280,
        "max_position_embeddings": 163840,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "quantization_config": {
            "quant_method": "fp8",
            "fmt": "e4m3",
            "activation_scheme": "dynamic",
            "weight_block_size": [128, 128],
        },
    }
    text.update(overrides)
    return text


def deepseek_v3() -> Family:
    """deepseek-ai/DeepSeek-V3: 671B total (plus a 14B MTP module), 37B active, FP8."""
    return Family("DeepSeek-V3", _deepseek_v3_text(), 671e9, 37e9)


def kimi_k2() -> Family:
    """moonshotai/Kimi-K2-Instruct: 1T total, 32B active, FP8, no MTP layer."""
    return Family(
        "Kimi-K2",
        _deepseek_v3_text(
            model_type="kimi_k2",
            num_attention_heads=64,
            num_key_value_heads=64,
            n_routed_experts=384,
            first_k_dense_replace=1,
            num_nextn_predict_layers=0,
            vocab_size=163840,
            max_position_embeddings=131072,
        ),
        1.0e12,
        32e9,
    )


def glm45() -> Family:
    """zai-org/GLM-4.5: 355B total, 32B active, one MTP layer."""
    return Family(
        "GLM-4.5",
        {
            "architectures": ["Glm4MoeForCausalLM"],
            "model_type": "glm4_moe",
            "hidden_size": 5120,
            "intermediate_size": 12288,
            "moe_intermediate_size": 1536,
            "num_hidden_layers": 92,
            "num_attention_heads": 96,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "n_routed_experts": 160,
            "n_shared_experts": 1,
            "num_experts_per_tok": 8,
            "first_k_dense_replace": 3,
            "num_nextn_predict_layers": 1,
            "attention_bias": True,
            "partial_rotary_factor": 0.5,
            "vocab_size": 151552,
            "max_position_embeddings": 131072,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
        },
        355e9,
        32e9,
    )


def gpt_oss_120b() -> Family:
    """openai/gpt-oss-120b: 116.8B total, 5.1B active, MXFP4 experts, attention sinks."""
    layers = 36
    return Family(
        "gpt-oss-120b",
        {
            "architectures": ["GptOssForCausalLM"],
            "model_type": "gpt_oss",
            "hidden_size": 2880,
            "intermediate_size": 2880,
            "num_hidden_layers": layers,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "head_dim": 64,
            "num_local_experts": 128,
            "num_experts_per_tok": 4,
            "experts_per_token": 4,
            "sliding_window": 128,
            "layer_types": ["sliding_attention", "full_attention"] * (layers // 2),
            "attention_bias": True,
            "vocab_size": 201088,
            "max_position_embeddings": 131072,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "quantization_config": {
                "quant_method": "mxfp4",
                "modules_to_not_convert": [
                    "model.layers.*.self_attn",
                    "model.layers.*.mlp.router",
                    "model.embed_tokens",
                    "lm_head",
                ],
            },
        },
        116.8e9,
        5.1e9,
    )


def _layer_types(layers: int, interval: int) -> list[str]:
    return [
        "full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(layers)
    ]


# The Qwen3.5 / 3.6 text stack's published rope_parameters (multimodal RoPE over a quarter of
# each 256-wide head: 64 rotary dimensions)
QWEN35_ROPE = {
    "mrope_interleaved": True,
    "mrope_section": [11, 11, 10],
    "partial_rotary_factor": 0.25,
    "rope_theta": 10000000,
    "rope_type": "default",
}

_QWEN35_VISION = {
    "depth": 27,
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "num_heads": 16,
    "out_hidden_size": 5120,
    "spatial_merge_size": 2,
    "model_type": "qwen3_5_vision",
}


def qwen36_27b() -> Family:
    """Qwen3.6-27B (incident 1): hybrid 48 Gated DeltaNet + 16 full attention, one MTP layer."""
    layers = 64
    return Family(
        "Qwen3.6-27B",
        {
            "architectures": ["Qwen3_5ForConditionalGeneration"],
            "model_type": "qwen3_5",
            "torch_dtype": "bfloat16",
            "tie_word_embeddings": False,
            "text_config": {
                "model_type": "qwen3_5_text",
                "hidden_size": 5120,
                "intermediate_size": 17408,
                "num_hidden_layers": layers,
                "num_attention_heads": 24,
                "num_key_value_heads": 4,
                "head_dim": 256,
                "attn_output_gate": True,
                "full_attention_interval": 4,
                "layer_types": _layer_types(layers, 4),
                "linear_conv_kernel_dim": 4,
                "linear_key_head_dim": 128,
                "linear_value_head_dim": 128,
                "linear_num_key_heads": 16,
                "linear_num_value_heads": 48,
                "mtp_num_hidden_layers": 1,
                "vocab_size": 248320,
                "max_position_embeddings": 262144,
                "rope_parameters": dict(QWEN35_ROPE),
                "tie_word_embeddings": False,
                "dtype": "bfloat16",
            },
            "vision_config": dict(_QWEN35_VISION),
        },
        27e9,
    )


def qwen35_397b_nvfp4() -> Family:
    """Qwen3.5-397B-A17B-NVFP4 (incident 2): hybrid MoE, 45 linear + 15 full, one MTP layer."""
    layers = 60
    vision = dict(_QWEN35_VISION, out_hidden_size=4096)
    return Family(
        "Qwen3.5-397B-A17B-NVFP4",
        {
            "architectures": ["Qwen3_5MoeForConditionalGeneration"],
            "model_type": "qwen3_5_moe",
            "torch_dtype": "bfloat16",
            "tie_word_embeddings": False,
            "text_config": {
                "model_type": "qwen3_5_moe_text",
                "hidden_size": 4096,
                "num_hidden_layers": layers,
                "num_attention_heads": 32,
                "num_key_value_heads": 2,
                "head_dim": 256,
                "attn_output_gate": True,
                "full_attention_interval": 4,
                "layer_types": _layer_types(layers, 4),
                "linear_conv_kernel_dim": 4,
                "linear_key_head_dim": 128,
                "linear_value_head_dim": 128,
                "linear_num_key_heads": 16,
                "linear_num_value_heads": 64,
                "num_experts": 512,
                "num_experts_per_tok": 10,
                "moe_intermediate_size": 1024,
                "shared_expert_intermediate_size": 1024,
                "mtp_num_hidden_layers": 1,
                "vocab_size": 248320,
                "max_position_embeddings": 262144,
                "rope_parameters": dict(QWEN35_ROPE),
                "dtype": "bfloat16",
            },
            "vision_config": vision,
            "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"},
        },
        397e9,
        17e9,
        extra_files={
            "hf_quant_config.json": {
                "producer": {"name": "modelopt", "version": "0.37.0"},
                "quantization": {
                    "quant_algo": "NVFP4",
                    "kv_cache_quant_algo": None,
                    "group_size": 16,
                    "exclude_modules": [
                        "lm_head",
                        "model.visual*",
                        "*linear_attn*",
                        "*self_attn*",
                        "*shared_expert*",
                        "*mlp.gate",
                        "mtp*",
                    ],
                },
            }
        },
    )


def kimi_k25_int4() -> Family:
    """Kimi-K2.5 (incident 3): DeepSeek-V3-style MLA MoE, ~1T, INT4 routed experts (W4A16 g32)."""
    text = _deepseek_v3_text(
        num_attention_heads=64,
        num_key_value_heads=64,
        n_routed_experts=384,
        first_k_dense_replace=1,
        num_nextn_predict_layers=0,
        vocab_size=163840,
        max_position_embeddings=262144,
    )
    del text["quantization_config"]
    text["architectures"] = ["DeepseekV3ForCausalLM"]
    return Family(
        "Kimi-K2.5",
        {
            "architectures": ["KimiK25ForConditionalGeneration"],
            "model_type": "kimi_k25",
            "torch_dtype": "bfloat16",
            "tie_word_embeddings": False,
            "text_config": text,
            "vision_config": {
                "vt_hidden_size": 1152,
                "vt_num_hidden_layers": 27,
                "vt_intermediate_size": 4304,
                "text_hidden_size": 7168,
                "merge_kernel_size": [2, 2],
            },
            "quantization_config": {
                "quant_method": "compressed-tensors",
                "format": "pack-quantized",
                "config_groups": {
                    "group_0": {
                        "targets": ["Linear"],
                        "weights": {
                            "num_bits": 4,
                            "type": "int",
                            "group_size": 32,
                            "strategy": "group",
                            "symmetric": True,
                        },
                    }
                },
                "ignore": [
                    "lm_head",
                    "re:.*self_attn.*",
                    "re:.*shared_experts.*",
                    "re:.*mlp\\.(gate|up|gate_up|down)_proj.*",
                    "re:.*vision.*",
                    "re:.*mm_projector.*",
                ],
            },
        },
        1.04e12,
        32e9,
    )


def kimi_k25_eagle3_draft() -> Family:
    """A custom EAGLE-3 draft for Kimi-K2.5 (incident 3): one Llama layer at the target width."""
    return Family(
        "Kimi-K2.5-EAGLE3",
        {
            "architectures": ["LlamaForCausalLMEagle3"],
            "model_type": "llama",
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "num_hidden_layers": 1,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 163840,
            "draft_vocab_size": 32000,
            "target_hidden_size": 7168,
            "max_position_embeddings": 262144,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
        },
        1.4e9,
    )


SIZE_FAMILIES = [
    llama31_8b,
    llama31_70b,
    qwen3_32b,
    qwen3_next_80b,
    deepseek_v3,
    kimi_k2,
    glm45,
    gpt_oss_120b,
    qwen36_27b,
    qwen35_397b_nvfp4,
    kimi_k25_int4,
]
