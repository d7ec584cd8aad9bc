"""Tiny model folders (config.json only) for the rule-engine tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}
QWEN3 = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": 1024,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 3072,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "torch_dtype": "bfloat16",
}
DSV3 = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "vocab_size": 129280,
    "num_nextn_predict_layers": 1,
    "max_position_embeddings": 163840,
    "torch_dtype": "bfloat16",
}
QWEN35 = {
    "architectures": ["Qwen3_5ForConditionalGeneration"],
    "model_type": "qwen3_5",
    "text_config": {
        "model_type": "qwen3_5_text",
        "hidden_size": 5120,
        "num_hidden_layers": 64,
        "num_attention_heads": 24,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "intermediate_size": 17408,
        "vocab_size": 248320,
        "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 16,
        "full_attention_interval": 4,
        "mtp_num_hidden_layers": 1,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 48,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
        "max_position_embeddings": 262144,
    },
}
QWEN3NEXT = {
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "hidden_size": 2048,
    "num_hidden_layers": 48,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "intermediate_size": 5120,
    "moe_intermediate_size": 512,
    "num_experts": 512,
    "num_experts_per_tok": 10,
    "shared_expert_intermediate_size": 512,
    "vocab_size": 151936,
    "full_attention_interval": 4,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "num_nextn_predict_layers": 1,
}
EAGLE3_DRAFT = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 1,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "draft_vocab_size": 32000,
}

MODELS = {
    "llama": LLAMA,
    "qwen3": QWEN3,
    "dsv3": DSV3,
    "qwen35": QWEN35,
    "qwen3next": QWEN3NEXT,
    "eagle3": EAGLE3_DRAFT,
}


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """name -> path of a folder holding only that model's config.json."""
    root = tmp_path_factory.mktemp("models")
    out = {}
    for name, config in MODELS.items():
        folder = Path(root, name)
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        out[name] = str(folder)
    return out


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The public model configs (config.json only) written as model folders."""
    from wizard.conformance.models import public_model_configs, write_model_folders

    return write_model_folders(tmp_path_factory.mktemp("public"), public_model_configs())
