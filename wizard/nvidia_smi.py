"""Parse `nvidia-smi` CSV queries: GPUs, memory, and processes already holding GPU memory.

The remote preflight runs exactly these two queries (no units, no header):

* `nvidia-smi --query-gpu=index,name,memory.used,memory.total,uuid,compute_cap --format=csv,noheader,nounits`
  (drivers before 510 do not know `compute_cap`: the agent then asks without it)
* `nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits`

Memory values are MiB. AMD hosts are read with `amd-smi` / `rocm-smi` (wizard/amd_smi.py) into
the same `Gpu` / `GpuReport`. Errors ("No devices were found", driver/library mismatch, missing driver)
are recognised and returned as a readable message instead of GPUs.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wizard.gpus import GpuKind

GPU_QUERY = (
    "nvidia-smi --query-gpu=index,name,memory.used,memory.total,uuid,compute_cap "
    "--format=csv,noheader,nounits"
)
APPS_QUERY = (
    "nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits"
)

_ERROR_MARKERS: tuple[tuple[str, str], ...] = (
    ("No devices were found", "nvidia-smi found no GPU on the host (No devices were found)."),
    (
        "Driver/library version mismatch",
        "NVIDIA driver/library version mismatch: the kernel module and the user-space driver differ "
        "(usually after a driver update without reboot). Reboot the host or reload the nvidia module.",
    ),
    (
        "couldn't communicate with the NVIDIA driver",
        "nvidia-smi cannot talk to the NVIDIA driver: the driver is not loaded or not installed.",
    ),
    (
        "Failed to initialize NVML",
        "nvidia-smi failed to initialise NVML (the NVIDIA management library).",
    ),
    ("command not found", "no GPU tool on the host: nvidia-smi, amd-smi and rocm-smi are not in PATH."),
    ("No such file or directory", "no GPU tool on the host: nvidia-smi, amd-smi and rocm-smi are not in PATH."),
)


class NvidiaSmiError(ValueError):
    """nvidia-smi output that reports an error or cannot be read."""


@dataclass(frozen=True)
class Gpu:
    """One GPU as nvidia-smi (or amd-smi / rocm-smi) reports it (memory in MiB)."""

    index: int
    name: str
    memory_used_mib: int
    memory_total_mib: int
    uuid: str
    capability: str | None = None  # "8.6" (nvidia-smi compute_cap)
    gfx_arch: str | None = None  # "gfx942" (amd-smi / rocm-smi)

    @property
    def memory_free_mib(self) -> int:
        """Total minus used."""
        return self.memory_total_mib - self.memory_used_mib


@dataclass(frozen=True)
class GpuProcess:
    """A process holding GPU memory (a left-over of a crashed run shows up here)."""

    pid: int
    gpu_uuid: str
    used_memory_mib: int | None
    gpu_index: int | None = None
    command: str = ""


@dataclass(frozen=True)
class GpuReport:
    """Both queries parsed together: processes carry the index of their GPU."""

    gpus: tuple[Gpu, ...] = ()
    processes: tuple[GpuProcess, ...] = ()
    error: str | None = None
    tool: str = "nvidia-smi"  # or "amd-smi" / "rocm-smi"

    @property
    def count(self) -> int:
        """Number of GPUs."""
        return len(self.gpus)

    def free_gib(self, first: int) -> float | None:
        """Free memory (GiB) of the fullest of the first `first` GPUs by index (those a launch
        with base GPU 0 uses), for the memory plan; None without GPUs."""
        chosen = sorted(self.gpus, key=lambda g: g.index)[: max(first, 1)]
        if not chosen:
            return None
        return min(g.memory_free_mib for g in chosen) / 1024

    def kind(self) -> GpuKind | None:
        """The `wizard.gpus.GpuKind` of the first GPU: its catalog kind, else a custom kind from
        the capability (or gfx arch) and memory the tool printed; None without GPUs."""
        if self.error or not self.gpus:
            return None
        from wizard.gpus import from_host

        first = sorted(self.gpus, key=lambda g: g.index)[0]
        return from_host(first.name, first.memory_total_mib, first.capability, first.gfx_arch)

    def busy_gpus(self) -> list[int]:
        """Indexes of GPUs with processes holding memory."""
        return sorted({p.gpu_index for p in self.processes if p.gpu_index is not None})


def _error_in(text: str) -> str | None:
    for marker, message in _ERROR_MARKERS:
        if marker in text:
            return message
    return None


def _int_or_none(value: str) -> int | None:
    value = value.strip()
    if not value or value.startswith("[") or value.upper() in {"N/A", "NOT SUPPORTED"}:
        return None
    return int(float(value))


def _rows(text: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in row]
        for row in csv.reader(io.StringIO(text))
        if row and any(c.strip() for c in row)
    ]


def parse_gpus(text: str) -> list[Gpu]:
    """Parse the `--query-gpu=index,name,memory.used,memory.total,uuid[,compute_cap]` output.

    Raises NvidiaSmiError with a readable reason for nvidia-smi's error outputs or bad rows.
    """
    error = _error_in(text)
    if error:
        raise NvidiaSmiError(error)
    gpus: list[Gpu] = []
    for number, row in enumerate(_rows(text), start=1):
        if len(row) not in (5, 6):
            raise NvidiaSmiError(
                f"nvidia-smi GPU query, line {number}: expected 5 or 6 fields, got {len(row)}: {row!r}"
            )
        try:
            used = _int_or_none(row[2])
            total = _int_or_none(row[3])
            cap = row[5] if len(row) == 6 and row[5][:1].isdigit() else None
            gpus.append(Gpu(int(row[0]), row[1], used or 0, total or 0, row[4], cap))
        except ValueError as exc:
            raise NvidiaSmiError(f"nvidia-smi GPU query, line {number}: {exc}: {row!r}") from exc
    return gpus


def parse_compute_apps(text: str) -> list[GpuProcess]:
    """Parse the `--query-compute-apps=pid,gpu_uuid,used_memory` output (empty: no process)."""
    error = _error_in(text)
    if error:
        raise NvidiaSmiError(error)
    processes: list[GpuProcess] = []
    for number, row in enumerate(_rows(text), start=1):
        if "No running processes found" in ",".join(row):
            continue
        if len(row) != 3:
            raise NvidiaSmiError(
                f"nvidia-smi process query, line {number}: expected 3 fields, got {len(row)}: {row!r}"
            )
        try:
            processes.append(GpuProcess(int(row[0]), row[1], _int_or_none(row[2])))
        except ValueError as exc:
            raise NvidiaSmiError(
                f"nvidia-smi process query, line {number}: {exc}: {row!r}"
            ) from exc
    return processes


def build_report(
    gpu_text: str, apps_text: str, commands: dict[int, str] | None = None
) -> GpuReport:
    """Parse both outputs; an error becomes `GpuReport.error` instead of an exception."""
    try:
        gpus = parse_gpus(gpu_text)
        processes = parse_compute_apps(apps_text)
    except NvidiaSmiError as exc:
        return GpuReport(error=str(exc))
    index_of = {gpu.uuid: gpu.index for gpu in gpus}
    commands = commands or {}
    joined = tuple(
        GpuProcess(
            p.pid, p.gpu_uuid, p.used_memory_mib, index_of.get(p.gpu_uuid), commands.get(p.pid, "")
        )
        for p in processes
    )
    return GpuReport(gpus=tuple(gpus), processes=joined)
