"""The vocabulary of the rule engine: the inputs of a check (`Ctx`), SGLang's argument record as it
is resolved (`Args`), and a `Rule` (one SGLang assertion, rewrite or runtime trap, as data)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wizard.rules.report import Finding, Fix, Severity, SglangRaise, Stage

if TYPE_CHECKING:
    from wizard.gpus import GpuKind
    from wizard.model_facts import ModelFacts
    from wizard.sglang.releases import Release


class Args(dict[str, Any]):
    """SGLang's `ServerArgs` fields (canonical names; each release's spelling in wizard/sglang/fields.py) while they are being resolved."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def settle(self) -> None:
        """Mark the values resolved: nothing writes them any more, so what is derived from them
        (the memory plan's inputs, read by several rules and the report) may be kept."""
        object.__setattr__(self, "derived", {})

    def derived_cache(self) -> dict[str, Any] | None:
        """The cache of values derived from settled values (None while they are resolved)."""
        cache: dict[str, Any] | None = self.__dict__.get("derived")
        return cache


@dataclass
class Ctx:
    """Everything a check reads besides the arguments: version, model facts, GPU, environment."""

    release: Release  # the SGLang release whose data checks this profile
    requested_version: str
    typed: Mapping[str, Any]  # canonical field -> value the user typed
    env: Mapping[str, str]
    gpu: GpuKind
    gpu_assumed: bool
    gpus: int | None
    facts: ModelFacts | None
    facts_error: str | None
    draft_facts: ModelFacts | None
    draft_error: str | None
    paths_local: bool = True  # model paths are on this machine (so a missing path is an error)
    release_note: str | None = None  # why the release data is not exact for `requested_version`
    gpu_free_gib: float | None = None  # free memory of the emptiest-used GPU read on the host

    @property
    def version(self) -> str:
        """The name of the release in use (for messages; rules read `release`, never compare it)."""
        return self.release.name

    @property
    def arch(self) -> str | None:
        """`architectures[0]` of the target model's config.json (None when unreadable)."""
        return self.facts.architecture if self.facts is not None else None

    @property
    def is_mla(self) -> bool:
        """The target uses multi-head latent attention (DeepSeek-style)."""
        return self.facts is not None and self.facts.attention == "MLA"

    def typed_value(self, name: str) -> Any:
        """What the user typed for a canonical field (None when not given)."""
        return self.typed.get(name)


Predicate = Callable[[Ctx, Args], bool]
Effect = Callable[[Ctx, Args], None]
Text = Callable[[Ctx, Args], str]
FixMaker = Callable[[Ctx, Args], Sequence[Fix]]


def _no_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    return ()


@dataclass(frozen=True)
class Raises:
    """What kind of SGLang statement a rule stands for; the release data says where it stands.

    `located` rules hold only in the releases whose source has their statement (the onboarding
    tool locates it by the statement itself); the others hold wherever their resolution order
    places them. `argparse_with_choices`: in a release that declares the algorithm as an argparse
    choice list, argparse refuses first (SystemExit, no source line).
    """

    stage: Stage
    exception: str | None = None
    located: bool = False
    argparse_with_choices: bool = False
    # another rule whose located statement raises this one too (`x % page_size` with a page
    # size of 0: Python's ZeroDivisionError at R-CHUNKED-PAGE's assert)
    at: str | None = None

    def site_rule(self, rule_id: str) -> str:
        """The rule id whose located statement this rule's raise is."""
        return self.at or rule_id

    def for_release(self, release: Release, rule_id: str, message: str) -> SglangRaise:
        """What SGLang does in `release` (the raise site read from its data)."""
        if self.argparse_with_choices and release.algorithm_choices:
            return SglangRaise("argparse", "SystemExit", None, False, message)
        site = release.site(self.site_rule(rule_id))
        if site is None:
            return SglangRaise(self.stage, self.exception, None, False, message)
        if self.at is not None:  # Python's own error at that statement, not its assert
            return SglangRaise(self.stage, self.exception, site.where, False, message)
        exception = (site.exception or self.exception) if self.exception else None
        bare = site.bare and exception == "AssertionError"
        return SglangRaise(self.stage, exception, site.where, bare, site.source if bare else message)


def raises(stage: Stage, exception: str) -> Raises:
    """A rule that raises `exception` at a located statement of SGLang's argument code."""
    return Raises(stage, exception, located=True)


SILENT = Raises("resolve")  # a silent rewrite or log line during resolution
# a silent rewrite at a located statement: the rule holds only in releases that have it
SILENT_LOCATED = Raises("resolve", located=True)
RUNTIME = Raises("runtime")  # a trap SGLang's argument code does not check (fails after start)
WIZARD = Raises("wizard")  # the wizard's own context (assumptions, environment)
ALGORITHM_CHECK = Raises("resolve", "ValueError", located=False, argparse_with_choices=True)


@dataclass(frozen=True)
class Rule:
    """One SGLang rule as data.

    `sglang` says what kind of statement SGLang has for it; the release data gives the raise site
    (`file:line`, bare or not) in each release. `when` reads the inputs and the
    arguments as SGLang sees them at that point of its own resolution order; `apply` performs
    SGLang's rewrite for `adjusted` rules; `recover` puts the record into the state a user who
    applied the first fix would reach, so the rules after an error are still evaluated.
    """

    id: str
    title: str
    severity: Severity
    why: str
    sglang: Raises
    fields: tuple[str, ...]
    when: Predicate
    message: Text
    fixes: FixMaker = _no_fixes
    apply: Effect | None = None
    recover: Effect | None = None
    # SGLang fields whose flag, typed in extra args, a fix drops (`wizard.api` adds the drop
    # and keeps it only when the finding is then gone)
    drops: tuple[str, ...] = ()

    def holds_for(self, release: Release) -> bool:
        """Whether the rule exists in this release (located rules: their statement is there)."""
        return not self.sglang.located or release.site(self.sglang.site_rule(self.id)) is not None


def gt(value: Any, other: int) -> bool:
    """`value > other` that is False for None (SGLang would crash; that crash is its own rule)."""
    return value is not None and value > other


@dataclass(frozen=True)
class Check:
    """A finding the product emits outside the engine's run of SGLang's resolution order, as data.

    SGLang's argparse refusals of profile fields and extra args, flags of another release,
    unset secret references, the multi-node profile checks and a step the engine could not
    evaluate: the code that detects them (`wizard.api`, `wizard.multinode`, the engine's guard)
    builds the finding with `finding()`, so the id, severity, title and why are registered once,
    in `RULES_BY_ID`, beside the engine's `Rule`s.
    """

    id: str
    title: str
    severity: Severity
    why: str
    sglang: Raises
    fields: tuple[str, ...]

    def finding(
        self,
        message: str,
        *,
        title: str | None = None,
        explanation: str | None = None,
        fields: tuple[str, ...] | None = None,
        fixes: Sequence[Fix] = (),
        order: int = 0,
        sglang: SglangRaise | None = None,
    ) -> Finding:
        """This check's finding; `title`, `explanation` and `fields` default to the registered
        ones, `sglang` to the registered kind of statement (no site) with `message`."""
        shown = sglang or SglangRaise(self.sglang.stage, self.sglang.exception, None, False, message)
        return Finding(
            rule=self.id,
            severity=self.severity,
            title=title or self.title,
            message=message,
            explanation=explanation if explanation is not None else self.why,
            fields=self.fields if fields is None else fields,
            sglang=shown,
            fixes=tuple(fixes),
            order=order,
        )


def auto_params(ctx: Ctx, a: Args) -> tuple[int, int, int]:
    """SGLang's `auto_choose_speculative_params`: (steps, topk, draft tokens), from the release."""
    return ctx.release.auto_choose(a.get("speculative_algorithm"), ctx.arch)
