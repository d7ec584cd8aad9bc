"""`RemoteHost`: the one object the CLI and the screens use to act on a GPU host over SSH.

All remote work goes through a small stdlib program (`agent.py`) sent with each command, so the
host needs nothing installed but Python (which SGLang needs anyway) and bash. Argv and env
travel as JSON on stdin, never through a shell, so paths with spaces, quotes, `$()` or newlines
arrive byte-exact.

What a launch asks for and what the host answers about a run are plain data in
`wizard.remote.runs`; the checks before a launch in `wizard.remote.preflight`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import asyncssh

from wizard import logstages
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
from wizard.remote.preflight import (
    PreflightReport,
    PreflightRequest,
    build_preflight_report,
    preflight_payload,
)
from wizard.remote.records import new_run_id, secret_values, split_secret_argv, split_secret_env
from wizard.remote.runs import (
    CommandResult,
    CrashReport,
    LaunchRequest,
    LogChunk,
    ReadyReport,
    RunStatus,
    StopResult,
    render_command_text,
    render_container_text,
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
def agent_source() -> str:
    """The source text of the remote agent."""
    return (Path(__file__).with_name("agent.py")).read_text()


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
