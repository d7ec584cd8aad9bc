"""A stand-in Hub on 127.0.0.1 (HF_ENDPOINT) with the incident checkpoints, and an isolated HF env.

Every test gets its own HF_HOME / cache / wizard cache under tmp_path, no token, online mode and
the endpoint of a fresh stand-in server: no test touches the real Hub or the user's cache.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))
sys.path.insert(0, str(ROOT / "model"))

from hub_repos import standard_repos  # noqa: E402
from stand_in_hub import StandInHub  # noqa: E402

from wizard import api  # noqa: E402

HF_VARS = (
    "HF_ENDPOINT",
    "HF_HOME",
    "HF_HUB_CACHE",
    "HUGGINGFACE_HUB_CACHE",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HF_TOKEN_PATH",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "XDG_CACHE_HOME",
)

@pytest.fixture
def hf_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HF_HOME and the wizard cache under tmp_path; no token, online; returns HF_HOME."""
    for name in HF_VARS:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(tmp_path / "wizard-cache"))
    api._HUB_FACTS.clear()
    api._HUB_MISSES.clear()
    return home


@pytest.fixture
def hub(hf_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInHub]:
    """The stand-in Hub with `standard_repos()`, set as HF_ENDPOINT."""
    with StandInHub(standard_repos()) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server
