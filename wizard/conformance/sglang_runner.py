#!/usr/bin/env python3
"""Run SGLang's real argument code on launch commands and report what it does (stdlib only).

This file is executed by the Python of an SGLang installation, never imported by the wizard:
either a per-version conformance venv (CPU torch, GPU probes faked with ``--fake-gpu``) or, without
fakes, a GPU host's own Python (the remote dry-run: real SGLang, real GPUs, no weights loaded).

Modes::

    python sglang_runner.py --fake-gpu H100 --capability 9.0 --memory-mib 81559 --gpus 2 \
        < cases.jsonl > results.jsonl
    python sglang_runner.py --dump-flags          # the real argparse parser as JSON
    python sglang_runner.py --dump-env            # the SGLANG_* variables of sglang/srt/environ.py

Input line: ``{"id", "argv": [flags after `python -m sglang.launch_server`], "env": {NAME: str|null},
"gpus": int}``. Output line: ``{"id", "sglang_version", "verdict": "ok"|"error",
"stage": "argparse"|"resolve"|"check"|null, "exception", "message", "where", "bare", "effective",
"warnings", "runner_error"}``. Each case runs in a forked child of a process that imported SGLang
once, so no state leaks between cases and thousands of cases per minute are possible.

Exit codes: 0 done (every case has a result line), 2 bad runner options, 3 SGLang not importable.
Stubs and fakes (why none can change argument validation) are listed in ``STUB_REASONS`` and in
``install_fake_gpu``; docs/conformance.md explains them for readers.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import io
import json
import logging
import os
import select
import signal
import sys
import tempfile
import time
import traceback
import types
import warnings
from collections.abc import Iterator
from typing import Any

# cuda-python (`cuda`) is deliberately NOT stubbed: kernel FFI libraries probe it inside
# try/except ImportError and would otherwise isinstance-check against a stub.
# GPU-only packages that SGLang's server_args module imports (directly or through kernels and
# model-config helpers) but never *calls* while parsing, resolving or checking arguments. They are
# only used when kernels are launched or weights are loaded. The stub finder sits at the END of
# sys.meta_path, so a really installed package always wins (a GPU host stubs nothing).
STUB_REASONS: dict[str, str] = {
    "triton": "kernel JIT; server_args imports FLA kernels whose module constants ask triton for the"
    " active backend (answered with the faked GPU's backend); no kernel is compiled or run",
    "torchvision": "image decoding helpers imported by utils.common; never called for arguments",
    "torchaudio": "audio helpers for multimodal processors; never called for arguments",
    "torchcodec": "video decoding for multimodal inputs; never called for arguments",
    "sgl_kernel": "SGLang's CUDA kernels; imported by layers, only launched on tensors",
    "sglang_kernel": "SGLang's CUDA kernels (newer name); only launched on tensors",
    "flashinfer": "attention kernels; SGLang checks only find_spec('flashinfer') (is present, as on"
    " a CUDA install) for defaults, kernels are never run",
    "flashinfer_cubin": "prebuilt kernels of flashinfer; never loaded for arguments",
    "vllm": "optional quantization kernels; only imported lazily by quant layers",
    "deep_gemm": "FP8 GEMM kernels; only called on tensors",
    "cutlass": "CUTLASS DSL kernels; only compiled for tensors",
    "quack": "kernels (quack-kernels); only called on tensors",
    "torch_memory_saver": "memory-saver hooks used by the scheduler, not by argument code",
    "llguidance": "grammar backend, used per request",
    "outlines": "grammar backend, used per request",
    "tvm_ffi": "FFI of kernel libraries; only used by kernels",
    "torchao": "quantization kernels; only applied to loaded weights",
    "pynvml": "NVML queries by the scheduler/metrics, not argument code (nvidia-smi is faked)",
    "amdsmi": "AMD GPU queries by the scheduler/metrics, not argument code",
    "aiter": "AMD's ROCm kernels (AITER); imported by ROCm layers, only launched on tensors",
    "decord": "video decoding for multimodal inputs",
    "nvidia": "NVIDIA runtime wheels (cublas etc.); loaded by kernels only",
    "kernels": "hub kernels loader; only used when a kernel is requested at run time",
    "datasets": "benchmark datasets; 0.5.5's `is_in_ci()` (the context-length check) imports "
                "sglang.test.test_utils, which imports bench_serving, which imports datasets; "
                "nothing of it is called",
}
STUB_VERSIONS = {"torchvision": "0.28.0", "triton": "3.7.0", "flashinfer": "0.6.8"}

EFFECTIVE_FIELDS = (
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_draft_model_path",
    "disable_overlap_schedule",
    "mamba_scheduler_strategy",
    "mamba_radix_cache_strategy",
    "mamba_track_interval",
    "page_size",
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "max_running_requests",
    "enable_mixed_chunk",
    "speculative_adaptive",
    "mem_fraction_static",
    "disable_radix_cache",
    "enable_dp_attention",
    "dp_size",
    "attn_dp_size",
    "tp_size",
    "pp_size",
    "speculative_draft_model_quantization",
    "speculative_moe_runner_backend",
    "speculative_dflash_block_size",
    "chunked_prefill_size",
    "cuda_graph_max_bs",
    "device",
    # rewritten by SGLang's logged deprecations (R-DEPRECATED-VALUE): reported so a sweep shows
    # the value SGLang runs with; not in the wizard's effective table, so not scored
    "tool_call_parser",
    "image_processor_backend",
)

# ------------------------------------------------------------------ stubs


class _Stub:
    """Stands in for any attribute of a stubbed module; calling it returns another stub."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # used as a decorator (@triton.jit, @torch.library.custom_op stubs)
        return _Stub(self._name + "()")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stub(f"{self._name}.{name}")

    def __getitem__(self, key: Any) -> Any:
        return _Stub(self._name + "[]")

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __bool__(self) -> bool:
        return False

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)

    def __or__(self, other: Any) -> Any:
        return self

    __ror__ = __or__

    def __repr__(self) -> str:
        return f"<stub {self._name}>"


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stub(f"{self.__name__}.{name}")


class _StubDistribution(importlib.metadata.Distribution):
    def __init__(self, name: str) -> None:
        self._stub_name = name

    def read_text(self, filename: str) -> str | None:
        if filename == "METADATA":
            version = STUB_VERSIONS.get(self._stub_name, "0.0.0")
            return f"Metadata-Version: 2.1\nName: {self._stub_name}\nVersion: {version}\n"
        return None

    def locate_file(self, path: Any) -> Any:
        return path


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import hook that creates stub modules for missing GPU-only packages (``STUB_REASONS``)."""

    def __init__(self, backend: str, capability: tuple[int, int], gfx_arch: str | None = None) -> None:
        self.backend = backend
        self.capability = capability
        # triton's GPUTarget: ("cuda", 90, 32) on NVIDIA, ("hip", "gfx942", 64) on ROCm
        self.target = types.SimpleNamespace(
            backend=backend,
            arch=gfx_arch if gfx_arch else capability[0] * 10 + capability[1],
            warp_size=64 if gfx_arch else 32,
        )
        self.used: set[str] = set()

    def retarget(self, capability: tuple[int, int]) -> None:
        """The stub triton reports another architecture from now on."""
        self.capability = capability
        self.target.arch = capability[0] * 10 + capability[1]

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.split(".")[0] in STUB_REASONS:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []
        module.__file__ = f"<stub {spec.name}>"
        module.__dict__["__version__"] = STUB_VERSIONS.get(spec.name.split(".")[0], "0.0.0")
        self.used.add(spec.name.split(".")[0])
        if spec.name == "triton":
            # fla/utils.py asks triton for the active backend at import time.
            target = self.target
            active = types.SimpleNamespace(get_current_target=lambda: target)
            driver = types.SimpleNamespace(active=active)
            module.__dict__["runtime"] = types.SimpleNamespace(driver=driver)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None

    def find_distributions(self, context: Any = None) -> list[importlib.metadata.Distribution]:
        name = (getattr(context, "name", None) or "").replace("-", "_").lower()
        if name in STUB_REASONS and name not in _really_installed():
            return [_StubDistribution(name)]
        return []


_INSTALLED_CACHE: set[str] | None = None


def _really_installed() -> set[str]:
    global _INSTALLED_CACHE
    if _INSTALLED_CACHE is None:
        _INSTALLED_CACHE = set()
        for finder in sys.meta_path:
            if isinstance(finder, StubFinder):
                continue
            find = getattr(finder, "find_distributions", None)
            if find is None:
                continue
            for dist in find(importlib.metadata.DistributionFinder.Context()):
                name = (dist.metadata.get("Name") or "").replace("-", "_").lower()
                _INSTALLED_CACHE.add(name)
    return _INSTALLED_CACHE


def neutralize_torch_compile() -> None:
    """Make ``torch.compile`` return the function unchanged (only used together with the stubs).

    Why it cannot change validation: modules that server_args imports decorate kernels with
    ``@torch.compile``; compiling only happens when such a function is first *called*, which the
    argument code never does. Importing torch's compiler stack next to a stubbed triton fails.
    """
    import torch

    def compile_identity(model: Any = None, **kwargs: Any) -> Any:
        if model is None:
            return lambda fn: fn
        return model

    torch.compile = compile_identity


def tolerate_fakes_of_stubbed_ops() -> None:
    """``torch.library.register_fake`` on an op of a stubbed package registers nothing.

    Why it cannot change validation: older releases register fake (meta) kernels for
    ``sgl_kernel::...`` ops at import time, guarded by ``_is_cuda``; on a GPU host the op exists
    because the real ``sgl_kernel`` defines it. A fake kernel only matters when torch traces the
    op, which the argument code never does. Ops of real packages keep torch's own behaviour.
    """
    import torch

    real = torch.library.register_fake

    def register_fake(op: Any, *args: Any, **kwargs: Any) -> Any:
        name = op if isinstance(op, str) else ""
        if name.split("::")[0] not in STUB_REASONS:
            return real(op, *args, **kwargs)
        if args and callable(args[0]):  # register_fake(op, fn)
            with contextlib.suppress(RuntimeError, ValueError):
                return real(op, *args, **kwargs)
            return args[0]

        def decorate(fn: Any) -> Any:
            with contextlib.suppress(RuntimeError, ValueError):
                return real(op, *args, **kwargs)(fn)
            return fn

        return decorate

    torch.library.register_fake = register_fake


# ------------------------------------------------------------------ GPU fake


def clear_probe_caches() -> None:
    """Forget every ``functools`` cache reachable from SGLang's modules (device probes are cached).

    Every cache counts, not only functions defined in that module: SGLang builds some probes as
    ``lru_cache(partial(...))`` (e.g. ``is_sm100_supported``), whose ``__module__`` is not its own.
    """
    seen: set[int] = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("sglang") or module is None:
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and id(value) not in seen:
                seen.add(id(value))
                with contextlib.suppress(Exception):
                    clear()

NVIDIA_SMI_TEMPLATE = """#!/bin/sh
# nvidia-smi stand-in written by sglang_runner.py (answers the queries SGLang's argument code makes)
count=${SGLANG_RUNNER_FAKE_GPU_COUNT:-%(count)d}
memory=${SGLANG_RUNNER_FAKE_GPU_MEMORY:-%(memory)d}
cap=${SGLANG_RUNNER_FAKE_GPU_CAP:-%(cap)s}
name=${SGLANG_RUNNER_FAKE_GPU_NAME:-"%(name)s"}
line() { i=0; while [ $i -lt $count ]; do echo "$1"; i=$((i+1)); done; }
case "$*" in
  *memory.total*) line "$memory" ;;
  *compute_cap*) line "$cap" ;;
  *name*) line "$name" ;;
  *memory.used*) line "0" ;;
  *) echo "NVIDIA-SMI stand-in: $name x $count"; line "$name, $memory MiB" ;;
esac
"""


ROCMINFO_TEMPLATE = """#!/bin/sh
# rocminfo stand-in written by sglang_runner.py: SGLang's get_amdgpu_memory_capacity() reads the
# agents' 'Pool 1' size (KB) the way a real rocminfo prints it (ROCm/legacy-rocm-build#4414)
count=${SGLANG_RUNNER_FAKE_GPU_COUNT:-%(count)d}
memory=${SGLANG_RUNNER_FAKE_GPU_MEMORY:-%(memory)d}
echo "ROCk module is loaded"
echo "=====================    "
echo "HSA System Attributes    "
echo "=====================    "
echo "Runtime Version:         1.14"
echo "=========="
echo "HSA Agents"
echo "=========="
i=0
while [ $i -lt $count ]; do
  echo "*******"
  echo "Agent $((i + 2))"
  echo "*******"
  echo "  Name:                    %(gfx)s"
  echo "  Marketing Name:          %(name)s"
  echo "  Vendor Name:             AMD"
  echo "  Device Type:             GPU"
  echo "  Compute Unit:            %(cus)d"
  echo "  Pool Info:"
  echo "    Pool 1"
  echo "      Segment:                 GLOBAL; FLAGS: COARSE GRAINED"
  echo "      Size:                    $((memory * 1024))(0x0) KB"
  echo "      Allocatable:             TRUE"
  echo "  ISA Info:"
  echo "    ISA 1"
  echo "      Name:                    amdgcn-amd-amdhsa--%(gfx)s:sramecc+:xnack-"
  i=$((i + 1))
done
echo "*** Done ***"
"""
HIP_VERSION = "6.3.42131-fa1d09cbd"  # torch.version.hip of a ROCm 6.3 wheel (sglang#10195's check_env)


class FakeGpu:
    """GPU probes answered as on a machine with ``count`` GPUs of one kind (torch.cuda + nvidia-smi).

    Why it cannot change validation: SGLang's argument code only *reads* these probes (device
    kind, compute capability, name, memory, count) to pick defaults and gate features; the fake
    returns exactly what a real GPU of that kind reports. Nothing is allocated or launched.
    """

    def __init__(
        self, name: str, capability: tuple[int, int], memory_mib: int, count: int, cuda_version: str,
        gfx_arch: str | None = None, multiprocessors: int | None = None,
        hip_version: str = HIP_VERSION,
    ) -> None:
        self.name = name
        self.capability = capability
        self.memory_mib = memory_mib
        self.count = count
        self.cuda_version = cuda_version
        # ROCm: torch.version.hip set and torch.version.cuda None (SGLang's is_hip() / is_cuda()
        # read exactly these), gcnArchName in the device properties, 64-wide wavefronts
        self.gfx_arch = gfx_arch
        self.hip_version = hip_version
        self.multiprocessors = multiprocessors or (304 if gfx_arch else 132)
        self.bin_dir = tempfile.mkdtemp(prefix="sglang-runner-bin-")
        self.finder: StubFinder | None = None  # the stub triton's target follows retarget()

    def install(self) -> None:
        """Patch torch.cuda probes and put an nvidia-smi stand-in first on PATH."""
        import torch

        fake = self
        cuda = torch.cuda
        cuda.is_available = lambda: True
        cuda.device_count = lambda: fake.count
        cuda.get_device_capability = lambda device=None: fake.capability
        cuda.get_device_name = lambda device=None: fake.name
        cuda.get_device_properties = lambda device=None: fake.properties()
        cuda.mem_get_info = lambda device=None: (fake.total_bytes - (500 << 20), fake.total_bytes)
        cuda.current_device = lambda: 0
        cuda.set_device = lambda device: None
        cuda.is_bf16_supported = lambda *a, **k: True
        cuda.is_initialized = lambda: True
        # torch 2.8 had `torch._C._cpu._is_amx_tile_supported`, 2.13 does not: 0.5.1-0.5.2 call it
        # at import in a dozen kernel modules (`cpu_has_amx_support()`) to pick CPU kernels. Only
        # a missing attribute is filled (False: no Intel AMX kernels, as with their stub sgl_kernel).
        cpu = getattr(torch._C, "_cpu", None)
        if cpu is not None and not hasattr(cpu, "_is_amx_tile_supported"):
            cpu._is_amx_tile_supported = lambda: False
        if self.gfx_arch:
            torch.version.cuda = None
            torch.version.hip = self.hip_version
            # a ROCm host has no nvidia-smi; SGLang reads the memory with rocminfo there
            self._write_tool("rocminfo", ROCMINFO_TEMPLATE % {
                "count": self.count, "memory": self.memory_mib, "gfx": self.gfx_arch,
                "name": self.name, "cus": self.multiprocessors,
            })
            return
        torch.version.cuda = self.cuda_version
        torch.version.hip = None
        path = os.path.join(self.bin_dir, "nvidia-smi")
        with open(path, "w") as fh:
            fh.write(
                NVIDIA_SMI_TEMPLATE
                % {
                    "count": self.count,
                    "memory": self.memory_mib,
                    "cap": f"{self.capability[0]}.{self.capability[1]}",
                    "name": self.name,
                }
            )
        os.chmod(path, 0o755)
        os.environ["PATH"] = self.bin_dir + os.pathsep + os.environ.get("PATH", "")

    def _write_tool(self, name: str, text: str) -> None:
        path = os.path.join(self.bin_dir, name)
        with open(path, "w") as fh:
            fh.write(text)
        os.chmod(path, 0o755)
        os.environ["PATH"] = self.bin_dir + os.pathsep + os.environ.get("PATH", "")

    @property
    def total_bytes(self) -> int:
        return self.memory_mib * 1024 * 1024

    def properties(self) -> Any:
        """What ``torch.cuda.get_device_properties`` reports for this kind."""
        return types.SimpleNamespace(
            name=self.name,
            major=self.capability[0],
            minor=self.capability[1],
            total_memory=self.total_bytes,
            multi_processor_count=self.multiprocessors,
            is_integrated=False,
            is_multi_gpu_board=False,
            gcnArchName=f"{self.gfx_arch}:sramecc+:xnack-" if self.gfx_arch else "",
            uuid="fake",
            L2_cache_size=(4 << 20) if self.gfx_arch else (50 << 20),
            warp_size=64 if self.gfx_arch else 32,
        )

    def set_count(self, count: int) -> None:
        """Change the number of visible GPUs (inside a forked child, for one case)."""
        self.count = count
        os.environ["SGLANG_RUNNER_FAKE_GPU_COUNT"] = str(count)

    def retarget(self, spec: dict[str, Any]) -> None:
        """Become another GPU kind (inside a forked child, for one case).

        Equivalent to a process started with that kind: every probe reads these attributes at
        call time, nvidia-smi reads the environment, and SGLang's cached probe results
        (``functools`` caches in its modules) are cleared so they are asked again.
        """
        gfx = spec.get("gfx_arch") or None
        if gfx != self.gfx_arch:
            # SGLang computes is_hip() into module constants at import: a process is CUDA or ROCm
            raise RuntimeError(
                f"the runner fakes {'ROCm ' + self.gfx_arch if self.gfx_arch else 'CUDA'}; a "
                f"{'ROCm ' + gfx if gfx else 'CUDA'} kind needs its own runner process"
            )
        self.name = str(spec["name"])
        self.capability = _parse_capability(str(spec["capability"]))
        self.memory_mib = int(spec["memory_mib"])
        self.multiprocessors = int(spec.get("multiprocessors") or self.multiprocessors)
        os.environ["SGLANG_RUNNER_FAKE_GPU_NAME"] = self.name
        os.environ["SGLANG_RUNNER_FAKE_GPU_CAP"] = f"{self.capability[0]}.{self.capability[1]}"
        os.environ["SGLANG_RUNNER_FAKE_GPU_MEMORY"] = str(self.memory_mib)
        if self.finder is not None:
            self.finder.retarget(self.capability)
        clear_probe_caches()


# ------------------------------------------------------------------ SGLang access


def sglang_version() -> str:
    try:
        return importlib.metadata.version("sglang")
    except importlib.metadata.PackageNotFoundError:
        import sglang

        return str(getattr(sglang, "__version__", "unknown"))


def import_server_args() -> Any:
    """Import SGLang's server_args module (the one expensive step, done once before forking)."""
    import sglang.srt.server_args as server_args

    return server_args


def build_parser(server_args: Any) -> argparse.ArgumentParser:
    """Build SGLang's own parser exactly as ``prepare_server_args`` does."""
    parser = argparse.ArgumentParser(prog="sglang serve")
    server_args.ServerArgs.add_cli_args(parser)
    return parser


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        if isinstance(value, float) and value != value:  # NaN
            return repr(value)
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    enum_value = getattr(value, "value", None)
    if enum_value is not None and type(value).__module__ != "builtins":
        name = getattr(value, "name", None)
        return name if isinstance(name, str) else _jsonable(enum_value)
    if callable(value):  # a computed default: name it without the process's memory address
        name = getattr(value, "__qualname__", None) or type(value).__name__
        return f"<computed by {name}>"
    return repr(value)


def _action_kind(action: argparse.Action) -> str:
    names = {
        "_StoreAction": "store",
        "_StoreTrueAction": "store_true",
        "_StoreFalseAction": "store_false",
        "_AppendAction": "append",
        "_AppendConstAction": "append_const",
        "_StoreConstAction": "store_const",
        "_CountAction": "count",
        "_HelpAction": "help",
        "_VersionAction": "version",
        "_ExtendAction": "extend",
    }
    cls = type(action).__name__
    return names.get(cls, cls)


def _type_name(kind: Any) -> str | None:
    if kind is None:
        return None
    return str(getattr(kind, "__name__", None) or type(kind).__name__)


def dump_flags(server_args: Any) -> dict[str, Any]:
    """Describe every action of SGLang's real argparse parser."""
    parser = build_parser(server_args)
    actions = []
    for action in parser._actions:
        kind = _action_kind(action)
        help_text = action.help if isinstance(action.help, str) else None
        deprecated = "Deprecated" in type(action).__name__ or bool(
            getattr(action, "deprecated", False)
        )
        actions.append(
            {
                "dest": action.dest,
                "option_strings": list(action.option_strings),
                "action": kind,
                "nargs": action.nargs,
                "type": _type_name(action.type),
                "choices": None
                if action.choices is None
                else [_jsonable(c) for c in action.choices],
                "default": _jsonable(action.default),
                "const": _jsonable(action.const),
                "required": bool(action.required),
                "help": help_text,
                "deprecated": deprecated,
            }
        )
    return {
        "sglang_version": sglang_version(),
        "prog": parser.prog,
        "allow_abbrev": parser.allow_abbrev,
        "actions": actions,
    }


def dump_env() -> dict[str, Any]:
    """Describe the SGLANG_* environment variables declared in sglang/srt/environ.py.

    Each variable also gets `source`, `sglang/srt/environ.py:LINE` of its declaration, read from
    the file with `ast` (so the committed table says where to look in that very wheel)."""
    import ast

    try:
        from sglang.srt import environ
    except ImportError:  # releases before environ.py (0.5.1-0.5.2) read os.environ directly
        return {"sglang_version": sglang_version(), "variables": _scanned_env_reads()}

    lines: dict[str, int] = {}
    try:
        with open(environ.__file__, encoding="utf-8") as source:
            tree = ast.parse(source.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    target = (stmt.targets[0] if isinstance(stmt, ast.Assign) and stmt.targets
                              else stmt.target if isinstance(stmt, ast.AnnAssign) else None)
                    if isinstance(target, ast.Name):
                        lines.setdefault(target.id, stmt.lineno)
    except (OSError, SyntaxError):
        pass
    variables = []
    for cls in reversed(environ.Envs.__mro__):
        for name, field in vars(cls).items():
            if isinstance(field, environ.EnvField):
                entry = {
                    "name": getattr(field, "name", name),
                    "kind": type(field).__name__,
                    "default": _jsonable(field.default),
                }
                if name in lines:
                    entry["source"] = f"sglang/srt/environ.py:{lines[name]}"
                variables.append(entry)
    seen: dict[str, dict[str, Any]] = {v["name"]: v for v in variables}
    return {
        "sglang_version": sglang_version(),
        "variables": sorted(seen.values(), key=lambda v: v["name"]),
    }


# How releases without `environ.py` read a variable: the reading function -> the table's kind.
_ENV_READERS = {"get_bool_env_var": "get_bool_env_var", "get_int_env_var": "get_int_env_var",
                "getenv": "str", "get": "str"}


def _scanned_env_reads() -> list[dict[str, Any]]:
    """Every `SGLANG_*` variable the sglang package reads with `get_bool_env_var`,
    `get_int_env_var`, `os.getenv`, `os.environ.get` or `os.environ[...]`, from its source
    (`ast`): kind is the reading function (`get_bool_env_var` is true only for "true"/"1"),
    default the literal default of the first read, source its `file:line`."""
    import ast

    import sglang

    root = os.path.dirname(os.path.dirname(os.path.abspath(sglang.__file__)))
    found: dict[str, dict[str, Any]] = {}
    for folder, _dirs, files in sorted(os.walk(os.path.join(root, "sglang", "srt"))):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                with open(path, encoding="utf-8") as source:
                    tree = ast.parse(source.read())
            except (OSError, SyntaxError, ValueError):
                continue
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            for node in ast.walk(tree):
                kind, args = None, []
                if isinstance(node, ast.Call):
                    func = node.func
                    called = (func.attr if isinstance(func, ast.Attribute)
                              else func.id if isinstance(func, ast.Name) else "")
                    if called == "get" and not (isinstance(func, ast.Attribute)
                                                and ast.unparse(func.value) == "os.environ"):
                        continue
                    kind, args = _ENV_READERS.get(called), list(node.args)
                elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
                    kind, args = "str", [node.slice]
                if kind is None or not args or not isinstance(args[0], ast.Constant):
                    continue
                var = args[0].value
                if not (isinstance(var, str) and var.startswith("SGLANG_")) or var in found:
                    continue
                default: Any = None
                if len(args) > 1 and isinstance(args[1], ast.Constant):
                    default = args[1].value
                elif kind == "get_bool_env_var":
                    default = "false"
                if kind == "get_bool_env_var" and isinstance(default, str):
                    default = default.lower() in ("true", "1")
                found[var] = {"name": var, "kind": kind, "default": _jsonable(default),
                              "source": f"{rel}:{node.lineno if isinstance(node, ast.expr) else 0}"}
    return sorted(found.values(), key=lambda v: v["name"])


def dump_model_types() -> dict[str, Any]:
    """The config `model_type`s this release can load: its transformers' and its own registered."""
    import importlib

    for name in ("sglang.srt.utils.hf_transformers_utils", "sglang.srt.hf_transformers_utils"):
        try:
            importlib.import_module(name)  # registers SGLang's own config classes
            break
        except ImportError:
            continue
    from transformers import CONFIG_MAPPING

    return {"sglang_version": sglang_version(), "model_types": sorted(CONFIG_MAPPING.keys())}


# ------------------------------------------------------------------ one case (in the child)


_PARSERS: dict[tuple[tuple[str, str | None], ...], argparse.ArgumentParser] = {}


def _env_key(case: dict[str, Any]) -> tuple[tuple[str, str | None], ...]:
    env = case.get("env") or {}
    return tuple(sorted((str(k), None if v is None else str(v)) for k, v in env.items()))


def prebuilt_parser(server_args: Any, case: dict[str, Any]) -> argparse.ArgumentParser:
    """SGLang's parser built in the parent under the case's environment (cached per env).

    ``prepare_server_args`` builds a fresh parser per call (0.5 s: most of a case's time);
    ``add_cli_args`` is a function of the code and the environment only, so a parser built once
    per distinct environment and handed unused to each forked child is the same parser.
    """
    key = _env_key(case)
    parser = _PARSERS.get(key)
    if parser is None:
        saved = {name: os.environ.get(name) for name, _ in key}
        try:
            for name, value in key:
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            real_stdout = sys.stdout
            sys.stdout = sys.stderr
            try:
                parser = build_parser(server_args)
            finally:
                sys.stdout = real_stdout
        finally:
            for name, old in saved.items():
                if old is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = old
        _PARSERS[key] = parser
    return parser


def use_prebuilt_parser(server_args: Any, parser: argparse.ArgumentParser) -> None:
    """Make ``prepare_server_args`` (in this forked child) use ``parser`` instead of building one."""
    proxy = types.ModuleType("argparse")
    proxy.__dict__.update(vars(argparse))
    proxy.ArgumentParser = lambda *args, **kwargs: parser  # type: ignore[attr-defined]
    server_args.argparse = proxy
    server_args.ServerArgs.add_cli_args = staticmethod(lambda _parser: None)


def effective_values(args: Any) -> dict[str, Any]:
    """The resolved values of ``EFFECTIVE_FIELDS`` (0.5.23: ``resolved_dict()``; else attributes)."""
    resolved = args.resolved_dict() if hasattr(args, "resolved_dict") else None
    values: dict[str, Any] = {}
    for name in EFFECTIVE_FIELDS:
        if resolved is not None:
            if name in resolved:
                values[name] = _jsonable(resolved[name])
        elif hasattr(args, name):
            values[name] = _jsonable(getattr(args, name))
    return values


class _WarningCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.messages.append(record.getMessage())


def _where(exc: BaseException) -> str | None:
    """The innermost traceback frame inside the sglang package, as ``sglang/...py:LINE``."""
    where = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = frame.filename.replace(os.sep, "/")
        marker = path.rfind("/sglang/")
        if marker >= 0:
            where = f"{path[marker + 1 :]}:{frame.lineno}"
    return where


def _argparse_message(stderr_text: str) -> str:
    for line in reversed(stderr_text.splitlines()):
        if ": error: " in line:
            return line.split(": error: ", 1)[1].strip()
    return stderr_text.strip().splitlines()[-1] if stderr_text.strip() else ""


def run_case(
    server_args: Any,
    case: dict[str, Any],
    fake: FakeGpu | None,
    parser: argparse.ArgumentParser | None = None,
) -> dict[str, Any]:
    """Run argparse, resolution and check for one case, in the launcher's order."""
    argv = [str(a) for a in case.get("argv", [])]
    for key, value in (case.get("env") or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = str(value)
    if fake is not None and case.get("gpu_spec"):
        fake.retarget(case["gpu_spec"])
    if fake is not None and case.get("gpus"):
        fake.set_count(int(case["gpus"]))

    if parser is not None:
        use_prebuilt_parser(server_args, parser)
    collector = _WarningCollector()
    sglang_logger = logging.getLogger("sglang")
    sglang_logger.addHandler(collector)
    captured_stderr = io.StringIO()
    sys.stderr = captured_stderr
    sys.stdout = io.StringIO()

    state = {"stage": "argparse"}
    server_args_cls = server_args.ServerArgs
    original_from_cli = server_args_cls.__dict__["from_cli_args"]
    has_resolve_once = hasattr(server_args_cls, "resolve_once")

    if not has_resolve_once:
        # 0.5.11: the dataclass constructor runs __post_init__ (the resolution) inside
        # prepare_server_args; mark the stage when construction begins.
        def from_cli_args(cls: Any, args: Any) -> Any:
            state["stage"] = "resolve"
            return original_from_cli.__func__(cls, args)

        server_args_cls.from_cli_args = classmethod(from_cli_args)

    result: dict[str, Any] = {
        "id": case.get("id"),
        "sglang_version": sglang_version(),
        "verdict": "ok",
        "stage": None,
        "exception": None,
        "message": "",
        "where": None,
        "bare": False,
        "effective": {},
        "warnings": [],
        "runner_error": False,
    }
    with warnings.catch_warnings(record=True) as py_warnings:
        warnings.simplefilter("always")
        started = time.perf_counter()
        try:
            args = server_args.prepare_server_args(argv)
            if has_resolve_once:
                state["stage"] = "resolve"
                args.resolve_once()
            state["stage"] = "check"
            args.check_server_args()
            result["effective"] = effective_values(args)
        except SystemExit as exc:
            result.update(
                verdict="error",
                stage=state["stage"],
                exception="SystemExit",
                message=_argparse_message(captured_stderr.getvalue()) or f"exit {exc.code}",
                where=_where(exc),
            )
            if state["stage"] == "argparse":
                result["where"] = None
        except BaseException as exc:
            message = str(exc)
            result.update(
                verdict="error",
                stage=state["stage"],
                exception=type(exc).__name__,
                message=message,
                where=_where(exc),
                bare=isinstance(exc, AssertionError) and not message,
            )
    result["elapsed_us"] = round((time.perf_counter() - started) * 1e6)
    result["warnings"] = collector.messages + [str(w.message) for w in py_warnings]
    return result


# ------------------------------------------------------------------ batch driver


def _child(
    server_args: Any,
    case: dict[str, Any],
    fake: FakeGpu | None,
    write_fd: int,
    parser: argparse.ArgumentParser | None,
) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        before = set(sys.modules)
        result = run_case(server_args, case, fake, parser)
        result["_imported"] = sorted(
            name for name in set(sys.modules) - before if name.split(".")[0] in WARM_PACKAGES
        )
        payload = json.dumps(result).encode()
    except BaseException as exc:  # the runner itself failed: report it, never hang the parent
        payload = json.dumps(
            {"id": case.get("id"), "runner_error": True, "message": f"{type(exc).__name__}: {exc}"}
        ).encode()
    with os.fdopen(write_fd, "wb") as out:
        out.write(payload)
    os._exit(0)


# Packages whose modules, imported lazily by one case, are imported once in the parent so the
# following forked children inherit them (speed only: importing is what the launcher does anyway).
WARM_PACKAGES = frozenset({"sglang", "transformers", "compressed_tensors", "gguf", "xgrammar"})
_WARM_FAILED: set[str] = set()


def warm_imports(names: list[str]) -> None:
    """Import in this (parent) process the modules that a child imported lazily."""
    import importlib

    for name in names:
        if name in sys.modules or name in _WARM_FAILED:
            continue
        real_stdout = sys.stdout
        sys.stdout = sys.stderr
        try:
            importlib.import_module(name)
        except Exception:
            _WARM_FAILED.add(name)
        finally:
            sys.stdout = real_stdout


class _Running:
    def __init__(self, case: dict[str, Any], pid: int, fd: int, deadline: float) -> None:
        self.case = case
        self.pid = pid
        self.fd = fd
        self.deadline = deadline
        self.chunks: list[bytes] = []
        self.done = False


def _runner_failure(case: dict[str, Any], version: str, message: str) -> dict[str, Any]:
    return {
        "id": case.get("id"),
        "sglang_version": version,
        "verdict": "error",
        "stage": None,
        "exception": "RunnerError",
        "message": message,
        "where": None,
        "bare": False,
        "effective": {},
        "warnings": [],
        "runner_error": True,
    }


def run_batch(
    server_args: Any,
    lines: Iterator[str],
    out: Any,
    fake: FakeGpu | None,
    jobs: int,
    timeout: float,
    reuse_parser: bool = True,
) -> int:
    """Run every JSON line case in its own forked child, ``jobs`` at a time; results in order."""
    version = sglang_version()
    pending: list[_Running] = []
    count = 0

    def finish(item: _Running) -> None:
        os.close(item.fd)
        _, status = os.waitpid(item.pid, 0)
        raw = b"".join(item.chunks)
        try:
            result = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            result = None
        if result is None:
            result = _runner_failure(
                item.case, version, f"child exited without a result (status {status})"
            )
        elif result.get("runner_error") and "verdict" not in result:
            result = _runner_failure(item.case, version, result.get("message", ""))
        warm_imports(result.pop("_imported", []))
        out.write(json.dumps(result) + "\n")
        out.flush()

    def pump(block: bool) -> None:
        while pending:
            waiting = [p for p in pending if not p.done]
            if waiting:
                now = time.monotonic()
                wait = max(0.0, min(p.deadline for p in waiting) - now) if block else 0.0
                ready, _, _ = select.select([p.fd for p in waiting], [], [], wait)
                for item in waiting:
                    if item.fd in ready:
                        data = os.read(item.fd, 1 << 16)
                        if data:
                            item.chunks.append(data)
                        else:
                            item.done = True
                    elif time.monotonic() > item.deadline:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(item.pid, signal.SIGKILL)
                        item.chunks = [
                            json.dumps(
                                _runner_failure(item.case, version, f"timeout after {timeout:.0f}s")
                            ).encode()
                        ]
                        item.done = True
            while pending and pending[0].done:  # keep input order
                finish(pending.pop(0))
            if not block or len(pending) < jobs:
                return

    for line in lines:
        if not line.strip():
            continue
        case = json.loads(line)
        sys.stdout.flush()
        parser = prebuilt_parser(server_args, case) if reuse_parser else None
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _child(server_args, case, fake, write_fd, parser)
        os.close(write_fd)
        pending.append(_Running(case, pid, read_fd, time.monotonic() + timeout))
        count += 1
        pump(block=len(pending) >= jobs)
    while pending:
        pump(block=True)
    return count


def _parse_capability(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--fake-gpu",
        metavar="NAME",
        help="fake GPUs of this kind (name as nvidia-smi reports it is --gpu-name)",
    )
    parser.add_argument("--gpu-name", help="device name reported by the fake (default: NAME)")
    parser.add_argument("--capability", default="9.0", help="compute capability, e.g. 9.0")
    parser.add_argument("--memory-mib", type=int, default=81559, help="memory per GPU in MiB")
    parser.add_argument("--gpus", type=int, default=1, help="default GPU count of the fake")
    parser.add_argument("--cuda-version", default="12.9", help="torch.version.cuda of the fake")
    parser.add_argument("--gfx-arch", help="fake an AMD GPU under ROCm with this gfx arch (gfx942)")
    parser.add_argument("--multiprocessors", type=int,
                        help="SM (CUDA) or CU (ROCm) count of the fake")
    parser.add_argument(
        "--stubs",
        choices=("auto", "off"),
        default=None,
        help="stub missing GPU-only packages (default: on with --fake-gpu)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="cases run at the same time")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument(
        "--fresh-parser",
        action="store_true",
        help="let every case build SGLang's parser itself (slower; for checking the reuse)",
    )
    parser.add_argument("--dump-flags", action="store_true", help="print the flag table JSON")
    parser.add_argument("--dump-env", action="store_true", help="print the env variable JSON")
    parser.add_argument("--dump-model-types", action="store_true",
                        help="print the config model types this release can load")
    parser.add_argument(
        "--info", action="store_true", help="print the SGLang version and the stubbed packages"
    )
    options = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    capability = _parse_capability(options.capability)
    stubs = options.stubs or ("auto" if options.fake_gpu else "off")
    finder = None
    if stubs == "auto":
        finder = StubFinder("hip" if options.gfx_arch else "cuda", capability, options.gfx_arch)
        sys.meta_path.append(finder)
        neutralize_torch_compile()
        tolerate_fakes_of_stubbed_ops()
    fake = None
    if options.fake_gpu:
        fake = FakeGpu(
            options.gpu_name or options.fake_gpu,
            capability,
            options.memory_mib,
            options.gpus,
            options.cuda_version,
            gfx_arch=options.gfx_arch,
            multiprocessors=options.multiprocessors,
        )
        fake.finder = finder
        fake.install()
        fake.set_count(options.gpus)

    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # SGLang may print while importing; keep the result stream clean
    try:
        server_args = import_server_args()
    except ImportError as exc:
        print(f"sglang_runner: {sys.executable} cannot import SGLang's argument code "
              f"(sglang.srt.server_args): {type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    finally:
        sys.stdout = real_stdout
    if options.dump_flags:
        json.dump(dump_flags(server_args), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    if options.dump_env:
        json.dump(dump_env(), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    if options.dump_model_types:
        json.dump(dump_model_types(), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    if options.info:
        json.dump(
            {
                "sglang_version": sglang_version(),
                "python": sys.version.split()[0],
                "stubbed": sorted(finder.used) if finder else [],
            },
            sys.stdout,
        )
        sys.stdout.write("\n")
        return 0
    run_batch(
        server_args,
        iter(sys.stdin.readline, ""),
        sys.stdout,
        fake,
        max(1, options.jobs),
        options.timeout,
        reuse_parser=not options.fresh_parser,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
