"""The memory plan on every GPU kind of the catalog, AMD included, and on custom kinds.

The plan starts from the card's real memory (as nvidia-smi / amd-smi report it) minus what the
process holds before loading: CUDA context + NCCL on NVIDIA; on ROCm the amdgpu driver's idle
VRAM, the HIP context and RCCL (wizard/memory.py cites each number)."""

from __future__ import annotations

from pathlib import Path

import families as fam
import pytest

from wizard.gpus import CATALOG, lookup
from wizard.memory import (
    RCCL_INIT_GIB,
    ROCM_CONTEXT_GIB,
    ROCM_DRIVER_GIB,
    XGMI_PER_PEER_GIB,
    MemoryInputs,
    context_reserve_gib,
    plan_memory,
)
from wizard.model_facts import ModelFacts
from wizard.model_info import load_model_facts


@pytest.fixture(scope="module")
def llama8b(tmp_path_factory: pytest.TempPathFactory) -> ModelFacts:
    family = fam.llama31_8b()
    return load_model_facts(family.write(tmp_path_factory.mktemp("m") / family.name))


@pytest.fixture(scope="module")
def kimi(tmp_path_factory: pytest.TempPathFactory) -> ModelFacts:
    family = fam.kimi_k25_int4()
    return load_model_facts(family.write(tmp_path_factory.mktemp("k") / family.name))


@pytest.mark.parametrize("kind", [g.name for g in CATALOG])
def test_plan_on_every_kind_starts_from_its_memory(kind: str, llama8b: ModelFacts) -> None:
    gpu = lookup(kind)
    plan = plan_memory(MemoryInputs(llama8b, gpu, 1, 1))
    assert plan.gpu_total_gib == pytest.approx(gpu.memory_mib / 1024)
    held = ROCM_DRIVER_GIB if gpu.is_hip else 0.0
    assert plan.free_before_load_gib == pytest.approx(plan.gpu_total_gib - held - context_reserve_gib(gpu, 1))
    assert plan.verdict in ("fits", "tight")  # 16 GB of bf16 weights fit every card of the catalog
    assert plan.kv_tokens > 0
    words = " ".join(plan.assumptions)
    assert ("HIP context/RCCL" in words) == gpu.is_hip


def test_rocm_reserve_grows_with_the_tp_group() -> None:
    mi300x = lookup("MI300X")
    assert context_reserve_gib(mi300x, 1) == pytest.approx(ROCM_CONTEXT_GIB)
    assert context_reserve_gib(mi300x, 8) == pytest.approx(
        ROCM_CONTEXT_GIB + RCCL_INIT_GIB + 7 * XGMI_PER_PEER_GIB)
    # the same tp on an NVLink H100 holds less: no separate RCCL start-up cost is known there
    assert context_reserve_gib(lookup("H100"), 8) < context_reserve_gib(mi300x, 8)


def test_read_free_memory_on_an_amd_host_already_holds_the_driver(llama8b: ModelFacts) -> None:
    mi355x = lookup("MI355X")
    free = (294896 - 283) / 1024  # amd-smi: used VRAM includes what the driver holds
    plan = plan_memory(MemoryInputs(llama8b, mi355x, 8, 8, free_gib=free))
    assert plan.free_before_load_gib == pytest.approx(free - context_reserve_gib(mi355x, 8))
    assert any("read with amd-smi/rocm-smi" in a for a in plan.assumptions)


def test_kimi_on_eight_mi355x_fits_and_not_on_eight_l40s(kimi: ModelFacts) -> None:
    on_mi355x = plan_memory(MemoryInputs(kimi, lookup("MI355X"), 8, 8))
    on_l40s = plan_memory(MemoryInputs(kimi, lookup("L40S"), 8, 8))
    assert on_mi355x.verdict == "fits" and on_l40s.verdict == "will_not_fit"
    assert on_mi355x.weights_gib == pytest.approx(on_l40s.weights_gib, rel=0.01)  # same split


@pytest.mark.parametrize(
    ("spec", "total_gib"),
    [("custom:sm=8.6,mem=24564MiB", 24564 / 1024), ("custom:arch=gfx942,mem=128GB", 128.0)],
)
def test_custom_kinds_plan_with_their_memory(spec: str, total_gib: float, llama8b: ModelFacts) -> None:
    plan = plan_memory(MemoryInputs(llama8b, lookup(spec), 1, 1))
    assert plan.gpu_total_gib == pytest.approx(total_gib)
    assert plan.gpu == lookup(spec).name


def test_inspect_plans_on_amd_and_custom_kinds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wizard.cli import main

    family = fam.llama31_8b()
    folder = family.write(tmp_path / family.name)
    assert main(["inspect", str(folder), "--gpu", "MI300X", "--gpus", "8", "--tp", "8"]) == 0
    out = capsys.readouterr().out
    assert "8 x MI300X" in out and "192.0" in out
    assert main(["inspect", str(folder), "--gpu", "custom:sm=8.6,mem=24GB", "--tp", "1"]) == 0
    assert "custom sm86 24 GiB" in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["MI300X", "MI355X", "custom:arch=gfx942,mem=192GB", "H100"])
def test_rendered_plan_names_the_platforms_reserve_and_adds_up(kind: str, llama8b: ModelFacts) -> None:
    """`inspect`'s plan line named "CUDA context/NCCL" on AMD kinds and left out the amdgpu
    driver's share, so card - reserve did not give the free memory it printed."""
    from wizard.inspect_cli import render_plan

    gpu = lookup(kind)
    plan = plan_memory(MemoryInputs(llama8b, gpu, 1, 1))
    line = next(x for x in render_plan(plan).splitlines() if "free before loading" in x)
    assert ("HIP context/RCCL" in line) == gpu.is_hip
    assert ("CUDA context/NCCL" in line) == (not gpu.is_hip)
    assert ("amdgpu driver" in line) == gpu.is_hip
    held = plan.driver_reserve_gib + plan.context_reserve_gib
    assert plan.free_before_load_gib == pytest.approx(plan.gpu_total_gib - held)
