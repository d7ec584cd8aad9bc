"""Witnesses: for every rule id, a case where it fires and a near miss where it does not.

A witness is a small conformance case (flags after `python -m sglang.launch_server` with
`{kind}` placeholders for the tiny model folders, env, GPU kind and count) that makes its rule
the first error SGLang raises (or the rewrite / warning / runtime trap it describes), and a near
miss: the same case with one value changed so that the rule does not fire. Flags are written in
the canonical (0.5.11) spelling and respelled per release from its flag table (`respell`), so one
table serves every release.

`conformance witnesses [--write-fixtures DIR]` runs both cases of every witness on real SGLang, in
every release where the rule holds (`holds`), and writes `witness-results-<V>.json`;
tests/conformance/test_witnesses.py replays them against the wizard without a venv.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wizard.conformance.models import (
    MODEL_CONFIGS,
    MODEL_KINDS,
    PUBLIC_KINDS,
    public_model_configs,
    write_model_folders,
)
from wizard.conformance.score import normalise_where, wizard_first_error, wizard_verdict
from wizard.rules.catalog import ALL_RULES, RULES_BY_ID
from wizard.rules.engine import rules_in
from wizard.sglang.fields import release_dest, version_dest
from wizard.sglang.flags import argparse_error, load_table
from wizard.sglang.releases import Release, load_release, release_names

# Witness-only model folders (config.json only), next to those of `models.py`.
_LLAMA_SMALL: dict[str, Any] = {
    "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 8,
    "num_key_value_heads": 4, "head_dim": 32, "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "torch_dtype": "bfloat16",
    "bos_token_id": 1, "eos_token_id": 2, "tie_word_embeddings": False,
}
WITNESS_MODELS: dict[str, dict[str, Any]] = {
    # a model type no transformers release knows
    "unknown_type": {"architectures": ["LlamaForCausalLM"], "model_type": "witness_unknown_type",
                     "num_hidden_layers": 4, "vocab_size": 32000, **_LLAMA_SMALL},
    # an EAGLE draft with a smaller vocabulary than the Llama target (no token map)
    "eagle_draft_small_vocab": {"architectures": ["LlamaForCausalLMEagle"], "model_type": "llama",
                                "num_hidden_layers": 1, "vocab_size": 16000, **_LLAMA_SMALL},
    # GLM-4.5 style MoE with an MTP layer (0.5.8 runs its hybrid-cache checks in this branch)
    "glm4moe": {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe",
                "num_hidden_layers": 4, "vocab_size": 32000, "moe_intermediate_size": 128,
                "n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2,
                "first_k_dense_replace": 1, "num_nextn_predict_layers": 1,
                "partial_rotary_factor": 0.5, "routed_scaling_factor": 1.0, "n_group": 1,
                "topk_group": 1, "norm_topk_prob": True, "use_qk_norm": False, **_LLAMA_SMALL},
    # a hybrid (short-convolution) model without the extra buffer in every release
    "lfm2": {"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "num_hidden_layers": 4,
             "vocab_size": 32000, "full_attn_idxs": [2],
             "conv_L_cache": 3, "conv_bias": False, "block_dim": 256, "block_ff_dim": 512,
             "block_auto_adjust_ff_dim": False, "norm_eps": 1e-5, **_LLAMA_SMALL},
    # a multi-layer-EAGLE architecture (checked by the wizard only: its config needs remote code)
    "mimo_v2": {"architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash",
                "num_hidden_layers": 4, "num_nextn_predict_layers": 3, "vocab_size": 32000,
                **_LLAMA_SMALL},
}


def write_witness_models(root: Path) -> dict[str, Path]:
    """Write the witness-only model folders (and the public checkpoints' configs) under
    ``root``; their paths by kind."""
    return write_model_folders(root, {**WITNESS_MODELS, **public_model_configs()})


@dataclass(frozen=True)
class Witness:
    """One rule's pair of cases.

    `near` edits the fires case: a flag -> its new value (None drops it, True adds a switch), and
    the keys `@gpu`, `@gpus`, `@env` replace the GPU kind, the GPU count or the environment.
    `effect` (canonical field -> value) is what SGLang's resolved arguments show when a silent
    rule fires (and do not show in the near miss); `log` a piece of SGLang's warning for rules
    that only log. `sglang=False`: the wizard's own advice, not run on SGLang.
    """

    rule: str
    argv: str
    near: Mapping[str, Any]
    gpu: str | None = "H100"
    gpus: int = 1
    env: Mapping[str, str] = field(default_factory=dict)
    effect: Mapping[str, Any] = field(default_factory=dict)
    log: str | None = None
    sglang: bool = True
    version: str | None = None  # the version the wizard is asked for ("{V}" = the release)
    trait: str | None = None  # only releases whose data has this trait set (a trait-gated rule)


EAGLE = "--model-path {llama} --speculative-algorithm EAGLE --speculative-draft-model-path {eagle_draft}"
CHAIN = "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
TREE = "--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"
NEXT = "--model-path {hybrid}"  # a hybrid model whose extra buffer the release checks
NGRAM = "--model-path {llama} --speculative-algorithm NGRAM"
DFLASH = ("--model-path {llama} --speculative-algorithm DFLASH "
          "--speculative-draft-model-path {standalone_draft}")
STANDALONE = ("--model-path {llama} --speculative-algorithm STANDALONE "
              "--speculative-draft-model-path {standalone_draft}")
DPATTN = "--tp-size 2 --dp-size 2 --enable-dp-attention"
NODES = "--model-path {llama} --tp-size 16 --nnodes 2"
ADDR = "--dist-init-addr 10.0.0.1:5000"
SPEC_V2 = "SGLANG_ENABLE_SPEC_V2"

W = Witness
WITNESSES: tuple[Witness, ...] = (
    # ---- SGLang's argument code raises
    W("R-SPEC-V2-TOPK", f"{EAGLE} {TREE}", {"@env": {SPEC_V2: "0"}}, env={SPEC_V2: "1"}),
    W("R-FA4-DECODE", "--model-path {llama} --attention-backend fa4",
      {"--attention-backend": "fa3"}),
    # transformers 5 always sets rope_scaling; the MLA branch then indexes its missing 'factor'
    W("R-MLA-ROPE-FACTOR", "--model-path {dsv3}", {"--model-path": "{llama}"},
      trait="transformers_sets_rope_scaling"),
    W("R-MODEL-TYPE-UNKNOWN", "--model-path {unknown_type}", {"--model-path": "{llama}"}),
    # ModelConfig's first check (before it reads config.json; 0.5.23 reads it earlier)
    W("R-QUANTIZE-SERVE-METHOD", "--model-path {llama} --quantize-and-serve",
      {"--quantize-and-serve": None}),
    W("R-QUANTIZE-SERVE-DISABLED", "--model-path {llama} --quantize-and-serve --quantization "
      "modelopt_fp8", {"--quantize-and-serve": None}),
    W("R-DPATTN-TP-DIVISIBLE", "--model-path {dsv3} --tp-size 2 --dp-size 4 --enable-dp-attention",
      {"--tp-size": "4"}, gpus=4),
    W("R-DRAFT-SINK-WINDOW", f"{EAGLE} {CHAIN} --speculative-draft-sink-size 4",
      {"--speculative-draft-window-size": "2048"}),
    W("R-REJECTION-SAMPLING-TOPK",
      f"{EAGLE} --speculative-num-steps 3 --speculative-eagle-topk 2 "
      "--speculative-num-draft-tokens 4 --speculative-use-rejection-sampling",
      {"--speculative-eagle-topk": "1"}),
    W("R-ALGO-CHOICES", "--model-path {llama} --speculative-algorithm MEDUSA",
      {"--speculative-algorithm": "NGRAM"}),
    W("R-MAMBA-EXTRA-UNSUPPORTED", "--model-path {lfm2} --mamba-scheduler-strategy "
      "extra_buffer", {"--mamba-scheduler-strategy": "auto"}),
    W("R-MAMBA-EXTRA-NOT-HYBRID", "--model-path {llama} --mamba-scheduler-strategy extra_buffer",
      {"--mamba-scheduler-strategy": "auto"}),
    W("R-MAMBA-EXTRA-NORADIX", f"{NEXT} --mamba-scheduler-strategy extra_buffer "
      "--disable-radix-cache", {"--disable-radix-cache": None}),
    W("R-MAMBA-TRACK-INTERVAL", f"{NEXT} --speculative-algorithm NEXTN "
      f"--mamba-scheduler-strategy extra_buffer --mamba-track-interval 2 {CHAIN}",
      {"--mamba-track-interval": "4"}),
    W("R-MAMBA-EXTRA-PAGE", f"{NEXT} --mamba-scheduler-strategy extra_buffer --page-size 48",
      {"--page-size": "64"}),
    W("R-MAMBA-FLA-CHUNK", f"{NEXT} --mamba-scheduler-strategy extra_buffer "
      "--mamba-track-interval 96 --page-size 48", {"--page-size": "32"}),
    W("R-MAMBA-NOBUF-SPEC", f"{NEXT} --speculative-algorithm NEXTN",
      {"--mamba-scheduler-strategy": "extra_buffer"}),
    W("R-MAMBA-NOBUF-PAGE-23", f"{NEXT} --mamba-scheduler-strategy no_buffer --page-size 16 "
      "--disable-overlap-schedule", {"--page-size": "1"}),
    W("R-MAMBA-NOBUF-OVERLAP-23", f"{NEXT} --mamba-scheduler-strategy no_buffer",
      {"--disable-overlap-schedule": True}),
    W("R-MAMBA-NOBUF-TRTLLM-23", f"{NEXT} --mamba-scheduler-strategy no_buffer "
      "--disable-overlap-schedule --attention-backend trtllm_mha",
      {"--attention-backend": "triton"}, gpu="B200"),
    W("R-FLEX-NO-SPEC", f"{EAGLE} {CHAIN} --attention-backend flex_attention",
      {"--attention-backend": "triton"}),
    W("R-TRTLLM-MLA-GPU", "--model-path {dsv3} --attention-backend trtllm_mla", {"@gpu": "B200"}),
    W("R-TRTLLM-MHA-GPU", "--model-path {llama} --attention-backend trtllm_mha", {"@gpu": "B200"},
      gpu="A6000"),
    W("R-MOE-RUNNER", f"{EAGLE} {CHAIN} --speculative-moe-runner-backend flashinfer_trtllm",
      {"--speculative-moe-runner-backend": "triton"}),
    W("R-SKIP-DP-MLP-SYNC", "--model-path {dsv3} --speculative-algorithm NGRAM "
      "--speculative-skip-dp-mlp-sync", {"--speculative-algorithm": "NEXTN"}),
    W("R-DFLASH-DPATTN", f"{DFLASH} {DPATTN}", {"--enable-dp-attention": None}, gpus=2),
    W("R-DFLASH-PP", f"{DFLASH} --pp-size 2", {"--pp-size": "1"}, gpus=2),
    W("R-DFLASH-DRAFT", "--model-path {llama} --speculative-algorithm DFLASH",
      {"--speculative-draft-model-path": "{standalone_draft}"}),
    W("R-DFLASH-BLOCK", f"{DFLASH} --speculative-num-draft-tokens 8 "
      "--speculative-dflash-block-size 16", {"--speculative-num-draft-tokens": "16"}),
    W("R-STANDALONE-DPATTN", f"{STANDALONE} {DPATTN}", {"--enable-dp-attention": None}, gpus=2),
    W("R-SPEC-STEPS-TRIO", f"{EAGLE} --speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
      {"--speculative-num-steps": "3"}),
    W("R-TOPK-NONE-TYPEERROR-TRTLLM", f"{EAGLE} --speculative-num-steps 3 "
      "--attention-backend trtllm_mha", {"--speculative-eagle-topk": "1"}, gpu="B200"),
    W("R-TOPK-NONE-TYPEERROR", f"{EAGLE} --speculative-num-steps 3",
      {"--speculative-eagle-topk": "1"}),
    W("R-TRTLLM-TOPK", f"{EAGLE} {TREE} --attention-backend trtllm_mha",
      {"--speculative-eagle-topk": "1"}, gpu="B200"),
    W("R-TOPK-PAGE", f"{EAGLE} {TREE} --page-size 16 --attention-backend torch_native",
      {"--page-size": "1"}),
    W("R-NGRAM-DEVICE", f"{NGRAM} --device hpu", {"--device": "cuda"}),
    W("R-NGRAM-CORPUS", f"{NGRAM} --speculative-ngram-external-corpus-path x",
      {"--speculative-ngram-external-sam-budget": "4"}),
    W("R-NGRAM-CORPUS-LIMIT", f"{NGRAM} --speculative-ngram-external-corpus-path x "
      "--speculative-ngram-external-sam-budget 20",
      {"--speculative-ngram-external-sam-budget": "4"}),
    W("R-NGRAM-PAGE", f"{NGRAM} --page-size 16", {"--attention-backend": "flashinfer"}),
    W("R-NGRAM-DPATTN", f"{NGRAM} {DPATTN}", {"--enable-dp-attention": None}, gpus=2),
    W("R-PP-SPEC", f"{EAGLE} {CHAIN} --pp-size 2", {"--pp-size": "1"}, gpus=2),
    W("R-PP-SPEC-ALGO", f"{NGRAM} --pp-size 2", {"--pp-size": "1"}, gpus=2),
    W("R-CHUNKED-PAGE", "--model-path {llama} --page-size 48", {"--page-size": "64"}),
    W("R-PAGE-ZERO", "--model-path {llama} --page-size 0", {"--page-size": "1"}),
    W("R-LORA-SPEC", f"{EAGLE} {CHAIN} --enable-lora --lora-paths a={{llama}}",
      {"--enable-lora": None, "--lora-paths": None}),
    W("R-ADAPTIVE-STEPS", "--model-path {dsv3} --speculative-algorithm NEXTN "
      "--speculative-adaptive --speculative-num-steps 2 --speculative-eagle-topk 1 "
      "--speculative-num-draft-tokens 3",
      {"--speculative-num-steps": "3", "--speculative-num-draft-tokens": "4"}),
    W("R-DRAFT-CONFIG-READ", "--model-path {llama} --speculative-algorithm EAGLE "
      f"--speculative-draft-model-path /nonexistent/draft-folder {CHAIN}",
      {"--speculative-draft-model-path": "{eagle_draft}"}),
    W("R-MULTINODE-TP", f"--model-path {{llama}} --tp-size 3 --nnodes 2 {ADDR}",
      {"--tp-size": "4"}, gpus=2),
    W("R-MULTINODE-DP", f"--model-path {{llama}} --tp-size 8 --dp-size 2 --nnodes 2 {ADDR}",
      {"--dp-size": "1"}, gpus=4),
    # --disable-cuda-graph is a DeprecatedStoreTrueAction wherever the release has any
    W("R-DEPRECATED-FLAG", "--model-path {llama} --disable-cuda-graph",
      {"--disable-cuda-graph": None}, log="is deprecated and will be removed",
      trait="deprecated_store_true"),
    W("R-CONTEXT-LEN", "--model-path {llama31_8b} --context-length 262144",
      {"--context-length": "131072"}),
    W("R-QUANT-MISMATCH", "--model-path {gpt_oss_20b} --quantization w8a8_fp8",
      {"--quantization": "mxfp4"}),
    # MXFP4 is registered on CUDA and AMD gfx95 only: the checkpoint itself is unknown on MI300X
    W("R-QUANT-UNKNOWN", "--model-path {gpt_oss_20b}", {"@gpu": "H100"}, gpu="MI300X"),
    W("R-QUANT-ROCM", "--model-path {llama} --quantization modelopt_fp4",
      {"--quantization": "fp8"}, gpu="MI300X"),
    W("R-GPT-OSS-ATTENTION", "--model-path {gpt_oss_20b} --attention-backend flashinfer",
      {"--attention-backend": "triton"}),
    W("R-HICACHE-NO-RADIX", "--model-path {llama} --enable-hierarchical-cache "
      "--disable-radix-cache", {"--disable-radix-cache": None}),
    W("R-MIS-BACKEND", "--model-path {llama} --enable-mis --attention-backend triton",
      {"--attention-backend": "flashinfer"}),
    # a plain install has no kernel plugin: the flag alone is refused, on its vendor's GPU too
    W("R-NVIDIA-MEGAKERNEL", "--model-path {llama} --enable-nvidia-megakernel",
      {"--enable-nvidia-megakernel": None}, gpu="B200"),
    W("R-AMD-MONOKERNEL", "--model-path {llama} --enable-amd-monokernel",
      {"--enable-amd-monokernel": None}, gpu="MI355X"),
    W("R-DETERMINISTIC-BACKEND", "--model-path {llama} --enable-deterministic-inference "
      "--attention-backend torch_native", {"--attention-backend": "triton"}),
    W("R-DETERMINISTIC-MLA", "--model-path {dsv3} --enable-deterministic-inference "
      "--attention-backend flashinfer", {"--attention-backend": "triton"}),
    W("R-ATTN-DP-WITH-DP", "--model-path {dsv3} --tp-size 4 --attn-dp-size 2 --dp-size 2",
      {"--dp-size": "1"}, gpus=4),
    # ---- silent rewrites and log lines (SGLang's resolved values show them)
    W("R-FA4-PAGE", "--model-path {llama} --attention-backend fa4",
      {"--attention-backend": "triton"}, gpu="B200", effect={"page_size": 128}),
    W("R-XPU-PAGE", "--model-path {llama} --attention-backend intel_xpu --page-size 16",
      {"--page-size": "64"}, effect={"page_size": 128}),
    W("R-MAMBA-AUTO", f"{NEXT} --mamba-scheduler-strategy auto",
      {"--mamba-scheduler-strategy": "extra_buffer"},
      effect={"mamba_scheduler_strategy": "no_buffer"}),
    W("R-MAMBA-NOBUF-PAGE", f"{NEXT} --mamba-scheduler-strategy no_buffer --page-size 16",
      {"--disable-radix-cache": True}, effect={"page_size": 1}),
    W("R-MAMBA-NOBUF-OVERLAP", f"{NEXT} --mamba-scheduler-strategy no_buffer",
      {"--mamba-scheduler-strategy": "extra_buffer"}, effect={"disable_overlap_schedule": True}),
    W("R-TRTLLM-PAGE", "--model-path {llama} --attention-backend trtllm_mha",
      {"--page-size": "32"}, gpu="B200", effect={"page_size": 64}),
    W("R-TRTLLM-MLA-PAGE", "--model-path {dsv3} --attention-backend trtllm_mla",
      {"--page-size": "32"}, gpu="B200", effect={"page_size": 64}),
    W("R-NEXTN-ALIAS", "--model-path {dsv3} --speculative-algorithm NEXTN",
      {"--speculative-algorithm": "NGRAM"}, effect={"speculative_algorithm": "EAGLE"}),
    W("R-MAXREQ-48", f"{EAGLE} {CHAIN}", {"--max-running-requests": "64"},
      effect={"max_running_requests": 48}),
    W("R-SPEC-V2-OVERLAP-ON", f"{EAGLE} {CHAIN} --disable-overlap-schedule {{beta_spec}}",
      {"@env": {SPEC_V2: "0"}, "{beta_spec}": None}, env={SPEC_V2: "1"},
      effect={"disable_overlap_schedule": False}),
    W("R-SPEC-V1-SELECT", f"{EAGLE} {TREE}", {"--speculative-eagle-topk": "1"},
      effect={"disable_overlap_schedule": True}),
    W("R-MIXED-CHUNK", f"{STANDALONE} {CHAIN} --enable-mixed-chunk",
      {"--speculative-algorithm": None, "--speculative-draft-model-path": None,
       "--speculative-num-steps": None, "--speculative-eagle-topk": None,
       "--speculative-num-draft-tokens": None}, effect={"enable_mixed_chunk": False}),
    W("R-DRAFT-AUTO", "--model-path {dsv3} --speculative-algorithm NEXTN",
      {"--speculative-draft-model-path": "{eagle_draft}"},
      effect={"speculative_draft_model_path": "{dsv3}"}),
    W("R-MTP-PAGE-FLASHINFER", "--model-path {dsv3} --speculative-algorithm NEXTN --page-size 16 "
      "--attention-backend flashinfer", {"--page-size": "1"}),
    W("R-DRAFT-NOT-NEEDED", "--model-path {dsv3} --speculative-algorithm NEXTN "
      "--speculative-draft-model-path {dsv3}", {"--speculative-draft-model-path": None},
      log="does not require setting speculative_draft_model_path"),
    W("R-SPEC-AUTO-PARAMS", EAGLE,
      {"--speculative-num-steps": "3", "--speculative-eagle-topk": "1",
       "--speculative-num-draft-tokens": "4"},
      effect={"speculative_num_steps": 5, "speculative_eagle_topk": 4,
              "speculative_num_draft_tokens": 8}),
    W("R-TOPK1-DRAFT-REWRITE", f"{EAGLE} --speculative-num-steps 3 --speculative-eagle-topk 1 "
      "--speculative-num-draft-tokens 8", {"--speculative-num-steps": "7"},
      effect={"speculative_num_draft_tokens": 4}),
    W("R-NGRAM-DEFAULTS", f"{NGRAM} --speculative-eagle-topk 4",
      {"--speculative-ngram-max-bfs-breadth": "4"}, effect={"speculative_eagle_topk": 10}),
    W("R-ADAPTIVE", "--model-path {dsv3} --speculative-algorithm NEXTN --speculative-adaptive "
      "--disable-overlap-schedule --speculative-num-steps 3 --speculative-eagle-topk 2 "
      "--speculative-num-draft-tokens 6", {"--speculative-eagle-topk": "1"},
      effect={"speculative_adaptive": False}),
    # ---- runtime traps: SGLang's argument code accepts both cases
    # near: spec v1 asked for both ways (0.5.4.post1-0.5.10 turn a typed
    # --disable-overlap-schedule back off while the variable is on: R-SPEC-V2-OVERLAP-ON)
    W("R-V2-BEFORE-AUTO", EAGLE, {"--disable-overlap-schedule": True, "@env": {SPEC_V2: "0"}},
      env={SPEC_V2: "1"},
      trait="spec_v1_fallback_for_trees"),
    W("R-MAMBA-TRACK-INTERVAL-FINAL", f"{NEXT} --speculative-algorithm NEXTN "
      "--mamba-scheduler-strategy extra_buffer --mamba-track-interval 2",
      {"--mamba-track-interval": None}),
    W("R-TREE-CAPACITY", f"{EAGLE} --speculative-num-steps 2 --speculative-eagle-topk 2 "
      "--speculative-num-draft-tokens 8", {"--speculative-num-draft-tokens": "7"}),
    W("R-NEXTN-NO-MTP", "--model-path {llama} --speculative-algorithm NEXTN",
      {"--speculative-draft-model-path": "{eagle_draft}"}),
    W("R-DRAFT-MISSING", f"--model-path {{llama}} --speculative-algorithm EAGLE {CHAIN}",
      {"--speculative-draft-model-path": "{eagle_draft}"}),
    W("R-EAGLE3-DRAFT-WITH-EAGLE", "--model-path {llama} --speculative-algorithm EAGLE "
      f"--speculative-draft-model-path {{eagle3_draft}} {CHAIN}",
      {"--speculative-algorithm": "EAGLE3"}),
    W("R-EAGLE3-OWN-MTP", f"--model-path {{dsv3}} --speculative-algorithm EAGLE3 {CHAIN}",
      {"--speculative-algorithm": "EAGLE"}),
    W("R-DRAFT-HIDDEN-SIZE", "--model-path {llama} --speculative-algorithm EAGLE "
      f"--speculative-draft-model-path {{standalone_draft}} {CHAIN}",
      {"--speculative-draft-model-path": "{eagle_draft}"}),
    W("R-DRAFT-VOCAB", "--model-path {llama} --speculative-algorithm EAGLE "
      f"--speculative-draft-model-path {{eagle_draft_small_vocab}} {CHAIN}",
      {"--speculative-draft-model-path": "{eagle_draft}"}),
    W("R-NODE-RANK", f"{NODES} --node-rank 2 {ADDR}", {"--node-rank": "1"}, gpus=8),
    W("R-DIST-INIT-ADDR", NODES, {"--dist-init-addr": "10.0.0.1:5000"}, gpus=8),
    W("R-DIST-INIT-FORMAT", f"{NODES} --dist-init-addr 10.0.0.1",
      {"--dist-init-addr": "10.0.0.1:5000"}, gpus=8),
    W("R-NODE-GPUS", f"{NODES} {ADDR}", {"@gpus": 8}, gpus=4),
    # ---- the wizard's own advice and context (not SGLang's)
    W("R-NEXTN-MULTI-LAYER", "--model-path {mimo_v2} --speculative-algorithm NEXTN",
      {"--speculative-algorithm": "EAGLE"}, sglang=False),
    W("R-VERSION-NEAREST", "--model-path {llama}", {"@version": "{V}"}, sglang=False,
      version="{V}.post99"),
    W("R-GPU-ASSUMED", "--model-path {llama}", {"@gpu": "H100"}, gpu=None, sglang=False),
    W("R-FACTS-MISSING", "--model-path /nonexistent/model-folder",
      {"--model-path": "{llama}"}, sglang=False),
    W("R-SPEC-V2-ENV", f"{EAGLE} {CHAIN}", {"@env": {}}, env={SPEC_V2: "1"}, sglang=False),
    W("R-SPEC-NO-ALGO", "--model-path {llama} --speculative-num-draft-tokens 4",
      {"--speculative-num-draft-tokens": None}, sglang=False),
)
BY_RULE: dict[str, Witness] = {w.rule: w for w in WITNESSES}

# Rule ids without a witness, and why.
EXCLUDED: dict[str, str] = {
    "R-BACKEND-PAGE": "a family, not one statement: each release has its own backend blocks "
                      "(trait attention_page_rules, read from its source by add-release); checked "
                      "against real SGLang by focused sweeps (--with=--attention-backend=X), "
                      "their cases in tests/rules/test_backend_pages.py",
    "R-BACKEND-WRITES": "a family, not one statement: the settings each backend's block turns "
                        "off (trait attention_backend_writes, read by add-release); checked "
                        "against real SGLang by focused sweeps, their cases in "
                        "tests/rules/test_backend_pages.py",
    "R-BACKEND-PREFILL": "a family, not one statement: the prefill backend each decode-only "
                         "backend's block fills in (trait backend_prefill_defaults, read by "
                         "add-release); checked against real SGLang by focused sweeps, their "
                         "cases in tests/rules/test_backend_pages.py",
    "R-ARG-SITE": "a family, not one statement: each release has its own sites (generic_sites, "
                  "read from its source by add-release); the extractor is checked against "
                  "Python running the extracted code (tests/conformance/test_arg_sites.py) and "
                  "the family against real SGLang by the wide sweeps (docs/conformance.md)",
    "R-DEPRECATED-VALUE": "a family, not one statement: each release has its own logged "
                          "rewrites (deprecated_values, read from its source by add-release); "
                          "checked against real SGLang's logged warnings and resolved values by "
                          "focused sweeps (docs/conformance.md, Deprecated values)",
    "R-MEMORY-PLAN": "needs real model sizes (the tiny configs always fit); tested with real "
                     "configs in tests/rules and tests/model",
    "R-PP-PARTITION": "raised by get_pp_indices when the model is built, after the argument "
                      "code passes (the conformance runner stops there); its messages and "
                      "lines are read from each release (trait pp_partition_checks) and tested "
                      "in tests/rules/test_pp_partition.py",
    "R-MEMORY-NOFIT": "a run-time failure (out of memory at start-up), not an argument check: "
                      "SGLang's argument code accepts it on every release; tested with real "
                      "configs in tests/rules and tests/model",
    "R-MAMBA-EXTRA-DEVICE": "SGLang asserts the host platform (`is_cuda() or is_musa()`), not "
                            "--device: it cannot fail on the CUDA GPU kinds the wizard knows "
                            "(real 0.5.11 accepts extra_buffer with --device cpu on a CUDA host); "
                            "it fires on the AMD kinds (is_cuda() is False under ROCm); the "
                            "runner fakes ROCm now and tests/conformance/test_rocm_fake.py "
                            "checks it on real 0.5.11 (MI300X), but the witness fixtures hold "
                            "CUDA cases only so far",
    "R-DRAFT-FACTS-MISSING": "the wizard's own note that the draft checks were skipped (an "
                             "unreadable draft config); it gives way to R-DRAFT-CONFIG-READ on "
                             "the releases that open the draft at start, so it fires on some "
                             "releases only; tested in tests/rules/test_spec_without_algorithm.py",
    "R-SIZE-NOT-POSITIVE": "SGLang's argument code accepts tp/pp/dp 0 and a static fraction "
                           "of 0; the failure comes when the workers or the memory pool start, "
                           "which the CPU runner never does; tested in "
                           "tests/rules/test_sizes_not_positive.py",
    "R-GPUS-TOO-FEW": "SGLang accepts the arguments; the failure (invalid device ordinal) "
                      "happens only when the workers start on the GPUs, which the CPU runner "
                      "never does; tested in tests/rules/test_gpu_kinds.py",
}


# Releases where a rule holds but its witness cannot be launched (their argparse refuses a flag or
# value the witness needs), and why; tests/conformance/test_witnesses.py keeps this exact.
_V5_V6 = ("0.5.5", "0.5.5.post1", "0.5.5.post2", "0.5.5.post3", "0.5.6", "0.5.6.post1",
          "0.5.6.post2")
_V1 = ("0.5.1", "0.5.1.post2", "0.5.1.post3")  # argparse choices EAGLE, EAGLE3, NEXTN
_V1_V2 = (*_V1, "0.5.2")  # + STANDALONE; no NGRAM yet
_V3_V4 = ("0.5.3", "0.5.3.post1", "0.5.3.post2", "0.5.3.post3", "0.5.4", "0.5.4.post1",
          "0.5.4.post2", "0.5.4.post3")
_NO_NGRAM = ("NGRAM is not an argparse choice of --speculative-algorithm there (it arrives in "
             "0.5.3): the statement located for it is another rule's, and cannot be an NGRAM case")
UNREACHABLE: dict[str, tuple[tuple[str, ...], str]] = {
    "R-DFLASH-DPATTN": ((*_V3_V4, *_V5_V6, "0.5.7", "0.5.8", "0.5.9", "0.5.10"),
                        "DFLASH is not an argparse choice of --speculative-algorithm there: the "
                        "located statement cannot be reached from the command line"),
    "R-MAMBA-NOBUF-OVERLAP": ((*_V1_V2, *_V3_V4, *_V5_V6),
                              "no --mamba-scheduler-strategy flag yet"),
    "R-MAMBA-TRACK-INTERVAL-FINAL": ((*_V1_V2, *_V3_V4, *_V5_V6),
                                     "no --mamba-scheduler-strategy / --mamba-track-interval yet"),
    "R-NEXTN-ALIAS": (_V1_V2, "its near miss switches to NGRAM, not an argparse choice there"),
    "R-MIXED-CHUNK": (_V1, "its witness runs STANDALONE, not an argparse choice before 0.5.2"),
    "R-NGRAM-DEFAULTS": (_V1_V2, _NO_NGRAM),
    "R-NGRAM-PAGE": (("0.5.2",), _NO_NGRAM),
    "R-XPU-PAGE": ((*_V1_V2, "0.5.3", "0.5.3.post1", "0.5.3.post2", "0.5.3.post3"),
                   "intel_xpu is not an argparse choice of --attention-backend there (nor is "
                   "there a rewrite: the release's trait xpu_page is empty)"),
}


def respell(argv: list[str], release: Release) -> list[str]:
    """Canonical (0.5.11) flag spellings -> the release's own (e.g. the hybrid-cache flag)."""
    table = load_table(release.name)
    out = []
    for token in argv:
        if token.startswith("--") and "=" not in token and token not in table.by_option:
            canonical = token[2:].replace("-", "_")
            action = table.by_dest.get(version_dest(canonical, release.name))
            if action is not None:
                token = action.primary
        out.append(token)
    return out


def _edited(argv: list[str], edits: Mapping[str, Any]) -> list[str]:
    out = list(argv)
    for flag, value in edits.items():
        if flag.startswith("@"):
            continue
        if flag in out:
            at = out.index(flag)
            takes_value = at + 1 < len(out) and not out[at + 1].startswith("--")
            del out[at:at + (2 if takes_value else 1)]
            if value is None:
                continue
            out[at:at] = [flag] if value is True else [flag, str(value)]
        elif value is not None:
            out += [flag] if value is True else [flag, str(value)]
    return out


def holds(rule_id: str, release: Release) -> bool:
    """The rule exists in `release`: for rules the release data locates anywhere, located in
    this release (whether or not the wizard's order for it evaluates the rule: a witness then
    shows the gap); for the others, in the release's resolution order."""
    if any(load_release(r).site(rule_id) is not None for r in release_names()):
        return release.site(rule_id) is not None
    return RULES_BY_ID[rule_id] in rules_in(release)


HYBRID_KINDS = ("qwen3next", "qwen35", "qwen35moe", "glm4moe")


def hybrid_kind(release: Release) -> str:
    """The model kind `{hybrid}` stands for: the first of `HYBRID_KINDS` whose architecture is
    in the release's extra-buffer list (its hybrid-cache checks run for it)."""
    configs = {**MODEL_CONFIGS, **WITNESS_MODELS}
    listed = release.arch_set("hybrid_extra_buffer") | release.arch_set("mamba_extra_buffer")
    return next((k for k in HYBRID_KINDS if configs[k]["architectures"][0] in listed),
                HYBRID_KINDS[0])


def _fill(text: str, models: Mapping[str, Path], version: str) -> str:
    paths = {k: str(v) for k, v in models.items()}
    if "{hybrid}" in text:
        paths["hybrid"] = paths[hybrid_kind(load_release(version))]
    # `{beta_spec}`: the flag that selects spec v2 where a flag does (0.5.3.post2-0.5.4), else
    # nothing (the token is dropped; the variable selects it)
    beta = "--enable-beta-spec" if (
        "{beta_spec}" in text and load_release(version).traits.get("spec_v2_switch") == "flag"
    ) else ""
    return text.format(V=version, beta_spec=beta, **paths)


def _filled(argv: list[str], models: Mapping[str, Path], version: str) -> list[str]:
    """`argv` with its placeholders filled; a placeholder that stands for nothing is dropped."""
    return [t for t in (_fill(t, models, version) for t in argv) if t]


def witness_cases(witness: Witness, version: str,
                  models: Mapping[str, Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fires case and the near-miss case of `witness` for release `version` (model paths
    from `models`; `{kind}` placeholders kept when `models` maps a kind to `{kind}`)."""
    release = load_release(version)
    argv = witness.argv.split()
    fires = {
        "id": f"{version}-{witness.rule}-fires", "rule": witness.rule, "side": "fires",
        "sglang_version": _fill(witness.version or version, models, version),
        "gpu": witness.gpu, "gpus": witness.gpus, "env": dict(witness.env),
        "argv": _filled(respell(argv, release), models, version),
    }
    near = {
        **fires, "id": f"{version}-{witness.rule}-near", "side": "near",
        "argv": _filled(respell(_edited(argv, witness.near), release), models, version),
    }
    for key in ("gpu", "gpus", "env"):
        if f"@{key}" in witness.near:
            near[key] = witness.near[f"@{key}"]
    if "@version" in witness.near:
        near["sglang_version"] = _fill(str(witness.near["@version"]), models, version)
    return fires, near


def placeholder_models() -> dict[str, Path]:
    """Kind -> `{kind}`: cases rendered with these keep their placeholders (the fixtures' form)."""
    return {k: Path("{" + k + "}") for k in (*MODEL_KINDS, *WITNESS_MODELS, *PUBLIC_KINDS)}


def applies(witness: Witness, version: str) -> bool:
    """The witness can show its rule in `version`: the rule holds, the trait it needs is set,
    and the release's argparse accepts both cases (except the fires case of a rule that argparse
    itself enforces there)."""
    release = load_release(version)
    if not holds(witness.rule, release) or (witness.trait and not release.trait(witness.trait)):
        return False
    fires, near = witness_cases(witness, version, placeholder_models())
    by_argparse = RULES_BY_ID[witness.rule].sglang.for_release(release, witness.rule, "")
    return ((by_argparse.stage == "argparse" or argparse_error(fires["argv"], version) is None)
            and argparse_error(near["argv"], version) is None)


def unreachable(version: str) -> list[str]:
    """Rules that hold in `version` whose witness its argparse refuses (flag or value missing)."""
    release = load_release(version)
    return [w.rule for w in WITNESSES if w.sglang and holds(w.rule, release)
            and not (w.trait and not release.trait(w.trait)) and not applies(w, version)]


def sglang_witnesses(version: str) -> list[Witness]:
    """The witnesses run on SGLang `version`: those that apply there (`applies`)."""
    return [w for w in WITNESSES if w.sglang and applies(w, version)]


def all_cases(version: str, models: Mapping[str, Path]) -> list[dict[str, Any]]:
    """Both cases of every witness run on SGLang `version`."""
    return [case for w in sglang_witnesses(version) for case in witness_cases(w, version, models)]


RESULT_KEYS = ("verdict", "stage", "exception", "where", "runner_error")


def compact_result(witness: Witness, result: Mapping[str, Any],
                   models: Mapping[str, Path]) -> dict[str, Any]:
    """What the fixture keeps of a runner result: the verdict, the raise, the witnessed values
    (model paths as `{kind}`)."""
    out = {k: result.get(k) for k in RESULT_KEYS}
    out["message"] = str(result.get("message") or "")[:120]
    effective = result.get("effective") or {}
    release = load_release(str(result.get("sglang_version")))

    names = {release_dest(n, release) for n in witness.effect}
    out["effective"] = {k: v for k, v in effective.items() if k in names}
    if witness.log:
        out["log"] = [w for w in result.get("warnings") or [] if witness.log in w]
    return dict(_placeholdered(out, models))


def fixture_text(version: str, results: Mapping[str, Mapping[str, Any]],
                 models: Mapping[str, Path], keep: Mapping[str, Any] | None = None) -> str:
    """The committed fixture of one release: each witness's two cases with SGLang's results
    (`keep`: recorded entries of witnesses not run this time, kept as they are)."""
    placeholders = placeholder_models()
    entries: dict[str, Any] = {}
    for witness in sglang_witnesses(version):
        if keep is not None and witness.rule in keep:
            entries[witness.rule] = keep[witness.rule]
            continue
        sides = {}
        for case, shown in zip(witness_cases(witness, version, models),
                               witness_cases(witness, version, placeholders), strict=True):
            result = compact_result(witness, results[str(case["id"])], models)
            sides[str(case["side"])] = {"gpu": shown["gpu"], "gpus": shown["gpus"],
                                        "env": shown["env"], "argv": " ".join(shown["argv"]),
                                        "sglang": result}
        entries[witness.rule] = sides
    lines = [f" {json.dumps(rule)}: {json.dumps(sides, sort_keys=True)}"
             for rule, sides in sorted(entries.items())]
    return (f'{{"sglang_version": {json.dumps(version)}, "witnesses": {{\n'
            + ",\n".join(lines) + "\n}}\n")


def uncovered_rules() -> list[str]:
    """Catalog rule ids with neither a witness nor an exclusion."""
    return [r.id for r in ALL_RULES if r.id not in BY_RULE and r.id not in EXCLUDED]


def _placeholdered(value: Any, models: Mapping[str, Path]) -> Any:
    text = json.dumps(value)
    for kind, path in sorted(models.items(), key=lambda kv: -len(str(kv[1]))):
        text = text.replace(str(path), "{" + kind + "}")
    return json.loads(text)


def _rule_in(report: Mapping[str, Any], rule_id: str) -> bool:
    return any(f.get("rule") == rule_id for f in report.get("findings") or [])


def judge(witness: Witness, version: str, fires: Mapping[str, Any], near: Mapping[str, Any],
          fires_report: Mapping[str, Any], near_report: Mapping[str, Any],
          models: Mapping[str, Path]) -> list[str]:
    """Why SGLang's results (`fires`, `near`, compact) and the wizard's reports do not witness
    the rule in `version`; empty when they do.

    Raising rules: SGLang raises at the site the release data names, and the wizard names the
    rule first with the same stage, exception and `where`; the near miss raises elsewhere or not
    at all, and the wizard does not report the rule. Silent rules: SGLang's resolved values show
    the `effect` (or its log line) only when the rule fires, and the wizard's values agree.
    Runtime traps: SGLang's argument code and the wizard agree on the verdict, and the wizard
    reports the trap only in the fires case.
    """
    rule = RULES_BY_ID[witness.rule]
    release = load_release(version)
    problems: list[str] = []
    fires_report = _placeholdered(fires_report, models)
    near_report = _placeholdered(near_report, models)
    shown = rule.sglang.for_release(release, rule.id, "")
    # Where SGLang's argparse refuses the case, the wizard's argparse check (R-ARGPARSE, run on
    # the release's real flag table) reports it before any rule of the catalog.
    names = {rule.id, "R-ARGPARSE"} if shown.stage == "argparse" else {rule.id}
    if not any(_rule_in(fires_report, name) for name in names):
        problems.append("fires: the wizard does not report the rule")
    if _rule_in(near_report, witness.rule):
        problems.append("near: the wizard reports the rule")
    for side, result in (("fires", fires), ("near", near)):
        if result.get("runner_error"):
            problems.append(f"{side}: runner error {result.get('message')}")
    site = normalise_where(shown.where)
    if rule.sglang.exception is not None:
        raised = (fires.get("stage"), fires.get("exception"), normalise_where(fires.get("where")))
        if fires.get("verdict") != "error" or raised != (shown.stage, shown.exception, site):
            problems.append(f"fires: SGLang {fires.get('verdict')} {raised}, the release data "
                            f"says {(shown.stage, shown.exception, site)}")
        first = wizard_first_error(fires_report) or {}
        said = (first.get("stage"), first.get("exception"), normalise_where(first.get("where")))
        if first.get("rule") not in names or said != raised:
            problems.append(f"fires: the wizard's first error is {first.get('rule')} {said}, "
                            f"SGLang raised {raised}")
        if (near.get("verdict") == "error" and site is not None
                and normalise_where(near.get("where")) == site):
            problems.append(f"near: SGLang still raises at {site}")
        return problems
    for side, result, report in (("fires", fires, fires_report), ("near", near, near_report)):
        if result.get("verdict") != wizard_verdict(report):
            problems.append(f"{side}: SGLang {result.get('verdict')} "
                            f"({result.get('exception')} at {result.get('where')}), "
                            f"the wizard {wizard_verdict(report)}")
        for name, value in witness.effect.items():
            key = release_dest(name, release)
            sglang_value = (result.get("effective") or {}).get(key)
            wizard_value = (report.get("effective") or {}).get(key)
            if result.get("verdict") == "ok" and (sglang_value == value) != (side == "fires"):
                problems.append(f"{side}: SGLang {key} = {sglang_value!r}")
            if result.get("verdict") == "ok" and wizard_value != sglang_value:
                problems.append(f"{side}: {key}: SGLang {sglang_value!r}, wizard {wizard_value!r}")
        if witness.log is not None and bool(result.get("log")) != (side == "fires"):
            problems.append(f"{side}: SGLang's log {'lacks' if side == 'fires' else 'has'} "
                            f"{witness.log!r}")
    return problems
