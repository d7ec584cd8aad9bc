"""The Nodes screen on two real sshd on loopback (two "nodes", different ports and host keys):
node table, preflight per node, launch with the merged log, stop everywhere."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from ssh.helpers import REMOTE_PYTHON, STAND_IN, USER, alive, model_dir, stand_in_env
from ssh.sshd_harness import Sshd, free_port, keygen, start_sshd
from textual.widgets import Log, Static

from screens.app import WizardApp
from screens.dialogs import ConfirmDialog
from screens.nodes import NodesScreen
from wizard.profile_schema import Profile
from wizard.remote.connection import SshSettings

pytestmark = [pytest.mark.ssh, pytest.mark.tui]


@pytest.fixture(scope="module")
def nodes_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[Sshd], SshSettings]]:
    directory = tmp_path_factory.mktemp("tui-nodes")
    user_key = directory / "user_key"
    authorized = directory / "authorized_keys"
    authorized.write_text(keygen(user_key) + "\n")
    nodes = [start_sshd(directory, "node0", authorized), start_sshd(directory, "node1", authorized)]
    try:
        known_hosts = directory / "known_hosts"
        known_hosts.write_text("".join(n.known_hosts_line() + "\n" for n in nodes))
        settings = SshSettings(config_paths=[], known_hosts=known_hosts, client_keys=[user_key],
                               use_agent=False, keepalive_interval_s=5, connect_timeout_s=10)
        yield nodes, settings
    finally:
        for node in nodes:
            node.stop()


async def test_nodes_screen_lists_preflights_launches_and_stops(
    nodes_lab: tuple[list[Sshd], SshSettings], tmp_path: Path, ready_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nodes, settings = nodes_lab
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    env = stand_in_env(PATH=f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                       FAKE_NVIDIA_SMI="h100x8-idle")
    profile = Profile.model_validate({
        "model": {"path": str(model_dir(tmp_path, architectures="LlamaForCausalLM"))},
        "parallel": {"tp": 2, "nnodes": 2},
        "server": {"port": free_port()},
        "gpu": {"kind": "H100", "count": 1},
        "env": env,
        "ssh": {"python": REMOTE_PYTHON},
        "nodes": {"rendezvous_host": "127.0.0.1", "rendezvous_port": free_port(span=2),
                  "interface": "lo",
                  "hosts": [{"host": f"{USER}@127.0.0.1:{n.port}"} for n in nodes]},
    })
    app = WizardApp(initial=profile, ready_dir=ready_dir, ssh_settings=settings,
                    agent_python=REMOTE_PYTHON, remote_runs_root=str(tmp_path / "runs"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5", "l")  # Review -> launch: a multi-node profile opens the Nodes screen
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        table = str(screen.query_one("#nodes-table", Static).visual)
        assert f"127.0.0.1:{nodes[1].port}" in table and "--node-rank 1" in table
        assert "rank 0, serves HTTP" in table

        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        state = str(screen.query_one("#nodes-state", Static).visual)
        assert "n0 " in state and "n1 " in state and "BLOCKED" not in state, state
        assert "rendezvous port" in state

        await pilot.press("ctrl+l")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.outcome == "ready", str(screen.query_one("#nodes-state", Static).visual)
        lines = list(screen.query_one("#nodes-log", Log).lines)
        assert any(line.startswith("[n0] ") for line in lines)
        assert any(line.startswith("[n1] ") for line in lines)
        pids = [p for r in (0, 1) for p in
                (await screen.group.hosts[r].run_status(screen.group.run_ids[r])).processes]
        assert pids and all(alive(p) for p in pids)

        await pilot.press("ctrl+x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.outcome == "stopped"
        assert "n0 clean, n1 clean" in str(screen.query_one("#nodes-state", Static).visual)
        assert not any(alive(p) for p in pids)
        await pilot.press("escape")
        await pilot.pause()


# ------------------------------------------------------------------ one flow for the CLI and the TUI

_RUN_VARYING = {"run_id", "started_at", "detail", "outcome", "startup_s", "stage_times"}


def _secret_profile(nodes: list[Sshd], tmp_path: Path, **node0_env: str) -> Profile:
    """A two-node profile with both kinds of secret: HF_TOKEN as a reference to this process's
    variable (read at launch) and the server's --api-key in extra_args."""
    env = stand_in_env(PATH=f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                       FAKE_NVIDIA_SMI="h100x8-idle")
    env["HF_TOKEN"] = "env:HF_TOKEN"
    hosts: list[dict[str, object]] = [{"host": f"{USER}@127.0.0.1:{n.port}"} for n in nodes]
    hosts[0]["env"] = dict(node0_env)
    return Profile.model_validate({
        "model": {"path": str(model_dir(tmp_path, architectures="LlamaForCausalLM"))},
        "parallel": {"tp": 2, "nnodes": 2},
        "server": {"port": free_port()},
        "gpu": {"kind": "H100", "count": 1},
        "env": env,
        "extra_args": ["--api-key", API_KEY],
        "ssh": {"python": REMOTE_PYTHON},
        "nodes": {"rendezvous_host": "127.0.0.1", "rendezvous_port": free_port(span=2),
                  "interface": "lo", "hosts": hosts},
    })


def _cli_options(settings: SshSettings, tmp_path: Path, runs: Path) -> list[str]:
    empty_config = tmp_path / "ssh_config"
    empty_config.write_text("")
    assert settings.known_hosts is not None and settings.client_keys
    return ["--ssh-config", str(empty_config), "--known-hosts", str(settings.known_hosts),
            "-i", str(settings.client_keys[0]), "--no-agent", "--remote-runs-dir", str(runs)]


def _cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    import io

    from wizard.cli import main

    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    code = main(list(args))
    return code, out.getvalue()


def _command_lines_holding(values: list[str]) -> list[str]:
    """Every process's argv (as `ps` shows it) that contains one of the values."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                argv = Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if any(v in argv for v in values):
                found.append(argv.replace("\0", " ")[:200])
    return found


def _kill_runs(runs: Path) -> None:
    """SIGKILL what is left of every run under `runs` (a failed test leaves no server behind)."""
    for pid_file in runs.glob("*/pid"):
        text = pid_file.read_text().strip()
        if text.isdigit():
            with contextlib.suppress(OSError):
                os.killpg(int(text), signal.SIGKILL)


def _files_holding(root: Path, values: list[str]) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file()
            and any(v.encode() in p.read_bytes() for v in values)]


def _node_files(runs: Path, run_id: str) -> dict[str, object]:
    """What a node's run directory says about the launch (the argv, env, profile, its hash)."""
    folder = runs / run_id
    meta = json.loads((folder / "meta.json").read_text())
    return {"argv": json.loads((folder / "argv.json").read_text()),
            "env": json.loads((folder / "env.json").read_text()),
            "profile.toml": (folder / "profile.toml").read_text(),
            "command.sh": (folder / "command.sh").read_text(),
            "meta": {k: meta.get(k) for k in ("python", "port", "workdir", "profile_hash")}}


def _run_records(state: Path, group_id: str) -> list[dict[str, object]]:
    lines = (state / "runs.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return [{k: v for k, v in r.items() if k not in _RUN_VARYING}
            for r in sorted(records, key=lambda r: r["run_id"])
            if str(r["run_id"]).startswith(group_id + "-n")]


def _group_nodes(state: Path, group_id: str) -> list[dict[str, object]]:
    data = json.loads((state / "multinode" / f"{group_id}.json").read_text())
    return [{k: v for k, v in n.items() if k != "run_id"} for n in data["nodes"]]


API_KEY = "sk-" + secrets.token_hex(12)
HF_SECRET = "hf_" + secrets.token_hex(16)


async def test_the_cli_and_the_screen_run_one_multinode_flow_and_keep_no_secret(
    nodes_lab: tuple[list[Sshd], SshSettings], tmp_path: Path, ready_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`nodes launch` and the Nodes screen launch the same profile: every node gets the same
    argv, env and masked profile, and the run records agree; no secret value is in any file the
    nodes or this machine keep, nor in any process's argv; rank 0 is probed with the API key."""
    from wizard.profile import save_profile

    nodes, settings = nodes_lab
    state = tmp_path / "state"
    runs = tmp_path / "runs"
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(state))
    monkeypatch.setenv("HF_TOKEN", HF_SECRET)
    # A saved profile keeps the key as `--api-key env:SGLANG_WIZARD_API_KEY`; launches read it here.
    monkeypatch.setenv("SGLANG_WIZARD_API_KEY", API_KEY)
    secret_values = [API_KEY, HF_SECRET]
    path = save_profile(_secret_profile(nodes, tmp_path), tmp_path / "two.toml")
    ssh = _cli_options(settings, tmp_path, runs)
    try:
        await _launch_both(monkeypatch, path, ssh, settings, ready_dir, runs, state,
                           secret_values)
    finally:
        _kill_runs(runs)


async def _launch_both(monkeypatch: pytest.MonkeyPatch, path: Path, ssh: list[str],
                       settings: SshSettings, ready_dir: Path, runs: Path, state: Path,
                       secret_values: list[str]) -> None:
    from wizard.profile import load_profile

    # the CLI runs its own event loop: in a thread beside the test's
    code, text = await asyncio.to_thread(
        _cli, monkeypatch, "nodes", "launch", str(path), "--quiet-log", *ssh)
    assert code == 0, text
    assert "ready: every node joined" in text and "test prompt -> ' Paris" in text, text
    cli_group = text.split("group ", 1)[1].split(":", 1)[0]
    assert not _command_lines_holding(secret_values)
    code, stopped = await asyncio.to_thread(_cli, monkeypatch, "nodes", "stop", cli_group, *ssh)
    assert code == 0, stopped

    app = WizardApp(initial=load_profile(path), ready_dir=ready_dir, ssh_settings=settings,
                    agent_python=REMOTE_PYTHON, remote_runs_root=str(runs))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5", "l")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await pilot.press("ctrl+l")
        await app.workers.wait_for_complete()
        await pilot.pause()
        state_text = str(screen.query_one("#nodes-state", Static).visual)
        assert screen.outcome == "ready", state_text
        assert "test prompt -> ' Paris" in state_text
        assert not _command_lines_holding(secret_values)
        tui_group = screen.flow.record.group_id
        await pilot.press("ctrl+x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.outcome == "stopped"
        await pilot.press("escape")
        await pilot.pause()

    assert tui_group != cli_group
    for rank in (0, 1):
        cli_node = _node_files(runs, f"{cli_group}-n{rank}")
        tui_node = _node_files(runs, f"{tui_group}-n{rank}")
        assert cli_node == tui_node, rank
        assert "--api-key" in cli_node["argv"]  # type: ignore[operator]
    assert _run_records(state, cli_group) == _run_records(state, tui_group)
    assert len(_run_records(state, cli_group)) == 2
    assert _group_nodes(state, cli_group) == _group_nodes(state, tui_group)
    outcomes = {r["run_id"]: r["outcome"] for r in map(json.loads, (
        state / "runs.jsonl").read_text().splitlines())}
    assert set(outcomes.values()) == {"stopped"} and len(outcomes) == 4, outcomes
    for group in (cli_group, tui_group):
        assert json.loads((state / "multinode" / f"{group}.json").read_text())["outcome"] == (
            "stopped")
    assert not _files_holding(runs, secret_values)  # argv.json, env.json, profile.toml, log, ...
    assert not _files_holding(state, secret_values)  # run and group records
    profile_kept = (runs / f"{cli_group}-n0" / "profile.toml").read_text()
    # the key itself never: a masked value or the reference the saved profile keeps
    assert "--api-key" in profile_kept and (
        "***" in profile_kept or "env:SGLANG_WIZARD_API_KEY" in profile_kept)


def test_a_refused_api_key_is_not_ready(
    nodes_lab: tuple[list[Sshd], SshSettings], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rank 0 answers 401 to the profile's key: `nodes launch` says not ready and exits 1."""
    from wizard.profile import save_profile

    nodes, settings = nodes_lab
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HF_TOKEN", HF_SECRET)
    monkeypatch.setenv("SGLANG_WIZARD_API_KEY", API_KEY)  # the saved profile's reference
    other = "sk-another-" + secrets.token_hex(4)
    # A name ending in KEY is a secret: the saved profile keeps env:STAND_IN_API_KEY, read here.
    monkeypatch.setenv("STAND_IN_API_KEY", other)
    profile = _secret_profile(nodes, tmp_path, STAND_IN_API_KEY=other)
    path = save_profile(profile, tmp_path / "two.toml")
    ssh = _cli_options(settings, tmp_path, tmp_path / "runs")
    code, text = _cli(monkeypatch, "nodes", "launch", str(path), "--quiet-log", *ssh)
    group = text.split("group ", 1)[1].split(":", 1)[0]
    try:
        assert code == 1, text
        assert "not ready: every node joined, but rank 0 server refused the API key" in text, text
        assert "HTTP 401 on /generate" in text and "test prompt -> HTTP 401" in text
        assert "ready: every node joined, rank 0 serves" not in text
        listing = _cli(monkeypatch, "nodes", "list")[1]
        assert f"{group}  refused" in listing
    finally:
        _cli(monkeypatch, "nodes", "stop", group, *ssh)
        _kill_runs(tmp_path / "runs")


async def test_an_unknown_node_host_key_is_asked_about_on_the_nodes_screen(
    nodes_lab: tuple[list[Sshd], SshSettings], tmp_path: Path, ready_dir: Path,
) -> None:
    """Node 1's host key is not in known_hosts: the screen asks (as the one-host launch screen
    does), `y` trusts it (written to known_hosts) and the preflight goes on."""
    import dataclasses

    nodes, settings = nodes_lab
    known = tmp_path / "known_hosts"
    known.write_text(nodes[0].known_hosts_line() + "\n")
    only_node0 = dataclasses.replace(settings, known_hosts=known)
    app = WizardApp(initial=_secret_profile(nodes, tmp_path), ready_dir=ready_dir,
                    ssh_settings=only_node0, remote_runs_root=str(tmp_path / "runs"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5", "l")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await pilot.press("ctrl+r")
        for _ in range(400):  # bounded: the question appears once node 1 answered
            if isinstance(app.screen, ConfirmDialog):
                break
            await pilot.pause(0.05)
        assert isinstance(app.screen, ConfirmDialog)
        assert f"127.0.0.1:{nodes[1].port}" in app.screen.question
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.preflight and all(n.ok for n in screen.preflight), str(
            screen.query_one("#nodes-state", Static).visual)
        await pilot.press("escape")
        await pilot.pause()
    assert f"[127.0.0.1]:{nodes[1].port}" in known.read_text()


async def test_a_refused_node_host_key_stops_the_preflight_with_the_reason(
    nodes_lab: tuple[list[Sshd], SshSettings], tmp_path: Path, ready_dir: Path,
) -> None:
    """`n` to the unknown key of node 1: the preflight stops and says which node and why."""
    import dataclasses

    nodes, settings = nodes_lab
    known = tmp_path / "known_hosts"
    known.write_text(nodes[0].known_hosts_line() + "\n")
    app = WizardApp(initial=_secret_profile(nodes, tmp_path), ready_dir=ready_dir,
                    ssh_settings=dataclasses.replace(settings, known_hosts=known),
                    remote_runs_root=str(tmp_path / "runs"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5", "l")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, NodesScreen)
        await pilot.press("ctrl+r")
        for _ in range(400):  # bounded: the question appears once node 1 answered
            if isinstance(app.screen, ConfirmDialog):
                break
            await pilot.pause(0.05)
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        state = str(screen.query_one("#nodes-state", Static).visual)
        assert state.startswith("Preflight failed: "), state
        assert f"127.0.0.1:{nodes[1].port}" in state and "SHA256:" in state, state
        assert not screen.preflight
        await pilot.press("escape")
        await pilot.pause()
    assert f"[127.0.0.1]:{nodes[1].port}" not in known.read_text()
