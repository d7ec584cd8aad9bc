"""Tiny model folders (only `config.json`) that SGLang's argument code reads during resolution.

SGLang keys its speculative rules on `architectures[0]` and a few config fields (hybrid layer
types, NextN layers, MoE experts); no weights are needed. The configs below are shrunken copies of
the real checkpoints' configs, keeping every field the argument code reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wizard.profile import atomic_write_text

_LLAMA_BASE: dict[str, Any] = {
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 32,
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5,
    "rope_theta": 500000.0,
    "vocab_size": 32000,
    "torch_dtype": "bfloat16",
    "bos_token_id": 1,
    "eos_token_id": 2,
    "tie_word_embeddings": False,
}


def _qwen35_text(moe: bool) -> dict[str, Any]:
    text: dict[str, Any] = {
        "model_type": "qwen3_5_moe_text" if moe else "qwen3_5_text",
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "layer_types": ["linear_attention", "linear_attention", "linear_attention",
                        "full_attention"],
        "full_attention_interval": 4,
        "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 32,
        "linear_value_head_dim": 32,
        "linear_num_key_heads": 4,
        "linear_num_value_heads": 8,
        "mtp_num_hidden_layers": 1,
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-6,
        "vocab_size": 32000,
        "torch_dtype": "bfloat16",
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000000.0,
                            "partial_rotary_factor": 0.25,
                            "mrope_section": [11, 11, 10], "mrope_interleaved": True},
    }
    if moe:
        text.update({"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
                     "shared_expert_intermediate_size": 128, "decoder_sparse_step": 1})
    return text


_DSV3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 128,
    "num_hidden_layers": 4, "num_nextn_predict_layers": 1, "num_attention_heads": 8,
    "num_key_value_heads": 8, "n_routed_experts": 8, "n_shared_experts": 1,
    "num_experts_per_tok": 2, "n_group": 2, "topk_group": 1, "first_k_dense_replace": 1,
    "moe_layer_freq": 1, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid",
    "topk_method": "noaux_tc", "norm_topk_prob": True, "q_lora_rank": 64,
    "kv_lora_rank": 32, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32,
    "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
    "vocab_size": 32000, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
}


MODEL_CONFIGS: dict[str, dict[str, Any]] = {
    "llama": {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "num_hidden_layers": 4, **_LLAMA_BASE},
    "eagle_draft": {"architectures": ["LlamaForCausalLMEagle"], "model_type": "llama",
                    "num_hidden_layers": 1, **_LLAMA_BASE},
    "eagle3_draft": {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama",
                     "num_hidden_layers": 1, "draft_vocab_size": 32000, **_LLAMA_BASE},
    "standalone_draft": {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 128,
        "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 32, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "vocab_size": 32000,
        "torch_dtype": "bfloat16", "tie_word_embeddings": True,
    },
    "dsv3": _DSV3,
    # DeepSeek-V3's and Kimi-K2's attention head counts (128 and 64, KV heads alike) on the tiny
    # MLA config: SGLang's ROCm default backend for MLA is aiter only with 16 or 128 KV heads per
    # TP rank (`get_num_kv_heads(tp_size)`), so the head count decides it. Kimi-K2's own
    # model_type (kimi_k2) needs its remote code; its DeepseekV3ForCausalLM layout is kept.
    "dsv3_h128": {**_DSV3, "num_attention_heads": 128, "num_key_value_heads": 128},
    "kimi_k2_h64": {
        **{k: v for k, v in _DSV3.items() if k != "num_nextn_predict_layers"},
        "num_attention_heads": 64, "num_key_value_heads": 64, "n_group": 1,
        "routed_scaling_factor": 2.827, "rope_theta": 50000.0,
    },
    "qwen3next": {
        "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
        "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 4,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 32,
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 32,
        "linear_value_head_dim": 32, "linear_num_key_heads": 4, "linear_num_value_heads": 8,
        "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
        "shared_expert_intermediate_size": 128, "decoder_sparse_step": 1,
        "partial_rotary_factor": 0.25, "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
        "rope_theta": 10000000.0, "vocab_size": 32000, "torch_dtype": "bfloat16",
    },
    "qwen35": {
        "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
        "text_config": _qwen35_text(moe=False), "tie_word_embeddings": False,
        "vision_config": {"depth": 2, "hidden_size": 64, "num_heads": 2, "out_hidden_size": 256,
                          "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2},
        "image_token_id": 31990, "video_token_id": 31991, "vision_start_token_id": 31992,
        "vision_end_token_id": 31993,
    },
    "qwen35moe": {
        "architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
        "text_config": _qwen35_text(moe=True), "tie_word_embeddings": False,
        "vision_config": {"depth": 2, "hidden_size": 64, "num_heads": 2, "out_hidden_size": 256,
                          "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2},
        "image_token_id": 31990, "video_token_id": 31991, "vision_start_token_id": 31992,
        "vision_end_token_id": 31993,
    },
}

MODEL_KINDS: tuple[str, ...] = tuple(MODEL_CONFIGS)
TARGET_KINDS: tuple[str, ...] = ("llama", "dsv3", "qwen3next", "qwen35", "qwen35moe")
DRAFT_KINDS: tuple[str, ...] = ("eagle_draft", "eagle3_draft", "standalone_draft")


def write_model_folders(root: Path,
                        configs: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Path]:
    """Write one folder per model kind under ``root`` (atomically, idempotently); return paths.

    ``configs`` defaults to the conformance models (`MODEL_CONFIGS`)."""
    root.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for kind, config in (MODEL_CONFIGS if configs is None else configs).items():
        folder = root / kind
        folder.mkdir(exist_ok=True)
        target = folder / "config.json"
        text = json.dumps(config, indent=2, sort_keys=True) + "\n"
        if not target.exists() or target.read_text() != text:
            atomic_write_text(target, text)
        paths[kind] = folder
    return paths


PUBLIC_MODELS_PATH = Path(__file__).with_name("public_models.json")


def public_model_configs() -> dict[str, dict[str, Any]]:
    """config.json of real public checkpoints (`public_models.json`: Llama 3.1 8B/70B, Qwen3
    32B / 30B-A3B, DeepSeek-V3, gpt-oss 20b/120b, GLM-4.5-FP8, Qwen3-Next-80B, Qwen3.5 27B /
    35B-A3B), by kind; written as folders like the tiny ones."""
    data = json.loads(PUBLIC_MODELS_PATH.read_text(encoding="utf-8"))
    return {str(k): dict(v) for k, v in data["models"].items()}


PUBLIC_KINDS: tuple[str, ...] = tuple(public_model_configs())
