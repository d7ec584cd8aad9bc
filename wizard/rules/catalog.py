"""The rule registry: every SGLang rule the wizard knows, in the order the engine reports them.

The rules are data (id, versions, what SGLang raises where, why, fixes), one topic module each:

- `wizard.rules.speculative`: the EAGLE family: algorithm name, spec v1 / v2, steps / topk /
  draft tokens, the draft tree, adaptive steps, what speculative decoding switches off or sets;
- `wizard.rules.draft`: draft models and built-in MTP, what a draft must match in the target;
- `wizard.rules.algorithms`: DFLASH, STANDALONE and NGRAM;
- `wizard.rules.hybrid`: hybrid mamba models (the mamba radix-cache strategy);
- `wizard.rules.attention`: attention backends and the page sizes they force, chunked prefill;
- `wizard.rules.parallelism`: tp against attention DP, pipeline parallelism with speculation;
- `wizard.rules.model_config`: model type, MLA rope factor, context length, --quantize-and-serve;
- `wizard.rules.quantization`: `--quantization` against the checkpoint and the platform;
- `wizard.rules.cache`: the hierarchical cache;
- `wizard.rules.plugins`: flags served by out-of-tree kernel plugins;
- `wizard.rules.gpu_memory`: the GPU memory plan;
- `wizard.rules.inputs`: the wizard's own inputs (release data, GPU kind, model facts,
  deprecated flags);
- `wizard.rules.multinode`: launches over several nodes;
- `wizard.rules.arg_sites`: R-ARG-SITE, the generic family: SGLang's checks of flags as typed,
  one site list per release read from its source (`generic_sites` in the release data);
- `wizard.rules.common`: what several topics read (algorithm, backends, DP attention, wording).

`rule_for_location` finds the rule behind a `file:line` from an SGLang traceback: the line numbers
are the raising statement in the SGLang wheel of that version (paths relative to the installed
package). Rules whose stage is `runtime` or `wizard` are not checked by SGLang's argument code:
they are traps SGLang only hits after loading weights, or advice.
"""

from __future__ import annotations

from wizard.rules import deterministic as det
from wizard.rules import multinode as mn
from wizard.rules.algorithms import (
    DFLASH_BLOCK_MISMATCH,
    DFLASH_DPATTN,
    DFLASH_DRAFT,
    DFLASH_PP,
    NGRAM_CORPUS_BUDGET,
    NGRAM_CORPUS_LIMIT,
    NGRAM_DEVICE,
    NGRAM_DPATTN,
    NGRAM_PAGE,
    NGRAM_TOPK,
    STANDALONE_DPATTN,
)
from wizard.rules.arg_sites import GENERIC
from wizard.rules.attention import (
    BACKEND_PAGE,
    BACKEND_PREFILL,
    BACKEND_WRITES,
    CHUNKED_PAGE,
    FA4_DECODE,
    FA4_PAGE_23,
    FLEX_NO_SPEC,
    GPT_OSS_ATTENTION,
    MIS_BACKEND,
    PAGE_ZERO,
    TRTLLM_MHA_PREFILL_GPU,
    TRTLLM_MLA_GPU,
    TRTLLM_MLA_PAGE,
    TRTLLM_PAGE,
    XPU_PAGE,
)
from wizard.rules.cache import HICACHE_NO_RADIX
from wizard.rules.checks import CHECKS
from wizard.rules.deprecated_values import DEPRECATED_VALUE
from wizard.rules.draft import (
    DRAFT_AUTO,
    DRAFT_FACTS_MISSING,
    DRAFT_HIDDEN_MISMATCH,
    DRAFT_MISSING,
    DRAFT_NOT_NEEDED,
    DRAFT_PATH_MISSING_23,
    DRAFT_VOCAB_MISMATCH,
    EAGLE3_DRAFT_AS_EAGLE,
    EAGLE3_OWN_MTP,
    MOE_RUNNER,
    MTP_PAGE_FLASHINFER,
    MULTI_LAYER_EAGLE,
    NEXTN_NO_MTP,
    SINK_NEEDS_WINDOW_23,
)
from wizard.rules.gpu_memory import MEMORY_NO_FIT, MEMORY_PLAN
from wizard.rules.hybrid import (
    MAMBA_AUTO_NO_BUFFER,
    MAMBA_EXTRA_DEVICE,
    MAMBA_EXTRA_NORADIX,
    MAMBA_EXTRA_PAGE,
    MAMBA_EXTRA_UNSUPPORTED,
    MAMBA_FLA_CHUNK,
    MAMBA_NOBUF_OVERLAP,
    MAMBA_NOBUF_OVERLAP_23,
    MAMBA_NOBUF_PAGE,
    MAMBA_NOBUF_PAGE_23,
    MAMBA_NOBUF_SPEC,
    MAMBA_NOBUF_TRTLLM_23,
    MAMBA_NOT_HYBRID,
    MAMBA_TRACK_INTERVAL,
    TRACK_INTERVAL_FINAL,
)
from wizard.rules.inputs import (
    DEPRECATED_FLAG,
    FACTS_MISSING,
    GPU_ASSUMED,
    SPEC_WITHOUT_ALGORITHM,
    VERSION_NEAREST,
)
from wizard.rules.model import Check, Rule
from wizard.rules.model_config import (
    CONTEXT_LEN,
    MLA_ROPE_FACTOR,
    MODEL_TYPE_UNKNOWN,
    QUANTIZE_SERVE_DISABLED,
    QUANTIZE_SERVE_METHOD,
)
from wizard.rules.parallelism import (
    DPATTN_TP_DIVISIBLE,
    PP_PARTITION,
    PP_SPEC,
    PP_SPEC_ALGO_23,
    SIZE_NOT_POSITIVE,
)
from wizard.rules.plugins import AMD_MONOKERNEL, NVIDIA_MEGAKERNEL
from wizard.rules.quantization import QUANT_MISMATCH, QUANT_ROCM, QUANT_UNKNOWN
from wizard.rules.speculative import (
    ADAPTIVE_OFF,
    ADAPTIVE_STEPS_23,
    ALGO_CHOICE,
    AUTO_PARAMS,
    LORA_SPEC,
    MAXREQ_48,
    MIXED_CHUNK_OFF,
    NEXTN_ALIAS,
    REJECTION_TOPK_23,
    SKIP_DP_MLP_SYNC,
    SPEC_STEPS_TRIO,
    SPEC_V1_SELECT,
    SPEC_V2_ENV,
    SPEC_V2_OVERLAP_ON,
    SPEC_V2_TOPK,
    TOPK1_REWRITE,
    TOPK_NONE_TYPEERROR,
    TOPK_NONE_TYPEERROR_TRTLLM,
    TOPK_PAGE,
    TREE_CAPACITY,
    TRTLLM_TOPK,
    V2_TREE,
)
from wizard.sglang.releases import release_for

RUNTIME_RULES: tuple[Rule, ...] = (
    SIZE_NOT_POSITIVE,
    PP_PARTITION,
    MEMORY_NO_FIT,
    MEMORY_PLAN,
    V2_TREE,
    TRACK_INTERVAL_FINAL,
    TREE_CAPACITY,
    NEXTN_NO_MTP,
    DRAFT_MISSING,
    EAGLE3_DRAFT_AS_EAGLE,
    EAGLE3_OWN_MTP,
    DRAFT_HIDDEN_MISMATCH,
    DRAFT_VOCAB_MISMATCH,
    *mn.RUNTIME_RULES,
)


CONTEXT_RULES: tuple[Rule, ...] = (
    VERSION_NEAREST,
    GPU_ASSUMED,
    FACTS_MISSING,
    SPEC_V2_ENV,
    MULTI_LAYER_EAGLE,
    DEPRECATED_FLAG,
    SPEC_WITHOUT_ALGORITHM,
    DRAFT_FACTS_MISSING,
)


ALL_RULES: tuple[Rule, ...] = (
    *det.RULES,
    SPEC_V2_TOPK,
    FA4_DECODE,
    QUANTIZE_SERVE_METHOD,
    QUANTIZE_SERVE_DISABLED,
    MODEL_TYPE_UNKNOWN,
    DPATTN_TP_DIVISIBLE,
    FA4_PAGE_23,
    XPU_PAGE,
    SINK_NEEDS_WINDOW_23,
    REJECTION_TOPK_23,
    ALGO_CHOICE,
    MAMBA_AUTO_NO_BUFFER,
    MAMBA_EXTRA_UNSUPPORTED,
    MAMBA_NOT_HYBRID,
    MAMBA_EXTRA_NORADIX,
    MAMBA_EXTRA_DEVICE,
    MAMBA_TRACK_INTERVAL,
    MAMBA_EXTRA_PAGE,
    MAMBA_FLA_CHUNK,
    MAMBA_NOBUF_PAGE,
    MAMBA_NOBUF_OVERLAP,
    MAMBA_NOBUF_SPEC,
    MAMBA_NOBUF_PAGE_23,
    MAMBA_NOBUF_OVERLAP_23,
    MAMBA_NOBUF_TRTLLM_23,
    FLEX_NO_SPEC,
    TRTLLM_MLA_GPU,
    TRTLLM_MHA_PREFILL_GPU,
    TRTLLM_PAGE,
    TRTLLM_MLA_PAGE,
    BACKEND_PREFILL,
    BACKEND_PAGE,
    BACKEND_WRITES,
    MOE_RUNNER,
    NEXTN_ALIAS,
    SKIP_DP_MLP_SYNC,
    DFLASH_DPATTN,
    DFLASH_PP,
    DFLASH_DRAFT,
    DFLASH_BLOCK_MISMATCH,
    STANDALONE_DPATTN,
    MAXREQ_48,
    SPEC_V2_OVERLAP_ON,
    SPEC_V1_SELECT,
    MIXED_CHUNK_OFF,
    DRAFT_AUTO,
    DRAFT_NOT_NEEDED,
    MTP_PAGE_FLASHINFER,
    SPEC_STEPS_TRIO,
    AUTO_PARAMS,
    TOPK_NONE_TYPEERROR_TRTLLM,
    TOPK_NONE_TYPEERROR,
    TRTLLM_TOPK,
    TOPK1_REWRITE,
    TOPK_PAGE,
    NGRAM_DEVICE,
    NGRAM_TOPK,
    NGRAM_CORPUS_BUDGET,
    NGRAM_CORPUS_LIMIT,
    NGRAM_PAGE,
    NGRAM_DPATTN,
    PP_SPEC,
    PP_SPEC_ALGO_23,
    PAGE_ZERO,
    CHUNKED_PAGE,
    LORA_SPEC,
    ADAPTIVE_OFF,
    ADAPTIVE_STEPS_23,
    MLA_ROPE_FACTOR,
    DRAFT_PATH_MISSING_23,
    CONTEXT_LEN,
    QUANT_MISMATCH,
    QUANT_UNKNOWN,
    QUANT_ROCM,
    GPT_OSS_ATTENTION,
    HICACHE_NO_RADIX,
    NVIDIA_MEGAKERNEL,
    AMD_MONOKERNEL,
    MIS_BACKEND,
    GENERIC,  # R-ARG-SITE: one id for every site the release data lists (wizard/rules/arg_sites.py)
    DEPRECATED_VALUE,  # R-DEPRECATED-VALUE: the release data's logged rewrites (deprecated_values)
    *mn.CHECK_RULES,
    *RUNTIME_RULES,
    *CONTEXT_RULES,
)


# Every finding id the product emits: the engine's rules and the checks made outside its run
# (argparse, flags of another release, secrets, multi-node profile checks, unevaluable).
REGISTERED: tuple[Rule | Check, ...] = (*ALL_RULES, *CHECKS)


RULES_BY_ID: dict[str, Rule | Check] = {r.id: r for r in REGISTERED}


def rule_for_location(version: str, where: str) -> Rule | None:
    """The rule whose raising statement is at `where` (`sglang/srt/server_args.py:3521`) in `version`.

    Accepts a traceback's path in any prefix form (`.../site-packages/sglang/srt/...`) and a line
    anywhere inside a multi-line statement (within 3 lines after its first line).
    """
    release = release_for(version)
    idx = where.find("sglang/")
    if idx < 0:
        return None
    path, _, line_text = where[idx:].rpartition(":")
    try:
        line = int(line_text)
    except ValueError:
        return None
    best: Rule | None = None
    best_line = -1
    for rule in ALL_RULES:
        site = release.site(rule.id)
        if site is None or rule.sglang.exception is None:
            continue
        r_path, _, r_line = site.where.rpartition(":")
        if r_path != path or not r_line.isdigit():
            continue
        if 0 <= line - int(r_line) <= 3 and (best is None or int(r_line) > best_line):
            best, best_line = rule, int(r_line)
    if best is None:  # one of the release's R-ARG-SITE sites
        for generic in release.generic_sites:
            g_path, _, g_line = str(generic["where"]).rpartition(":")
            if g_path == path and g_line.isdigit() and 0 <= line - int(g_line) <= 3:
                return GENERIC
    if best is None:  # the layer-partition raises of get_pp_indices (not argument code)
        for check in (release.traits.get("pp_partition_checks") or {}).values():
            if isinstance(check, dict):
                p_path, _, p_line = str(check.get("site", "")).rpartition(":")
                if p_path == path and p_line.isdigit() and 0 <= line - int(p_line) <= 3:
                    return PP_PARTITION
    return best
