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

import asyncio
import contextlib
import getpass
import re
import socket
import tempfile
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import asyncssh
from asyncssh.config import SSHClientConfig

from wizard.files import write_text

MAX_JUMP_DEPTH = 8
_SPEC = re.compile(r"^(?:(?P<user>[^@\s]+)@)?(?P<host>\[[^\]]+\]|[^:\s@]+)(?::(?P<port>\d+))?$")


class RemoteError(Exception):
    """A remote action failed; the message says which host/hop and what to do."""


class HostSpecError(RemoteError, ValueError):
    """A host given as text cannot be read."""


class UnknownHostKeyError(RemoteError):
    """The host offered a key that known_hosts does not list: the user must confirm it."""

    def __init__(
        self, host: str, port: int, fingerprint: str, key_type: str, alias: str = ""
    ) -> None:
        self.host, self.port, self.fingerprint, self.key_type = host, port, fingerprint, key_type
        self.alias = alias
        named = f"{alias} ({host}:{port})" if alias and alias != host else f"{host}:{port}"
        super().__init__(
            f"host key of {named} is not known ({key_type} {fingerprint}). Verify this "
            f"fingerprint with the host's administrator, then trust it explicitly "
            f"(CLI: --trust-host-key {fingerprint})."
        )


class ChangedHostKeyError(RemoteError):
    """known_hosts lists a different key for the host: refused (possible man-in-the-middle)."""

    def __init__(
        self, host: str, port: int, fingerprint: str, known_hosts: Path, alias: str = ""
    ) -> None:
        self.host, self.port, self.fingerprint, self.known_hosts = (
            host,
            port,
            fingerprint,
            known_hosts,
        )
        named = f"{alias} ({host}:{port})" if alias and alias != host else f"{host}:{port}"
        super().__init__(
            f"HOST KEY OF {named} HAS CHANGED: it now offers {fingerprint}, which does not "
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
    """One fully resolved connection hop (what OpenSSH would use for it from ssh config)."""

    alias: str
    hostname: str
    user: str
    port: int
    identity_files: tuple[str, ...] = ()
    proxy_command: str | None = None  # tokens (%h %p %r ...) already expanded
    user_known_hosts: tuple[str, ...] = ()  # UserKnownHostsFile (expanded); () = the default
    global_known_hosts: tuple[str, ...] | None = None  # GlobalKnownHostsFile; None = the default
    identities_only: bool = False
    certificate_files: tuple[str, ...] = ()
    connect_timeout_s: float | None = None
    server_alive_interval_s: float | None = None
    server_alive_count_max: int | None = None

    @property
    def label(self) -> str:
        """`user@host:port` for messages."""
        return f"{self.user}@{self.hostname}:{self.port}"


DEFAULT_USER_KNOWN_HOSTS = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
DEFAULT_GLOBAL_KNOWN_HOSTS = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")


@dataclass
class SshSettings:
    """Where keys, config and known_hosts come from; keepalives for long log streams.

    `None` means "as OpenSSH would": the config's UserKnownHostsFile / GlobalKnownHostsFile /
    IdentityFile / ConnectTimeout / ServerAliveInterval for each hop, else OpenSSH's defaults."""

    config_paths: Sequence[Path] | None = None  # None: ~/.ssh/config when it exists
    known_hosts: Path | None = None  # one file instead of UserKnownHostsFile (--known-hosts)
    global_known_hosts: Sequence[Path] | None = None  # None: config, else /etc/ssh/ssh_known_hosts
    client_keys: Sequence[Path] | None = None  # None: IdentityFile from config, else ssh defaults
    use_agent: bool = True
    keepalive_interval_s: float | None = None  # None: ServerAliveInterval, else 10
    keepalive_count_max: int | None = None  # None: ServerAliveCountMax, else 3
    connect_timeout_s: float | None = None  # None: ConnectTimeout, else 20

    def user_known_hosts(self, hop: Hop) -> list[Path]:
        """The known_hosts files the user keeps for this hop (new keys are added to the first)."""
        if self.known_hosts is not None:
            return [Path(self.known_hosts).expanduser()]
        names = hop.user_known_hosts or DEFAULT_USER_KNOWN_HOSTS
        return [Path(n).expanduser() for n in names]

    def known_hosts_files(self, hop: Hop) -> list[Path]:
        """Every known_hosts file read for this hop: the user's, then the global ones."""
        if self.global_known_hosts is not None:
            global_files = [Path(p).expanduser() for p in self.global_known_hosts]
        else:
            names = hop.global_known_hosts
            default = DEFAULT_GLOBAL_KNOWN_HOSTS if names is None else names
            global_files = [Path(n).expanduser() for n in default]
        return self.user_known_hosts(hop) + global_files

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


def _strings(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)  # type: ignore[attr-defined]


def _files(value: object) -> tuple[str, ...]:
    """File names from a config value (`~` expanded; `none` means no file, as in OpenSSH)."""
    return tuple(str(Path(v).expanduser()) for v in _strings(value) if v.lower() != "none")


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and value > 0 else None


def resolve_hop(spec: HostSpec, settings: SshSettings) -> tuple[Hop, list[str]]:
    """Apply ssh config to one host (Hostname, User, Port, IdentityFile, IdentitiesOnly,
    CertificateFile, ProxyCommand, UserKnownHostsFile, GlobalKnownHostsFile, ConnectTimeout,
    ServerAliveInterval/CountMax; Include and Match as asyncssh reads them); return it and its
    ProxyJump list (empty when a ProxyCommand reaches the host, as in OpenSSH)."""
    local_user = getpass.getuser()
    paths = [str(p) for p in settings.resolved_config_paths()]
    try:
        config = SSHClientConfig.load(
            None,
            paths,
            False,
            False,
            False,
            local_user,
            spec.user if spec.user else (),
            spec.host,
            spec.port if spec.port else (),
        )
    except (asyncssh.ConfigParseError, OSError) as exc:
        raise HostSpecError(f"ssh config {', '.join(paths)}: {exc}") from exc
    hostname = str(config.get("Hostname", spec.host))
    user = str(spec.user or config.get("User", local_user))
    port = int(spec.port or config.get("Port", 22))  # type: ignore[call-overload]
    identity = _files(config.get("IdentityFile"))
    proxy_command = config.get("ProxyCommand", None)
    command = (
        str(proxy_command)
        if isinstance(proxy_command, str) and proxy_command.strip().lower() != "none"
        else None
    )
    proxy_jump = config.get("ProxyJump", None)
    jumps: list[str] = []
    if command is None:  # OpenSSH: ProxyCommand and ProxyJump exclude each other
        if isinstance(proxy_jump, str) and proxy_jump.lower() != "none":
            jumps = [j.strip() for j in proxy_jump.split(",") if j.strip()]
        elif isinstance(proxy_jump, list | tuple):
            jumps = [str(j) for j in proxy_jump if str(j).lower() != "none"]
    global_files = config.get("GlobalKnownHostsFile", None)
    count_max = config.get("ServerAliveCountMax", None)
    hop = Hop(
        spec.host,
        hostname,
        user,
        port,
        identity,
        proxy_command=command,
        user_known_hosts=_files(config.get("UserKnownHostsFile")),
        global_known_hosts=_files(global_files) if global_files is not None else None,
        identities_only=bool(config.get("IdentitiesOnly", False)),
        certificate_files=_files(config.get("CertificateFile")),
        connect_timeout_s=_number(config.get("ConnectTimeout")),
        server_alive_interval_s=_number(config.get("ServerAliveInterval")),
        server_alive_count_max=int(count_max) if isinstance(count_max, int) else None,
    )
    return hop, jumps


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
        if explicit is not None and hop.proxy_command:
            hop = replace(hop, proxy_command=None)  # jump hosts given: they replace ProxyCommand
        via = list(explicit) if explicit is not None else config_jumps
        hops: list[Hop] = []
        for jump in via:
            hops.extend(chain_for(HostSpec.parse(jump), None, depth + 1))
        hops.append(hop)
        return hops

    return chain_for(spec, jumps if jumps else None, 0)


def keepalive_interval_s(hop: Hop, settings: SshSettings) -> float:
    """Seconds between keepalives: the settings', else ServerAliveInterval, else 10 (a link
    silent for 40 s with the default count is stalled: said and re-made, not waited on)."""
    return float(settings.keepalive_interval_s or hop.server_alive_interval_s or 10.0)


def keepalive_count_max(hop: Hop, settings: SshSettings) -> int:
    """Keepalives left unanswered before the connection counts as stalled (else 3)."""
    return int(settings.keepalive_count_max or hop.server_alive_count_max or 3)


def stall_timeout_s(hop: Hop, settings: SshSettings) -> float:
    """How long a connection may send nothing back before it is given up as stalled."""
    return keepalive_interval_s(hop, settings) * (keepalive_count_max(hop, settings) + 1)


_LOST: weakref.WeakKeyDictionary[asyncssh.SSHClientConnection, BaseException | None] = (
    weakref.WeakKeyDictionary()
)


def lost_reason(conn: asyncssh.SSHClientConnection) -> tuple[bool, BaseException | None]:
    """(lost, why) of a connection: lost is False while it is open."""
    if conn in _LOST:
        return True, _LOST[conn]
    return conn.is_closed(), None


def is_stall(exc: BaseException | None) -> bool:
    """The connection was given up because keepalives went unanswered (a stalled link)."""
    return exc is not None and "not responding to keepalive" in str(exc)


class _PolicyClient(asyncssh.SSHClient):
    """Decides about host keys that known_hosts does not list (see module doc)."""

    def __init__(
        self, hop: Hop, settings: SshSettings, policy: HostKeyPolicy, verdict: dict[str, Any]
    ) -> None:
        self._hop, self._settings, self._policy, self._verdict = hop, settings, policy, verdict

    def connection_made(self, conn: asyncssh.SSHClientConnection) -> None:
        self._verdict["conn"] = conn  # the transport is up (TCP or the proxy command's pipes)

    def connection_lost(self, exc: Exception | None) -> None:
        conn = self._verdict.get("conn")
        if conn is not None:  # why it went away (a keepalive timeout is a stall): lost_reason
            _LOST[conn] = exc

    def validate_host_public_key(
        self, host: str, addr: str, port: int, key: asyncssh.SSHKey
    ) -> bool:
        fingerprint = key.get_fingerprint("sha256")
        hop = self._hop
        host, port = hop.hostname, hop.port  # a proxy command's pipes have no address
        known = _load_known_hosts(self._settings.known_hosts_files(hop))
        trusted = known.match(host, addr or "", port)[0] if known is not None else []
        own = self._settings.user_known_hosts(hop)[0]
        if trusted:
            self._verdict["error"] = ChangedHostKeyError(host, port, fingerprint, own, hop.alias)
            return False
        if fingerprint in self._policy.trusted_fingerprints:
            if self._policy.remember:
                _append_known_host(own, _known_hosts_name(host, port), key)
            self._verdict["accepted"] = fingerprint
            return True
        self._verdict["error"] = UnknownHostKeyError(
            host, port, fingerprint, key.get_algorithm(), hop.alias
        )
        return False


def _load_known_hosts(paths: Sequence[Path]) -> asyncssh.SSHKnownHosts | None:
    """All entries of the existing files (hashed `|1|` names included) as one list."""
    existing = [str(p) for p in paths if p.is_file()]
    if not existing:
        return None
    try:
        return asyncssh.read_known_hosts(existing)
    except (ValueError, OSError) as exc:
        raise RemoteError(f"cannot read known_hosts ({', '.join(existing)}): {exc}") from exc


def _append_known_host(path: Path, name: str, key: asyncssh.SSHKey) -> None:
    """Add `name key` to known_hosts atomically (`wizard.files.write_text`: a known_hosts that
    is a symlink, as dotfile managers make it, keeps the link and gets its target written)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    existing = path.read_text(encoding="utf-8", errors="surrogateescape") if path.is_file() else ""
    if existing and not existing.endswith("\n"):
        existing += "\n"
    key_type, key_data = key.export_public_key("openssh").decode().split()[:2]
    line = f"{name} {key_type} {key_data}\n"
    write_text(path, existing + line, mode=0o600)


async def connect_hop(
    hop: Hop,
    settings: SshSettings,
    policy: HostKeyPolicy,
    tunnel: asyncssh.SSHClientConnection | None,
    hop_number: int,
) -> asyncssh.SSHClientConnection:
    """Connect one hop (through `tunnel`, or its ProxyCommand) and turn failures into readable
    errors that name the hop."""
    verdict: dict[str, Any] = {}
    known = _load_known_hosts(settings.known_hosts_files(hop))
    timeout = settings.connect_timeout_s or hop.connect_timeout_s or 20.0
    options: dict[str, Any] = {
        "username": hop.user,
        "config": None,
        "known_hosts": known if known is not None else asyncssh.import_known_hosts(""),
        "client_factory": lambda: _PolicyClient(hop, settings, policy, verdict),
        "keepalive_interval": keepalive_interval_s(hop, settings),
        "keepalive_count_max": keepalive_count_max(hop, settings),
        "connect_timeout": timeout,
        "password_auth": False,
        "kbdint_auth": False,
    }
    keys: list[str] = []
    if settings.client_keys is not None:
        keys = [str(p) for p in settings.client_keys]
    elif hop.identity_files:
        keys = list(hop.identity_files)
    if keys:
        options["client_keys"] = _with_certificates(keys, hop.certificate_files)
    if not settings.use_agent or hop.identities_only:
        # IdentitiesOnly: only the configured keys, never every key the agent holds (with key
        # files given asyncssh leaves the agent out anyway)
        options["agent_path"] = None
    if tunnel is not None:
        options["tunnel"] = tunnel
    use_proxy = bool(hop.proxy_command) and tunnel is None
    via = f" via ProxyCommand `{hop.proxy_command}`" if use_proxy else ""
    where = f"hop {hop_number} ({hop.alias} = {hop.label}{via})"
    if not use_proxy:
        return await _connect_once(hop, options, where, timeout, verdict)
    proxy = await _ProxyCommand.start(str(hop.proxy_command), where)
    options["sock"] = proxy.sock
    try:
        conn = await _connect_once(hop, options, where, timeout, verdict)
    except RemoteError as exc:
        said = await proxy.stop()
        if said:
            raise RemoteError(f"{exc}; the ProxyCommand said: {said}") from exc.__cause__
        raise
    except BaseException:
        await proxy.stop()
        raise
    proxy.stop_with(conn)
    return conn


class _ProxyCommand:
    """A ProxyCommand run as OpenSSH runs it: `sh -c "exec COMMAND"` with one end of a socket
    pair as its stdin and stdout (the SSH stream). Its stderr goes to an unlinked temp file, not
    over a full-screen UI, and is quoted when connecting fails."""

    def __init__(
        self, sock: socket.socket, process: asyncio.subprocess.Process, errors: IO[bytes]
    ) -> None:
        self.sock, self.process, self.errors = sock, process, errors
        self._reaper: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, command: str, where: str) -> _ProxyCommand:
        ours, theirs = socket.socketpair()
        errors = tempfile.TemporaryFile(prefix="sglang-wizard-proxy-")  # noqa: SIM115 - closed in stop()
        try:
            process = await asyncio.create_subprocess_exec(
                "/bin/sh",
                "-c",
                "exec " + command,
                stdin=theirs.fileno(),
                stdout=theirs.fileno(),
                stderr=errors,
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            errors.close()
            raise RemoteError(f"{where}: cannot run the ProxyCommand: {exc}") from exc
        finally:
            theirs.close()
        ours.setblocking(False)
        return cls(ours, process, errors)

    async def stop(self) -> str:
        """End the command (it may already be gone) and return the end of its stderr."""
        self.sock.close()
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                await self.process.wait()
        self.errors.seek(0)
        text = self.errors.read()[-4000:].decode(errors="replace").strip()
        self.errors.close()
        return " / ".join(text.splitlines()[-3:])[-500:]

    def stop_with(self, conn: asyncssh.SSHClientConnection) -> None:
        """Stop the command once the connection it carries is closed."""

        async def reap() -> None:
            try:
                await conn.wait_closed()
            finally:
                await asyncio.shield(self.stop())

        self._reaper = asyncio.get_running_loop().create_task(reap())
        _REAPERS.add(self._reaper)
        self._reaper.add_done_callback(_REAPERS.discard)


_REAPERS: set[asyncio.Task[None]] = set()


async def _connect_once(
    hop: Hop, options: dict[str, Any], where: str, timeout: float, verdict: dict[str, Any]
) -> asyncssh.SSHClientConnection:
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
        raise RemoteError(f"{where}: ssh error: {exc.reason or type(exc).__name__}") from exc
    except TimeoutError as exc:
        raise RemoteError(_timeout_reason(where, timeout, verdict.get("conn"))) from exc
    except OSError as exc:
        raise RemoteError(f"{where}: cannot connect: {exc or type(exc).__name__}") from exc


def _timeout_reason(where: str, timeout: float, conn: asyncssh.SSHClientConnection | None) -> str:
    """Say which part of the connection did not finish within the timeout."""
    if conn is None:
        return f"{where}: cannot connect: no TCP connection within {timeout:g} s"
    if not conn.get_extra_info("server_version"):
        return (
            f"{where}: connected but no SSH banner within {timeout:g} s (something that is not "
            "an SSH server, or a stuck one, holds the port)"
        )
    return f"{where}: connected, but the SSH handshake did not finish within {timeout:g} s"


def _with_certificates(keys: Sequence[str], certificates: Sequence[str]) -> list[Any]:
    """Pair key files with the CertificateFile that certifies each (or KEY-cert.pub beside the
    key, as OpenSSH does)."""
    loaded: list[tuple[str, bytes]] = []
    for name in certificates:
        try:
            loaded.append((name, asyncssh.read_certificate(name).key.public_data))
        except (OSError, ValueError, asyncssh.KeyImportError):
            continue
    paired: list[Any] = []
    for key in keys:
        beside = f"{key}-cert.pub"
        cert: str | None = beside if Path(beside).is_file() else None
        if cert is None and loaded:
            try:
                public = asyncssh.read_public_key(f"{key}.pub").public_data
            except (OSError, ValueError, asyncssh.KeyImportError):
                public = b""
            cert = next((name for name, data in loaded if data == public), None)
        paired.append((key, cert) if cert else key)
    return paired


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
