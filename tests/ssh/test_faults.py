"""Fault tests: the SSH connection dies mid-stream; the log resumes with nothing lost or doubled."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.remote.connection import HostKeyPolicy
from wizard.remote.session import RemoteHost

from .conftest import SshLab
from .helpers import REMOTE_PYTHON, alive, model_dir, request
from .sshd_harness import free_port

pytestmark = pytest.mark.ssh

EXTRA_LINES = 100_000


async def _follow_with_drops(
    host: RemoteHost, run_id: str, drop: callable, drops: int  # type: ignore[valid-type]
) -> tuple[list[str], int, int]:
    """Follow until the last extra line; `drop()` the connection after the first chunk and after
    the first chunk of each new connection (chunks already buffered from a dropped one are not
    a live connection)."""
    lines: list[str] = []
    reconnections = 0
    dropped = 0
    chunks = 0
    last = f"#token: {EXTRA_LINES - 1},"
    async for chunk in host.follow_log(run_id, 0, poll_s=0.02, reconnect_delay_s=0.05):
        chunks += 1
        reconnections += chunk.reconnected
        lines.extend(chunk.lines)
        if dropped < drops and (chunks == 1 or chunk.reconnected):
            assert drop(), "no connection to drop"
            dropped += 1
        if any(last in line for line in chunk.lines):
            break
    return lines, reconnections, dropped


def _expected_lines(runs_root: Path, run_id: str, count: int) -> list[str]:
    from wizard.remote.session import split_log_lines

    text = (runs_root / run_id / "log").read_bytes().decode()
    return split_log_lines(text)[:count]


async def test_log_resumes_after_the_connection_is_killed(
    host: RemoteHost, ssh_lab: SshLab, runs_root: Path, tmp_path: Path
) -> None:
    port = free_port()
    launched = await host.launch(request(model_dir(tmp_path), port, STAND_IN_EXTRA_LINES=str(EXTRA_LINES)))
    try:
        lines, reconnections, dropped = await _follow_with_drops(
            host, launched.run_id, ssh_lab.target.drop_connections, drops=3
        )
        assert dropped == 3 and reconnections >= 3
        assert lines == _expected_lines(runs_root, launched.run_id, len(lines))  # nothing lost or doubled
        assert sum("Decode batch" in line for line in lines) == EXTRA_LINES
        status = await host.run_status(launched.run_id)
        assert status.alive and all(alive(pid) for pid in status.processes)  # the server kept running
    finally:
        await host.stop(launched.run_id, timeout_s=10)


async def test_log_resumes_when_the_jump_host_connection_dies(
    ssh_lab: SshLab, runs_root: Path, tmp_path: Path
) -> None:
    host = await RemoteHost.connect(
        "gpu-behind", settings=ssh_lab.settings(), policy=HostKeyPolicy(),
        agent_python=REMOTE_PYTHON, runs_root=str(runs_root),
    )
    try:
        port = free_port()
        launched = await host.launch(request(model_dir(tmp_path), port, STAND_IN_EXTRA_LINES=str(EXTRA_LINES)))
        lines, reconnections, dropped = await _follow_with_drops(
            host, launched.run_id, ssh_lab.jump.drop_connections, drops=1
        )
        assert dropped == 1 and reconnections >= 1
        assert lines == _expected_lines(runs_root, launched.run_id, len(lines))
        await host.stop(launched.run_id, timeout_s=10)
    finally:
        await host.close()
