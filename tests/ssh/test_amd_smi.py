"""amd-smi / rocm-smi text outputs (tests/fixtures/amd-smi, rocm-smi) -> GPUs and their kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.amd_smi import AmdSmiError, build_report, parse_amd_smi, parse_rocm_smi
from wizard.gpus import lookup
from wizard.nvidia_smi import build_report as nvidia_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def amd(name: str) -> tuple[str, str]:
    return ((FIXTURES / "amd-smi" / f"{name}.static.txt").read_text(),
            (FIXTURES / "amd-smi" / f"{name}.metric.txt").read_text())


@pytest.mark.parametrize(
    ("fixture", "name", "arch", "total", "kind"),
    [
        ("mi300x8-idle", "AMD Instinct MI300X", "gfx942", 196592, "MI300X"),
        ("mi355x8-busy", "AMD Instinct MI355X", "gfx950", 294896, "MI355X"),
    ],
)
def test_amd_smi_static_and_metric(fixture: str, name: str, arch: str, total: int, kind: str) -> None:
    gpus = parse_amd_smi(*amd(fixture))
    assert [g.index for g in gpus] == list(range(8))
    assert {(g.name, g.gfx_arch, g.memory_total_mib) for g in gpus} == {(name, arch, total)}
    report = build_report({"static": {"out": amd(fixture)[0]}, "metric": {"out": amd(fixture)[1]}})
    assert report.tool == "amd-smi" and report.error is None
    assert report.kind() == lookup(kind)


def test_amd_smi_used_memory_shows_left_overs() -> None:
    gpus = parse_amd_smi(*amd("mi355x8-busy"))
    assert [g.memory_used_mib for g in gpus[:3]] == [261580, 261580, 283]
    report = build_report({"static": {"out": amd("mi355x8-busy")[0]},
                           "metric": {"out": amd("mi355x8-busy")[1]}})
    assert report.free_gib(2) == pytest.approx((294896 - 261580) / 1024)


def test_amd_smi_without_metric_still_has_the_total() -> None:
    gpus = parse_amd_smi(amd("mi300x8-idle")[0], "")
    assert gpus[0].memory_total_mib == 196592 and gpus[0].memory_used_mib == 0


def test_amd_smi_error_output() -> None:
    text = (FIXTURES / "amd-smi" / "no-driver.txt").read_text()
    with pytest.raises(AmdSmiError, match="amdgpu driver is not loaded"):
        parse_amd_smi(text)
    report = build_report({"static": {"out": text}, "metric": {"out": text}})
    assert report.error is not None and report.count == 0 and report.kind() is None


def test_rocm_smi_product_and_memory() -> None:
    gpus = parse_rocm_smi((FIXTURES / "rocm-smi" / "mi300x8-idle.txt").read_text())
    assert len(gpus) == 8
    first = gpus[0]
    # 206141652992 bytes = 196592 MiB; 297771008 bytes held by the driver = 284 MiB
    assert (first.name, first.gfx_arch, first.memory_total_mib, first.memory_used_mib) == (
        "AMD Instinct MI300X OAM", "gfx942", 196592, 284)
    report = build_report({"info": {"out": (FIXTURES / "rocm-smi" / "mi300x8-idle.txt").read_text()}})
    assert report.tool == "rocm-smi" and report.kind() == lookup("MI300X")


def test_rocm_smi_garbage_is_an_error() -> None:
    with pytest.raises(AmdSmiError, match="no GPU line"):
        parse_rocm_smi("rocm-smi: something else\n")


def test_nvidia_smi_compute_cap_makes_an_unknown_card_a_custom_kind() -> None:
    gpus = (FIXTURES / "nvidia-smi" / "rtxa5000x4-idle.gpus.csv").read_text()
    report = nvidia_report(gpus, "")
    assert report.gpus[0].capability == "8.6"
    kind = report.kind()
    assert kind is not None and kind.spec == "custom:sm=8.6,mem=24564MiB,name=NVIDIA RTX A5000"
    # without compute_cap (drivers before 510) an unknown card's kind is not guessed
    five = "\n".join(",".join(row.split(",")[:5]) for row in gpus.splitlines())
    assert nvidia_report(five, "").kind() is None
