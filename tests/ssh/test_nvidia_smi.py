"""nvidia-smi CSV parsing on real-looking outputs (fixtures in tests/fixtures/nvidia-smi)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.nvidia_smi import NvidiaSmiError, build_report, parse_compute_apps, parse_gpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi"


def load(name: str) -> tuple[str, str]:
    return (FIXTURES / f"{name}.gpus.csv").read_text(), (FIXTURES / f"{name}.apps.csv").read_text()


@pytest.mark.parametrize(
    ("name", "count", "gpu_name", "total"),
    [
        ("a6000x2-idle", 2, "NVIDIA RTX A6000", 49140),
        ("h100x8-idle", 8, "NVIDIA H100 80GB HBM3", 81559),
        ("rtxpro6000x8-leftover", 8, "NVIDIA RTX PRO 6000 Blackwell Server Edition", 97887),
    ],
)
def test_gpus(name: str, count: int, gpu_name: str, total: int) -> None:
    report = build_report(*load(name))
    assert report.error is None and report.count == count
    assert {g.name for g in report.gpus} == {gpu_name}
    assert all(g.memory_total_mib == total for g in report.gpus)
    assert [g.index for g in report.gpus] == list(range(count))


def test_leftover_processes_are_named_with_pid_and_gpu() -> None:
    report = build_report(*load("rtxpro6000x8-leftover"), commands={190403: "python -m sglang.launch_server ..."})
    assert len(report.processes) == 8 and report.busy_gpus() == list(range(8))
    holder = next(p for p in report.processes if p.pid == 190403)
    assert holder.gpu_index == 3 and holder.used_memory_mib == 93702
    assert holder.command.startswith("python -m sglang")
    assert report.gpus[3].memory_free_mib == 97887 - 93718


def test_idle_host_has_no_processes() -> None:
    assert build_report(*load("a6000x2-idle")).processes == ()


@pytest.mark.parametrize(
    ("name", "fragment"),
    [("no-devices", "No devices were found"), ("driver-mismatch", "version mismatch"), ("no-driver", "driver")],
)
def test_error_outputs(name: str, fragment: str) -> None:
    text = (FIXTURES / f"{name}.txt").read_text()
    with pytest.raises(NvidiaSmiError, match=fragment):
        parse_gpus(text)
    report = build_report(text, text)
    assert report.error is not None and fragment in report.error and report.count == 0


def test_malformed_rows_name_the_line() -> None:
    with pytest.raises(NvidiaSmiError, match="line 2: expected 5 or 6 fields"):
        parse_gpus("0, NVIDIA H100, 1, 81559, GPU-a\n1, NVIDIA H100, 1\n")
    with pytest.raises(NvidiaSmiError, match="line 1"):
        parse_compute_apps("not-a-pid, GPU-a, 10\n")


def test_not_available_values() -> None:
    apps = parse_compute_apps("4242, GPU-a, [N/A]\n")
    assert apps[0].used_memory_mib is None


def test_free_memory_for_the_memory_plan() -> None:
    """The plan starts from the fullest of the GPUs the launch uses: left-over workers shrink it."""
    leftover = build_report(*load("a6000x2-leftover"))
    assert leftover.free_gib(2) == pytest.approx((49140 - 46180) / 1024)
    assert leftover.free_gib(1) == pytest.approx((49140 - 46180) / 1024)
    idle = build_report(*load("a6000x2-idle"))
    assert idle.free_gib(2) is not None and idle.free_gib(2) > 40
    assert build_report("", "").free_gib(2) is None


def test_leftover_memory_makes_the_plan_refuse(tmp_path: Path) -> None:
    """With 2.9 GiB free per A6000 (a crashed run's workers) the same launch will not fit."""
    import json

    from wizard.api import check_typed

    folder = tmp_path / "llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
        "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
    }))
    typed = {"model_path": str(folder), "tp_size": 2}
    idle = check_typed(typed, sglang_version="0.5.11", gpu="RTX A6000", gpus=2)
    busy = check_typed(
        typed, sglang_version="0.5.11", gpu="RTX A6000", gpus=2,
        gpu_free_gib=build_report(*load("a6000x2-leftover")).free_gib(2),
    )
    assert idle.memory_plan.verdict == "fits"
    assert busy.memory_plan.free_memory_source == "nvidia-smi"
    assert busy.memory_plan.verdict == "will_not_fit"
    assert "MEMORY" in " ".join(f.rule for f in busy.findings).upper()
