"""SSH connections: host specs, `~/.ssh/config` resolution, jump hosts and the host-key policy.

Every hop of a jump chain is connected explicitly (`tunnel=` the previous connection) with the
same host-key policy, so no hop is trusted silently (asyncssh applies call options only to the
final host of an implicit ProxyJump). Host keys:

* known in `known_hosts` -> accepted;
* not known -> refused with `UnknownHostKeyError` carrying the SHA256 fingerprint, unless that
  exact fingerprint is in `HostKeyPolicy.trusted_fingerprints` (then it is also appended to
  known_hosts when `remember` is set, as OpenSSH would);
* known_hosts lists other keys for the host -> refused with `ChangedHostKeyError`, always.

Passwords are never asked for or stored: authentication is by agent and key files.
"""

from __future__ import annotations

import getpass
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh
from asyncssh.config import SSHClientConfig

MAX_JUMP_DEPTH = 8
_SPEC = re.compile(r"^(?:(?P<user>[^@\s]+)@)?(?P<host>\[[^\]]+\]|[^:\s@]+)(?::(?P<port>\d+))?$")


class RemoteError(Exception):
    """A remote action failed; the message says which host/hop and what to do."""


class HostSpecError(RemoteError, ValueError):
    """A host given as text cannot be read."""


class UnknownHostKeyError(RemoteError):
    """The host offered a key that known_hosts does not list: the user must confirm it."""

    def __init__(self, host: str, port: int, fingerprint: str, key_type: str) -> None:
        self.host, self.port, self.fingerprint, self.key_type = host, port, fingerprint, key_type
        super().__init__(
            f"host key of {host}:{port} is not known ({key_type} {fingerprint}). Verify this "
            f"fingerprint with the host's administrator, then trust it explicitly "
            f"(CLI: --trust-host-key {fingerprint})."
        )


class ChangedHostKeyError(RemoteError):
    """known_hosts lists a different key for the host: refused (possible man-in-the-middle)."""

    def __init__(self, host: str, port: int, fingerprint: str, known_hosts: Path) -> None:
        self.host, self.port, self.fingerprint, self.known_hosts = (
            host,
            port,
            fingerprint,
            known_hosts,
        )
        super().__init__(
            f"HOST KEY OF {host}:{port} HAS CHANGED: it now offers {fingerprint}, which does not "
            f"match {known_hosts}. This can be a man-in-the-middle attack, or the host was "
            f"reinstalled. Connection refused; if the change is expected, remove the old entry "
            f"(ssh-keygen -R '{_known_hosts_name(host, port)}' -f {known_hosts}) and connect again."
        )


@dataclass(frozen=True)
class HostSpec:
    """A host as the user wrote it: an ssh-config alias or `user@host:port`."""

    host: str
    user: str | None = None
    port: int | None = None

    @classmethod
    def parse(cls, text: str) -> HostSpec:
        """Read `host`, `user@host`, `host:port`, `user@host:port` or `[v6addr]:port`."""
        match = _SPEC.match(text.strip())
        if not match:
            raise HostSpecError(
                f"cannot read host {text!r}: expected HOST, USER@HOST or USER@HOST:PORT"
            )
        port = int(match["port"]) if match["port"] else None
        if port is not None and not 0 < port < 65536:
            raise HostSpecError(f"host {text!r}: port {port} is outside 1..65535")
        return cls(match["host"].strip("[]"), match["user"], port)

    def __str__(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{self.host}{port}"


@dataclass(frozen=True)
class Hop:
    """One fully resolved connection hop."""

    alias: str
    hostname: str
    user: str
    port: int
    identity_files: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """`user@host:port` for messages."""
        return f"{self.user}@{self.hostname}:{self.port}"


@dataclass
class SshSettings:
    """Where keys, config and known_hosts come from; keepalives for long log streams."""

    config_paths: Sequence[Path] | None = None  # None: ~/.ssh/config when it exists
    known_hosts: Path = field(default_factory=lambda: Path("~/.ssh/known_hosts").expanduser())
    client_keys: Sequence[Path] | None = None  # None: IdentityFile from config, else ssh defaults
    use_agent: bool = True
    keepalive_interval_s: float = 30.0
    keepalive_count_max: int = 3
    connect_timeout_s: float = 20.0

    def resolved_config_paths(self) -> list[Path]:
        """The ssh config files to read."""
        if self.config_paths is not None:
            return [Path(p) for p in self.config_paths]
        default = Path("~/.ssh/config").expanduser()
        return [default] if default.is_file() else []


@dataclass
class HostKeyPolicy:
    """What to do with host keys that known_hosts does not list."""

    trusted_fingerprints: set[str] = field(default_factory=set)
    remember: bool = True


def _known_hosts_name(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def resolve_hop(spec: HostSpec, settings: SshSettings) -> tuple[Hop, list[str]]:
    """Apply ssh config (Hostname, User, Port, IdentityFile) to one host; return its ProxyJump list."""
    local_user = getpass.getuser()
    config = SSHClientConfig.load(
        None,
        [str(p) for p in settings.resolved_config_paths()],
        False,
        False,
        False,
        local_user,
        spec.user if spec.user else (),
        spec.host,
        spec.port if spec.port else (),
    )
    hostname = str(config.get("Hostname", spec.host))
    user = str(spec.user or config.get("User", local_user))
    port = int(spec.port or config.get("Port", 22))  # type: ignore[call-overload]
    identity = tuple(str(Path(p).expanduser()) for p in config.get("IdentityFile", ()))  # type: ignore[attr-defined]
    proxy_jump = config.get("ProxyJump", None)
    jumps: list[str] = []
    if isinstance(proxy_jump, str) and proxy_jump.lower() != "none":
        jumps = [j.strip() for j in proxy_jump.split(",") if j.strip()]
    elif isinstance(proxy_jump, list | tuple):
        jumps = [str(j) for j in proxy_jump if str(j).lower() != "none"]
    return Hop(spec.host, hostname, user, port, identity), jumps


def resolve_chain(
    target: str | HostSpec, jumps: Sequence[str] | None, settings: SshSettings
) -> list[Hop]:
    """Resolve the hops to reach `target`: jump hosts first, target last.

    `jumps` given (e.g. the profile's `ssh.jump`) replaces the config's ProxyJump of the target;
    each jump host's own ProxyJump from the config is followed (bounded depth).
    """
    spec = target if isinstance(target, HostSpec) else HostSpec.parse(target)

    def chain_for(host: HostSpec, explicit: Sequence[str] | None, depth: int) -> list[Hop]:
        if depth > MAX_JUMP_DEPTH:
            raise RemoteError(
                f"ProxyJump chain to {host} is longer than {MAX_JUMP_DEPTH} hops (a loop?)"
            )
        hop, config_jumps = resolve_hop(host, settings)
        via = list(explicit) if explicit is not None else config_jumps
        hops: list[Hop] = []
        for jump in via:
            hops.extend(chain_for(HostSpec.parse(jump), None, depth + 1))
        hops.append(hop)
        return hops

    return chain_for(spec, jumps if jumps else None, 0)


class _PolicyClient(asyncssh.SSHClient):
    """Decides about host keys that known_hosts does not list (see module doc)."""

    def __init__(
        self, hop: Hop, settings: SshSettings, policy: HostKeyPolicy, verdict: dict[str, Any]
    ) -> None:
        self._hop, self._settings, self._policy, self._verdict = hop, settings, policy, verdict

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        fingerprint = key.get_fingerprint("sha256")
        known = _load_known_hosts(self._settings.known_hosts)
        trusted = known.match(host, addr, port)[0] if known is not None else []
        if trusted:
            self._verdict["error"] = ChangedHostKeyError(
                host, port, fingerprint, self._settings.known_hosts
            )
            return False
        if fingerprint in self._policy.trusted_fingerprints:
            if self._policy.remember:
                _append_known_host(self._settings.known_hosts, _known_hosts_name(host, port), key)
            self._verdict["accepted"] = fingerprint
            return True
        self._verdict["error"] = UnknownHostKeyError(host, port, fingerprint, key.get_algorithm())
        return False


def _load_known_hosts(path: Path) -> asyncssh.SSHKnownHosts | None:
    if not path.is_file():
        return None
    return asyncssh.read_known_hosts(str(path))


def _append_known_host(path: Path, name: str, key: asyncssh.SSHKey) -> None:
    """Add `name key` to known_hosts atomically (write a temp file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    existing = path.read_bytes() if path.is_file() else b""
    if existing and not existing.endswith(b"\n"):
        existing += b"\n"
    key_type, key_data = key.export_public_key("openssh").decode().split()[:2]
    line = f"{name} {key_type} {key_data}\n"
    tmp = path.with_name(path.name + ".sglang-wizard.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(existing + line.encode())
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


async def connect_hop(
    hop: Hop,
    settings: SshSettings,
    policy: HostKeyPolicy,
    tunnel: asyncssh.SSHClientConnection | None,
    hop_number: int,
) -> asyncssh.SSHClientConnection:
    """Connect one hop (through `tunnel` when given) and turn failures into readable errors."""
    verdict: dict[str, Any] = {}
    known = _load_known_hosts(settings.known_hosts)
    options: dict[str, Any] = {
        "username": hop.user,
        "config": None,
        "known_hosts": known if known is not None else asyncssh.import_known_hosts(""),
        "client_factory": lambda: _PolicyClient(hop, settings, policy, verdict),
        "keepalive_interval": settings.keepalive_interval_s,
        "keepalive_count_max": settings.keepalive_count_max,
        "connect_timeout": settings.connect_timeout_s,
        "password_auth": False,
        "kbdint_auth": False,
    }
    if settings.client_keys is not None:
        options["client_keys"] = [str(p) for p in settings.client_keys]
    elif hop.identity_files:
        options["client_keys"] = list(hop.identity_files)
    if not settings.use_agent:
        options["agent_path"] = None
    if tunnel is not None:
        options["tunnel"] = tunnel
    where = f"hop {hop_number} ({hop.alias} = {hop.label})"
    try:
        return await asyncssh.connect(hop.hostname, hop.port, **options)
    except asyncssh.HostKeyNotVerifiable as exc:
        error = verdict.get("error")
        if isinstance(error, RemoteError):
            raise error from exc
        raise RemoteError(f"{where}: host key not verifiable: {exc.reason}") from exc
    except asyncssh.PermissionDenied as exc:
        raise RemoteError(
            f"{where}: authentication refused for user {hop.user}. The wizard uses the ssh agent "
            "and key files only (IdentityFile in ~/.ssh/config); check the key is authorised on the host."
        ) from exc
    except asyncssh.Error as exc:
        raise RemoteError(f"{where}: ssh error: {exc.reason}") from exc
    except (OSError, TimeoutError) as exc:
        raise RemoteError(f"{where}: cannot connect: {exc}") from exc


async def connect_chain(
    hops: Sequence[Hop], settings: SshSettings, policy: HostKeyPolicy
) -> list[asyncssh.SSHClientConnection]:
    """Connect every hop in order; returns all connections (the last one is the target)."""
    connections: list[asyncssh.SSHClientConnection] = []
    try:
        for number, hop in enumerate(hops, start=1):
            tunnel = connections[-1] if connections else None
            connections.append(await connect_hop(hop, settings, policy, tunnel, number))
    except BaseException:
        for conn in reversed(connections):
            conn.close()
        raise
    return connections
