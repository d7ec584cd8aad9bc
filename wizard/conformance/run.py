"""Drive `sglang_runner.py` inside a version's venv: one runner process per GPU kind."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from wizard import gpus as gpu_catalog
from wizard.conformance.venvs import RUNNER_PATH, cache_dir, venv_python

RUNNER_CASE_KEYS = ("id", "argv", "env", "gpus")


class RunnerError(RuntimeError):
    """The SGLang runner process failed as a whole (not a case)."""


def models_root() -> Path:
    """Where the tiny model folders of the cases live."""
    return cache_dir() / "conformance" / "models"


def gpu_spec(gpu: str) -> dict[str, Any]:
    """How the runner's fake presents one GPU kind of the wizard's catalog."""
    kind = gpu_catalog.lookup(gpu)
    major, minor = kind.compute_capability
    vendor = "AMD" if kind.is_hip else "NVIDIA"
    return {"name": kind.smi_names[0] if kind.smi_names else f"{vendor} {kind.name}",
            "capability": f"{major}.{minor}", "memory_mib": kind.memory_mib,
            "gfx_arch": kind.gfx_arch, "multiprocessors": kind.multiprocessors}


def runner_command(python: Path, gpu: str, gpus: int = 1, jobs: int = 2) -> list[str]:
    """The runner command line, its fake starting as GPU kind ``gpu`` of the wizard's catalog."""
    spec = gpu_spec(gpu)
    return [
        str(python), str(RUNNER_PATH), "--fake-gpu", gpu_catalog.lookup(gpu).name,
        "--gpu-name", spec["name"], "--capability", spec["capability"],
        "--memory-mib", str(spec["memory_mib"]), "--gpus", str(gpus), "--jobs", str(jobs),
        *(["--gfx-arch", spec["gfx_arch"]] if spec["gfx_arch"] else []),
        *(["--multiprocessors", str(spec["multiprocessors"])] if spec["multiprocessors"] else []),
    ]


def run_cases(
    version: str,
    cases: Sequence[dict[str, Any]],
    jobs: int = 2,
    log: Callable[[str], None] = lambda _m: None,
    per_gpu_process: bool = False,
    base_env: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run ``cases`` through SGLang ``version``'s real argument code; results by case id.

    One runner process imports SGLang once and forks a child per case; each child becomes the
    case's GPU kind (``gpu_spec``). ``per_gpu_process`` starts one runner per GPU kind instead
    (slower: one import per kind), which is how the single-process mode is checked.
    """
    python = venv_python(version)
    if not python.exists():
        raise RunnerError(f"no venv for SGLang {version}: run `sglang-wizard conformance build`")
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        gpu = str(case.get("gpu") or "H100")
        # SGLang fixes is_hip() at import: ROCm kinds get a runner per gfx arch
        gfx = gpu_catalog.lookup(gpu).gfx_arch
        groups.setdefault(gpu if per_gpu_process else (f"rocm-{gfx}" if gfx else "all"),
                          []).append(case)
    results: dict[str, dict[str, Any]] = {}
    for group_name, group in groups.items():
        started = time.monotonic()
        first_gpu = str(group[0].get("gpu") or "H100")
        payload = "".join(
            json.dumps({**{k: case[k] for k in RUNNER_CASE_KEYS if k in case},
                        "gpu_spec": gpu_spec(str(case.get("gpu") or "H100"))}) + "\n"
            for case in group
        )
        # Only the case's own SGLANG_* / SGL_* variables may reach SGLang, not the caller's.
        source = dict(base_env if base_env is not None else os.environ)
        env = {k: v for k, v in source.items() if not k.startswith(("SGLANG_", "SGL_"))}
        # The venv keeps the bytecode of what SGLang imports (its own folder in the cache): a
        # runner start then costs seconds, not a recompile of torch and transformers each time.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # A fixed working directory: the caller's may be gone (a test's tmp dir; the CI runs
        # start in background threads while other tests chdir).
        proc = subprocess.run(
            runner_command(python, first_gpu, jobs=jobs), input=payload, capture_output=True,
            text=True, env=env, check=False, cwd=str(python.parent),
        )
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-12:])
            raise RunnerError(f"SGLang {version} runner failed ({group_name}, exit "
                              f"{proc.returncode}):\n{tail}")
        for line in proc.stdout.splitlines():
            if line.strip():
                result = json.loads(line)
                results[str(result.get("id"))] = result
        log(f"sglang {version} ({group_name} GPUs): {len(group)} cases in "
            f"{time.monotonic() - started:.1f}s")
    missing = [str(c["id"]) for c in cases if str(c["id"]) not in results]
    if missing:
        raise RunnerError(f"runner returned no result for {len(missing)} cases, e.g. {missing[:3]}")
    return results


def run_until_finished(version: str, cases: Sequence[dict[str, Any]], jobs: int = 2,
                       retries: int = 2, log: Callable[[str], None] = lambda _m: None,
                       base_env: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """`run_cases`, then the cases the runner did not finish (`runner_error`: a per-case timeout
    on a loaded machine) run again alone, up to ``retries`` times; what still fails stays a
    runner error (scored as a disagreement)."""
    results = run_cases(version, cases, jobs=jobs, log=log, base_env=base_env) if cases else {}
    for _ in range(retries):
        unfinished = [c for c in cases if results[str(c["id"])].get("runner_error")]
        if not unfinished:
            break
        log(f"sglang {version}: running {len(unfinished)} unfinished cases again")
        results.update(run_cases(version, unfinished, jobs=1, log=log, base_env=base_env))
    return results
