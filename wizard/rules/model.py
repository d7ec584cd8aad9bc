"""The vocabulary of the rule engine: the inputs of a check (`Ctx`), SGLang's argument record as it
is resolved (`Args`), and a `Rule` (one SGLang assertion, rewrite or runtime trap, as data)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wizard.rules.report import Fix, Severity, SglangRaise

if TYPE_CHECKING:
    from wizard.gpus import GpuKind
    from wizard.model_info import ModelFacts


class Args(dict[str, Any]):
    """SGLang's `ServerArgs` fields (canonical 0.5.11 names) while they are being resolved."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


@dataclass
class Ctx:
    """Everything a check reads besides the arguments: version, model facts, GPU, environment."""

    version: str  # the supported rule set in use ("0.5.11" or "0.5.23")
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
class Rule:
    """One SGLang rule as data.

    `raises` maps each SGLang version the rule holds for to what SGLang does there (exception,
    `file:line` of the raising statement, bare assert or message). `when` reads the inputs and the
    arguments as SGLang sees them at that point of its own resolution order; `apply` performs
    SGLang's rewrite for `adjusted` rules; `recover` puts the record into the state a user who
    applied the first fix would reach, so the rules after an error are still evaluated.
    """

    id: str
    title: str
    severity: Severity
    why: str
    raises: Mapping[str, SglangRaise]
    fields: tuple[str, ...]
    when: Predicate
    message: Text
    fixes: FixMaker = _no_fixes
    apply: Effect | None = None
    recover: Effect | None = None

    def holds_for(self, version: str) -> bool:
        """Whether the rule exists in this SGLang version."""
        return version in self.raises


def gt(value: Any, other: int) -> bool:
    """`value > other` that is False for None (SGLang would crash; that crash is its own rule)."""
    return value is not None and value > other
