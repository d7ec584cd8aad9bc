"""What the rule engine says about algorithms and drafts for a target: the algorithms of a release
with whether they suit a target and draft (`algorithm_options`), and draft models found on the Hub
and in the HF cache with their fit (`draft_candidates`, `draft_fit`).

These ask the engine (`api.draft_findings`), so they sit above it; `wizard.applicability` (the
kind of draft, MTP lists, auto-chosen draft tokens) and `wizard.hub` (search, cache, configs)
below it hold what they read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from wizard.api import draft_findings
from wizard.applicability import AlgorithmOption, draft_auto_filled, draft_kind
from wizard.hub import (
    DraftCandidate,
    HubError,
    HubSettings,
    cached_models,
    load_hub_facts,
    search_models,
)
from wizard.model_facts import ModelFacts
from wizard.model_files import ModelReadError
from wizard.sglang.releases import default_version, release_for

# Algorithms that run a draft network (NEXTN uses the checkpoint's own MTP layers).
_NEEDS_DRAFT = {"EAGLE": True, "EAGLE3": True, "STANDALONE": True, "DFLASH": True}

_DESCRIPTIONS = {
    "NEXTN": "built-in MTP / NextN layers of the checkpoint draft the tokens (runs as EAGLE)",
    "EAGLE": "EAGLE-2 draft head trained for this target (tree drafting)",
    "EAGLE3": "EAGLE-3 draft head reading three target hidden states",
    "STANDALONE": "any small model with the same tokenizer drafts the tokens",
    "NGRAM": "no draft model: proposes tokens from n-grams of the context",
    "DFLASH": "block-diffusion draft model proposes a block of tokens at once",
    "DSPARK": "DSpark draft bundled with or next to the target",
    "UNO": "LoRA-based self-speculation, no draft model",
}


def algorithm_options(
    target: ModelFacts | None,
    draft: ModelFacts | None,
    sglang_version: str,
    ask_engine: bool = True,
) -> list[AlgorithmOption]:
    """The algorithms of this SGLang version, each with whether it suits this target and draft.

    With a target, the rule engine decides (`api.draft_findings`: its first error about the
    algorithm and draft makes the algorithm unavailable); the kind of draft is checked here.
    `ask_engine=False` leaves the engine out (`verdict.algorithm_choices` runs the whole check
    of each algorithm itself)."""
    known = release_for(sglang_version).algorithms
    order = ["NEXTN", "EAGLE", "EAGLE3", "STANDALONE", "NGRAM", "DFLASH", "DSPARK", "UNO"]
    names = [n for n in order if n in known]
    options: list[AlgorithmOption] = []
    for name in names:
        available, reason, auto = True, "ok", False
        if name == "NEXTN" and target is None:
            available, reason = False, "inspect the model first"
        elif name in ("EAGLE", "EAGLE3", "STANDALONE", "DFLASH"):
            auto = (
                name in ("EAGLE", "EAGLE3")
                and target is not None
                and draft_auto_filled(target.architecture, sglang_version)
            )
            if draft is None:
                reason = ("SGLang uses the checkpoint's MTP layers as the draft" if auto
                          else "needs a draft model")
            else:
                kind = draft_kind(name, draft)
                if kind is not None:
                    available, reason = False, kind.message
        elif name == "DSPARK":
            reason = "needs a DSpark draft (bundled, in dspark/ next to the target, or given)"
        elif name == "UNO":
            available, reason = (
                draft is None,
                "needs --uno-lora-path; no draft model" if draft is None else "takes no draft model",
            )
        if available and ask_engine and target is not None and (
                name == "NEXTN" or draft is not None or auto):
            errors = [f for f in draft_findings(target, draft, algorithm=name,
                                                sglang_version=sglang_version)
                      if f.severity == "error"]
            if errors:
                available, reason = False, errors[0].message
        if available and name == "NEXTN" and target is not None:
            reason = f"{target.mtp_layers} MTP layer(s), {target.architecture} has an MTP class"
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


def _short_name(target: str) -> str:
    """The model name a draft repo usually repeats: `Qwen/Qwen3-8B` -> `Qwen3-8B`."""
    name = target.rstrip("/").split("/")[-1]
    if name.startswith("models--"):
        name = name.removeprefix("models--").split("--")[-1]
    return re.sub(r"-(FP8|NVFP4|AWQ|GPTQ|INT4|Int4|W4A16|BF16)$", "", name)


_DRAFT_WORDS = ("eagle", "draft", "specforge", "mtp", "medusa")


def draft_fit(target: ModelFacts, draft: ModelFacts, algorithm: str,
              sglang_version: str | None = None) -> tuple[str, ...]:
    """Why `draft` cannot serve `target` under `algorithm` (EAGLE/EAGLE3); empty when it fits.

    Besides the kind of draft (`applicability.draft_kind`), the rule engine decides (`api.draft_findings`: its errors and
    warnings about the draft, as a profile with this target and draft would get them)."""
    kind = draft_kind(algorithm.upper(), draft)
    problems = [kind.message] if kind is not None else []
    problems += [
        f.message
        for f in draft_findings(target, draft, algorithm=algorithm,
                                sglang_version=sglang_version or default_version())
        if f.rule != "R-DRAFT-MISSING" and f.severity in ("error", "warning")
    ]
    return tuple(problems)


def draft_candidates(
    target_name: str,
    target: ModelFacts,
    algorithm: str,
    *,
    limit: int = 12,
    settings: HubSettings | None = None,
    extra: Iterable[str] = (),
    sglang_version: str | None = None,
) -> list[DraftCandidate]:
    """Drafts for `target` found on the Hub (by name) and in the HF cache, checked for fit
    (`draft_fit`, with `sglang_version`'s rules; default: the release data's default version).

    Each candidate's config.json is read (never weights); fitting ones come first.
    """
    s = settings or HubSettings.from_env()
    short = _short_name(target_name).lower()
    names: dict[str, Literal["hub", "cache"]] = {}
    for m in cached_models(s):
        low = m.repo_id.lower()
        if m.has_config and any(w in low for w in _DRAFT_WORDS) and short in low.replace("_", "-"):
            names.setdefault(m.repo_id, "cache")
    for repo in extra:
        names.setdefault(repo, "cache")
    if not s.offline:
        short_name = _short_name(target_name)
        found: list[str] = []
        # Draft repos spell the target's name with `-` or `_` (`Qwen3-8B_eagle3`, `qwen3_8b_eagle3`).
        for query in dict.fromkeys((short_name, short_name.replace("-", "_"))):
            try:
                found += search_models(query, limit=50, settings=s)
            except HubError:
                continue
        for repo in found:
            if any(w in repo.lower() for w in _DRAFT_WORDS) and repo != target_name:
                names.setdefault(repo, "hub")
    out: list[DraftCandidate] = []
    for repo, where in list(names.items())[: limit * 2]:
        try:
            facts = load_hub_facts(repo, network=not s.offline, settings=s)
        except ModelReadError as exc:
            out.append(DraftCandidate(repo, where, None, False, (str(exc),)))
            continue
        kind = "EAGLE3" if facts.is_eagle3_draft else "EAGLE" if facts.is_eagle_draft else None
        problems = draft_fit(target, facts, algorithm, sglang_version)
        out.append(DraftCandidate(repo, where, kind, not problems, problems, facts))
    out.sort(key=lambda c: (not c.fits, c.where != "cache", c.repo_id))
    return out[:limit]
