"""SGLang's own resolution orders: which rule or silent default runs when.

Each order is a flat, ordered tuple of steps. A step is either a `Rule` from the catalog or a
`Resolver`: one of SGLang's silent defaults (page size None -> 1, the default attention backend,
...). SGLang has had two shapes: `ServerArgs.__post_init__` calling its `_handle_*` methods
(releases whose data says `resolution: post_init`) and `run_resolution_pipeline` over the
`arg_groups` hooks (`resolution: pipeline`), each followed by `check_server_args`. A release's
data picks the order; a located rule whose statement a release lacks is skipped there. See
reference §0 for why the order matters (hybrid-cache checks run before the speculative ones, the
attention backend is chosen from the *typed* topk).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from wizard.rules import catalog as c
from wizard.rules import deterministic as det
from wizard.rules import multinode as mn
from wizard.rules.arg_sites import platforms_of
from wizard.rules.attention import fa4_page_test, gpt_oss_checks_one_backend
from wizard.rules.common import algo, eagle_family, hip_attention_backend
from wizard.rules.draft import MULTI_LAYER_EAGLE_ARCHS
from wizard.rules.hybrid import QWEN_HYBRID_SM100, extra_buffer_supported, is_hybrid, strategy
from wizard.rules.model import Args, Ctx, Rule, auto_params
from wizard.rules.speculative import adaptive_candidate_steps
from wizard.sglang.releases import Release


@dataclass(frozen=True)
class Resolver:
    """A silent SGLang default or rewrite that needs no finding of its own."""

    name: str
    run: Callable[[Ctx, Args], None]


@dataclass(frozen=True)
class Gated:
    """A rule that stands at this point of the order only in the releases `where` accepts (the
    same check sits at different points in releases that share a template)."""

    rule: Rule | Resolver
    where: Callable[[Release], bool]


Step = Rule | Resolver | Gated


def _deterministic_at(position: str) -> tuple[Gated, ...]:
    """`_handle_deterministic_inference` where the release calls it (before or after the
    default attention backend is chosen; `wizard.rules.deterministic`)."""
    def here(release: Release) -> bool:
        return det.position(release) == position

    return (
        Gated(Resolver("_handle_deterministic_inference", det.fill), here),
        Gated(det.BACKEND, here),
        Gated(det.MLA, here),
        Gated(Resolver("deterministic inference: radix cache", det.radix), here),
    )

# SGLang defaults of the fields the rules read (ServerArgs dataclass defaults).
DEFAULTS: dict[str, object] = {
        "speculative_algorithm": None,
        "speculative_draft_model_path": None,
        "speculative_draft_model_revision": None,
        "speculative_num_steps": None,
        "speculative_eagle_topk": None,
        "speculative_num_draft_tokens": None,
        "speculative_moe_runner_backend": None,
        "moe_runner_backend": "auto",
        "speculative_skip_dp_mlp_sync": False,
        "speculative_adaptive": False,
        "speculative_ngram_max_bfs_breadth": 10,
        "speculative_ngram_min_bfs_breadth": 1,
        "speculative_ngram_max_match_window_size": 12,
        "speculative_ngram_external_corpus_path": None,
        "speculative_ngram_external_sam_budget": 0,
        "speculative_dflash_block_size": None,
        "speculative_dflash_draft_window_size": None,
        "speculative_token_map": None,
        "enable_multi_layer_eagle": False,
        "mamba_scheduler_strategy": "auto",
        "mamba_track_interval": 256,
        "attention_backend": None,
        "prefill_attention_backend": None,
        "decode_attention_backend": None,
        "page_size": None,
        "max_running_requests": None,
        "disable_overlap_schedule": False,
        "enable_mixed_chunk": False,
        "disable_radix_cache": False,
        "tp_size": 1,
        "dp_size": 1,
        "pp_size": 1,
        "enable_dp_attention": False,
        "enable_dp_lm_head": False,
        "device": None,
        "kv_cache_dtype": "auto",
        "mem_fraction_static": None,
        "model_path": None,
        "revision": None,
        "enable_lora": None,
        "lora_paths": None,
        "disaggregation_mode": "null",
        "speculative_use_rejection_sampling": False,
        "context_length": None,
        "quantization": None,
        "enable_hierarchical_cache": False,
        "moe_a2a_backend": "none",
        "enable_deterministic_inference": False,
        "rl_on_policy_target": None,
}


def defaults_for(release: Release) -> dict[str, object]:
    """`DEFAULTS` with the release's own flag defaults and its extra fields."""
    out = {**DEFAULTS, **{k: v for k, v in release.defaults.items() if k in DEFAULTS}}
    if release.attn_dp_field:
        out["attn_dp_size"] = 1
    return out


def _no_spec_or_topk_one(a: Args) -> bool:
    topk = a.get("speculative_eagle_topk")
    return topk is None or (topk == 1 and a.get("page_size") in (1, None))


def default_attention_backend(ctx: Ctx, a: Args) -> str:
    """SGLang's `_get_default_attn_backend` for the GPU kind, reading topk and page size as they are now."""
    gpu = ctx.gpu
    if a.get("device") == "cpu":
        return "torch_native"
    hip = (ctx.release.traits.get("hip_attention_default") or {}) if gpu.is_hip else {}
    if hip:
        return hip_attention_backend(ctx, a, hip)
    if not ctx.is_mla:
        # `is_fa3_default_architecture`: the release's list (unknown model or list: assume fa3)
        fa3_archs = ctx.release.arch_set("fa3_default")
        arch = ctx.facts.architecture if ctx.facts is not None else None
        fa3_default = not fa3_archs or arch is None or arch in fa3_archs
        if gpu.is_hopper and _no_spec_or_topk_one(a) and fa3_default:
            return "fa3"
        forced_one = ctx.release.trait("dflash_family_counts_as_topk_one") and str(
            a.get("speculative_algorithm") or ""
        ).upper() in (
            "DFLASH",
            "DSPARK",
        )
        sm100_mha = ctx.release.trait("sm100_mha_default")
        if sm100_mha == "blackwell_topk_none":
            # `is_blackwell() and is_no_spec_infer_or_topk_one(self)`: SM100 and SM120, and an
            # unset topk counts as one (auto-chosen later, maybe > 1: the trtllm topk error).
            if (gpu.is_sm100 or gpu.is_sm120) and _no_spec_or_topk_one(a):
                return "trtllm_mha"
        elif (
            sm100_mha == "typed_topk"
            and gpu.is_sm100
            and _no_spec_or_topk_one(a)
            and (
                a.get("speculative_algorithm") is None
                or a.get("speculative_eagle_topk") is not None
                or forced_one
            )
        ):
            return "trtllm_mha"
        if gpu.is_hip:
            return "aiter"
        has_sinks = ctx.facts is not None and bool(getattr(ctx.facts, "has_attention_sinks", False))
        return "triton" if has_sinks else "flashinfer"
    if gpu.is_hopper:
        return "fa3"
    if gpu.is_sm100:
        return "flashinfer"
    return "triton"


# ---------------------------------------------------------------------------------------------
# Resolvers


def _device(ctx: Ctx, a: Args) -> None:
    if a.get("device") is None:
        a.device = "cuda"


def _mamba_auto_no_buffer(ctx: Ctx, a: Args) -> None:
    if not ctx.release.trait("mamba_auto_resolves_no_buffer"):
        _mamba_auto_choose(ctx, a)
    elif a.get("mamba_scheduler_strategy") == "auto":
        a.mamba_scheduler_strategy = "no_buffer"


_MLA_SM100_ARCHS = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "KimiK25ForConditionalGeneration",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
    }
)
# The pipeline releases' model_overrides/qwen3_5.py registers the SM100 override for these too.
_QWEN_HYBRID_SM100_WIDE = QWEN_HYBRID_SM100 | {
    "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration",
}


def _model_specific(ctx: Ctx, a: Args) -> None:
    """Per-architecture writes of the model-specific step (attention backend, multi-layer EAGLE, radix)."""
    arch = ctx.arch
    no_backend = a.get("attention_backend") is None
    if (
        arch in _MLA_SM100_ARCHS
        and ctx.release.traits.get("mla_sm100_default", True)  # absent: data before the probe
        and ctx.gpu.is_sm100
        and no_backend
        and a.get("prefill_attention_backend") is None
        and a.get("decode_attention_backend") is None
    ):
        a.attention_backend = "trtllm_mla"
    if arch == "GptOssForCausalLM" and no_backend and (gpt_oss_checks_one_backend(ctx) or (
            a.get("prefill_attention_backend") is None
            and a.get("decode_attention_backend") is None)):
        # (the release whose assert reads `attention_backend` alone defaults it alone too)
        hip_backend = ctx.release.traits.get("hip_gpt_oss_attention") if ctx.gpu.is_hip else None
        a.attention_backend = (
            "trtllm_mha" if ctx.gpu.is_sm100 else "fa3" if ctx.gpu.is_hopper
            else hip_backend or "triton"
        )
    if arch in MULTI_LAYER_EAGLE_ARCHS and a.get("speculative_algorithm") == "EAGLE":
        a.enable_multi_layer_eagle = True
    sets_page = bool(ctx.release.trait("qwen_hybrid_sm100_sets_page"))
    if arch in ctx.release.arch_set("hybrid_no_radix"):
        a.disable_radix_cache = True
    if arch in (ctx.release.traits.get("radix_disables_overlap") or ()) and not a.get(
            "disable_radix_cache"):
        a.disable_overlap_schedule = True  # its mamba radix cache cannot overlap (that release)
    qwen_archs = (_QWEN_HYBRID_SM100_WIDE if sets_page
                  else QWEN_HYBRID_SM100 & ctx.release.arch_set("qwen_hybrid_sm100"))
    overrides = bool(ctx.release.trait("qwen_hybrid_sm100_overrides_typed"))
    if arch in qwen_archs and ctx.gpu.is_sm100 and (
        a.get("attention_backend") is None or overrides
    ):
        # trtllm_mha needs pages of 16+; only radix cache on with neither extra_buffer nor
        # speculative decoding needs page size 1 (the monolith's model-specific step, later qwen3_5.py).
        if not sets_page:
            extra_buffer = a.get("mamba_scheduler_strategy") == "extra_buffer"
        else:
            extra_buffer = a.get("mamba_scheduler_strategy") in (
                "extra_buffer",
                "extra_buffer_lazy",
            ) and not a.get("disable_radix_cache")
        needs_page_one = (
            not extra_buffer
            and not a.get("disable_radix_cache")
            and a.get("speculative_algorithm") is None
        )
        trtllm = (
            ctx.release.trait("qwen_hybrid_sm100_trtllm")
            and default_attention_backend(ctx, a) == "trtllm_mha"
            and not needs_page_one
        )
        a.attention_backend = "trtllm_mha" if trtllm else "triton"
        if sets_page:
            a.page_size = 64 if trtllm else 1
    if (arch in (ctx.release.traits.get("trtllm_disables_radix") or ()) and ctx.gpu.is_sm100
            and a.get("attention_backend") == "trtllm_mha" and not a.get("disable_radix_cache")):
        # trtllm_mha cannot run the page size 1 that model's mamba radix cache needs
        a.disable_radix_cache = True
        a.disable_overlap_schedule = False


def _hip_hybrid_spec_no_radix(ctx: Ctx, a: Args) -> None:
    """Where the release has the ROCm branch beside R-MAMBA-NOBUF-SPEC's ValueError, a ROCm GPU
    gets the radix cache disabled instead of the refusal (extra_buffer is unsupported there);
    releases whose no_buffer branch disables it for speculative decoding on every platform
    (trait `nobuf_spec_disables_radix`: "... is not supported with radix cache yet") do the
    same (where that rewrite sits in one architecture's branch, trait
    `nobuf_spec_disables_radix_archs`, only for those)."""
    traits = ctx.release.traits
    only = traits.get("nobuf_spec_disables_radix_archs") or ()
    disables = (traits.get("nobuf_spec_disables_radix") and (not only or ctx.arch in only)) or (
        ctx.gpu.is_hip and traits.get("hip_hybrid_spec_disables_radix"))
    if (disables and is_hybrid(ctx) and strategy(a) == "no_buffer"
            and not a.get("disable_radix_cache") and algo(a) is not None):
        a.disable_radix_cache = True


def _mamba_auto_choose(ctx: Ctx, a: Args) -> None:
    if not is_hybrid(ctx) or a.get("disable_radix_cache"):
        return
    if a.get("mamba_scheduler_strategy") == "auto":
        wants_overlap = not a.get("disable_overlap_schedule")
        wants_paging = (a.get("page_size") or 0) > 1
        if (wants_overlap or wants_paging) and extra_buffer_supported(ctx, a):
            a.mamba_scheduler_strategy = "extra_buffer"
        else:
            a.mamba_scheduler_strategy = "no_buffer"
            a.disable_overlap_schedule = True


def _attention_default(ctx: Ctx, a: Args) -> None:
    # Releases whose argument code picks no default (the model runner does, at load time) keep
    # `attention_backend` None here; data written before the trait existed: the argument code.
    if ctx.release.traits.get("attention_default", "server_args") != "server_args":
        if a.get("device") == "cpu" and a.get("attention_backend") is None:
            a.attention_backend = "intel_amx"  # their CPU branch is the one default they pick
        return
    if a.get("prefill_attention_backend") is not None and a.get(
        "prefill_attention_backend"
    ) == a.get("decode_attention_backend"):
        a.attention_backend = a.prefill_attention_backend
    if a.get("attention_backend") is None:
        a.attention_backend = default_attention_backend(ctx, a)


def _attention_misc(ctx: Ctx, a: Args) -> None:
    if (a.get("attention_backend") == "fa3" and a.get("kv_cache_dtype") == "fp8_e5m2"
            and ctx.release.behaviour.fa3_fp8_e5m2_to_triton):
        a.attention_backend = "triton"
    if fa4_page_test(ctx, a) and not ctx.is_mla:  # the release's own test (trait `fa4_page`)
        a.page_size = 128


def _page_default(ctx: Ctx, a: Args) -> None:
    if a.get("page_size") is None:
        a.page_size = 1


def _multi_item_scoring(ctx: Ctx, a: Args) -> None:
    """`--enable-mis` turns the radix cache off (where the release's scoring step does)."""
    if a.get("enable_mis") and ctx.release.traits.get("mis_disables_radix"):
        a.disable_radix_cache = True


def _hicache_decode(ctx: Ctx, a: Args) -> None:
    """The hicache step's decode backend with the kernel I/O backend (FA3 decoding cannot read
    the host cache): an unset decode backend becomes flashinfer (triton for MLA off SM100, and
    with attention sinks where the release checks them: `hicache_decode_sinks`), where the
    release does it."""
    how = ctx.release.trait("hicache_decode_fallback")
    if how == "none" or not a.get("enable_hierarchical_cache"):
        return
    if (a.get("hicache_io_backend") or "kernel") != "kernel" or a.get(
            "hicache_mem_layout") == "page_first_direct":
        return
    if a.get("decode_attention_backend") is not None:
        return
    if how == "fa3_only" and a.get("attention_backend") != "fa3":
        return
    if ctx.is_mla:
        a.decode_attention_backend = "flashinfer" if ctx.gpu.is_sm100 else "triton"
    else:
        # `is_flashinfer_available()` is False on ROCm (flashinfer is a CUDA package)
        sinks = ctx.facts is not None and ctx.facts.has_attention_sinks
        a.decode_attention_backend = ("triton" if ctx.gpu.is_hip or (
            sinks and ctx.release.traits.get("hicache_decode_sinks")) else "flashinfer")


def _dp_off_without_dp(ctx: Ctx, a: Args) -> None:
    if a.get("dp_size", 1) == 1:
        a.enable_dp_attention = False


def _dp_deprecated(ctx: Ctx, a: Args) -> None:
    """`_handle_deprecated_dp_attention`: `--dp-size N --enable-dp-attention` is `--attn-dp-size
    N`, unless `--attn-dp-size` is typed too (then both stand, and SGLang's next check refuses
    replicas with attention DP)."""
    if not ctx.release.attn_dp_field:
        return  # no `--attn-dp-size` yet: `--dp-size` with the flag is attention DP itself
    if (a.get("enable_dp_attention") and a.get("dp_size", 1) > 1
            and (a.get("attn_dp_size") or 1) == 1):
        a.attn_dp_size = a.dp_size
        a.dp_size = 1
    a.enable_dp_attention = (a.get("attn_dp_size") or 1) > 1


def _dp_off_without_dp_pipeline(ctx: Ctx, a: Args) -> None:
    """`_data_parallelism_defaults` of the pipeline releases without `--attn-dp-size`."""
    if not ctx.release.attn_dp_field:
        _dp_off_without_dp(ctx, a)


def _pp(ctx: Ctx, a: Args) -> None:
    if a.get("pp_size", 1) > 1:
        a.disable_overlap_schedule = True


def _moe_runner_alias(ctx: Ctx, a: Args) -> None:
    """MoE runner names that stand for other settings, rewritten by the pipeline's first hook
    (trait `moe_runner_aliases`: `--moe-runner-backend megamoe` is `auto` with the `megamoe`
    all-to-all backend, where the release has the alias)."""
    for entry in ctx.release.traits.get("moe_runner_aliases") or ():
        if a.get("moe_runner_backend") == entry["alias"]:
            for name, value in entry["writes"].items():
                a[name] = value
            return


def _moe_runner_default(ctx: Ctx, a: Args) -> None:
    if a.get("speculative_moe_runner_backend") is None:
        runner = a.get("moe_runner_backend")
        how = ctx.release.trait("spec_moe_runner_default")
        if how == "none":
            return  # the release leaves it unset
        if how == "trtllm_to_auto":
            a.speculative_moe_runner_backend = (
                "auto" if runner in ("flashinfer_trtllm", "flashinfer_trtllm_routed") else runner
            )
        elif how == "copy":
            a.speculative_moe_runner_backend = runner
        else:
            a.speculative_moe_runner_backend = (
                "flashinfer_trtllm" if runner == "flashinfer_megamoe"
                else "auto" if str(runner).startswith("lora_") else runner
            )


def _moe_runner_platform_default(ctx: Ctx, a: Args) -> None:
    """The MoE runner the release sets for any model when none is chosen, for a quantization on
    a platform (trait `moe_runner_platform`: `modelopt_fp4` on SM120 -> flashinfer_cutlass;
    `nvfp4_online`, which SM100 alone runs, -> flashinfer_trtllm; no probes: any platform)."""
    if a.get("moe_runner_backend") != "auto":
        return
    on = platforms_of(ctx)
    for entry in ctx.release.traits.get("moe_runner_platform") or ():
        if a.get("quantization") == entry["quantization"] and (
                not entry["probes"] or on & set(entry["probes"])):
            a.moe_runner_backend = entry["runner"]
            return


def _moe_runner_model_default(ctx: Ctx, a: Args) -> None:
    """The model-specific MoE runner of the two launches users type most on Blackwell (GPT-OSS
    with its MXFP4 checkpoint; DeepSeek-V3 with FP8 on SM100), where the release sets it."""
    if a.get("moe_runner_backend") != "auto" or ctx.facts is None:
        return
    quant = ctx.facts.checkpoint_quant_method
    probed = [entry for entry in ctx.release.traits.get("moe_runner_sm100") or ()
              if ctx.arch in entry["archs"]]
    if probed:
        # The model-specific step's SM100 runner, read from the release's source: the typed
        # quantization, else the checkpoint's, must be one the branch names (or none).
        if not ctx.gpu.is_sm100:
            return
        a2a = a.get("moe_a2a_backend", "none") in (None, "none")
        typed = a.get("quantization")
        unset = typed is not None and str(typed).lower() == "unquant"
        method = None if unset else (str(typed).lower() if typed is not None else quant)
        for entry in probed:
            if not (a2a or entry.get("any_a2a")):
                continue
            read = None if entry.get("typed_only") and typed is None else method
            if (entry.get("any_quantization") or read in entry["quantizations"]
                    or (read is None and entry["unquantized"])):
                a.moe_runner_backend = entry["runner"]
                return
        return
    if ctx.arch == "GptOssForCausalLM" and quant == "mxfp4":
        runners = ctx.release.trait("gpt_oss_mxfp4_moe_runner") or {}
        gpu = "sm100" if ctx.gpu.is_sm100 else "sm120" if ctx.gpu.is_sm120 else None
        if gpu in runners:
            a.moe_runner_backend = runners[gpu]


def _upper_algorithm(ctx: Ctx, a: Args) -> None:
    if a.get("speculative_algorithm") is not None:
        a.speculative_algorithm = str(a.speculative_algorithm).upper()


def _unknown_algorithm_off(ctx: Ctx, a: Args) -> None:
    if a.get("speculative_algorithm") not in (None, *ctx.release.algorithms):
        a.speculative_algorithm = None


def _dflash_defaults(ctx: Ctx, a: Args) -> None:
    if a.get("speculative_algorithm") != "DFLASH":
        return
    a.speculative_num_steps = 1
    a.speculative_eagle_topk = 1
    if a.get("speculative_dflash_block_size") is not None:
        a.speculative_num_draft_tokens = a.speculative_dflash_block_size
    if a.get("speculative_num_draft_tokens") is None:
        block = None
        if ctx.draft_facts is not None:
            block = getattr(ctx.draft_facts, "dflash_block_size", None)
        a.speculative_num_draft_tokens = block or 16
    if ctx.release.trait("dflash_disables_overlap"):
        a.disable_overlap_schedule = True


def _cpu_overlap(ctx: Ctx, a: Args) -> None:
    if a.get("device") == "cpu":
        a.disable_overlap_schedule = True


def _auto_params(ctx: Ctx, a: Args) -> None:
    if (
        eagle_family(a)
        and a.get("speculative_num_steps") is None
        and a.get("speculative_eagle_topk") is None
        and a.get("speculative_num_draft_tokens") is None
    ):
        a.speculative_num_steps, a.speculative_eagle_topk, a.speculative_num_draft_tokens = (
            auto_params(ctx, a)
        )


def _topk1_fill(ctx: Ctx, a: Args) -> None:
    if (
        eagle_family(a)
        and a.get("speculative_eagle_topk") == 1
        and a.get("speculative_num_steps") is not None
        and a.get("speculative_num_draft_tokens") is None
    ):
        a.speculative_num_draft_tokens = a.speculative_num_steps + 1


def _ngram(ctx: Ctx, a: Args) -> None:
    if a.get("speculative_algorithm") != "NGRAM":
        return
    if ctx.release.trait("ngram_disables_overlap"):
        a.disable_overlap_schedule = True
    a.enable_mixed_chunk = False
    a.speculative_eagle_topk = a.speculative_ngram_max_bfs_breadth
    if a.get("speculative_num_draft_tokens") is None:
        # the release's own number, or the flag whose value it copies (read from its source)
        default = ctx.release.trait("ngram_draft_tokens")
        a.speculative_num_draft_tokens = a.get(default) if isinstance(default, str) else default
    if (
        ctx.release.trait("ngram_sets_steps")
        and a.get("speculative_num_steps") is None
        and a.speculative_eagle_topk
    ):
        a.speculative_num_steps = a.speculative_num_draft_tokens // a.speculative_eagle_topk


def _adaptive_init(ctx: Ctx, a: Args) -> None:
    """`_init_adaptive_speculative_params`: topk 1, the middle candidate step, draft = steps + 1
    (only in releases that have it; elsewhere adaptive changes no value here)."""
    if not a.get("speculative_adaptive") or ctx.release.trait("adaptive_steps_check") != "init":
        return
    if a.get("speculative_eagle_topk") is None:
        a.speculative_eagle_topk = 1
    if a.get("speculative_num_steps") is None:
        candidates = adaptive_candidate_steps(ctx)
        a.speculative_num_steps = candidates[len(candidates) // 2] if candidates else 3
    a.speculative_num_draft_tokens = a.speculative_num_steps + 1


R = Resolver


def _hicache_first(release: Release) -> bool:
    """The release calls `_handle_hicache` before `_handle_attention_backend_compatibility`
    (trait `hicache_before_attention`, read from the order of the calls)."""
    return bool(release.traits.get("hicache_before_attention"))


POST_INIT_ORDER: tuple[Step, ...] = (
    Gated(c.ALGO_CHOICE, lambda release: release.algorithm_choices),  # argparse, first
    R("device", _device),
    c.MAMBA_AUTO_NO_BUFFER,
    R("_handle_missing_default_values", _mamba_auto_no_buffer),
    c.QUANTIZE_SERVE_METHOD,  # ModelConfig.__init__: _validate_quantize_and_serve_config first
    c.QUANTIZE_SERVE_DISABLED,
    c.MODEL_TYPE_UNKNOWN,
    c.CONTEXT_LEN,  # ModelConfig: _derive_context_length, _derive_model_shapes, _verify_quantization
    c.MLA_ROPE_FACTOR,
    c.QUANT_MISMATCH,
    c.QUANT_UNKNOWN,
    c.QUANT_ROCM,
    R("_handle_model_specific_adjustments", _model_specific),
    R("model-specific MoE runner", _moe_runner_model_default),
    R("platform MoE runner", _moe_runner_platform_default),
    c.GPT_OSS_ATTENTION,
    c.MAMBA_EXTRA_UNSUPPORTED,
    c.MAMBA_EXTRA_NORADIX,
    c.MAMBA_EXTRA_DEVICE,
    c.MAMBA_TRACK_INTERVAL,
    c.MAMBA_EXTRA_PAGE,
    c.MAMBA_FLA_CHUNK,
    c.MAMBA_NOBUF_PAGE,
    c.MAMBA_NOBUF_OVERLAP,
    R("no radix cache for speculative hybrids (ROCm, or where located)", _hip_hybrid_spec_no_radix),
    c.MAMBA_NOBUF_SPEC,
    *_deterministic_at("before_default"),
    # where the release calls `_handle_hicache` before the attention step (the trait)
    Gated(R("_handle_hicache", _hicache_decode), _hicache_first),
    R("_handle_attention_backend_compatibility", _attention_default),
    c.FLEX_NO_SPEC,
    c.TRTLLM_MLA_GPU,
    c.TRTLLM_MLA_PAGE,
    c.BACKEND_PREFILL,
    c.TRTLLM_MHA_PREFILL_GPU,
    c.TRTLLM_PAGE,
    c.BACKEND_PAGE,
    c.BACKEND_WRITES,
    R("attention page rules", _attention_misc),
    c.XPU_PAGE,
    c.FA4_DECODE,
    R("_handle_page_size", _page_default),
    R("_handle_multi_item_scoring", _multi_item_scoring),
    c.MIS_BACKEND,
    Gated(R("_handle_hicache", _hicache_decode), lambda release: not _hicache_first(release)),
    R("_handle_data_parallelism", _dp_off_without_dp),
    c.DPATTN_TP_DIVISIBLE,
    R("_handle_pipeline_parallelism", _pp),
    R("speculative MoE runner default", _moe_runner_default),
    c.MOE_RUNNER,
    R("upper-case algorithm", _upper_algorithm),
    # without an argparse choice list the name is checked when the speculative step starts
    Gated(c.ALGO_CHOICE, lambda release: not release.algorithm_choices),
    c.DRAFT_PATH_MISSING_23,
    c.NEXTN_ALIAS,
    c.SKIP_DP_MLP_SYNC,
    c.DFLASH_DPATTN,
    c.DFLASH_PP,
    c.DFLASH_DRAFT,
    c.DFLASH_BLOCK_MISMATCH,
    R("DFLASH defaults", _dflash_defaults),
    c.STANDALONE_DPATTN,
    c.MAXREQ_48,
    c.SPEC_V2_OVERLAP_ON,
    c.SPEC_V2_TOPK,
    c.SPEC_V1_SELECT,
    c.MIXED_CHUNK_OFF,
    c.DRAFT_AUTO,
    c.DRAFT_NOT_NEEDED,
    c.MTP_PAGE_FLASHINFER,  # where located: inside the MTP draft-path branch
    c.SPEC_STEPS_TRIO,
    c.AUTO_PARAMS,
    R("auto_choose_speculative_params", _auto_params),
    c.TOPK_NONE_TYPEERROR_TRTLLM,
    c.TRTLLM_TOPK,
    c.TOPK1_REWRITE,
    R("draft tokens = steps + 1 when unset", _topk1_fill),
    c.TOPK_NONE_TYPEERROR,
    c.TOPK_PAGE,
    c.NGRAM_DEVICE,
    c.NGRAM_TOPK,
    R("NGRAM defaults", _ngram),
    c.NGRAM_CORPUS_BUDGET,
    c.NGRAM_CORPUS_LIMIT,
    c.NGRAM_PAGE,
    c.NGRAM_DPATTN,
    c.ADAPTIVE_OFF,
    c.ADAPTIVE_STEPS_23,  # the speculative hook's last check, where located
    R("_init_adaptive_speculative_params", _adaptive_init),
    c.HICACHE_NO_RADIX,  # _handle_cache_compatibility
    *_deterministic_at("after_default"),
    mn.MULTINODE_TP,  # check_server_args starts here
    c.PP_SPEC,
    mn.MULTINODE_DP,
    c.PAGE_ZERO,  # the same assert, Python's error with a page size of 0
    c.CHUNKED_PAGE,
    c.LORA_SPEC,
)

def _config_read_first(release: Release) -> bool:
    """A pipeline step reads config.json before the model config is built (trait)."""
    return bool(release.traits.get("config_read_first"))


PIPELINE_ORDER: tuple[Step, ...] = (
    R("handle_mega_moe", _moe_runner_alias),  # the pipeline's first hook
    R("handle_deprecated_dp_attention", _dp_deprecated),
    R("device", _device),
    Gated(c.MODEL_TYPE_UNKNOWN, _config_read_first),
    c.QUANTIZE_SERVE_METHOD,  # ModelConfig.__init__: _validate_quantize_and_serve_config first
    c.QUANTIZE_SERVE_DISABLED,
    Gated(c.MODEL_TYPE_UNKNOWN, lambda release: not _config_read_first(release)),
    c.CONTEXT_LEN,
    c.MLA_ROPE_FACTOR,
    c.QUANT_MISMATCH,
    c.QUANT_UNKNOWN,
    c.QUANT_ROCM,
    R("handle_model_specific_adjustments", _model_specific),
    R("model-specific MoE runner", _moe_runner_model_default),
    R("platform MoE runner", _moe_runner_platform_default),
    c.GPT_OSS_ATTENTION,
    R("_mamba_radix_cache_resolution", _mamba_auto_choose),
    c.MAMBA_NOT_HYBRID,
    c.MAMBA_EXTRA_UNSUPPORTED,
    c.MAMBA_EXTRA_DEVICE,  # `_validate_mamba_extra_buffer` where it leaves ROCm out
    c.MAMBA_TRACK_INTERVAL,
    c.MAMBA_EXTRA_PAGE,
    c.MAMBA_NOBUF_PAGE_23,
    c.MAMBA_NOBUF_OVERLAP_23,
    c.MAMBA_NOBUF_TRTLLM_23,
    *_deterministic_at("before_default"),
    R("handle_attention_backend_compatibility", _attention_default),
    c.FLEX_NO_SPEC,
    c.BACKEND_PREFILL,
    c.TRTLLM_MHA_PREFILL_GPU,
    c.TRTLLM_MLA_GPU,  # raised right before its page rewrite (witnessed on real SGLang)
    c.TRTLLM_MLA_PAGE,
    c.FA4_PAGE_23,
    c.TRTLLM_PAGE,
    c.BACKEND_PAGE,
    c.BACKEND_WRITES,
    R("attention page rules", _attention_misc),
    c.XPU_PAGE,
    R("_page_size_default", _page_default),
    R("handle_multi_item_scoring", _multi_item_scoring),
    c.MIS_BACKEND,
    R("handle_hicache", _hicache_decode),
    mn.ATTN_DP_WITH_DP,  # handle_data_parallelism raises before its tp % attn_dp assert
    R("handle_data_parallelism", _dp_off_without_dp_pipeline),
    c.DPATTN_TP_DIVISIBLE,
    R("_pipeline_parallel_overlap_disable", _pp),
    R("_speculative_moe_runner_default", _moe_runner_default),
    R("upper-case algorithm", _upper_algorithm),
    c.ALGO_CHOICE,
    R("unknown algorithm stops", _unknown_algorithm_off),
    c.DRAFT_PATH_MISSING_23,
    c.SINK_NEEDS_WINDOW_23,
    c.NEXTN_ALIAS,
    c.SKIP_DP_MLP_SYNC,
    c.ADAPTIVE_OFF,
    c.ADAPTIVE_STEPS_23,
    R("_init_adaptive_speculative_params", _adaptive_init),
    c.DFLASH_DPATTN,
    c.DFLASH_PP,
    c.DFLASH_DRAFT,
    c.DFLASH_BLOCK_MISMATCH,
    R("DFLASH defaults", _dflash_defaults),
    c.STANDALONE_DPATTN,
    c.MAXREQ_48,
    R("_disable_overlap_schedule_for_cpu", _cpu_overlap),
    c.MIXED_CHUNK_OFF,
    c.DRAFT_AUTO,
    c.DRAFT_NOT_NEEDED,
    c.SPEC_STEPS_TRIO,
    c.AUTO_PARAMS,
    R("_auto_choose_speculative_params", _auto_params),
    c.TOPK_NONE_TYPEERROR_TRTLLM,
    c.TRTLLM_TOPK,
    c.REJECTION_TOPK_23,
    c.TOPK1_REWRITE,
    R("draft tokens = steps + 1 when unset", _topk1_fill),
    c.TOPK_NONE_TYPEERROR,
    c.TOPK_PAGE,
    c.NGRAM_DEVICE,
    c.NGRAM_TOPK,
    R("_handle_ngram", _ngram),
    c.NGRAM_CORPUS_BUDGET,
    c.NGRAM_CORPUS_LIMIT,
    c.NGRAM_PAGE,
    c.NGRAM_DPATTN,
    c.HICACHE_NO_RADIX,  # handle_cache_compatibility
    *_deterministic_at("after_default"),
    c.NVIDIA_MEGAKERNEL,  # the kernel plugins' hooks, after handle_model_capability_adjustments
    c.AMD_MONOKERNEL,
    mn.MULTINODE_TP,  # check_server_args starts here
    c.PP_SPEC_ALGO_23,
    c.PP_SPEC,
    mn.MULTINODE_DP,
    c.PAGE_ZERO,  # the same assert, Python's error with a page size of 0
    c.CHUNKED_PAGE,
    c.LORA_SPEC,
)

ORDERS: dict[str, tuple[Step, ...]] = {"post_init": POST_INIT_ORDER, "pipeline": PIPELINE_ORDER}
