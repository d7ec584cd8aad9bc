"""Model config construction (SGLang's configs/model_config.py): a model type the pinned
transformers cannot read, an MLA config without a rope-scaling factor, a --context-length above the
model's, --quantize-and-serve (checked before config.json is read).
"""

from __future__ import annotations

from typing import Any

from wizard.rules.model import Args, Ctx, Rule, raises
from wizard.rules.report import Fix
from wizard.sglang.versions import parse_env_bool

MODEL_TYPE_UNKNOWN = Rule(
    id="R-MODEL-TYPE-UNKNOWN",
    title="This release cannot read the model's config",
    severity="error",
    why=(
        "SGLang reads config.json with the transformers it pins (plus its own config classes); "
        "a model type newer than that transformers stops the start with a ValueError."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("sglang_version",),
    when=lambda ctx, a: (
        ctx.facts is not None
        and bool(ctx.release.model_types)
        and bool(ctx.facts.config_model_type)
        and ctx.facts.config_model_type not in ctx.release.model_types
    ),
    message=lambda ctx, a: (
        f"The checkpoint you are trying to load has model type `{ctx.facts.config_model_type}` "
        "but Transformers does not recognize this architecture."
        if ctx.facts is not None else ""
    ),
)


MLA_ROPE_FACTOR = Rule(
    id="R-MLA-ROPE-FACTOR",
    title="This release cannot read an MLA config without a rope-scaling factor",
    severity="error",
    why=(
        "For DeepSeek-style MLA models SGLang reads `rope_scaling['factor']` whenever rope_scaling is set. "
        "Transformers 5 always sets rope_scaling (a default entry without a factor when config.json has "
        "none), so a release that pins transformers 5 and still indexes the key stops with a KeyError."
    ),
    sglang=raises("resolve", "KeyError"),
    fields=("sglang_version",),
    when=lambda ctx, a: (
        ctx.facts is not None
        and ctx.facts.attention == "MLA"
        and not ctx.facts.rope_scaling_factor
        and bool(ctx.release.trait("transformers_sets_rope_scaling"))
    ),
    message=lambda ctx, a: "'factor'",
)


ALLOW_LONGER_CONTEXT = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"


IN_CI = "SGLANG_IS_IN_CI"


def _longer_context_allowed(ctx: Ctx) -> bool:
    """The release lets a longer context through with a warning: the override variable, or
    (trait `context_len_ci_escape`) SGLang's CI marker."""
    return parse_env_bool(ALLOW_LONGER_CONTEXT, ctx.env.get(ALLOW_LONGER_CONTEXT), False)[0] or (
        ctx.release.behaviour.context_len_ci_escape
        and parse_env_bool(IN_CI, ctx.env.get(IN_CI), False)[0])


def _derived_context(ctx: Ctx) -> int | None:
    return ctx.facts.sglang_context_length if ctx.facts is not None else None


def _context_too_long(ctx: Ctx, a: Args) -> bool:
    derived = _derived_context(ctx)
    typed = a.get("context_length")
    return (
        derived is not None
        and isinstance(typed, int)
        and typed > derived
        and not _longer_context_allowed(ctx)
    )


CONTEXT_LEN = Rule(
    id="R-CONTEXT-LEN",
    title="--context-length above what the model supports",
    severity="error",
    why=(
        "SGLang derives the model's context length from its config.json (the first of "
        "max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings, "
        "times the rope scaling factor unless the scaling names original_max_position_embeddings "
        "or is llama3) and refuses a longer --context-length while it builds the model config: "
        "positions past it may give wrong outputs or CUDA errors. "
        f"{ALLOW_LONGER_CONTEXT}=1 turns the refusal into a warning."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("model.context_length",),
    when=_context_too_long,
    message=lambda ctx, a: (
        f"Warning: User-specified context_length ({a.get('context_length')}) is greater than the "
        f"derived context_length ({_derived_context(ctx)}). This may lead to incorrect model outputs "
        "or CUDA errors. Note that the derived context_length may differ from "
        "max_position_embeddings in the model's config. To allow overriding this maximum, set the "
        f"env var {ALLOW_LONGER_CONTEXT}=1"
    ),
    fixes=lambda ctx, a: [
        Fix(f"Use the model's context length ({_derived_context(ctx)})",
            {"model.context_length": _derived_context(ctx)}),
        Fix("Let SGLang use the model's context length", {"model.context_length": None}),
        Fix(f"Allow the longer context ({ALLOW_LONGER_CONTEXT}=1)",
            {"env": {**ctx.env, ALLOW_LONGER_CONTEXT: "1"}}),
    ],
    recover=lambda ctx, a: a.__setitem__("context_length", _derived_context(ctx)),
)


def _quantize_and_serve(ctx: Ctx) -> dict[str, Any]:
    """The release's `_validate_quantize_and_serve_config`, read from its source (trait
    `quantize_and_serve`: the methods it accepts, its two refusals' words); {} without it."""
    return dict(ctx.release.traits.get("quantize_and_serve") or {})


def _serve_refused(ctx: Ctx, a: Args, disabled: bool) -> bool:
    check = _quantize_and_serve(ctx)
    if not check or not a.get("quantize_and_serve"):
        return False
    return (a.get("quantization") in check["methods"]) is disabled


_SERVE_WHY = (
    "--quantize-and-serve is checked first when SGLang builds the model config (before it reads "
    "config.json): it needs a ModelOpt --quantization method (the release's list), and with one "
    "the feature is disabled anyway in every release that has it (NotImplementedError: quantize "
    "and export first, then serve the exported checkpoint). The list and the words are read "
    "from the release's source."
)


QUANTIZE_SERVE_METHOD = Rule(
    id="R-QUANTIZE-SERVE-METHOD",
    title="--quantize-and-serve without a ModelOpt quantization",
    severity="error",
    why=_SERVE_WHY,
    sglang=raises("resolve", "ValueError"),
    fields=("model.quantization", "extra_args"),
    when=lambda ctx, a: _serve_refused(ctx, a, disabled=False),
    message=lambda ctx, a: str(_quantize_and_serve(ctx).get("needs_method", "")),
    recover=lambda ctx, a: a.__setitem__("quantize_and_serve", False),
    drops=("quantize_and_serve",),
)


QUANTIZE_SERVE_DISABLED = Rule(
    id="R-QUANTIZE-SERVE-DISABLED",
    title="--quantize-and-serve is disabled in this release",
    severity="error",
    why=_SERVE_WHY,
    sglang=raises("resolve", "NotImplementedError"),
    fields=("extra_args",),
    when=lambda ctx, a: _serve_refused(ctx, a, disabled=True),
    message=lambda ctx, a: str(_quantize_and_serve(ctx).get("disabled", "")),
    recover=lambda ctx, a: a.__setitem__("quantize_and_serve", False),
    drops=("quantize_and_serve",),
)
