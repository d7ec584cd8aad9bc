"""`RemoteHost`: the one object the CLI and the screens use to act on a GPU host over SSH.

All remote work goes through a small stdlib program (`agent.py`) sent with each command, so the
host needs nothing installed but Python (which SGLang needs anyway) and bash. Argv and env
travel as JSON on stdin, never through a shell, so paths with spaces, quotes, `$()` or newlines
arrive byte-exact.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import asyncssh

from wizard import logstages, nvidia_smi
from wizard.remote.connection import (
    Hop,
    HostKeyPolicy,
    HostSpec,
    RemoteError,
    SshSettings,
    connect_chain,
    is_stall,
    lost_reason,
    resolve_chain,
    stall_timeout_s,
)
from wizard.remote.records import (
    mask_argv,
    mask_env,
    new_run_id,
    secret_values,
    split_secret_argv,
    split_secret_env,
)

AGENT_EXIT_NOT_FOUND = 3
MAX_PARTIAL_LINE = 1 << 20
EFFECTIVE_KEYS: tuple[str, ...] = (
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_draft_model_path",
    "mamba_scheduler_strategy",
    "attention_backend",
    "page_size",
    "max_running_requests",
    "mem_fraction_static",
    "disable_overlap_schedule",
    "tp_size",
)


@cache
def dry_run_runner_source() -> str:
    """Source of the conformance runner (`wizard/conformance/sglang_runner.py`), which runs
    SGLang's real argument code; on a GPU host it runs without fakes (real GPUs, no weights)."""
    return (Path(__file__).resolve().parents[1] / "conformance" / "sglang_runner.py").read_text()


@cache
def agent_source() -> str:
    """The source text of the remote agent."""
    return (Path(__file__).with_name("agent.py")).read_text()


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


class RemoteHost:
    """A connection to one GPU host (through its jump hosts) and every remote action.

    Use `await RemoteHost.connect("alias-or-user@host:port", jumps=[...])` or `async with`.
    The connection is re-made on demand (`reconnect`), which `follow_log` does by itself.
    """

    def __init__(
        self,
        hops: Sequence[Hop],
        settings: SshSettings,
        policy: HostKeyPolicy,
        connections: list[asyncssh.SSHClientConnection],
        agent_python: str = "python3",
        runs_root: str | None = None,
    ) -> None:
        self.hops = list(hops)
        self.runs_root = runs_root
        self.settings = settings
        self.policy = policy
        self._connections = connections
        self.agent_python = agent_python
        self.last_status: RunStatus | None = None
        """The run status sent with the end of the last log stream (saves a round trip)."""
        self.on_notice: Callable[[str], None] | None = None
        """Told when the connection was lost or stalled and is being re-made (the CLI prints
        it, a screen shows it); the action goes on over the new connection."""

    @classmethod
    async def connect(
        cls,
        target: str | HostSpec,
        *,
        jumps: Sequence[str] | None = None,
        settings: SshSettings | None = None,
        policy: HostKeyPolicy | None = None,
        agent_python: str = "python3",
        runs_root: str | None = None,
    ) -> RemoteHost:
        """Resolve the host through ssh config, connect every hop, return the host object."""
        settings = settings or SshSettings()
        policy = policy or HostKeyPolicy()
        hops = resolve_chain(target, jumps, settings)
        connections = await connect_chain(hops, settings, policy)
        return cls(hops, settings, policy, connections, agent_python, runs_root)

    @property
    def label(self) -> str:
        """`user@host:port` of the target (via jump hosts when any)."""
        via = " via " + ", ".join(h.label for h in self.hops[:-1]) if len(self.hops) > 1 else ""
        return self.hops[-1].label + via

    @property
    def host_key(self) -> str:
        """Stable name of the target for run records (`user@hostname:port`)."""
        return self.hops[-1].label

    @property
    def connection(self) -> asyncssh.SSHClientConnection:
        """The connection to the target."""
        return self._connections[-1]

    async def reconnect(self) -> None:
        """Drop the current connections and connect every hop again."""
        await self._close_connections()
        self._connections = await connect_chain(self.hops, self.settings, self.policy)

    async def ensure_connected(self) -> None:
        """Reconnect when the connection to the target was lost (e.g. after a network drop)."""
        if not self._connections or self.connection.is_closed():
            await self.reconnect()

    def _notice(self, text: str) -> None:
        if self.on_notice is not None:
            self.on_notice(text)

    def lost_text(self, during: str, detail: object = None) -> str:
        """`connection to HOST stalled (...)` or `connection to HOST lost (...)`, for what was
        going on (`during`), from why the connection went away."""
        reasons = [lost_reason(conn) for conn in self._connections]
        if any(is_stall(why) for _lost, why in reasons):
            timeout = stall_timeout_s(self.hops[-1], self.settings)
            return (f"connection to {self.label} stalled during {during} (no answer to "
                    f"keepalives for {timeout:g} s)")
        why = next((str(w) for lost, w in reasons if lost and w is not None), None)
        why = why or (str(detail) if detail else "the connection closed")
        return f"connection to {self.label} lost during {during} ({why})"

    def _lost(self) -> bool:
        return not self._connections or any(lost_reason(c)[0] for c in self._connections)

    async def _reconnect_after(self, during: str, detail: object, attempts: int = 5,
                               delay_s: float = 0.5) -> None:
        """Say the connection was lost (or stalled), then re-make it (a few tries, backing off);
        RemoteError when the host stays unreachable."""
        self._notice(self.lost_text(during, detail) + ", reconnecting")
        for attempt in range(1, attempts + 1):
            try:
                await self.reconnect()
            except RemoteError as exc:
                if attempt == attempts:
                    raise RemoteError(
                        f"{self.lost_text(during, detail)}; reconnecting failed: {exc}"
                    ) from exc
                await asyncio.sleep(min(delay_s * attempt, 5.0))  # back-off between attempts
                continue
            self._notice(f"connection to {self.label} re-made")
            return

    async def _close_connections(self) -> None:
        for conn in reversed(self._connections):
            conn.close()
        for conn in reversed(self._connections):
            with contextlib.suppress(asyncssh.Error, OSError):
                await conn.wait_closed()
        self._connections = []

    async def close(self) -> None:
        """Close every hop."""
        await self._close_connections()

    async def __aenter__(self) -> RemoteHost:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ plain commands

    async def run(
        self,
        command: str | Sequence[str],
        *,
        input: str | bytes | None = None,
        timeout_s: float | None = 120,
    ) -> CommandResult:
        """Run a command (a list is shell-quoted) and return its exit status and output."""
        text = command if isinstance(command, str) else shlex.join(command)
        await self.ensure_connected()
        for attempt in (1, 2):
            try:
                result = await self.connection.run(
                    text,
                    input=input,
                    check=False,
                    timeout=timeout_s,
                    encoding="utf-8",
                    errors="replace",
                )
                break
            except asyncssh.ChannelOpenError as exc:
                # The connection died before the command started: safe to reconnect and retry once.
                if attempt == 2:
                    raise RemoteError(f"{self.label}: cannot start a command: {exc}") from exc
                await self.reconnect()
            except asyncssh.TimeoutError as exc:
                raise RemoteError(
                    f"{self.label}: command timed out after {timeout_s}s: {text[:200]}"
                ) from exc
            except (asyncssh.Error, OSError) as exc:
                raise ConnectionLostError(self.lost_text("a command", exc)) from exc
        if result.exit_status is None and result.exit_signal is None and self._lost():
            # neither an exit status nor a signal: the connection went away under the command
            raise ConnectionLostError(self.lost_text("a command"))
        status = result.exit_status if result.exit_status is not None else -1
        return CommandResult(status, str(result.stdout or ""), str(result.stderr or ""))

    def _agent_command(self, *args: str, python: str | None = None) -> str:
        root = ["--root", self.runs_root] if self.runs_root else []
        # -S: the helper is standard library only; skipping `site` starts it faster
        return shlex.join([python or self.agent_python, "-S", "-c", agent_source(), *root, *args])

    async def _agent_json(
        self,
        *args: str,
        payload: Mapping[str, Any] | None = None,
        timeout_s: float = 120,
        python: str | None = None,
        retry: bool = True,
    ) -> Any:
        """Run the helper's `args[0]` action and read its JSON answer. A connection lost or
        stalled meanwhile is said (`on_notice`) and re-made, and the action run again when it
        is safe to repeat (`retry`; else ConnectionLostError)."""
        data = json.dumps(payload) if payload is not None else None
        command = self._agent_command(*args, python=python)
        for attempt in (1, 2, 3):
            try:
                result = await self.run(command, input=data, timeout_s=timeout_s)
                break
            except ConnectionLostError as exc:
                if not retry or attempt == 3:
                    raise
                await self._reconnect_after(f"'{args[0]}'", exc.__cause__ or exc)
        if result.exit_status == AGENT_EXIT_NOT_FOUND:
            raise RunNotFoundError(f"{self.label}: {result.stderr.strip()}")
        if result.exit_status != 0:
            detail = (result.stderr or result.stdout).strip()[-2000:]
            raise RemoteError(
                f"{self.label}: remote helper '{args[0]}' failed (exit {result.exit_status}): {detail}"
            )
        try:
            return json.loads(result.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError) as exc:
            raise RemoteError(
                f"{self.label}: unreadable answer from the remote helper: {result.stdout[-500:]!r}"
            ) from exc

    # ------------------------------------------------------------------ preflight

    async def preflight(self, request: PreflightRequest) -> PreflightReport:
        """Check versions, GPUs, port, paths, disk and (when argv is given) SGLang's own dry run
        (a container request runs inside the image: `wizard.remote.container.run_preflight`)."""
        if request.container is not None:
            raise ValueError("a container preflight runs inside the image: "
                             "wizard.remote.container.run_preflight(host, request)")
        payload = preflight_payload(request, request.python, request.port)
        raw = await self._agent_json(
            "preflight", payload=payload, timeout_s=request.dry_run_timeout_s + 180
        )
        return build_preflight_report(raw, request)

    async def versions(
        self, python: str = "python3", env: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """`{"python": "3.12.3", "sglang": "X.Y.Z" | None, "error": ...}` for that python and env."""
        return dict(
            await self._agent_json("versions", payload={"python": python, "env": dict(env or {})})
        )

    async def model_files(
        self, path: str, names: Sequence[str], env: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """The named small text files of a model folder on the host (missing ones are left out).
        A repo id ORG/NAME is looked up in the host's HF cache (`env`: the launch env, e.g.
        HF_HOME, as SGLang would see it)."""
        payload = {"path": path, "names": list(names), "env": dict(env or {})}
        data = await self._agent_json("model-files", payload=payload)
        return {str(k): str(v) for k, v in (data.get("files") or {}).items()}

    async def list_models(
        self, roots: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> list[dict[str, str | None]]:
        """Models on the host: its HF cache (`kind` cache, `name` repo id, `path` snapshot; `env`
        may set HF_HOME / HF_HUB_CACHE as the launch would) and folders holding config.json
        directly under `roots` (`kind` folder)."""
        payload = {"roots": list(roots), "env": dict(env or {})}
        data = await self._agent_json("list-models", payload=payload)
        return [
            {"kind": str(m.get("kind")), "name": str(m.get("name")), "path": m.get("path")}
            for m in data.get("models") or []
            if isinstance(m, dict)
        ]

    # ------------------------------------------------------------------ launch and runs

    async def launch(self, request: LaunchRequest) -> RunStatus:
        """Start the server detached in a new run directory; returns its status (pgid, dir)."""
        run_id = request.run_id or new_run_id()
        plain, secret = split_secret_env(request.env)
        masked_argv, secret_argv = split_secret_argv(request.argv)
        payload = {
            "run_id": run_id,
            "argv": masked_argv,
            "secret_argv": {str(k): v for k, v in secret_argv.items()},
            "env": plain,
            "secret_env": secret,
            "secret_mask": secret_values(request.env, request.argv),
            "python": request.python,
            "profile_toml": request.profile_toml,
            "port": request.port,
            "workdir": request.workdir,
            "profile_hash": request.profile_hash,
            "command_text": render_command_text(request.python, request.argv, request.env),
        }
        if request.container is not None:
            payload["container"] = request.container
            payload["command_text"] = render_container_text(request.container, request.argv)
        try:
            data = await self._agent_json("launch", payload=payload, timeout_s=60, retry=False)
        except ConnectionLostError as exc:
            # Did it start before the connection went? Then that is the run; else start it now.
            await self._reconnect_after("'launch'", exc.__cause__ or exc)
            try:
                return await self.run_status(run_id)
            except RunNotFoundError:
                data = await self._agent_json("launch", payload=payload, timeout_s=60)
        return RunStatus.from_json(data)

    async def list_runs(self) -> list[RunStatus]:
        """Every run directory on the host, oldest first."""
        data = await self._agent_json("status")
        return [RunStatus.from_json(item) for item in data]

    async def run_status(self, run_id: str, tail_lines: int | None = None) -> RunStatus:
        """The status of one run (`RunNotFoundError` when it does not exist); with `tail_lines`,
        `tail_offset` is where the log's last lines begin."""
        args = ["status", run_id] + ([str(tail_lines)] if tail_lines is not None else [])
        return RunStatus.from_json(await self._agent_json(*args))

    async def prune(self, older_than_s: float, dry_run: bool = False) -> dict[str, Any]:
        """Delete run directories (never a live run's) that ended more than `older_than_s` ago."""
        args = ["prune", str(older_than_s)] + (["dry"] if dry_run else [])
        return dict(await self._agent_json(*args))

    async def stop(self, run_id: str, timeout_s: float = 30.0) -> StopResult:
        """TERM the run's process group, KILL after `timeout_s`, confirm nothing is left."""
        data = await self._agent_json("stop", run_id, str(timeout_s), timeout_s=timeout_s + 60)
        return StopResult(
            run_id=run_id,
            was_running=bool(data["was_running"]),
            killed=bool(data["killed"]),
            processes_before=list(data["processes_before"]),
            remaining=list(data["remaining"]),
            gpu_checked=bool(data["gpu_checked"]),
            gpu_holders_left=list(data["gpu_holders_left"]),
            container=data.get("container"),
            container_removed=data.get("container_removed"),
        )

    async def crash_report(self, run_id: str, sglang_version: str | None = None) -> CrashReport:
        """Find the last traceback in the whole log on the host (not only the tail) and explain it."""
        data = await self._agent_json("inspect", run_id, timeout_s=600)
        scanner = logstages.TracebackScanner()
        scanner.feed_many(str(data.get("traceback_text") or "").splitlines())
        traceback = scanner.last
        if traceback is not None and data.get("traceback_line"):
            traceback = replace(traceback, start_line=int(data["traceback_line"]))
        oom = None
        for number, line in data.get("oom_lines") or []:
            oom = logstages.detect_oom(line, int(number)) or oom
        explanation = logstages.explain_crash(traceback, oom, sglang_version)
        status = RunStatus.from_json(data["status"]) if data.get("status") else None
        return CrashReport(
            explanation,
            data.get("traceback_line"),
            int(data.get("log_size") or 0),
            status,
            data.get("kernel"),
        )

    # ------------------------------------------------------------------ log stream

    async def follow_log(
        self,
        run_id: str,
        from_offset: int = 0,
        *,
        poll_s: float = 0.1,
        max_reconnects: int = 20,
        reconnect_delay_s: float = 0.5,
        tail_lines: int | None = None,
    ) -> AsyncIterator[LogChunk]:
        """Stream a run's log from a byte offset (or its last `tail_lines` lines) as complete
        lines, until the server has exited.

        A dropped connection is re-made and the stream resumes from the end of the last complete
        line delivered: no line is lost or repeated. Stop early by breaking out of the loop.
        `last_status` is the run's status the host sent with the end of the stream.
        """
        offset = from_offset
        reconnected = False
        failures = 0
        tail = tail_lines
        self.last_status = None
        while True:
            try:
                async for chunk in self._stream_once(run_id, offset, poll_s, reconnected, tail):
                    offset = chunk.end_offset
                    tail = None
                    reconnected = False
                    failures = 0
                    yield chunk
                return
            except _StreamDropped as exc:
                failures += 1
                if failures > max_reconnects:
                    raise RemoteError(
                        f"{self.label}: log stream of {run_id} dropped {failures} times; last: {exc}"
                    ) from exc
                self._notice(self.lost_text("the log stream", exc) + ", reconnecting")
                await asyncio.sleep(min(reconnect_delay_s * failures, 5.0))  # back-off
                try:
                    await self.reconnect()
                except RemoteError:
                    continue
                self._notice(f"connection to {self.label} re-made")
                reconnected = True

    async def _stream_once(
        self, run_id: str, offset: int, poll_s: float, reconnected: bool, tail: int | None
    ) -> AsyncIterator[LogChunk]:
        extra = [str(tail)] if tail is not None else []
        command = self._agent_command("follow", run_id, str(offset), str(poll_s), *extra)
        try:
            await self.ensure_connected()
            process = await self.connection.create_process(command, encoding=None)
        except RemoteError as exc:
            raise _StreamDropped(str(exc)) from exc
        except (asyncssh.Error, OSError, IndexError) as exc:
            raise _StreamDropped(str(exc)) from exc
        buffer = b""
        base: int | None = None
        shown_partial = b""
        try:
            while True:
                try:
                    data = await process.stdout.read(1 << 20)
                except (asyncssh.Error, OSError) as exc:
                    raise _StreamDropped(str(exc)) from exc
                if not data:
                    break
                buffer += data
                if base is None:  # the agent's header line: where the stream starts
                    newline = buffer.find(b"\n")
                    if newline < 0:
                        continue
                    base = int(json.loads(buffer[:newline]).get("start", offset))
                    buffer = buffer[newline + 1 :]
                cut = _last_line_end(buffer)
                if cut == 0 and len(buffer) >= MAX_PARTIAL_LINE:
                    cut = len(buffer)  # a pathological line: deliver it in pieces
                complete, buffer = buffer[:cut], buffer[cut:]
                partial = buffer.strip(b"\r\n") if buffer != shown_partial else b""
                shown_partial = buffer
                if not complete and not partial:
                    continue
                lines = split_log_lines(complete.decode("utf-8", "replace")) if complete else []
                yield LogChunk(
                    base,
                    base + len(complete),
                    lines,
                    reconnected,
                    partial.decode("utf-8", "replace"),
                )
                reconnected = False
                base += len(complete)
            try:
                await process.wait_closed()
            except (asyncssh.Error, OSError) as exc:
                raise _StreamDropped(str(exc)) from exc
            status = process.exit_status
            stderr = await _read_all(process.stderr)
        finally:
            process.close()
        if status is None or status < 0:
            raise _StreamDropped(f"stream ended without exit status (signal {process.exit_signal})")
        if status != 0:
            raise RemoteError(f"{self.label}: cannot follow {run_id}: {stderr.strip()}")
        with contextlib.suppress(ValueError, IndexError, KeyError, TypeError):
            self.last_status = RunStatus.from_json(json.loads(stderr.strip().splitlines()[-1]))
        if buffer and base is not None:  # the final line of a finished server without a newline
            lines = split_log_lines(buffer.decode("utf-8", "replace"))
            yield LogChunk(base, base + len(buffer), lines, reconnected)

    # ------------------------------------------------------------------ the server's HTTP API

    async def forward_port(self, remote_port: int, local_port: int = 0) -> asyncssh.SSHListener:
        """Forward a local port (0: any free one, see `.get_port()`) to the server's port."""
        await self.ensure_connected()
        return await self.connection.forward_local_port(
            "127.0.0.1", local_port, "127.0.0.1", remote_port
        )

    async def http_request(
        self,
        port: int,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        timeout_s: float = 60,
        api_key: str | None = None,
    ) -> tuple[int, bytes]:
        """One HTTP/1.0 request to 127.0.0.1:port on the host, carried by the SSH connection
        (with `Authorization: Bearer API_KEY` when a key is given)."""
        payload = json.dumps(body).encode() if body is not None else b""
        auth = f"Authorization: Bearer {api_key}\r\n" if api_key else ""
        head = (
            f"{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"{auth}Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
        ).encode()

        await self.ensure_connected()

        async def exchange() -> bytes:
            reader, writer = await self.connection.open_connection("127.0.0.1", port, encoding=None)
            try:
                writer.write(head + payload)
                writer.write_eof()
                data = b""
                while chunk := await reader.read(65536):
                    data += chunk
                return data
            finally:
                writer.close()

        try:
            raw = await asyncio.wait_for(exchange(), timeout_s)
        except (asyncssh.Error, OSError, TimeoutError) as exc:  # ChannelOpenError, ConnectionLost
            raise RemoteError(f"{self.label}: no HTTP answer on port {port}: {exc}") from exc
        header, _, content = raw.partition(b"\r\n\r\n")
        try:
            status = int(header.split(b" ", 2)[1])
        except (IndexError, ValueError) as exc:
            raise RemoteError(
                f"{self.label}: bad HTTP answer on port {port}: {raw[:200]!r}"
            ) from exc
        return status, content

    async def check_ready(
        self, port: int, prompt: str = "The capital of France is", api_key: str | None = None
    ) -> ReadyReport:
        """Health endpoint, one short generation, and the speculative values the server reports
        (sending the server's API key when it has one)."""
        health, _ = await self.http_request(port, "GET", "/health", api_key=api_key)
        gen_status, gen_body = await self.http_request(
            port,
            "POST",
            "/generate",
            {"text": prompt, "sampling_params": {"max_new_tokens": 8, "temperature": 0}},
            api_key=api_key,
        )
        try:
            generated = str(json.loads(gen_body).get("text", ""))
        except (ValueError, AttributeError):
            generated = gen_body.decode(errors="replace")[:200]
        info_status, info_body = await self.http_request(
            port, "GET", "/get_server_info", api_key=api_key
        )
        speculative: dict[str, Any] = {}
        accept: float | None = None
        if info_status == 200:
            try:
                info = json.loads(info_body)
            except ValueError:
                info = {}
            speculative = {
                k: info.get(k)
                for k in EFFECTIVE_KEYS
                if k.startswith("speculative") and info.get(k) is not None
            }
            states = info.get("internal_states") or [{}]
            value = states[0].get("avg_spec_accept_length") if states else None
            accept = float(value) if isinstance(value, int | float) else None
        return ReadyReport(health, gen_status, generated, speculative, accept, info_status)


def _last_line_end(buffer: bytes) -> int:
    """Index just past the last safe line end: a newline, or a carriage return not at the very
    end (it may be the first half of CRLF). 0 when there is none."""
    end = max(buffer.rfind(b"\n"), buffer.rfind(b"\r", 0, len(buffer) - 1))
    return end + 1


def split_log_lines(text: str) -> list[str]:
    """Split complete log text into lines; carriage-return updates (tqdm bars) count as lines."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    if "\r" not in text:
        return parts  # the common case: no progress bars in this block
    lines: list[str] = []
    for part in parts:
        if "\r" in part:
            lines.extend(segment for segment in part.split("\r") if segment)
        else:
            lines.append(part)
    return lines


class RunNotFoundError(RemoteError):
    """The host has no run directory of that id."""


class ConnectionLostError(RemoteError):
    """The connection went away (dropped or stalled) while a command ran on the host."""


class _StreamDropped(Exception):
    """The log stream ended without the remote follower finishing: reconnect and resume."""


async def _read_all(stream: Any) -> str:
    try:
        data = await stream.read()
    except (asyncssh.Error, OSError):
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else str(data)


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
