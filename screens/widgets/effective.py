"""The effective-values table: what you typed next to what SGLang will run, differences marked."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from wizard.rules.report import Report

MAX_VALUE_WIDTH = 28


def show_value(value: Any) -> str:
    """A value as a user reads it; `None` means SGLang picks it; long paths keep their end."""
    if value is None:
        return "(SGLang chooses)"
    if isinstance(value, bool):
        return "on" if value else "off"
    text = str(value)
    if len(text) > MAX_VALUE_WIDTH:
        return "…" + text[-(MAX_VALUE_WIDTH - 1) :]
    return text


class EffectiveTable(DataTable[Text]):
    """SGLang field | you typed | SGLang runs; changed rows first and highlighted (`16 -> 2`).

    Values SGLang chooses itself (nothing typed) are shown in cyan.
    """

    DEFAULT_CSS = """
    EffectiveTable { height: auto; max-height: 100%; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown_keys: list[str] | None = None

    def on_mount(self) -> None:
        """Columns."""
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_column("SGLang field", key="field")
        self.add_column("you typed", key="typed")
        self.add_column("SGLang runs", key="effective")

    def show(self, report: Report | None) -> None:
        """Repaint from a report; cells are updated in place when the rows stay the same."""
        rows = self.rows_for(report)
        keys = [key for key, _ in rows]
        if keys == self._shown_keys:
            for key, cells in rows:
                for column, cell in zip(("field", "typed", "effective"), cells, strict=True):
                    shown = self.get_cell(key, column)
                    # Text equality ignores the base style: compare it too (cyan -> plain).
                    if shown != cell or shown.style != cell.style:
                        self.update_cell(key, column, cell)
            return
        self.clear()
        for key, cells in rows:
            self.add_row(*cells, key=key)
        self._shown_keys = keys

    @staticmethod
    def rows_for(report: Report | None) -> list[tuple[str, tuple[Text, Text, Text]]]:
        """(field, cells) rows: changed fields first, then the rest in SGLang's order."""
        if report is None:
            return []
        changed = report.changed()
        names = list(changed) + [n for n in report.effective if n not in changed]
        rows: list[tuple[str, tuple[Text, Text, Text]]] = []
        for name in names:
            effective = report.effective[name]
            typed = report.typed.get(name)
            if name in changed:
                cells = (
                    Text(name, style="bold"),
                    Text(show_value(typed), style="bold yellow"),
                    Text(f"→ {show_value(effective)}", style="bold yellow reverse"),
                )
            elif typed is None and effective is not None:
                cells = (
                    Text(name),
                    Text(show_value(None), style="dim"),
                    Text(show_value(effective), style="cyan"),
                )
            else:
                cells = (
                    Text(name),
                    Text(show_value(typed), style="dim"),
                    Text(show_value(effective)),
                )
            rows.append((name, cells))
        return rows
