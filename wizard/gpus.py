"""The GPU catalog: what the rules and the memory plan need to know about a card.

SGLang's argument code branches on the compute capability (SM90 = Hopper, SM100 = Blackwell
datacenter, SM120 = Blackwell workstation) and sizes defaults from the reported GPU memory, so a
profile names its GPU kind and the rules read these facts instead of probing a device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MIB = 1024 * 1024


@dataclass(frozen=True)
class GpuKind:
    """One GPU model as SGLang sees it (name, compute capability, memory as `nvidia-smi` reports)."""

    name: str
    aliases: tuple[str, ...]
    compute_capability: tuple[int, int]
    memory_mib: int
    generation: str
    nvlink: bool
    smi_names: tuple[str, ...] = ()

    @property
    def sm(self) -> int:
        """Compute capability as SGLang's `sm` number (e.g. 90 for 9.0)."""
        major, minor = self.compute_capability
        return major * 10 + minor

    @property
    def memory_gib(self) -> float:
        """Total memory in GiB."""
        return self.memory_mib / 1024

    @property
    def is_cuda(self) -> bool:
        """SGLang's `is_cuda()` on a host with this GPU (the platform, not `--device`): every
        kind of the catalog is an NVIDIA GPU."""
        return True

    @property
    def is_hopper(self) -> bool:
        """SGLang's `is_sm90_supported()`: compute capability 9.x."""
        return self.compute_capability[0] == 9

    @property
    def is_sm100(self) -> bool:
        """SGLang's `is_sm100_supported()`: compute capability 10.x (B200/B300/GB200)."""
        return self.compute_capability[0] == 10

    @property
    def is_sm120(self) -> bool:
        """SGLang's `is_sm120_supported()`: compute capability 12.x (RTX PRO 6000 Blackwell, RTX 50xx)."""
        return self.compute_capability[0] == 12


CATALOG: tuple[GpuKind, ...] = (
    GpuKind(
        "RTX A6000", ("A6000", "RTXA6000"), (8, 6), 49140, "Ampere", False, ("NVIDIA RTX A6000",)
    ),
    GpuKind(
        "A100-40GB",
        ("A100-40", "A100 40GB", "A100-SXM4-40GB", "A100-PCIE-40GB"),
        (8, 0),
        40960,
        "Ampere",
        True,
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"),
    ),
    GpuKind(
        "A100-80GB",
        ("A100", "A100-80", "A100 80GB", "A100-SXM4-80GB", "A100-PCIE-80GB"),
        (8, 0),
        81920,
        "Ampere",
        True,
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"),
    ),
    GpuKind("L40S", ("L40S-48GB",), (8, 9), 46068, "Ada", False, ("NVIDIA L40S",)),
    GpuKind("L4", ("L4-24GB",), (8, 9), 23034, "Ada", False, ("NVIDIA L4",)),
    GpuKind(
        "RTX 4090",
        ("4090", "RTX4090", "GeForce RTX 4090"),
        (8, 9),
        24564,
        "Ada",
        False,
        ("NVIDIA GeForce RTX 4090",),
    ),
    GpuKind(
        "H100",
        ("H100-80GB", "H100 80GB HBM3", "H100-SXM", "H100 SXM"),
        (9, 0),
        81559,
        "Hopper",
        True,
        ("NVIDIA H100 80GB HBM3",),
    ),
    GpuKind("H100-PCIe", ("H100 PCIe",), (9, 0), 81559, "Hopper", False, ("NVIDIA H100 PCIe",)),
    GpuKind("H200", ("H200-141GB", "H200 SXM"), (9, 0), 143771, "Hopper", True, ("NVIDIA H200",)),
    GpuKind("H20", ("H20-96GB",), (9, 0), 97871, "Hopper", True, ("NVIDIA H20",)),
    GpuKind("B200", ("B200-180GB",), (10, 0), 183359, "Blackwell", True, ("NVIDIA B200",)),
    GpuKind("B300", ("B300-288GB",), (10, 3), 275040, "Blackwell", True, ("NVIDIA B300 SXM6 AC",)),
    GpuKind(
        "RTX PRO 6000 Blackwell",
        (
            "RTX PRO 6000",
            "RTXPRO6000",
            "PRO6000",
            "RTX 6000 Pro",
            "RTX-PRO-6000",
            "RTX PRO 6000 Blackwell Server Edition",
            "RTX PRO 6000 Blackwell Workstation Edition",
        ),
        (12, 0),
        97887,
        "Blackwell",
        False,
        (
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        ),
    ),
    GpuKind(
        "RTX 5090",
        ("5090", "RTX5090", "GeForce RTX 5090"),
        (12, 0),
        32607,
        "Blackwell",
        False,
        ("NVIDIA GeForce RTX 5090",),
    ),
)


class UnknownGpuError(ValueError):
    """A GPU name that is not in the catalog; the message lists the closest known names."""


def _key(name: str) -> str:
    name = name.strip().lower()
    name = re.sub(r"^nvidia\s+", "", name)
    return re.sub(r"[\s_\-]+", "", name)


_INDEX: dict[str, GpuKind] = {}
for _gpu in CATALOG:
    for _n in (_gpu.name, *_gpu.aliases, *_gpu.smi_names):
        _INDEX.setdefault(_key(_n), _gpu)


@lru_cache(maxsize=128)
def lookup(name: str) -> GpuKind:
    """Find a GPU kind by name, alias or `nvidia-smi` name, case-insensitively (`a6000`, `H100`, `b200`)."""
    gpu = _INDEX.get(_key(name))
    if gpu is not None:
        return gpu
    names = [g.name for g in CATALOG]
    import difflib  # only for a typo's suggestion

    close = difflib.get_close_matches(
        name, names + [a for g in CATALOG for a in g.aliases], n=3, cutoff=0.4
    )
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownGpuError(f"unknown GPU kind {name!r}{hint} Known kinds: {', '.join(names)}")


def find(name: str | None) -> GpuKind | None:
    """Like `lookup` but returns None for an empty or unknown name."""
    if not name:
        return None
    try:
        return lookup(name)
    except UnknownGpuError:
        return None


def names() -> list[str]:
    """Catalog names in display order."""
    return [g.name for g in CATALOG]
