"""The effective-values table: what you typed next to what SGLang will run, differences marked."""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from wizard.rules.report import Report

MAX_VALUE_WIDTH = 28

#: Cell colours per theme (rich styles cannot read theme variables): readable on dark and light.
CHANGED = {True: "bold yellow", False: "bold #8a5a00"}
CHANGED_RUNS = {True: "bold yellow reverse", False: "bold #8a5a00 reverse"}
CHOSEN = {True: "cyan", False: "#005f87"}


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
        self._stacked: bool | None = None
        self._widths: tuple[int, ...] = ()
        # Rendered cells by position and value (see `_render_cell`).
        self._cells: dict[tuple[Any, ...], tuple[Text, Any]] = {}

    def on_mount(self) -> None:
        """Row cursor, stripes (columns come with the first rows)."""
        self.cursor_type = "row"
        self.zebra_stripes = True

    def show(self, report: Report | None, *, stacked: bool = False) -> None:
        """Repaint from a report; cells are updated in place while the table keeps its shape.

        `stacked` (narrow terminals): one column, each row the field and below it what SGLang
        runs (`16 → 2` when SGLang changes what you typed), so SGLang's value always shows.
        When a column's widest cell changes, the table is rebuilt: columns shrink again after a
        long value is gone (DataTable only ever grows them).
        """
        columns = ("field",) if stacked else ("field", "typed", "effective")
        dark = self.app.current_theme.dark
        rows = self.rows_for(report, dark=dark)
        if stacked:
            rows = [(key, _stack(key, cells, report, dark)) for key, cells in rows]
        widths = tuple(
            max((c.cell_len for _, cells in rows for c in cells[i : i + 1]), default=0)
            for i in range(len(columns))
        )
        if len(rows) == self.row_count and stacked == self._stacked and widths == self._widths:
            # Same shape: rows are positions, not fields (a field moving to the changed rows at
            # the top only rewrites the cells that differ; no rebuild, no new layout).
            for index, (_, cells) in enumerate(rows):
                for at, cell in enumerate(cells):
                    shown = self.get_cell_at(Coordinate(index, at))
                    # Text equality ignores the base style: compare it too (cyan -> plain).
                    if shown != cell or shown.style != cell.style:
                        self.update_cell_at(Coordinate(index, at), cell)
            return
        self.clear(columns=True)
        self._cells.clear()
        titles = {"field": "SGLang field", "typed": "you typed", "effective": "SGLang runs"}
        if stacked:
            titles["field"] = "SGLang field / SGLang runs"
        for column in columns:
            self.add_column(titles[column], key=column)
        for _, cells in rows:
            self.add_row(*cells, height=2 if stacked else 1)
        self._stacked = stacked
        self._widths = widths

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> Any:
        """A body cell rendered once per value: DataTable re-renders every cell after any
        `update_cell`; a keystroke changes a few cells, so the others come from here."""
        if row_index < 0 or column_index < 0:  # header and labels: DataTable's own cache
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        value = self.get_cell_at(Coordinate(row_index, column_index))
        key = (
            row_index,
            column_index,
            id(value),
            base_style,
            width,
            cursor,
            hover,
            self._show_hover_cursor,
            self._pseudo_class_state,
            self.show_cursor,
            self.cursor_type,
            self.app.current_theme.name,
        )
        cached = self._cells.get(key)
        if cached is not None and cached[0] is value:
            return cached[1]
        lines = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        if len(self._cells) > 4000:
            self._cells.clear()
        self._cells[key] = (value, lines)
        return lines

    @staticmethod
    def rows_for(
        report: Report | None, *, dark: bool = True
    ) -> list[tuple[str, tuple[Text, ...]]]:
        """(field, cells) rows: changed fields first, then the rest in SGLang's order."""
        if report is None:
            return []
        changed = report.changed()
        names = list(changed) + [n for n in report.effective if n not in changed]
        rows: list[tuple[str, tuple[Text, ...]]] = []
        for name in names:
            effective = report.effective[name]
            typed = report.typed.get(name)
            if name in changed:
                cells = (
                    Text(name, style="bold"),
                    Text(show_value(typed), style=CHANGED[dark]),
                    Text(f"→ {show_value(effective)}", style=CHANGED_RUNS[dark]),
                )
            elif typed is None and effective is not None:
                cells = (
                    Text(name),
                    Text(show_value(None), style="dim"),
                    Text(show_value(effective), style=CHOSEN[dark]),
                )
            else:
                cells = (
                    Text(name),
                    Text(show_value(typed), style="dim"),
                    Text(show_value(effective)),
                )
            rows.append((name, cells))
        return rows


def _stack(
    name: str, cells: tuple[Text, ...], report: Report | None, dark: bool = True
) -> tuple[Text]:
    """One two-line cell: the field, then what SGLang runs (`typed → runs` when it changes it),
    so narrow terminals always show SGLang's value."""
    changed = report.changed() if report is not None else {}
    cell = Text(name.strip(), style=cells[0].style)
    cell.append("\n  ")
    if name in changed:
        typed, effective = changed[name]
        cell.append(f"{show_value(typed)} → {show_value(effective)}", style=CHANGED_RUNS[dark])
    else:
        cell.append_text(cells[2])
    return (cell,)
