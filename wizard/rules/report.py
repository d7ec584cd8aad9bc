"""What a check produces: findings (ordered as SGLang hits them), fixes and effective values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "adjusted", "warning", "info"]
Stage = Literal["argparse", "resolve", "check", "runtime", "wizard"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "adjusted": 1, "warning": 2, "info": 3}


@dataclass(frozen=True)
class SglangRaise:
    """What SGLang itself does for a rule in one version."""

    stage: Stage
    exception: (
        str | None
    )  # "AssertionError", "ValueError", "TypeError", "OSError", "SystemExit" or None
    where: str | None  # "sglang/srt/server_args.py:3521" (raising statement), None when not located
    bare: bool = False  # a bare `assert` (empty message)
    message: str = ""  # what users see (for bare asserts: the assert line)

    def to_json(self) -> dict[str, Any]:
        """JSON form used by `check --json`."""
        return {
            "stage": self.stage,
            "exception": self.exception,
            "where": self.where,
            "bare": self.bare,
            "message": self.message,
        }


@dataclass(frozen=True)
class Fix:
    """One machine-applicable alternative: dotted profile edits (`None` unsets a field)."""

    label: str
    edits: dict[str, Any]
    env: dict[str, str | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON form used by `check --json`."""
        out: dict[str, Any] = {"label": self.label, "edits": dict(self.edits)}
        if self.env:
            out["env"] = dict(self.env)
        return out


@dataclass(frozen=True)
class Finding:
    """One rule that fired on a profile."""

    rule: str
    severity: Severity
    title: str
    message: str
    explanation: str
    fields: tuple[str, ...]
    sglang: SglangRaise | None
    fixes: tuple[Fix, ...] = ()
    order: int = 0  # position in SGLang's own evaluation order (errors: the first one is raised)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON shape documented in the README."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "title": self.title,
            "message": self.message,
            "explanation": self.explanation,
            "fields": list(self.fields),
            "sglang": self.sglang.to_json() if self.sglang else None,
            "fixes": [f.to_json() for f in self.fixes],
        }


@dataclass(frozen=True)
class Report:
    """The outcome of a check: verdict, findings in SGLang's order, effective values."""

    sglang_version: str  # the version the user asked for
    rules_version: str  # the supported rule set used
    gpu: str | None
    findings: tuple[Finding, ...]
    effective: dict[str, Any]  # SGLang field name -> value SGLang will run with (for ok verdicts)
    typed: dict[str, Any]  # SGLang field name -> value as the user typed it
    memory_plan: Any = (
        None  # wizard.memory.MemoryPlan for the resolved values (None without model facts)
    )
    model_source: str | None = None  # where the model facts came from (None: not read)
    # Effective fields that depend on something only the real GPU answers: field -> what.
    depends_on: dict[str, str] = field(default_factory=dict)
    # R-ARG-SITE: per holding site (`file:line`), the flags (canonical) whose default makes it
    # not hold, on the values SGLang has there (the drop fixes of a command read it)
    site_culprits: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def errors(self) -> tuple[Finding, ...]:
        """Error findings, the first is what SGLang raises first."""
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def first_error(self) -> Finding | None:
        """The error SGLang would raise (None when it would start)."""
        errs = self.errors
        return errs[0] if errs else None

    @property
    def verdict(self) -> Literal["ok", "error"]:
        """`ok` when SGLang would start it (adjustments allowed)."""
        return "error" if self.errors else "ok"

    def changed(self) -> dict[str, tuple[Any, Any]]:
        """Fields whose effective value differs from what was typed: name -> (typed, effective)."""
        out: dict[str, tuple[Any, Any]] = {}
        for name, value in self.effective.items():
            typed = self.typed.get(name)
            if name in self.typed and typed != value:
                out[name] = (typed, value)
        return out

    def to_json(self, case_id: Any = None) -> dict[str, Any]:
        """The stable JSON report (`check --json` / `--jsonl`)."""
        return {
            "id": case_id,
            "sglang_version": self.sglang_version,
            "rules_version": self.rules_version,
            "gpu": self.gpu,
            "verdict": self.verdict,
            "model_source": self.model_source,
            "findings": [f.to_json() for f in self.findings],
            "effective": dict(self.effective),
            # Fields of `effective` whose value the GPU decides at load time (or the assumed GPU
            # kind does): field -> what it depends on. An extra key; `effective` is unchanged.
            "effective_depends_on": dict(self.depends_on),
            # Always present: the plan, or null when the model's config.json was not readable.
            "memory_plan": None if self.memory_plan is None else self.memory_plan.to_json(),
        }
