"""A stand-in Hub on 127.0.0.1 (HF_ENDPOINT) with the incident checkpoints, and an isolated HF env.

Every test gets its own HF_HOME / cache / wizard cache under tmp_path, no token, online mode and
the endpoint of a fresh stand-in server: no test touches the real Hub or the user's cache.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))
sys.path.insert(0, str(ROOT / "model"))

import families  # noqa: E402
from stand_in_hub import Repo, StandInHub  # noqa: E402

from wizard import api  # noqa: E402
from wizard.model_info import INDEX_FILE, facts_from_files  # noqa: E402

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

QWEN36_COMMIT = "a" * 40


def _files(fam: families.Family) -> dict[str, str]:
    out = {"config.json": json.dumps(fam.config)}
    out.update({name: json.dumps(data) for name, data in fam.extra_files.items()})
    return out


def _main_estimate(fam: families.Family) -> tuple[int, int]:
    """(estimated MTP parameters, estimated total) of a family, to build stored element counts."""
    facts = facts_from_files(_files(fam), "x")
    assert facts.params_estimate is not None
    return facts.params_estimate.mtp, facts.params_estimate.total


def qwen36_repo() -> Repo:
    """Qwen3.6-27B (bf16): the checkpoint stores the published 27B plus its MTP layer."""
    fam = families.qwen36_27b()
    mtp, _ = _main_estimate(fam)
    stored = int(fam.params_total) + mtp
    files = _files(fam)
    files[INDEX_FILE] = json.dumps(
        {"metadata": {"total_size": 2 * stored}, "weight_map": {"lm_head.weight": "model-1.safetensors"}}
    )
    files["generation_config.json"] = json.dumps({"temperature": 0.6, "top_p": 0.95})
    return Repo(files, commit=QWEN36_COMMIT, safetensors={"BF16": stored - 10_000, "F32": 10_000},
                downloads=100)


def qwen397_nvfp4_repo() -> Repo:
    """Qwen3.5-397B-A17B-NVFP4: packed FP4 experts (2 per U8), F8 block scales, BF16 the rest.

    The split between quantized and unquantized parameters follows the exclude list of its
    hf_quant_config.json (attention, linear attention, shared experts, router, vision, lm_head and
    the MTP layer stay BF16); the estimate's parts give the sizes of each.
    """
    fam = families.qwen35_397b_nvfp4()
    facts = facts_from_files(_files(fam), "x")
    est = facts.params_estimate
    assert est is not None
    scale = fam.params_total / est.total  # the published total, split like the estimate
    quantized = int(est.routed_experts * scale)
    plain = int(fam.params_total) - quantized + est.mtp
    files = _files(fam)
    return Repo(files, safetensors={"U8": quantized // 2, "F8_E4M3": quantized // 16,
                                    "BF16": plain, "F32": 2_000}, downloads=50)


def gated_repo() -> Repo:
    fam = families.llama31_8b()
    return Repo(_files(fam), gated=True, safetensors={"BF16": int(fam.params_total)})


def eagle3_for_qwen3_repo(hidden: int = 4096, vocab: int = 151936) -> Repo:
    config = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": 12288,
        "num_hidden_layers": 1,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": vocab,
        "draft_vocab_size": 32000,
        "target_hidden_size": hidden,
        "torch_dtype": "bfloat16",
    }
    return Repo({"config.json": json.dumps(config)})


def qwen3_8b_repo() -> Repo:
    config = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "torch_dtype": "bfloat16",
    }
    return Repo({"config.json": json.dumps(config)}, downloads=1000)


def eagle_for_qwen3_repo() -> Repo:
    config = json.loads(eagle3_for_qwen3_repo().files["config.json"])
    config["architectures"] = ["LlamaForCausalLMEagle"]
    del config["draft_vocab_size"]
    return Repo({"config.json": json.dumps(config)})


def standard_repos() -> dict[str, Repo]:
    """The repositories every hub test can read."""
    return {
        "Qwen/Qwen3.6-27B": qwen36_repo(),
        "nvidia/Qwen3.5-397B-A17B-NVFP4": qwen397_nvfp4_repo(),
        "meta-llama/Llama-3.1-8B-Instruct": gated_repo(),
        "Qwen/Qwen3-8B": qwen3_8b_repo(),
        "Tengyunw/qwen3_8b_eagle3": eagle3_for_qwen3_repo(),
        "AngelSlim/Qwen3-8B_eagle3": eagle3_for_qwen3_repo(),
        "someone/Qwen3-8B-EAGLE": eagle_for_qwen3_repo(),
        "other/Qwen3-8B-eagle3-wide": eagle3_for_qwen3_repo(hidden=5120),
    }


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
