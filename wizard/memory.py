"""GPU memory plan for one launch: will the weights, the draft and the KV cache fit per GPU?

The plan follows SGLang's own accounting (`model_runner_kv_cache_mixin._profile_available_bytes`, later
`mem_cache/kv_cache_configurator.py`, `pool_configurator.DefaultPoolConfigurator`):

* `free_before` = the GPU memory free when the weights start loading: the card minus the CUDA
  context and NCCL buffers of SGLang's own process (or the free memory `nvidia-smi` reports on the
  host, minus that context, when it was read);
* the KV budget is `free after loading - free_before x (1 - mem_fraction_static)`, that is
  `free_before x mem_fraction_static - weights` (the *static pool* is `free_before x fraction`,
  not the card x fraction); hybrid models take the recurrent-state pool out of it first;
* KV tokens = budget / SGLang's cell size (bytes per token per GPU over the layers of one
  pipeline stage, per attention-TP rank), rounded down to the page size;
* everything else (req-to-token table, attention workspace, prefill activations, CUDA graphs, and
  on releases whose data says so, the draft weights) must fit in `free_before x (1 - fraction)`.

`plan_memory` follows those steps with the numbers from `ModelFacts` and the GPU catalog. It is an
estimate (weights from the safetensors index or the config), checked against real SGLang start-up
logs in `tests/model/memory_logs.py` (docs/inspect.md has the table).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

from wizard import limits
from wizard.applicability import effective_draft_tokens
from wizard.cuda_segments import (
    LayerBuild,
    offload_build_overhead,
    pinned_host_bytes,
    pinned_page_table_bytes,
)
from wizard.gpus import GpuKind
from wizard.model_facts import DTYPE_BYTES, ModelFacts, ParamBreakdown, is_float_dtype
from wizard.sglang.releases import (
    Release,
    VersionError,
    default_version,
    load_release,
    release_for,
    release_names,
)
from wizard.sglang.versions import env_fact

GIB = 1 << 30
MIB = 1 << 20

Verdict = Literal["fits", "tight", "will_not_fit"]

# Algorithms whose draft lives in a separate set of weights (NEXTN = the checkpoint's MTP layers).
DRAFT_ALGORITHMS = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "DFLASH", "DSPARK"})
SPEC_ALGORITHMS = DRAFT_ALGORITHMS | {"NGRAM", "UNO"}

# SGLang constants (model_runner_kv_cache_mixin.py / server_args.py).
MAMBA_FULL_MEMORY_RATIO = 0.9
MAMBA_CACHE_RATIO = 3  # mamba slots per running request
MAMBA_EXTRA_BUFFER_RATIO_OVERLAP = 2
SPEC_DEFAULT_MAX_RUNNING_REQUESTS = 48
SWA_FULL_TOKENS_RATIO = 0.8  # server_args.swa_full_tokens_ratio default
NSA_QUANT_BLOCK = 128  # NSATokenToKVPool.quant_block_size
TIGHT_HEADROOM_GIB = 0.0
# SGLang's own "constant meta data (e.g. from attention backend)" term of its reserve: the
# attention workspace and the sampler's buffers that are allocated after the KV pool.
WORKSPACE_GIB = 0.5
# What "Load weight end. mem usage=" shows beyond the weights: the rotary cos/sin cache (fp32,
# max positions x head dim) and the CUDA kernels loaded while weights are processed (calibrated:
# Llama-3.1-8B on H100 logs 15.11 GiB for 14.96 GiB of weights + 0.06 GiB rotary cache).
LOAD_KERNELS_GIB = 0.1

# GPU memory that SGLang's process holds before it loads weights: card total minus the
# `Load weight begin. avail mem=` of real logs. The CUDA context: 0.84-1.22 GiB on H100 at tp 1
# (2025-2026 logs); on Ada the five logged start-ups of tests/model/memory_logs.py give 0.73 (L4,
# SGLang 0.4.3), 0.77 (4x RTX 4090, 0.5.8), 0.82 (48 GB Ada, 0.5.9), 1.01 and 1.10 (2x RTX 4090,
# 0.5.9 / main 2026-04) after their NCCL share: 0.8 (their median 0.82 would leave the 48 GB
# card's logged free memory short of the card). Ampere: Hopper's 1.0 (two logs imply 1.13 on an
# A100-PCIE-40GB with 0.5.9 and 1.24 on an RTX 3090 under WSL2 with 0.4.2; 0.73 before).
# NCCL and custom all-reduce buffers grow with the TP peers:
# "Init torch distributed ends. mem usage=" 1.77-2.01 GiB at tp 8 on NVLink H200 (~0.28 GiB a
# peer), 0.13 GiB at tp 4 on PCIe-only L4. B200 (SM100): 3.72 GiB at tp 4 (one log, 2025-08),
# so a larger context (2.9 GiB) is assumed there.
CONTEXT_GIB = {"Hopper": 1.0, "Blackwell": 1.0, "Ada": 0.8, "Ampere": 1.0}
CONTEXT_SM100_GIB = 2.9
CONTEXT_DEFAULT_GIB = 1.0
NCCL_PER_PEER_GIB = {True: 0.28, False: 0.045}  # keyed by NVLink
# A TP group spanning nodes holds less: "Init torch distributed ends. mem usage=1.14 GB" with 15
# peers, 7 of them on its own NVLink node (DeepSeek-R1, tp 16 over 2x 8 H100, SGLang 0.5.8.post1,
# devopsrustem/slurmv4; the one-node rate would give 4.2 GiB). NCCL runs fewer channels over the
# network and SGLang turns its custom all-reduce off when the group is not on one node
# (0.5.8 `distributed/device_communicators/custom_all_reduce.py:84`), so only the local peers are
# counted, at the rate measured there (1.14 / 7 a peer over NVLink; PCIe keeps its one-node rate).
NCCL_SPANNING_PER_LOCAL_PEER_GIB = {True: 1.14 / 7, False: 0.045}

# DeepEP's communication buffers (`--moe-a2a-backend deepep`), allocated by SGLang's
# `DeepEPBuffer.get_deepep_buffer` (`layers/moe/token_dispatcher/deepep.py`) at the first MoE
# dispatch, after the KV pool is sized: they come out of the memory outside the static pool. The
# sizes are DeepEP's own (`csrc/config.hpp`, `Config.get_nvl_buffer_size_hint` /
# `get_rdma_buffer_size_hint`, `get_low_latency_rdma_size_hint`; deep_ep `Buffer.num_sms = 20`,
# `get_dispatch_config` / `get_combine_config`): DeepEP is a separate package, not in SGLang's
# wheel, so these constants are DeepEP's as of its 2025-2026 sources.
DEEPEP_NUM_SMS = 20
DEEPEP_MAX_NVL_PEERS = 8
DEEPEP_MAX_TOPK = 128
DEEPEP_MAX_SCALES = 128
DEEPEP_SOURCE_META_BYTES = 8  # internode::SourceMeta (two ints)
DEEPEP_ALIGN = 128
# ranks -> (nvl chunked recv tokens, rdma chunked send tokens, rdma chunked recv tokens) of the
# dispatch and the combine config.
DEEPEP_DISPATCH_CONFIG = {
    2: (256, 6, 128), 4: (256, 6, 128), 8: (256, 6, 128), 16: (288, 20, 128),
    24: (288, 8, 128), 32: (288, 8, 128), 48: (288, 8, 128), 64: (288, 8, 128),
    96: (480, 12, 128), 128: (560, 12, 128), 144: (720, 12, 128), 160: (720, 12, 128),
}
DEEPEP_COMBINE_CONFIG = {
    2: (256, 6, 128), 4: (256, 6, 128), 8: (256, 6, 128), 16: (288, 12, 128),
    24: (288, 8, 128), 32: (288, 8, 128), 48: (288, 8, 128), 64: (288, 8, 128),
    96: (480, 8, 128), 128: (560, 8, 128), 144: (720, 8, 128), 160: (720, 8, 128),
}


def _align(value: int, to: int) -> int:
    """`value` rounded up to a multiple of `to` (DeepEP's `align_up`)."""
    return -(-value // to) * to


def deepep_buffer_bytes(
    hidden: int, num_experts: int, ranks: int, mode: str, dispatch_tokens: int
) -> tuple[int, int]:
    """DeepEP's (NVLink buffer, RDMA/NVSHMEM buffer) bytes per GPU for SGLang's `deepep_mode`.

    Normal mode sizes both from the dispatch and combine configs of `ranks` (bf16 hidden states,
    SGLang's `params_bytes = 2`); low-latency mode sizes the RDMA buffer for `dispatch_tokens` per
    rank (`SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK`) x `num_experts`; `auto` takes the
    larger of both. A rank count DeepEP has no config for gives no normal-mode buffer."""
    nvl = rdma = 0
    hidden_bytes = hidden * 2
    if mode in ("auto", "normal"):
        rdma_ranks = max(ranks // DEEPEP_MAX_NVL_PEERS, 1)
        nvl_ranks = min(ranks, DEEPEP_MAX_NVL_PEERS)
        channels = DEEPEP_NUM_SMS // 2
        per_token = (
            hidden_bytes + DEEPEP_SOURCE_META_BYTES + DEEPEP_MAX_TOPK * 8 + DEEPEP_MAX_TOPK * 4
            + DEEPEP_MAX_SCALES * 4
        )
        for table in (DEEPEP_DISPATCH_CONFIG, DEEPEP_COMBINE_CONFIG):
            if ranks not in table:
                continue
            nvl_recv, rdma_send, rdma_recv = table[ranks]
            size = channels * nvl_ranks * (2 * rdma_ranks + 3) * 4
            size += channels * nvl_ranks * nvl_recv * per_token
            nvl = max(nvl, _align(size, 128))
            if ranks > DEEPEP_MAX_NVL_PEERS:
                recv = _align(rdma_recv, rdma_send)
                size = channels * rdma_ranks * (DEEPEP_MAX_NVL_PEERS * 2 + 2) * 2 * 4
                size += channels * rdma_ranks * recv * (per_token + 16) * 2
                rdma = max(rdma, _align(size, 128))
    if mode in ("auto", "low_latency") and num_experts > 0:
        scales = hidden // 128
        dispatch_msg = 16 + max(hidden * 2, hidden + scales * 4)
        combine_msg = scales * 4 + hidden * 2
        send = max(dispatch_tokens * dispatch_msg, num_experts * dispatch_tokens * combine_msg)
        recv = num_experts * dispatch_tokens * max(dispatch_msg, combine_msg)
        signal = _align(num_experts * 4, DEEPEP_ALIGN)
        total = 2 * send + 2 * recv + 2 * signal
        rdma = max(rdma, (total + DEEPEP_ALIGN) // DEEPEP_ALIGN * DEEPEP_ALIGN)
    return nvl, rdma


# ROCm (AMD Instinct). Three parts, none of them from SGLang start-up logs of AMD GPUs (none were
# public when this was written; docs/inspect.md says so):
# * the amdgpu driver holds VRAM before any process runs: rocm-smi shows 297771008 B (0.28 GiB)
#   used on every idle MI300X (https://github.com/ROCm/legacy-rocm-build/issues/4750); it is
#   already in the "used" memory when amd-smi / rocm-smi was read on the host;
# * the HIP runtime context and the kernels loaded by SGLang's process: taken as CUDA's on
#   Hopper (1.0 GiB), the same PyTorch stack;
# * RCCL: "about 1 GiB for the initial RCCL/communicator overhead" per rank measured on MI250X
#   (https://github.com/Lumi-supercomputer/LUMI-AI-Guide/issues/111), only with tp > 1, plus the
#   custom all-reduce buffers per XGMI peer taken as NVLink's (0.28 GiB a peer).
ROCM_DRIVER_GIB = 0.28
ROCM_CONTEXT_GIB = 1.0
RCCL_INIT_GIB = 1.0
XGMI_PER_PEER_GIB = 0.28


def count(number: int, noun: str) -> str:
    """`1 running request`, `2 running requests` (the noun's plural is noun + s)."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


@dataclass(frozen=True)
class Accounting:
    """What differs between SGLang releases in how memory is sized (read from their source)."""

    spec_reserve_mib: int  # the mem-fraction heuristic's speculative term (STANDALONE: 6 GiB)
    draft_in_static_pool: bool  # draft weights are loaded before the KV cache is sized
    # the draft's own embedding and head are freed only after the KV cache is sized
    draft_head_shared_after_sizing: bool
    nsa_scaled_cell: bool  # the token count uses the fp8 NSA layout (scales + bf16 rope)
    small_card_chunked: int  # default chunked prefill on 20-35 GiB cards
    small_card_graph_bs: tuple[int, int]  # default cuda_graph_max_bs there (tp<4, tp>=4)
    # the older heuristic (0.5.1-0.5.2): reserve from a table of GPU-memory tiers (trait
    # `fraction_tiers`), None where it is sized from the chunked prefill and graphs
    fraction_tiers: dict[str, Any] | None = None


def pp_stage_layers(layers: int, pp: int, split: str,
                    partition: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Decoder layers per pipeline stage as SGLang's `get_pp_indices` splits them: the
    `SGLANG_PP_LAYER_PARTITION` list when given, else equal shares with the remainder on the
    last stages one each ("extra_on_last_stages", release trait `pp_layer_split`) or all on the
    last stage ("rest_on_last_stage")."""
    if partition and len(partition) == pp and sum(partition) == layers:
        return tuple(partition)
    base, extra = divmod(layers, max(pp, 1))
    if split == "rest_on_last_stage":
        return (base,) * (pp - 1) + (layers - base * (pp - 1),)
    return tuple(base + (1 if rank >= pp - extra else 0) for rank in range(pp))


def _release(version: str) -> Release:
    """The release data checking `version` (the newest for text that is no version)."""
    try:
        return release_for(version)
    except VersionError:
        return load_release(release_names()[-1])


def accounting(version: str) -> Accounting:
    """The memory accounting of one SGLang release: the traits `conformance add-release` reads
    from its source (`onboard.memory_accounting_traits`)."""
    traits = _release(version).behaviour
    graph_bs = traits.small_card_graph_max_bs
    return Accounting(
        spec_reserve_mib=traits.spec_reserve_mib,
        draft_in_static_pool=traits.draft_in_static_pool,
        draft_head_shared_after_sizing=traits.draft_head_shared_after_sizing,
        nsa_scaled_cell=traits.nsa_scaled_cell,
        small_card_chunked=traits.chunked_prefill_24gb,
        small_card_graph_bs=(graph_bs[0], graph_bs[1]),
        fraction_tiers=traits.fraction_tiers or None,
    )


def _tiered_reserve_mib(tiers: dict[str, Any], total_mib: int, tp: int, pp: int,
                        algorithm: str | None, attention_dp: bool) -> float:
    """The older heuristic's reserve (trait `fraction_tiers`): the first tier whose bound is above
    the card's memory gives `A + B x tp x pp` MiB, then the speculative and DP-attention terms."""
    reserve = 0.0
    for bound, base, per_gpu in tiers["tiers"]:
        if bound is None or total_mib < bound:
            reserve = base + per_gpu * tp * pp
            break
    if algorithm is not None:
        standalone = tiers.get("spec_standalone_mib")
        reserve += standalone if algorithm == "STANDALONE" and standalone else tiers["spec_mib"]
    if attention_dp:
        reserve += tiers["dp_attention_mib"]
    return reserve


@dataclass(frozen=True)
class PrefillGraphReserve:
    """The prefill ("piecewise") CUDA-graph term of one release's mem-fraction heuristic: the
    release-data trait `prefill_graph_reserve` (`onboard.prefill_graph_reserve` reads it from
    the wheel: the `reserved_mem +=` statement, where it stands against the 10 GiB floor, and
    how the graph's max tokens default)."""

    form: str  # "none", "max_tokens_div" (max tokens // factor) or "sizes_times" (len x factor)
    factor: int = 0
    after_floor: bool = False  # added after `reserved_mem = max(reserved_mem, 10 * 1024)`
    max_tokens: int | None = None  # the flag's class default; None: the chunked prefill size
    mla_max_tokens: tuple[str, int] | None = None  # ("set", N) or ("min", N) for MLA models
    caps: frozenset[str] = frozenset()  # "max_total_tokens", "context_length", "llama-2"
    sizes: tuple[tuple[int, int | None, int], ...] = ()  # capture sizes as range triples
    site: str | None = None  # the term's file:line in the release

    @classmethod
    def from_trait(cls, trait: dict[str, Any]) -> PrefillGraphReserve:
        mla = trait.get("mla_max_tokens")
        return cls(
            form=str(trait.get("form") or "none"),
            factor=int(trait.get("factor") or 0),
            after_floor=trait.get("floor") == "after",
            max_tokens=trait["max_tokens"] if isinstance(trait.get("max_tokens"), int) else None,
            mla_max_tokens=(str(mla[0]), int(mla[1])) if mla else None,
            caps=frozenset(trait.get("caps") or ()),
            sizes=tuple((int(a), None if b is None else int(b), int(c))
                        for a, b, c in trait.get("sizes") or ()),
            site=trait.get("site"),
        )

    def max_graph_tokens(self, chunked: int, *, mla: bool, max_total_tokens: int | None = None,
                         context_length: int | None = None, model_path: str = "") -> int:
        """The prefill graph's max tokens as the release defaults them for this launch."""
        tokens = chunked if self.max_tokens is None else self.max_tokens
        if mla and self.mla_max_tokens is not None:
            kind, bound = self.mla_max_tokens
            tokens = bound if kind == "set" else min(bound, tokens)
        if "max_total_tokens" in self.caps and max_total_tokens:
            tokens = min(tokens, max_total_tokens)
        if "llama-2" in self.caps and "llama-2" in model_path.lower():
            tokens = min(tokens, 4096)
        if "context_length" in self.caps and context_length:
            tokens = min(tokens, context_length)
        return tokens

    def term_mib(self, max_tokens: int) -> float:
        """MiB the heuristic reserves for the prefill graph of `max_tokens`."""
        if self.form == "max_tokens_div":
            return max_tokens // self.factor
        if self.form == "sizes_times":
            count = sum(len(range(start, max_tokens + 1 if stop is None else min(stop, max_tokens + 1),
                                  step)) for start, stop, step in self.sizes)
            return count * self.factor
        return 0


#: The newest releases' term (`reserve_for_graph_mb`): 8 MiB a capture size, before the floor.
_DEFAULT_GRAPH_RESERVE = PrefillGraphReserve(
    "sizes_times", 8, False, None, ("set", 2048), frozenset({"max_total_tokens", "llama-2"}),
    ((4, 33, 4), (48, 257, 16), (288, 513, 32), (576, 1025, 64), (1280, 4097, 256),
     (4608, None, 512)),
)


@dataclass(frozen=True)
class GraphPolicy:
    """How one release counts CUDA graphs in its mem-fraction heuristic: the release-data traits
    `conformance add-release` reads from the wheel (`onboard.graph_memory_traits`)."""

    prefill_graph_default: str  # "opt_in", "on", "tc_piecewise", "breakable" or "none"
    prefill_graph_off_when: frozenset[str]
    mla_reserve_mib: int  # the MLA term of the prefill graph (0: counted like the others)
    by_role: bool  # `reserve_for_graph_mb` per PD role + `reserve_for_deepep_a2a_mb`
    breakable_deepep_mib: int
    release: str
    vlm_adjust_skips_decode: bool = False
    off_on_hip: bool = False  # ROCm turns the default prefill graph off (`is_hip()` in the list)
    reserve: PrefillGraphReserve = _DEFAULT_GRAPH_RESERVE  # trait `prefill_graph_reserve`
    prefill_server_no_graphs: bool = False  # a PD prefill server has disable_cuda_graph set


#: Releases whose data predates the traits are read as the default release (`_handle_piecewise_cuda_graph`).
_FALLBACK_POLICY = GraphPolicy(
    "on",
    frozenset({"dp_attention", "torch_compile", "pp", "moe_a2a", "multimodal", "cpu_offload",
               "hierarchical_cache", "disaggregation"}),
    1536, False, 0, "",
)
_POLICIES: dict[str, GraphPolicy] = {}


def graph_policy(version: str) -> GraphPolicy:
    """The CUDA-graph accounting of the release that checks `version` (cached)."""
    cached = _POLICIES.get(version)
    if cached is not None:
        return cached

    try:
        release = release_for(version)
    except (ValueError, KeyError, OSError):
        policy = _FALLBACK_POLICY
    else:
        traits = release.behaviour
        policy = GraphPolicy(
            traits.prefill_graph_default,
            frozenset(traits.prefill_graph_off_when),
            traits.prefill_graph_mla_reserve_mib,
            traits.graph_reserve_by_role,
            traits.breakable_deepep_reserve_mib,
            release.name,
            traits.vlm_adjust_skips_decode,
            traits.prefill_graph_off_on_hip,
            PrefillGraphReserve.from_trait(traits.prefill_graph_reserve),
            traits.prefill_server_disables_graphs,
        )
    _POLICIES[version] = policy
    return policy


def aiter_fraction_step(version: str) -> dict[str, Any]:
    """The release's aiter step on ROCm (trait `aiter_mem_fraction`, read from the wheel): with
    `attention_backend == "aiter"` and a context length above `above`, SGLang multiplies
    mem_fraction_static by `scale` (a typed fraction too, unless the release has `honor_env`
    and it is set). {} where the release has no such step."""
    try:
        return dict(release_for(version).traits.get("aiter_mem_fraction") or {})
    except (ValueError, KeyError, OSError):
        return {}


def _aiter_scale(inputs: MemoryInputs, given: bool) -> tuple[float, str] | None:
    """SGLang's aiter scaling of mem_fraction_static for this launch, with why; None if none."""
    if not (getattr(inputs.gpu, "is_hip", False) and inputs.attention_backend == "aiter"):
        return None
    step = aiter_fraction_step(inputs.sglang_version)
    if not step:
        return None
    context = inputs.context_length or inputs.target.context_length or 0
    if context <= int(step["above"]):
        return None
    if given and step.get("honor_env") and inputs.aiter_honor_env:
        return None
    return float(step["scale"]), (
        f"x {step['scale']:g}: SGLang's aiter backend on ROCm scales mem_fraction_static for a "
        f"context length above {step['above']} ({context})")


def _aiter_workspace_gib(inputs: MemoryInputs, rows: int, context: int, attn_tp: int) -> float:
    """GiB of the aiter backend's MHA decode workspace (trait `aiter_mha_workspace`, read from
    the wheel): `rows` requests x heads per rank x context partitions x (head dim x 4 B + 2 x 4 B);
    0 off ROCm, for another backend, for MLA models or where the release has no such buffer."""
    target = inputs.target
    if not (getattr(inputs.gpu, "is_hip", False) and inputs.attention_backend == "aiter"):
        return 0.0
    if target.attention == "MLA":
        return 0.0
    try:
        step = dict(release_for(inputs.sglang_version).traits.get("aiter_mha_workspace") or {})
    except (ValueError, KeyError, OSError):
        return 0.0
    if not step.get("partition"):
        return 0.0
    partitions = math.ceil(context / int(step["partition"]))
    heads = max(target.num_attention_heads // max(attn_tp, 1), 1)
    return rows * heads * partitions * (target.head_dim * 4 + 8) / GIB


def aiter_moe_copy_step(version: str) -> dict[str, Any]:
    """The release's aiter MoE weight shuffle that keeps a second copy (trait
    `aiter_moe_keeps_unshuffled`, read from the wheel): {"env": the variable that turns aiter on,
    "archs": the models whose cached parameter dict keeps the unshuffled experts}; {} where
    the release has none."""
    try:
        return dict(release_for(version).traits.get("aiter_moe_keeps_unshuffled") or {})
    except (ValueError, KeyError, OSError):
        return {}


def _aiter_moe_copy_gib(inputs: MemoryInputs, weights: _Weights, tp: int, share: float,
                        ) -> tuple[float, str] | None:
    """GiB per GPU of unquantized routed experts ROCm's aiter shuffle leaves held twice, with
    why; None where it does not apply (CUDA, aiter off, another model, quantized experts)."""
    if not (getattr(inputs.gpu, "is_hip", False) and inputs.use_aiter):
        return None
    step = aiter_moe_copy_step(inputs.sglang_version)
    if inputs.target.architecture not in (step.get("archs") or ()):
        return None
    held = weights.routed_unquantized / tp * share / GIB
    if held <= 0:
        return None
    return held, (
        f"+{held:.2f} GiB: with {step.get('env')} SGLang {inputs.sglang_version} shuffles the "
        f"{inputs.target.architecture} experts into new tensors for aiter while the model's "
        "cached parameter dict keeps the unshuffled ones (the routed experts are held twice)")


def _online_fp8_kept_gib(inputs: MemoryInputs, dtype: str | None, tp: int, attn_tp: int,
                         stage_layers: int, dense_tp: int | None) -> tuple[float, str] | None:
    """GiB per GPU of unquantized layer weights `--quantization fp8` keeps beside their FP8
    copies (release trait `online_fp8_keeps_unquantized`: the model's cached parameter dict
    still references the tensors the online quantization replaced), with why; None where the
    release frees them (another model, a quantized checkpoint, another method)."""
    target = inputs.target
    if (inputs.quantization or "").lower() != "fp8" or target.quant is not None:
        return None
    if target.architecture not in _release(inputs.sglang_version).behaviour \
            .online_fp8_keeps_unquantized:
        return None
    plain = _weights(target, dtype=dtype, quantization=None, tp=attn_tp)
    held = (plain.layers_sharded / tp + plain.dense_mlp / (dense_tp or tp)
            + plain.attention / attn_tp) * stage_layers / max(target.num_layers, 1) / GIB
    if held <= 0:
        return None
    return held, (
        f"+{held:.2f} GiB: --quantization fp8 on the unquantized checkpoint replaces the layers' "
        f"weights with FP8 copies while {target.architecture}'s cached parameter dict "
        f"(SGLang {inputs.sglang_version}) keeps the unquantized tensors: both are held "
        "(sglang issue 8337)")


def is_multimodal(target: ModelFacts) -> bool:
    """The checkpoint has a vision tower (SGLang's `model_config.is_multimodal` for it)."""
    return bool(target.params_estimate and target.params_estimate.vision) or bool(
        target.vision_layers
    )


def _listed(inputs: MemoryInputs, *lists: str) -> bool:
    """The target's architecture is on one of the release's arch lists `lists`."""
    release = _release(inputs.sglang_version)
    return any(inputs.target.architecture in release.arch_set(name) for name in lists)


def prefill_graph_state(
    inputs: MemoryInputs, policy: GraphPolicy, algorithm: str | None
) -> tuple[bool, str]:
    """Whether SGLang captures prefill ("piecewise") CUDA graphs for this launch, and why (the
    release's `_handle_piecewise_cuda_graph` / `_disable_*_cudagraph_if_incompatible`)."""
    name = policy.release or inputs.sglang_version
    if inputs.disable_cuda_graph and policy.prefill_graph_default in ("tc_piecewise", "breakable"):
        return False, "CUDA graphs disabled"
    if inputs.prefill_graph is False:
        return False, "turned off by its flag"
    if policy.prefill_graph_default == "none":
        return False, f"SGLang {name} has none"
    if policy.prefill_graph_default == "opt_in":
        if inputs.prefill_graph or inputs.enable_piecewise_cuda_graph:
            return True, "--enable-piecewise-cuda-graph"
        return False, f"opt-in in SGLang {name} (--enable-piecewise-cuda-graph)"
    if inputs.prefill_graph:
        return True, "forced by its flag"
    if policy.prefill_server_no_graphs and inputs.disaggregation_mode == "prefill":
        return False, f"off on a PD prefill server (SGLang {name} sets disable_cuda_graph)"
    if policy.off_on_hip and getattr(inputs.gpu, "is_hip", False):
        return False, f"off on ROCm in SGLang {name}"
    target = inputs.target
    mla = target.attention == "MLA" and bool(target.kv_lora_rank)
    a2a = (inputs.moe_a2a_backend or "none").lower()
    tests = {
        "speculative": (algorithm is not None, "speculative decoding"),
        "dp_attention": (inputs.enable_dp_attention and inputs.dp > 1, "DP attention"),
        "torch_compile": (inputs.enable_torch_compile, "torch compile"),
        "pp": (inputs.pp > 1, "pipeline parallel"),
        "moe_a2a": (a2a != "none", f"MoE all-to-all backend {a2a}"),
        "moe_a2a_unvalidated": (
            a2a not in ("none", "deepep", "megamoe", "flashinfer"), f"MoE all-to-all backend {a2a}"
        ),
        "multimodal": (is_multimodal(target), "multimodal model"),
        "cpu_offload": (inputs.cpu_offload_gb > 0, "CPU offload"),
        "hierarchical_cache": (inputs.enable_hierarchical_cache, "hierarchical cache"),
        "disaggregation": (inputs.disaggregation_mode not in ("null", None), "PD disaggregation"),
        "disaggregation_decode": (inputs.disaggregation_mode == "decode", "a decode server"),
        "mla": (mla, "MLA attention"),
        "mla_non_dsa": (mla and not target.index_head_dim, "MLA attention without DSA"),
        "disabled_model": (
            _listed(inputs, "prefill_graph_disabled"),
            f"{target.architecture} (SGLang's piecewise_cuda_graph_disabled_model_archs)",
        ),
        "disabled_model_dsa": (bool(target.index_head_dim), "DSA attention"),
        # multimodal models off unless on the release's allowlist (a piecewise-listed model
        # moves to the piecewise graph where breakable is the default)
        "multimodal_unlisted_breakable": (
            is_multimodal(target) and not _listed(
                inputs, "prefill_graph_multimodal_breakable", "prefill_graph_multimodal_piecewise"),
            "multimodal model (not on SGLang's breakable-graph allowlist)"),
        "multimodal_unlisted_piecewise": (
            is_multimodal(target) and not _listed(inputs, "prefill_graph_multimodal_piecewise"),
            "multimodal model (not on SGLang's piecewise-graph allowlist)"),
    }
    for condition in sorted(policy.prefill_graph_off_when):
        hit, why = tests.get(condition, (False, ""))
        if hit:
            return False, f"off for {why} in SGLang {name}"
    return True, f"on by default in SGLang {name}"


def gpus_per_node(inputs: MemoryInputs) -> int | None:
    """GPUs one node runs (`tp x pp / nnodes`), None on one node or when they do not divide."""
    total = inputs.tp * inputs.pp
    if inputs.nnodes <= 1 or total % inputs.nnodes:
        return None
    return total // inputs.nnodes


def context_reserve_gib(gpu: GpuKind, tp: int = 1, gpus_per_node: int | None = None) -> float:
    """Memory SGLang's own process holds before loading weights: CUDA (HIP) context + NCCL
    (RCCL)/custom all-reduce buffers for the other `tp - 1` ranks of its TP group; when the group
    spans nodes (`tp` > `gpus_per_node`), for the peers on its own node only, at the spanning
    group's rate (NVIDIA; no ROCm log of a spanning group: the one-node rate stays there)."""
    peers = max(tp, 1) - 1
    if gpu.is_hip:
        per_peer = XGMI_PER_PEER_GIB if gpu.nvlink else NCCL_PER_PEER_GIB[False]
        return ROCM_CONTEXT_GIB + (RCCL_INIT_GIB + per_peer * peers if peers else 0.0)
    context = (
        CONTEXT_SM100_GIB if gpu.is_sm100 else CONTEXT_GIB.get(gpu.generation, CONTEXT_DEFAULT_GIB)
    )
    if gpus_per_node is not None and 0 < gpus_per_node < tp:
        return context + NCCL_SPANNING_PER_LOCAL_PEER_GIB[gpu.nvlink] * (gpus_per_node - 1)
    return context + NCCL_PER_PEER_GIB[gpu.nvlink] * peers


def driver_reserve_gib(gpu: GpuKind) -> float:
    """VRAM the driver holds on an idle GPU, before any process (amdgpu: 0.28 GiB; NVIDIA: a few
    MiB, counted as 0). Already part of "used" when the memory was read on the host."""
    return ROCM_DRIVER_GIB if gpu.is_hip else 0.0


@dataclass(frozen=True)
class PlanFix:
    """A suggestion with the profile edits (dotted keys) that apply it; empty edits = advice."""

    label: str
    edits: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """Plain dict."""
        return {"label": self.label, "edits": dict(self.edits)}


def _fresh(value: Any) -> Any:
    """A copy of a JSON value's containers (its strings and numbers are shared)."""
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class MemoryPlan:
    """Per-GPU memory plan. All sizes are GiB per GPU unless the name says otherwise."""

    gpu: str
    gpus: int
    tp: int
    gpu_total_gib: float
    mem_fraction_static: float
    mem_fraction_source: Literal["given", "sglang-heuristic"]
    static_pool_gib: float
    weights_gib: float
    weights_source: Literal["index", "estimate"]
    draft_weights_gib: float
    draft_kind: str | None
    kv_budget_gib: float
    kv_bytes_per_token: int
    kv_tokens: int
    draft_kv_bytes_per_token: int
    draft_kv_gib: float
    mamba_state_per_request_mib: float
    mamba_pool_gib: float
    spec_mamba_buffer_gib: float
    max_running_requests: int | None
    max_running_requests_limit: int | None
    reserve_gib: float
    activation_estimate_gib: float
    cuda_graph_estimate_gib: float
    headroom_gib: float
    context_length: int | None
    verdict: Verdict
    reasons: tuple[str, ...]
    suggestions: list[str] = field(default_factory=list)
    assumptions: tuple[str, ...] = ()
    fixes: list[PlanFix] = field(default_factory=list)
    pp: int = 1
    dp: int = 1
    attention_dp: bool = False
    ep: int = 1
    attention_tp: int = 1
    free_before_load_gib: float = 0.0
    free_memory_source: Literal["card", "nvidia-smi"] = "card"
    context_reserve_gib: float = 0.0
    driver_reserve_gib: float = 0.0
    context_label: str = "CUDA context/NCCL"
    kv_layout: str = ""
    kv_cell_bytes: int = 0
    swa_kv_tokens: int | None = None
    req_to_token_gib: float = 0.0
    workspace_gib: float = WORKSPACE_GIB
    draft_in_static_pool: bool = False
    layers_per_gpu: int = 0
    sglang_version: str = ""
    load_overhead_gib: float = 0.0
    cpu_offload_gib: float = 0.0
    disaggregation_mode: str = "null"
    req_to_token_rows: int = 0
    prefill_graph: bool = False
    prefill_graph_note: str = ""
    hicache_host_gib: float = 0.0
    hicache_host_total_gib: float = 0.0
    draft_placeholder_gib: float = 0.0  # the draft's own embedding + head while the pool is sized
    draft_loaded_gib: float = 0.0  # the draft as loaded (its "Load weight end ... mem usage")
    deepep_buffer_gib: float = 0.0  # DeepEP's NVLink + RDMA buffers (outside the static pool)
    kv_cap_free_gib: float = 0.0  # the static pool --max-total-tokens leaves unallocated
    # weights per GPU of every pipeline stage as loaded, before CPU offload moves any
    # (`weights_gib` is the planned stage's, after offload)
    stage_weights_gib: tuple[float, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain dict (GiB rounded to 0.01); keys documented in docs/inspect.md.

        Built once per plan (plans are cached and re-checked on every keystroke); each call
        returns a fresh copy, so a caller may change what it gets."""
        return {name: _fresh(value) for name, value in self._json.items()}

    @functools.cached_property
    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, float):
                # the fraction as SGLang uses it (the VLM and aiter factors are not rounded)
                value = round(value, 10 if name == "mem_fraction_static" else 2)
            elif isinstance(value, tuple):
                value = [round(v, 2) if isinstance(v, float) else v for v in value]
            elif name == "fixes":
                value = [f.to_json() for f in value]
            out[name] = value
        return out

    def summary(self) -> str:
        """One line: verdict and the key numbers (shortfalls said in words, never as a negative size)."""
        return self._summary

    @functools.cached_property
    def _summary(self) -> str:
        word = {"fits": "fits", "tight": "tight", "will_not_fit": "will not fit"}[self.verdict]
        nvsmi = " by nvidia-smi" if self.free_memory_source == "nvidia-smi" else ""
        pool = (
            f"{self.static_pool_gib:.1f} GiB static pool ({self.mem_fraction_static:.3f} x "
            f"{self.free_before_load_gib:.1f} GiB free before loading{nvsmi})"
        )
        if self.kv_budget_gib <= 0:
            held = self.static_pool_gib - self.kv_budget_gib
            parts = f"{self.weights_gib:.1f} GiB weights"
            if self.draft_in_static_pool and self.draft_weights_gib:
                parts += f" + {self.draft_weights_gib:.1f} GiB draft"
            if self.draft_placeholder_gib:
                parts += (f" + {self.draft_placeholder_gib:.1f} GiB of the draft's own embedding "
                          "and head (freed after the KV cache is sized)")
            if self.mamba_pool_gib or self.spec_mamba_buffer_gib:
                parts += " + recurrent state"
            total = f" ({held:.1f} GiB)" if parts != f"{self.weights_gib:.1f} GiB weights" else ""
            head = (
                f"{word}: per GPU {parts}{total} against a {pool}: no room left for the KV cache"
            )
        else:
            head = (
                f"{word}: per GPU {self.weights_gib:.1f} GiB weights + {self.kv_budget_gib:.1f} GiB "
                f"KV/state of {pool}, {self.kv_tokens:,} KV tokens"
            )
        if self.headroom_gib >= 0:
            return f"{head}, {self.headroom_gib:.1f} GiB to spare outside the pool"
        return f"{head}; outside the pool {-self.headroom_gib:.1f} GiB short"


@dataclass(frozen=True)
class _Weights:
    """Bytes of one model (whole model, not per GPU), split the way SGLang shards them."""

    layers_sharded: float  # decoder layers except attention: split by tp (experts by ep x moe-tp)
    attention: float  # attention projections: split by the attention-TP size
    layers_replicated: float  # norms, router, MLA down-projections, replicated KV heads
    mtp_total: float  # bytes of the MTP layers
    embedding: float
    lm_head: float
    vision: float
    source: Literal["index", "estimate"]
    dense_mlp: float = 0.0  # dense MLP layers of an MoE model: split by --moe-dense-tp-size
    routed_unquantized: float = 0.0  # routed experts stored unquantized (part of layers_sharded)
    routed_experts: float = 0.0  # all routed experts (part of layers_sharded)

    def layers_per_gpu(
        self,
        tp: int,
        attn_tp: int,
        layers: int,
        stage_layers: int | None = None,
        dense_tp: int | None = None,
    ) -> float:
        """Bytes of one pipeline stage's decoder layers on one GPU (what CPU offload can move)."""
        stage = stage_layers if stage_layers is not None else layers
        share = stage / max(layers, 1)
        return (
            self.layers_sharded / tp
            + self.dense_mlp / (dense_tp or tp)
            + self.attention / attn_tp
            + self.layers_replicated
        ) * share

    def per_gpu(
        self,
        tp: int,
        pp: int = 1,
        attn_tp: int | None = None,
        layers: int = 1,
        stage_layers: int | None = None,
        dp_attention: bool = False,
        dense_tp: int | None = None,
        head_tp: int | None = None,
        pp_rank: int | None = None,
    ) -> float:
        """Bytes on one GPU of pipeline stage `pp_rank` (None: the busiest stage's layers with
        the larger end): its layers (experts and MLP split by tp, the dense MLP of an MoE model
        by `dense_tp` (--moe-dense-tp-size), attention by the attention-TP size), the embedding
        on the first stage (replicated under DP attention, `VocabParallelEmbedding(enable_tp=
        False)`), the head on the last stage, split by `head_tp` (the attention-TP group with
        --enable-dp-lm-head, `use_attn_tp_group`)."""
        attn_tp = attn_tp or tp
        stage = stage_layers if stage_layers is not None else math.ceil(layers / pp)
        body = self.layers_per_gpu(tp, attn_tp, layers, stage, dense_tp)
        embedding = self.embedding / (1 if dp_attention else tp)
        head = self.lm_head / (head_tp or tp)
        if pp == 1:
            ends = embedding + head
        elif pp_rank is None:
            ends = max(embedding, head)
        else:
            ends = (embedding if pp_rank == 0 else 0.0) + (head if pp_rank == pp - 1 else 0.0)
        return body + ends + self.vision / tp


#: Above 1 the plan still says "will not fit"; beyond this the number is not a fraction at all.
MAX_MEM_FRACTION = 16.0


def _check_plan_ranges(
    parallel: dict[str, int | None],
    batch: dict[str, int | None],
    tokens: dict[str, int | None],
    spec: dict[str, int | None],
) -> None:
    """ValueError naming the first size outside the range the plan (and any machine) has."""
    for group, high in ((parallel, limits.MAX_PARALLEL * limits.MAX_NODES),
                        (batch, limits.MAX_BATCH), (tokens, limits.MAX_TOKENS),
                        (spec, limits.MAX_SPEC_COUNT)):
        for name, value in group.items():
            if value is not None and abs(value) > high:
                raise ValueError(f"{name} {value} is outside the plan's range (at most {high})")


@dataclass(frozen=True)
class MemoryInputs:
    """Everything one memory plan reads: the model, the GPUs and the values SGLang resolved.

    The first four are positional (`MemoryInputs(target, gpu, gpus, tp, algorithm="NEXTN")`);
    the rest are SGLang's resolved arguments under the plan's own names."""

    target: ModelFacts
    gpu: GpuKind
    gpus: int
    tp: int
    _: KW_ONLY
    mem_fraction: float | None = None
    draft: ModelFacts | None = None
    algorithm: str | None = None
    num_draft_tokens: int | None = None
    max_running_requests: int | None = None
    context_length: int | None = None
    kv_cache_dtype: str | None = None
    dtype: str | None = None
    quantization: str | None = None
    cuda_graph_max_bs: int | None = None
    sglang_version: str = field(default_factory=default_version)
    chunked_prefill_size: int | None = None
    disable_radix_cache: bool = False
    mamba_extra_buffer: bool | None = None
    num_steps: int | None = None
    topk: int | None = None
    pp: int = 1
    # SGLANG_PP_LAYER_PARTITION as the launch sets it (decoder layers per pipeline stage)
    pp_layer_partition: tuple[int, ...] | None = None
    dp: int = 1
    enable_dp_attention: bool = False
    ep: int = 1
    page_size: int | None = None
    free_gib: float | None = None
    disable_cuda_graph: bool = False
    swa_full_tokens_ratio: float | None = None
    cpu_offload_gb: float = 0.0
    max_total_tokens: int | None = None
    disaggregation_mode: str = "null"
    disaggregation_decode_extra_slots: int | None = None
    prefill_graph: bool | None = None  # forced on (True) / off (False) by a flag, None = default
    enable_piecewise_cuda_graph: bool = False  # the opt-in flag of the releases that have it
    enable_torch_compile: bool = False
    moe_a2a_backend: str | None = None
    enable_hierarchical_cache: bool = False
    hicache_ratio: float = 2.0
    hicache_size_gb: float = 0.0
    enable_dp_lm_head: bool = False
    moe_dense_tp_size: int | None = None
    max_mamba_cache_size: int | None = None
    attention_backend: str | None = None  # as SGLang resolved it (ROCm's aiter scales the pool)
    aiter_honor_env: bool = False  # SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION is set
    nnodes: int = 1  # --nnodes: the GPUs of one node are tp x pp / nnodes
    use_aiter: bool = False  # SGLANG_USE_AITER is set (AMD's SGLang images set it)
    deepep_mode: str = "auto"  # --deepep-mode (with --moe-a2a-backend deepep)
    # The prefill (piecewise) CUDA graph's max tokens / capture sizes as typed
    # (--piecewise-cuda-graph-max-tokens / --piecewise-cuda-graph-tokens, later
    # --cuda-graph-max-bs-prefill / --cuda-graph-bs-prefill): they replace the release's default
    # and its caps in the mem-fraction heuristic.
    prefill_graph_max_tokens: int | None = None
    prefill_graph_sizes: int | None = None  # how many capture sizes were typed
    # --offload-group-size N / --offload-num-in-group / --offload-prefetch-step / --offload-mode
    # (OffloaderV2: the experts of the last num_in_group layers of every group live on the host)
    offload_group_size: int = 0
    offload_num_in_group: int = 1
    offload_prefetch_step: int = 1
    offload_mode: str = "cpu"
    # --kt-weight-path with --kt-num-gpu-experts N (KTransformers: experts N.. run on the CPU
    # from their own weights; each MoE layer builds only N experts on the GPU)
    kt_num_gpu_experts: int | None = None
    deepep_dispatch_tokens: int | None = None  # SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK set
    ep_num_redundant_experts: int = 0  # --ep-num-redundant-experts (more experts to dispatch to)

    def cache_key(self) -> tuple[Any, ...]:
        """A hashable key: the model facts by identity, every other input by value."""
        values = self.__dict__
        return (id(self.target), id(self.draft), *[values[name] for name in _SCALAR_INPUTS])

    def with_edits(self, **changes: Any) -> MemoryInputs:
        """A copy with some inputs changed (a fix tried before it is offered; called often, so
        cheaper than `dataclasses.replace`, which re-runs `__init__`)."""
        unknown = set(changes) - set(self.__dataclass_fields__)
        if unknown:
            raise TypeError(f"not a memory-plan input: {', '.join(sorted(unknown))}")
        copied = copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(copied, name, value)
        return copied


#: Every input but the model facts (those go into cache keys by identity).
_SCALAR_INPUTS = tuple(
    name for name in MemoryInputs.__dataclass_fields__ if name not in ("target", "draft", "_")
)


#: Profile keys a memory fix edits -> the plan input it changes.
FIX_INPUTS = {
    "memory.mem_fraction_static": "mem_fraction",
    "memory.max_running_requests": "max_running_requests",
    "memory.cuda_graph_max_bs": "cuda_graph_max_bs",
    "memory.cpu_offload_gb": "cpu_offload_gb",
    "model.context_length": "context_length",
    "model.kv_cache_dtype": "kv_cache_dtype",
    "parallel.tp": "tp",
    "gpu.count": "gpus",
    "model.quantization": "quantization",
}


#: What an expert offload moves per GPU: GiB off the GPU, what the plan says of it, and GiB
#: that stays on the GPU for the moved copies (the page tables of pinned host memory).
ExpertOffload = tuple[float, str, float]


def _kt_cpu_experts_gib(
    inputs: MemoryInputs, weights: _Weights, tp: int, stage_layers: int
) -> ExpertOffload | None:
    """GiB per GPU of routed experts that run on the CPU under KTransformers (`--kt-weight-path`
    with `--kt-num-gpu-experts N`: SGLang's `KTEPWrapperMethod.create_weights` builds experts
    0..N-1 on the GPU, `layers/moe/kt_ep_wrapper.py`), with what the plan says; None when off.
    KTransformers keeps them in its own CPU memory, not pinned through CUDA: nothing stays."""
    target, gpu_experts = inputs.target, inputs.kt_num_gpu_experts
    if gpu_experts is None or target.moe is None or target.moe.experts <= 0:
        return None
    kept = min(max(gpu_experts, 0), target.moe.experts)
    share = stage_layers / max(target.num_layers, 1)
    moved = weights.routed_experts / tp * (1 - kept / target.moe.experts) * share / GIB
    return moved, (
        f"--kt-num-gpu-experts {gpu_experts}: {kept} of the {target.moe.experts} routed experts "
        f"of each MoE layer on the GPU, the rest on the CPU from --kt-weight-path: {moved:.1f} "
        "GiB off each GPU (KTEPWrapperMethod, layers/moe/kt_ep_wrapper.py)"), 0.0


def _group_offload_gib(
    inputs: MemoryInputs, weights: _Weights, tp: int, stage_layers: int
) -> ExpertOffload | None:
    """GiB per GPU that `--offload-group-size` (SGLang's OffloaderV2, `utils/offloader.py`) keeps
    in host memory, with what the plan says of it; None when it does not apply.

    Of every `group_size` decoder layers of the stage (`module_index % group_size >=
    group_size - num_in_group`) the routed experts' weights move to the host; `prefetch_step`
    layers' copies are on the GPU at a time (the first are loaded by `post_init`, before "Load
    weight end"). Only models that build their layers with `offloader_kwargs` (release data
    `archs.offloader_v2`) can; `--cpu-offload-gb` takes precedence (SGLang then builds the
    OffloaderV1, `create_offloader_from_server_args`)."""
    group, target = inputs.offload_group_size, inputs.target
    if group <= 0 or inputs.cpu_offload_gb > 0 or target.moe is None:
        return None
    if target.architecture not in _release(inputs.sglang_version).arch_set("offloader_v2"):
        return 0.0, (
            f"--offload-group-size {group}: {target.architecture} does not pass SGLang "
            f"{inputs.sglang_version}'s offloader hooks (offloader_kwargs), so nothing is "
            "offloaded (SGLang's OffloaderV2 expects them)"), 0.0
    mode = (inputs.offload_mode or "cpu").lower()
    if mode not in ("cpu", "shm_cpu"):
        return 0.0, f"--offload-mode {mode}: not planned (the weights are counted on the GPU)", 0.0
    moe_layers = max(target.moe.moe_layers, 1)
    first_moe = target.num_layers - target.moe.moe_layers  # the dense layers come first
    per_layer = weights.routed_experts / tp / moe_layers / GIB
    picked = [i for i in range(stage_layers)
              if i % group >= group - max(inputs.offload_num_in_group, 0) and i >= first_moe]
    resident = min(max(inputs.offload_prefetch_step, 0), len(picked))
    moved = (len(picked) - resident) * per_layer
    # mode cpu pins the host copies (`_move_param_to_cpu(..., pin_memory=True)`): the GPU's page
    # tables for them stay on the device, 8 B per 4 KiB page (`pinned_page_table_bytes`)
    tables = (pinned_page_table_bytes(int(len(picked) * per_layer * GIB)) / GIB
              if mode == "cpu" else 0.0)
    return moved, (
        f"--offload-group-size {group} (num-in-group {inputs.offload_num_in_group}, prefetch "
        f"{inputs.offload_prefetch_step}, {mode}): the routed experts of {len(picked)} MoE layers "
        f"per GPU live in host memory, {resident} of them copied back at a time: "
        f"{moved:.1f} GiB off the GPU (OffloaderV2, utils/offloader.py)"
        + (f"; {tables:.2f} GiB of GPU page tables map the pinned copies" if tables >= 0.005
           else "")), tables


def _deepep_gib(inputs: MemoryInputs, assumptions: list[str]) -> float:
    """DeepEP's buffers per GPU with `--moe-a2a-backend deepep` on an MoE model (0 otherwise);
    says what it counted in `assumptions`."""
    target = inputs.target
    if (inputs.moe_a2a_backend or "none").lower() != "deepep" or target.moe is None:
        return 0.0
    mode = (inputs.deepep_mode or "auto").lower()
    tokens = inputs.deepep_dispatch_tokens
    where = "set"
    if tokens is None:
        fact = env_fact("SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK", inputs.sglang_version)
        default = fact.default if fact is not None else None
        tokens = default if isinstance(default, int) and not isinstance(default, bool) else None
        where = f"default, {fact.source}" if fact is not None and fact.source else "default"
    experts = target.moe.experts + max(inputs.ep_num_redundant_experts, 0)
    # SGLang runs DeepEP over the whole TP group (`ep_size = tp_size` for this backend).
    nvl, rdma = deepep_buffer_bytes(
        target.hidden_size, experts, inputs.tp, mode,
        tokens if tokens is not None and mode != "normal" else 0,
    )
    gib = (nvl + rdma) / GIB
    if gib:
        low_latency = (
            f"; low-latency RDMA {rdma / GIB:.2f} GiB for {tokens} tokens per rank "
            f"(SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK {where}) x {experts} experts"
            if mode != "normal" and tokens else ""
        )
        assumptions.append(
            f"DeepEP buffers ({mode} mode, {inputs.tp} ranks): {gib:.2f} GiB per GPU outside the "
            f"static pool, allocated at the first MoE dispatch (`DeepEPBuffer.get_deepep_buffer`): "
            f"NVLink {nvl / GIB:.2f} GiB{low_latency}; sizes from DeepEP's `csrc/config.hpp`"
        )
    return gib


def plan_memory(inputs: MemoryInputs, *, _with_suggestions: bool = True) -> MemoryPlan:
    """Plan the memory of one GPU for `inputs.target` on `gpus` x `gpu` at tensor parallel `tp`.

    `pp` pipeline stages (each GPU holds one stage's layers), `dp` with `enable_dp_attention`
    (attention weights replicated over the `dp` attention groups, a KV pool per group), `ep`
    (experts split over ep x moe-tp = tp GPUs: the same bytes per GPU). `free_gib` is the free
    memory of one GPU read on the host (`nvidia-smi`), else the card minus SGLang's context.
    `num_draft_tokens` is what the user typed; with `num_steps`/`topk` the plan uses the count
    SGLang will really use (auto table, topk-1 rewrite). `cpu_offload_gb` moves that many GiB of
    decoder-layer weights per GPU to the host; `max_total_tokens` caps the KV tokens. Raises
    ValueError for impossible inputs (tp x pp larger than the GPU count, sizes < 1, unknown
    algorithm).
    """
    target, gpu, gpus, tp = inputs.target, inputs.gpu, inputs.gpus, inputs.tp
    mem_fraction, draft, algorithm = inputs.mem_fraction, inputs.draft, inputs.algorithm
    num_draft_tokens, max_running_requests = inputs.num_draft_tokens, inputs.max_running_requests
    context_length, kv_cache_dtype = inputs.context_length, inputs.kv_cache_dtype
    dtype, quantization, cuda_graph_max_bs = inputs.dtype, inputs.quantization, inputs.cuda_graph_max_bs
    sglang_version, chunked_prefill_size = inputs.sglang_version, inputs.chunked_prefill_size
    disable_radix_cache, mamba_extra_buffer = inputs.disable_radix_cache, inputs.mamba_extra_buffer
    num_steps, topk, pp, dp, ep = inputs.num_steps, inputs.topk, inputs.pp, inputs.dp, inputs.ep
    enable_dp_attention, page_size = inputs.enable_dp_attention, inputs.page_size
    free_gib, disable_cuda_graph = inputs.free_gib, inputs.disable_cuda_graph
    swa_full_tokens_ratio = inputs.swa_full_tokens_ratio
    if tp < 1 or gpus < 1 or pp < 1 or dp < 1:
        raise ValueError("tp, pp, dp and the GPU count must be at least 1")
    _check_plan_ranges(
        {"tp": tp, "pp": pp, "dp": dp, "ep": ep, "GPU count": gpus},
        {"--max-running-requests": max_running_requests, "--cuda-graph-max-bs": cuda_graph_max_bs},
        {"--context-length": context_length, "--chunked-prefill-size": chunked_prefill_size,
         "--page-size": page_size},
        {"--speculative-num-draft-tokens": num_draft_tokens, "--speculative-num-steps": num_steps,
         "--speculative-eagle-topk": topk},
    )
    for name, number in (("--mem-fraction-static", mem_fraction), ("free memory", free_gib),
                         ("--swa-full-tokens-ratio", swa_full_tokens_ratio)):
        if number is not None and not math.isfinite(number):
            raise ValueError(f"{name} must be a finite number, got {number}")
    if mem_fraction is not None and not 0 < mem_fraction <= MAX_MEM_FRACTION:
        raise ValueError(
            "--mem-fraction-static is a fraction of the GPU memory (e.g. 0.85), "
            f"got {mem_fraction}"
        )
    if tp * pp > gpus:
        what = f"tp {tp}" if pp == 1 else f"tp {tp} x pp {pp}"
        raise ValueError(f"{what} needs {tp * pp} GPUs but only {gpus} are given")
    attention_dp = enable_dp_attention and dp > 1
    if attention_dp and tp % dp:
        raise ValueError(f"--dp {dp} with DP attention must divide --tp {tp}")
    attn_tp = tp // dp if attention_dp else tp
    algo = (algorithm or "").upper() or None
    if algo is not None and algo not in SPEC_ALGORITHMS:
        raise ValueError(f"unknown speculative algorithm {algorithm!r}")
    acc = accounting(sglang_version)
    assumptions: list[str] = []
    total_mib = gpu.memory_mib
    total_gib = total_mib / 1024
    reserve_ctx = context_reserve_gib(gpu, tp, gpus_per_node(inputs))
    context_label = "HIP context/RCCL" if gpu.is_hip else "CUDA context/NCCL"
    tool = "amd-smi/rocm-smi" if gpu.is_hip else "nvidia-smi"
    driver_held = 0.0
    if free_gib is not None:
        free_before = max(min(free_gib, total_gib) - reserve_ctx, 0.0)
        free_source: Literal["card", "nvidia-smi"] = "nvidia-smi"
        assumptions.append(
            f"free memory before loading: {free_gib:.2f} GiB read with {tool} minus "
            f"{reserve_ctx:.2f} GiB {context_label} = {free_before:.2f} GiB"
        )
    else:
        driver = driver_reserve_gib(gpu)
        free_before = total_gib - driver - reserve_ctx
        free_source = "card"
        driver_held = driver
        held = f" minus {driver:.2f} GiB the amdgpu driver holds" if driver else ""
        assumptions.append(
            f"free memory before loading: card {total_gib:.2f} GiB{held} minus {reserve_ctx:.2f} "
            f"GiB {context_label} ({gpu.generation}) = {free_before:.2f} GiB (nothing else on the GPU)"
        )

    # --- requests ------------------------------------------------------------------------------
    running = max_running_requests
    if running is None and algo is not None:
        running = SPEC_DEFAULT_MAX_RUNNING_REQUESTS
    draft_tokens = effective_draft_tokens(
        algo, num_steps, topk, num_draft_tokens, target.architecture, sglang_version
    )
    if algo is not None and draft_tokens != num_draft_tokens:
        assumptions.append(f"draft tokens: SGLang will use {draft_tokens}")
    if draft_tokens is None and algo is not None:
        draft_tokens = 4
        assumptions.append("draft tokens unknown (mixed steps/topk/draft tokens): 4 assumed")

    # --- SGLang's heuristic defaults -----------------------------------------------------------
    chunked = chunked_prefill_size or _default_chunked_prefill(total_mib, acc)
    graph_bs = cuda_graph_max_bs or _default_cuda_graph_max_bs(total_mib, tp, acc)
    mode = inputs.disaggregation_mode or "null"
    policy = graph_policy(sglang_version)
    prefill_graph, prefill_graph_note = prefill_graph_state(inputs, policy, algo)
    assumptions.append(f"prefill (piecewise) CUDA graphs {prefill_graph_note}")
    if mem_fraction is None and acc.fraction_tiers:
        fraction = round(
            (total_mib - _tiered_reserve_mib(acc.fraction_tiers, total_mib, tp, pp, algo,
                                             attention_dp)) / total_mib, 3)
        fraction = _vlm_adjust(fraction, target)
        fraction_source: Literal["given", "sglang-heuristic"] = "sglang-heuristic"
        assumptions.append(
            f"--mem-fraction-static unset: SGLang {sglang_version}'s heuristic (GPU-memory tiers, "
            f"{acc.fraction_tiers.get('site')}) gives {fraction:.3f}"
        )
    elif mem_fraction is None:
        base_reserve_mib = _sglang_base_reserve_mib(
            total_mib, chunked, graph_bs, tp, target, pp=pp, dp=dp if attention_dp else 1,
            policy=policy, prefill_graph=prefill_graph, mode=mode,
            decode_tokens=(running or graph_bs or 1) * (draft_tokens or 1),
            moe_a2a_backend=(inputs.moe_a2a_backend or "none").lower(),
            decode_graph=not disable_cuda_graph,
            graph_tokens_cap=inputs.max_total_tokens, context_length=inputs.context_length,
            typed_graph_tokens=inputs.prefill_graph_max_tokens,
            typed_graph_sizes=inputs.prefill_graph_sizes, said=assumptions,
        )
        spec_reserve = 0
        if algo is not None and algo != "NGRAM" and acc.spec_reserve_mib:
            spec_reserve = 6 * 1024 if algo == "STANDALONE" else acc.spec_reserve_mib
        fraction = round((total_mib - base_reserve_mib - spec_reserve) / total_mib, 3)
        if not (policy.vlm_adjust_skips_decode and mode == "decode"):
            # "PD decode engines do not need this headroom" (the encoder runs on prefill).
            fraction = _vlm_adjust(fraction, target)
        fraction_source = "sglang-heuristic"
        assumptions.append(
            f"--mem-fraction-static unset: SGLang {sglang_version}'s heuristic gives {fraction:.3f}"
        )
    else:
        fraction = mem_fraction
        fraction_source = "given"
    aiter = _aiter_scale(inputs, given=fraction_source == "given")
    if aiter is not None:
        fraction = fraction * aiter[0]  # `mem_fraction_static *= 0.85`: not rounded again
        assumptions.append(f"mem_fraction_static {fraction:.5g} {aiter[1]}")
    static_gib = free_before * fraction
    reserve_gib = free_before - static_gib

    # --- weights --------------------------------------------------------------------------------
    weights = _weights(target, dtype=dtype, quantization=quantization, tp=attn_tp)
    stages = pp_stage_layers(target.num_layers, pp, _release(sglang_version).behaviour
                             .pp_layer_split, inputs.pp_layer_partition)
    load_overhead_gib = LOAD_KERNELS_GIB + rope_cache_bytes(target) / GIB
    # --moe-dense-tp-size 1: the dense MLP layers of an MoE model are whole on every GPU
    # (deepseek_v2 `DeepseekV2MLP(tp_size=1)`); --enable-dp-lm-head splits the head over the
    # attention-TP group only.
    dense_tp = inputs.moe_dense_tp_size if target.moe is not None else None
    head_tp = attn_tp if (inputs.enable_dp_lm_head and attention_dp) else tp
    stage_weights = tuple(
        weights.per_gpu(tp, pp, attn_tp, target.num_layers, layers, attention_dp, dense_tp,
                        head_tp, pp_rank=rank) / GIB + load_overhead_gib
        for rank, layers in enumerate(stages)
    )
    # Every stage sizes its KV pool from its own free memory, then SGLang takes the smallest
    # token count over the stages (`ReduceOp.MIN` in the KV sizing): the plan is of the stage
    # with the fewest tokens, by its weights and layers (the cell scales with the layers).
    budget = free_before * fraction
    all_layers_kv = target.architecture in _release(sglang_version).arch_set("pp_kv_all_layers")
    rank = min(range(len(stages)), key=lambda r: (
        (budget - stage_weights[r]) / (1 if all_layers_kv else max(stages[r], 1)),
        -stage_weights[r]))
    stage_layers = stages[rank]
    weights_gib = stage_weights[rank]
    if pp > 1:
        assumptions.append(
            f"pipeline stages of {'/'.join(map(str, stages))} decoder layers ("
            + ("SGLANG_PP_LAYER_PARTITION" if inputs.pp_layer_partition else
               f"SGLang {sglang_version}'s get_pp_indices")
            + f"); the plan is of stage {rank} ({stage_layers} layers"
            + (", the embedding" if rank == 0 else "") + (", the head" if rank == pp - 1 else "")
            + "), the one with the fewest KV tokens, which SGLang takes for every stage"
        )
    aiter_copy = _aiter_moe_copy_gib(inputs, weights, tp, stage_layers / max(target.num_layers, 1))
    if aiter_copy is not None:
        weights_gib += aiter_copy[0]
        assumptions.append(f"weights {aiter_copy[1]}")
    kept = _online_fp8_kept_gib(inputs, dtype, tp, attn_tp, stage_layers, dense_tp)
    if kept is not None:
        weights_gib += kept[0]
        stage_weights = tuple(w + kept[0] * layers / max(stage_layers, 1)
                              for w, layers in zip(stage_weights, stages, strict=True))
        assumptions.append(f"weights {kept[1]}")
    # --cpu-offload-gb: SGLang's offloader moves decoder-layer parameters to pinned host memory
    # until that many GiB per process are offloaded (`utils/offloader.py` `maybe_offload_to_cpu`,
    # `cpu_offload_gb * 1024**3`); the embedding, head and norms stay on the GPU.
    offload_gib = 0.0
    if inputs.cpu_offload_gb > 0:
        layers_gib = (
            weights.layers_per_gpu(tp, attn_tp, target.num_layers, stage_layers, dense_tp) / GIB
        )
        offload_gib = min(float(inputs.cpu_offload_gb), layers_gib)
        weights_gib -= offload_gib
        assumptions.append(
            f"--cpu-offload-gb {inputs.cpu_offload_gb:g}: {offload_gib:.1f} GiB of decoder-layer "
            "weights per GPU live in host memory (copied in for every forward pass)"
        )
        builds = _layer_builds(target, dtype, quantization, tp, attn_tp, dense_tp, pp, stage_layers)
        held_gib = offload_build_overhead(
            builds, head_bytes(target, dtype, head_tp) if rank == len(stages) - 1 else 0,
            int(inputs.cpu_offload_gb * GIB),
        ) / GIB
        if held_gib > 0.005:
            weights_gib += held_gib
            assumptions.append(
                f"--cpu-offload-gb: {held_gib:.2f} GiB of freed layer blocks stay reserved (PyTorch's "
                "caching allocator carves tensors built after an offloaded layer, such as the "
                "rotary cache or the LM head, out of its freed blocks; empty_cache cannot return "
                "those segments)"
            )
        pinned = pinned_host_bytes(builds, int(inputs.cpu_offload_gb * GIB))
        tables_gib = pinned_page_table_bytes(pinned) / GIB
        if tables_gib > 0.005:
            weights_gib += tables_gib
            assumptions.append(
                f"--cpu-offload-gb: {tables_gib:.2f} GiB of device memory for the page tables that "
                f"map the {pinned / GIB:.0f} GiB of pinned host memory into the GPU's address space "
                "(8 bytes per 4 KiB page; PyTorch rounds each pinned copy up to a power of two). "
                "A driver that maps system memory in larger pages needs less"
            )

    for moved in (_kt_cpu_experts_gib(inputs, weights, tp, stage_layers),
                  _group_offload_gib(inputs, weights, tp, stage_layers)):
        if moved is not None:
            weights_gib -= moved[0] - moved[2]
            offload_gib += moved[0]
            assumptions.append(moved[1])

    # --- draft / MTP ---------------------------------------------------------------------------
    draft_gib = 0.0
    # The EAGLE / MTP draft model builds its own vocabulary-sized embedding and head,
    # unquantized (the MTP layers of the checkpoint hold neither), and swaps them for the
    # target's in `init_lm_head` (`set_embed_and_head`, then `empty_cache`). Where that runs in
    # the draft worker's `alloc_memory_pool` (`speculative/eagle_worker_v2.py`), the scheduler
    # has already sized the KV cache (`Scheduler.init_memory_pools`: `init_target_memory_pool`
    # first), so both copies are in the static pool then and freed after it (trait
    # `draft_head_shared_after_sizing`).
    own_head_gib = 0.0
    plain = _plain_bytes(target, dtype)
    unquantized = plain * target.vocab_size * target.hidden_size
    mtp_head_gib = (
        unquantized / (1 if attention_dp else tp)
        + (0 if target.tie_word_embeddings else unquantized / head_tp)
    ) / GIB
    draft_kind: str | None = None
    draft_kv_per_token = 0
    kv_elem = _kv_bytes(kv_cache_dtype, dtype or target.dtype)
    if algo in DRAFT_ALGORITHMS:
        if draft is not None:
            draft_kind = f"draft model {draft.architecture or draft.family}"
            dw = _weights(draft, dtype=dtype or target.dtype, quantization=None, tp=attn_tp)
            full = dw.per_gpu(tp, 1, attn_tp, draft.num_layers)
            # The vocabulary embedding it takes from the target (`dw.embedding` of an EAGLE-3
            # draft also holds its fc and wider qkv input, which stay), and the head unless
            # EAGLE-3 (its own draft-vocabulary head stays).
            draft_dtype = dtype or target.dtype
            own_embedding = (
                _unquantized_bytes(draft_dtype if draft_dtype != "auto" else draft.dtype)
                * draft.vocab_size * draft.hidden_size
            )
            shared = own_embedding if algo == "EAGLE3" else own_embedding + dw.lm_head
            if algo in ("STANDALONE", "DFLASH"):
                shared = 0.0
            draft_gib = max(full - shared / tp, 0.0) / GIB
            own_head_gib = shared / tp / GIB
            draft_kv_per_token = _kv_cell(draft, attn_tp, kv_elem, layers=draft.num_layers)[0]
            if algo in ("EAGLE", "EAGLE3"):
                draft_kv_per_token = _kv_cell(draft, attn_tp, kv_elem, layers=1)[0]
        elif weights.mtp_total > 0:
            draft_kind = f"{target.mtp_layers} MTP layer(s) of the checkpoint"
            draft_gib = weights.mtp_total / tp / GIB
            own_head_gib = mtp_head_gib
            draft_kv_per_token = _kv_cell(target, attn_tp, kv_elem, layers=1)[0]
        elif algo == "NEXTN":
            draft_kind = "MTP layer (not found in config.json: counted as one decoder layer)"
            per_layer = (weights.layers_sharded / tp + weights.attention / attn_tp) / max(
                target.num_layers, 1
            )
            draft_gib = per_layer / GIB
            own_head_gib = mtp_head_gib
            draft_kv_per_token = _kv_cell(target, attn_tp, kv_elem, layers=1)[0]
            assumptions.append("no MTP layer count in config.json; one decoder layer assumed")

    # --- KV cache and recurrent state ----------------------------------------------------------
    full_layers = target.full_attention_layers
    # SGLang's model runner sizes the pool for `getattr(model, "start_layer", 0)` ..
    # `end_layer` (default: every layer): a model class without a layer range (release data
    # `archs.pp_kv_all_layers`, e.g. Qwen2.5-VL, Llava) gets every layer's KV on each stage.
    kv_pp = pp
    if pp > 1 and all_layers_kv:
        kv_pp = 1
        assumptions.append(
            f"{target.architecture} has no start_layer/end_layer: SGLang {sglang_version} sizes "
            f"the KV cache of every pipeline stage for all {full_layers} attention layers")
    stage_full = math.ceil(full_layers / kv_pp)
    sliding = target.sliding_window_layers if target.sliding_window_layers < target.num_layers else 0
    swa_ratio = SWA_FULL_TOKENS_RATIO if swa_full_tokens_ratio is None else swa_full_tokens_ratio
    if sliding and hybrid_swa_model(target.architecture, sglang_version):
        stage_swa = math.ceil(sliding / kv_pp)
        stage_full = max(stage_full - stage_swa, 0)
    else:
        stage_swa = 0
    cell, kv_per_token, layout = _kv_cell(
        target, attn_tp, kv_elem, layers=stage_full, nsa_scaled=acc.nsa_scaled_cell,
        sm100=gpu.is_sm100, kv_cache_dtype=kv_cache_dtype,
    )
    if stage_swa:
        swa_one = _kv_cell(target, attn_tp, kv_elem, layers=stage_swa)[0]
        cell = int(cell + swa_ratio * swa_one)
        kv_per_token = int(kv_per_token + swa_ratio * swa_one)
        layout += f" + {stage_swa} sliding-window layers at {swa_ratio:g} x the tokens"
    draft_counted_gib = draft_gib if acc.draft_in_static_pool else 0.0
    placeholder_gib = 0.0
    if acc.draft_in_static_pool and acc.draft_head_shared_after_sizing and own_head_gib > 0:
        placeholder_gib = own_head_gib
        assumptions.append(
            f"the draft's own embedding and head ({placeholder_gib:.2f} GiB per GPU, unquantized) "
            "are resident while SGLang sizes the KV cache and freed after it (`init_lm_head` "
            "runs in the draft worker's `alloc_memory_pool`): counted in the static pool, "
            "free outside it afterwards"
        )
    rest_gib = static_gib - weights_gib - draft_counted_gib - placeholder_gib
    mamba_per_req = _mamba_state_per_request(target, attn_tp, pp)
    spec_mamba_gib = 0.0
    mamba_pool_gib = 0.0
    running_limit: int | None = None
    if mamba_per_req > 0:
        per_group = running // dp if (running and attention_dp) else running
        if algo is not None and per_group and draft_tokens:
            spec_mamba_gib = mamba_per_req * per_group * draft_tokens / GIB
        after_spec = rest_gib - spec_mamba_gib
        if inputs.max_mamba_cache_size:
            # `_init_pools`... `max_mamba_cache_size // dp_size` when given (per DP group).
            slots = inputs.max_mamba_cache_size // (dp if attention_dp else 1)
        elif disable_radix_cache and per_group:
            slots = per_group
        else:
            slots = max(
                int(after_spec * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO) * GIB)
                // mamba_per_req,
                0,
            )
        mamba_pool_gib = slots * mamba_per_req / GIB
        extra_buffer = mamba_extra_buffer if mamba_extra_buffer is not None else algo is not None
        ratio = (
            1
            if disable_radix_cache
            else MAMBA_CACHE_RATIO + (MAMBA_EXTRA_BUFFER_RATIO_OVERLAP if extra_buffer else 0)
        )
        running_limit = slots // ratio
        kv_budget_gib = after_spec - mamba_pool_gib
    else:
        kv_budget_gib = rest_gib
    page = max(page_size or 1, 1)
    kv_tokens = int(max(kv_budget_gib, 0) * GIB // cell) if cell else 0
    kv_tokens = kv_tokens // page * page
    if inputs.max_total_tokens is not None and 0 < inputs.max_total_tokens < kv_tokens:
        # `_apply_token_constraints`: the user's cap wins when it is below the profiled value.
        assumptions.append(
            f"--max-total-tokens {inputs.max_total_tokens:,} caps the {kv_tokens:,} KV tokens "
            "the pool would hold"
        )
        kv_tokens = inputs.max_total_tokens // page * page
        # The pool is allocated for the capped tokens only: the rest of the budget stays free
        # outside it (room for CUDA graphs and activations).
        capped_gib = kv_tokens * cell / GIB
        uncapped_gib = max(kv_budget_gib - capped_gib, 0.0)
        kv_budget_gib = capped_gib
    else:
        uncapped_gib = 0.0
    swa_tokens = int(kv_tokens * swa_ratio) // page * page if stage_swa else None

    # --- what must fit outside the static pool -------------------------------------------------
    ctx = context_length or target.context_length
    draft_kv_gib = kv_tokens * draft_kv_per_token / GIB
    req_slots = _max_running_requests(running, kv_tokens, ctx, dp if attention_dp else 1)
    if running_limit is not None:
        req_slots = min(req_slots, max(running_limit, 1))
    extra_ctx = 4 + (draft_tokens or 0)
    req_rows = req_slots
    if mode == "decode":
        # A decode server adds rows for requests still arriving from prefill (SGLang
        # `_init_pools`: SGLANG_DISAGGREGATION_NUM_PRE_ALLOCATE_REQS, or 2 x the requests when
        # <= 32; later `--disaggregation-decode-extra-slots`, same default).
        extra = inputs.disaggregation_decode_extra_slots
        if extra is None:
            extra = req_slots * 2 if req_slots <= 32 else 0
        req_rows += extra
        if extra:
            assumptions.append(
                f"decode server: {extra} extra request rows pre-allocated for transfers"
            )
    req_to_token_gib = req_rows * ((ctx or 4096) + extra_ctx) * 4 / GIB
    assumptions.append(
        f"request table (req_to_token): {req_rows:,} requests x {(ctx or 4096) + extra_ctx:,} "
        f"positions x 4 B = {req_to_token_gib:.2f} GiB outside the static pool"
    )
    activation_gib = _activation_gib(target, chunked, tp, attn_tp)
    no_graphs = disable_cuda_graph or (policy.prefill_server_no_graphs and mode == "prefill")
    graph_gib = 0.0 if no_graphs else (
        graph_bs * 2 / 1024 * (2 if algo in DRAFT_ALGORITHMS else 1)
    )
    outside_draft = 0.0 if acc.draft_in_static_pool else draft_gib
    aiter_gib = _aiter_workspace_gib(inputs, req_rows, ctx or 4096, attn_tp)
    if aiter_gib:
        assumptions.append(
            f"aiter attention workspace: {req_rows:,} requests x "
            f"{max(target.num_attention_heads // max(attn_tp, 1), 1)} heads x the context in "
            f"partitions x (head dim x 4 + 8) B = {aiter_gib:.2f} GiB outside the static pool, "
            "allocated when the backend starts")
    deepep_gib = _deepep_gib(inputs, assumptions)
    # --- hierarchical cache: a host copy of the KV pool --------------------------------------
    # SGLang's `mem_cache/memory_pool_host.py` `HostKVCache.__init__`: `hicache_size` GB per
    # process, else the device pool x `hicache_ratio`; it must be larger than the device pool.
    host_gib = host_tables_gib = 0.0
    host_too_small = False
    if inputs.enable_hierarchical_cache and kv_tokens > 0:
        if inputs.hicache_size_gb > 0:
            host_tokens = int(inputs.hicache_size_gb * 1e9 // max(kv_per_token, 1))
        else:
            host_tokens = int(kv_tokens * inputs.hicache_ratio)
        host_tokens = (host_tokens // page + 1) * page
        host_gib = host_tokens * kv_per_token / GIB
        host_too_small = host_tokens <= kv_tokens
        assumptions.append(
            f"hierarchical cache: {host_tokens:,} KV tokens in host memory, {host_gib:.1f} GiB per "
            f"GPU, {host_gib * gpus:.1f} GiB over the {gpus} GPU processes (pinned host RAM)"
        )
        # The pool is pinned with `cudaHostRegister` (`alloc_with_host_register`), which maps it
        # into the GPU's address space: its page tables take device memory outside the pool.
        host_tables_gib = pinned_page_table_bytes(int(host_gib * GIB)) / GIB
        if host_tables_gib > 0.005:
            assumptions.append(
                f"hierarchical cache: {host_tables_gib:.2f} GiB of device memory outside the "
                "static pool for the page tables that map the pinned host pool into the GPU's "
                "address space (8 bytes per 4 KiB page)"
            )

    need_gib = (
        WORKSPACE_GIB + req_to_token_gib + activation_gib + graph_gib + outside_draft + draft_kv_gib
        + aiter_gib + deepep_gib + host_tables_gib
    )
    # The draft's own embedding and head, counted in the static pool, are free again once the
    # draft's pool is allocated: room outside the pool for what runs after (graphs, activations).
    headroom = reserve_gib + placeholder_gib + uncapped_gib - need_gib
    # Below this the process cannot even start: everything allocated before it serves. A draft
    # loaded after the pool is sized holds its own embedding and head while its KV pool is
    # allocated (the draft `TpModelWorker` is built before `init_lm_head` swaps them in the
    # `__init__` of `eagle_worker.py` / `eagle_worker_v2.py`; see docs/inspect.md).
    outside_draft_peak = outside_draft + (own_head_gib if outside_draft else 0.0)
    minimum_gib = WORKSPACE_GIB + req_to_token_gib + outside_draft_peak + draft_kv_gib + aiter_gib

    reasons: list[str] = []
    verdict: Verdict = "fits"
    if rest_gib <= 0:
        verdict = "will_not_fit"
        reasons.append(
            f"the weights need {weights_gib + draft_counted_gib + placeholder_gib:.1f} GiB per GPU, "
            f"{weights_gib + draft_counted_gib + placeholder_gib - static_gib:.1f} GiB more than "
            "the static pool"
        )
    elif kv_tokens <= 0:
        verdict = "will_not_fit"
        reasons.append("no memory left for the KV cache after weights and recurrent state")
    elif host_too_small:
        verdict = "will_not_fit"
        reasons.append(
            "the hierarchical cache's host pool must hold more tokens than the GPU KV pool "
            f"({kv_tokens:,}); SGLang asserts this at start: raise --hicache-ratio above 1 or "
            "--hicache-size"
        )
    elif reserve_gib + uncapped_gib < minimum_gib:
        verdict = "will_not_fit"
        reasons.append(
            f"outside the static pool {reserve_gib:.1f} GiB must hold at least "
            f"{minimum_gib:.1f} GiB (attention workspace"
            + (f" incl. aiter's {aiter_gib:.1f}" if aiter_gib else "")
            + f", req-to-token table {req_to_token_gib:.2f}"
            + (f", draft weights as loaded {outside_draft_peak:.1f}" if outside_draft else "")
            + (f", draft KV {draft_kv_gib:.1f}" if draft_kv_gib else "")
            + ")"
        )
    if verdict == "fits":
        if headroom < 0:
            verdict = "tight"
            reasons.append(
                f"outside the static pool {reserve_gib:.1f} GiB is {-headroom:.1f} GiB short of "
                f"the workspace, req-to-token table, prefill activations and CUDA graphs"
                + (f" and DeepEP's {deepep_gib:.1f} GiB of buffers" if deepep_gib else "")
                + (f" and the host pool's {host_tables_gib:.1f} GiB of page tables"
                   if host_tables_gib >= 0.05 else "")
                + (" once the draft is loaded" if draft_gib else "")
            )
        if ctx and kv_tokens < ctx:
            verdict = "tight"
            reasons.append(
                f"the KV pool holds {kv_tokens:,} tokens, fewer than the context length {ctx:,}: "
                "one full-length request cannot fit, so long requests will be refused or "
                "truncated at serving time (SGLang starts and says so)"
            )
        if running_limit is not None and running and running_limit < (
            running // dp if attention_dp else running
        ):
            verdict = "tight"
            reasons.append(
                f"the recurrent-state pool holds {count(running_limit, 'running request')}, "
                f"fewer than max running requests {running}"
            )

    plan = MemoryPlan(
        gpu=gpu.name,
        gpus=gpus,
        tp=tp,
        gpu_total_gib=total_gib,
        mem_fraction_static=fraction,
        mem_fraction_source=fraction_source,
        static_pool_gib=static_gib,
        weights_gib=weights_gib,
        weights_source=weights.source,
        draft_weights_gib=draft_gib,
        draft_kind=draft_kind,
        kv_budget_gib=kv_budget_gib,
        kv_bytes_per_token=kv_per_token,
        kv_tokens=kv_tokens,
        draft_kv_bytes_per_token=draft_kv_per_token,
        draft_kv_gib=draft_kv_gib,
        mamba_state_per_request_mib=mamba_per_req / MIB,
        mamba_pool_gib=mamba_pool_gib,
        spec_mamba_buffer_gib=spec_mamba_gib,
        max_running_requests=running,
        max_running_requests_limit=running_limit,
        reserve_gib=reserve_gib,
        activation_estimate_gib=activation_gib,
        cuda_graph_estimate_gib=graph_gib,
        headroom_gib=headroom,
        context_length=ctx,
        verdict=verdict,
        reasons=tuple(reasons),
        assumptions=tuple(assumptions),
        pp=pp,
        dp=dp,
        attention_dp=attention_dp,
        ep=ep,
        attention_tp=attn_tp,
        free_before_load_gib=free_before,
        free_memory_source=free_source,
        context_reserve_gib=reserve_ctx,
        driver_reserve_gib=driver_held,
        context_label=context_label,
        kv_layout=layout,
        kv_cell_bytes=cell,
        swa_kv_tokens=swa_tokens,
        req_to_token_gib=req_to_token_gib,
        draft_in_static_pool=acc.draft_in_static_pool and draft_gib > 0,
        layers_per_gpu=stage_layers,
        sglang_version=sglang_version,
        load_overhead_gib=load_overhead_gib,
        cpu_offload_gib=offload_gib,
        disaggregation_mode=mode,
        req_to_token_rows=req_rows,
        prefill_graph=prefill_graph,
        prefill_graph_note=prefill_graph_note,
        hicache_host_gib=host_gib,
        hicache_host_total_gib=host_gib * gpus,
        draft_placeholder_gib=placeholder_gib,
        draft_loaded_gib=draft_gib + own_head_gib,
        deepep_buffer_gib=deepep_gib,
        kv_cap_free_gib=uncapped_gib,
        stage_weights_gib=stage_weights,
    )
    if _with_suggestions:
        def replan(**changes: Any) -> MemoryPlan:
            return bare_plan(inputs.with_edits(**changes))

        # Online FP8 (`--quantization fp8`) halves bf16 weights; SGLang runs it on SM89 and newer.
        fp8_ok = target.quant is None and quantization is None and gpu.sm >= 89
        fixes = _suggest(plan, weights, gpus, graph_bs, kv_cache_dtype, replan, fp8_ok)
        plan.fixes.extend(fixes)
        plan.suggestions.extend(f.label for f in fixes)
    return plan


_BARE_PLANS: dict[tuple[Any, ...], MemoryPlan | ValueError] = {}


def bare_plan(inputs: MemoryInputs) -> MemoryPlan:
    """A plan without suggestions, cached: trying fixes replans the same inputs again and again
    (every keystroke re-checks, and verifying an error's fixes re-checks once per fix)."""
    key = inputs.cache_key()
    cached = _BARE_PLANS.get(key)
    if cached is None:
        try:
            cached = plan_memory(inputs, _with_suggestions=False)
        except ValueError as exc:
            cached = exc
        if len(_BARE_PLANS) > 2048:
            _BARE_PLANS.clear()
        _BARE_PLANS[key] = cached
    if isinstance(cached, ValueError):
        raise cached
    return cached


def hybrid_swa_model(architecture: str | None, version: str) -> bool:
    """SGLang runs a model that has sliding-window layers with a hybrid SWA KV pool: the
    release's `hybrid_swa` list (`is_hybrid_swa_model`), or every architecture but Llama 4 where
    its model runner decides by the sliding window alone (`hybrid_swa_rule`, release data)."""
    release = _release(version)
    rule = release.behaviour.hybrid_swa_rule
    if rule == "list":
        return architecture in release.arch_set("hybrid_swa")
    if rule == "sliding_window":
        return architecture is not None and "Llama4" not in architecture
    return False


def _max_running_requests(
    running: int | None, kv_tokens: int, context: int | None, dp: int
) -> int:
    """SGLang's `_resolve_max_num_reqs`: the request slots of the req-to-token table (per DP group)."""
    estimated = int(kv_tokens / max(context or 4096, 1) * 512)
    estimated = max(min(estimated, 4096), 2048)
    if running is not None:
        return min(running // dp, estimated)
    return min(estimated, kv_tokens // 2)


def _activation_gib(target: ModelFacts, chunked: int, tp: int, attn_tp: int) -> float:
    """Peak activations of one prefill chunk on one GPU (bf16): hidden states, the attention
    projections and the MLP's widest tensor (MoE: the active experts' intermediate)."""
    hidden = target.hidden_size
    moe = target.moe
    if moe is not None and moe.expert_intermediate_size:
        width = moe.expert_intermediate_size * max(moe.active_experts, 1) + (
            moe.expert_intermediate_size * moe.shared_experts
        )
    else:
        layers = max(target.num_layers, 1)
        parts = target.params_estimate
        width = (parts.dense_mlp // layers // max(hidden, 1) // 3) if parts else 4 * hidden
    heads = target.num_attention_heads * target.head_dim
    per_token = 2 * (4 * hidden + 3 * heads / attn_tp + 3 * width / tp)
    return chunked * per_token / GIB


# --------------------------------------------------------------------------------------------
# SGLang heuristics
# --------------------------------------------------------------------------------------------


def _default_chunked_prefill(total_mib: int, acc: Accounting) -> int:
    """`_handle_gpu_memory_settings`: chunked prefill size by card memory."""
    if total_mib < 20 * 1024:
        return 2048
    if total_mib < 35 * 1024:
        return acc.small_card_chunked
    if total_mib < 60 * 1024:
        return 4096
    if total_mib < 160 * 1024:
        return 8192
    return 16384


def _default_cuda_graph_max_bs(total_mib: int, tp: int, acc: Accounting) -> int:
    """`_handle_gpu_memory_settings`: CUDA-graph max batch by card memory and tp."""
    if total_mib < 20 * 1024:
        return 8
    if total_mib < 35 * 1024:
        return acc.small_card_graph_bs[0 if tp < 4 else 1]
    if total_mib < 60 * 1024:
        return 32 if tp < 4 else 160
    if total_mib < 160 * 1024:
        return 256 if tp < 4 else 512
    return 512


def prefill_graph_term_mib(
    policy: GraphPolicy, chunked: int, target: ModelFacts, *,
    graph_tokens_cap: int | None = None, context_length: int | None = None,
    typed_graph_tokens: int | None = None, typed_graph_sizes: int | None = None,
) -> float:
    """The release's own prefill-graph term of the heuristic (trait `prefill_graph_reserve`): its
    max tokens default (the chunked prefill, a fixed 4096, 2048 for MLA) and caps
    (--max-total-tokens, --context-length), then `// N` or `len(capture sizes) * N`. A typed max
    tokens replaces the default and its caps (SGLang computes them only when the flag is None);
    typed capture sizes are counted as they are."""
    rule = policy.reserve
    mla = target.attention == "MLA" and bool(target.kv_lora_rank)
    tokens = typed_graph_tokens or rule.max_graph_tokens(
        chunked, mla=mla, max_total_tokens=graph_tokens_cap, context_length=context_length,
        model_path=target.source)
    if typed_graph_sizes and rule.form == "sizes_times":
        return float(typed_graph_sizes * rule.factor)
    return float(rule.term_mib(tokens))


def _sglang_base_reserve_mib(
    total_mib: int,
    chunked: int,
    graph_bs: int,
    tp: int,
    target: ModelFacts,
    *,
    pp: int = 1,
    dp: int = 1,
    policy: GraphPolicy = _FALLBACK_POLICY,
    prefill_graph: bool = True,
    mode: str = "null",
    decode_tokens: int = 1,
    moe_a2a_backend: str = "none",
    decode_graph: bool = True,
    graph_tokens_cap: int | None = None,
    context_length: int | None = None,
    typed_graph_tokens: int | None = None,
    typed_graph_sizes: int | None = None,
    said: list[str] | None = None,
) -> float:
    """SGLang's estimate of activations + CUDA graphs (MiB), before the speculative reserve
    (`_handle_gpu_memory_settings`; later `reserve_for_graph_mb` and
    `reserve_for_deepep_a2a_mb`; then `arg_groups/memory_hook.py`). `dp` > 1 only with DP
    attention. The prefill (piecewise) graph term counts only when `prefill_graph` is on
    (`prefill_graph_state`); releases with `policy.by_role` count graphs per PD role: a decode
    server sizes activations by its running requests x draft tokens and has no prefill graph, a
    prefill server has no decode graph, and DeepEP adds 2 GiB where decode graphs run. Where
    the release's own prefill-graph term is counted, its size and source line go to `said`."""
    by_role = policy.by_role
    activation_tokens = max(chunked, 2048)
    if by_role and mode == "decode":
        activation_tokens = max(decode_tokens, 2048)
    reserve = 512 + activation_tokens * 1.5 + tp * pp / 8 * 1024
    decode_graph_on = not (by_role and (mode == "prefill" or not decode_graph))
    if decode_graph_on:
        reserve += graph_bs * 2
    if dp > 1 and not (by_role and mode == "prefill"):
        reserve += graph_bs * dp * 3
        if graph_bs > 300:
            reserve += graph_bs * dp * 1.5
    after_floor = 0.0
    if prefill_graph and not (by_role and mode == "decode"):  # no prefill graph on a decode server
        mla = target.attention == "MLA" and bool(target.kv_lora_rank)
        if mla and policy.mla_reserve_mib:
            reserve += policy.mla_reserve_mib
        else:
            term = prefill_graph_term_mib(
                policy, chunked, target, graph_tokens_cap=graph_tokens_cap,
                context_length=context_length, typed_graph_tokens=typed_graph_tokens,
                typed_graph_sizes=typed_graph_sizes)
            if policy.reserve.after_floor:
                after_floor += term
            else:
                reserve += term
            if said is not None and policy.reserve.site:
                where = "after" if policy.reserve.after_floor else "before"
                said.append(f"the heuristic reserves {term:,.0f} MiB for them "
                            f"({policy.reserve.site}, {where} the 10 GiB floor)")
        if policy.prefill_graph_default == "breakable" and moe_a2a_backend == "deepep":
            reserve += policy.breakable_deepep_mib
    if total_mib > 60 * 1024:
        reserve = max(reserve, 10 * 1024)
    reserve += after_floor
    if by_role and mode != "prefill" and decode_graph and moe_a2a_backend == "deepep":
        reserve += 2 * 1024  # `reserve_for_deepep_a2a_mb`: on top of the 10 GiB floor
    return reserve


def _vlm_adjust(fraction: float, target: ModelFacts) -> float:
    """SGLang's `adjust_mem_fraction_for_vlm` for checkpoints with a vision tower."""
    if not target.params_estimate or target.params_estimate.vision == 0:
        return fraction
    layers, width = target.vision_layers or 24, target.vision_hidden_size or 1024
    ratio = layers * width**2 / (24 * 1024**2)
    factor = max(0.8, min(1.05, 1.0 - 0.1 * (ratio - 1.0)))
    # Not rounded: `mem_fraction_static = original * final_overall_factor` (server_args.py
    # `adjust_mem_fraction_for_vlm`, arg_groups/memory_hook.py in the later releases); the
    # Kimi-K2.5 log on 8x MI355X prints the unrounded 0.8260405859375.
    return fraction * 0.95 * factor


# --------------------------------------------------------------------------------------------
# Sizes
# --------------------------------------------------------------------------------------------


def rope_cache_bytes(target: ModelFacts) -> int:
    """The rotary embedding's cos/sin cache: max positions x rotary dim in float32 (SGLang's
    `RotaryEmbedding` keeps it in FP32 on CUDA, `register_buffer("cos_sin_cache")`)."""
    return (target.context_length or 0) * (target.rotary_dim or target.head_dim) * 4


def head_bytes(target: ModelFacts, dtype: str | None, head_tp: int) -> int:
    """Bytes of one GPU's LM head shard: `ParallelLMHead` pads the vocabulary to a multiple of 64
    (`DEFAULT_VOCAB_PADDING_SIZE`) and splits it over `head_tp`; 0 when tied to the embedding."""
    if target.tie_word_embeddings:
        return 0
    plain = _plain_bytes(target, dtype)
    padded = -(-target.vocab_size // 64) * 64
    return int(-(-padded // head_tp) * target.hidden_size * plain)


def _module_bytes(facts: ModelFacts, module: str, plain: float, online_fp8: bool) -> float:
    """Bytes per parameter of one module: the checkpoint's quantization where it covers the
    module, 1 under online FP8, else the unquantized dtype."""
    if facts.quant is not None and facts.quant.quantizes(module):
        return facts.quant.bytes_per_param()
    return 1.0 if online_fp8 else plain


def _layer_builds(
    facts: ModelFacts,
    dtype: str | None,
    quantization: str | None,
    tp: int,
    attn_tp: int,
    dense_tp: int | None,
    pp: int,
    stage_layers: int,
) -> tuple[LayerBuild, ...]:
    """The decoder layers of the stage that builds the head (the last), as the GPU allocates
    them: their large tensors per GPU in construction order, and the rotary cache in the first
    full-attention layer (`get_rope` before `qkv_proj`, as models/qwen3_5.py builds it). The
    norms, scales, biases and the Gated DeltaNet's small gates (up to 1 MiB: PyTorch's small
    pool) are left out."""
    plain = _plain_bytes(facts, dtype)
    online_fp8 = quantization in ("fp8", "w8a8_fp8") and facts.quant is None

    def sized(params: float, module: str) -> int:
        return int(params * _module_bytes(facts, module, plain, online_fp8))

    hidden, layer = facts.hidden_size, "model.layers.7"
    heads = max(facts.num_attention_heads // attn_tp, 1)
    kv_heads = max(facts.num_kv_heads // attn_tp, 1)
    attn = f"{layer}.self_attn.o_proj"
    attention: tuple[int, ...]
    if facts.attention == "MLA":
        rope, nope = facts.qk_rope_head_dim or 64, facts.head_dim - (facts.qk_rope_head_dim or 64)
        kv_lora, v_dim = facts.kv_lora_rank or 512, facts.v_head_dim or 128
        attention = (sized(hidden * (kv_lora + rope), attn),
                     sized(kv_lora * heads * (nope + v_dim), attn),
                     sized(heads * v_dim * hidden, attn))
    else:
        gated = 2 if facts.hybrid is not None and facts.linear_attention is not None else 1
        qkv = heads * facts.head_dim * gated + 2 * kv_heads * facts.head_dim
        attention = (sized(hidden * qkv, attn), sized(heads * facts.head_dim * hidden, attn))
    linear: tuple[int, ...] = attention
    dims = facts.linear_attention
    if dims is not None:
        gdn = f"{layer}.linear_attn.out_proj"
        key = dims.num_key_heads * dims.key_head_dim // attn_tp
        value = dims.num_value_heads * dims.value_head_dim // attn_tp
        # the input projections as one tensor (in_proj_qkvz; a model that builds q/k/v and z
        # apart has the same bytes in two blocks, which moves the result by 0.2 points on the
        # Qwen3.5 offload log)
        linear = (sized(hidden * (2 * key + 2 * value), gdn), sized(value * hidden, gdn))
    moe = facts.moe
    sparse: tuple[int, ...] = ()
    if moe is not None:
        routed = moe.experts * moe.expert_intermediate_size // tp  # experts x intermediate per GPU
        experts = f"{layer}.mlp.experts.3.down_proj"
        shared = moe.shared_experts * moe.expert_intermediate_size // tp
        sparse = (sized(routed * 2 * hidden, experts), sized(routed * hidden, experts),
                  int(moe.experts * hidden * plain))
        if shared:
            part = f"{layer}.mlp.shared_expert.down_proj"
            sparse += (sized(2 * shared * hidden, part), sized(shared * hidden, part))
    intermediate = (facts.params_estimate.dense_mlp if facts.params_estimate else 0)
    dense_layers = facts.num_layers - (moe.moe_layers if moe is not None else 0)
    width = intermediate // max(3 * hidden * dense_layers, 1) // (dense_tp or tp)
    mlp = "model.layers.0.mlp.down_proj"
    dense = (sized(2 * width * hidden, mlp), sized(width * hidden, mlp))
    interval = facts.hybrid.full_attention_interval if facts.hybrid is not None else None
    first = facts.num_layers - stage_layers if pp > 1 else 0
    half = rope_cache_bytes(facts) // 2  # its cos, sin and their product, freed again
    builds: list[LayerBuild] = []
    rope_built = False
    for index in range(first, first + stage_layers):
        full = dims is None or (interval is not None and (index + 1) % interval == 0)
        mixer = attention if full else linear
        mlp_part = sparse if moe is not None and index >= dense_layers else dense
        buffer = 0
        if full and not rope_built:
            buffer, rope_built = rope_cache_bytes(facts), True
        builds.append(LayerBuild(mixer + mlp_part, buffer, (half, half, half) if buffer else ()))
    return tuple(builds)


def _plain_bytes(facts: ModelFacts, dtype: str | None) -> float:
    """Bytes of an unquantized weight: the typed --dtype, else the checkpoint's."""
    return _unquantized_bytes(dtype if dtype not in (None, "auto") else facts.dtype)


def _unquantized_bytes(dtype: str | None) -> float:
    name = (dtype or "bfloat16").removeprefix("torch.")
    if name in ("auto", "float32", "float"):
        return 2.0  # SGLang serves float32 checkpoints in bfloat16 under `auto`
    return DTYPE_BYTES.get(name, 2.0)


def _weights(
    facts: ModelFacts, *, dtype: str | None, quantization: str | None, tp: int
) -> _Weights:
    """Weight bytes of the whole model split the way SGLang shards them (`tp` = attention TP)."""
    parts = facts.params_estimate or ParamBreakdown(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    plain = _plain_bytes(facts, dtype)
    online_fp8 = quantization in ("fp8", "w8a8_fp8") and facts.quant is None
    mtp_prefix = (
        "mtp.layers.0" if facts.family.startswith("qwen3") else f"model.layers.{facts.num_layers}"
    )
    shared_name = "shared_expert" if facts.family.startswith("qwen3") else "shared_experts"

    def linear(params: float, module: str) -> float:
        return params * _module_bytes(facts, module, plain, online_fp8)

    layer = "model.layers.7"
    attention = linear(parts.attention, f"{layer}.self_attn.o_proj")
    body = (
        linear(parts.linear_attention, f"{layer}.linear_attn.out_proj")
        + linear(parts.dense_mlp, "model.layers.0.mlp.down_proj")
        + linear(parts.routed_experts, f"{layer}.mlp.experts.3.down_proj")
        + linear(parts.shared_experts, f"{layer}.mlp.{shared_name}.down_proj")
    )
    small = (parts.norms + parts.router) * plain
    embedding, lm_head, vision = parts.embedding * plain, parts.lm_head * plain, parts.vision * plain
    mtp_module = (
        f"{mtp_prefix}.mlp.experts.3.down_proj" if facts.moe else f"{mtp_prefix}.mlp.down_proj"
    )
    mtp_total = linear(parts.mtp, mtp_module)
    source: Literal["index", "estimate"] = "estimate"
    scale = 1.0
    if facts.checkpoint_bytes:
        # The index holds the stored size: scale the estimate to it (MTP layers included there).
        estimated = attention + body + small + embedding + lm_head + vision + mtp_total
        if estimated > 0:
            k = facts.checkpoint_bytes / estimated
            scale = k
            attention, body, small, mtp_total = attention * k, body * k, small * k, mtp_total * k
            embedding, lm_head, vision = embedding * k, lm_head * k, vision * k
            source = "index"
    # What every attention-TP rank holds in full on top of its shard.
    duplicated = 0.0
    if facts.attention == "MLA" and parts.attention_replicated:
        # q_a / kv_a projections (and a sparse-attention indexer) are whole on every TP rank.
        duplicated = linear(parts.attention_replicated,
                            f"{layer}.self_attn.kv_a_proj_with_mqa") * (1 - 1 / tp)
    elif facts.num_kv_heads < tp:
        # KV heads are replicated when tp exceeds them.
        kv = 2 * facts.hidden_size * facts.head_dim * facts.full_attention_layers
        duplicated = linear(kv, f"{layer}.self_attn.k_proj") * (1 - facts.num_kv_heads / tp)
    dense = 0.0
    routed_unquantized = 0.0
    routed = 0.0
    if facts.moe is not None:
        dense = linear(parts.dense_mlp, "model.layers.0.mlp.down_proj") * scale
        experts = f"{layer}.mlp.experts.3.down_proj"
        routed = linear(parts.routed_experts, experts) * scale
        if not (online_fp8 or quantization is not None
                or (facts.quant is not None and facts.quant.quantizes(experts))):
            routed_unquantized = routed
    return _Weights(
        dense_mlp=dense,
        routed_unquantized=routed_unquantized,
        routed_experts=routed,
        layers_sharded=body - dense,
        attention=attention,
        layers_replicated=small + duplicated,
        mtp_total=mtp_total,
        embedding=embedding,
        lm_head=lm_head,
        vision=vision,
        source=source,
    )


def _kv_bytes(kv_cache_dtype: str | None, model_dtype: str | None) -> float:
    name = (kv_cache_dtype or "auto").lower()
    if name.startswith("fp8"):
        return 1.0
    if name.startswith("fp4") or name == "nvfp4":
        return 0.5 + 1 / 16
    if name in ("bf16", "bfloat16", "float16", "half"):
        return 2.0
    return _unquantized_bytes(model_dtype) if is_float_dtype(model_dtype) else 2.0


def _kv_cell(
    facts: ModelFacts,
    attn_tp: int,
    elem: float,
    *,
    layers: int,
    nsa_scaled: bool = False,
    sm100: bool = False,
    kv_cache_dtype: str | None = None,
) -> tuple[int, int, str]:
    """(bytes per token SGLang divides the budget by, bytes per token it allocates, layout) for
    `layers` full-attention layers on one attention-TP rank (`pool_configurator._compute_cell_size`,
    `calculate_mla_kv_cache_dim`)."""
    dtype_word = {1.0: "fp8", 2.0: "bf16", 4.0: "fp32"}.get(elem, "fp4")
    if facts.attention == "MLA" and facts.kv_lora_rank:
        rank, rope = facts.kv_lora_rank, facts.qk_rope_head_dim or 0
        latent = rank + rope
        if facts.index_head_dim:
            # DeepSeek sparse attention (V3.2): fp8 by default on SM100, else bf16; fp8 latent
            # stored with one fp32 scale per 128 and a bf16 rope part; fp8 indexer keys + scale.
            if (kv_cache_dtype or "auto").lower() == "auto":
                elem = 1.0 if sm100 else 2.0
                dtype_word = "fp8" if sm100 else "bf16"
            index = facts.index_head_dim + facts.index_head_dim // NSA_QUANT_BLOCK * 4
            if elem == 1.0:
                stored = rank + rank // NSA_QUANT_BLOCK * 4 + rope * 2
            else:
                stored = int(latent * elem)
            counted = stored if nsa_scaled else int(latent * elem)
            return (
                (counted + index) * layers,
                (stored + index) * layers,
                f"NSA {dtype_word}: latent {stored} B + indexer {index} B x {layers} layers",
            )
        size = int(latent * layers * elem)
        return size, size, f"MLA {dtype_word}: latent {latent} x {layers} layers (every rank)"
    kv_heads = max(1, facts.num_kv_heads // attn_tp)
    v_dim = facts.v_head_dim if facts.attention != "MLA" and facts.v_head_dim else facts.head_dim
    size = int(kv_heads * (facts.head_dim + v_dim) * layers * elem)
    return size, size, f"{facts.attention} {dtype_word}: {kv_heads} KV heads x {layers} layers"


def _mamba_state_per_request(facts: ModelFacts, tp: int, pp: int = 1) -> int:
    """Gated DeltaNet state of one request per GPU: conv (bf16) + recurrent state (fp32), over
    the linear layers of one pipeline stage."""
    dims = facts.linear_attention
    if facts.hybrid is None or dims is None:
        return 0
    key_dim = dims.num_key_heads * dims.key_head_dim
    value_dim = dims.num_value_heads * dims.value_head_dim
    conv = (2 * key_dim + value_dim) // tp * (dims.conv_kernel - 1) * 2
    ssm = (dims.num_value_heads // tp) * dims.value_head_dim * dims.key_head_dim * 4
    return (conv + ssm) * math.ceil(facts.hybrid.linear_layers / pp)


# --------------------------------------------------------------------------------------------
# Suggestions
# --------------------------------------------------------------------------------------------


def _best_running_requests(plan: MemoryPlan, replan: Callable[..., MemoryPlan]) -> int | None:
    """Largest common request count the recurrent-state pool can hold once the buffer shrinks."""
    for candidate in (64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2, 1):
        if plan.max_running_requests and candidate >= plan.max_running_requests:
            continue
        trial = replan(max_running_requests=candidate)
        limit = trial.max_running_requests_limit
        if limit is not None and limit >= candidate and trial.kv_tokens > 0:
            return candidate
    return None


def _suggest(
    plan: MemoryPlan,
    weights: _Weights,
    gpus: int,
    graph_bs: int,
    kv_cache_dtype: str | None,
    replan: Callable[..., MemoryPlan],
    fp8_weights_help: bool = False,
) -> list[PlanFix]:
    """The fixes for a plan that is not `fits`, each verified to converge (see `_converging`),
    or the room-to-spare hint for one that fits."""
    candidates = _candidates(
        plan, weights, gpus, graph_bs, kv_cache_dtype, replan, fp8_weights_help
    )
    if plan.verdict == "fits":
        return candidates
    return _converging(plan, candidates, replan)


_RANK = {"will_not_fit": 0, "tight": 1, "fits": 2}


def _replan_with(replan: Callable[..., MemoryPlan], edits: dict[str, Any]) -> MemoryPlan | None:
    """The plan after a fix's profile edits, None when an edit is not a plan input or invalid."""
    changes = {}
    for key, value in edits.items():
        name = FIX_INPUTS.get(key)
        if name is None:
            return None
        changes[name] = value
    try:
        return replan(**changes)
    except ValueError:
        return None


def _converging(
    plan: MemoryPlan, candidates: list[PlanFix], replan: Callable[..., MemoryPlan]
) -> list[PlanFix]:
    """Keep the fixes that remove the plan's finding when applied: a `tight` plan must fit
    afterwards, a `will_not_fit` one must at least start. When no single edit gets there (two
    causes at once, e.g. the context length and the recurrent-state pool), the edits are
    combined into one fix, in the order of the causes. Advice without edits is kept last."""
    advice = [f for f in candidates if not f.edits]
    edits = [f for f in candidates if f.edits]
    target = "fits" if plan.verdict == "tight" else "tight"
    kept: list[PlanFix] = []
    for fix in edits:
        after = _replan_with(replan, fix.edits)
        if after is not None and _RANK[after.verdict] >= _RANK[target]:
            kept.append(fix)
    if kept:
        return kept + advice
    combined: dict[str, Any] = {}
    labels: list[str] = []
    best = plan
    for fix in edits:
        trial = _replan_with(replan, {**combined, **fix.edits})
        if trial is None:
            continue
        better = _RANK[trial.verdict] > _RANK[best.verdict] or (
            trial.verdict == best.verdict and len(trial.reasons) < len(best.reasons)
        )
        if better:
            combined.update(fix.edits)
            labels.append(fix.label.split(":")[0])
            best = trial
        if _RANK[best.verdict] >= _RANK[target]:
            return [PlanFix(" and ".join(labels), combined), *advice]
    return advice


def _candidates(
    plan: MemoryPlan,
    weights: _Weights,
    gpus: int,
    graph_bs: int,
    kv_cache_dtype: str | None,
    replan: Callable[..., MemoryPlan],
    fp8_weights_help: bool = False,
) -> list[PlanFix]:
    """Every fix worth trying for this plan, the real cause's first (not yet verified)."""
    out: list[PlanFix] = []
    total = plan.gpu_total_gib
    if plan.static_pool_gib <= plan.weights_gib:
        for tp in (2, 4, 8, 16):
            at = weights.per_gpu(tp, plan.pp, tp, plan.layers_per_gpu * plan.pp)
            if plan.tp < tp and at / GIB < 0.75 * total and tp * plan.pp <= max(gpus, 8):
                more = tp * plan.pp > gpus
                out.append(
                    PlanFix(
                        (f"use {tp * plan.pp} GPUs with --tp-size {tp}" if more
                         else f"use --tp-size {tp}")
                        + f": weights drop to {at / GIB:.1f} GiB per GPU",
                        {"parallel.tp": tp, **({"gpu.count": tp * plan.pp} if more else {})},
                    )
                )
                break
        else:
            need = plan.weights_gib / 0.75
            out.append(
                PlanFix(
                    f"the weights need about {need * plan.tp:.0f} GiB of GPU memory at this tp; "
                    "use more or larger GPUs, or a quantized checkpoint (FP8 halves bf16 weights)",
                    {},
                )
            )
    if plan.static_pool_gib <= plan.weights_gib and fp8_weights_help:
        out.append(
            PlanFix(
                "quantize the weights to FP8 at load (--quantization fp8): about half the bf16 "
                "bytes, small accuracy cost",
                {"model.quantization": "fp8"},
            )
        )
    if plan.static_pool_gib <= plan.weights_gib and plan.mem_fraction_source == "given":
        for higher in (0.8, 0.85, 0.88, 0.9):
            if higher <= plan.mem_fraction_static:
                continue
            if replan(mem_fraction=higher).verdict == "fits":
                out.insert(0, PlanFix(
                    f"raise --mem-fraction-static to {higher:.2f}: the static pool grows to "
                    f"{higher * plan.free_before_load_gib:.1f} GiB, room for the weights and KV",
                    {"memory.mem_fraction_static": higher},
                ))
                break
    if plan.headroom_gib < TIGHT_HEADROOM_GIB and plan.static_pool_gib > plan.weights_gib:
        deficit = TIGHT_HEADROOM_GIB - plan.headroom_gib + 1.0
        if not plan.draft_in_static_pool:
            # A draft loaded outside the pool first needs room for itself as loaded (its own
            # embedding and head included) beside its KV pool and the request table.
            start = (plan.workspace_gib + plan.req_to_token_gib + plan.draft_loaded_gib
                     + plan.draft_kv_gib)
            deficit = max(deficit, start - plan.reserve_gib + 1.0)
        lower = round(plan.mem_fraction_static - deficit / total, 2)
        if plan.weights_gib + 1 < lower * total:
            out.append(
                PlanFix(
                    f"lower --mem-fraction-static to {lower:.2f}: leaves {deficit:.1f} GiB more "
                    "for activations, CUDA graphs and the draft (the KV cache shrinks by as much)",
                    {"memory.mem_fraction_static": lower},
                )
            )
        if graph_bs > 16:
            smaller = max(graph_bs // 2, 8)
            out.append(
                PlanFix(
                    f"lower --cuda-graph-max-bs from {graph_bs} to {smaller} to capture fewer, "
                    "smaller graphs",
                    {"memory.cuda_graph_max_bs": smaller},
                )
            )
    limited = (
        plan.max_running_requests_limit is not None
        and plan.max_running_requests
        and plan.max_running_requests_limit < plan.max_running_requests
    )
    if limited or (plan.spec_mamba_buffer_gib > 0.5 and plan.max_running_requests):
        best = _best_running_requests(plan, replan)
        if best is not None:
            trial = replan(max_running_requests=best)
            out.append(
                PlanFix(
                    f"set --max-running-requests {best}: the speculative state buffer "
                    f"({plan.spec_mamba_buffer_gib:.1f} GiB for {plan.max_running_requests} "
                    f"requests) shrinks to {trial.spec_mamba_buffer_gib:.1f} GiB and the state pool "
                    f"holds {count(trial.max_running_requests_limit or 0, 'request')}; KV tokens "
                    f"{plan.kv_tokens:,} -> {trial.kv_tokens:,}",
                    {"memory.max_running_requests": best},
                )
            )
    if plan.context_length and 0 < plan.kv_tokens < plan.context_length:
        fit = plan.kv_tokens // 1024 * 1024 or plan.kv_tokens // 64 * 64
        if fit > 0:
            out.append(
                PlanFix(
                    f"set --context-length {fit}: one request of that length fits the KV cache",
                    {"model.context_length": fit},
                )
            )
        if not (kv_cache_dtype or "").lower().startswith("fp8"):
            out.append(
                PlanFix(
                    "set --kv-cache-dtype fp8_e4m3: halves KV bytes per token",
                    {"model.kv_cache_dtype": "fp8_e4m3"},
                )
            )
    if plan.context_length and 0 < plan.kv_tokens < plan.context_length:
        # The context length is the cause: its fixes come first.
        out.sort(key=lambda f: not ({"model.context_length", "model.kv_cache_dtype"} & set(f.edits)))
    if plan.static_pool_gib <= plan.weights_gib:
        out.append(
            PlanFix(
                "or move decoder-layer weights to host memory with --cpu-offload-gb N (slow: "
                "every forward pass copies them in)",
                {},
            )
        )
    if (
        plan.verdict == "fits"
        and plan.headroom_gib > 6
        and plan.mem_fraction_source == "sglang-heuristic"
    ):
        higher = round(min(plan.mem_fraction_static + (plan.headroom_gib - 4) / total, 0.95), 2)
        out.append(
            PlanFix(
                f"room to spare: --mem-fraction-static {higher:.2f} would give the KV cache "
                f"{(higher - plan.mem_fraction_static) * total:.1f} GiB more",
                {"memory.mem_fraction_static": higher},
            )
        )
    return out
