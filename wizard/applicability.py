"""Which speculative algorithms a model can use, and draft checks SGLang does not do at launch.

SGLang decides "this model has MTP" from `config.json` `architectures[0]` alone (it never reads
`num_nextn_predict_layers` / `mtp_num_hidden_layers` to validate a launch): the draft path is
auto-filled for a fixed list of architectures, and the draft worker rewrites the architecture to an
MTP class for another list. `mtp_capable` reads both lists from the release data; the wizard also
asks for MTP layers in the checkpoint.

The draft checks return small `DraftCheck` results; the rule engine turns them into findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wizard.model_facts import ModelFacts
from wizard.sglang.releases import release_for

Severity = Literal["error", "warning", "info"]

# R-DRAFT-AUTO: SGLang sets the draft path to the model path for these targets (EAGLE family);
# the rule catalog holds the per-version lists.


def draft_auto_filled(architecture: str | None, sglang_version: str) -> bool:
    """SGLang sets `--speculative-draft-model-path` to the model path for this target (EAGLE family)."""
    return architecture in release_for(sglang_version).arch_set("draft_auto")


def mtp_capable(architecture: str, sglang_version: str) -> bool:
    """The architecture has an MTP/NextN draft class in this SGLang release.

    The release data's `mtp_draft` list holds the targets its draft worker loads with an MTP /
    NextN class (read from `configs/model_config.py` by `add-release`); the release's draft-auto
    list always counts."""
    release = release_for(sglang_version)
    return architecture in release.arch_set("mtp_draft") or architecture in release.arch_set(
        "draft_auto")


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


def effective_draft_tokens(
    algorithm: str | None,
    num_steps: int | None,
    topk: int | None,
    num_draft_tokens: int | None,
    target_architecture: str | None,
    sglang_version: str,
) -> int | None:
    """The draft-token count SGLang will use (the release's auto table, topk-1 rewrite,
    NGRAM/DFLASH defaults).

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
        return release_for(sglang_version).auto_choose(algo, target_architecture)[2]
    if num_steps is not None and topk == 1:
        return num_steps + 1
    return num_draft_tokens


def draft_kind(name: str, draft: ModelFacts) -> DraftCheck | None:
    """The kind of draft against the algorithm (what no SGLang statement or engine rule checks):
    EAGLE and EAGLE3 take an EAGLE head of their own generation, STANDALONE and DFLASH a model.
    (An EAGLE-3 head under EAGLE is the engine's R-EAGLE3-DRAFT-WITH-EAGLE.)"""
    if name in ("EAGLE", "EAGLE3") and not draft.is_eagle_draft:
        return DraftCheck("draft-kind", False, "error",
                          f"the draft ({draft.architecture}) is not an EAGLE head",
                          "use STANDALONE for a plain small model")
    if name == "EAGLE3" and not draft.is_eagle3_draft:
        return DraftCheck("draft-kind", False, "error",
                          f"the draft is an EAGLE(-2) model ({draft.architecture}) but the "
                          "algorithm is EAGLE3, which feeds it three hidden states it was not "
                          "trained on", "use --speculative-algorithm EAGLE")
    if name in ("STANDALONE", "DFLASH") and draft.is_eagle_draft:
        return DraftCheck("draft-kind", False, "error",
                          f"the draft ({draft.architecture}) is an EAGLE head, not a model",
                          "use EAGLE3 or EAGLE for an EAGLE head")
    return None
