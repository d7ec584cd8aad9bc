"""What the wizard says about its own inputs rather than an SGLang check: a version without release
data of its own, an assumed GPU kind, model facts it could not read, deprecated flags the launch
types.
"""

from __future__ import annotations

from collections.abc import Sequence

from wizard.rules.model import SILENT, WIZARD, Args, Ctx, Rule
from wizard.rules.report import Fix

FACTS_MISSING = Rule(
    id="R-FACTS-MISSING",
    title="Model config not readable",
    severity="info",
    why=(
        "Several SGLang rules depend on the model's config.json (architecture, MTP and hybrid layers). Without it "
        "these checks assume a plain non-hybrid model without MTP: the auto values shown are the generic 3/1/4."
    ),
    sglang=WIZARD,
    fields=("model.path",),
    when=lambda ctx, a: ctx.facts is None,
    message=lambda ctx, a: _facts_missing_message(ctx),
)


def _facts_missing_message(ctx: Ctx) -> str:
    """Not computed: what, why, what was assumed instead and how to get the facts."""
    why = ctx.facts_error or "no model path"
    hub = "Hub" in why or "HF_" in why or "hf " in why
    how = (
        "do what the reason says (token, cache or repo id), then check again"
        if hub
        else "give the Hub id (ORG/NAME) or a local folder that holds config.json; for a folder "
        "on the GPU host press F6 on the Model screen (or `sglang-wizard inspect` there)"
    )
    return (
        f"not computed: the memory plan and the architecture-dependent checks (model config not "
        f"read: {why}). Assumed instead: a generic model (not hybrid, no MTP layers, no MoE, "
        f"auto draft values 3/1/4). To get them: {how}."
    )


GPU_ASSUMED = Rule(
    id="R-GPU-ASSUMED",
    title="GPU kind not given",
    severity="info",
    why="Default attention backend, page size and several checks depend on the GPU generation.",
    sglang=WIZARD,
    fields=("gpu.kind",),
    when=lambda ctx, a: ctx.gpu_assumed,
    message=lambda ctx, a: f"no GPU kind in the profile: assuming {ctx.gpu.name} (sm{ctx.gpu.sm}).",
    fixes=lambda ctx, a: [Fix(f"Set the GPU kind to {ctx.gpu.name}", {"gpu.kind": ctx.gpu.name})],
)


VERSION_NEAREST = Rule(
    id="R-VERSION-NEAREST",
    title="SGLang version without release data of its own",
    severity="warning",
    why=(
        "The wizard holds data for every release in its registry (derived from each wheel); a version "
        "outside it is checked with the nearest release, and the remote dry-run stays the authority."
    ),
    sglang=WIZARD,
    fields=("sglang_version",),
    when=lambda ctx, a: ctx.release_note is not None,
    message=lambda ctx, a: str(ctx.release_note),
)


def _deprecated_typed(ctx: Ctx) -> list[tuple[str, str | None]]:
    """(option, replacement) of every deprecated store-true flag the launch types."""
    table = ctx.release.trait("deprecated_store_true") or {}
    return [(entry["option"], entry.get("new_flag")) for dest, entry in table.items()
            if ctx.typed_value(dest) is True]


def _deprecation_text(option: str, new_flag: str | None) -> str:
    replacement = f" Use '{new_flag}' instead." if new_flag else ""
    return f"'{option}' is deprecated and will be removed in a future release.{replacement}"


def _deprecated_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    options = {option for option, _new in _deprecated_typed(ctx)}
    if "--enable-dp-attention" in options and ctx.release.attn_dp_field:
        size = int(ctx.typed_value("dp_size") or 1)
        return [Fix(f"Use --attn-dp-size {size} instead of --dp-size {size} --enable-dp-attention",
                    {"parallel.enable_dp_attention": False, "parallel.dp": 1,
                     "parallel.attn_dp_size": size if size > 1 else None})]
    return []


DEPRECATED_FLAG = Rule(
    id="R-DEPRECATED-FLAG",
    title="A deprecated flag",
    severity="warning",
    why=(
        "SGLang still accepts these flags but prints a deprecation warning when it parses them "
        "and will remove them; the release's own action names the replacement (read from its "
        "source). The launch behaves as the replacement would (e.g. --dp-size N with "
        "--enable-dp-attention runs as --attn-dp-size N: dp_size 1, enable_dp_attention False)."
    ),
    sglang=SILENT,
    fields=("parallel.enable_dp_attention", "extra_args"),
    when=lambda ctx, a: bool(_deprecated_typed(ctx)),
    message=lambda ctx, a: " ".join(
        _deprecation_text(option, new) for option, new in _deprecated_typed(ctx)),
    fixes=_deprecated_fixes,
)


_SPEC_TUNING = (
    ("speculative_num_steps", "--speculative-num-steps", "speculative.num_steps"),
    ("speculative_eagle_topk", "--speculative-eagle-topk", "speculative.eagle_topk"),
    ("speculative_num_draft_tokens", "--speculative-num-draft-tokens",
     "speculative.num_draft_tokens"),
    ("speculative_draft_model_path", "--speculative-draft-model-path",
     "speculative.draft_model_path"),
)


def _spec_without_algorithm(ctx: Ctx) -> list[tuple[str, str, str]]:
    """The speculative flags typed while no --speculative-algorithm is given."""
    if ctx.typed_value("speculative_algorithm") is not None:
        return []
    return [entry for entry in _SPEC_TUNING if ctx.typed_value(entry[0]) is not None]


def _spec_without_algorithm_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    fixes: list[Fix] = []
    draft = ctx.draft_facts
    if ctx.typed_value("speculative_draft_model_path") is not None and draft is not None:
        if "eagle3" in (draft.architecture or "").lower():
            fixes.append(Fix("Use EAGLE3 (the draft is an EAGLE-3 head)",
                             {"speculative.algorithm": "EAGLE3"}))
    elif ctx.facts is not None and ctx.facts.mtp_layers > 0:
        fixes.append(Fix("Use NEXTN (the model's built-in MTP layers)",
                         {"speculative.algorithm": "NEXTN"}))
    fixes.append(Fix("Drop the speculative flags (plain decoding)",
                     {field: None for _n, _o, field in _spec_without_algorithm(ctx)}))
    return fixes


SPEC_WITHOUT_ALGORITHM = Rule(
    id="R-SPEC-NO-ALGO",
    title="Speculative flags without an algorithm",
    severity="warning",
    why=(
        "SGLang reads the speculative flags only when --speculative-algorithm is given; without it "
        "the server starts with plain decoding and says nothing, so a benchmark of draft depths "
        "measures no speculative decoding at all."
    ),
    sglang=SILENT,
    fields=("speculative.algorithm",),
    when=lambda ctx, a: bool(_spec_without_algorithm(ctx)),
    message=lambda ctx, a: (
        " and ".join(option for _n, option, _f in _spec_without_algorithm(ctx))
        + " given without --speculative-algorithm: SGLang ignores "
        + ("it" if len(_spec_without_algorithm(ctx)) == 1 else "them")
        + " and runs plain decoding."
    ),
    fixes=_spec_without_algorithm_fixes,
)
