"""The wizard's steps, below the app and the step bar that both list them."""

from __future__ import annotations

#: Wizard steps in order: mode name -> title shown in the step bar.
STEPS: dict[str, str] = {
    "start": "Start",
    "model": "Model",
    "algorithm": "Algorithm",
    "parameters": "Parameters",
    "review": "Review",
}
