"""Real SGLang start-up logs from public sources, with the configs needed to plan them.

Each row is one launch: model config (public facts, `families.py` style), GPUs, flags, the SGLang
version of the log, what the log printed (`Load weight begin. avail mem=` = free before loading,
`Load weight end. ... mem usage=` = weights per GPU, `KV Cache is allocated. #tokens:`, K+V size /
tokens = KV bytes per token) and where it was published. `None` = the log does not show it.
`tests/model/test_memory_logs.py` plans every row and prints the error per row; docs/inspect.md
has the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import families as fam


@dataclass(frozen=True)
class LogRow:
    """One published SGLang start-up and the set-up that produced it."""

    name: str
    config: dict[str, Any]
    gpu: str
    gpus: int
    tp: int
    mem_fraction: float | None
    version: str  # the SGLang release of the log (nearest known when the log does not say)
    source: str
    extra_files: dict[str, Any] = field(default_factory=dict)
    pp: int = 1
    dp: int = 1
    dp_attention: bool = False
    free_before_gib: float | None = None  # "Load weight begin. avail mem="
    weights_gib: float | None = None  # "Load weight end. ... mem usage="
    kv_tokens: int | None = None  # "KV Cache is allocated. #tokens:"
    kv_bytes_per_token: float | None = None  # logged KV size / tokens
    note: str = ""


def _qwq_32b() -> dict[str, Any]:
    """Qwen/QwQ-32B (Qwen2.5-32B shape; the log prints context_len=131072)."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 5120,
        "intermediate_size": 27648,
        "num_hidden_layers": 64,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "vocab_size": 152064,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


def _qwen3_235b_fp8() -> dict[str, Any]:
    """Qwen/Qwen3-235B-A22B-FP8: 94 layers, 128 experts (8 active), FP8 block 128x128."""
    return {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "moe_intermediate_size": 1536,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "num_hidden_layers": 94,
        "num_attention_heads": 64,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "quantization_config": {
            "quant_method": "fp8",
            "fmt": "e4m3",
            "weight_block_size": [128, 128],
            "activation_scheme": "dynamic",
        },
    }


def _deepseek_r1_fp4() -> tuple[dict[str, Any], dict[str, Any]]:
    """nvidia/DeepSeek-R1-FP4: the model card says only the linear operators of the MoE blocks
    are NVFP4; the exclude list below (attention, the three dense layers, the head) is that
    statement written as ModelOpt's `exclude_modules` (an assumption: the file was not read)."""
    config = fam._deepseek_v3_text(
        quantization_config={"quant_method": "modelopt", "quant_algo": "NVFP4"}
    )
    quant = {
        "producer": {"name": "modelopt"},
        "quantization": {
            "quant_algo": "NVFP4",
            "group_size": 16,
            "exclude_modules": [
                "lm_head",
                "*self_attn*",
                "model.layers.0.mlp*",
                "model.layers.1.mlp*",
                "model.layers.2.mlp*",
            ],
        },
    }
    return config, {"hf_quant_config.json": quant}


def _deepseek_v32() -> dict[str, Any]:
    """deepseek-ai/DeepSeek-V3.2-Exp: DeepSeek-V3 + the sparse-attention indexer (128-dim keys)."""
    return fam._deepseek_v3_text(
        architectures=["DeepseekV32ForCausalLM"],
        model_type="deepseek_v32",
        index_head_dim=128,
        index_n_heads=64,
        index_topk=2048,
    )


_R1_CONFIG, _R1_FILES = _deepseek_r1_fp4()

ROWS: tuple[LogRow, ...] = (
    LogRow(
        name="QwQ-32B bf16, 4x L4, tp 4",
        config=_qwq_32b(),
        gpu="L4",
        gpus=4,
        tp=4,
        mem_fraction=0.85,
        version="0.4.3.post4",
        source="github.com/didier-durand/llms-in-clouds docs (SGLang start sequence with QwQ-32B, 2025-03)",
        free_before_gib=21.63,
        weights_gib=15.54,
        kv_tokens=46611,
        kv_bytes_per_token=1.42 * 2 * 2**30 / 46611,
    ),
    LogRow(
        name="Llama-3.1-8B-Instruct bf16, 1x H100, tp 1",
        config=fam.llama31_8b().config,
        gpu="H100",
        gpus=1,
        tp=1,
        mem_fraction=0.88,
        version="0.4.4",
        source="github.com/sgl-project/sglang/pull/4760 (FA3 integration test, 2025-03-25)",
        free_before_gib=63.48 + 15.11,
        weights_gib=15.11,
        kv_tokens=442750,
        kv_bytes_per_token=27.02 * 2 * 2**30 / 442750,
    ),
    LogRow(
        name="Qwen3-235B-A22B-FP8, 4x H100, tp 4",
        config=_qwen3_235b_fp8(),
        gpu="H100",
        gpus=4,
        tp=4,
        mem_fraction=0.93,
        version="0.4.9",
        source="github.com/vllm-project/vllm/issues/21348 (SGLang log quoted, 2025-07-22)",
        kv_tokens=367404,
        kv_bytes_per_token=8.23 * 2 * 2**30 / 367404,
    ),
    LogRow(
        name="DeepSeek-R1 NVFP4, 4x B200, tp 4",
        config=_R1_CONFIG,
        extra_files=_R1_FILES,
        gpu="B200",
        gpus=4,
        tp=4,
        mem_fraction=None,
        version="0.4.10",
        source="github.com/sgl-project/sglang/pull/9162 (trtllm-gen MoE weight processing, 2025-08-13)",
        free_before_gib=175.34,
        weights_gib=94.50,
        note="exclude list of the checkpoint assumed from its model card",
    ),
    LogRow(
        name="DeepSeek-V3.2-Exp fp8 KV, 8x B200, tp 8, dp 8 DP attention",
        config=_deepseek_v32(),
        gpu="B200",
        gpus=8,
        tp=8,
        dp=8,
        dp_attention=True,
        mem_fraction=0.8,
        version="0.5.3",
        source="github.com/sgl-project/sglang/pull/11309 (indexer in the KV estimate, 2025-10-07)",
        kv_bytes_per_token=43.67 * 2**30 / 975424,
        note="KV layout only: the log shows neither the fraction in force nor the weights",
    ),
)
