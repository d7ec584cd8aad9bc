"""Agreement between SGLang's real argument code and the wizard's check, case by case.

A case agrees when both give the same verdict and, for refusals, the same first error (stage,
exception type and `where`); for accepted cases the same effective algorithm, steps, topk and draft
tokens. Overlap schedule, hybrid cache strategy, page size and attention backend of accepted cases
are scored separately ("secondary") and do not change the main agreement.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

MAIN_FIELDS = (
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
)
SECONDARY_FIELDS: dict[str, tuple[str, ...]] = {
    "overlap": ("disable_overlap_schedule",),
    "hybrid_cache": ("mamba_scheduler_strategy", "mamba_radix_cache_strategy"),
    "page_size": ("page_size",),
    "attention_backend": ("attention_backend",),
}
WIZARD_STAGES = ("argparse", "resolve", "check")
EVERY_EFFECTIVE = "every_effective"  # the secondary column: every field the wizard shows


def effective_differences(sglang_effective: Mapping[str, Any],
                          wizard_effective: Mapping[str, Any]) -> list[str]:
    """Every field of the wizard's effective table whose value differs from SGLang's resolved
    one (fields SGLang's side does not report are not compared)."""
    return sorted(name for name, value in wizard_effective.items()
                  if name in sglang_effective and sglang_effective[name] != value)


def normalise_where(where: Any) -> str | None:
    """`sglang/srt/server_args.py:3521` and `srt/server_args.py:3521` compare equal."""
    if not where:
        return None
    text = str(where).replace("\\", "/")
    for prefix in ("sglang/", "srt/"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text


def wizard_first_error(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The finding the wizard says SGLang raises first (its `sglang` block), or None."""
    findings = report.get("findings") or []
    wanted = report.get("first_sglang_error")
    for finding in findings:
        if wanted and finding.get("rule") == wanted:
            return _error_block(finding)
    for finding in findings:
        block = finding.get("sglang") or {}
        if finding.get("severity") == "error" and block.get("stage") in WIZARD_STAGES:
            return _error_block(finding)
    return None


def _error_block(finding: Mapping[str, Any]) -> dict[str, Any]:
    block = dict(finding.get("sglang") or {})
    block["rule"] = finding.get("rule")
    block["finding_message"] = finding.get("message")
    return block


def wizard_verdict(report: Mapping[str, Any]) -> str:
    """What the wizard predicts SGLang does ("ok" or "error"), ignoring its own advice findings."""
    verdict = report.get("sglang_verdict")
    if verdict in ("ok", "error"):
        return str(verdict)
    return "error" if wizard_first_error(report) is not None else "ok"


def _secondary_value(effective: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if effective.get(name) is not None:
            return effective[name]
    return None


@dataclass
class CaseScore:
    """The comparison of one case."""

    case: dict[str, Any]
    sglang: dict[str, Any]
    wizard: dict[str, Any]
    agree: bool
    reason: str
    secondary: dict[str, bool] = field(default_factory=dict)

    @property
    def signature(self) -> str:
        """A grouping key for similar disagreements."""
        wiz = wizard_first_error(self.wizard) or {}
        return (f"{self.reason} | sglang: {self.sglang.get('exception')} "
                f"{normalise_where(self.sglang.get('where'))} | wizard: {wiz.get('rule')}")


def score_case(case: dict[str, Any], sglang: dict[str, Any], wizard: dict[str, Any]) -> CaseScore:
    """Compare SGLang's runner result with the wizard's report for one case."""
    if sglang.get("runner_error"):
        return CaseScore(case, sglang, wizard, False, "runner error")
    s_verdict = sglang.get("verdict")
    w_verdict = wizard_verdict(wizard)
    if s_verdict != w_verdict:
        return CaseScore(case, sglang, wizard, False, f"verdict: sglang {s_verdict}, wizard {w_verdict}")
    if s_verdict == "error":
        wiz = wizard_first_error(wizard) or {}
        for key, label in (("stage", "stage"), ("exception", "exception")):
            if sglang.get(key) != wiz.get(key):
                return CaseScore(case, sglang, wizard, False, f"first error {label} differs")
        if normalise_where(sglang.get("where")) != normalise_where(wiz.get("where")):
            return CaseScore(case, sglang, wizard, False, "first error where differs")
        return CaseScore(case, sglang, wizard, True, "same error")
    s_eff = sglang.get("effective") or {}
    w_eff = wizard.get("effective") or {}
    differing = [name for name in MAIN_FIELDS if s_eff.get(name) != w_eff.get(name)]
    secondary = {
        label: _secondary_value(s_eff, names) == _secondary_value(w_eff, names)
        for label, names in SECONDARY_FIELDS.items()
    }
    secondary[EVERY_EFFECTIVE] = not effective_differences(s_eff, w_eff)
    if differing:
        return CaseScore(case, sglang, wizard, False,
                         "effective differs: " + ", ".join(differing), secondary)
    return CaseScore(case, sglang, wizard, True, "same effective values", secondary)


@dataclass
class Summary:
    """Agreement counts per (version, GPU kind) and the disagreements."""

    scores: list[CaseScore]

    def groups(self) -> dict[tuple[str, str], list[CaseScore]]:
        """Scores grouped by (SGLang version, GPU kind)."""
        grouped: dict[tuple[str, str], list[CaseScore]] = defaultdict(list)
        for item in self.scores:
            grouped[(str(item.case.get("sglang_version")), str(item.case.get("gpu")))].append(item)
        return dict(sorted(grouped.items()))

    def agreement(self, version: str | None = None) -> float:
        """The fraction of agreeing cases (of one version, or of all)."""
        chosen = [s for s in self.scores
                  if version is None or s.case.get("sglang_version") == version]
        return sum(s.agree for s in chosen) / len(chosen) if chosen else 0.0

    def disagreements(self) -> list[CaseScore]:
        """Every disagreeing case."""
        return [s for s in self.scores if not s.agree]

    def table(self) -> str:
        """A Markdown table: agreement per version and GPU kind, secondary fields separately."""
        labels = [*SECONDARY_FIELDS, EVERY_EFFECTIVE]
        lines = [
            "| SGLang | GPU | cases | agree | agreement | " + " | ".join(labels) + " |",
            "|---|---|---:|---:|---:|" + "---:|" * len(labels),
        ]
        rows = list(self.groups().items())
        versions = sorted({v for (v, _g) in self.groups()})
        for version in versions:
            rows.append(((version, "all"), [s for s in self.scores
                                            if s.case.get("sglang_version") == version]))
        for (version, gpu), items in rows:
            agree = sum(s.agree for s in items)
            cells = []
            for label in labels:
                compared = [s.secondary[label] for s in items if label in s.secondary]
                cells.append(f"{sum(compared)}/{len(compared)}" if compared else "-")
            lines.append(f"| {version} | {gpu} | {len(items)} | {agree} | "
                         f"{100.0 * agree / len(items):.1f}% | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def field_differences(self) -> Counter[str]:
        """How many accepted cases show each effective field differently from SGLang."""
        counts: Counter[str] = Counter()
        for item in self.scores:
            if item.sglang.get("verdict") == "ok" and EVERY_EFFECTIVE in item.secondary:
                counts.update(effective_differences(item.sglang.get("effective") or {},
                                                    item.wizard.get("effective") or {}))
        return counts

    def grouped_disagreements(self) -> list[tuple[str, list[CaseScore]]]:
        """Disagreements grouped by signature, largest group first."""
        groups: dict[str, list[CaseScore]] = defaultdict(list)
        for item in self.disagreements():
            groups[item.signature].append(item)
        return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def summarise(cases: Iterable[dict[str, Any]], sglang: Mapping[str, dict[str, Any]],
              wizard: Mapping[str, dict[str, Any]]) -> Summary:
    """Score every case that has both an SGLang result and a wizard report."""
    return Summary([score_case(case, sglang[str(case["id"])], wizard[str(case["id"])])
                    for case in cases])


def _side(result: Mapping[str, Any], wizard: bool) -> str:
    if wizard:
        err = wizard_first_error(result)
        eff = result.get("effective") or {}
        head = f"verdict {wizard_verdict(result)}"
        if err and wizard_verdict(result) == "error":
            head += (f"; rule {err.get('rule')}: {err.get('stage')} {err.get('exception')} "
                     f"at {err.get('where')}; {str(err.get('finding_message') or '')[:300]}")
    else:
        eff = result.get("effective") or {}
        head = f"verdict {result.get('verdict')}"
        if result.get("verdict") == "error":
            head += (f"; {result.get('stage')} {result.get('exception')} at {result.get('where')}"
                     f"{' (bare)' if result.get('bare') else ''}: "
                     f"{str(result.get('message') or '')[:300]}")
    shown = {k: eff.get(k) for k in (*MAIN_FIELDS, "disable_overlap_schedule", "page_size",
                                     "attention_backend") if k in eff}
    accepted = wizard_verdict(result) == "ok" if wizard else result.get("verdict") == "ok"
    if shown and accepted:
        head += f"; effective {shown}"
    return head


def markdown_report(summary: Summary, title: str = "Conformance report") -> str:
    """The full report: the table, then every disagreement grouped, with both sides."""
    parts = [f"# {title}", "", summary.table(), ""]
    kinds = Counter(s.reason for s in summary.disagreements())
    parts.append(f"Disagreements: {len(summary.disagreements())} "
                 f"({', '.join(f'{k}: {n}' for k, n in kinds.most_common()) or 'none'})")
    parts.append("")
    fields = summary.field_differences()
    parts.append("Effective fields shown differently from SGLang (accepted cases): "
                 + (", ".join(f"{k}: {n}" for k, n in fields.most_common()) or "none"))
    parts.append("")
    for signature, items in summary.grouped_disagreements():
        parts.append(f"## {signature} ({len(items)} cases)")
        parts.append("")
        for item in items:
            case = item.case
            env = " ".join(f"{k}={v}" for k, v in (case.get("env") or {}).items())
            parts.append(f"### {case['id']} ({case.get('gpu')} x{case.get('gpus')}, "
                         f"{case.get('origin', '')})")
            parts.append("")
            parts.append(f"    {env + ' ' if env else ''}{' '.join(case.get('argv', []))}")
            parts.append("")
            parts.append(f"- SGLang {case.get('sglang_version')}: {_side(item.sglang, False)}")
            parts.append(f"- wizard: {_side(item.wizard, True)}")
            parts.append("")
    shown = [(item, effective_differences(item.sglang.get("effective") or {},
                                          item.wizard.get("effective") or {}))
             for item in summary.scores
             if item.sglang.get("verdict") == "ok" and EVERY_EFFECTIVE in item.secondary]
    shown = [(item, names) for item, names in shown if names]
    if shown:
        parts += [f"## Effective values shown differently ({len(shown)} accepted cases)", ""]
    for item, names in shown:
        case = item.case
        env = " ".join(f"{k}={v}" for k, v in (case.get("env") or {}).items())
        parts += [f"### {case['id']} ({case.get('gpu')} x{case.get('gpus')}, "
                  f"{case.get('origin', '')})", "",
                  f"    {env + ' ' if env else ''}{' '.join(case.get('argv', []))}", ""]
        parts += [f"- `{name}`: SGLang {case.get('sglang_version')} "
                  f"{item.sglang['effective'][name]!r}, wizard {item.wizard['effective'][name]!r}"
                  for name in names]
        parts.append("")
    return "\n".join(parts) + "\n"
