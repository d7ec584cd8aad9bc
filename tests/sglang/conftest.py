"""Fixtures for the SGLang CLI-surface tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sglang_hand_tables import table_0_5_11, table_0_5_23

from wizard.sglang import flags


@pytest.fixture
def hand_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point the flag loader at the small hand-written tables (reference §1) for one test."""
    (tmp_path / "flags-0.5.11.json").write_text(json.dumps(table_0_5_11()), encoding="utf-8")
    (tmp_path / "flags-0.5.23.json").write_text(json.dumps(table_0_5_23()), encoding="utf-8")
    monkeypatch.setattr(flags, "DATA_DIR", tmp_path)
    flags.load_table.cache_clear()
    yield tmp_path
    flags.load_table.cache_clear()
