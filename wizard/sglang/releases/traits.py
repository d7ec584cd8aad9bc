"""The behaviour switches of an SGLang release, typed (generated; do not edit).

Written by `wizard.conformance.onboard.write_traits_module` from the release data
(`data/*.json` `traits`, which `conformance add-release` derives from each wheel); the
field types are read from every release's values. `Release.behaviour` holds one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Traits:
    """One release's behaviour switches (see each release's `trait_origin`)."""

    adaptive_candidate_steps: list[int]
    adaptive_needs_explicit_topk_one: bool
    adaptive_steps_check: str
    adaptive_unsupported_flags: list[str]
    aiter_mem_fraction: dict[str, Any | None]
    aiter_mha_workspace: dict[str, int]
    aiter_moe_keeps_unshuffled: dict[str, Any]
    attention_backend_writes: list[list[Any]]
    attention_default: str
    attention_page_rules: list[list[Any | None]]
    backend_prefill_defaults: dict[str, list[Any]]
    breakable_deepep_reserve_mib: int
    chunked_prefill_24gb: int
    chunked_prefill_split_by_dp: bool
    config_read_first: bool
    config_reader: str
    context_len_ci_escape: bool
    deprecated_actions: dict[str, dict[str, dict[str, Any | None]]]
    deprecated_store_true: dict[str, dict[str, str]]
    deterministic_inference: dict[str, Any | None]
    dflash_disables_overlap: bool
    dflash_family_counts_as_topk_one: bool
    draft_head_shared_after_sizing: bool
    draft_in_static_pool: bool
    extra_buffer_check_skips_disabled_radix: bool
    extra_buffer_linear_backend: str | None
    fa3_fp8_e5m2_to_triton: bool
    fa4_page: dict[str, Any]
    fraction_tiers: dict[str, Any | None]
    gpt_oss_attention_backends: list[str]
    gpt_oss_mxfp4_moe_runner: dict[str, str]
    graph_reserve_by_role: bool
    hicache_before_attention: bool
    hicache_decode_fallback: str
    hicache_decode_sinks: bool
    hip_attention_default: dict[str, Any]
    hip_gpt_oss_attention: str | None
    hip_hybrid_spec_disables_radix: bool
    hybrid_lists: str
    hybrid_swa_rule: str
    mamba_auto_resolves_no_buffer: bool
    mis_disables_radix: bool
    mixed_chunk_off_algorithms: list[str]
    mla_sm100_default: bool
    model_config_at_args: list[str]
    moe_runner_aliases: list[dict[str, Any]]
    moe_runner_platform: list[dict[str, Any]]
    moe_runner_sm100: list[dict[str, Any]]
    ngram_disables_overlap: bool
    ngram_draft_tokens: Any | None
    ngram_sets_steps: bool
    nobuf_spec_disables_radix: bool
    nobuf_spec_disables_radix_archs: list[str]
    nsa_scaled_cell: bool
    online_fp8_keeps_unquantized: list[str]
    pp_layer_split: str
    pp_partition_checks: dict[str, Any]
    prefill_graph_default: str
    prefill_graph_mla_reserve_mib: int
    prefill_graph_off_on_hip: bool
    prefill_graph_off_when: list[str]
    prefill_graph_reserve: dict[str, Any | None]
    prefill_server_disables_graphs: bool
    quantization_compatible: dict[str, list[str]]
    quantization_methods: dict[str, list[str]]
    quantization_requantize: list[str]
    quantization_rocm: list[str]
    quantize_and_serve: dict[str, Any]
    qwen_hybrid_sm100_overrides_typed: bool
    qwen_hybrid_sm100_sets_page: bool
    qwen_hybrid_sm100_trtllm: bool
    radix_disables_overlap: list[str]
    sm100_mha_default: str
    small_card_graph_max_bs: list[int]
    spec_moe_runner_default: str
    spec_reserve_mib: int
    spec_v1_fallback_for_trees: bool
    spec_v2_overlap_algorithms: list[str]
    spec_v2_runs_trees: bool
    spec_v2_switch: str
    spec_v2_topk_algorithms: list[str]
    topk_page_backends: list[str]
    transformers_sets_rope_scaling: bool
    trio_skipped_when_adaptive: bool
    trtllm_disables_radix: list[str]
    trtllm_mha_gpu_any_backend: bool
    trtllm_mha_page_sizes: list[int]
    trtllm_mla_gpu_sm100_only: bool
    trtllm_mla_page_rule: bool
    unknown_algorithm_turns_off: bool
    upper_cases_algorithm: bool
    vlm_adjust_skips_decode: bool
    xpu_page: dict[str, Any]


NAMES: frozenset[str] = frozenset(Traits.__dataclass_fields__)
