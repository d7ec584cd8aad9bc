"""The GPU catalog: what the rules and the memory plan need to know about a card.

SGLang's argument code branches on the platform (CUDA or ROCm/HIP) and the compute capability
(SM90 = Hopper, SM100 = Blackwell datacenter, SM120 = Blackwell workstation) and sizes defaults
from the reported GPU memory, so a profile names its GPU kind and the rules read these facts
instead of probing a device.

The known kinds are data: `wizard/data/gpus.json` (one entry per kind, each number with its
source). Any other GPU is a *custom kind* written as one string, the same on the command line,
in a profile and in `check --jsonl`:

* `custom:sm=8.9,mem=48GB` - an NVIDIA GPU by compute capability and memory,
* `custom:arch=gfx942,mem=192GB` - an AMD GPU by gfx architecture and memory,

optionally with `name=...`, `nvlink=yes` (`xgmi=yes`) and `sms=N` (`cus=N`). Memory takes
MiB (as `nvidia-smi` prints it), GiB, or GB (read as GiB, as cards are sold).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from wizard.limits import MAX_GPUS

MIB = 1024 * 1024
DATA_FILE = Path(__file__).resolve().parent / "data" / "gpus.json"
CUSTOM_PREFIX = "custom:"
CUSTOM_EXAMPLES = "custom:sm=8.9,mem=48GB (NVIDIA) or custom:arch=gfx942,mem=192GB (AMD)"
MAX_GPU_COUNT = MAX_GPUS  # GPUs of one node or launch typed by hand (wizard.limits)
MAX_MEMORY_MIB = 16 * 1024 * 1024  # 16 TiB per GPU: anything above is a typo


@dataclass(frozen=True)
class GpuKind:
    """One GPU model as SGLang sees it (name, platform, compute capability, memory as the vendor's
    smi tool reports it)."""

    name: str
    aliases: tuple[str, ...]
    compute_capability: tuple[int, int]
    memory_mib: int
    generation: str
    nvlink: bool
    smi_names: tuple[str, ...] = ()
    vendor: str = "nvidia"  # "nvidia" (CUDA) or "amd" (ROCm/HIP)
    family: str = ""
    gfx_arch: str | None = None
    multiprocessors: int | None = None  # SMs (NVIDIA) or CUs (AMD)
    memory_verified: bool = True
    custom: str | None = None  # the `custom:...` spec of a custom kind

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
    def spec(self) -> str:
        """What a profile stores for this kind: the catalog name, or the custom spec."""
        return self.custom or self.name

    @property
    def arch_label(self) -> str:
        """`sm89` / `gfx942`: the architecture as users name it."""
        return self.gfx_arch or f"sm{self.sm}"

    @property
    def is_cuda(self) -> bool:
        """SGLang's `is_cuda()` on a host with this GPU (the platform, not `--device`)."""
        return self.vendor == "nvidia"

    @property
    def is_hip(self) -> bool:
        """SGLang's `is_hip()`: an AMD GPU under ROCm."""
        return self.vendor == "amd"

    @property
    def is_hopper(self) -> bool:
        """SGLang's `is_sm90_supported()`: CUDA compute capability 9.x (ROCm reports 9.4 on
        gfx942, which is not Hopper)."""
        return self.is_cuda and self.compute_capability[0] == 9

    @property
    def is_sm100(self) -> bool:
        """SGLang's `is_sm100_supported()`: compute capability 10.x (B200/B300/GB200/GB300)."""
        return self.is_cuda and self.compute_capability[0] == 10

    @property
    def is_sm120(self) -> bool:
        """SGLang's `is_sm120_supported()`: compute capability 12.x (RTX PRO 6000 Blackwell, RTX 50xx)."""
        return self.is_cuda and self.compute_capability[0] == 12

    def describe(self) -> str:
        """`H100 (sm90, 79.6 GiB)`: name, architecture and memory."""
        return f"{self.name} ({self.arch_label}, {self.memory_gib:.1f} GiB)"


def _capability(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def _from_entry(entry: dict[str, Any]) -> GpuKind:
    return GpuKind(
        name=entry["name"],
        aliases=tuple(entry.get("aliases", ())),
        compute_capability=_capability(entry["compute_capability"]),
        memory_mib=int(entry["memory_mib"]),
        generation=entry["generation"],
        nvlink=bool(entry.get("nvlink", entry.get("xgmi", False))),
        smi_names=tuple(entry.get("smi_names", ())),
        vendor=entry.get("vendor", "nvidia"),
        family=entry.get("family", ""),
        gfx_arch=entry.get("gfx_arch"),
        multiprocessors=entry.get("sm_count", entry.get("cu_count")),
        memory_verified=bool(entry.get("memory_verified", True)),
    )


def _load() -> tuple[GpuKind, ...]:
    with open(DATA_FILE, encoding="utf-8") as handle:
        return tuple(_from_entry(e) for e in json.load(handle)["kinds"])


CATALOG: tuple[GpuKind, ...] = _load()
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(g.family for g in CATALOG))


class UnknownGpuError(ValueError):
    """A GPU name that is not in the catalog (or a malformed custom kind); the message says what
    is known and how to give any other GPU."""


def _key(name: str) -> str:
    name = name.strip().lower()
    name = re.sub(r"^(nvidia|amd)\s+", "", name)
    return re.sub(r"[\s_\-]+", "", name)


_INDEX: dict[str, GpuKind] = {}
for _gpu in CATALOG:
    for _n in (_gpu.name, *_gpu.aliases, *_gpu.smi_names):
        _INDEX.setdefault(_key(_n), _gpu)


# ------------------------------------------------------------------ custom kinds

_KEYS = {
    "sm": "sm", "cc": "sm", "capability": "sm", "compute_capability": "sm",
    "arch": "arch", "gfx": "arch", "gfx_arch": "arch",
    "mem": "mem", "memory": "mem",
    "name": "name",
    "nvlink": "link", "xgmi": "link",
    "sms": "mp", "cus": "mp", "sm_count": "mp", "cu_count": "mp",
}
_UNITS = {"mib": 1, "mb": 1, "gib": 1024, "gb": 1024, "tib": 1024 * 1024, "tb": 1024 * 1024}
_AMD_GENERATIONS = {"gfx942": "CDNA3", "gfx950": "CDNA4", "gfx90a": "CDNA2", "gfx908": "CDNA"}


def parse_memory_mib(text: str) -> int:
    """`48GB`, `48GiB`, `49140MiB`, `49140 MiB` -> MiB (GB is read as GiB, as cards are sold)."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not match:
        raise ValueError(f"memory {text!r} is not a size: give e.g. 48GB, 48GiB or 49140MiB")
    number, unit = float(match.group(1)), match.group(2).lower()
    if not unit:
        raise ValueError(
            f"memory {text!r} needs a unit: 48GB, 48GiB or 49140MiB (MiB as nvidia-smi prints it)"
        )
    if unit not in _UNITS:
        raise ValueError(f"memory {text!r}: unknown unit {match.group(2)!r} (use MiB, GiB or GB)")
    mib = round(number * _UNITS[unit])
    if not 1024 <= mib <= MAX_MEMORY_MIB:
        raise ValueError(f"memory {text!r} is out of range (1 GiB to 16 TiB per GPU)")
    return mib


def parse_capability(text: str) -> tuple[int, int]:
    """`8.9`, `89`, `sm89`, `sm_89`, `sm90a` -> (8, 9)."""
    value = text.strip().lower()
    value = re.sub(r"^sm_?", "", value).rstrip("af")
    match = re.fullmatch(r"([0-9]{1,2})\.([0-9])", value) or re.fullmatch(r"([0-9]{1,2})([0-9])", value)
    if not match:
        raise ValueError(f"compute capability {text!r}: give major.minor, e.g. sm=8.9 or sm=12.0")
    major, minor = int(match.group(1)), int(match.group(2))
    if not 3 <= major <= 20:
        raise ValueError(f"compute capability {text!r} is not a CUDA GPU's (3.0 to 20.x)")
    return major, minor


def parse_gfx_arch(text: str) -> tuple[str, tuple[int, int]]:
    """`gfx942` -> ("gfx942", (9, 4)): the (major, minor) ROCm's torch reports for it."""
    value = text.strip().lower().split(":")[0]  # gcnArchName: gfx942:sramecc+:xnack-
    match = re.fullmatch(r"gfx([0-9]{1,2})([0-9a-f])([0-9a-f])", value)
    if not match:
        raise ValueError(f"gfx arch {text!r}: give the LLVM target, e.g. arch=gfx942 or arch=gfx950")
    return value, (int(match.group(1)), int(match.group(2), 16))


def _nvidia_generation(capability: tuple[int, int]) -> str:
    major, minor = capability
    if major >= 10:
        return "Blackwell"
    if major == 9:
        return "Hopper"
    if (major, minor) == (8, 9):
        return "Ada"
    if major == 8:
        return "Ampere"
    return "Turing" if (major, minor) >= (7, 5) else "older"


def _yes(value: str, key: str) -> bool:
    if value.strip().lower() in ("1", "yes", "true", "on"):
        return True
    if value.strip().lower() in ("0", "no", "false", "off"):
        return False
    raise ValueError(f"{key}={value!r}: give yes or no")


def _canonical(fields: dict[str, str], kind: GpuKind) -> str:
    arch = f"arch={kind.gfx_arch}" if kind.gfx_arch else (
        f"sm={kind.compute_capability[0]}.{kind.compute_capability[1]}"
    )
    parts = [arch, f"mem={kind.memory_mib}MiB"]
    if "name" in fields:
        parts.append(f"name={fields['name']}")
    if kind.nvlink:
        parts.append(("xgmi" if kind.gfx_arch else "nvlink") + "=yes")
    if kind.multiprocessors:
        parts.append(("cus" if kind.gfx_arch else "sms") + f"={kind.multiprocessors}")
    return CUSTOM_PREFIX + ",".join(parts)


def parse_custom(spec: str) -> GpuKind:
    """A custom kind from `custom:sm=8.9,mem=48GB[,name=..][,nvlink=yes][,sms=N]` or
    `custom:arch=gfx942,mem=192GB[,...]`; ValueError says what is wrong."""
    body = spec.strip()[len(CUSTOM_PREFIX):]
    fields: dict[str, str] = {}
    for part in (p for p in body.split(",") if p.strip()):
        key, eq, value = part.partition("=")
        canonical = _KEYS.get(key.strip().lower())
        if not eq or canonical is None or not value.strip():
            raise ValueError(
                f"custom GPU kind {spec!r}: {part.strip()!r} is not key=value with a key of "
                "sm, arch, mem, name, nvlink/xgmi, sms/cus"
            )
        if canonical in fields:
            raise ValueError(f"custom GPU kind {spec!r}: {key.strip()} is given twice")
        fields[canonical] = value.strip()
    if "sm" in fields and "arch" in fields:
        raise ValueError(f"custom GPU kind {spec!r}: give sm= (NVIDIA) or arch= (AMD), not both")
    if "sm" not in fields and "arch" not in fields:
        raise ValueError(
            f"custom GPU kind {spec!r} needs sm=MAJOR.MINOR (NVIDIA) or arch=gfxNNN (AMD), "
            f"e.g. {CUSTOM_EXAMPLES}"
        )
    if "mem" not in fields:
        raise ValueError(f"custom GPU kind {spec!r} needs mem=SIZE, e.g. {CUSTOM_EXAMPLES}")
    memory = parse_memory_mib(fields["mem"])
    multiprocessors = None
    if "mp" in fields:
        if not fields["mp"].isdigit() or not 1 <= int(fields["mp"]) <= 4096:
            raise ValueError(f"custom GPU kind {spec!r}: sms/cus must be a whole number 1-4096")
        multiprocessors = int(fields["mp"])
    link = _yes(fields["link"], "nvlink") if "link" in fields else False
    gfx: str | None = None
    if "arch" in fields:
        gfx, capability = parse_gfx_arch(fields["arch"])
        vendor, generation, family = "amd", _AMD_GENERATIONS.get(gfx, "AMD"), "custom"
    else:
        capability = parse_capability(fields["sm"])
        vendor, generation, family = "nvidia", _nvidia_generation(capability), "custom"
    label = fields.get("name") or (
        f"custom {gfx or f'sm{capability[0] * 10 + capability[1]}'} {memory / 1024:.0f} GiB"
    )
    kind = GpuKind(label, (), capability, memory, generation, link, (), vendor, family, gfx,
                   multiprocessors, True)
    return replace(kind, custom=_canonical(fields, kind))


def _unknown(name: str) -> UnknownGpuError:
    names = [g.name for g in CATALOG]
    import difflib  # only for a typo's suggestion

    close = difflib.get_close_matches(
        name, names + [a for g in CATALOG for a in g.aliases], n=3, cutoff=0.4
    )
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return UnknownGpuError(
        f"unknown GPU kind {name!r}{hint} Known kinds: {', '.join(names)}. "
        f"Any other GPU: {CUSTOM_EXAMPLES}"
    )


@lru_cache(maxsize=256)
def lookup(name: str) -> GpuKind:
    """Find a GPU kind by name, alias or smi name, case-insensitively (`a6000`, `H100`,
    `AMD Instinct MI300X`), or build a custom kind from `custom:...`."""
    if not isinstance(name, str):
        raise UnknownGpuError(
            f"the GPU kind must be a name (a string), got {type(name).__name__} {name!r}"
        )
    if name.strip().lower().startswith(CUSTOM_PREFIX):
        try:
            return parse_custom(name)
        except ValueError as exc:
            raise UnknownGpuError(str(exc)) from None
    gpu = _INDEX.get(_key(name))
    if gpu is not None:
        return gpu
    raise _unknown(name)


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


def by_family() -> dict[str, list[GpuKind]]:
    """Catalog kinds grouped by family (NVIDIA data center, workstation, consumer, AMD Instinct)."""
    out: dict[str, list[GpuKind]] = {family: [] for family in FAMILIES}
    for gpu in CATALOG:
        out[gpu.family].append(gpu)
    return out


def from_host(name: str, memory_mib: int, capability: str | None = None,
              gfx_arch: str | None = None) -> GpuKind | None:
    """The kind of a GPU read on a host (`nvidia-smi` / `amd-smi` / `rocm-smi`): the catalog kind
    of that name, else a custom kind from its capability (or gfx arch) and memory; None when
    neither is known. A catalog kind whose memory differs from the host's (another memory
    variant, ECC on or off) becomes a custom kind with the host's memory."""
    known = find(name)
    if known is not None and (not memory_mib or abs(known.memory_mib - memory_mib) <= 512):
        return known
    label = re.sub(r"[,=]", " ", name).strip()
    if known is not None:
        capability = capability or f"{known.compute_capability[0]}.{known.compute_capability[1]}"
        gfx_arch = gfx_arch or known.gfx_arch
    if not memory_mib or not (capability or gfx_arch):
        return None
    arch = f"arch={gfx_arch}" if gfx_arch else f"sm={capability}"
    try:
        return lookup(f"{CUSTOM_PREFIX}{arch},mem={memory_mib}MiB" + (f",name={label}" if label else ""))
    except UnknownGpuError:
        return None


def parse_gpu_count(value: object, what: str = "--gpus") -> int:
    """A GPU count typed by a user (flag, JSON, TOML): a whole number from 1 to 65536.

    Raises ValueError naming `what` for 0, negatives, fractions, booleans, NaN and huge values."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{what} must be a whole number of GPUs (1 or more), got {value!r}")
    if isinstance(value, float):
        if value != value or not value.is_integer():
            raise ValueError(f"{what} must be a whole number of GPUs (1 or more), got {value!r}")
        value = int(value)
    if isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            raise ValueError(f"{what} must be a whole number of GPUs (1 or more), got {value!r}")
        value = int(text)
    if not isinstance(value, int):
        raise ValueError(f"{what} must be a whole number of GPUs (1 or more), got {value!r}")
    if value < 1:
        raise ValueError(f"{what} must be at least 1 GPU, got {value}")
    if value > MAX_GPU_COUNT:
        raise ValueError(f"{what} {value} is not a GPU count (at most {MAX_GPU_COUNT})")
    return value


def gpu_count_arg(text: str) -> int:
    """argparse `type=` for `--gpus`: a bad count is argparse's exit-2 error, not a traceback."""
    import argparse

    try:
        return parse_gpu_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("--gpus ", "", 1)) from None


def gpu_kind_arg(text: str) -> str:
    """argparse `type=` for `--gpu`: an unknown kind is argparse's exit-2 error with the known
    kinds; returns the spec (catalog name or canonical custom spec)."""
    import argparse

    try:
        return lookup(text).spec
    except UnknownGpuError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
