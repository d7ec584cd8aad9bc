"""Quantization: --quantization against the checkpoint's method, and the methods SGLang registers
per platform (CUDA, ROCm, AMD gfx95).
"""

from __future__ import annotations

from collections.abc import Sequence

from wizard.rules.model import Args, Ctx, Rule, raises
from wizard.rules.report import Fix

# Checkpoints whose method one of SGLang's quantization classes may swap for the typed one
# (`override_quantization_method`): GPTQ / AWQ checkpoints run as their Marlin or MoE-WNA16
# variants when `--quantization` names one of those (the conversion depends on the checkpoint's
# bits and groups), and ModelOpt checkpoints always pick their sub-method. The wizard does not
# predict these pairs: it names no mismatch for them.
QUANT_CONVERTIBLE_CHECKPOINT = frozenset({"gptq", "awq", "marlin", "gptq_marlin", "awq_marlin"})


QUANT_CONVERTIBLE_TYPED = frozenset({"marlin", "gptq", "gptq_marlin", "awq", "awq_marlin",
                                     "moe_wna16"})


QUANT_OVERRIDDEN_CHECKPOINT = frozenset({"modelopt", "modelopt_mixed", "modelopt_fp8",
                                         "modelopt_fp4"})


def _typed_quantization(a: Args) -> str | None:
    value = a.get("quantization")
    return str(value).lower() if value not in (None, "unquant") else None


def _quant_mismatch(ctx: Ctx, a: Args) -> bool:
    checkpoint = ctx.facts.checkpoint_quant_method if ctx.facts is not None else None
    typed = _typed_quantization(a)
    if not checkpoint or typed is None or typed == checkpoint:
        return False
    if checkpoint in QUANT_OVERRIDDEN_CHECKPOINT or (
            checkpoint in QUANT_CONVERTIBLE_CHECKPOINT and typed in QUANT_CONVERTIBLE_TYPED):
        return False
    if typed in (ctx.release.trait("quantization_requantize") or ()):
        return False  # online requantization of any checkpoint
    compatible = ctx.release.trait("quantization_compatible") or {}
    return checkpoint not in compatible.get(typed, ())


QUANT_MISMATCH = Rule(
    id="R-QUANT-MISMATCH",
    title="--quantization contradicts the checkpoint",
    severity="error",
    why=(
        "The checkpoint's config.json names how its weights are stored (quantization_config."
        "quant_method); SGLang loads them with that method and refuses a --quantization that "
        "names another one, unless the release lists the pair as compatible (e.g. w8a8_fp8 for "
        "a compressed-tensors checkpoint; the table is read from the release's source). GPTQ/AWQ "
        "Marlin conversions and ModelOpt sub-methods are chosen by SGLang's quantization classes "
        "and not predicted here."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("model.quantization",),
    when=_quant_mismatch,
    message=lambda ctx, a: (
        "Quantization method specified in the model config "
        f"({ctx.facts.checkpoint_quant_method if ctx.facts is not None else None}) does not match "
        "the quantization method specified in the `quantization` argument "
        f"({_typed_quantization(a)})."
    ),
    fixes=lambda ctx, a: [
        Fix("Let SGLang read the quantization from the checkpoint", {"model.quantization": None}),
    ],
    recover=lambda ctx, a: a.__setitem__("quantization", None),
)


def _platform_key(ctx: Ctx) -> str:
    """The platform SGLang's quantization table is built on: "cuda", "hip" or "hip_gfx95"."""
    if not ctx.gpu.is_hip:
        return "cuda"
    return "hip_gfx95" if str(ctx.gpu.gfx_arch or "").startswith("gfx95") else "hip"


def _resolved_quantization(ctx: Ctx, a: Args) -> str | None:
    """The method `_verify_quantization` checks against its tables: the typed one, else the
    checkpoint's; None where the wizard cannot tell (a checkpoint one of SGLang's quantization
    classes converts, `--quantization unquant`, another device than the GPU)."""
    if a.get("device") not in (None, "cuda") or a.get("quantization_refused"):
        return None  # another device, or SGLang refused the method already
    raw = a.get("quantization")
    if raw is not None and str(raw).lower() == "unquant":
        return None
    checkpoint = ctx.facts.checkpoint_quant_method if ctx.facts is not None else None
    if checkpoint in QUANT_OVERRIDDEN_CHECKPOINT or checkpoint in QUANT_CONVERTIBLE_CHECKPOINT:
        return None
    return _typed_quantization(a) or checkpoint


def _quant_table(ctx: Ctx) -> list[str]:
    return list((ctx.release.traits.get("quantization_methods") or {}).get(_platform_key(ctx))
                or ())


def _quant_unknown(ctx: Ctx, a: Args) -> bool:
    method = _resolved_quantization(ctx, a)
    table = _quant_table(ctx)
    return method is not None and bool(table) and method not in table


def _quant_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    """Leave the method to the checkpoint, where that one is accepted on this platform."""
    if _typed_quantization(a) is None:
        return []
    checkpoint = ctx.facts.checkpoint_quant_method if ctx.facts is not None else None
    rocm = ctx.release.traits.get("quantization_rocm") or ()
    if checkpoint is not None and (checkpoint not in _quant_table(ctx) or (
            ctx.gpu.is_hip and rocm and checkpoint not in rocm)):
        return []
    return [Fix("Let SGLang read the quantization from the checkpoint",
                {"model.quantization": None})]


QUANT_UNKNOWN = Rule(
    id="R-QUANT-UNKNOWN",
    title="A quantization method this SGLang does not have on this GPU",
    severity="error",
    why=(
        "SGLang checks the quantization method (typed, or read from the checkpoint's "
        "quantization_config) against the methods it registers on this platform. Some exist only "
        "on some platforms (MXFP4 on CUDA and AMD gfx95, not on MI300X), and releases drop "
        "methods (plain GPTQ on CUDA). The table is read from the release's source per platform."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("model.quantization",),
    when=_quant_unknown,
    message=lambda ctx, a: (
        f"Unknown quantization method: {_resolved_quantization(ctx, a)}. Must be one of "
        f"{_quant_table(ctx)}."
    ),
    fixes=_quant_fixes,
    recover=lambda ctx, a: a.__setitem__("quantization_refused", True),
)


def _quant_rocm(ctx: Ctx, a: Args) -> bool:
    if not ctx.gpu.is_hip:
        return False
    method = _resolved_quantization(ctx, a)
    rocm = ctx.release.traits.get("quantization_rocm") or ()
    return method is not None and bool(rocm) and method not in rocm


QUANT_ROCM = Rule(
    id="R-QUANT-ROCM",
    title="A quantization method SGLang does not support on ROCm",
    severity="error",
    why=(
        "On AMD GPUs SGLang accepts only the quantization methods of its ROCm list (read from the "
        "release's source); the others are CUDA kernels."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("model.quantization",),
    when=_quant_rocm,
    message=lambda ctx, a: (
        f"{_resolved_quantization(ctx, a)} quantization is currently not supported in ROCm."
    ),
    fixes=_quant_fixes,
    recover=lambda ctx, a: a.__setitem__("quantization_refused", True),
)
