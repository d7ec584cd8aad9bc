"""Fixtures of the bad-input tests: model folders, profiles and a clean working directory."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # fuzz_harness
sys.path.insert(0, str(HERE.parent / "model"))  # families: real configs, from public facts

READY_PROFILES = HERE.parent.parent / "profiles"


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Folders holding the config.json (and extra JSON files) of real model families."""
    import families

    root = tmp_path_factory.mktemp("fuzz-models")
    builders = {
        "llama": families.llama31_8b,
        "qwen3": families.qwen3_32b,
        "qwen3-next": families.qwen3_next_80b,
        "dsv3": families.deepseek_v3,
        "gpt-oss": families.gpt_oss_120b,
        "qwen36": families.qwen36_27b,
        "qwen35-nvfp4": families.qwen35_397b_nvfp4,
        "kimi-draft": families.kimi_k25_eagle3_draft,
    }
    return {name: str(build().write(root / name)) for name, build in builders.items()}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary current directory, profiles directory and exports directory."""
    monkeypatch.setenv("SGLANG_WIZARD_PROFILES_DIR", str(tmp_path / "saved-profiles"))
    monkeypatch.setenv("SGLANG_WIZARD_EXPORTS_DIR", str(tmp_path / "exports"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # Hub-like names read the (empty) cache only
    for ready in READY_PROFILES.glob("*.toml"):
        shutil.copy(ready, tmp_path / ready.name)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
