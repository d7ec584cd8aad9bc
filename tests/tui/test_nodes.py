"""The Nodes screen on two real sshd on loopback (two "nodes", different ports and host keys):
node table, preflight per node, launch with the merged log, stop everywhere."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from ssh.helpers import REMOTE_PYTHON, STAND_IN, USER, alive, model_dir, stand_in_env
from ssh.sshd_harness import Sshd, free_port, keygen, start_sshd
from textual.widgets import Log, Static

from screens.app import WizardApp
from screens.nodes import NodesScreen
from wizard.profile import Profile
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
        "nodes": {"rendezvous_host": "127.0.0.1", "rendezvous_port": free_port(),
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
