"""The memory bar: one GPU's memory split as the core's memory plan computes it."""

from __future__ import annotations

from typing import Any

from textual.content import Content

VERDICT_STYLE = {
    "fits": ("✓ fits", "bold $success"),
    "tight": ("! tight", "bold $warning"),
    "will_not_fit": ("✗ will not fit", "bold $error"),
}


def memory_bar(plan: Any, width: int = 40) -> Content:
    """A bar of weights / draft / KV and state / outside the static pool, with the verdict."""
    total = max(plan.gpu_total_gib, 0.001)
    parts = [
        ("weights", plan.weights_gib, "$primary"),
        ("draft", plan.draft_weights_gib, "$accent"),
        ("KV + state", max(plan.kv_budget_gib, 0.0), "$success"),
        ("outside pool", max(total - plan.static_pool_gib, 0.0), "$secondary"),
    ]
    cells: list[tuple[str, str]] = []
    used = 0
    for _label, gib, color in parts:
        n = round(width * gib / total)
        n = min(n, width - used)
        if n > 0:
            cells.append(("█" * n, color))
            used += n
    if used < width:
        cells.append(("░" * (width - used), "$text-muted"))
    tag, style = VERDICT_STYLE.get(plan.verdict, (str(plan.verdict), ""))
    legend: list[tuple[str, str] | str] = []
    for label, gib, color in parts:
        if gib > 0:
            legend += [("■ ", color), f"{label} {gib:.1f}  "]
    out: list[tuple[str, str] | str] = [
        (tag, style),
        f"  per GPU {plan.gpu_total_gib:.1f} GiB, static pool {plan.mem_fraction_static:.3f}",
        "\n",
        *cells,
        "\n",
        *legend,
        f"\nKV tokens {plan.kv_tokens:,}, headroom {plan.headroom_gib:+.1f} GiB",
    ]
    for reason in plan.reasons:
        out += ["\n", ("· ", "$text-muted"), str(reason)]
    for suggestion in plan.suggestions:
        out += ["\n", ("→ ", "$accent"), str(suggestion)]
    return Content.assemble(*out)
