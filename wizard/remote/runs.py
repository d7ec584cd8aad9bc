"""A run on a GPU host as plain data: what a launch asks for (`LaunchRequest`, and the readable
command text written to the run directory), what the agent reports (`RunStatus`, `LogChunk`,
`CommandResult`), what `stop` confirmed (`StopResult`), what the server answered when ready
(`ReadyReport`) and what its log says about a crash (`CrashReport`).

The run records kept on this machine are `wizard.remote.records`.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wizard import logstages
from wizard.remote.records import mask_argv, mask_env


@dataclass(frozen=True)
class CommandResult:
    """Exit status and output of a remote command."""

    exit_status: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class LogChunk:
    """Complete log lines from byte `offset` to `end_offset` (the resume point)."""

    offset: int
    end_offset: int
    lines: list[str]
    reconnected: bool = False
    partial: str = ""
    """Text after the last line end, not complete yet (a progress bar's newest state): shown at
    once, delivered again as a line when it completes (its bytes are not in `end_offset`)."""


@dataclass(frozen=True)
class RunStatus:
    """A run directory on the host as the agent sees it now."""

    run_id: str
    run_dir: str
    pgid: int | None
    alive: bool
    processes: list[int]
    exit_code: int | None
    stopped: dict[str, Any] | None
    log_size: int
    meta: dict[str, Any]
    leftover: list[int] = field(default_factory=list)
    """Processes of the run still alive after the server itself ended (e.g. after a SIGKILL)."""
    server_exit: dict[str, Any] | None = None
    """`{"pid", "code", "signal"}` of the server process, as its log filter saw it end."""
    tail_offset: int | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunStatus:
        """Build from the agent's JSON."""
        return cls(
            run_id=str(data["run_id"]),
            run_dir=str(data["run_dir"]),
            pgid=data.get("pgid"),
            alive=bool(data.get("alive")),
            processes=list(data.get("processes") or []),
            exit_code=data.get("exit_code"),
            stopped=data.get("stopped"),
            log_size=int(data.get("log_size") or 0),
            meta=dict(data.get("meta") or {}),
            leftover=list(data.get("leftover") or []),
            server_exit=data.get("server_exit"),
            tail_offset=data.get("tail_offset"),
        )

    @property
    def container(self) -> str | None:
        """The container's name for a container run."""
        box = self.meta.get("container")
        return str(box.get("name")) if isinstance(box, dict) and box.get("name") else None

    @property
    def signal(self) -> int | None:
        """The signal that ended the server (9 for SIGKILL, e.g. by the OOM killer), if any."""
        value = (self.server_exit or {}).get("signal")
        if value is None and self.exit_code is not None and 128 < self.exit_code < 160:
            value = self.exit_code - 128
        return int(value) if value else None

    @property
    def state(self) -> str:
        """running | stopped | exited(N) | killed(SIGNAME) | unknown, plus `, N left` for
        processes that outlived the server."""
        left = f", {len(self.leftover)} process(es) left" if self.leftover else ""
        if self.alive:
            return "running"
        if self.stopped:
            return "stopped" + left
        if self.signal is not None and not self.stopped:
            return f"killed({signal_name(self.signal)})" + left
        if self.exit_code is not None:
            return f"exited({self.exit_code})" + left
        return "unknown" + left


def signal_name(number: int) -> str:
    """`SIGKILL` for 9 (the name on this machine; Linux numbering on the host is the same)."""
    import signal as _signal

    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass(frozen=True)
class StopResult:
    """What `stop` did and what it confirmed afterwards."""

    run_id: str
    was_running: bool
    killed: bool
    processes_before: list[int]
    remaining: list[int]
    gpu_checked: bool
    gpu_holders_left: list[int]
    container: str | None = None
    """The run's container (a container run), which stop removes."""
    container_removed: bool | None = None

    @property
    def clean(self) -> bool:
        """No process of the run left, no GPU memory held by one of them, no container left."""
        return (
            not self.remaining and not self.gpu_holders_left and self.container_removed is not False
        )


@dataclass
class LaunchRequest:
    """What the core hands to a launch: argv after `python -m sglang.launch_server`, env, python."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    python: str = "python3"
    profile_toml: str = ""
    port: int | None = None
    workdir: str | None = None
    run_id: str | None = None
    profile_hash: str | None = None
    container: dict[str, Any] | None = None
    """A container launch (`wizard.remote.container.launch_spec`): the runtime's words; None
    runs `python` on the host."""


@dataclass(frozen=True)
class ReadyReport:
    """What the running server answered through the SSH connection."""

    health_status: int
    generate_status: int
    generated_text: str
    speculative: dict[str, Any]
    avg_spec_accept_length: float | None
    info_status: int = 200

    @property
    def problem(self) -> str | None:
        """Why the server is not really ready (None when it answered everything)."""
        statuses = {
            "/health": self.health_status,
            "/generate": self.generate_status,
            "/get_server_info": self.info_status,
        }
        refused = [path for path, code in statuses.items() if code in (401, 403)]
        if refused:
            codes = ", ".join(f"HTTP {statuses[p]} on {p}" for p in refused)
            return f"server refused the API key ({codes})"
        del statuses["/get_server_info"]  # optional: only a refusal there counts
        failed = [f"HTTP {code} on {path}" for path, code in statuses.items() if code != 200]
        return f"the server answered {', '.join(failed)}" if failed else None

    def summary_lines(self) -> list[str]:
        """What the server answered, for the terminal: /health and the test prompt, then the
        speculative values it reports (one node or rank 0 of several say the same)."""
        lines = [f"  /health: {self.health_status}; test prompt -> "
                 + (repr(self.generated_text) if self.generate_status == 200
                    else f"HTTP {self.generate_status}")]
        if self.speculative:
            values = ", ".join(
                f"{k.removeprefix('speculative_')}={v}" for k, v in self.speculative.items()
            )
            lines.append(f"  speculative values the server reports: {values}")
        if self.avg_spec_accept_length is not None:
            lines.append(f"  average accept length: {self.avg_spec_accept_length:.2f}")
        return lines


@dataclass(frozen=True)
class CrashReport:
    """The last traceback and OOM lines found in the whole log, mapped to a rule when known."""

    explanation: logstages.CrashExplanation
    traceback_line: int | None
    log_size: int
    status: RunStatus | None = None
    kernel: dict[str, Any] | None = None
    """`{"readable", "oom", "line"}`: the kernel log about a SIGKILLed server (OOM killer)."""

    def killed_lines(self, run_id: str, stop_hint: str) -> list[str]:
        """What to say about a server that died by a signal and the processes it left."""
        lines: list[str] = []
        status = self.status
        if status is None:
            return lines
        number = status.signal
        if number is not None:
            name = signal_name(number)
            pid = (status.server_exit or {}).get("pid")
            lines.append(f"the server (pid {pid}) was killed by {name} (signal {number})")
            kernel = self.kernel or {}
            if number == 9:
                if kernel.get("oom"):
                    lines.append(f"the kernel's OOM killer killed it: {kernel.get('line')}")
                elif kernel.get("readable"):
                    lines.append("the kernel log does not mention it: not the OOM killer")
                else:
                    lines.append(
                        "SIGKILL is what the kernel's OOM killer sends when the host runs out of "
                        "RAM; the kernel log (dmesg) is not readable here to confirm it"
                    )
        if status.leftover:
            lines.append(
                f"processes of the run still alive: {' '.join(map(str, status.leftover))} "
                f"(they may hold GPU memory); stop them with: {stop_hint}"
            )
        return lines


def render_command_text(python: str, argv: Sequence[str], env: Mapping[str, str]) -> str:
    """A readable, correctly quoted shell command (secret env values and flags masked)."""
    masked_env = mask_env(env)
    env_part = " ".join(f"{k}={shlex.quote(v)}" for k, v in masked_env.items())
    command = shlex.join([python, "-m", "sglang.launch_server", *mask_argv(argv)])
    header = "#!/bin/sh\n# Written by sglang-wizard for reading; secrets are masked (***).\n"
    return header + (f"env {env_part} " if env_part else "") + command + "\n"


def render_container_text(container: Mapping[str, Any], argv: Sequence[str]) -> str:
    """The container launch as readable text for the run directory (secrets masked; the wizard
    hands secrets to the container through a FIFO, not through these words)."""
    words = [*container["runtime"], "run", *container["run_args"], container["image"],
             container["python"], "-m", "sglang.launch_server", *mask_argv(argv)]
    return ("#!/bin/sh\n# Written by sglang-wizard for reading; secrets are masked (***) and "
            "reach the container through a pipe.\n" + shlex.join(words) + "\n")
