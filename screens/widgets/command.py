"""Read-only syntax-highlighted views of the launch command and the `--config` YAML."""

from __future__ import annotations

from rich.syntax import Syntax
from textual.widgets import Static


class CodeView(Static):
    """A highlighted code block (bash or yaml) that keeps its plain text for copying."""

    DEFAULT_CSS = """
    CodeView { height: auto; padding: 0 1; background: $boost; }
    """

    def __init__(self, lexer: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lexer = lexer
        self.text = ""

    def show(self, text: str) -> None:
        """Replace the code."""
        self.text = text
        theme = "monokai" if self.app.current_theme.dark else "default"
        self.update(
            Syntax(text, self.lexer, word_wrap=True, theme=theme, background_color="default")
        )

    def show_message(self, message: str) -> None:
        """Show a message instead of code (e.g. the renderer is unavailable)."""
        self.text = ""
        self.update(message)
