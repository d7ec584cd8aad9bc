"""Fixtures: two real sshd on loopback (target and jump host), keys, ssh config, known_hosts."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from wizard.remote.connection import HostKeyPolicy, SshSettings
from wizard.remote.session import RemoteHost

from .helpers import REMOTE_PYTHON, USER
from .sshd_harness import Sshd, keygen, start_sshd


@dataclass
class SshLab:
    """Everything a test needs to reach the loopback hosts."""

    directory: Path
    target: Sshd
    jump: Sshd
    user_key: Path
    ssh_config: Path
    known_hosts: Path

    def settings(self, known_hosts: Path | None = None) -> SshSettings:
        """Hermetic settings: our config, our key, no agent."""
        return SshSettings(
            config_paths=[self.ssh_config],
            known_hosts=known_hosts or self.known_hosts,
            global_known_hosts=[],  # hermetic: not the machine's /etc/ssh/ssh_known_hosts
            client_keys=[self.user_key],
            use_agent=False,
            keepalive_interval_s=5,
            connect_timeout_s=10,
        )

    @property
    def target_spec(self) -> str:
        """`USER@127.0.0.1:PORT` of the target sshd."""
        return f"{USER}@127.0.0.1:{self.target.port}"

    @property
    def jump_spec(self) -> str:
        """`USER@127.0.0.1:PORT` of the jump sshd."""
        return f"{USER}@127.0.0.1:{self.jump.port}"


@pytest.fixture(scope="session")
def ssh_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshLab]:
    directory = tmp_path_factory.mktemp("sshlab")
    user_key = directory / "user_key"
    authorized = directory / "authorized_keys"
    authorized.write_text(keygen(user_key) + "\n")
    target = start_sshd(directory, "target", authorized)
    jump = start_sshd(directory, "jump", authorized, log_level="DEBUG1")
    try:
        known_hosts = directory / "known_hosts"
        known_hosts.write_text(target.known_hosts_line() + "\n" + jump.known_hosts_line() + "\n")
        ssh_config = directory / "ssh_config"
        ssh_config.write_text(
            f"Host bastion\n  HostName 127.0.0.1\n  Port {jump.port}\n  User {USER}\n  IdentityFile {user_key}\n\n"
            f"Host gpu-box\n  HostName 127.0.0.1\n  Port {target.port}\n  User {USER}\n  IdentityFile {user_key}\n\n"
            f"Host gpu-behind\n  HostName 127.0.0.1\n  Port {target.port}\n  User {USER}\n"
            f"  IdentityFile {user_key}\n  ProxyJump bastion\n\n"
            "Host *\n  GlobalKnownHostsFile none\n"  # hermetic: not /etc/ssh/ssh_known_hosts
        )
        yield SshLab(directory, target, jump, user_key, ssh_config, known_hosts)
    finally:
        target.stop()
        jump.stop()


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    """A private runs directory on the "remote" host for one test."""
    root = tmp_path / "remote-runs"
    return root


@pytest.fixture
def cli_args(ssh_lab: SshLab, runs_root: Path, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The CLI's reach options for the lab host (ssh config, known hosts, key, runs dir), with a
    private state dir for the run records."""
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    return [
        "--ssh-config", str(ssh_lab.ssh_config), "--known-hosts", str(ssh_lab.known_hosts),
        "-i", str(ssh_lab.user_key), "--no-agent", "--remote-runs-dir", str(runs_root),
        "--agent-python", sys.executable,
    ]


@pytest.fixture
async def host(ssh_lab: SshLab, runs_root: Path) -> AsyncIterator[RemoteHost]:
    """A RemoteHost connected directly to the target sshd."""
    remote = await RemoteHost.connect(
        ssh_lab.target_spec,
        settings=ssh_lab.settings(),
        policy=HostKeyPolicy(),
        agent_python=REMOTE_PYTHON,
        runs_root=str(runs_root),
    )
    try:
        yield remote
    finally:
        await remote.close()
