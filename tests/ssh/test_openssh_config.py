"""ssh config read as OpenSSH users expect: ProxyCommand, known-hosts files named by the config
(several, `~`, hashed entries, the global file), IdentitiesOnly, Include, ConnectTimeout, and a
jump host that accepts TCP but never speaks SSH."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
import sys
from pathlib import Path

import pytest

from wizard.remote.connection import (
    HostKeyPolicy,
    RemoteError,
    SshSettings,
    UnknownHostKeyError,
    resolve_chain,
)
from wizard.remote.session import RemoteHost

from .conftest import SshLab
from .helpers import USER
from .test_connection import fingerprint

pytestmark = pytest.mark.ssh


def _settings(config: Path, **overrides: object) -> SshSettings:
    """As a user without --known-hosts/-i: everything comes from the config file."""
    settings = SshSettings(config_paths=[config], use_agent=False)
    for name, value in overrides.items():
        setattr(settings, name, value)
    return settings


def _hashed(line: str) -> str:
    """The known_hosts line with its host name hashed (`HashKnownHosts yes`)."""
    name, rest = line.split(" ", 1)
    salt = os.urandom(20)
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()} {rest}"


def _proxy_via_jump(lab: SshLab) -> str:
    """`ProxyCommand ssh -W %h:%p jump` with the real OpenSSH client, through the jump sshd."""
    return (
        f"ssh -F /dev/null -i {lab.user_key} -o BatchMode=yes -o IdentitiesOnly=yes "
        f"-o UserKnownHostsFile={lab.known_hosts} -o GlobalKnownHostsFile=/dev/null "
        f"-o StrictHostKeyChecking=yes -p {lab.jump.port} -W %h:%p {USER}@127.0.0.1"
    )


async def test_proxycommand_host_is_reached_through_its_command(ssh_lab: SshLab, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        f"Host gpu-pc\n  HostName 127.0.0.1\n  Port {ssh_lab.target.port}\n  User {USER}\n"
        f"  IdentityFile {ssh_lab.user_key}\n  UserKnownHostsFile {ssh_lab.known_hosts}\n"
        f"  GlobalKnownHostsFile none\n  ProxyCommand {_proxy_via_jump(ssh_lab)}\n"
    )
    hops = resolve_chain("gpu-pc", None, _settings(config))
    assert len(hops) == 1 and hops[0].proxy_command is not None
    assert f"-W 127.0.0.1:{ssh_lab.target.port}" in hops[0].proxy_command  # %h:%p expanded
    before = ssh_lab.jump.log_path.read_text()
    async with await RemoteHost.connect("gpu-pc", settings=_settings(config)) as host:
        assert (await host.run("echo via-proxy")).stdout == "via-proxy\n"
    log = ssh_lab.jump.log_path.read_text()[len(before):]
    assert "direct-tcpip" in log and f"port {ssh_lab.target.port}" in log  # the jump carried it


async def test_proxycommand_host_key_is_still_checked(ssh_lab: SshLab, tmp_path: Path) -> None:
    config = tmp_path / "config"
    empty = tmp_path / "empty_known_hosts"
    config.write_text(
        f"Host gpu-pc\n  HostName 127.0.0.1\n  Port {ssh_lab.target.port}\n  User {USER}\n"
        f"  IdentityFile {ssh_lab.user_key}\n  UserKnownHostsFile {empty}\n"
        f"  GlobalKnownHostsFile none\n  ProxyCommand {_proxy_via_jump(ssh_lab)}\n"
    )
    with pytest.raises(UnknownHostKeyError) as caught:
        await RemoteHost.connect("gpu-pc", settings=_settings(config))
    assert caught.value.fingerprint == fingerprint(Path(f"{ssh_lab.target.host_key}.pub"))
    assert "gpu-pc (127.0.0.1:" in str(caught.value)  # names the alias


async def test_known_hosts_files_from_the_config(
    ssh_lab: SshLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "managed").mkdir()
    # the jump's key in a hashed file under ~, the target's in a second (global) file
    (tmp_path / "managed" / "hashed_hosts").write_text(_hashed(ssh_lab.jump.known_hosts_line()) + "\n")
    central = tmp_path / "ssh_known_hosts"
    central.write_text(_hashed(ssh_lab.target.known_hosts_line()) + "\n")
    included = tmp_path / "conf.d" / "gpu.conf"
    included.parent.mkdir()
    included.write_text(
        f"Host gpu-central\n  HostName 127.0.0.1\n  Port {ssh_lab.target.port}\n  User {USER}\n"
        f"  IdentityFile {ssh_lab.user_key}\n  IdentitiesOnly yes\n  ConnectTimeout 7\n"
        "  ProxyJump bastion-managed\n"
    )
    config = tmp_path / "config"
    config.write_text(
        f"Include {included.parent}/*.conf\n\n"
        f"Host bastion-managed\n  HostName 127.0.0.1\n  Port {ssh_lab.jump.port}\n  User {USER}\n"
        f"  IdentityFile {ssh_lab.user_key}\n\n"
        f"Host *\n  UserKnownHostsFile ~/missing_file ~/managed/hashed_hosts\n"
        f"  GlobalKnownHostsFile {central}\n"
    )
    hops = resolve_chain("gpu-central", None, _settings(config))
    assert [h.alias for h in hops] == ["bastion-managed", "gpu-central"]
    assert hops[1].identities_only and hops[1].connect_timeout_s == 7
    assert hops[1].user_known_hosts == (str(tmp_path / "missing_file"), str(tmp_path / "managed" / "hashed_hosts"))
    async with await RemoteHost.connect("gpu-central", settings=_settings(config)) as host:
        assert (await host.run("echo known")).stdout == "known\n"
    # an unknown key trusted by fingerprint is remembered in the first user file, as OpenSSH does
    (tmp_path / "managed" / "hashed_hosts").write_text("")
    expected = fingerprint(Path(f"{ssh_lab.jump.host_key}.pub"))
    with pytest.raises(UnknownHostKeyError, match="bastion-managed"):
        await RemoteHost.connect("gpu-central", settings=_settings(config))
    policy = HostKeyPolicy(trusted_fingerprints={expected})
    async with await RemoteHost.connect("gpu-central", settings=_settings(config), policy=policy):
        pass
    assert (tmp_path / "missing_file").read_text().startswith(f"[127.0.0.1]:{ssh_lab.jump.port} ")


async def test_banner_less_jump_host_says_what_is_missing(ssh_lab: SshLab, tmp_path: Path) -> None:
    accepted = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set()
        await reader.read()  # never sends a banner; returns when the client gives up
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = tmp_path / "config"
    config.write_text(
        f"Host mute\n  HostName 127.0.0.1\n  Port {port}\n  User {USER}\n  ConnectTimeout 1\n\n"
        f"Host behind-mute\n  HostName 127.0.0.1\n  Port {ssh_lab.target.port}\n  ProxyJump mute\n"
    )
    try:
        with pytest.raises(RemoteError) as caught:
            await RemoteHost.connect(
                "behind-mute", settings=_settings(config, client_keys=[ssh_lab.user_key])
            )
    finally:
        server.close()
        await server.wait_closed()
    assert accepted.is_set()
    message = str(caught.value)
    assert message.startswith(f"hop 1 (mute = {USER}@127.0.0.1:{port})")
    assert "connected but no SSH banner within 1 s" in message


async def test_python_proxy_command_with_tokens(ssh_lab: SshLab, tmp_path: Path) -> None:
    """A netcat-like proxy command (as SSM or cloudflared are): `%h %p` expanded, stdio carried."""
    relay = tmp_path / "relay.py"
    relay.write_text(
        "import socket, sys, threading\n"
        "s = socket.create_connection((sys.argv[1], int(sys.argv[2])))\n"
        "def up():\n"
        "    while data := sys.stdin.buffer.read1(65536):\n"
        "        s.sendall(data)\n"
        "    s.shutdown(socket.SHUT_WR)\n"
        "threading.Thread(target=up, daemon=True).start()\n"
        "while data := s.recv(65536):\n"
        "    sys.stdout.buffer.write(data); sys.stdout.buffer.flush()\n"
    )
    config = tmp_path / "config"
    config.write_text(
        f"Host via-relay\n  HostName 127.0.0.1\n  Port {ssh_lab.target.port}\n  User {USER}\n"
        f"  IdentityFile {ssh_lab.user_key}\n  UserKnownHostsFile {ssh_lab.known_hosts}\n"
        f"  GlobalKnownHostsFile none\n  ProxyCommand {sys.executable} {relay} %h %p\n"
    )
    async with await RemoteHost.connect("via-relay", settings=_settings(config)) as host:
        assert (await host.run(["printf", "%s", "relayed"])).stdout == "relayed"


def test_certificate_file_is_presented_with_its_key(ssh_lab: SshLab, tmp_path: Path) -> None:
    """An sshd that trusts only a user CA: the key alone is refused, key + CertificateFile works."""
    import subprocess

    from .sshd_harness import keygen, start_sshd

    ca = tmp_path / "user_ca"
    keygen(ca)
    key = tmp_path / "cert_user"
    keygen(key)
    cert_dir = tmp_path / "certs"
    cert_dir.mkdir()
    subprocess.run(
        ["ssh-keygen", "-q", "-s", str(ca), "-I", "wizard-test", "-n", USER, f"{key}.pub"],
        check=True, capture_output=True,
    )
    certificate = cert_dir / "issued-cert.pub"  # not beside the key: only CertificateFile finds it
    Path(f"{key}-cert.pub").rename(certificate)
    no_keys = tmp_path / "no_authorized_keys"
    no_keys.write_text("")
    sshd = start_sshd(tmp_path, "ca-only", no_keys, extra_config=[f"TrustedUserCAKeys {ca}.pub"])
    try:
        known = tmp_path / "known_hosts"
        known.write_text(sshd.known_hosts_line() + "\n")
        config = tmp_path / "config"
        base = (
            f"Host ca-host\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {USER}\n"
            f"  IdentityFile {key}\n  UserKnownHostsFile {known}\n  GlobalKnownHostsFile none\n"
            "  ServerAliveInterval 15\n"
        )
        config.write_text(base)
        with pytest.raises(RemoteError, match="authentication refused"):
            asyncio.run(RemoteHost.connect("ca-host", settings=_settings(config)))
        config.write_text(base + f"  CertificateFile {certificate}\n")
        hops = resolve_chain("ca-host", None, _settings(config))
        assert hops[0].certificate_files == (str(certificate),)
        assert hops[0].server_alive_interval_s == 15

        async def certified() -> str:
            async with await RemoteHost.connect("ca-host", settings=_settings(config)) as host:
                return (await host.run("echo certified")).stdout

        assert asyncio.run(certified()) == "certified\n"
    finally:
        sshd.stop()


async def test_failing_proxycommand_is_quoted_in_the_error(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        f"Host gone\n  HostName 10.255.255.1\n  User {USER}\n  ConnectTimeout 5\n"
        "  ProxyCommand sh -c 'echo \"bastion: no route to %h\" >&2; exit 255'\n"
    )
    with pytest.raises(RemoteError) as caught:
        await RemoteHost.connect("gone", settings=_settings(config))
    message = str(caught.value)
    assert message.startswith("hop 1 (gone = ") and "via ProxyCommand" in message
    assert "the ProxyCommand said: bastion: no route to 10.255.255.1" in message
