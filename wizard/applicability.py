"""Which speculative algorithms a model can use, and draft checks SGLang does not do at launch.

SGLang decides "this model has MTP" from `config.json` `architectures[0]` alone (it never reads
`num_nextn_predict_layers` / `mtp_num_hidden_layers` to validate a launch): the draft path is
auto-filled for a fixed list of architectures, and the draft worker rewrites the architecture to an
MTP class for another list. `mtp_capable` encodes both lists per SGLang version; the wizard also
asks for MTP layers in the checkpoint.

The draft checks return small `DraftCheck` results; the rule engine turns them into findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wizard.model_info import ModelFacts
from wizard.sglang.releases import release_for

Severity = Literal["error", "warning", "info"]

# R-DRAFT-AUTO: SGLang sets the draft path to the model path for these targets (EAGLE family);
# the rule catalog holds the per-version lists.

# R-DRAFT-FALLBACK: the draft worker loads the target checkpoint with an MTP/NextN class.
_MTP_CLASS_0511 = frozenset(
    {
        "BailingMoeForCausalLM",
        "BailingMoeV2ForCausalLM",
        "BailingMoeV2_5ForCausalLM",
        "DeepseekV3ForCausalLM",
        "Ernie4_5_MoeForCausalLM",
        "ExaoneMoEForCausalLM",
        "Glm4MoeForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "GlmOcrForConditionalGeneration",
        "HYV3ForCausalLM",
        "LongcatFlashForCausalLM",
        "MiMoForCausalLM",
        "MiMoV2ForCausalLM",
        "MiMoV2FlashForCausalLM",
        "NemotronHForCausalLM",
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Step3p5ForCausalLM",
    }
)
_MTP_CLASS_0523 = _MTP_CLASS_0511 | {
    "BailingMoeV3ForCausalLM",
    "DeepseekV32ForCausalLM",
    "DeepseekV4ForCausalLM",
    "ExaoneMoeForCausalLM",
    "GigaChat35ForCausalLM",
    "Glm5NextForConditionalGeneration",
    "GlmMoeDsaForCausalLM",
    "HYV4ForCausalLM",
    "InklingForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration",
    "Qwen3MoeForCausalLM",
    "Qwen3_5ForCausalLM",
    "Qwen3_5MoeForCausalLM",
    "Qwen4ExpForConditionalGeneration",
    "Step3p7ForConditionalGeneration",
}

KNOWN_VERSIONS = ("0.5.11", "0.5.23")

# Algorithms that run a draft network (NEXTN uses the checkpoint's own MTP layers).
_NEEDS_DRAFT = {"EAGLE": True, "EAGLE3": True, "STANDALONE": True, "DFLASH": True}

_DESCRIPTIONS = {
    "NEXTN": "built-in MTP / NextN layers of the checkpoint draft the tokens (runs as EAGLE)",
    "EAGLE": "EAGLE-2 draft head trained for this target (tree drafting)",
    "EAGLE3": "EAGLE-3 draft head reading three target hidden states",
    "STANDALONE": "any small model with the same tokenizer drafts the tokens",
    "NGRAM": "no draft model: proposes tokens from n-grams of the context",
    "DFLASH": "block-diffusion draft model proposes a block of tokens at once",
    "DSPARK": "DSpark draft bundled with or next to the target (0.5.23)",
    "UNO": "LoRA-based self-speculation, no draft model (0.5.23)",
}


def draft_auto_filled(architecture: str | None, sglang_version: str) -> bool:
    """SGLang sets `--speculative-draft-model-path` to the model path for this target (EAGLE family)."""
    return architecture in release_for(sglang_version).arch_set("draft_auto")


def mtp_capable(architecture: str, sglang_version: str) -> bool:
    """The architecture has an MTP/NextN draft class in this SGLang release.

    The MTP model classes live outside the argument code; the pipeline releases (0.5.19 on) carry
    the wider list. The release's draft-auto list always counts."""
    release = release_for(sglang_version)
    classes = _MTP_CLASS_0523 if release.pipeline else _MTP_CLASS_0511
    return architecture in classes or architecture in release.arch_set("draft_auto")


@dataclass(frozen=True)
class AlgorithmOption:
    """One choice on the algorithm screen."""

    name: str
    available: bool
    reason: str
    needs_draft: bool
    description: str


@dataclass(frozen=True)
class DraftCheck:
    """Result of one check: `ok` False means the finding applies (severity says how bad)."""

    check_id: str
    ok: bool
    severity: Severity
    message: str
    fix: str | None = None


def _ok(check_id: str, message: str = "ok") -> DraftCheck:
    return DraftCheck(check_id, True, "info", message)


def nextn_applicable(target: ModelFacts, sglang_version: str) -> DraftCheck:
    """NEXTN needs an architecture with an MTP class in this version and MTP layers in the checkpoint."""
    arch = target.architecture or "(no architectures in config.json)"
    if not mtp_capable(arch, sglang_version):
        return DraftCheck(
            "nextn-arch",
            False,
            "error",
            f"SGLang {sglang_version} has no MTP/NextN draft class for {arch}: NEXTN would load "
            "the whole target again as its own draft",
            "pick EAGLE3 / EAGLE with a trained draft, STANDALONE with a small model, or NGRAM",
        )
    if target.mtp_layers <= 0:
        return DraftCheck(
            "nextn-layers",
            False,
            "error",
            f"{arch} supports MTP but this checkpoint has no MTP layers "
            "(num_nextn_predict_layers / mtp_num_hidden_layers is 0 or absent)",
            "use a checkpoint that ships its MTP layers, or another algorithm",
        )
    return _ok("nextn", f"{target.mtp_layers} MTP layer(s), {arch} has an MTP class")


def eagle3_draft_with_eagle(algorithm: str | None, draft: ModelFacts | None) -> DraftCheck:
    """An EAGLE-3 draft run with EAGLE/NEXTN loads but accepts nothing (accept length 1.00)."""
    algo = (algorithm or "").upper()
    if draft is None:
        return _ok("eagle3-draft-algo")
    if algo in ("EAGLE", "NEXTN") and draft.is_eagle3_draft:
        return DraftCheck(
            "eagle3-draft-algo",
            False,
            "error",
            f"the draft is an EAGLE-3 model ({draft.architecture}) but the algorithm is {algo}: "
            "it starts and every draft token is rejected (accept length 1.00)",
            "use --speculative-algorithm EAGLE3",
        )
    if algo == "EAGLE3" and draft.is_eagle_draft and not draft.is_eagle3_draft:
        return DraftCheck(
            "eagle3-draft-algo",
            False,
            "error",
            f"the draft is an EAGLE(-2) model ({draft.architecture}) but the algorithm is EAGLE3, "
            "which feeds it three hidden states it was not trained on",
            "use --speculative-algorithm EAGLE",
        )
    return _ok("eagle3-draft-algo")


def draft_hidden_size(
    target: ModelFacts, draft: ModelFacts | None, algorithm: str | None
) -> DraftCheck:
    """An EAGLE/EAGLE-3 draft reads the target's hidden states: the widths must agree."""
    algo = (algorithm or "").upper()
    if draft is None or algo not in ("EAGLE", "EAGLE3", "NEXTN"):
        return _ok("draft-hidden-size")
    expected = draft.target_hidden_size or draft.hidden_size
    key = "target_hidden_size" if draft.target_hidden_size else "hidden_size"
    if expected != target.hidden_size:
        return DraftCheck(
            "draft-hidden-size",
            False,
            "error",
            f"draft {key} {expected} does not match the target's hidden_size "
            f"{target.hidden_size}: the draft was trained for another model",
            "use a draft trained for this target",
        )
    return _ok("draft-hidden-size")


def draft_vocab(target: ModelFacts, draft: ModelFacts | None, algorithm: str | None) -> DraftCheck:
    """Draft and target must share the vocabulary (EAGLE drafts share the target's embedding)."""
    algo = (algorithm or "").upper()
    if draft is None or algo in ("NGRAM", "UNO", ""):
        return _ok("draft-vocab")
    if draft.vocab_size != target.vocab_size:
        strict = algo in ("EAGLE", "EAGLE3", "NEXTN")
        return DraftCheck(
            "draft-vocab",
            False,
            "error" if strict else "warning",
            f"draft vocab_size {draft.vocab_size} differs from the target's {target.vocab_size}"
            + (
                ": the draft uses the target's embedding, so the shapes will not match"
                if strict
                else ": token ids only line up if both use the same tokenizer"
            ),
            "use a draft built on the target's tokenizer",
        )
    return _ok("draft-vocab")


def draft_missing(
    target: ModelFacts | None,
    algorithm: str | None,
    draft_path_given: bool,
    sglang_version: str,
) -> DraftCheck:
    """A draft model is needed but none is given (SGLang itself only checks this for DFLASH)."""
    algo = (algorithm or "").upper()
    if draft_path_given or algo not in _NEEDS_DRAFT:
        return _ok("draft-missing")
    arch = target.architecture if target is not None else None
    if algo in ("EAGLE", "EAGLE3") and draft_auto_filled(arch, sglang_version):
        return _ok("draft-missing", f"SGLang uses the checkpoint's MTP layers of {arch}")
    severity: Severity = "error"
    return DraftCheck(
        "draft-missing",
        False,
        severity,
        f"{algo} needs --speculative-draft-model-path"
        + (
            "; SGLang refuses to start without it"
            if algo == "DFLASH"
            else "; SGLang starts anyway and loads the target itself as the draft"
        ),
        "give the draft model folder",
    )


def tree_capacity(
    num_steps: int | None, topk: int | None, num_draft_tokens: int | None
) -> DraftCheck:
    """`num_draft_tokens - 1 <= topk + (steps - 1) * topk**2`; SGLang fails only at the first decode."""
    if num_steps is None or topk is None or num_draft_tokens is None:
        return _ok("tree-capacity")
    if topk == 1:
        # SGLang rewrites the draft tokens to steps + 1 for a chain (R-TOPK1-DRAFT-REWRITE), so
        # the tree never overflows; the rewrite itself is the rule engine's finding.
        return _ok("tree-capacity", f"topk 1: SGLang drafts steps + 1 = {num_steps + 1} tokens")
    capacity = topk + (num_steps - 1) * topk**2
    if num_draft_tokens - 1 > capacity:
        largest = capacity + 1
        return DraftCheck(
            "tree-capacity",
            False,
            "error",
            f"--speculative-num-draft-tokens {num_draft_tokens} needs a draft tree of "
            f"{num_draft_tokens - 1} nodes but steps {num_steps} x topk {topk} hold only "
            f"{capacity}: SGLang crashes at the first decode",
            f"use --speculative-num-draft-tokens {largest} or raise steps/topk",
        )
    return _ok("tree-capacity")


def effective_draft_tokens(
    algorithm: str | None,
    num_steps: int | None,
    topk: int | None,
    num_draft_tokens: int | None,
    target_architecture: str | None,
) -> int | None:
    """The draft-token count SGLang will use (auto table, topk-1 rewrite, NGRAM/DFLASH defaults).

    Returns None without an algorithm. A mixed trio (which SGLang refuses) gives the typed value.
    """
    algo = (algorithm or "").upper()
    if not algo:
        return None
    if algo == "NGRAM":
        return num_draft_tokens or 12
    if algo == "DFLASH":
        return num_draft_tokens or 16
    if algo not in ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE"):
        return num_draft_tokens
    if num_steps is None and topk is None and num_draft_tokens is None:
        if algo == "STANDALONE":
            return 4
        big = ("LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM")
        return 8 if target_architecture in big else 4
    if num_steps is not None and topk == 1:
        return num_steps + 1
    return num_draft_tokens


def algorithm_options(
    target: ModelFacts | None, draft: ModelFacts | None, sglang_version: str
) -> list[AlgorithmOption]:
    """The algorithms of this SGLang version, each with whether it suits this target and draft."""
    known = release_for(sglang_version).algorithms
    order = ["NEXTN", "EAGLE", "EAGLE3", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO"]
    names = [n for n in order if n in known]
    options: list[AlgorithmOption] = []
    for name in names:
        available, reason = True, "ok"
        if name == "NEXTN":
            if target is None:
                available, reason = False, "inspect the model first"
            else:
                check = nextn_applicable(target, sglang_version)
                available, reason = check.ok, check.message
        elif name in ("EAGLE", "EAGLE3", "STANDALONE", "DFLASH"):
            auto = (
                name in ("EAGLE", "EAGLE3")
                and target is not None
                and draft_auto_filled(target.architecture, sglang_version)
            )
            if draft is None:
                if auto:
                    reason = "SGLang uses the checkpoint's MTP layers as the draft"
                else:
                    reason = "needs a draft model"
            else:
                # Hidden size and vocabulary are the rule engine's findings (R-DRAFT-HIDDEN-SIZE,
                # R-DRAFT-VOCAB): `wizard.verdict.algorithm_choices` adds them, so the Algorithm
                # and Parameters steps say the same thing.
                checks = [eagle3_draft_with_eagle(name, draft)]
                if name in ("EAGLE", "EAGLE3") and not draft.is_eagle_draft:
                    checks.append(
                        DraftCheck(
                            "draft-kind",
                            False,
                            "error",
                            f"the draft ({draft.architecture}) is not an EAGLE head",
                            "use STANDALONE for a plain small model",
                        )
                    )
                if name in ("STANDALONE", "DFLASH") and draft.is_eagle_draft:
                    checks.append(
                        DraftCheck(
                            "draft-kind",
                            False,
                            "error",
                            f"the draft ({draft.architecture}) is an EAGLE head, not a model",
                            "use EAGLE3 or EAGLE for an EAGLE head",
                        )
                    )
                failed = [c for c in checks if not c.ok and c.severity == "error"]
                if failed:
                    available, reason = False, failed[0].message
        elif name == "DSPARK":
            reason = "needs a DSpark draft (bundled, in dspark/ next to the target, or given)"
        elif name == "UNO":
            available, reason = (
                draft is None,
                (
                    "needs --uno-lora-path; no draft model"
                    if draft is None
                    else "takes no draft model"
                ),
            )
        options.append(
            AlgorithmOption(
                name=name,
                available=available,
                reason=reason,
                needs_draft=_NEEDS_DRAFT.get(name, False),
                description=_DESCRIPTIONS[name],
            )
        )
    return options
