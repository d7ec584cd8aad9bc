"""Parse what `amd-smi` and `rocm-smi` print about AMD GPUs into `nvidia_smi.Gpu` / `GpuReport`.

The remote preflight runs, on a host without `nvidia-smi`:

* `amd-smi static --asic --vram` (name, gfx arch, VRAM size) and `amd-smi metric --mem-usage`
  (used VRAM), the tool of ROCm 6.x and later;
* else `rocm-smi --showproductname --showmeminfo vram` (older ROCm).

Both are read in their text form (`GPU: 0` blocks of `KEY: value` lines for amd-smi,
`GPU[0] : Key: value` lines for rocm-smi), which has stayed stable across ROCm releases while the
JSON layouts changed. amd-smi prints MiB as "MB"; rocm-smi prints bytes. Real outputs are in
tests/fixtures/amd-smi and tests/fixtures/rocm-smi.
"""

from __future__ import annotations

import re

from wizard.nvidia_smi import Gpu, GpuReport

_AMD_ERRORS: tuple[tuple[str, str], ...] = (
    ("command not found", "amd-smi is not installed on the host (not in PATH)."),
    ("modprobe amdgpu", "the amdgpu driver is not loaded (amd-smi found no GPU): load it with "
                        "`sudo modprobe amdgpu` or install the ROCm driver."),
    ("AMDSMI_STATUS_DRIVER_NOT_LOADED", "the amdgpu driver is not loaded (amd-smi)."),
    ("No AMD GPUs", "rocm-smi found no AMD GPU on the host."),
    ("Driver not initialized", "rocm-smi: the amdgpu driver is not initialized (amdgpu not loaded)."),
)

_UNIT_MIB = {"b": 1 / (1024 * 1024), "kb": 1 / 1024, "mb": 1, "mib": 1, "gb": 1024, "gib": 1024}


class AmdSmiError(ValueError):
    """amd-smi / rocm-smi output that reports an error or cannot be read."""


def _error_in(text: str) -> str | None:
    for marker, message in _AMD_ERRORS:
        if marker in text:
            return message
    return None


def _mib(value: str, default_unit: str = "mb") -> int | None:
    """`196592 MB` -> 196592; `N/A` -> None. amd-smi's MB are MiB."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", value)
    if not match:
        return None
    unit = (match.group(2) or default_unit).lower()
    if unit not in _UNIT_MIB:
        return None
    return round(float(match.group(1)) * _UNIT_MIB[unit])


def _amd_blocks(text: str) -> dict[int, dict[str, str]]:
    """`GPU: N` blocks of amd-smi's text output as {index: {KEY (with section): value}}."""
    blocks: dict[int, dict[str, str]] = {}
    current: dict[str, str] | None = None
    section = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        head = re.fullmatch(r"GPU:\s*([0-9]+)", line.strip())
        if head and not raw.startswith((" ", "\t")):
            current = blocks.setdefault(int(head.group(1)), {})
            section = ""
            continue
        if current is None or ":" not in line:
            continue
        key, _, value = line.strip().partition(":")
        key, value = key.strip().upper(), value.strip()
        if not value:
            section = key
            continue
        current[f"{section}.{key}" if section else key] = value
        current.setdefault(key, value)
    return blocks


def _first(block: dict[str, str], *keys: str) -> str | None:
    for key in keys:
        value = block.get(key)
        if value and value.upper() != "N/A":
            return value
    return None


def parse_amd_smi(static_text: str, metric_text: str = "") -> list[Gpu]:
    """GPUs from `amd-smi static --asic --vram` (+ used VRAM from `amd-smi metric --mem-usage`).

    Raises AmdSmiError with a readable reason for amd-smi's error outputs or missing fields."""
    error = _error_in(static_text)
    if error:
        raise AmdSmiError(error)
    static = _amd_blocks(static_text)
    if not static:
        raise AmdSmiError(f"amd-smi printed no GPU block: {static_text.strip()[:200]!r}")
    usage = _amd_blocks(metric_text) if metric_text and not _error_in(metric_text) else {}
    gpus = []
    for index in sorted(static):
        block = static[index]
        name = _first(block, "ASIC.MARKET_NAME", "MARKET_NAME", "BOARD.PRODUCT_NAME", "PRODUCT_NAME")
        arch = _first(block, "ASIC.TARGET_GRAPHICS_VERSION", "TARGET_GRAPHICS_VERSION")
        size = _first(block, "VRAM.SIZE", "VRAM.VRAM_SIZE", "VRAM_SIZE", "VRAM.VRAM_SIZE_MB")
        total = _mib(size) if size else None
        used_block = usage.get(index, {})
        if total is None:
            total = _mib(_first(used_block, "MEM_USAGE.TOTAL_VRAM", "TOTAL_VRAM") or "")
        used = _mib(_first(used_block, "MEM_USAGE.USED_VRAM", "USED_VRAM") or "") or 0
        if not name or not total:
            raise AmdSmiError(
                f"amd-smi GPU {index}: no MARKET_NAME or VRAM size in its output (fields: "
                f"{', '.join(sorted(block))[:200]})"
            )
        uuid = _first(block, "ASIC.ASIC_SERIAL", "ASIC_SERIAL", "BUS.BDF", "BDF") or f"amd-{index}"
        gpus.append(Gpu(index, name, used, total, uuid, None, arch.lower() if arch else None))
    return gpus


def parse_rocm_smi(text: str) -> list[Gpu]:
    """GPUs from `rocm-smi --showproductname --showmeminfo vram` (memory in bytes)."""
    error = _error_in(text)
    if error:
        raise AmdSmiError(error)
    fields: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        match = re.match(r"\s*GPU\[([0-9]+)\]\s*:\s*([^:]+?)\s*:\s*(.*)$", line)
        if match:
            fields.setdefault(int(match.group(1)), {})[match.group(2).strip()] = match.group(3).strip()
    if not fields:
        raise AmdSmiError(f"rocm-smi printed no GPU line: {text.strip()[:200]!r}")
    gpus = []
    for index in sorted(fields):
        f = fields[index]
        name = f.get("Card Series") or f.get("Card SKU") or f.get("Card Model")
        total = _mib(f.get("VRAM Total Memory (B)", ""), "b")
        used = _mib(f.get("VRAM Total Used Memory (B)", ""), "b") or 0
        if not name or not total:
            raise AmdSmiError(
                f"rocm-smi GPU[{index}]: no Card Series or VRAM Total Memory in its output"
            )
        arch = f.get("GFX Version")
        gpus.append(Gpu(index, name, used, total, f.get("Unique ID") or f.get("GUID") or f"amd-{index}",
                        None, arch.lower() if arch and arch.lower().startswith("gfx") else None))
    return gpus


def build_report(raw: dict[str, object]) -> GpuReport:
    """The `GpuReport` of the agent's `amd_smi` ({"static", "metric"}) or `rocm_smi` ({"info"})
    raw outputs (each {"rc", "out"}); an error becomes `GpuReport.error`."""
    def out(key: str) -> str:
        value = raw.get(key)
        return str(value.get("out", "")) if isinstance(value, dict) else ""

    try:
        if "static" in raw:
            return GpuReport(gpus=tuple(parse_amd_smi(out("static"), out("metric"))), tool="amd-smi")
        return GpuReport(gpus=tuple(parse_rocm_smi(out("info"))), tool="rocm-smi")
    except AmdSmiError as exc:
        return GpuReport(error=str(exc), tool="amd-smi" if "static" in raw else "rocm-smi")
