"""TUI test isolation: profiles and XDG dirs in tmp, cursor blink frozen, tiny model folders."""

from __future__ import annotations

import fcntl
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from wizard.profile import builtin_profiles_dir

#: A stable place for snapshot runs: paths shown on screen must not change between runs.
SNAPSHOT_ROOT = Path("/tmp/sglang-wizard-tui-snapshots")


def _layer_types(layers: int, interval: int) -> list[str]:
    return [
        "full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(layers)
    ]


def qwen36_config() -> dict[str, object]:
    """Incident 1's model shape: hybrid 48 Gated DeltaNet + 16 full attention, one MTP layer."""
    return {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "model_type": "qwen3_5",
        "torch_dtype": "bfloat16",
        "text_config": {
            "model_type": "qwen3_5_text",
            "hidden_size": 5120,
            "intermediate_size": 17408,
            "num_hidden_layers": 64,
            "num_attention_heads": 24,
            "num_key_value_heads": 4,
            "head_dim": 256,
            "full_attention_interval": 4,
            "layer_types": _layer_types(64, 4),
            "linear_conv_kernel_dim": 4,
            "linear_key_head_dim": 128,
            "linear_value_head_dim": 128,
            "linear_num_key_heads": 16,
            "linear_num_value_heads": 48,
            "mtp_num_hidden_layers": 1,
            "vocab_size": 248320,
            "max_position_embeddings": 262144,
            "dtype": "bfloat16",
        },
    }


def deepseek_v3_config() -> dict[str, object]:
    """Kimi-K2.5 style target (DeepseekV3 architecture, MLA, MoE) for incident 3."""
    return {
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "torch_dtype": "bfloat16",
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "num_hidden_layers": 61,
        "first_k_dense_replace": 1,
        "num_attention_heads": 64,
        "num_key_value_heads": 64,
        "n_routed_experts": 384,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "num_nextn_predict_layers": 0,
        "vocab_size": 163840,
        "max_position_embeddings": 262144,
    }


def eagle3_draft_config() -> dict[str, object]:
    """A one-layer EAGLE-3 draft for a 7168-wide target."""
    return {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "torch_dtype": "bfloat16",
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "num_hidden_layers": 1,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "vocab_size": 163840,
        "draft_vocab_size": 32000,
        "target_hidden_size": 7168,
        "max_position_embeddings": 262144,
    }


def write_model(root: Path, name: str, config: dict[str, object]) -> Path:
    """A `config.json`-only model folder."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Profiles, XDG dirs and the working directory all inside tmp_path."""
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.setenv("SGLANG_WIZARD_PROFILES_DIR", str(tmp_path / "profiles"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(autouse=True)
def frozen_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cursor blink: screenshots do not depend on timing."""
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    if hasattr(TextArea, "_toggle_cursor"):
        monkeypatch.setattr(TextArea, "_toggle_cursor", lambda self: None)


@pytest.fixture
def profiles_dir(isolated_dirs: Path) -> Path:
    """The (empty) isolated profiles dir."""
    path = isolated_dirs / "profiles"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def ready_dir(isolated_dirs: Path) -> Path:
    """An isolated copy of the project's ready profiles (what the start screen lists)."""
    target = isolated_dirs / "ready"
    target.mkdir(exist_ok=True)
    for path in sorted(builtin_profiles_dir().glob("*.toml")):
        shutil.copy(path, target / path.name)
    return target


@pytest.fixture
def models(isolated_dirs: Path) -> dict[str, Path]:
    """Tiny model folders: the incident-1 Qwen3.6, a DeepseekV3 target and an EAGLE-3 draft."""
    root = isolated_dirs / "models"
    return {
        "qwen36": write_model(root, "Qwen3.6-27B", qwen36_config()),
        "kimi": write_model(root, "Kimi-K2.5", deepseek_v3_config()),
        "eagle3": write_model(root, "Kimi-K2.5-eagle3", eagle3_draft_config()),
    }


@pytest.fixture
def snapshot_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fixed, emptied directory for snapshot tests (paths on screen stay the same every run).

    Held under an exclusive lock: two test runs on one machine (two clones) take turns instead
    of emptying each other's model folders mid-snapshot."""
    with open(f"{SNAPSHOT_ROOT}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(SNAPSHOT_ROOT, ignore_errors=True)
        (SNAPSHOT_ROOT / "profiles").mkdir(parents=True)
        monkeypatch.setenv("SGLANG_WIZARD_PROFILES_DIR", str(SNAPSHOT_ROOT / "profiles"))
        monkeypatch.chdir(SNAPSHOT_ROOT)
        yield SNAPSHOT_ROOT
        shutil.rmtree(SNAPSHOT_ROOT, ignore_errors=True)
