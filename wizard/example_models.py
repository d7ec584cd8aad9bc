"""Model configs shipped for the ready profiles, so the examples are checked with model facts
on a machine that does not hold the models (a fresh clone, a laptop, CI).

The ready profiles in `profiles/` keep the user's paths (`/root/models/Qwen3.6-27B`); when such a
path is not readable here, its facts come from `wizard/data/example_models/<name>/config.json`
(written by `scripts/example_models.py`), and `ModelFacts.source` / the report's `model_source`
say so. Only the exact paths of the index are covered: another folder with the same name is
never assumed to be the same checkpoint.
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from pathlib import Path

from wizard.model_facts import ModelFacts
from wizard.model_files import ModelReadError
from wizard.model_info import load_model_facts

#: Where the shipped configs live (one folder per model, plus index.json: path -> folder).
DATA_DIR = Path(__file__).parent / "data" / "example_models"


@lru_cache(maxsize=1)
def example_index() -> dict[str, str]:
    """The model paths of the ready profiles -> the shipped folder holding their config."""
    try:
        data = json.loads((DATA_DIR / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def example_folder(path: str) -> Path | None:
    """The shipped folder for a ready profile's model path, or None."""
    name = example_index().get(path.rstrip("/")) if path else None
    return DATA_DIR / name if name else None


@lru_cache(maxsize=16)
def example_facts(path: str) -> ModelFacts | None:
    """Facts of a ready profile's model from its shipped config (None for any other path).

    Call it only once `path` itself could not be read: a real folder always wins."""
    folder = example_folder(path)
    if folder is None:
        return None
    try:
        facts = load_model_facts(folder)
    except (ModelReadError, OSError, ValueError):
        return None
    where = f"wizard/data/example_models/{folder.name}"
    return dataclasses.replace(
        facts,
        source=f"{path} is not on this machine: the example config shipped with sglang-wizard "
        f"({where})",
        origin="example",
    )
