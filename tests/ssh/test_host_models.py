"""Models on the GPU host over a real sshd: its HF cache and model folders, Hub ids resolved there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard.model_files import MODEL_FILES
from wizard.model_info import facts_from_files
from wizard.remote.session import RemoteHost

pytestmark = pytest.mark.ssh

COMMIT = "c" * 40


def _hf_cache(root: Path) -> Path:
    """An HF cache as `hf download` leaves it: refs/main -> snapshots/<commit>/config.json."""
    repo = root / "hub" / "models--Qwen--Qwen3-8B"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    config = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096,
              "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
              "vocab_size": 151936}
    (snapshot / "config.json").write_text(json.dumps(config))
    (root / "hub" / "models--org--incomplete" / "snapshots").mkdir(parents=True)
    return snapshot


async def test_host_lists_its_hf_cache_and_folders(host: RemoteHost, tmp_path: Path) -> None:
    snapshot = _hf_cache(tmp_path / "hf")
    folders = tmp_path / "models"
    (folders / "Llama-8B").mkdir(parents=True)
    (folders / "Llama-8B" / "config.json").write_text("{}")
    (folders / "not-a-model").mkdir()
    found = await host.list_models([str(folders)], {"HF_HOME": str(tmp_path / "hf")})
    assert found == [
        {"kind": "cache", "name": "Qwen/Qwen3-8B", "path": str(snapshot)},
        {"kind": "cache", "name": "org/incomplete", "path": None},
        {"kind": "folder", "name": str(folders / "Llama-8B"), "path": str(folders / "Llama-8B")},
    ]


async def test_hub_id_is_read_from_the_hosts_cache(host: RemoteHost, tmp_path: Path) -> None:
    _hf_cache(tmp_path / "hf")
    env = {"HF_HUB_CACHE": str(tmp_path / "hf" / "hub")}
    files = await host.model_files("Qwen/Qwen3-8B", MODEL_FILES, env)
    facts = facts_from_files(files, f"{host.host_key}:Qwen/Qwen3-8B", "host")
    assert facts.architecture == "Qwen3ForCausalLM" and facts.origin == "host"
    assert await host.model_files("Qwen/Not-Cached", MODEL_FILES, env) == {}
