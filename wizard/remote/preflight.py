"""Preflight: what is checked on a GPU host before a launch: python and SGLang, GPUs and the memory
they already hold, the port, the model and draft paths, disk for logs, and SGLang's own dry run of
the argv (the conformance runner, on the host or inside the container image).

`preflight_payload` is what the agent is sent (by `RemoteHost.preflight` and the container's
preflight alike); `build_preflight_report` turns its raw answer into checks (pure: tested without a
host).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from wizard import logstages, nvidia_smi


@cache
def dry_run_runner_source() -> str:
    """Source of the conformance runner (`wizard/conformance/sglang_runner.py`), which runs
    SGLang's real argument code; on a GPU host it runs without fakes (real GPUs, no weights)."""
    return (Path(__file__).resolve().parents[1] / "conformance" / "sglang_runner.py").read_text()


@dataclass
class PreflightRequest:
    """What preflight checks: python/env, port, model and draft paths, the argv for the dry run."""

    python: str = "python3"
    env: dict[str, str] = field(default_factory=dict)
    port: int | None = None
    model_path: str | None = None
    draft_model_path: str | None = None
    argv: list[str] | None = None  # None: no remote dry run
    # extra arguments for the conformance runner; a host without GPUs (tests) may pass --fake-gpu
    dry_run_runner_args: list[str] = field(default_factory=list)
    min_free_disk_bytes: int = 1 << 30
    dry_run_timeout_s: float = 300.0
    container: Any = None
    """A profile with a `[container]` table: the checks run inside its image
    (`wizard.remote.container.preflight`); None checks `python` on the host."""
    on_progress: Callable[[str], None] | None = None
    """Lines of a long step as they come (a container image being pulled)."""
    pull_result: dict[str, Any] | None = None
    """A pull of the container image already made for this launch (`{"rc", "out"}`): not again."""


@dataclass(frozen=True)
class PreflightCheck:
    """One row of the preflight table."""

    name: str
    ok: bool
    detail: str
    blocking: bool = True


@dataclass
class PreflightReport:
    """All preflight results; `blocking` lists what stops the launch."""

    checks: list[PreflightCheck]
    python_version: str | None
    sglang_version: str | None
    gpus: nvidia_smi.GpuReport
    dry_run_effective: dict[str, Any] | None = None
    dry_run_crash: logstages.CrashExplanation | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def blocking(self) -> list[PreflightCheck]:
        """Failed checks that stop the launch."""
        return [c for c in self.checks if not c.ok and c.blocking]

    @property
    def ok(self) -> bool:
        """True when nothing blocks the launch."""
        return not self.blocking


@dataclass(frozen=True)
class Disagreement:
    """A value where the host's SGLang and the local check differ."""

    key: str
    local: Any
    remote: Any


def compare_effective(local: Mapping[str, Any], remote: Mapping[str, Any]) -> list[Disagreement]:
    """Keys both sides report with different values (strings compared case-insensitively)."""

    def norm(value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    return [
        Disagreement(key, local[key], remote[key])
        for key in sorted(set(local) & set(remote))
        if norm(local[key]) != norm(remote[key])
    ]


def preflight_payload(request: PreflightRequest, python: str, port: int | None) -> dict[str, Any]:
    """The agent's preflight input for `request`: which python, env, port and paths to check,
    and SGLang's own dry run of the argv when one is given (on the host or inside the image)."""
    paths = {}
    if request.model_path:
        paths["model"] = request.model_path
    if request.draft_model_path:
        paths["draft"] = request.draft_model_path
    payload: dict[str, Any] = {"python": python, "env": request.env, "port": port, "paths": paths}
    if request.argv is not None:
        case = {"id": "dry-run", "argv": list(request.argv), "env": request.env}
        payload["dry_run"] = {
            "code": dry_run_runner_source(),
            "args": ["--timeout", str(request.dry_run_timeout_s), *request.dry_run_runner_args],
            "stdin": json.dumps(case) + "\n",
            "timeout": request.dry_run_timeout_s + 60,
        }
    return payload


def _dry_run_check(
    dry: Mapping[str, Any], sglang_version: str | None
) -> tuple[dict[str, Any] | None, logstages.CrashExplanation | None, PreflightCheck]:
    """Read the conformance runner's JSON result line (or explain why there is none)."""
    result: dict[str, Any] | None = None
    for line in reversed(str(dry.get("out", "")).splitlines()):
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict) and "verdict" in parsed:
            result = parsed
            break
    if result is None or result.get("runner_error"):
        err = (str(dry.get("err", "")) or str(dry.get("out", ""))).strip()
        reason = (result or {}).get("message") or err[-800:] or f"exit {dry.get('rc')}"
        check = PreflightCheck("dry run", False, f"the dry run could not run on the host: {reason}")
        return None, None, check
    version = str(result.get("sglang_version") or sglang_version or "")
    if result.get("verdict") == "ok":
        warnings = result.get("warnings") or []
        note = f" ({len(warnings)} warning(s))" if warnings else ""
        check = PreflightCheck(
            "dry run", True, f"the host's SGLang {version} accepts the arguments{note}"
        )
        return dict(result.get("effective") or {}), None, check
    exception = str(result.get("exception") or "error")
    message = str(result.get("message") or "")
    where = result.get("where")
    traceback = logstages.traceback_from_location(str(where), exception, message) if where else None
    crash = logstages.explain_crash(traceback, logstages.detect_oom(message), version or None)
    place = f" at {where}" if where else ""
    detail = f"{exception}{': ' + message if message else ''}{place} (stage {result.get('stage')})"
    if crash.rule_id:
        detail += f"; rule {crash.rule_id}: {crash.explanation}"
    check = PreflightCheck(
        "dry run", False, f"the host's SGLang {version} refuses the arguments: {detail}"
    )
    return None, crash, check


def read_gpu_report(raw: Mapping[str, Any]) -> nvidia_smi.GpuReport:
    """The host's GPUs from the agent's raw tool outputs: nvidia-smi, else amd-smi / rocm-smi."""
    from wizard import amd_smi

    for key in ("amd_smi", "rocm_smi"):
        if isinstance(raw.get(key), Mapping):
            return amd_smi.build_report(dict(raw[key]))
    smi = raw.get("nvidia_smi") or {}
    gpu_out = (smi.get("gpus") or {}).get("out", "")
    apps_out = (smi.get("apps") or {}).get("out", "")
    commands = {int(k): v for k, v in (smi.get("commands") or {}).items()}
    return nvidia_smi.build_report(gpu_out, apps_out, commands)


def build_preflight_report(raw: Mapping[str, Any], request: PreflightRequest) -> PreflightReport:
    """Turn the agent's raw preflight JSON into checks (pure: tested without a host)."""
    checks: list[PreflightCheck] = []
    versions = raw.get("versions") or {}
    python_version = versions.get("python")
    sglang_version = versions.get("sglang")
    checks.append(
        PreflightCheck(
            "python",
            python_version is not None,
            f"{request.python}: Python {python_version}"
            if python_version
            else f"{request.python} did not run: {versions.get('error')}",
        )
    )
    import_ok = bool(versions.get("import_ok", sglang_version is not None))
    if sglang_version and import_ok:
        detail = f"SGLang {sglang_version} (selects the rule set; sglang.srt.server_args imports)"
    else:
        where = f" (installed: {sglang_version})" if sglang_version else ""
        detail = f"SGLang is not importable with {request.python}{where}: {versions.get('error')}"
        frames = [
            line.strip()
            for line in str(versions.get("traceback") or "").splitlines()
            if line.strip().startswith('File "') and '"<string>"' not in line
        ]
        if frames:
            detail += f" (raised at {frames[-1]})"
    checks.append(PreflightCheck("sglang", bool(sglang_version) and import_ok, detail))
    gpus = read_gpu_report(raw)
    if gpus.error:
        checks.append(PreflightCheck("gpus", False, gpus.error))
    else:
        names = ", ".join(
            f"{g.index}: {g.name} {g.memory_used_mib}/{g.memory_total_mib} MiB" for g in gpus.gpus
        )
        kind = gpus.kind()
        known = f" = {kind.describe()}" if kind is not None else " (kind not known: set gpu.kind)"
        checks.append(
            PreflightCheck("gpus", gpus.count > 0, f"{gpus.count} GPU(s){known} ({gpus.tool}): {names}")
        )
        held_mib = {g.index: g.memory_used_mib for g in gpus.gpus if g.memory_used_mib > 2048}
        if gpus.tool != "nvidia-smi" and held_mib:
            checks.append(
                PreflightCheck(
                    "gpu memory free",
                    False,
                    "memory already in use (left-overs of a crashed run?): "
                    + "; ".join(f"GPU {i} holds {m} MiB" for i, m in held_mib.items())
                    + f" ({gpus.tool}). Stop what holds it (sglang-wizard stop RUN, or "
                    "`amd-smi process` to find the pid) before launching.",
                )
            )
        if gpus.processes:
            held = "; ".join(
                f"pid {p.pid} on GPU {p.gpu_index} holds {p.used_memory_mib} MiB ({p.command or 'unknown command'})"
                for p in gpus.processes
            )
            checks.append(
                PreflightCheck(
                    "gpu memory free",
                    False,
                    f"processes already hold GPU memory (left-overs of a crashed run?): {held}. "
                    "Stop them (sglang-wizard stop RUN, or kill PID) before launching.",
                )
            )
    port = raw.get("port") or {}
    if request.port is not None:
        free = port.get("free")
        checks.append(
            PreflightCheck(
                "port",
                bool(free),
                f"port {request.port} is free"
                if free
                else f"port {request.port} is already in use on the host: "
                "choose another --port or stop the server holding it",
            )
        )
    for name, info in (raw.get("paths") or {}).items():
        label = "model path" if name == "model" else "draft model path"
        if info.get("error"):
            checks.append(PreflightCheck(label, False, f"{info['path']}: {info['error']}"))
        else:
            arch = (info.get("config_json") or {}).get("architectures")
            checks.append(
                PreflightCheck(label, True, f"{info['path']}: config.json ok, architectures {arch}")
            )
    disk = raw.get("disk") or {}
    free_bytes = int(disk.get("free_bytes") or 0)
    checks.append(
        PreflightCheck(
            "disk for logs",
            free_bytes >= request.min_free_disk_bytes,
            f"{free_bytes / 2**30:.1f} GiB free in {disk.get('path')}",
        )
    )
    effective: dict[str, Any] | None = None
    crash: logstages.CrashExplanation | None = None
    dry = raw.get("dry_run")
    if dry is not None:
        effective, crash, dry_check = _dry_run_check(dry, sglang_version)
        checks.append(dry_check)
    return PreflightReport(
        checks, python_version, sglang_version, gpus, effective, crash, dict(raw)
    )
