"""Connections to real sshd: ssh-config aliases, explicit specs, jump hosts, host-key policy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wizard.remote.connection import (
    ChangedHostKeyError,
    HostKeyPolicy,
    HostSpec,
    HostSpecError,
    RemoteError,
    UnknownHostKeyError,
    resolve_chain,
)
from wizard.remote.session import RemoteHost

from .conftest import SshLab
from .helpers import USER
from .sshd_harness import keygen


def fingerprint(public_key_file: Path) -> str:
    """SHA256 fingerprint as OpenSSH prints it."""
    out = subprocess.run(["ssh-keygen", "-lf", str(public_key_file)], capture_output=True, text=True, check=True)
    return out.stdout.split()[1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gpu-box", HostSpec("gpu-box")),
        ("alice@10.0.0.5", HostSpec("10.0.0.5", "alice")),
        ("alice@10.0.0.5:2222", HostSpec("10.0.0.5", "alice", 2222)),
        ("node7:2200", HostSpec("node7", None, 2200)),
        ("bob@[fe80::1]:22", HostSpec("fe80::1", "bob", 22)),
    ],
)
def test_host_spec_parse(text: str, expected: HostSpec) -> None:
    assert HostSpec.parse(text) == expected


@pytest.mark.parametrize("text", ["", "a@b@c", "host:99999", "user@host:port", "two words"])
def test_host_spec_rejects_bad_text(text: str) -> None:
    with pytest.raises(HostSpecError, match="host"):
        HostSpec.parse(text)


def test_chain_from_ssh_config_follows_proxyjump(ssh_lab: SshLab) -> None:
    hops = resolve_chain("gpu-behind", None, ssh_lab.settings())
    assert [(h.alias, h.port, h.user) for h in hops] == [
        ("bastion", ssh_lab.jump.port, USER),
        ("gpu-behind", ssh_lab.target.port, USER),
    ]
    assert hops[0].identity_files == (str(ssh_lab.user_key),)
    explicit = resolve_chain("gpu-behind", [ssh_lab.jump_spec], ssh_lab.settings())
    assert [h.label for h in explicit] == [ssh_lab.jump_spec, ssh_lab.target_spec]




@pytest.mark.ssh
async def test_alias_and_explicit_spec_connect(ssh_lab: SshLab) -> None:
    for target in ("gpu-box", ssh_lab.target_spec):
        async with await RemoteHost.connect(target, settings=ssh_lab.settings()) as host:
            assert (await host.run(["echo", "it's", "$(x)"])).stdout == "it's $(x)\n"


@pytest.mark.ssh
async def test_jump_host_carries_the_connection(ssh_lab: SshLab) -> None:
    before = ssh_lab.jump.log_path.read_text()
    async with await RemoteHost.connect("gpu-behind", settings=ssh_lab.settings()) as host:
        assert len(host.hops) == 2
        assert (await host.run("echo $((6*7))")).stdout == "42\n"
        assert f"via {ssh_lab.jump_spec}" in host.label
    log = ssh_lab.jump.log_path.read_text()[len(before) :]
    assert f"port {ssh_lab.target.port}" in log and "direct-tcpip" in log  # the jump sshd opened the tunnel


@pytest.mark.ssh
async def test_unknown_host_key_is_refused_then_trusted_by_fingerprint(ssh_lab: SshLab, tmp_path: Path) -> None:
    known_hosts = tmp_path / "known_hosts"
    expected = fingerprint(Path(f"{ssh_lab.target.host_key}.pub"))
    with pytest.raises(UnknownHostKeyError) as caught:
        await RemoteHost.connect(ssh_lab.target_spec, settings=ssh_lab.settings(known_hosts))
    assert caught.value.fingerprint == expected
    assert expected in str(caught.value) and "--trust-host-key" in str(caught.value)
    assert not known_hosts.exists()
    # a different fingerprint does not help
    with pytest.raises(UnknownHostKeyError):
        await RemoteHost.connect(
            ssh_lab.target_spec, settings=ssh_lab.settings(known_hosts),
            policy=HostKeyPolicy(trusted_fingerprints={"SHA256:" + "A" * 43}),
        )
    async with await RemoteHost.connect(
        ssh_lab.target_spec, settings=ssh_lab.settings(known_hosts),
        policy=HostKeyPolicy(trusted_fingerprints={expected}),
    ) as host:
        assert (await host.run("true")).exit_status == 0
    assert known_hosts.read_text().startswith(f"[127.0.0.1]:{ssh_lab.target.port} ssh-ed25519 ")
    async with await RemoteHost.connect(ssh_lab.target_spec, settings=ssh_lab.settings(known_hosts)) as host:
        assert (await host.run("true")).exit_status == 0  # remembered


@pytest.mark.ssh
async def test_unknown_key_of_the_jump_host_is_refused(ssh_lab: SshLab, tmp_path: Path) -> None:
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(ssh_lab.target.known_hosts_line() + "\n")  # only the final host is known
    with pytest.raises(UnknownHostKeyError) as caught:
        await RemoteHost.connect("gpu-behind", settings=ssh_lab.settings(known_hosts))
    assert caught.value.port == ssh_lab.jump.port
    assert caught.value.fingerprint == fingerprint(Path(f"{ssh_lab.jump.host_key}.pub"))


@pytest.mark.ssh
async def test_changed_host_key_is_refused_even_when_trusted(ssh_lab: SshLab, tmp_path: Path) -> None:
    other = tmp_path / "other_key"
    other_public = keygen(other)
    known_hosts = tmp_path / "known_hosts"
    key_type, key_data = other_public.split()[:2]
    known_hosts.write_text(f"[127.0.0.1]:{ssh_lab.target.port} {key_type} {key_data}\n")
    real = fingerprint(Path(f"{ssh_lab.target.host_key}.pub"))
    with pytest.raises(ChangedHostKeyError, match="HAS CHANGED") as caught:
        await RemoteHost.connect(
            ssh_lab.target_spec, settings=ssh_lab.settings(known_hosts),
            policy=HostKeyPolicy(trusted_fingerprints={real}),
        )
    assert caught.value.fingerprint == real
    assert known_hosts.read_text() == f"[127.0.0.1]:{ssh_lab.target.port} {key_type} {key_data}\n"  # untouched


@pytest.mark.ssh
async def test_wrong_user_key_names_the_hop(ssh_lab: SshLab, tmp_path: Path) -> None:
    stranger = tmp_path / "stranger"
    keygen(stranger)
    settings = ssh_lab.settings()
    settings.client_keys = [stranger]
    with pytest.raises(RemoteError, match=r"hop 1 .*authentication refused"):
        await RemoteHost.connect(ssh_lab.target_spec, settings=settings)


async def test_unreachable_host_is_a_clear_error(ssh_lab: SshLab) -> None:
    from .sshd_harness import free_port

    settings = ssh_lab.settings()
    settings.connect_timeout_s = 5
    with pytest.raises(RemoteError, match="cannot connect"):
        await RemoteHost.connect(f"{USER}@127.0.0.1:{free_port()}", settings=settings)
