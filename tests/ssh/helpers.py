"""Shared helpers of the SSH tests: stand-in launch requests and local process checks."""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path

from wizard.remote.runs import LaunchRequest, LogChunk
from wizard.remote.session import RemoteHost

REPO = Path(__file__).resolve().parents[2]
STAND_IN = REPO / "tests" / "fixtures" / "stand_in"
USER = getpass.getuser()  # the tests log in to their own sshd as the user running them
REMOTE_PYTHON = sys.executable  # the "GPU host" is this machine: any python3 runs the stand-in


def stand_in_env(**extra: str) -> dict[str, str]:
    """Env that makes `python -m sglang.launch_server` run the stand-in, fast."""
    env = {"PYTHONPATH": str(STAND_IN), "STAND_IN_PACE": "0.005"}
    env.update(extra)
    return env


def model_dir(tmp_path: Path, name: str = "model", architectures: str = "Qwen3ForCausalLM") -> Path:
    """A model folder with only config.json (what the tests need, nothing downloaded)."""
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"architectures": [architectures], "model_type": "qwen3"}))
    return folder


def request(model: Path | str, port: int, *extra_argv: str, **env: str) -> LaunchRequest:
    """A launch of the stand-in on `port`."""
    return LaunchRequest(
        argv=["--model-path", str(model), "--port", str(port), *extra_argv],
        env=stand_in_env(**env),
        python=REMOTE_PYTHON,
        profile_toml="[model]\npath = 'x'\n",
        port=port,
    )


async def collect(host: RemoteHost, run_id: str, until: str | None = None) -> tuple[list[str], list[LogChunk]]:
    """Follow a run's log to its end (or until a line containing `until`)."""
    lines: list[str] = []
    chunks: list[LogChunk] = []
    async for chunk in host.follow_log(run_id, 0, poll_s=0.02):
        chunks.append(chunk)
        lines.extend(chunk.lines)
        if until is not None and any(until in line for line in chunk.lines):
            break
    return lines, chunks


def alive(pid: int) -> bool:
    """True when the process exists and is not a zombie (the "host" is this machine)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def environ_of(pid: int) -> dict[str, str]:
    """The environment of a local process."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(): v.decode(errors="replace") for k, v in pairs}


def children_of(pid: int) -> list[int]:
    """Direct children of a local process."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rfind(b")") + 2 :].split()[1]) == pid:
                found.append(int(name))
    return found
