"""A two-node launch over SSH: two real sshd on loopback (different ports and host keys) as the
nodes, the stand-in server as SGLang (rank 0 hosts the rendezvous, rank 1 joins it)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from wizard.multinode import node_launches
from wizard.profile_schema import Profile
from wizard.remote.multinode import (
    GroupRecord,
    NodeGroup,
    NodeLine,
    group_record,
    launch_requests,
)
from wizard.remote.preflight import PreflightRequest

from .conftest import SshLab
from .helpers import REMOTE_PYTHON, STAND_IN, USER, alive, model_dir, stand_in_env
from .sshd_harness import free_port

pytestmark = pytest.mark.ssh


def _profile(lab: SshLab, model: Path, node1_env: dict[str, str] | None = None) -> Profile:
    return Profile.model_validate({
        "model": {"path": str(model)},
        "parallel": {"tp": 2, "nnodes": 2},
        "server": {"port": free_port()},
        "env": stand_in_env(PATH=f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                            FAKE_NVIDIA_SMI="h100x8-idle"),
        "ssh": {"python": REMOTE_PYTHON},
        "nodes": {
            "rendezvous_host": "127.0.0.1",
            "rendezvous_port": free_port(span=2),
            "hosts": [
                {"host": f"{USER}@127.0.0.1:{lab.target.port}"},
                {"host": f"{USER}@127.0.0.1:{lab.jump.port}", "env": node1_env or {}},
            ],
        },
    })


async def _connect(lab: SshLab, profile: Profile, tmp_path: Path) -> tuple[NodeGroup,
                                                                          dict[int, str]]:
    roots = {0: str(tmp_path / "node0-runs"), 1: str(tmp_path / "node1-runs")}
    group = await NodeGroup.connect(node_launches(profile), settings=lab.settings(),
                                    runs_roots=roots)
    return group, roots


async def test_two_nodes_preflight_launch_merged_log_and_stop(ssh_lab: SshLab,
                                                              tmp_path: Path) -> None:
    profile = _profile(ssh_lab, model_dir(tmp_path))
    group, roots = await _connect(ssh_lab, profile, tmp_path)
    async with group:
        assert [h.hops[-1].port for h in group.hosts] == [ssh_lab.target.port, ssh_lab.jump.port]
        launches = group.launches
        requests = [PreflightRequest(python=n.python, env=n.env, port=profile.server.port
                                     if n.rank == 0 else None, model_path=profile.model.path)
                    for n in launches]
        rendezvous = launches[0].argv[launches[0].argv.index("--dist-init-addr") + 1]
        checks = await group.preflight(requests, rendezvous=rendezvous, gpus_per_node=1)
        assert [c.rank for c in checks] == [0, 1]
        too_many = await group.preflight(requests, gpus_per_node=16)  # the hosts have 8 each
        assert all(not c.ok for c in too_many)
        assert next(r for r in too_many[1].rows() if r.name == "GPUs per node").detail == (
            "8 GPUs, the node runs 16 (tp * pp / nnodes)")
        names = {c.rank: {row.name: row for row in c.rows()} for c in checks}
        assert names[0]["rendezvous port"].ok and names[1]["rendezvous"].ok
        assert names[1]["rendezvous"].detail == f"reaches {rendezvous}"
        assert names[0]["model config"].detail == names[1]["model config"].detail
        assert all(c.ok for c in checks), [(c.rank, [r for r in c.rows() if not r.ok])
                                           for c in checks]

        statuses = await group.start(launch_requests(launches, port=profile.server.port),
                                     group_id="grp-a")
        assert [s.run_id for s in statuses] == ["grp-a-n0", "grp-a-n1"]
        lines: list[NodeLine] = []
        result = await group.watch(port=profile.server.port, on_line=lines.append)
        assert result.outcome == "ready", result.summary()
        assert result.ready is not None and result.ready.health_status == 200
        texts = [line.text() for line in lines]
        assert any(t.startswith("[n1] ") and "Init torch distributed ends" in t for t in texts)
        assert any(t.startswith("[n0] ") and "fired up and ready" in t for t in texts)
        record = group_record("grp-a", group, profile.server.port, runs_roots=roots)
        state = tmp_path / "state"
        record.save(state)

    # reattach from the record, as `nodes stop GROUP` does, and stop every node
    again = GroupRecord.load("grp-a", state)
    assert [n["run_id"] for n in again.nodes] == ["grp-a-n0", "grp-a-n1"]
    group2 = await NodeGroup.reattach(again, settings=ssh_lab.settings())
    async with group2:
        before = {r: (await group2.hosts[r].run_status(group2.run_ids[r])).processes
                  for r in (0, 1)}
        assert all(before.values()) and all(alive(p) for ps in before.values() for p in ps)
        stopped = await group2.stop(timeout_s=10)
        assert sorted(stopped) == [0, 1] and all(s.clean for s in stopped.values())
        assert not any(alive(p) for ps in before.values() for p in ps)


async def test_a_crash_on_one_node_stops_the_others(ssh_lab: SshLab, tmp_path: Path) -> None:
    profile = _profile(ssh_lab, model_dir(tmp_path), node1_env={"STAND_IN_CRASH": "oom"})
    group, _roots = await _connect(ssh_lab, profile, tmp_path)
    async with group:
        await group.start(launch_requests(group.launches, port=profile.server.port),
                          group_id="grp-b")
        rank0 = await group.hosts[0].run_status("grp-b-n0")
        lines: list[NodeLine] = []
        result = await group.watch(port=profile.server.port, on_line=lines.append)
        assert result.outcome == "crashed" and result.failed_rank == 1
        assert result.crash is not None
        assert "out of memory" in result.crash.explanation.summary().lower()
        assert result.stopped[0].clean and result.stopped[0].was_running
        assert not any(alive(p) for p in rank0.processes)
        assert any(line.rank == 1 and "OutOfMemoryError" in line.line for line in lines)
        assert "node 1 crashed" in result.summary()


async def test_a_taken_rendezvous_port_blocks_the_launch(ssh_lab: SshLab, tmp_path: Path) -> None:
    profile = _profile(ssh_lab, model_dir(tmp_path))
    with socket.create_server(("", profile.nodes.rendezvous_port)):
        group, _ = await _connect(ssh_lab, profile, tmp_path)
        async with group:
            launches = group.launches
            requests = [PreflightRequest(python=n.python, env=n.env) for n in launches]
            checks = await group.preflight(
                requests, rendezvous=f"127.0.0.1:{profile.nodes.rendezvous_port}")
    rows = {row.name: row for row in checks[0].rows()}
    assert not rows["rendezvous port"].ok and not checks[0].ok
    assert "is taken on rank 0" in rows["rendezvous port"].detail
    assert checks[1].ok


async def test_an_unreachable_rendezvous_blocks_the_other_nodes(ssh_lab: SshLab,
                                                                tmp_path: Path) -> None:
    profile = _profile(ssh_lab, model_dir(tmp_path))
    group, _ = await _connect(ssh_lab, profile, tmp_path)
    async with group:
        requests = [PreflightRequest(python=n.python, env=n.env) for n in group.launches]
        checks = await group.preflight(
            requests, rendezvous=f"no-such-node.invalid:{profile.nodes.rendezvous_port}")
    assert checks[0].ok  # rank 0 could bind the port
    row = next(r for r in checks[1].rows() if r.name == "rendezvous")
    assert not row.ok and "cannot reach no-such-node.invalid" in row.detail
    assert not checks[1].ok


def test_nodes_cli_launch_list_logs_stop(ssh_lab: SshLab, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI end to end: launch on both nodes, list, merged logs, stop everywhere."""
    import io

    from wizard.cli import main
    from wizard.profile import save_profile

    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(ssh_lab, model_dir(tmp_path))
    path = save_profile(profile, tmp_path / "two.toml")
    ssh = ["--ssh-config", str(ssh_lab.ssh_config), "--known-hosts", str(ssh_lab.known_hosts),
           "-i", str(ssh_lab.user_key), "--no-agent", "--remote-runs-dir", str(tmp_path / "runs")]

    def run(*args: str) -> tuple[int, str]:
        out = io.StringIO()
        monkeypatch.setattr("sys.stdout", out)
        code = main(list(args))
        return code, out.getvalue()

    code, text = run("nodes", "launch", str(path), *ssh)
    assert code == 0, text
    assert "node 0 " in text and "node 1 " in text and "ready: every node joined" in text
    assert "[n1] " in text and "[n0] " in text
    group_id = text.split("group ", 1)[1].split(":", 1)[0]
    code, listing = run("nodes", "list")
    assert code == 0 and group_id in listing and "ready" in listing
    code, logs = run("nodes", "logs", group_id, "--node", "1", *ssh)
    assert code == 0 and logs.strip() and all(line.startswith("[n1] ")
                                              for line in logs.strip().splitlines())
    code, single = run("runs")  # each node's run is a run record like a single launch
    assert code == 0 and f"{group_id}-n0" in single and f"{group_id}-n1" in single
    code, stopped = run("nodes", "stop", group_id, *ssh)
    assert code == 0, stopped
    assert "node 0: stopped, clean" in stopped and "node 1: stopped, clean" in stopped
    code, _ = run("nodes", "logs", "no-such-group", *ssh)
    assert code == 2


async def test_a_node_that_cannot_start_stops_the_started_ones(ssh_lab: SshLab,
                                                                tmp_path: Path) -> None:
    from wizard.remote.connection import RemoteError

    profile = _profile(ssh_lab, model_dir(tmp_path))
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where node 1's runs directory should be")
    roots = {0: str(tmp_path / "node0-runs"), 1: str(blocker / "runs")}
    group = await NodeGroup.connect(node_launches(profile), settings=ssh_lab.settings(),
                                    runs_roots=roots)
    async with group:
        with pytest.raises(RemoteError, match="node 1") as caught:
            await group.start(launch_requests(group.launches, port=profile.server.port),
                              group_id="grp-c")
        assert "every started node was stopped" in str(caught.value)
        status = await group.hosts[0].run_status("grp-c-n0")
        assert not status.alive and status.stopped
        assert not any(alive(p) for p in status.processes)


def test_nodes_preflight_renders_the_flags_for_the_hosts_sglang(
        ssh_lab: SshLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """As a single launch does: the hosts run another SGLang release than the profile names, so
    the nodes' flags are rendered for the hosts' release before preflight (and its dry run)."""
    from wizard.cli import main
    from wizard.profile import save_profile

    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(ssh_lab, model_dir(tmp_path))
    profile = profile.model_copy(update={"env": {**profile.env,
                                                 "STAND_IN_SGLANG_VERSION": "0.5.23"}})
    path = save_profile(profile, tmp_path / "two.toml")
    ssh = ["--ssh-config", str(ssh_lab.ssh_config), "--known-hosts", str(ssh_lab.known_hosts),
           "-i", str(ssh_lab.user_key), "--no-agent", "--remote-runs-dir", str(tmp_path / "runs")]
    code = main(["nodes", "preflight", str(path), "--dry-run", *ssh])
    out = capsys.readouterr().out
    assert code == 0, out
    assert (f"note: rank 0 has SGLang 0.5.23 (profile: {profile.sglang_version}); flags "
            "rendered for the hosts' version") in out
    assert out.count("ok dry run") == 2, out


async def test_a_node_connection_dropped_while_watching_is_said_and_the_launch_goes_on(
        ssh_lab: SshLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The core flow's events: node 1's sshd session is killed at its first log line; the flow
    says so (ConnectionNotice for node 1), follows on and rank 0 still gets ready with node 1's
    log delivered in order (nothing lost or repeated up to where it was shown)."""
    from wizard.remote import nodes_flow as f

    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(ssh_lab, model_dir(tmp_path))
    events: list[object] = []
    dropped: list[int] = []

    def on_event(event: object) -> None:
        events.append(event)
        if isinstance(event, f.LogLine) and event.line.rank == 1 and not dropped:
            dropped.extend(ssh_lab.jump.drop_connections())  # node 1 is the "jump" sshd

    flow = f.NodesFlow(f.NodesPlan.from_profile(profile),
                       f.NodesReach(settings=ssh_lab.settings(),
                                    runs_root=str(tmp_path / "runs")), on_event)
    try:
        result = await flow.launch()
        assert result is not None and result.outcome == "ready", result and result.summary()
        assert dropped
        notices = [e for e in events if isinstance(e, f.ConnectionNotice)]
        assert any(n.rank == 1 and "lost during the log stream" in n.text for n in notices), notices
        node1 = [e.line.line for e in events if isinstance(e, f.LogLine) and e.line.rank == 1]
        run_dir = tmp_path / "runs" / f"{flow.record.group_id}-n1" if flow.record else None
        assert run_dir is not None
        logged = (run_dir / "log").read_text().replace("\r", "\n").splitlines()
        assert [x for x in node1 if x] == [x for x in logged if x][: len([x for x in node1 if x])]
    finally:
        if flow.group is not None and flow.group.run_ids:
            await flow.stop(timeout_s=10)
        await flow.close()


def test_nodes_preflight_checks_the_draft_model_on_every_node(
        ssh_lab: SshLab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The draft model is a path every node loads: a missing one blocks every node (the screen
    left it out of its preflight before the flow was shared)."""
    from wizard.cli import main
    from wizard.profile import save_profile

    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(ssh_lab, model_dir(tmp_path, architectures="LlamaForCausalLM"))
    missing = tmp_path / "no-such-draft"
    profile = profile.model_copy(update={"speculative": profile.speculative.model_copy(
        update={"algorithm": "EAGLE", "draft_model_path": str(missing)})})
    path = save_profile(profile, tmp_path / "two.toml")
    ssh = ["--ssh-config", str(ssh_lab.ssh_config), "--known-hosts", str(ssh_lab.known_hosts),
           "-i", str(ssh_lab.user_key), "--no-agent", "--remote-runs-dir", str(tmp_path / "runs")]
    code = main(["nodes", "preflight", str(path), *ssh])
    out = capsys.readouterr().out
    assert code == 1, out
    rows = [line for line in out.splitlines() if "draft model path" in line]
    assert len(rows) == 2 and all(line.lstrip().startswith("!!") for line in rows), out
    assert all(str(missing) in line for line in rows)
