"""Every executed case of the reference (§5 S01-S25, §5.1) and the incidents' tries, on both versions.

Each case gives the typed SGLang arguments (canonical names) and what real SGLang did: the verdict,
the first error's rule and `file:line`, or the effective values it resolved to.
"""

from __future__ import annotations

from typing import Any

import pytest

from wizard.api import check_typed
from wizard.rules.engine import first_sglang_error, sglang_verdict

V11, V23 = "0.5.11", "0.5.23"
SA = "sglang/srt/server_args.py"
SH = "sglang/srt/arg_groups/speculative_hook.py"
MH = "sglang/srt/arg_groups/mamba_hook.py"

EAGLE_LLAMA = {"speculative_algorithm": "EAGLE", "speculative_draft_model_path": "@llama"}

# (case id, model, typed args, env, gpu, {version: expectation})
# expectation: ("error", rule id, where or None) | ("ok", {effective subset})
CASES: list[tuple[str, str, dict[str, Any], dict[str, str], str, dict[str, tuple[Any, ...]]]] = [
    (
        "S01",
        "llama",
        EAGLE_LLAMA,
        {},
        "H100",
        {
            V11: (
                "ok",
                {
                    "speculative_num_steps": 5,
                    "speculative_eagle_topk": 4,
                    "speculative_num_draft_tokens": 8,
                    "max_running_requests": 48,
                    "disable_overlap_schedule": False,
                    "page_size": 1,
                    "attention_backend": "fa3",
                },
            ),
            V23: (
                "ok",
                {
                    "speculative_num_steps": 5,
                    "speculative_eagle_topk": 4,
                    "speculative_num_draft_tokens": 8,
                    "disable_overlap_schedule": False,
                    "attention_backend": "fa3",
                },
            ),
        },
    ),
    (
        "S02",
        "llama",
        {
            "speculative_algorithm": "EAGLE3",
            "speculative_draft_model_path": "@llama",
            "speculative_num_draft_tokens": 16,
            "speculative_eagle_topk": 1,
        },
        {},
        "H100",
        {
            V11: ("error", "R-SPEC-STEPS-TRIO", f"{SA}:3521"),
            V23: ("error", "R-SPEC-STEPS-TRIO", f"{SH}:1162"),
        },
    ),
    (
        "S03",
        "llama",
        {
            "speculative_algorithm": "EAGLE3",
            "speculative_draft_model_path": "@llama",
            "speculative_num_draft_tokens": 16,
            "speculative_eagle_topk": 1,
            "speculative_num_steps": 1,
        },
        {},
        "H100",
        {
            V11: (
                "ok",
                {
                    "speculative_algorithm": "EAGLE3",
                    "speculative_num_steps": 1,
                    "speculative_eagle_topk": 1,
                    "speculative_num_draft_tokens": 2,
                    "disable_overlap_schedule": False,
                    "attention_backend": "fa3",
                },
            ),
            V23: (
                "ok",
                {
                    "speculative_num_steps": 1,
                    "speculative_eagle_topk": 1,
                    "speculative_num_draft_tokens": 2,
                },
            ),
        },
    ),
    (
        "S04",
        "llama",
        {**EAGLE_LLAMA, "speculative_num_steps": 3},
        {},
        "H100",
        {
            V11: ("error", "R-TOPK-NONE-TYPEERROR", f"{SA}:3549"),
            V23: ("error", "R-TOPK-NONE-TYPEERROR", f"{SH}:1274"),
        },
    ),
    (
        "S05",
        "llama",
        {
            **EAGLE_LLAMA,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 4,
            "speculative_num_draft_tokens": 8,
        },
        {},
        "H100",
        {
            V11: (
                "ok",
                {
                    "disable_overlap_schedule": True,
                    "attention_backend": "flashinfer",
                    "page_size": 1,
                },
            ),
            V23: (
                "ok",
                {
                    "disable_overlap_schedule": False,
                    "attention_backend": "flashinfer",
                    "page_size": 1,
                },
            ),
        },
    ),
    (
        "S06",
        "llama",
        {
            **EAGLE_LLAMA,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 4,
            "speculative_num_draft_tokens": 8,
            "attention_backend": "triton",
            "page_size": 16,
        },
        {},
        "H100",
        {
            V11: ("error", "R-TOPK-PAGE", f"{SA}:3553"),
            V23: (
                "ok",
                {"page_size": 16, "attention_backend": "triton", "disable_overlap_schedule": False},
            ),
        },
    ),
    (
        "S07",
        "llama",
        {**EAGLE_LLAMA, "attention_backend": "trtllm_mha"},
        {},
        "B200",
        {
            V11: ("error", "R-TRTLLM-TOPK", f"{SA}:3535"),
            V23: ("error", "R-TRTLLM-TOPK", f"{SH}:1178"),
        },
    ),
    (
        "S08",
        "llama",
        {
            **EAGLE_LLAMA,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4,
        },
        {},
        "B200",
        {
            V11: (
                "ok",
                {
                    "attention_backend": "trtllm_mha",
                    "page_size": 64,
                    "disable_overlap_schedule": False,
                },
            ),
            V23: (
                "ok",
                {
                    "attention_backend": "trtllm_mha",
                    "page_size": 64,
                    "disable_overlap_schedule": False,
                },
            ),
        },
    ),
    (
        "T32",
        "llama",
        EAGLE_LLAMA,
        {},
        "B200",
        {
            V11: (
                "ok",
                {"attention_backend": "flashinfer", "page_size": 1, "speculative_eagle_topk": 4},
            ),
            V23: (
                "ok",
                {"attention_backend": "flashinfer", "page_size": 1, "speculative_eagle_topk": 4},
            ),
        },
    ),
    (
        "S09",
        "dsv3",
        {"speculative_algorithm": "NEXTN"},
        {},
        "H100",
        {
            V11: (
                "ok",
                {
                    "speculative_algorithm": "EAGLE",
                    "speculative_num_steps": 3,
                    "speculative_eagle_topk": 1,
                    "speculative_num_draft_tokens": 4,
                    "speculative_draft_model_path": "@dsv3",
                    "max_running_requests": 48,
                    "disable_overlap_schedule": False,
                    "attention_backend": "fa3",
                },
            ),
            V23: (
                "ok",
                {
                    "speculative_algorithm": "EAGLE",
                    "speculative_draft_model_path": "@dsv3",
                    "attention_backend": "fa3",
                },
            ),
        },
    ),
    (
        "S10",
        "qwen35",
        {"speculative_algorithm": "NEXTN"},
        {},
        "H100",
        {
            V11: ("error", "R-MAMBA-NOBUF-SPEC", f"{SA}:2453"),
            V23: (
                "ok",
                {
                    "speculative_num_steps": 3,
                    "speculative_eagle_topk": 1,
                    "speculative_num_draft_tokens": 4,
                    "mamba_radix_cache_strategy": "extra_buffer",
                    "disable_overlap_schedule": False,
                    "page_size": 1,
                    "attention_backend": "fa3",
                },
            ),
        },
    ),
    (
        "S10-B200",
        "qwen35",
        {"speculative_algorithm": "NEXTN"},
        {},
        "B200",
        {
            V11: ("error", "R-MAMBA-NOBUF-SPEC", f"{SA}:2453"),
            V23: ("ok", {"attention_backend": "triton", "page_size": 1}),
        },
    ),
    (
        "S11 incident 1 try 1",
        "qwen35",
        {"speculative_algorithm": "NEXTN", "speculative_num_draft_tokens": 1, "tp_size": 2},
        {},
        "A6000",
        {
            V11: ("error", "R-MAMBA-NOBUF-SPEC", f"{SA}:2453"),
            V23: ("error", "R-SPEC-STEPS-TRIO", f"{SH}:1162"),
        },
    ),
    (
        "S12 incident 1 try 2",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "speculative_num_draft_tokens": 1,
            "mamba_scheduler_strategy": "extra_buffer",
        },
        {"SGLANG_ENABLE_SPEC_V2": "1"},
        "A6000",
        {V11: ("error", "R-SPEC-STEPS-TRIO", f"{SA}:3521")},
    ),
    (
        "S13 incident 1 try 3",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "speculative_num_steps": 1,
            "speculative_eagle_topk": 1,
            "mamba_scheduler_strategy": "extra_buffer",
            "trust_remote_code": True,
            "dtype": "bfloat16",
        },
        {"SGLANG_ENABLE_SPEC_V2": "1"},
        "H100",
        {
            V11: (
                "ok",
                {
                    "speculative_algorithm": "EAGLE",
                    "speculative_num_steps": 1,
                    "speculative_eagle_topk": 1,
                    "speculative_num_draft_tokens": 2,
                    "mamba_scheduler_strategy": "extra_buffer",
                    "disable_overlap_schedule": False,
                    "page_size": 1,
                    "attention_backend": "fa3",
                    "max_running_requests": 48,
                },
            ),
            V23: (
                "ok",
                {
                    "speculative_num_draft_tokens": 2,
                    "mamba_radix_cache_strategy": "extra_buffer",
                    "disable_overlap_schedule": False,
                    "attention_backend": "fa3",
                },
            ),
        },
    ),
    (
        "S14",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "mamba_scheduler_strategy": "extra_buffer",
            "mamba_track_interval": 2,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4,
        },
        {},
        "H100",
        {
            V11: ("error", "R-MAMBA-TRACK-INTERVAL", f"{SA}:2408"),
            V23: ("error", "R-MAMBA-TRACK-INTERVAL", f"{MH}:133"),
        },
    ),
    (
        "S15",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "mamba_scheduler_strategy": "extra_buffer",
            "mamba_track_interval": 2,
        },
        {},
        "H100",
        {
            V11: ("ok", {"speculative_num_draft_tokens": 4}),
            V23: ("ok", {"speculative_num_draft_tokens": 4}),
        },
    ),
    (
        "S16",
        "qwen35",
        {"speculative_algorithm": "NEXTN", "mamba_scheduler_strategy": "no_buffer"},
        {},
        "H100",
        {
            V11: ("error", "R-MAMBA-NOBUF-SPEC", f"{SA}:2453"),
            V23: ("error", "R-MAMBA-NOBUF-OVERLAP-23", f"{MH}:158"),
        },
    ),
    (
        "S16b",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "mamba_scheduler_strategy": "no_buffer",
            "disable_overlap_schedule": True,
        },
        {},
        "H100",
        {V23: ("ok", {"speculative_num_steps": 3, "mamba_radix_cache_strategy": "no_buffer"})},
    ),
    (
        "S17",
        "llama",
        {"speculative_algorithm": "NGRAM"},
        {},
        "H100",
        {
            V11: (
                "ok",
                {
                    "speculative_num_steps": None,
                    "speculative_eagle_topk": 10,
                    "speculative_num_draft_tokens": 12,
                    "max_running_requests": 48,
                    "disable_overlap_schedule": True,
                    "page_size": 1,
                    "attention_backend": "fa3",
                },
            ),
            V23: (
                "ok",
                {
                    "speculative_num_steps": 1,
                    "speculative_eagle_topk": 10,
                    "speculative_num_draft_tokens": 12,
                    "disable_overlap_schedule": False,
                },
            ),
        },
    ),
    (
        "S18",
        "llama",
        {"speculative_algorithm": "NGRAM", "page_size": 16},
        {},
        "H100",
        {V11: ("error", "R-NGRAM-PAGE", None), V23: ("error", "R-NGRAM-PAGE", None)},
    ),
    (
        "S18b",
        "llama",
        {"speculative_algorithm": "NGRAM", "page_size": 16, "attention_backend": "flashinfer"},
        {},
        "H100",
        {V11: ("ok", {"page_size": 16}), V23: ("ok", {"page_size": 16})},
    ),
    (
        "S19",
        "llama",
        {"speculative_algorithm": "DFLASH", "speculative_draft_model_path": "@qwen3"},
        {},
        "H100",
        {
            V11: (
                "ok",
                {
                    "speculative_num_steps": 1,
                    "speculative_eagle_topk": 1,
                    "speculative_num_draft_tokens": 16,
                    "disable_overlap_schedule": True,
                    "max_running_requests": 48,
                },
            ),
            V23: ("ok", {"speculative_num_draft_tokens": 16, "disable_overlap_schedule": False}),
        },
    ),
    (
        "T20",
        "llama",
        {"speculative_algorithm": "DFLASH"},
        {},
        "H100",
        {
            V11: ("error", "R-DFLASH-DRAFT", f"{SA}:3331"),
            V23: ("error", "R-DFLASH-DRAFT", f"{SH}:325"),
        },
    ),
    (
        "S20",
        "llama",
        {**EAGLE_LLAMA, "speculative_moe_runner_backend": "flashinfer_trtllm"},
        {},
        "H100",
        {
            V11: ("error", "R-MOE-RUNNER", f"{SA}:3306"),
            V23: ("ok", {"speculative_moe_runner_backend": "flashinfer_trtllm"}),
        },
    ),
    (
        "S21",
        "llama",
        {**EAGLE_LLAMA, "pp_size": 2},
        {},
        "H100",
        {V11: ("error", "R-PP-SPEC", f"{SA}:6788"), V23: ("error", "R-PP-SPEC", None)},
    ),
    (
        "S22",
        "llama",
        {
            **EAGLE_LLAMA,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4,
            "enable_mixed_chunk": True,
        },
        {},
        "H100",
        {V11: ("ok", {"enable_mixed_chunk": False}), V23: ("ok", {"enable_mixed_chunk": True})},
    ),
    (
        "S23",
        "dsv3",
        {"speculative_algorithm": "nextn"},
        {},
        "H100",
        {
            V11: ("error", "R-ALGO-CHOICES", None),
            V23: (
                "ok",
                {
                    "speculative_algorithm": "EAGLE",
                    "speculative_num_steps": 3,
                    "speculative_draft_model_path": "@dsv3",
                },
            ),
        },
    ),
    (
        "S24",
        "llama",
        {**EAGLE_LLAMA, "speculative_adaptive": True},
        {},
        "H100",
        {
            V11: (
                "ok",
                {
                    "speculative_adaptive": False,
                    "speculative_num_steps": 5,
                    "speculative_eagle_topk": 4,
                },
            ),
            V23: (
                "ok",
                {
                    "speculative_adaptive": True,
                    "speculative_num_steps": 3,
                    "speculative_eagle_topk": 1,
                    "speculative_num_draft_tokens": 4,
                },
            ),
        },
    ),
    (
        "S25",
        "llama",
        {**EAGLE_LLAMA, "enable_lora": True, "lora_paths": ["a=llama"]},
        {},
        "H100",
        {V11: ("error", "R-LORA-SPEC", f"{SA}:7004"), V23: ("ok", {"speculative_num_steps": 5})},
    ),
    (
        "C44",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "mamba_scheduler_strategy": "extra_buffer",
            "page_size": 48,
        },
        {},
        "H100",
        {
            V11: ("error", "R-MAMBA-EXTRA-PAGE", f"{SA}:2413"),
            V23: ("error", "R-MAMBA-EXTRA-PAGE", f"{MH}:135"),
        },
    ),
    (
        "D06",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "mamba_scheduler_strategy": "extra_buffer",
            "disable_radix_cache": True,
        },
        {},
        "H100",
        {
            V11: ("error", "R-MAMBA-EXTRA-NORADIX", f"{SA}:2397"),
            V23: ("ok", {"disable_radix_cache": True}),
        },
    ),
    (
        "T14",
        "qwen35",
        {"speculative_algorithm": "NEXTN", "disable_radix_cache": True},
        {},
        "H100",
        {
            V11: ("ok", {"speculative_num_steps": 3, "mamba_scheduler_strategy": "no_buffer"}),
            V23: ("ok", {"speculative_num_steps": 3}),
        },
    ),
    (
        "T16",
        "qwen35",
        {"speculative_algorithm": "NEXTN", "mamba_scheduler_strategy": "extra_buffer"},
        {"SGLANG_ENABLE_SPEC_V2": "0"},
        "H100",
        {V11: ("ok", {"disable_overlap_schedule": True})},
    ),
    (
        "D03",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4,
            "mamba_scheduler_strategy": "extra_buffer",
        },
        {},
        "B200",
        {
            V11: ("ok", {"attention_backend": "trtllm_mha", "page_size": 64}),
            V23: (
                "ok",
                {
                    "attention_backend": "trtllm_mha",
                    "page_size": 64,
                    "mamba_radix_cache_strategy": "extra_buffer",
                },
            ),
        },
    ),
    (
        "C60",
        "qwen35",
        {
            "speculative_algorithm": "NEXTN",
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 2,
            "speculative_num_draft_tokens": 6,
            "mamba_scheduler_strategy": "extra_buffer",
        },
        {},
        "H100",
        {
            V11: ("ok", {"disable_overlap_schedule": True, "attention_backend": "flashinfer"}),
            V23: ("ok", {"disable_overlap_schedule": False, "attention_backend": "flashinfer"}),
        },
    ),
    (
        "D08",
        "llama",
        {"mamba_scheduler_strategy": "extra_buffer"},
        {},
        "H100",
        {
            V11: ("ok", {}),
            V23: ("error", "R-MAMBA-EXTRA-NOT-HYBRID", "sglang/srt/arg_groups/model_hook.py:1063"),
        },
    ),
    (
        "T18",
        "llama",
        {"speculative_algorithm": "NGRAM", "tp_size": 2, "dp_size": 2, "enable_dp_attention": True},
        {},
        "H100",
        {
            V11: ("error", "R-NGRAM-DPATTN", f"{SA}:3615"),
            V23: ("error", "R-NGRAM-DPATTN", f"{SH}:1369"),
        },
    ),
    (
        "T36",
        "llama",
        {
            "speculative_algorithm": "STANDALONE",
            "speculative_draft_model_path": "@qwen3",
            "tp_size": 2,
            "dp_size": 2,
            "enable_dp_attention": True,
        },
        {},
        "H100",
        {
            V11: ("error", "R-STANDALONE-DPATTN", f"{SA}:3450"),
            V23: ("error", "R-STANDALONE-DPATTN", f"{SH}:1082"),
        },
    ),
    (
        "C50",
        "llama",
        {
            "speculative_algorithm": "DFLASH",
            "speculative_draft_model_path": "@qwen3",
            "tp_size": 2,
            "dp_size": 2,
            "enable_dp_attention": True,
        },
        {},
        "H100",
        {
            V11: ("error", "R-DFLASH-DPATTN", f"{SA}:3321"),
            V23: ("error", "R-DFLASH-DPATTN", f"{SH}:308"),
        },
    ),
    (
        "T38",
        "llama",
        {
            "speculative_algorithm": "DFLASH",
            "speculative_draft_model_path": "@qwen3",
            "speculative_num_draft_tokens": 8,
            "speculative_dflash_block_size": 16,
        },
        {},
        "H100",
        {
            V11: ("error", "R-DFLASH-BLOCK", f"{SA}:3367"),
            V23: ("error", "R-DFLASH-BLOCK", f"{SH}:377"),
        },
    ),
    (
        "C49",
        "llama",
        {"speculative_algorithm": "NGRAM", "speculative_ngram_external_corpus_path": "x"},
        {},
        "H100",
        {
            V11: ("error", "R-NGRAM-CORPUS", f"{SA}:3580"),
            V23: ("error", "R-NGRAM-CORPUS", f"{SH}:1333"),
        },
    ),
    (
        "T35",
        "llama",
        {**EAGLE_LLAMA, "attention_backend": "flex_attention"},
        {},
        "H100",
        {V11: ("error", "R-FLEX-NO-SPEC", f"{SA}:2565"), V23: ("error", "R-FLEX-NO-SPEC", None)},
    ),
    (
        "C41",
        "llama",
        {"speculative_algorithm": "NGRAM", "device": "cpu"},
        {},
        "H100",
        {
            V11: ("error", "R-NGRAM-DEVICE", f"{SA}:3559"),
            V23: ("ok", {"disable_overlap_schedule": True, "attention_backend": "torch_native"}),
        },
    ),
    (
        "C41e",
        "llama",
        {
            **EAGLE_LLAMA,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4,
            "device": "cpu",
        },
        {},
        "H100",
        {
            V11: ("ok", {"disable_overlap_schedule": False, "attention_backend": "torch_native"}),
            V23: ("ok", {"disable_overlap_schedule": True}),
        },
    ),
    (
        "T34",
        "llama",
        {
            **EAGLE_LLAMA,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4,
        },
        {"SGLANG_ENABLE_SPEC_V2": "0"},
        "H100",
        {
            V11: ("ok", {"disable_overlap_schedule": True}),
            V23: ("ok", {"disable_overlap_schedule": False}),
        },
    ),
    (
        "D04",
        "llama",
        {
            **EAGLE_LLAMA,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4,
        },
        {"SGLANG_ENABLE_SPEC_V2": "on"},
        "H100",
        {V11: ("ok", {"disable_overlap_schedule": False})},
    ),
    (
        "C54",
        "llama",
        {
            **EAGLE_LLAMA,
            "speculative_num_steps": 3,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 4,
            "disable_overlap_schedule": True,
        },
        {},
        "H100",
        {
            V11: ("ok", {"disable_overlap_schedule": True}),
            V23: ("ok", {"disable_overlap_schedule": True}),
        },
    ),
    (
        "C55",
        "dsv3",
        {"speculative_algorithm": "NEXTN", "max_running_requests": 256},
        {},
        "H100",
        {V11: ("ok", {"max_running_requests": 256}), V23: ("ok", {"max_running_requests": 256})},
    ),
    (
        "C57",
        "dsv3",
        {"speculative_algorithm": "NEXTN", "speculative_adaptive": True},
        {},
        "H100",
        {V11: ("ok", {"speculative_adaptive": False}), V23: ("ok", {"speculative_adaptive": True})},
    ),
    (
        "C57b",
        "dsv3",
        {
            "speculative_algorithm": "NEXTN",
            "speculative_adaptive": True,
            "disable_overlap_schedule": True,
        },
        {},
        "H100",
        {V11: ("ok", {"speculative_adaptive": True}), V23: ("ok", {"speculative_adaptive": True})},
    ),
    (
        "C58",
        "dsv3",
        {
            "speculative_algorithm": "NEXTN",
            "speculative_adaptive": True,
            "speculative_num_steps": 2,
            "speculative_eagle_topk": 1,
            "speculative_num_draft_tokens": 3,
        },
        {},
        "H100",
        {
            V11: ("ok", {"speculative_adaptive": False}),
            V23: ("error", "R-ADAPTIVE-STEPS", f"{SH}:1417"),
        },
    ),
    (
        "C62",
        "dsv3",
        {"speculative_algorithm": "EAGLE3", "speculative_draft_model_path": "@eagle3"},
        {},
        "H100",
        {
            V11: ("ok", {"speculative_num_steps": 3, "speculative_eagle_topk": 1}),
            V23: ("ok", {"speculative_num_steps": 3, "speculative_eagle_topk": 1}),
        },
    ),
    (
        "C63",
        "qwen3",
        {"speculative_algorithm": "NEXTN"},
        {},
        "H100",
        {V11: ("ok", {"speculative_num_steps": 3}), V23: ("ok", {"speculative_num_steps": 3})},
    ),
    (
        "D07",
        "llama",
        {"speculative_algorithm": "NEXTN"},
        {},
        "H100",
        {
            V11: ("ok", {"speculative_num_steps": 5, "speculative_eagle_topk": 4}),
            V23: ("ok", {"speculative_num_steps": 5, "speculative_eagle_topk": 4}),
        },
    ),
    (
        "T31",
        "qwen3next",
        {"speculative_algorithm": "NEXTN"},
        {},
        "H100",
        {
            V11: ("error", "R-MAMBA-NOBUF-SPEC", f"{SA}:2453"),
            V23: ("ok", {"mamba_radix_cache_strategy": "extra_buffer"}),
        },
    ),
    (
        "incident 3 try 3",
        "llama",
        {
            "speculative_algorithm": "EAGLE3",
            "speculative_draft_model_path": "@eagle3",
            "speculative_num_draft_tokens": 16,
            "speculative_eagle_topk": 1,
            "speculative_num_steps": 1,
        },
        {},
        "H200",
        {
            V11: ("ok", {"speculative_num_draft_tokens": 2}),
            V23: ("ok", {"speculative_num_draft_tokens": 2}),
        },
    ),
]

PARAMS = [
    pytest.param(case_id, model, typed, env, gpu, version, expect, id=f"{case_id}-{version}")
    for case_id, model, typed, env, gpu, by_version in CASES
    for version, expect in by_version.items()
]


def _resolve(value: Any, models: dict[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("@"):
        return models[value[1:]]
    return value


@pytest.mark.parametrize(("case_id", "model", "typed", "env", "gpu", "version", "expect"), PARAMS)
def test_reference_case(
    case_id: str,
    model: str,
    typed: dict[str, Any],
    env: dict[str, str],
    gpu: str,
    version: str,
    expect: tuple[Any, ...],
    models: dict[str, str],
) -> None:
    args = {"model_path": models[model], **{k: _resolve(v, models) for k, v in typed.items()}}
    report = check_typed(args, sglang_version=version, env=env, gpu=gpu)
    first = first_sglang_error(report)
    if expect[0] == "error":
        _, rule, where = expect
        assert sglang_verdict(report) == "error", [f.rule for f in report.findings]
        assert first is not None and first.rule == rule, (
            first.rule if first else None,
            [f.rule for f in report.findings],
        )
        if where is not None:
            assert first.sglang is not None and first.sglang.where == where
    else:
        assert sglang_verdict(report) == "ok", [(f.rule, f.message) for f in report.errors]
        for name, value in expect[1].items():
            assert report.effective.get(name) == _resolve(value, models), (name, report.effective)
