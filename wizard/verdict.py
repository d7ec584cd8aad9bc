"""One verdict for a report, computed once and shown the same way everywhere.

The header of every wizard step, the Algorithm and Parameters steps, Review, the Start preview and
`sglang-wizard check` all say the same thing about a profile:

* ``refuses``           SGLang's argument code raises (argparse / resolve / check): it never starts;
* ``fails at run time`` the arguments pass but a runtime trap fires (e.g. the model does not load,
                        or the memory plan says it will not fit);
* ``starts, N warnings`` it starts, with warnings that matter (e.g. only 2 requests fit in memory);
* ``starts, adjusted``  it starts, and SGLang quietly changes values you typed;
* ``starts``            it starts as typed.

Nothing here decides what SGLang does; it only summarises the rule engine's findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from wizard.rules.report import Finding, Report

if TYPE_CHECKING:
    from wizard.applicability import AlgorithmOption
    from wizard.model_facts import ModelFacts
    from wizard.profile_schema import Profile

Kind = Literal["refuses", "fails", "warnings", "adjusted", "starts"]

#: Stages at which an error is SGLang refusing the arguments (the process exits before loading).
REFUSING_STAGES = ("argparse", "resolve", "check", "wizard")


@dataclass(frozen=True)
class Verdict:
    """What SGLang does with a profile, in one word and one line."""

    kind: Kind
    headline: str  # "refuses", "fails at run time", "starts, 2 warnings", "starts, adjusted", "starts"
    detail: str  # the reason in one line (the first error, the warnings, the adjusted values)
    findings: tuple[Finding, ...]  # the findings behind the verdict (errors, or warnings)

    @property
    def starts(self) -> bool:
        """SGLang gets past its argument checks (it may still warn)."""
        return self.kind in ("warnings", "adjusted", "starts")

    @property
    def symbol(self) -> str:
        """✗ for refuses / fails, ! for warnings, ✓ otherwise."""
        return {"refuses": "✗", "fails": "✗", "warnings": "!"}.get(self.kind, "✓")

    @property
    def sentence(self) -> str:
        """A full sentence: "SGLang refuses this: ..." / "SGLang starts this, 1 warning: ..."."""
        lead = {
            "refuses": "SGLang refuses this",
            "fails": "SGLang accepts the arguments but fails at run time",
            "warnings": f"SGLang starts this, {_count(len(self.findings), 'warning')}",
            "adjusted": "SGLang starts this, adjusted",
            "starts": "SGLang starts this as typed",
        }[self.kind]
        return f"{lead}: {self.detail}" if self.detail else lead


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _refusing(finding: Finding) -> bool:
    return finding.sglang is None or finding.sglang.stage in REFUSING_STAGES


def verdict_of(report: Report) -> Verdict:
    """The one verdict for `report` (see the module docstring)."""
    errors = report.errors
    refusing = tuple(f for f in errors if _refusing(f))
    if refusing:
        first = refusing[0]
        return Verdict("refuses", "refuses", first.title, refusing)
    if errors:
        first = errors[0]
        return Verdict("fails", "fails at run time", first.title, errors)
    warnings = tuple(f for f in report.findings if f.severity == "warning")
    plan = report.memory_plan
    if plan is not None and getattr(plan, "verdict", None) == "will_not_fit":
        # The memory rule is a warning (SGLang does not check it at start), but a plan that
        # does not fit ends in an out-of-memory error while loading: say so.
        memory = tuple(f for f in warnings if f.rule == "R-MEMORY-PLAN") or warnings
        return Verdict("fails", "fails at run time", "GPU memory plan: will not fit", memory)
    if warnings:
        detail = "; ".join(f.message or f.title for f in warnings)
        return Verdict("warnings", f"starts, {_count(len(warnings), 'warning')}", detail, warnings)
    changed = report.changed()
    if changed:
        detail = ", ".join(f"{name} {typed} → {value}" for name, (typed, value) in changed.items())
        adjusted = tuple(f for f in report.findings if f.severity == "adjusted")
        return Verdict("adjusted", "starts, adjusted", detail, adjusted)
    return Verdict("starts", "starts", "", ())


#: Profile fields that make a finding about the algorithm or its draft model.
_ALGORITHM_FIELDS = frozenset(
    {"speculative.algorithm", "speculative.draft_model_path", "speculative.token_map"}
)
#: An error naming only these fields means the algorithm does not suit the model or draft.
_SUITABILITY_FIELDS = _ALGORITHM_FIELDS | {"model.path"}


def algorithm_choices(
    profile: Profile, target: ModelFacts | None, draft: ModelFacts | None
) -> list[AlgorithmOption]:
    """The Algorithm step's list: each algorithm of the profile's SGLang version, with whether it
    suits this model, decided by the same findings the Parameters step shows.

    Each algorithm is checked as the profile with that algorithm chosen; the findings about the
    algorithm or its draft decide: an error makes it unavailable (its message is the reason), a
    warning keeps it available and says so. What the rule engine does not check (the kind of
    draft, e.g. a plain model given to EAGLE3) comes from `wizard.applicability`.
    """
    from dataclasses import replace

    from wizard.api import check_profile
    from wizard.choices import algorithm_options

    options = algorithm_options(target, draft, profile.sglang_version, ask_engine=False)
    out: list[AlgorithmOption] = []
    for option in options:
        try:
            candidate = profile.with_edits({"speculative.algorithm": option.name})
            report = check_profile(candidate, facts=target, draft_facts=draft, verify_fixes=False)
        except ValueError:
            out.append(option)
            continue
        related = [f for f in report.findings if _ALGORITHM_FIELDS.intersection(f.fields)]
        # An error only about the algorithm, its draft or the model: this model cannot use it.
        blocking = [
            f for f in related if f.severity == "error" and set(f.fields) <= _SUITABILITY_FIELDS
        ]
        # An error that another field fixes (e.g. the hybrid cache strategy): usable, with that.
        needs = [f for f in related if f.severity == "error" and f not in blocking]
        warnings = [f for f in related if f.severity == "warning"]
        if blocking:
            out.append(replace(option, available=False, reason=blocking[0].message))
        elif not option.available:
            out.append(option)
        elif needs:
            out.append(replace(option, reason=f"needs a setting (F4 fixes it): {needs[0].title}"))
        elif warnings:
            out.append(replace(option, reason=f"warning: {warnings[0].message}"))
        else:
            out.append(option)
    return out
