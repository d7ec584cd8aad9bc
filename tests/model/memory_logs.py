"""Real SGLang start-up logs from public sources, with the configs needed to plan them.

Each row is one launch: model config (public facts, `families.py` style), GPUs, flags, the SGLang
version of the log, what the log printed (`Load weight begin. avail mem=` = free before loading,
`Load weight end. ... mem usage=` = weights per GPU, `KV Cache is allocated. #tokens:`, K+V size /
tokens = KV bytes per token) and where it was published. `None` = the log does not show it.
`tests/model/test_memory_logs.py` plans every row and prints the error per row; docs/inspect.md
has the table.
"""

from __future__ import annotations

import copy
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
    pp_rank: int | None = None  # the pipeline stage the log's lines are of (None: the planned one)
    nnodes: int = 1  # --nnodes
    dp: int = 1
    dp_attention: bool = False
    free_before_gib: float | None = None  # "Load weight begin. avail mem="
    weights_gib: float | None = None  # "Load weight end. ... mem usage="
    kv_tokens: int | None = None  # "KV Cache is allocated. #tokens:"
    kv_bytes_per_token: float | None = None  # logged KV size / tokens
    mamba_slots: int | None = None  # "Mamba Cache is allocated. max_mamba_cache_size:"
    # Launch flags that move memory (as the log's command line gave them).
    cpu_offload_gb: float = 0.0
    context_length: int | None = None
    max_running_requests: int | None = None
    chunked_prefill_size: int | None = None
    disable_cuda_graph: bool = False
    quantization: str | None = None
    note: str = ""
    attention_backend: str | None = None  # as SGLang resolved it (ROCm: aiter scales the pool)
    env: dict[str, str] = field(default_factory=dict)  # the launch's SGLANG_* variables
    # False: the log ends in an out-of-memory error after the KV cache line (the plan must say
    # it will not fit); None: it ends in an error that is not about memory (a software fault at
    # CUDA-graph capture), so neither verdict is held.
    started: bool | None = True
    kv_cache_dtype: str | None = None  # --kv-cache-dtype
    disaggregation_mode: str = "null"
    page_size: int | None = None
    enable_hierarchical_cache: bool = False
    hicache_ratio: float = 2.0
    hicache_host_gb: float | None = None  # "Allocating N GB host memory for hierarchical KV cache"
    # The log's own weights + KV over its free memory give the fraction (the command line is not
    # in the excerpt): its KV tokens are printed but kept out of the gate (not a prediction).
    fraction_read_back: bool = False
    # Speculative decoding: the draft's config (None: the checkpoint's MTP layers), its
    # "Load weight end ... mem usage=" (the draft as loaded) and the draft KV cell.
    algorithm: str | None = None
    draft_config: dict[str, Any] | None = None
    num_steps: int | None = None
    topk: int | None = None
    num_draft_tokens: int | None = None
    draft_weights_gib: float | None = None
    draft_kv_bytes_per_token: float | None = None
    dtype: str | None = None  # --dtype
    # --max-total-tokens: the logged KV tokens are the cap (held exactly, outside the gate).
    max_total_tokens: int | None = None
    # "max_total_num_tokens=..., max_running_requests=N": the request slots SGLang sized the
    # request table (req_to_token) with.
    logged_max_running_requests: int | None = None
    enable_piecewise_cuda_graph: bool = False  # the opt-in flag of 0.5.5-0.5.9
    # The automatic mem_fraction_static the log's server_args line prints (mem_fraction None).
    logged_fraction: float | None = None
    # MoE and head layout flags (--moe-a2a-backend, --ep-size, --enable-dp-lm-head,
    # --moe-dense-tp-size) as the launch gave them.
    moe_a2a_backend: str | None = None
    ep: int = 1
    enable_dp_lm_head: bool = False
    moe_dense_tp_size: int | None = None


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


def _qwen3_235b() -> dict[str, Any]:
    """Qwen/Qwen3-235B-A22B: the FP8 checkpoint's shape in bf16 (no quantization_config)."""
    config = _qwen3_235b_fp8()
    del config["quantization_config"]
    return config


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


def _qwen35_397b_fp8() -> dict[str, Any]:
    """Qwen/Qwen3.5-397B-A17B-FP8: the Qwen3.5-397B-A17B shape (`families.qwen35_397b_nvfp4`)
    with FP8 128x128 block weights. What stays unquantized follows the release's published
    weight-selection policy as a quantization paper restates it (routed and shared experts, the
    Gated DeltaNet's fused input and output projections and the attention's qkv / o are FP8; the
    DeltaNet's beta / alpha rows, routers, head, vision tower and MTP are not); the list's exact
    spelling is assumed."""
    config = copy.deepcopy(fam.qwen35_397b_nvfp4().config)
    config["quantization_config"] = {
        "quant_method": "fp8",
        "fmt": "e4m3",
        "activation_scheme": "dynamic",
        "weight_block_size": [128, 128],
        "modules_to_not_convert": [
            "lm_head", "model.visual", "in_proj_a", "in_proj_b", "mtp", "mlp.gate",
            "shared_expert_gate",
        ],
    }
    return config


_R1_CONFIG, _R1_FILES = _deepseek_r1_fp4()


def _mimo_7b_rl() -> dict[str, Any]:
    """XiaomiMiMo/MiMo-7B-RL (its config.json: a Qwen2-style 36-layer model with one MTP layer;
    the log's K size per token, 73,728 B, is 36 layers x 8 KV heads x 128 x 2 B)."""
    return {
        "architectures": ["MiMoForCausalLM"],
        "model_type": "mimo",
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 151680,
        "max_position_embeddings": 32768,
        "num_nextn_predict_layers": 1,
        "attention_bias": True,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


def _llama31_8b_eagle3() -> dict[str, Any]:
    """jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B: one Llama layer at the target width with a
    32,000-token draft vocabulary (the log warns of its derived context length, 2048)."""
    return {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 1,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "draft_vocab_size": 32000,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


def _qwen3_4b() -> dict[str, Any]:
    """Qwen/Qwen3-4B (its published config.json: 36 layers, 8 KV heads of 128, tied embedding;
    the log prints context_len=40960 and type=Qwen3ForCausalLM)."""
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": 2560,
        "intermediate_size": 9728,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
    }


def _qwen3_30b_a3b_2507_5_layers() -> dict[str, Any]:
    """fxmarty/Qwen_Qwen3-30B-A3B-Instruct-2507-5-layers: Qwen/Qwen3-30B-A3B-Instruct-2507 cut
    to 5 decoder layers (the rest as the public config; the log's K size per token, 5,120 B,
    is 5 layers x 4 KV heads x 128 x 2 B)."""
    return {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "moe_intermediate_size": 768,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "decoder_sparse_step": 1,
        "mlp_only_layers": [],
        "num_hidden_layers": 5,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 262144,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


def _qwen3_30b_a3b() -> dict[str, Any]:
    """Qwen/Qwen3-30B-A3B: 48 layers, 128 experts (8 active), no dense layers, bf16."""
    return {**_qwen3_30b_a3b_2507_5_layers(), "num_hidden_layers": 48,
            "max_position_embeddings": 40960}


def _glm5_fp8() -> dict[str, Any]:
    """zai-org/GLM-5-FP8: GLM-5's shape as transformers' GlmMoeDsaConfig gives it (its defaults
    are the zai-org/GLM-5 checkpoint's: 78 layers, hidden 6144, MLA 512 + 64, 256 experts of 2048,
    three dense layers, the DSA indexer 32 x 128, vocabulary 154,880, context 202,752; the log
    shows 142 shards, type GlmMoeDsaForCausalLM), one MTP layer, and FP8 128x128 block weights
    with no exclude list (an assumption: the checkpoint's quantization_config was not read)."""
    return {
        "architectures": ["GlmMoeDsaForCausalLM"],
        "model_type": "glm_moe_dsa",
        "vocab_size": 154880,
        "hidden_size": 6144,
        "intermediate_size": 12288,
        "moe_intermediate_size": 2048,
        "num_hidden_layers": 78,
        "num_attention_heads": 64,
        "num_key_value_heads": 64,
        "n_shared_experts": 1,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
        "first_k_dense_replace": 3,
        "kv_lora_rank": 512,
        "q_lora_rank": 2048,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 192,
        "v_head_dim": 256,
        "index_topk": 2048,
        "index_head_dim": 128,
        "index_n_heads": 32,
        "num_nextn_predict_layers": 1,
        "max_position_embeddings": 202752,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "quantization_config": {
            "quant_method": "fp8",
            "fmt": "e4m3",
            "activation_scheme": "dynamic",
            "weight_block_size": [128, 128],
        },
    }


def _mistral_small_31() -> dict[str, Any]:
    """mistralai/Mistral-Small-3.1-24B-Instruct-2503 (its published config.json: a 40-layer text
    stack of 32 query / 8 KV heads of 128 at width 5120, MLP 32768, vocabulary 131072, and a
    24-layer Pixtral vision tower of width 1024; SGLang loads it as LlavaForConditionalGeneration)."""
    return {
        "architectures": ["Mistral3ForConditionalGeneration"],
        "model_type": "mistral3",
        "torch_dtype": "bfloat16",
        "text_config": {
            "model_type": "mistral",
            "hidden_size": 5120,
            "intermediate_size": 32768,
            "num_hidden_layers": 40,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "vocab_size": 131072,
            "max_position_embeddings": 131072,
            "rope_theta": 1000000000.0,
            "tie_word_embeddings": False,
        },
        "vision_config": {
            "model_type": "pixtral",
            "hidden_size": 1024,
            "intermediate_size": 4096,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "patch_size": 14,
            "image_size": 1540,
        },
    }


def _qwen25_vl_7b() -> dict[str, Any]:
    """Qwen/Qwen2.5-VL-7B-Instruct (its published config.json: the Qwen2-7B text stack, 28
    layers of 28 query / 4 KV heads at width 3584, and a 32-block ViT of width 1280 written as
    `depth`; the log's K size per token, 28,672 B, is 28 layers x 4 KV heads x 128 x 2 B)."""
    return {
        "architectures": ["Qwen2_5_VLForConditionalGeneration"],
        "model_type": "qwen2_5_vl",
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
        "max_position_embeddings": 128000,
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "vision_config": {
            "depth": 32,
            "hidden_size": 1280,
            "intermediate_size": 3420,
            "num_heads": 16,
            "in_chans": 3,
            "out_hidden_size": 3584,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 112,
            "fullatt_block_indexes": [7, 15, 23, 31],
        },
    }


def _qwen3_next_80b_fp8() -> dict[str, Any]:
    """Qwen/Qwen3-Next-80B-A3B-Instruct-FP8: the Qwen3-Next-80B-A3B shape
    (`families.qwen3_next_80b`; the log's K size per token, 12,288 B, is its 12 full-attention
    layers x 2 KV heads x 256 x 2 B on one attention-TP rank) with FP8 128x128 block weights. The
    unquantized modules (head, Gated DeltaNet, MTP, router and shared-expert gates) are the list the
    FP8 checkpoints of the Qwen3.5 family publish, assumed here (the checkpoint's
    quantization_config was not read; quantizing the DeltaNet layers too moves the plan's KV
    tokens by 0.2%)."""
    config = copy.deepcopy(fam.qwen3_next_80b().config)
    config["quantization_config"] = {
        "quant_method": "fp8",
        "fmt": "e4m3",
        "activation_scheme": "dynamic",
        "weight_block_size": [128, 128],
        "modules_to_not_convert": [
            "lm_head", "linear_attn", "mtp", "mlp.gate", "shared_expert_gate"
        ],
    }
    return config


def _qwen3_14b() -> dict[str, Any]:
    """Qwen/Qwen3-14B (its published config.json: 40 layers of 40 query / 8 KV heads of 128 at
    width 5120, MLP 17408, untied embedding; the log's K size per token, 20,480 B, is 40 layers x
    2 KV heads (8 over tp 4) x 128 x 2 B)."""
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": 5120,
        "intermediate_size": 17408,
        "num_hidden_layers": 40,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


def _qwen35_9b() -> dict[str, Any]:
    """Qwen/Qwen3.5-9B (its published config: a Qwen3.5 VLM whose text stack is 32 layers, 24 Gated
    DeltaNet + 8 full attention (interval 4) of 16 query / 4 KV heads of 256 at width 4096, MLP
    12288, DeltaNet 16 key / 32 value heads of 128, vocabulary 248,320 untied, one MTP layer, the
    27-block Qwen3.5 ViT; the log's K size per token, 8,192 B, is 8 layers x 2 KV heads (4 over
    tp 2) x 256 x 2 B). The untied head is the 9B checkpoint's (tied, the weights would be 1 GiB
    under the logged 8.85 GiB)."""
    layers = 32
    return {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "model_type": "qwen3_5",
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": False,
        "text_config": {
            "model_type": "qwen3_5_text",
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "num_hidden_layers": layers,
            "num_attention_heads": 16,
            "num_key_value_heads": 4,
            "head_dim": 256,
            "attn_output_gate": True,
            "full_attention_interval": 4,
            "layer_types": fam._layer_types(layers, 4),
            "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 128,
            "linear_value_head_dim": 128,
            "linear_num_key_heads": 16,
            "linear_num_value_heads": 32,
            "mtp_num_hidden_layers": 1,
            "vocab_size": 248320,
            "max_position_embeddings": 262144,
            "rope_parameters": dict(fam.QWEN35_ROPE),
            "tie_word_embeddings": False,
            "dtype": "bfloat16",
        },
        "vision_config": dict(fam._QWEN35_VISION, out_hidden_size=4096),
    }


def _qwen3_8b() -> dict[str, Any]:
    """Qwen/Qwen3-8B (its published config.json: 36 layers of 32 query / 8 KV heads of 128 at
    width 4096, MLP 12288, untied embedding; the log's K size per token, 73,728 B, is 36 layers x
    8 KV heads x 128 x 2 B)."""
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


def _r1_distill_qwen_7b() -> dict[str, Any]:
    """deepseek-ai/DeepSeek-R1-Distill-Qwen-7B (its published config.json: the Qwen2.5-Math-7B
    shape, 28 layers of 28 query / 4 KV heads of 128 at width 3584, MLP 18944, vocabulary 152,064
    untied, 131,072 positions; the log's K size, 2.82 GB over 105,531 tokens, is 28 layers x 4 KV
    heads x 128 x 2 B a token)."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


def _r1_distill_qwen_1_5b() -> dict[str, Any]:
    """deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B (its published config.json: the Qwen2.5-Math-1.5B
    shape, 28 layers of 12 query / 2 KV heads of 128 at width 1536, MLP 8960, vocabulary 151,936,
    untied head, 131,072 positions; the log's K size, 15.74 GB over 1,178,703 tokens, is 28 layers
    x 2 KV heads x 128 x 2 B a token)."""
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 1536,
        "intermediate_size": 8960,
        "num_hidden_layers": 28,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


_SLURMV4 = "github.com/devopsrustem/slurmv4"  # an operator's notes: DeepSeek-R1 PD on 4 nodes of 8x H100


_AMD_ISSUES = "github.com/ajith-sirra-amd/Issues"  # an AMD engineer's MI355X start-up logs, 2026-02-26


# sglang issue 8337's two starts: Qwen3-235B-A22B (bf16) in pp 4 x tp 8 over 4 nodes of 8x H200,
# the first stage's lines; the log of July 2025 (0.4.9/0.4.10) planned with 0.5.1, the oldest
# release known; cut after the weights, so no verdict is held.
_ISSUE_8337_LAYOUT: dict[str, Any] = dict(
    config=_qwen3_235b(), gpu="H200", gpus=32, tp=8, pp=4, pp_rank=0, nnodes=4,
    mem_fraction=None, version="0.5.1", started=None,
)

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
    LogRow(
        name="Qwen3.5-397B-A17B-FP8 cpu-offload 400, 2x RTX 4090, tp 2",
        config=_qwen35_397b_fp8(),
        gpu="RTX 4090",
        gpus=2,
        tp=2,
        mem_fraction=0.85,
        version="0.5.9",
        source=(
            "github.com/kvcache-ai/ktransformers/issues/1870 (sglang 0.5.9, 2x RTX 4090, "
            "--cpu-offload-gb 400, 2026-02-27; plain sglang.launch_server, no --kt-* flag, its "
            "traceback's line numbers are the 0.5.9 wheel's)"
        ),
        # "Load weight end. ... avail mem=19.08 GB, mem usage=3.76 GB." (free before = the sum)
        free_before_gib=19.08 + 3.76,
        weights_gib=3.76,
        kv_tokens=580364,  # "KV Cache is allocated. #tokens: 580364, K size: 4.15 GB, V size: 4.15 GB"
        kv_bytes_per_token=4.15 * 2 * 2**30 / 580364,
        mamba_slots=82,  # "Mamba Cache is allocated. max_mamba_cache_size: 82"
        logged_max_running_requests=1,  # "max_total_num_tokens=580364, ..., max_running_requests=1"
        cpu_offload_gb=400,
        context_length=8192,
        max_running_requests=1,
        chunked_prefill_size=2048,
        disable_cuda_graph=True,
        quantization="fp8",
        note=(
            "what stays on the GPU with every decoder layer offloaded: SGLang logs 3.76 GiB, the "
            "plan 3.82: embedding + head shards 1.89, vision shard 0.42, the rotary cache (64 "
            "MiB) and kernels 0.16, 0.98 GiB of freed expert blocks the caching allocator "
            "cannot return (the rotary cache of layer 3 split layer 2's 1 GiB w2 block, the head "
            "the next one; wizard/cuda_segments.py) and 0.36 GiB of GPU page tables for the 185 "
            "GiB of pinned host memory (8 B per 4 KiB page; docs/inspect.md)"
        ),
    ),
    LogRow(
        name="DeepSeek-V3 fp8, 8x H200, tp 8, dp 8 DP attention",
        config=fam.deepseek_v3().config,
        gpu="H200",
        gpus=8,
        tp=8,
        dp=8,
        dp_attention=True,
        mem_fraction=None,
        version="0.4.6",
        source=(
            "github.com/sgl-project/sglang/issues/6017 (comment by zhangying029, 2025-05-09: "
            "DP0-DP7 ranks, 'KV Cache is allocated. #tokens: 161488, KV size: 10.57 GB')"
        ),
        kv_bytes_per_token=10.57 * 2**30 / 161488,
        note=(
            "KV layout only (MLA latent on every DP rank): the comment shows neither the launch "
            "flags nor the fraction; 31.87 + 105.59 GiB free before loading says a 141 GB card"
        ),
    ),
    LogRow(
        name="Qwen3-32B bf16, 4x B200, tp 4",
        config=fam.qwen3_32b().config,
        gpu="B200",
        gpus=4,
        tp=4,
        mem_fraction=None,
        version="0.5.10",
        source=(
            "github.com/sgl-project/sglang/pull/22537 (runai streamer Docker fix, 2026-04-10: "
            "main after 0.5.10; served model 'qwen-32b-gpu', type=Qwen3ForCausalLM)"
        ),
        # "Load weight end. ... avail mem=160.78 GB, mem usage=15.50 GB." (free before = the sum)
        free_before_gib=160.78 + 15.50,
        weights_gib=15.50,
        kv_bytes_per_token=67.33 * 2 * 2**30 / 2206208,  # "#tokens: 2206208, K size: 67.33 GB"
        note=(
            "weights, free memory and KV layout: the part of the server_args line with the fraction "
            "was not found, so the 2,206,208 KV tokens are not compared"
        ),
    ),
    LogRow(
        name="Qwen3-30B-A3B-2507 5 layers bf16, 1x MI355X, tp 1, aiter",
        config=_qwen3_30b_a3b_2507_5_layers(),
        gpu="MI355X",
        gpus=1,
        tp=1,
        mem_fraction=None,
        version="0.5.7",
        source="github.com/sgl-project/sglang/issues/18262 (rocm/sgl-dev:v0.5.7-rocm700-mi35x-"
        "20260121 at abf13ccc on MI355X, 2026-02-04)",
        free_before_gib=287.20,
        weights_gib=12.79,
        kv_tokens=21985288,
        kv_bytes_per_token=104.83 * 2 * 2**30 / 21985288,
        disable_cuda_graph=True,
        attention_backend="aiter",  # SGLang's default for MHA on ROCm (trait hip_attention_default)
        env={"SGLANG_USE_AITER": "1"},  # set by AMD's SGLang images
        started=False,
        note="python3 -m sglang.launch_server --model-path fxmarty/Qwen_Qwen3-30B-A3B-Instruct-"
        "2507-5-layers --tensor-parallel-size 1 --disable-cuda-graph; the log: 'Load weight "
        "begin. avail mem=287.20 GB', 'Load weight end. ... mem usage=12.79 GB', 'KV Cache is "
        "allocated. #tokens: 21985288, K size: 104.83 GB, V size: 104.83 GB', then an OOM when "
        "the aiter backend allocates its 65 GiB MHA workspace (the plan: will not fit). mem_fraction "
        "0.77435 = 0.911 x 0.85 (aiter, context 262144 > 8192); 12.79 GiB = 6.96 GiB of weights "
        "+ 5.63 GiB of experts held twice (aiter's shuffle; qwen3_moe caches its parameters)",
    ),
    LogRow(
        name="Qwen3-14B bf16, 4x RTX 4090, tp 4",
        config=_qwen3_14b(),
        gpu="RTX 4090",
        gpus=4,
        tp=4,
        mem_fraction=0.8,
        version="0.5.8",
        source=(
            "a public GitHub project log found by exact-string search (find_string id 55529353766: "
            "'项目A-v2-服务基线', a 4x RTX 4090 Qwen3-14B serving baseline, 2026-06-14; the index "
            "does not name its repository)"
        ),
        # "Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=16.00 GB,
        # mem usage=7.08 GB." (free before = the sum)
        free_before_gib=16.00 + 7.08,
        weights_gib=7.08,
        kv_tokens=298447,  # "KV Cache is allocated. #tokens: 298447, K size: 5.69 GB, V size: 5.69 GB"
        kv_bytes_per_token=5.69 * 2 * 2**30 / 298447,
        # "max_total_num_tokens=298447, ..., max_running_requests=3730, context_len=40960": 3730 =
        # 298,447 / 40,960 x 512 (the clamp of `_resolve_max_num_reqs` on the logged tokens); not
        # held as `logged_max_running_requests`, since the plan's own +1% tokens give 3,768
        note=(
            "python -m sglang.launch_server --model-path Qwen3-14B --tp-size 4 "
            "--mem-fraction-static 0.80 --enable-metrics --enable-cache-report, from a source "
            "clone (commit ebaf86d4) with torch 2.9.1+cu128 on 4x 'NVIDIA GeForce RTX 4090' of "
            "24,564 MiB, driver 550.90.07. The release is read from the log: 'Load weight end' "
            "prints dtype= but no elapsed= (0.5.8 and before; 0.5.9 added elapsed=) and torch "
            "2.9.1 is 0.5.6-0.5.8's, so 0.5.8 (the plan is the same for 0.5.6-0.5.8 here)"
        ),
    ),
    LogRow(
        name="DeepSeek-R1 fp8 PD decode, 2x 8x H100, tp 16 over 2 nodes",
        config=fam.deepseek_v3().config,
        gpu="H100",
        gpus=16,
        tp=16,
        mem_fraction=0.8,
        version="0.5.8",
        source=(
            f"{_SLURMV4}/blob/5ce9d41/3/12.sh (the decode server's node-rank-0 log, 2026-02-27 "
            "14:33; its server_args line of 14:33:04 is in the same repository at 9130f56/3/11.sh)"
        ),
        # "[TP0] Load weight begin. avail mem=77.49 GB" (TP1-TP7 77.48-77.49)
        free_before_gib=77.49,
        # "Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=36.87 GB,
        # mem usage=40.62 GB." (every rank 40.62)
        weights_gib=40.62,
        kv_tokens=326265,  # "KV Cache is allocated. #tokens: 326265, KV size: 21.35 GB"
        kv_bytes_per_token=21.35 * 2**30 / 326265,
        disaggregation_mode="decode",
        max_running_requests=128,
        # "max_total_num_tokens=326265, ..., max_running_requests=128, context_len=163840"
        logged_max_running_requests=128,
        # "Init torch distributed ends. mem usage=1.14 GB": a group spanning two nodes holds
        # much less than 15 one-node NVLink peers would (4.2 GiB); the plan counts the 7 local
        # peers at this log's rate (`NCCL_SPANNING_PER_LOCAL_PEER_GIB`), so the free memory is
        # measured here, not predicted (before: 74.45 GiB, KV tokens -7.5%).
        nnodes=2,
        note=(
            "python3 -m sglang.launch_server --model-path /app/models/Deepseek-R1/ "
            "--trust-remote-code --tp-size 16 --dist-init-addr ... --nnodes 2 --node-rank 0 "
            "--mem-fraction-static 0.8 --disaggregation-mode decode --max-running-requests 128 "
            "--disaggregation-ib-device ... (server_args: attention_backend='fa3', "
            "disable_radix_cache=True, page_size=1, transfer backend mooncake); the venv is "
            "/app/sglang/sglang-0.5.8.post1 and the cards 'NVIDIA_H100_80GB_HBM3' (its MoE config "
            "lookups). The server started: CUDA graphs for bs 1-128 (0.82 GB), 'Memory pool end. "
            "avail mem=15.33 GB', 'The server is fired up and ready to roll!'"
        ),
    ),
    LogRow(
        name="DeepSeek-R1 fp8 PD prefill, 2x 8x H100, tp 16 over 2 nodes",
        config=fam.deepseek_v3().config,
        gpu="H100",
        gpus=16,
        tp=16,
        mem_fraction=0.8,
        version="0.5.8",
        source=(
            f"{_SLURMV4}/blob/e65cafe/3/10.sh (2026-02-27 11:40, the first try of the same "
            "four-node set-up; the launch commands are at the top of the file)"
        ),
        free_before_gib=77.47,  # "Load weight begin. avail mem=77.47 GB" (every rank)
        weights_gib=40.62,  # "Load weight end. ... avail mem=36.85 GB, mem usage=40.62 GB."
        kv_tokens=326217,  # "KV Cache is allocated. #tokens: 326217, KV size: 21.35 GB"
        kv_bytes_per_token=21.35 * 2**30 / 326217,
        disaggregation_mode="prefill",
        disable_cuda_graph=True,
        # "max_total_num_tokens=326217, ..., max_running_requests=2048, context_len=163840"
        logged_max_running_requests=2048,
        # "Init torch distributed ends. mem usage=1.14 GB": a group spanning two nodes holds
        # much less than 15 one-node NVLink peers would (4.2 GiB); the plan counts the 7 local
        # peers at this log's rate (`NCCL_SPANNING_PER_LOCAL_PEER_GIB`), so the free memory is
        # measured here, not predicted (before: 74.45 GiB, KV tokens -7.5%).
        nnodes=2,
        note=(
            "... --tp-size 16 --nnodes 2 --mem-fraction-static 0.8 --disaggregation-mode prefill "
            "--disaggregation-ib-device mlx5_0 --disaggregation-bootstrap-port 8998 "
            "--disable-cuda-graph (the file's commands for the prefill nodes; the excerpt has no "
            "server_args line: the server is the prefill one by its max_running_requests=2048 "
            "and no graph capture, 'Memory pool end. avail mem=14.13 GB'). The same prefill "
            "set-up on 0.5.9 (nixl, 2026-03-02, get_server_info in 3/13.sh) reports weight "
            "40.62, kvcache 21.35, token_capacity 326,223"
        ),
    ),
    LogRow(
        name="Qwen3.5-9B bf16 (hybrid GDN), 2x RTX 4090, tp 2",
        config=_qwen35_9b(),
        gpu="RTX 4090",
        gpus=2,
        tp=2,
        mem_fraction=0.8,
        version="0.5.10",
        source=(
            "a public GitHub notes file found by exact-string search (find_string id 53944457073: "
            "'Exp-001: Qwen3.5-9B TP=4 基线启动', SGLang 0.0.0.dev11582+g4df60434d on 5x RTX "
            "4090, 2026-04-14; the index does not name its repository)"
        ),
        free_before_gib=22.93,  # "[TP0] Load weight begin. avail mem=22.93 GB" (TP1 the same)
        # "Load weight end. elapsed=5.54 s, type=Qwen3_5ForConditionalGeneration, avail mem=14.08
        # GB, mem usage=8.85 GB."
        weights_gib=8.85,
        kv_tokens=327310,  # "KV Cache is allocated. #tokens: 327310, K size: 2.50 GB, V size: 2.50 GB"
        kv_bytes_per_token=2.50 * 2 * 2**30 / 327310,
        # "Mamba Cache is allocated. max_mamba_cache_size: 186, conv_state size: 0.10GB,
        # ssm_state size: 4.38GB": not held as `mamba_slots` (the formula on the logged free
        # memory and weights gives 187; see the note)
        context_length=262144,
        note=(
            "CUDA_VISIBLE_DEVICES=0,2 python -m sglang.launch_server --model-path "
            "'Qwen/Qwen3.5-9B' --tp-size 2 --mem-fraction-static 0.8 --context-length 262144 "
            "--reasoning-parser qwen3 --log-level info --log-requests --enable-metrics (the two "
            "cards held 19 and 18 MiB before the launch; 'Setup Custom allreduce failed ... peer "
            "access is not supported'). A main build of 2026-04-14, after 0.5.10 (its 'Load "
            "weight end' has elapsed= and no dtype=, 0.5.10's format). The server started: "
            "'max_total_num_tokens=327310, chunked_prefill_size=2048, ..., max_running_requests="
            "62, context_len=262144, available_gpu_mem=3.79 GB'. Recurrent-state slots: "
            "SGLang's handle_max_mamba_cache (model_runner_kv_cache_mixin.py:179-238 in 0.5.10) "
            "with the logged 22.93 x 0.8 - 8.85 = 9.494 GiB and the plan's 24.56 MiB per request "
            "(24 DeltaNet layers x (4,096 x 3 x 2 B conv + 16 x 128 x 128 x 4 B state)) gives 187 "
            "slots where the log has 186; the logged tokens and slots together say SGLang's rest "
            "was 9.456 GiB, 38 MiB less than the logged numbers give (two-decimal rounding "
            "explains 9 MiB). Nothing found in 0.5.10 between the logged and the used "
            "measurements (pre-load: model_runner.py:999 vs the 'Load weight begin' line; "
            "post-load: the 'Load weight end' line vs model_runner_kv_cache_mixin.py:145), so "
            "not modelled; the plan's own pool has 187"
        ),
    ),
    LogRow(
        name="Qwen3-8B bf16, 1x B200, tp 1, defaults",
        config=_qwen3_8b(),
        gpu="B200",
        gpus=1,
        tp=1,
        mem_fraction=None,
        version="0.5.10",
        source=(
            "github.com/sgl-project/sglang/blob/5a87f6bd/.claude/skills/clean-startup-log/SKILL.md "
            "('Reference: Clean Startup Log (TP=1, Qwen3-8B)', main of 2026-04-27)"
        ),
        free_before_gib=177.57,  # "Load weight begin. avail mem=177.57 GB"
        # "Load weight end. elapsed=1.97 s, type=Qwen3ForCausalLM, avail mem=162.30 GB, mem
        # usage=15.28 GB."
        weights_gib=15.28,
        kv_tokens=992896,  # "KV Cache is allocated. #tokens: 992896, K size: 68.18 GB, V size: 68.18 GB"
        kv_bytes_per_token=68.18 * 2 * 2**30 / 992896,
        attention_backend="trtllm_mha",  # "Attention backend not specified. Use trtllm_mha ..."
        page_size=64,  # "TensorRT-LLM MHA only supports page_size of 16, 32 or 64, changing ... to 64"
        note=(
            "uv run sglang serve --model-path Qwen/Qwen3-8B (no other flag; the skill's reference "
            "log, the server_args line elided). The card is not printed: trtllm_mha is SGLang's "
            "default on SM100 and 177.57 GB free before loading is a B200 (183,359 MiB). The "
            "fraction is the heuristic's: the log's own numbers give 1 - (162.30 - 136.36) / "
            "177.57 = 0.8539, the plan's 0.854 (0.5.10-0.5.14 alike; 0.857 on 0.5.9) with the "
            "piecewise CUDA graph reserve of a default launch ('Capture piecewise CUDA graph end "
            "... mem usage=2.32 GB' follows). A main build after 0.5.10 ('Load weight end' without "
            "dtype=)"
        ),
    ),
    LogRow(
        name="Qwen3-4B bf16 PD prefill + HiCache, 1x 48 GB Ada, tp 1",
        config=_qwen3_4b(),
        gpu="L40S",
        gpus=1,
        tp=1,
        mem_fraction=0.5,
        version="0.5.9",
        source=(
            "github.com/sgl-project/sglang/issues/21395 (PD disaggregation with the Mooncake "
            "store as HiCache L3, 2026-03-25)"
        ),
        # "Load weight end. elapsed=2.01 s, type=Qwen3ForCausalLM, dtype=torch.bfloat16,
        # avail mem=36.61 GB, mem usage=7.56 GB." (free before = the sum)
        free_before_gib=36.61 + 7.56,
        weights_gib=7.56,
        kv_tokens=105600,  # "KV Cache is allocated. #tokens: 105600, K size: 7.26 GB, V size: 7.26 GB"
        kv_bytes_per_token=7.26 * 2 * 2**30 / 105600,
        disaggregation_mode="prefill",
        page_size=64,
        enable_hierarchical_cache=True,
        hicache_ratio=1.0,
        hicache_host_gb=15.58,  # "Allocating 15.58 GB host memory for hierarchical KV cache."
        # "max_total_num_tokens=105600, ..., max_running_requests=2048, context_len=40960"
        logged_max_running_requests=2048,
        fraction_read_back=True,
        note=(
            "the excerpt starts at the weights: no command line. Read from the log: SGLang 0.5.9 "
            "(the only release whose 'Load weight end' prints both elapsed= and dtype=), a 48 GB "
            "Ada card (44.17 GiB free before loading; L40S, L40 and L20 are the same card for the "
            "plan), fraction 0.5 ((7.56 + 14.52) / 44.17 = 0.4999), host pool = the device pool "
            "plus one 64-token page (--hicache-ratio 1, or a --hicache-size just above the pool: "
            "105,664 x 147,456 B = 15.58 GB; a ratio of 2 would log 31.2 GB); the title says PD "
            "and only a prefill server took HiCache then. Holds the weights, free memory and the "
            "host pool; the KV tokens follow from the read-back fraction and stay out of the gate"
        ),
    ),
    LogRow(
        name="Llama-3.1-8B fp16 + EAGLE-3 draft, 1x H100, docs CI",
        config=fam.llama31_8b().config,
        gpu="H100",
        gpus=1,
        tp=1,
        mem_fraction=0.6,
        version="0.4.7",
        source=(
            "SGLang's executed docs, backend/speculative_decoding.html as built 2025-06-17 "
            "(github.com/wxsms/sgl-project.github.io, a mirror of sgl-project.github.io): cell "
            "'EAGLE-3 Decoding'"
        ),
        # "Load weight begin. avail mem=78.50 GB"; "Load weight end. type=LlamaForCausalLM,
        # dtype=torch.float16, avail mem=63.48 GB, mem usage=15.02 GB."
        free_before_gib=78.50,
        weights_gib=15.02,
        kv_tokens=20480,  # "KV Cache is allocated. #tokens: 20480, K size: 1.25 GB, V size: 1.25 GB"
        kv_bytes_per_token=1.25 * 2 * 2**30 / 20480,
        algorithm="EAGLE3",
        draft_config=_llama31_8b_eagle3(),
        num_steps=5,
        topk=8,
        num_draft_tokens=32,
        # "Load weight end. type=LlamaForCausalLMEagle3, dtype=torch.float16, ... mem usage=1.82 GB."
        draft_weights_gib=1.82,
        draft_kv_bytes_per_token=0.04 * 2 * 2**30 / 20480,  # "#tokens: 20480, K size: 0.04 GB"
        dtype="float16",
        max_total_tokens=20480,
        max_running_requests=200,  # the harness's, in the logged server_args
        logged_max_running_requests=200,
        disable_cuda_graph=True,
        note=(
            "the cell's command (--speculative-algorithm EAGLE3 --speculative-num-steps 5 "
            "--speculative-eagle-topk 8 --speculative-num-draft-tokens 32 --mem-fraction 0.6 "
            "--cuda-graph-max-bs 2 --dtype float16) plus what the docs harness adds, as the "
            "logged server_args show: max_total_tokens=20480, max_running_requests=200, "
            "disable_cuda_graph=True. The card is not printed: 78.50 GB free before loading is "
            "an 80 GB H100 (the CI's). The draft as loaded = its layer + its own 128,256-token "
            "embedding + its 32,000-token head"
        ),
    ),
    LogRow(
        name="MiMo-7B-RL bf16 + its MTP layer, 1x H100, docs CI",
        config=_mimo_7b_rl(),
        gpu="H100",
        gpus=1,
        tp=1,
        mem_fraction=0.5,
        version="0.4.7",
        source=(
            "SGLang's executed docs, backend/speculative_decoding.html as built 2025-06-17 "
            "(github.com/wxsms/sgl-project.github.io): cell 'Multi Token Prediction'"
        ),
        # "Load weight begin. avail mem=78.50 GB"; "Load weight end. type=MiMoForCausalLM,
        # dtype=torch.bfloat16, avail mem=64.28 GB, mem usage=14.21 GB."
        free_before_gib=78.50,
        weights_gib=14.21,
        kv_tokens=20480,  # "KV Cache is allocated. #tokens: 20480, K size: 1.41 GB, V size: 1.41 GB"
        kv_bytes_per_token=1.41 * 2 * 2**30 / 20480,
        algorithm="EAGLE",  # with no draft path: the checkpoint's MTP layer (MiMoMTP)
        num_steps=1,
        topk=1,
        num_draft_tokens=2,
        # "Load weight end. type=MiMoMTP, dtype=torch.bfloat16, avail mem=57.83 GB, mem usage=2.71 GB."
        draft_weights_gib=2.71,
        max_total_tokens=20480,
        max_running_requests=200,  # the harness's, in the logged server_args
        logged_max_running_requests=200,
        disable_cuda_graph=True,
        note=(
            "python3 -m sglang.launch_server --model-path XiaomiMiMo/MiMo-7B-RL --trust-remote-code "
            "--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 2 --mem-fraction 0.5, with the harness's "
            "max_total_tokens=20480 and disable_cuda_graph=True. The draft as loaded: the MTP "
            "layer + its own bf16 embedding and head, 151,680 x 4,096 x 2 B each (2.31 GiB of "
            "the 2.71), swapped for the target's after loading"
        ),
    ),
    LogRow(
        name="Kimi-K2.5 INT4, 8x MI355X, tp 8",
        config=fam.kimi_k25_int4().config,
        gpu="MI355X",
        gpus=8,
        tp=8,
        mem_fraction=None,  # the log's server_args: mem_fraction_static=0.8260405859375
        logged_fraction=0.8260405859375,
        version="0.5.9",
        source=(
            f"{_AMD_ISSUES}/blob/561754c/Kimi-K2.5-MI355X-SGLANG-ERROR.md (rocm/sgl-dev:"
            "v0.5.8.post1-rocm720-mi35x-20260218, 2026-02-26)"
        ),
        # "[TP0] Load weight begin. avail mem=283.56 GB" (TP1-TP7 283.53-283.96)
        free_before_gib=283.56,
        # "[TP0] Load weight end. elapsed=618.04 s, type=KimiK25ForConditionalGeneration,
        # dtype=torch.bfloat16, avail mem=209.98 GB, mem usage=73.58 GB." (every rank 73.58)
        weights_gib=73.58,
        kv_tokens=2454421,  # "KV Cache is allocated. #tokens: 2454421, KV size: 160.63 GB"
        kv_bytes_per_token=160.63 * 2**30 / 2454421,
        attention_backend="triton",  # as the server_args line resolved it
        started=None,
        note=(
            "sglang serve --model-path moonshotai/Kimi-K2.5 --tp 8 --trust-remote-code "
            "--tool-call-parser kimi_k2 --reasoning-parser kimi_k2. The image's server_args "
            "fields are 0.5.9's (all 328 but 0.5.9's later mamba_backend), so 0.5.9. The start "
            "ends at CUDA-graph capture in a TypeError ('cannot unpack non-iterable "
            "ForwardMetadata object'), not in memory: no verdict held. Two more runs in the same "
            "file (--attention-backend triton, and the NSA backend) log the same memory lines "
            "(2,454,391 tokens). The checkpoint's ignore list is the families.py assumption"
        ),
    ),
    LogRow(
        name="GLM-5-FP8 fp8 KV, 8x MI355X, tp 8",
        config=_glm5_fp8(),
        gpu="MI355X",
        gpus=8,
        tp=8,
        mem_fraction=None,  # the log's server_args: mem_fraction_static=0.908
        logged_fraction=0.908,
        version="0.5.9",
        source=(
            f"{_AMD_ISSUES}/blob/c40b780/GLM-5-FP8-MI355X-SGLANG-ERROR.md (rocm/sgl-dev:"
            "v0.5.8.post1-rocm720-mi35x-20260218 with transformers 5.3.0.dev0, 2026-02-26)"
        ),
        # "[TP0] Load weight begin. avail mem=283.50 GB" (TP1-TP7 283.48-283.90)
        free_before_gib=283.50,
        # "[TP0] Load weight end. elapsed=778.18 s, type=GlmMoeDsaForCausalLM,
        # dtype=torch.bfloat16, avail mem=193.92 GB, mem usage=89.58 GB." (every rank 89.58)
        weights_gib=89.58,
        kv_tokens=3262823,  # "KV Cache is allocated. #tokens: 3262823, KV size: 186.77 GB"
        kv_bytes_per_token=186.77 * 2**30 / 3262823,
        kv_cache_dtype="fp8_e4m3",
        attention_backend="triton",
        started=None,
        note=(
            "python3 -m sglang.launch_server --attention-backend triton --model-path "
            "zai-org/GLM-5-FP8 --tp-size 8 --kv-cache-dtype fp8_e4m3 (NSA backends set to "
            "flashmla_auto / flashmla_kv, page size 1 on ROCm). The pool is sized with 576 B "
            "of fp8 latent + 132 B of indexer key per layer (55,224 B/token: 283.50 x 0.908 - "
            "89.58 = 167.84 GiB = 3,263,4xx tokens) but allocated at the flashmla_kv layout's "
            "656 B per layer (61,464 B/token: the logged 186.77 GB, 'Memory pool end. avail "
            "mem=3.90 GB'). Same image and end as the Kimi-K2.5 row (a TypeError at graph "
            "capture). A second run on rocm/sgl-dev:v0.5.9-rocm720-mi35x-20260225 in the same "
            "file logs 279.50 GiB free (4 GiB held by something else), 89.20 GiB of weights, "
            "3,199,575 tokens"
        ),
    ),
    LogRow(
        name="Qwen2.5-VL-7B bf16 + piecewise CUDA graph, 1x B200, tp 1",
        config=_qwen25_vl_7b(),
        gpu="B200",
        gpus=1,
        tp=1,
        mem_fraction=None,  # the log's server_args: mem_fraction_static=0.7629746875
        logged_fraction=0.7629746875,
        version="0.5.6",
        source=(
            "github.com/sgl-project/sglang/pull/11830 (comment by yuan-luo, 2025-11-30: "
            "'python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-VL-7B-Instruct "
            "--enable-piecewise-cuda-graph --piecewise-cuda-graph-compiler eager "
            "--disable-radix-cache --device cuda --host 127.0.0.1 --port 30000')"
        ),
        # "KV Cache is allocated. #tokens: 2243474, K size: 59.91 GB, V size: 59.91 GB"
        kv_tokens=2243474,
        kv_bytes_per_token=59.91 * 2 * 2**30 / 2243474,
        enable_piecewise_cuda_graph=True,
        note=(
            "main of the PR branch on the day (its server_args fields are 0.5.6's: the first "
            "release with fastapi_root_path); the card is a B200 (the log's 'CUTLASS backend is "
            "disabled when piecewise cuda graph is enabled due to TMA descriptor initialization "
            "issues on B200', printed on SM100 only; 'Memory pool end. avail mem=40.03 GB' after "
            "119.8 GB of KV). No 'Load weight' lines in the excerpt. SGLang's fraction, "
            "0.7629746875 = round((183,359 - 27,264) / 183,359, 3) x 0.95 x 0.94375: 0.5.6 "
            "reserves piecewise_cuda_graph_max_tokens // 4 = 1,024 MiB for the prefill graph "
            "after the 10 GiB floor (default 4,096 tokens, server_args.py:857; the release "
            "trait prefill_graph_reserve) and its VLM factor reads the ViT's num_hidden_layers "
            "(absent: 24, not the 32 of `depth`; the plan reads it alike). The plan reproduces "
            "it; KV tokens -0.6% (free memory and weights are estimates: no 'Load weight' lines)"
        ),
    ),
    LogRow(
        name="Qwen3-Next-80B-A3B-FP8, 4x B200, tp 4, dp 4 DP attention, DeepEP",
        config=_qwen3_next_80b_fp8(),
        gpu="B200",
        gpus=4,
        tp=4,
        dp=4,
        dp_attention=True,
        mem_fraction=None,
        version="0.5.6.post2",
        source=(
            "github.com/sgl-project/sglang/pull/10622 (comment by vincentzed, 2025-12-27: "
            "'On main: ... model-path: Qwen/Qwen3-Next-80B-A3B-Instruct-FP8, tp-size: 4, "
            "deepep-mode: auto, dp-size: 4, enable-dp-attention: true, moe-a2a-backend: deepep'; "
            "check_env: 8x NVIDIA B200, sglang 0.5.6.post2)"
        ),
        # "[2025-12-26 23:02:03 DP0 TP0 EP0] KV Cache is allocated. #tokens: 2786325, K size:
        # 31.89 GB, V size: 31.89 GB" (DP1, DP3 the same); "Memory pool end. avail mem=34.15 GB"
        kv_tokens=2786325,
        kv_bytes_per_token=31.89 * 2 * 2**30 / 2786325,
        moe_a2a_backend="deepep",
        ep=4,  # "DeepEP MoE is enabled. The expert parallel size is adjusted to ... tp size"
        attention_backend="triton",  # the logged server_args: attention_backend='triton'
        env={"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "1024"},
        note=(
            "KV tokens and layout: the excerpt found holds the command, the check_env block, the "
            "tail of the server_args line (dp_size=4, attention_backend='triton') and the pool "
            "lines; its 'Load weight' and 'Mamba Cache' lines and the fraction were not found, so "
            "the plan's own free memory (card), weights (attention replicated on the 4 DP ranks, "
            "experts split 4 ways) and heuristic fraction (0.805) are what is compared. Beside the "
            "tokens the plan leaves 34.19 GiB after weights (20.07), KV (63.78) and its 796-slot "
            "Mamba pool (57.28): the log's 'Memory pool end. avail mem=34.15 GB' (DP0; 34.12-34.27 "
            "on the other ranks). The server "
            "started (CUDA graph capture for bs 1-159 follows); the thread is about gibberish "
            "output on Blackwell, not memory"
        ),
    ),
    LogRow(
        name="DeepSeek-R1-Distill-Qwen-7B bf16, 1x RTX 3090, tp 1",
        config=_r1_distill_qwen_7b(),
        gpu="RTX 3090",
        gpus=1,
        tp=1,
        mem_fraction=0.88,  # the logged server_args: mem_fraction_static=0.88 (no flag given)
        version="0.4.2",
        source=(
            "github.com/jerryzsj/my-deepseek-r1 README.md (found by exact-string search, "
            "find_string id 8893364747: 'Local deployment of Deepseek-R1 with RTX3090/RTX4090', "
            "its log of 2025-02-04, 'Graphics: RTX 3090')"
        ),
        # "[TP0] Load weight begin. avail mem=22.76 GB"; "Load weight end. type=Qwen2ForCausalLM,
        # dtype=torch.bfloat16, avail mem=8.37 GB" (0.4.2 prints no mem usage: the difference)
        free_before_gib=22.76,
        weights_gib=22.76 - 8.37,
        # "KV Cache is allocated. K size: 2.82 GB, V size: 2.82 GB."; "max_total_num_tokens=105531"
        kv_tokens=105531,
        kv_bytes_per_token=2.82 * 2 * 2**30 / 105531,
        chunked_prefill_size=2048,  # the logged server_args (SGLang's value for a card under 25 GB)
        note=(
            "docker compose of lmsysorg/sglang (SGLang of early February 2025: its server_args "
            "fields end at enable_hierarchical_cache, 0.4.2's) under WSL2 on Windows; the compose "
            "file's command is not in the README, the logged server_args give tp_size=1, "
            "mem_fraction_static=0.88 (0.4.2's default for a 24 GB card), cuda_graph_max_bs=8, "
            "context_len=131072. The weights are the difference of the two avail mem lines"
        ),
    ),
    LogRow(
        name="Llama-3-8B-Instruct bf16, 1x MI300X, tp 1, bench_latency",
        config=dict(fam.llama31_8b().config, max_position_embeddings=8192, rope_scaling=None),
        gpu="MI300X",
        gpus=1,
        tp=1,
        mem_fraction=0.88,  # the ServerArgs default of the day for tp 1 (no flag given)
        version="0.3.3",
        source=(
            "an MI300X test-notes README (Hot Aisle host, 2024-10-10) found by exact-string "
            "search, find_string id 43425326930; its repository is not named by the index "
            "(AUGMXNT/MI300-testing holds a README.md of that author, an earlier shorter version)"
        ),
        # "[22:30:32 TP0] Load weight begin. avail mem=191.33 GB"; "Load weight end.
        # type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=176.33 GB" (no mem usage yet)
        free_before_gib=191.33,
        weights_gib=191.33 - 176.33,
        kv_tokens=1256440,  # "max_total_num_tokens=1256440" (this release logs no KV size line)
        attention_backend="triton",  # "FlashInfer is not available on Non-NV platforms"
        note=(
            "python -m sglang.bench_latency --model-path meta-llama/Meta-Llama-3-8B-Instruct "
            "--batch 32 --input-len 256 --output-len 32 on one MI300X (ROCm 6.2 torch nightly, "
            "SGLang from source after PRs 1420/1453, about 0.3.3; no aiter then). The fraction is "
            "0.88, the default of that release for tp 1; the log's own numbers give (15.00 + "
            "1,256,440 x 131,072 B) / 191.33 = 0.880. 'Memory pool end. avail mem=22.83 GB' "
            "follows: 176.33 - 153.37 GiB of KV = 22.96"
        ),
    ),
    LogRow(
        name="DeepSeek-R1-Distill-Qwen-1.5B bf16, 1x A100-PCIE-40GB, tp 1",
        config=_r1_distill_qwen_1_5b(),
        gpu="A100-40GB",
        gpus=1,
        tp=1,
        mem_fraction=0.9,
        version="0.5.9",
        source=(
            "an SGLang-on-k3s verification note in Chinese ('SGLang 引擎 K8s 验证文档', "
            "2026-02-28, pip install sglang==0.5.9, GPU 0: NVIDIA A100-PCIE-40GB) found by "
            "exact-string search, find_string id 53948216720; its repository is not named by "
            "the index"
        ),
        # "[08:29:50] Load weight begin. avail mem=38.87 GB"; "[08:29:52] Load weight end.
        # elapsed=2.73s, avail mem=35.36 GB" (the note abridges the line: the difference)
        free_before_gib=38.87,
        weights_gib=38.87 - 35.36,
        kv_tokens=1178703,  # "KV Cache allocated. #tokens: 1178703, K size: 15.74 GB, V size: 15.74 GB"
        kv_bytes_per_token=15.74 * 2 * 2**30 / 1178703,
        context_length=5120,
        max_running_requests=32,
        chunked_prefill_size=4096,
        note=(
            "the generated command in the note: python3 -m sglang.launch_server --context-length "
            "5120 --trust-remote-code --dtype auto --kv-cache-dtype auto --mem-fraction-static 0.9 "
            "--max-running-requests 32 --chunked-prefill-size 4096 --random-seed 0 "
            "--disable-chunked-prefix-cache --model-path DeepSeek-R1-Distill-Qwen-1.5B --tp-size 1 "
            "--ep-size 1, CUDA_VISIBLE_DEVICES set to the A100 alone (an L20 beside it runs other "
            "work). The log lines are quoted abridged (no type= in 'Load weight end'); the weights "
            "are the difference of the two avail mem values. The server started (CUDA graphs bs "
            "1-32, 'fired up and ready to roll')"
        ),
    ),
    LogRow(
        name="Mistral-Small-3.1-24B fp16, pp 4, KV cell only",
        config=_mistral_small_31(),
        gpu="H100",  # not named in the log (77.4 GB free before loading: an 80 GB card)
        gpus=4,
        tp=1,
        pp=4,
        mem_fraction=0.8,
        version="0.5.6",
        source=(
            "github.com/sgl-project/sglang/pull/14254 (2025-12-01, a pipeline-parallel start-up "
            "in its description)"
        ),
        # "KV Cache is allocated. #tokens: 351850, K size: 26.84 GB, V size: 26.84 GB" on every PP
        # rank: 163,840 B a token = all 40 layers x 8 KV heads x 128 x 2 B x 2, not one stage's
        # 10 layers (LlavaForConditionalGeneration has no start_layer: SGLang's model runner sizes
        # every stage for all layers, release data archs.pp_kv_all_layers)
        kv_bytes_per_token=26.84 * 2 * 2**30 / 351850,
        dtype="float16",
        started=None,  # the card is not named: no verdict held, only the cell
        note=(
            "--pp-size 4 --mem-fraction-static 0.8 --disable-radix-cache; only the KV cell is "
            "used (it does not depend on the card); the log's PP0 weights (8.22 GB) are not held"
        ),
    ),
    LogRow(
        name="Qwen3-30B-A3B bf16, PD decode, tp 4 dp 4 DP attention, DeepEP, dp-lm-head",
        config=_qwen3_30b_a3b(),
        gpu="H200",  # not named: 138.3 GiB free before loading and fa3 by default (Hopper)
        gpus=4,
        tp=4,
        dp=4,
        dp_attention=True,
        mem_fraction=0.8,
        version="0.5.11",
        source=(
            "github.com/sgl-project/sglang/pull/17392 (BF16 EP-MoE for DeepGEMM, its decode "
            "server's start-up, 2026-05-07; a main build after 0.5.10: 'Load weight end. "
            "elapsed=')"
        ),
        # "[DP0 TP0 EP0] Load weight end. elapsed=5.19 s, type=Qwen3MoeForCausalLM, avail
        # mem=121.95 GB, mem usage=16.39 GB." (free before = the sum; every rank 16.39)
        free_before_gib=121.95 + 16.39,
        weights_gib=16.39,
        # "KV Cache is allocated. #tokens: 1029388, K size: 47.12 GB, V size: 47.12 GB"
        kv_tokens=1029388,
        kv_bytes_per_token=47.12 * 2 * 2**30 / 1029388,
        max_running_requests=128,
        disaggregation_mode="decode",
        moe_a2a_backend="deepep",
        ep=4,
        enable_dp_lm_head=True,
        moe_dense_tp_size=1,
        env={"SGLANG_DEEPEP_BF16_DISPATCH": "1"},
        note=(
            "python3 -m sglang.launch_server --model $MODEL --tp-size 4 --ep-size 4 --dp-size 4 "
            "--moe-runner-backend deep_gemm --enable-dp-lm-head --moe-dense-tp-size 1 "
            "--enable-dp-attention --moe-a2a-backend deepep --deepep-mode low_latency "
            "--mem-fraction-static 0.8 --disable-radix-cache --max-running-requests 128 "
            "--disaggregation-mode decode (the model folder not named: 48 layers x 4 KV heads x "
            "128 x 2 B = the logged 49,152 B of K a token, Qwen3MoeForCausalLM: Qwen3-30B-A3B)"
        ),
    ),
    LogRow(
        name="Qwen3-235B-A22B bf16, pp 4 x tp 8 over 4 nodes of 8x H200, stage 0",
        **_ISSUE_8337_LAYOUT,
        source=(
            "github.com/sgl-project/sglang/issues/8337 (Qwen3-235B-A22B in PP4 TP8 on 4 x H200, "
            "2025-07-25; the bf16 start of the two it quotes)"
        ),
        # "[ TP0 PP0 model_runner.py:701] Load weight end. type=Qwen3MoeForCausalLM,
        # dtype=torch.bfloat16, avail mem=124.19 GB, mem usage=13.73 GB." (free before = the sum)
        free_before_gib=124.19 + 13.73,
        weights_gib=13.73,
        note=(
            "the first pipeline stage of 4 (23 of 94 layers, with the embedding) on one GPU of 8"
        ),
    ),
    LogRow(
        name="Qwen3-235B-A22B bf16 --quantization fp8, pp 4 x tp 8, 4 nodes of 8x H200, stage 0",
        **_ISSUE_8337_LAYOUT,
        quantization="fp8",
        source=(
            "github.com/sgl-project/sglang/issues/8337 (the same launch with online "
            "--quantization fp8, the issue's subject: 'the model weight of FP8 and BF16 are both "
            "stored')"
        ),
        # "[ TP0 PP0 model_runner.py:701] Load weight end. type=Qwen3MoeForCausalLM,
        # dtype=torch.bfloat16, avail mem=117.93 GB, mem usage=19.99 GB."
        free_before_gib=117.93 + 19.99,
        weights_gib=19.99,
        note=(
            "the FP8 copies of the layers plus the bf16 tensors Qwen3MoeForCausalLM's cached "
            "parameter dict keeps (release trait online_fp8_keeps_unquantized; the cache is gone "
            "from qwen3_moe.py in 0.5.12)"
        ),
    ),
)
