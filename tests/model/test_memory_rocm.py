"""ROCm's own terms of the memory plan, read from each release's wheel: aiter's mem-fraction step
(in the argument code, or in the model runner for 0.5.1-0.5.4) and the unquantized MoE experts
that aiter's weight shuffle leaves held twice (SGLANG_USE_AITER; Qwen3-MoE on 0.5.2-0.5.9). The
numbers are those of the real MI355X log of sglang issue 18262 (`memory_logs.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_logs import ROWS

from wizard.api import check_case
from wizard.gpus import lookup
from wizard.memory import MemoryInputs, aiter_moe_copy_step, plan_memory
from wizard.model_info import load_model_facts

MI355X_ROW = next(r for r in ROWS if r.gpu == "MI355X")


@pytest.fixture
def qwen3_moe_5_layers(tmp_path: Path) -> Path:
    folder = tmp_path / "qwen3moe5"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(MI355X_ROW.config), encoding="utf-8")
    return folder


def _plan(folder: Path, version: str, gpu: str = "MI355X", **kw: object) -> object:
    return plan_memory(MemoryInputs(load_model_facts(folder), lookup(gpu), 1, 1,
                                    sglang_version=version, disable_cuda_graph=True,
                                    attention_backend="aiter", **kw))  # type: ignore[arg-type]


def test_the_experts_are_held_twice_with_aiter_on_the_releases_that_keep_them(
        qwen3_moe_5_layers: Path) -> None:
    plain = _plan(qwen3_moe_5_layers, "0.5.7")
    doubled = _plan(qwen3_moe_5_layers, "0.5.7", use_aiter=True)
    # 5 layers x 128 experts x 3 x 2048 x 768 x 2 B = 5.625 GiB more (the log: 12.79 GiB in all)
    assert doubled.weights_gib - plain.weights_gib == pytest.approx(5.625, abs=0.01)
    assert doubled.weights_gib == pytest.approx(12.79, rel=0.01)
    assert any("held twice" in a for a in doubled.assumptions)
    # the same launch on CUDA, or on a release whose shuffle copies in place (0.5.11 on)
    assert _plan(qwen3_moe_5_layers, "0.5.7", "H100", use_aiter=True).weights_gib == \
        pytest.approx(plain.weights_gib)
    assert aiter_moe_copy_step("0.5.11") == {}
    assert "Qwen3MoeForCausalLM" in aiter_moe_copy_step("0.5.7")["archs"]


def test_the_kv_pool_of_the_mi355x_log(qwen3_moe_5_layers: Path) -> None:
    plan = _plan(qwen3_moe_5_layers, "0.5.7", use_aiter=True)
    assert plan.mem_fraction_static == pytest.approx(0.911 * 0.85)  # not rounded again
    assert plan.kv_tokens == pytest.approx(MI355X_ROW.kv_tokens, rel=0.01)


def test_the_model_runner_picks_aiter_and_scales_the_pool_on_old_releases(
        tmp_path: Path) -> None:
    """0.5.1-0.5.4 leave the backend to the model runner (effective value None, as SGLang's
    argument code reports it), which picks aiter on ROCm and multiplies the fraction by 0.85
    above a context length of 8192; the memory plan follows it."""
    folder = tmp_path / "q"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(MI355X_ROW.config), encoding="utf-8")
    argv = ["--model-path", str(folder), "--mem-fraction-static", "0.8"]
    report = check_case({"id": 1, "sglang_version": "0.5.4", "gpu": "MI355X", "gpus": 1,
                         "argv": argv, "env": {}})
    assert report["effective"].get("attention_backend") is None
    assert report["memory_plan"]["mem_fraction_static"] == pytest.approx(0.68)
    cuda = check_case({"id": 2, "sglang_version": "0.5.4", "gpu": "H100", "gpus": 1,
                       "argv": argv, "env": {}})
    assert cuda["memory_plan"]["mem_fraction_static"] == pytest.approx(0.8)


def test_the_aiter_workspace_that_ran_the_mi355x_log_out_of_memory(
        qwen3_moe_5_layers: Path) -> None:
    """sglang#18262: after the KV line the aiter backend allocates its MHA decode workspace,
    4,096 requests x 32 heads x 1,024 partitions of 256 tokens x (128 x 4 + 8) B = 65 GiB, more
    than the 64.7 GiB outside the static pool: HIP out of memory at start."""
    plan = _plan(qwen3_moe_5_layers, "0.5.7", use_aiter=True)
    assert plan.verdict == "will_not_fit"
    assert any("aiter's 65.0" in r for r in plan.reasons)
    shorter = _plan(qwen3_moe_5_layers, "0.5.7", use_aiter=True, context_length=32768)
    assert shorter.verdict != "will_not_fit"  # 8 partitions' worth: 8.1 GiB
    assert _plan(qwen3_moe_5_layers, "0.5.7", "H100").verdict != "will_not_fit"
