"""Attention backends and page size: the backends a GPU or an architecture accepts (FA4, flex,
TensorRT-LLM, GPT-OSS's sinks), the page sizes they force, and the chunked-prefill size that must be
a multiple of the page size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from wizard.rules.common import attention_backends, variant
from wizard.rules.model import SILENT, Args, Ctx, Raises, Rule, raises
from wizard.rules.report import Fix

FA4_DECODE = Rule(
    id="R-FA4-DECODE",
    title="fa4 is a prefill-only attention backend here",
    severity="error",
    why=(
        "Releases whose FA4 kernels have no decode path refuse fa4 as the attention or decode "
        "backend; only --prefill-attention-backend fa4 is accepted."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend",),
    when=lambda ctx, a: "fa4" in (a.get("attention_backend"), a.get("decode_attention_backend")),
    message=lambda ctx, a: (
        "FA4 backend is only supported for prefill. Please use `--prefill-attention-backend fa4` "
        "instead."
    ),
    fixes=lambda ctx, a: [
        Fix("Use fa4 for prefill only", {"attention.backend": None,
                                         "attention.prefill_backend": "fa4"}),
        Fix("Let SGLang choose the attention backend", {"attention.backend": None}),
    ],
)


FLEX_NO_SPEC = Rule(
    id="R-FLEX-NO-SPEC",
    title="Flex attention does not support speculative decoding",
    severity="error",
    why="The torch flex-attention backend has no tree-verify kernels.",
    sglang=raises("resolve", "AssertionError"),
    fields=("attention.backend", "speculative.algorithm"),
    when=lambda ctx, a: (
        a.get("attention_backend") == "flex_attention"
        and ctx.typed_value("speculative_algorithm") is not None
    ),
    message=lambda ctx, a: (
        "Speculative decoding is currently not supported with Flex Attention backend"
    ),
    fixes=lambda ctx, a: [
        Fix("Let SGLang choose the attention backend", {"attention.backend": None})
    ],
)


TRTLLM_MLA_GPU = Rule(
    id="R-TRTLLM-MLA-GPU",
    title="trtllm_mla needs a Blackwell GPU",
    severity="error",
    why="The TensorRT-LLM MLA kernels are only built for SM100/SM12x.",
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend",),
    when=lambda ctx, a: (
        "trtllm_mla" in (a.get("attention_backend"), a.get("decode_attention_backend"))
        and not (ctx.gpu.is_sm100 or (ctx.gpu.is_sm120
                                      and not ctx.release.behaviour.trtllm_mla_gpu_sm100_only))
    ),
    message=lambda ctx, a: (
        "TRTLLM MLA backend is only supported on Blackwell GPUs "
        f"({'SM100' if ctx.release.behaviour.trtllm_mla_gpu_sm100_only else 'SM100/SM12x'}). "
        "Please use a different backend."
    ),
    fixes=lambda ctx, a: [
        Fix("Let SGLang choose the attention backend", {"attention.backend": None})
    ],
)


TRTLLM_MHA_PREFILL_GPU = Rule(
    id="R-TRTLLM-MHA-GPU",
    title="trtllm_mha prefill needs a supported GPU",
    severity="error",
    why="The TensorRT-LLM MHA prefill kernels exist only for some GPU generations.",
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend", "attention.prefill_backend"),
    when=lambda ctx, a: (
        (("trtllm_mha" in attention_backends(a))
         if ctx.release.behaviour.trtllm_mha_gpu_any_backend  # any of the 3 backend fields
         else (a.get("prefill_attention_backend") or a.get("attention_backend")) == "trtllm_mha")
        and not (
            ctx.gpu.is_sm100
            if variant(ctx, "R-TRTLLM-MHA-GPU") == 0
            else (ctx.gpu.is_hopper or ctx.gpu.is_sm100 or ctx.gpu.is_sm120)
        )
    ),
    message=lambda ctx, a: (
        "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100). Please use a "
        "different prefill backend."
        if variant(ctx, "R-TRTLLM-MHA-GPU") == 0
        else "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Let SGLang choose the attention backend",
            {"attention.backend": None, "attention.prefill_backend": None},
        )
    ],
)


TRTLLM_PAGE = Rule(
    id="R-TRTLLM-PAGE",
    title="trtllm_mha forces page size 64",
    severity="adjusted",
    why="TensorRT-LLM MHA kernels only support some page sizes (16, 32, 64; later releases also 128: the release data lists them).",
    sglang=SILENT,
    fields=("attention.page_size",),
    when=lambda ctx, a: (
        "trtllm_mha" in attention_backends(a)
        and a.get("page_size") not in ctx.release.trait("trtllm_mha_page_sizes")
    ),
    message=lambda ctx, a: f"trtllm_mha: page_size {a.get('page_size')} -> 64.",
    apply=lambda ctx, a: a.__setitem__("page_size", 64),
)


TRTLLM_MLA_PAGE = Rule(
    id="R-TRTLLM-MLA-PAGE",
    title="trtllm_mla forces page size 64",
    severity="adjusted",
    why="TensorRT-LLM MLA kernels only support pages of 32 or 64 tokens.",
    sglang=SILENT,
    fields=("attention.page_size",),
    when=lambda ctx, a: (
        "trtllm_mla" in (a.get("attention_backend"), a.get("decode_attention_backend"))
        and a.get("page_size") not in (32, 64)
    ),
    message=lambda ctx, a: f"trtllm_mla: page_size {a.get('page_size')} -> 64.",
    apply=lambda ctx, a: a.__setitem__("page_size", 64),
)


# Backends whose page rewrite has a rule of its own, with the GPU and model conditions SGLang
# tests around it (R-TRTLLM-PAGE, R-TRTLLM-MLA-PAGE, R-XPU-PAGE, R-FA4-PAGE).
_OWN_PAGE_RULES = frozenset({"trtllm_mha", "trtllm_mla", "intel_xpu", "fa4"})


def _named(a: Args, backend: str, fields: Sequence[str]) -> bool:
    """The backend is the value of one of the flags a release's block names it by."""
    return any(a.get(name) == backend for name in fields)


def backend_page_snaps(ctx: Ctx, a: Args) -> list[tuple[str, Any, int]]:
    """The release's page-size snaps for the typed attention backends (trait
    `attention_page_rules`, in SGLang's order, chained on one page size) that change it:
    (backend, page before, page after)."""
    page = a.get("page_size")
    changed: list[tuple[str, Any, int]] = []
    for backend, fields, kept, to in ctx.release.traits.get("attention_page_rules") or ():
        if backend in _OWN_PAGE_RULES or not _named(a, backend, fields):
            continue
        if (kept is None or page not in kept) and page != to:
            changed.append((backend, page, to))
            page = to
    return changed


def _snap_pages(ctx: Ctx, a: Args) -> None:
    for _backend, _before, after in backend_page_snaps(ctx, a):
        a.page_size = after


BACKEND_PAGE = Rule(
    id="R-BACKEND-PAGE",
    title="The attention backend forces its page size",
    severity="adjusted",
    why=(
        "Some attention kernels take only some page sizes (FlashMLA 64, and per backend the "
        "sizes the release lists); SGLang replaces any other page size, the default included, "
        "and logs a warning."
    ),
    sglang=SILENT,
    fields=("attention.page_size",),
    when=lambda ctx, a: bool(backend_page_snaps(ctx, a)),
    message=lambda ctx, a: "; ".join(
        f"{backend}: page_size {before} -> {after}."
        for backend, before, after in backend_page_snaps(ctx, a)),
    apply=_snap_pages,
)


def backend_writes(ctx: Ctx, a: Args) -> list[tuple[str, str, Any, Any]]:
    """The release's constant writes in the typed backends' blocks (trait
    `attention_backend_writes`) that change a value: (backend, field, before, after)."""
    changed = []
    for backend, fields, name, value in ctx.release.traits.get("attention_backend_writes") or ():
        if _named(a, backend, fields) and a.get(name) != value:
            changed.append((backend, name, a.get(name), value))
    return changed


def _backend_writes(ctx: Ctx, a: Args) -> None:
    for _backend, name, _before, after in backend_writes(ctx, a):
        a[name] = after


BACKEND_WRITES = Rule(
    id="R-BACKEND-WRITES",
    title="The attention backend turns other settings off",
    severity="adjusted",
    why=(
        "Some attention backends cannot run with other features (the dual-chunk backend has no "
        "radix cache); SGLang switches them off in the backend's own block and logs a warning."
    ),
    sglang=SILENT,
    fields=("attention.backend", "scheduling.disable_radix_cache"),
    when=lambda ctx, a: bool(backend_writes(ctx, a)),
    message=lambda ctx, a: "; ".join(
        f"{backend}: {name} {before} -> {after}."
        for backend, name, before, after in backend_writes(ctx, a)),
    apply=_backend_writes,
)


def backend_prefill_default(ctx: Ctx, a: Args) -> tuple[str, str] | None:
    """(backend, prefill backend) when a typed decode-only backend fills in the prefill backend
    nobody typed (trait `backend_prefill_defaults`); else None."""
    if a.get("prefill_attention_backend") is not None:
        return None
    for backend, (fields, prefill) in (ctx.release.traits.get("backend_prefill_defaults")
                                       or {}).items():
        if _named(a, backend, fields):
            return backend, prefill
    return None


BACKEND_PREFILL = Rule(
    id="R-BACKEND-PREFILL",
    title="A decode-only attention backend picks the prefill backend",
    severity="adjusted",
    why=(
        "The backend only runs decoding (CuteDSL MLA); with no --prefill-attention-backend "
        "typed SGLang sets the one its release names for prefill."
    ),
    sglang=SILENT,
    fields=("attention.prefill_backend",),
    when=lambda ctx, a: backend_prefill_default(ctx, a) is not None,
    message=lambda ctx, a: "{}: prefill_attention_backend None -> {}.".format(
        *(backend_prefill_default(ctx, a) or ("", ""))),
    apply=lambda ctx, a: a.__setitem__(
        "prefill_attention_backend", (backend_prefill_default(ctx, a) or ("", ""))[1]),
)


def _page_128(rule_id: str, title: str, why: str, backend: str,
              forces: Callable[[Ctx, Args], bool]) -> Rule:
    """A silent rewrite of the page size to 128 that a backend's kernels need."""
    return Rule(
        id=rule_id,
        title=title,
        severity="adjusted",
        why=why,
        sglang=SILENT,
        fields=("attention.page_size", "attention.backend"),
        when=forces,
        message=lambda ctx, a: f"{backend}: page_size {a.get('page_size')} -> 128.",
        apply=lambda ctx, a: a.__setitem__("page_size", 128),
    )


FA4_PAGE_23 = _page_128(
    "R-FA4-PAGE", "fa4 forces page size 128 on Blackwell",
    "The FA4 kernels on SM100 only support pages of 128 tokens for non-MLA models (skipped when "
    "a draft tree with topk > 1 is typed, which needs page size 1).",
    "fa4", lambda ctx, a: _fa4_forces_page(ctx, a))


XPU_PAGE = _page_128(
    "R-XPU-PAGE", "intel_xpu forces page size 128",
    "The Intel XPU attention kernels take only some page sizes (the release's list, a longer one "
    "for MLA models); SGLang replaces any other page size, the default included, with 128. It "
    "tests the typed backend, not the device: on a CUDA host the launch then runs with 128-token "
    "pages.",
    "intel_xpu", lambda ctx, a: _xpu_forces_page(ctx, a))


def _xpu_forces_page(ctx: Ctx, a: Args) -> bool:
    """The release's intel_xpu page test (trait `xpu_page`: which backend it reads, the page
    sizes it keeps, for MLA models too); False for a release without that rewrite."""
    how = ctx.release.traits.get("xpu_page") or {}
    if not how:
        return False
    common = a.get("attention_backend")
    decode = a.get("decode_attention_backend") or common
    prefill = a.get("prefill_attention_backend") or common
    named = {"attention": (common,), "decode": (decode,),
             "either": (prefill, decode)}[how["backends"]]
    kept = how["mla_sizes"] if ctx.is_mla else how["sizes"]
    return "intel_xpu" in named and a.get("page_size") not in kept


def fa4_page_test(ctx: Ctx, a: Args) -> bool:
    """The release's test before its page-size-128 rewrite (trait `fa4_page`: the backend
    fields compared with fa4, SM100 only, draft trees skipped); False for a release without
    that statement (fa4 keeps the page size as typed there)."""
    how = ctx.release.traits.get("fa4_page") or {}
    if not how:
        return False
    fa4 = any(a.get(name) == "fa4" for name in how.get("fields", ()))
    sm100 = ctx.gpu.is_sm100 or not how.get("sm100")
    topk_ok = not how.get("topk") or (ctx.typed_value("speculative_eagle_topk") or 0) <= 1
    return fa4 and sm100 and topk_ok


def _fa4_forces_page(ctx: Ctx, a: Args) -> bool:
    return fa4_page_test(ctx, a) and not ctx.is_mla and a.get("page_size") != 128


def chunked_prefill(ctx: Ctx, a: Args) -> int:
    """`chunked_prefill_size` as SGLang sets it: typed, else by GPU memory (and / dp with DP attention where the release splits it)."""
    size = a.get("chunked_prefill_size")
    if size is None:
        mem = ctx.gpu.memory_mib
        if mem < 20 * 1024:
            size = 2048
        elif mem < 35 * 1024:
            size = ctx.release.trait("chunked_prefill_24gb")
        elif mem < 60 * 1024:
            size = 4096
        elif mem < 160 * 1024:
            size = 8192
        else:
            size = 16384
    if (
        ctx.release.trait("chunked_prefill_split_by_dp")
        and a.get("enable_dp_attention")
        and (a.get("dp_size") or 1) > 1
    ):
        size //= a.dp_size
    return int(size)


CHUNKED_PAGE = Rule(
    id="R-CHUNKED-PAGE",
    title="Chunked prefill size must be a multiple of the page size",
    severity="error",
    why=(
        "Prefill chunks are cut on page boundaries: SGLang's default chunk (2k-16k tokens by GPU memory) is a power "
        "of two, so a page size that is not a power of two (e.g. 48) fails its final argument check."
    ),
    sglang=raises("check", "AssertionError"),
    fields=("attention.page_size", "memory.chunked_prefill_size"),
    when=lambda ctx, a: (
        a.get("disaggregation_mode") != "decode"
        and isinstance(a.get("page_size"), int)
        and a.page_size > 0
        and (size := chunked_prefill(ctx, a)) > 0
        and size % a.page_size != 0
    ),
    message=lambda ctx, a: (
        f"chunked_prefill_size must be divisible by page_size ({chunked_prefill(ctx, a)} % {a.page_size} != 0)"
    ),
    fixes=lambda ctx, a: [
        Fix("Page size 64", {"attention.page_size": 64}),
        Fix("Let SGLang choose the page size", {"attention.page_size": None}),
    ],
)


PAGE_ZERO = Rule(
    id="R-PAGE-ZERO",
    title="A page size of 0 crashes SGLang's chunked-prefill check",
    severity="error",
    why=(
        "SGLang checks chunked_prefill_size % page_size == 0 at the end of its argument checks; with "
        "--page-size 0 Python raises ZeroDivisionError there (no message about the flag). A page "
        "holds at least one token: 1 is token-level paging, and leaving it unset lets SGLang "
        "choose the backend's size."
    ),
    sglang=Raises("check", "ZeroDivisionError", located=True, at="R-CHUNKED-PAGE"),
    fields=("attention.page_size",),
    when=lambda ctx, a: (
        a.get("disaggregation_mode") != "decode"
        and a.get("page_size") == 0
        and not isinstance(a.get("page_size"), bool)
        and chunked_prefill(ctx, a) > 0
    ),
    message=lambda ctx, a: "integer modulo by zero",
    fixes=lambda ctx, a: [
        Fix("Let SGLang choose the page size", {"attention.page_size": None}),
        Fix("Page size 1 (token-level paging)", {"attention.page_size": 1}),
    ],
)


def _arch_backends(ctx: Ctx) -> list[str]:
    """The attention backends the release's architecture assert accepts for the target (GPT-OSS)."""
    if ctx.arch != "GptOssForCausalLM":
        return []
    return list(ctx.release.trait("gpt_oss_attention_backends") or [])


def _prefill_decode(a: Args) -> tuple[Any, Any]:
    """(prefill, decode) attention backends as SGLang reads them: a split one falls back to the
    common backend."""
    backend = a.get("attention_backend")
    return (a.get("prefill_attention_backend") or backend,
            a.get("decode_attention_backend") or backend)


def gpt_oss_checks_one_backend(ctx: Ctx) -> bool:
    """The first form of the assert (variants 2-3 of its anchors) checks only
    `attention_backend`, not the prefill and decode backends."""
    return variant(ctx, "R-GPT-OSS-ATTENTION") >= 2


def _arch_backend_refused(ctx: Ctx, a: Args) -> bool:
    allowed = _arch_backends(ctx)
    if not allowed:
        return False
    if gpt_oss_checks_one_backend(ctx):
        return a.get("attention_backend") not in allowed
    prefill, decode = _prefill_decode(a)
    return prefill not in allowed or decode not in allowed


def _arch_backend_message(ctx: Ctx, a: Args) -> str:
    if gpt_oss_checks_one_backend(ctx):
        return (f"GptOssForCausalLM requires one of {_arch_backends(ctx)} attention backend, but "
                f"got '{a.get('attention_backend')}'")
    return (f"GptOssForCausalLM requires one of {_arch_backends(ctx)} attention backend, but got "
            f"the following backends\n- Prefill: {_prefill_decode(a)[0]}\n- Decode: "
            f"{_prefill_decode(a)[1]}\n")


def _arch_backend_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    return [
        Fix("Let SGLang choose the attention backends", {
            "attention.backend": None, "attention.prefill_backend": None,
            "attention.decode_backend": None}),
        *(Fix(f"Use {name}", {"attention.backend": name, "attention.prefill_backend": None,
                                "attention.decode_backend": None})
          for name in ("triton", "fa3", "trtllm_mha") if name in _arch_backends(ctx)),
    ]


def _recover_arch_backend(ctx: Ctx, a: Args) -> None:
    a.prefill_attention_backend = None
    a.decode_attention_backend = None
    a.attention_backend = (
        "trtllm_mha" if ctx.gpu.is_sm100 else "fa3" if ctx.gpu.is_hopper else "triton"
    )


GPT_OSS_ATTENTION = Rule(
    id="R-GPT-OSS-ATTENTION",
    title="GPT-OSS needs an attention backend with sinks and sliding window",
    severity="error",
    why=(
        "GPT-OSS uses attention sinks and a sliding window; only some attention backends implement "
        "both, and SGLang asserts that the prefill and the decode backend are among them (the list "
        "is read from the release's source) in its model-specific step."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("attention.backend", "attention.prefill_backend", "attention.decode_backend"),
    when=_arch_backend_refused,
    message=_arch_backend_message,
    fixes=_arch_backend_fixes,
    recover=_recover_arch_backend,
)


def _recover_mis(ctx: Ctx, a: Args) -> None:
    a.attention_backend = "flashinfer"
    a.prefill_attention_backend = None
    a.decode_attention_backend = None


MIS_BACKEND = Rule(
    id="R-MIS-BACKEND",
    title="Multi-item scoring needs the flashinfer attention backend",
    severity="error",
    why=(
        "Multi-item scoring (`--enable-mis`) builds a custom attention mask that only the "
        "flashinfer backend implements; SGLang turns off what else it cannot use (CUDA graphs, "
        "the radix cache, chunked prefill) but asserts on the attention backend, prefill and "
        "decode, as resolved by then (the GPU's default included), rather than change it."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("attention.backend", "attention.prefill_backend", "attention.decode_backend",
            "extra_args"),
    when=lambda ctx, a: bool(a.get("enable_mis"))
    and _prefill_decode(a) != ("flashinfer", "flashinfer"),
    message=lambda ctx, a: (
        "Multi-item scoring requires flashinfer attention backend for custom attention mask "
        "support. Please set --attention-backend flashinfer when using --enable-mis. Current "
        "backends: prefill={}, decode={}".format(*_prefill_decode(a))
    ),
    fixes=lambda ctx, a: [
        Fix("Use the flashinfer attention backend", {
            "attention.backend": "flashinfer", "attention.prefill_backend": None,
            "attention.decode_backend": None}),
    ],
    recover=_recover_mis,
)
