"""The tool's own input errors, below every module that raises them."""

from __future__ import annotations


class ToolInputError(Exception):
    """An error in what the user gave the tool (file, flag, value): exit code 2."""
