"""Real OpenSSH `sshd` servers on 127.0.0.1 for the SSH tests and the bench.

Each server gets its own host key, config and log in a temp dir and is started with
`/usr/sbin/sshd -D -e -f CONFIG`; readiness is polled (SSH banner on the port, bounded).
Nothing is skipped silently: if sshd cannot start, `SshdError` says why (with sshd's log).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = Path("/usr/sbin/sshd")
READY_TIMEOUT_S = 15.0


class SshdError(RuntimeError):
    """sshd could not be started or stopped."""


def _ephemeral_low() -> int:
    """The lowest port the kernel hands to outgoing connections (32768 when unreadable)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(span: int = 1) -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago, with the `span - 1` ports after it.

    Picked below the kernel's ephemeral range: a port from `bind(0)` lies inside it, so an
    outgoing connection (ssh, a rendezvous probe) may take it, or the port after it that the
    stand-in's start-up barrier uses, before the server under test binds it.
    """
    high = max(_ephemeral_low() - span, 11000)
    for _attempt in range(200):
        port = random.randrange(10000, high)
        with contextlib.ExitStack() as stack:
            try:
                for offset in range(span):
                    sock = stack.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port + offset))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range after 200 tries")


def keygen(path: Path) -> str:
    """Create an ed25519 key pair at path (no passphrase); return the public key line."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return Path(f"{path}.pub").read_text().strip()


@dataclass
class Sshd:
    """One running sshd."""

    name: str
    directory: Path
    port: int
    host_key: Path
    host_public_key: str
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    extra_config: list[str] = field(default_factory=list)

    def known_hosts_line(self) -> str:
        """`[127.0.0.1]:PORT type base64` for a known_hosts file."""
        key_type, key_data = self.host_public_key.split()[:2]
        return f"[127.0.0.1]:{self.port} {key_type} {key_data}"

    def connection_children(self) -> list[int]:
        """Pids of the per-connection sshd processes (children of the listener)."""
        assert self.process is not None
        children = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if int(fields[1]) == self.process.pid:
                children.append(int(name))
        return children

    def drop_connections(self) -> list[int]:
        """SIGKILL every per-connection sshd process: all clients lose their connection at once."""
        killed = self.connection_children()
        for pid in killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return killed

    def session_processes(self) -> list[int]:
        """Pids of every sshd process below the listener (each connection's monitor and its
        session process), not the commands they run."""
        assert self.process is not None
        parents: dict[int, int] = {}
        names: dict[int, str] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            names[int(name)] = stat[stat.find(b"(") + 1 : stat.rfind(b")")].decode(errors="replace")
            parents[int(name)] = int(stat[stat.rfind(b")") + 2 :].split()[1])
        below: list[int] = []
        frontier = [self.process.pid]
        while frontier:
            parent = frontier.pop()
            for pid, ppid in parents.items():
                if ppid == parent and names.get(pid, "").startswith("sshd"):
                    below.append(pid)
                    frontier.append(pid)
        return below

    def stall_connections(self) -> list[int]:
        """SIGSTOP every connection's sshd processes: the TCP connections stay open but nothing
        comes back (a stalled link); new connections are served. Kill them with
        `end_stalled` (SIGKILL ends a stopped process)."""
        stalled = self.session_processes()
        for pid in stalled:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        return stalled

    @staticmethod
    def end_stalled(pids: list[int]) -> None:
        """SIGKILL the stalled processes (their clients see the connection close)."""
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """Stop the listener and its connections."""
        if self.process is None:
            return
        self.drop_connections()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


def start_sshd(
    directory: Path,
    name: str,
    authorized_keys: Path,
    log_level: str = "ERROR",
    extra_config: list[str] | None = None,
) -> Sshd:
    """Write keys and config into directory/name and start sshd; wait until it speaks SSH."""
    if not SSHD.exists():
        raise SshdError(f"{SSHD} is missing: run scripts/ensure-system-packages.sh (Debian openssh-server)")
    # The privilege-separation dir sshd insists on; without root, sshd runs unprivileged for its
    # own user and says so in its log if it cannot.
    with contextlib.suppress(PermissionError):
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    base = directory / name
    base.mkdir(parents=True, exist_ok=True)
    host_key = base / "host_key"
    public = keygen(host_key)
    port = free_port()
    log_path = base / "sshd.log"
    config = base / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {host_key}",
                f"AuthorizedKeysFile {authorized_keys}",
                f"PidFile {base / 'sshd.pid'}",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin yes",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "AllowTcpForwarding yes",
                "AllowAgentForwarding no",
                "X11Forwarding no",
                "PrintMotd no",
                "MaxStartups 200",
                "MaxSessions 100",
                f"LogLevel {log_level}",
                "Subsystem sftp internal-sftp",
                *(extra_config or []),
                "",
            ]
        )
    )
    check = subprocess.run([str(SSHD), "-t", "-f", str(config)], capture_output=True, text=True)
    if check.returncode != 0:
        raise SshdError(f"sshd rejects its test config {config}: {check.stderr.strip()}")
    log = open(log_path, "wb")  # noqa: SIM115 - handed to the child process
    process = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)], stdout=log, stderr=log)
    log.close()
    server = Sshd(name, base, port, host_key, public, log_path, process, list(extra_config or []))
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise SshdError(f"sshd {name} exited with {process.returncode}: {log_path.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                if sock.recv(64).startswith(b"SSH-"):
                    return server
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise SshdError(f"sshd {name} did not answer on port {port} within {READY_TIMEOUT_S}s")
        time.sleep(0.05)  # polling interval of the readiness probe (bounded by the deadline)
