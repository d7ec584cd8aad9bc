"""The effective-values table: what you typed next to what SGLang will run, differences marked.

A Line API widget, not a `DataTable`: a keystroke on the Parameters step changes a few cells, and
this table repaints just its own lines (each row's strip is cached by its cells), without new
column measurements, a new virtual size or a scrollbar repaint. That keeps typing as fast as in
a plain input (`bench/bench_tui.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.geometry import Offset, Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from wizard.rules.report import Report

MAX_VALUE_WIDTH = 28

#: Cell colours per theme (rich styles cannot read theme variables): readable on dark and light.
CHANGED = {True: "bold yellow", False: "bold #8a5a00"}
CHANGED_RUNS = {True: "bold yellow reverse", False: "bold #8a5a00 reverse"}
CHOSEN = {True: "cyan", False: "#005f87"}
PROBE = {True: "italic magenta", False: "italic #87005f"}
#: What "SGLang runs" says for a value only the real GPU decides (set when the model loads), and
#: after a value that follows a GPU kind the wizard assumed.
GPU_DECIDES = "(decided on the GPU)"
ASSUMED_GPU = "(assumed GPU)"

TITLES = {"field": "SGLang field", "typed": "you typed", "effective": "SGLang runs"}
STACKED_TITLE = "SGLang field / SGLang runs"
PADDING = 1  # blank cells each side of a column's text
#: The narrowest "you typed" and "SGLang runs" columns (text cut with …) before rows stack.
TYPED_MIN = 12
RUNS_MIN = 18


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


class EffectiveTable(ScrollView, can_focus=True):
    """SGLang field | you typed | SGLang runs; changed rows first and highlighted (`16 -> 2`).

    Values SGLang chooses itself (nothing typed) are shown in cyan; values only the real GPU
    decides (the report's `depends_on`) in italic magenta, "(decided on the GPU)" or the value
    with "(assumed GPU)". When three columns do not
    fit, the rows are stacked: the field, and below it what SGLang runs. The header stays while
    the rows scroll; a row cursor (arrows, page keys, click) shows while the table has focus.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "effective--header",
        "effective--cursor",
        "effective--even-row",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor_to(0)", "First row", show=False),
        Binding("end", "cursor_to(-1)", "Last row", show=False),
    ]
    DEFAULT_CSS = """
    EffectiveTable { background: $surface; color: $foreground; height: 1fr; }
    EffectiveTable:focus { background-tint: $foreground 5%; }
    EffectiveTable > .effective--header { text-style: bold; background: $panel; color: $foreground; }
    EffectiveTable > .effective--even-row { background: $surface-lighten-1 50%; }
    EffectiveTable:dark > .effective--even-row { background: $surface-darken-1 40%; }
    EffectiveTable > .effective--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[tuple[Text, ...]] = []
        self._signatures: list[tuple[Any, ...]] = []
        self._columns: tuple[str, ...] = ()
        self._widths: tuple[int, ...] = ()
        self._stacked = False
        self.cursor_row = 0
        # (row signature, cursor?, even?, widths, stacked, theme, focus) -> the row's strips at
        # full width; with (part, scroll x, view width) -> the line as painted.
        self._strips: dict[tuple[Any, ...], list[Strip]] = {}
        self._lines: dict[tuple[Any, ...], Strip] = {}

    # ---------------------------------------------------------------- data

    @property
    def row_count(self) -> int:
        """How many rows the table shows."""
        return len(self._rows)

    @property
    def columns(self) -> tuple[str, ...]:
        """The column keys shown: `field`, `typed`, `effective` (stacked: `field` only)."""
        return self._columns

    def get_row_at(self, index: int) -> tuple[Text, ...]:
        """The cells of row `index`."""
        return self._rows[index]

    def get_cell_at(self, coordinate: Coordinate) -> Text:
        """The cell at (row, column)."""
        return self._rows[coordinate.row][coordinate.column]

    def column_width(self, key: str) -> int:
        """The painted width of a column (its widest cell or title, plus padding)."""
        return self._widths[self._columns.index(key)]

    def show(self, report: Report | None) -> None:
        """Repaint from a report: only this widget's own lines, from cached row strips.

        The table's width decides the layout: three columns (field | you typed | SGLang runs);
        when they are wider than the table, long values are shortened (…), "you typed" first;
        if that is not enough (80 columns), the rows are stacked: the field and below it what
        SGLang runs (`16 → 2` when SGLang changes what you typed). "SGLang runs" is never cut
        off. Column widths follow the widest cell each time, so they shrink again after a long
        value.
        """
        self._report = report
        dark = self.app.current_theme.dark
        rows = [cells for _, cells in self.rows_for(report, dark=dark)]
        columns: tuple[str, ...] = ("field", "typed", "effective")
        room = self.scrollable_content_region.width
        stacked = False
        if room:  # the value columns may shrink to their minimum; below that, stack
            field, typed, runs = _column_widths(TITLES.values(), rows)
            stacked = field + min(typed, TYPED_MIN) + min(runs, RUNS_MIN) > room
        if stacked:
            changed = report.changed() if report is not None else {}
            names = [cells[0].plain for cells in rows]
            rows = [_stack(n, c, changed, dark) for n, c in zip(names, rows, strict=True)]
            columns = ("field",)
        titles = [STACKED_TITLE if stacked else TITLES[c] for c in columns]
        widths = _column_widths(titles, rows)
        if not stacked and room and sum(widths) > room:  # shorten "you typed", then "runs"
            field, typed, runs = widths
            typed = max(min(typed, TYPED_MIN), room - field - runs)
            widths = (field, typed, room - field - typed)
        signatures = [_signature(cells) for cells in rows]
        shape = (columns, widths, stacked)
        if signatures == self._signatures and shape == (self._columns, self._widths, self._stacked):
            return  # nothing to repaint
        self._rows, self._signatures = rows, signatures
        self._columns, self._widths, self._stacked = shape
        self.cursor_row = min(self.cursor_row, max(0, len(rows) - 1))
        size = Size(sum(widths), 1 + len(rows) * self._row_height)
        if size != self.virtual_size:
            self.virtual_size = size  # a new size: the scrollbars follow
        self.refresh()

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
            if name in report.depends_on:  # only the real GPU answers it (`check --json`
                # `effective_depends_on` says what on)
                cells = (
                    Text(name),
                    Text(show_value(typed), style="dim"),
                    Text(GPU_DECIDES if effective is None
                         else f"{show_value(effective)} {ASSUMED_GPU}", style=PROBE[dark]),
                )
            elif name in changed:
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

    # ---------------------------------------------------------------- painting

    @property
    def _row_height(self) -> int:
        return 2 if self._stacked else 1

    def render_lines(self, crop: Region) -> list[Strip]:
        """Read the widget's style, focus and theme once per paint, not once per line."""
        self._pass = (
            self.rich_style,
            self.app.current_theme.name,
            self.has_focus,
            self.scroll_offset,
            self.size.width,
        )
        return super().render_lines(crop)

    _pass: tuple[Style, str, bool, Offset, int] | None = None

    def render_line(self, y: int) -> Strip:
        """Line `y` of the view: the header on top, then the rows scrolled under it."""
        if self._pass is None:  # called directly (tests), not through render_lines
            self.render_lines(Region(0, 0, self.size.width, 0))
        assert self._pass is not None
        style, theme, focus, (scroll_x, scroll_y), width = self._pass
        if y == 0:
            key: tuple[Any, ...] = ("header", self._columns, self._widths, self._stacked, theme)
            part = 0
        else:
            index, part = divmod(y - 1 + scroll_y, self._row_height)
            if index >= len(self._rows):
                return Strip.blank(width, style)
            cursor = focus and index == self.cursor_row
            key = (self._signatures[index], cursor, index % 2 == 1, self._widths, self._stacked)
            key += (theme, focus)
        line_key = (key, part, scroll_x, width)
        line = self._lines.get(line_key)
        if line is None:
            strips = self._strips.get(key)
            if strips is None:
                strips = self._paint(key, 0 if y == 0 else index, style)
            if len(self._lines) > 4000:
                self._lines.clear()
            line = self._lines[line_key] = strips[part].crop_extend(
                scroll_x, scroll_x + width, style
            )
        return line

    def _paint(self, key: tuple[Any, ...], index: int, style: Style) -> list[Strip]:
        """The full-width strips of the header (`key[0] == "header"`) or of row `index`."""
        if key[0] == "header":
            header = self.get_component_rich_style("effective--header")
            titles = [STACKED_TITLE] if self._stacked else [TITLES[c] for c in self._columns]
            strips = [self._strip([Text(t) for t in titles], header, 0)]
        else:
            cursor, even = key[1], key[2]
            if cursor:
                base = self.get_component_rich_style("effective--cursor")
            elif even:
                base = style + self.get_component_rich_style("effective--even-row")
            else:
                base = style
            cells = self._rows[index]
            strips = [self._strip(cells, base, part) for part in range(self._row_height)]
        if len(self._strips) > 2000:
            self._strips.clear()
        self._strips[key] = strips
        return strips

    def _strip(self, cells: list[Text] | tuple[Text, ...], base: Style, part: int) -> Strip:
        """One painted line of a row: each cell's line `part`, padded to its column."""
        console = self.app.console
        segments: list[Segment] = []
        pad = " " * PADDING
        for cell, width in zip(cells, self._widths, strict=False):
            lines = cell.split("\n", allow_blank=True)
            text = lines[part] if part < len(lines) else Text("")
            text = text.copy()
            text.truncate(width - 2 * PADDING, overflow="ellipsis", pad=True)
            segments.append(Segment(pad, base))
            segments.extend(
                Segment(s.text, base + s.style if s.style else base)
                for s in text.render(console, end="")
            )
            segments.append(Segment(pad, base))
        return Strip(segments, sum(self._widths))

    _report: Report | None = None

    def on_resize(self) -> None:
        """Three columns or stacked rows follow the table's width."""
        self.show(self._report)

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        """ScrollView resets (and repaints) its scrollbars on every layout of the screen, since
        the layout's virtual size is never the table's own; a keystroke elsewhere lays the screen
        out. Only a new size of the widget or of its rows needs it."""
        key = (size, container_size, self.virtual_size)
        if key == self._laid_out:
            return False
        self._laid_out = key
        return super()._size_updated(size, virtual_size, container_size, layout)

    _laid_out: tuple[Size, Size, Size] | None = None

    def notify_style_update(self) -> None:
        """Theme or focus changed: the cached strips carry the old colours."""
        super().notify_style_update()
        self._strips.clear()
        self._lines.clear()

    # ---------------------------------------------------------------- cursor

    def _move_to(self, row: int) -> None:
        if not self._rows:
            return
        self.cursor_row = max(0, min(row, len(self._rows) - 1))
        # The header stays on line 0: the rows scroll in the lines below it.
        height, body = self._row_height, max(1, self.size.height - 1)
        top, scroll_y = self.cursor_row * height, int(self.scroll_y)
        if top < scroll_y:
            scroll_y = top
        elif top + height > scroll_y + body:
            scroll_y = top + height - body
        self.scroll_to(y=scroll_y, animate=False, immediate=True)
        self.refresh()

    def move_cursor(self, *, row: int) -> None:
        """Put the row cursor on `row` (clamped) and scroll it into view."""
        self._move_to(row)

    def action_cursor(self, delta: int) -> None:
        """Cursor one row up or down."""
        self._move_to(self.cursor_row + delta)

    def action_page(self, delta: int) -> None:
        """Cursor one screen of rows up or down."""
        rows = max(1, (self.size.height - 1) // self._row_height)
        self._move_to(self.cursor_row + delta * rows)

    def action_cursor_to(self, row: int) -> None:
        """Cursor to the first (0) or last (-1) row."""
        self._move_to(len(self._rows) - 1 if row < 0 else row)

    def on_click(self, event: events.Click) -> None:
        """A click on a row puts the cursor there."""
        if event.y >= 1:
            self._move_to((event.y - 1 + int(self.scroll_y)) // self._row_height)

    def on_focus(self) -> None:
        """The cursor shows while the table has focus."""
        self.refresh()

    def on_blur(self) -> None:
        """...and hides when it loses it."""
        self.refresh()


def _signature(cells: tuple[Text, ...]) -> tuple[Any, ...]:
    """What a row looks like: text, base style and spans of each cell (Text's `==` ignores the
    base style, so cyan -> plain would not repaint)."""
    return tuple((c.plain, str(c.style), tuple(c.spans)) for c in cells)


def _column_widths(titles: Iterable[str], rows: list[tuple[Text, ...]]) -> tuple[int, ...]:
    """Each column's painted width: its title or widest cell, plus the padding."""
    return tuple(
        max([len(title), *(_width(cells[i]) for cells in rows)]) + 2 * PADDING
        for i, title in enumerate(titles)
    )


def _width(cell: Text) -> int:
    return max((line.cell_len for line in cell.split("\n", allow_blank=True)), default=0)


def _stack(
    name: str, cells: tuple[Text, ...], changed: dict[str, tuple[Any, Any]], dark: bool = True
) -> tuple[Text]:
    """One two-line cell: the field, then what SGLang runs (`typed → runs` when it changes it),
    so narrow terminals always show SGLang's value."""
    cell = Text(name.strip(), style=cells[0].style)
    cell.append("\n  ")
    if name in changed:
        typed, effective = changed[name]
        cell.append(f"{show_value(typed)} → {show_value(effective)}", style=CHANGED_RUNS[dark])
    else:
        cell.append_text(cells[2])
    return (cell,)
