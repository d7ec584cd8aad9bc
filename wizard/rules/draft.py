"""Draft models and built-in MTP: which draft SGLang loads (the target's own MTP / NextN layer or a
separate checkpoint), what a draft must match in the target, and the draft-only switches (the
draft MoE runner, the draft sink window, multi-layer EAGLE).
"""

from __future__ import annotations

from wizard.rules.common import algo, eagle_family, variant
from wizard.rules.model import RUNTIME, SILENT, WIZARD, Args, Ctx, Rule, raises
from wizard.rules.report import Fix

NO_MTP_WARNING_ARCHS = frozenset({"MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"})


MULTI_LAYER_EAGLE_ARCHS = frozenset(
    {"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "Step3p5ForCausalLM"}
)


def _mtp_capable(ctx: Ctx) -> bool:
    """The target's architecture has an MTP / NextN draft class in this release (wizard.applicability)."""
    from wizard.applicability import mtp_capable

    return ctx.arch is not None and mtp_capable(ctx.arch, ctx.version)


def draft_auto(ctx: Ctx) -> bool:
    """The target ships its MTP / NextN layer: SGLang sets `draft path = model path` itself."""
    return ctx.arch in ctx.release.arch_set("draft_auto")


MULTI_LAYER_EAGLE = Rule(
    id="R-NEXTN-MULTI-LAYER",
    title="Multi-layer EAGLE is only enabled for the literal algorithm EAGLE",
    severity="warning",
    why=(
        "MiMoV2 and Step3p5 turn on multi-layer EAGLE in the model-specific step, which runs before NEXTN is "
        "aliased to EAGLE; with NEXTN (or a lower-case eagle where the release upper-cases it) the "
        "multi-layer path is not enabled."
    ),
    sglang=RUNTIME,
    fields=("speculative.algorithm",),
    when=lambda ctx, a: (
        ctx.arch in MULTI_LAYER_EAGLE_ARCHS
        and ctx.typed_value("speculative_algorithm") is not None
        and ctx.typed_value("speculative_algorithm") != "EAGLE"
        and not a.get("enable_multi_layer_eagle")
    ),
    message=lambda ctx, a: (
        f"{ctx.arch}: use --speculative-algorithm EAGLE (or --enable-multi-layer-eagle) to use all MTP layers."
    ),
    fixes=lambda ctx, a: [
        Fix("Use EAGLE", {"speculative.algorithm": "EAGLE"}),
        Fix("Enable multi-layer EAGLE", {"speculative.enable_multi_layer_eagle": True}),
    ],
)


MOE_RUNNER = Rule(
    id="R-MOE-RUNNER",
    title="Draft MoE runner flashinfer_trtllm is rejected",
    severity="error",
    why=(
        "Releases that hold this check avoid trtllm MoE routing for draft models (their routing "
        "method is unknown); later releases allow it."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("speculative.moe_runner_backend",),
    when=lambda ctx, a: (
        ctx.typed_value("speculative_moe_runner_backend")
        in ("flashinfer_trtllm", "flashinfer_trtllm_routed")
    ),
    message=lambda ctx, a: (
        "Currently speculative MoE runner backend cannot be flashinfer_trtllm for risk in some "
        "draft models."
        if variant(ctx, "R-MOE-RUNNER") == 1
        else "Currently speculative MoE runner backend doesn't support flashinfer_trtllm, please use "
        "triton or auto backend for speculative moe runner instead."
    ),
    fixes=lambda ctx, a: [
        Fix("Use auto", {"speculative.moe_runner_backend": "auto"}),
        Fix("Use triton", {"speculative.moe_runner_backend": "triton"}),
    ],
)


SINK_NEEDS_WINDOW_23 = Rule(
    id="R-DRAFT-SINK-WINDOW",
    title="Draft attention sink needs a draft window",
    severity="error",
    why="Attention-sink tokens are kept at the start of the draft's sliding window; without a window there is nothing to pin them to.",
    sglang=raises("resolve", "ValueError"),
    fields=("extra_args", "speculative.draft_window_size"),
    when=lambda ctx, a: (
        a.get("speculative_draft_sink_size") is not None
        and a.get("speculative_dflash_draft_window_size") is None
        and a.get("speculative_draft_window_size") is None
    ),
    message=lambda ctx, a: (
        "--speculative-draft-sink-size requires --speculative-draft-window-size."
    ),
    fixes=lambda ctx, a: [
        Fix("Set a draft window of 2048", {"speculative.draft_window_size": 2048})
    ],
)


DRAFT_AUTO = Rule(
    id="R-DRAFT-AUTO",
    title="Draft model = the target checkpoint (built-in MTP)",
    severity="info",
    why="These checkpoints ship their MTP / NextN layer; the draft worker loads the same files.",
    sglang=SILENT,
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        eagle_family(a)
        and draft_auto(ctx)
        and a.get("speculative_draft_model_path") is None
    ),
    message=lambda ctx, a: (
        "speculative_draft_model_path unset -> the model path (the MTP layer inside the checkpoint)."
    ),
    apply=lambda ctx, a: a.update(
        speculative_draft_model_path=a.get("model_path"),
        speculative_draft_model_revision=a.get("revision"),
    ),
)


DRAFT_NOT_NEEDED = Rule(
    id="R-DRAFT-NOT-NEEDED",
    title="Built-in MTP does not need a draft path",
    severity="info",
    why=(
        "For DeepSeek-style MTP checkpoints SGLang loads the MTP layer from the target; with NEXTN a separate "
        "draft path is unusual. SGLang prints this warning for EAGLE3 with a real EAGLE-3 draft too (Kimi-K2.5 "
        "with a trained draft): there it is harmless and can be ignored."
    ),
    sglang=SILENT,
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        eagle_family(a)
        and draft_auto(ctx)
        and ctx.arch not in NO_MTP_WARNING_ARCHS
        and ctx.typed_value("speculative_draft_model_path") is not None
    ),
    message=lambda ctx, a: "DeepSeek MTP does not require setting speculative_draft_model_path.",
    fixes=lambda ctx, a: [Fix("Drop the draft path", {"speculative.draft_model_path": None})],
)


MTP_PAGE_FLASHINFER = Rule(
    id="R-MTP-PAGE-FLASHINFER",
    title="Built-in MTP with flashinfer needs page size 1",
    severity="error",
    why=(
        "The first built-in MTP draft path (DeepSeek-V3 / GLM-4.5 NextN layers) could not page the "
        "draft KV cache with the flashinfer backend, so SGLang refuses a page size other than 1 with "
        "it (only a typed --attention-backend flashinfer counts: these releases leave the default to "
        "the model runner)."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("attention.page_size", "attention.backend", "speculative.algorithm"),
    when=lambda ctx, a: (
        eagle_family(a)
        and draft_auto(ctx)
        and a.get("page_size") != 1
        and a.get("attention_backend") == "flashinfer"
    ),
    message=lambda ctx, a: (
        "Speculative decoding with page_size != 1 is not supported. Please set page_size to 1."
    ),
    fixes=lambda ctx, a: [
        Fix("Page size 1", {"attention.page_size": 1}),
        Fix("Let SGLang choose the attention backend", {"attention.backend": None}),
    ],
)


DRAFT_MISSING = Rule(
    id="R-DRAFT-MISSING",
    title="The algorithm needs a draft model",
    severity="error",
    why=(
        "SGLang does not check at launch that EAGLE/EAGLE3/STANDALONE have a draft: without one the draft worker "
        "loads the target checkpoint as its draft and fails or misbehaves at model load. NEXTN needs an "
        "architecture with a built-in MTP layer."
    ),
    sglang=RUNTIME,
    fields=("speculative.draft_model_path", "speculative.algorithm"),
    when=lambda ctx, a: (
        ctx.facts is not None
        and eagle_family(a)
        and a.get("speculative_draft_model_path") is None
        and not (
            _mtp_capable(ctx)
            and str(ctx.typed_value("speculative_algorithm")).upper() in ("NEXTN", "EAGLE")
        )
    ),
    message=lambda ctx, a: (
        f"{ctx.typed_value('speculative_algorithm')} on {ctx.arch} without --speculative-draft-model-path: "
        "SGLang would load the target as its own draft."
    ),
    fixes=lambda ctx, a: [
        Fix("Set the draft model path", {"speculative.draft_model_path": "/path/to/draft"}),
        Fix("Use NGRAM (no draft model)", {"speculative.algorithm": "NGRAM"}),
    ],
)


NEXTN_NO_MTP = Rule(
    id="R-NEXTN-NO-MTP",
    title="NEXTN on a model without MTP layers",
    severity="error",
    why="NEXTN drafts with the model's own MTP / NextN layer; this checkpoint declares none, so SGLang fails at model load.",
    sglang=RUNTIME,
    fields=("speculative.algorithm", "model.path"),
    when=lambda ctx, a: (
        ctx.facts is not None
        and str(ctx.typed_value("speculative_algorithm")).upper() == "NEXTN"
        and ctx.facts.mtp_layers == 0
        and ctx.typed_value("speculative_draft_model_path") is None
    ),
    message=lambda ctx, a: (
        f"{ctx.arch} declares no MTP layers (num_nextn_predict_layers / mtp_num_hidden_layers)."
    ),
    fixes=lambda ctx, a: [
        Fix("Use NGRAM (no draft model)", {"speculative.algorithm": "NGRAM"}),
        Fix(
            "Use EAGLE3 with a draft",
            {
                "speculative.algorithm": "EAGLE3",
                "speculative.draft_model_path": "/path/to/eagle3-draft",
            },
        ),
    ],
)


EAGLE3_DRAFT_AS_EAGLE = Rule(
    id="R-EAGLE3-DRAFT-WITH-EAGLE",
    title="An EAGLE-3 draft run as EAGLE accepts nothing",
    severity="error",
    why=(
        "EAGLE-3 drafts read hidden states from three target layers; run under EAGLE they get the wrong inputs and "
        "every draft token is rejected (accept length 1.00): slower than no speculation."
    ),
    sglang=RUNTIME,
    fields=("speculative.algorithm", "speculative.draft_model_path"),
    when=lambda ctx, a: (
        ctx.draft_facts is not None
        and ctx.draft_facts.is_eagle3_draft
        and str(ctx.typed_value("speculative_algorithm")).upper() in ("EAGLE", "NEXTN")
    ),
    message=lambda ctx, a: (
        "the draft is an EAGLE-3 model (architectures contain Eagle3) but the algorithm is "
        f"{str(ctx.typed_value('speculative_algorithm')).upper()}."
    ),
    fixes=lambda ctx, a: [Fix("Use EAGLE3", {"speculative.algorithm": "EAGLE3"})],
)


def _own_mtp_as_eagle3(ctx: Ctx, a: Args) -> bool:
    """EAGLE3 whose draft is the target checkpoint itself (auto-filled or typed), on a target
    whose MTP / NextN draft class has no EAGLE-3 interface in this release."""
    return (
        algo(a) == "EAGLE3"
        and ctx.arch in ctx.release.arch_set("eagle3_unusable_mtp")
        and a.get("speculative_draft_model_path") is not None
        and a.get("speculative_draft_model_path") == a.get("model_path")
    )


EAGLE3_OWN_MTP = Rule(
    id="R-EAGLE3-OWN-MTP",
    title="EAGLE3 cannot use the checkpoint's own MTP layer as its draft",
    severity="error",
    why=(
        "With the target as its draft, SGLang loads the checkpoint's MTP / NextN layer, a draft class without "
        "the EAGLE-3 interface: the EAGLE3 branch of the draft worker calls its set_embed and reads its "
        "hot_token_id, so the server fails with an AttributeError after loading the weights. The built-in MTP "
        "layer runs under EAGLE (NEXTN); EAGLE3 needs an EAGLE-3 draft checkpoint."
    ),
    sglang=RUNTIME,
    fields=("speculative.algorithm", "speculative.draft_model_path"),
    when=_own_mtp_as_eagle3,
    message=lambda ctx, a: (
        f"{ctx.arch}'s own MTP layer has no EAGLE-3 head: EAGLE3 fails at start after the weights load; "
        "use EAGLE (NEXTN) for the built-in MTP, or give an EAGLE-3 draft."
    ),
    fixes=lambda ctx, a: [
        Fix("Use EAGLE (the built-in MTP layer)",
            {"speculative.algorithm": "EAGLE", "speculative.draft_model_path": None}),
    ],
)


def _hidden_message(ctx: Ctx) -> str:
    assert ctx.facts is not None and ctx.draft_facts is not None
    draft = ctx.draft_facts.target_hidden_size or ctx.draft_facts.hidden_size
    return f"draft expects hidden size {draft}, the target has {ctx.facts.hidden_size}."


def _vocab_message(ctx: Ctx) -> str:
    assert ctx.facts is not None and ctx.draft_facts is not None
    return f"draft vocab {ctx.draft_facts.vocab_size} != target vocab {ctx.facts.vocab_size}."


DRAFT_HIDDEN_MISMATCH = Rule(
    id="R-DRAFT-HIDDEN-SIZE",
    title="Draft hidden size does not match the target",
    severity="error",
    why="The draft consumes the target's hidden states; a draft trained for another target fails at load or accepts nothing.",
    sglang=RUNTIME,
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        ctx.facts is not None
        and ctx.draft_facts is not None
        and algo(a) in ("EAGLE", "EAGLE3")
        and ctx.facts.hidden_size is not None
        and (ctx.draft_facts.target_hidden_size or ctx.draft_facts.hidden_size)
        not in (None, ctx.facts.hidden_size)
        and ctx.typed_value("speculative_draft_model_path") is not None
    ),
    message=lambda ctx, a: _hidden_message(ctx),
)


DRAFT_VOCAB_MISMATCH = Rule(
    id="R-DRAFT-VOCAB",
    title="Draft vocabulary differs from the target",
    severity="warning",
    why="Draft tokens must be target tokens; a smaller draft vocabulary needs a token map (--speculative-token-map / d2t).",
    sglang=RUNTIME,
    fields=("speculative.draft_model_path", "speculative.token_map"),
    when=lambda ctx, a: (
        ctx.facts is not None
        and ctx.draft_facts is not None
        and algo(a) is not None
        and ctx.facts.vocab_size is not None
        and ctx.draft_facts.vocab_size is not None
        and ctx.draft_facts.vocab_size != ctx.facts.vocab_size
        and a.get("speculative_token_map") is None
        and ctx.typed_value("speculative_draft_model_path") is not None
    ),
    message=lambda ctx, a: _vocab_message(ctx),
)


DRAFT_PATH_MISSING_23 = Rule(
    id="R-DRAFT-CONFIG-READ",
    title="The draft config is opened at start",
    severity="error",
    why=(
        "Releases that hold this read the draft's config.json during argument resolution (to "
        "resolve the algorithm alias or detect assistant drafts), so a wrong draft path fails at "
        "once: a missing local folder is taken for a Hub repo id and refused."
    ),
    sglang=raises("resolve", "OSError"),
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        ctx.paths_local
        and ctx.draft_error is not None
        and ctx.typed_value("speculative_draft_model_path") is not None
        and str(ctx.typed_value("speculative_draft_model_path")).startswith(("/", "./", "../", "~"))
    ),
    message=lambda ctx, a: f"draft config not readable: {ctx.draft_error}",
    fixes=lambda ctx, a: [
        Fix("Fix the draft model path", {"speculative.draft_model_path": "/path/to/draft"})
    ],
)


DRAFT_FACTS_MISSING = Rule(
    id="R-DRAFT-FACTS-MISSING",
    title="Draft config not readable",
    severity="info",
    why=(
        "The draft checks read the draft's config.json: whether it is an EAGLE-3 head, its hidden "
        "size and vocabulary against the target's. Releases that do not open it during argument "
        "resolution start and then fail loading a draft path that does not exist."
    ),
    sglang=WIZARD,
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: (
        ctx.draft_error is not None
        and ctx.typed_value("speculative_algorithm") is not None
        and ctx.typed_value("speculative_draft_model_path") is not None
        # where SGLang itself opens it at start, R-DRAFT-CONFIG-READ says so as an error
        and not (DRAFT_PATH_MISSING_23.holds_for(ctx.release) and DRAFT_PATH_MISSING_23.when(ctx, a))
    ),
    message=lambda ctx, a: (
        f"not checked: the draft's kind, hidden size and vocabulary (draft config not read: "
        f"{ctx.draft_error}). If the path is on the GPU host, check it there (`sglang-wizard "
        "inspect DRAFT_PATH`); if it is wrong, SGLang fails when it loads the draft."
    ),
)
