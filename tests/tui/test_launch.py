"""The launch screen on a real OpenSSH sshd on loopback: preflight, launch, live log, ready, stop.

The "GPU host" is this machine: the stand-in SGLang (tests/fixtures/stand_in) writes SGLang's real
start-up lines and a fake nvidia-smi replays an idle H100 box.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from ssh.helpers import REMOTE_PYTHON, STAND_IN, model_dir, stand_in_env
from ssh.sshd_harness import free_port, keygen, start_sshd
from textual.widgets import Log, Static

from screens.app import WizardApp
from screens.launch import LaunchScreen
from screens.runs import RunsScreen
from wizard.profile_schema import Profile
from wizard.remote.connection import SshSettings

from .conftest import qwen36_config, write_model

pytestmark = [pytest.mark.ssh, pytest.mark.tui]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, SshSettings]]:
    """One loopback sshd, our key, our known_hosts, no agent and no ~/.ssh/config."""
    directory = tmp_path_factory.mktemp("tui-sshlab")
    user_key = directory / "user_key"
    authorized = directory / "authorized_keys"
    authorized.write_text(keygen(user_key) + "\n")
    target = start_sshd(directory, "target", authorized)
    try:
        known_hosts = directory / "known_hosts"
        known_hosts.write_text(target.known_hosts_line() + "\n")
        settings = SshSettings(
            config_paths=[],
            known_hosts=known_hosts,
            client_keys=[user_key],
            use_agent=False,
            keepalive_interval_s=5,
            connect_timeout_s=10,
        )
        yield f"root@127.0.0.1:{target.port}", settings
    finally:
        target.stop()


async def test_launch_screen_preflights_launches_follows_and_stops(
    lab: tuple[str, SshSettings], tmp_path: Path, ready_dir: Path
) -> None:
    target, settings = lab
    model = model_dir(tmp_path, architectures="LlamaForCausalLM")
    env = stand_in_env(
        PATH=f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        FAKE_NVIDIA_SMI="h100x8-idle",
    )
    profile = Profile.model_validate(
        {
            "sglang_version": "0.5.23",  # the host has 0.5.11: detected by the preflight
            "model": {"path": str(model)},
            "server": {"port": free_port()},
            "gpu": {"kind": "H100", "count": 1},
            "env": env,
            "ssh": {"host": target, "python": REMOTE_PYTHON},
        }
    )
    app = WizardApp(
        initial=profile,
        ready_dir=ready_dir,
        ssh_settings=settings,
        agent_python=REMOTE_PYTHON,
        remote_runs_root=str(tmp_path / "remote-runs"),
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5", "l")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LaunchScreen)

        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        preflight = str(screen.query_one("#launch-preflight", Static).visual)
        assert "SGLang on the host: 0.5.11" in preflight
        assert "Nothing blocks the launch." in preflight
        assert app.profile.sglang_version == "0.5.11"
        assert app.report is not None and app.report.sglang_version == "0.5.11"

        await pilot.press("ctrl+l")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.outcome == "ready", str(screen.query_one("#launch-stage", Static).visual)
        assert screen.run_id is not None
        assert "ready" in str(screen.query_one("#launch-stage", Static).visual)
        log = screen.query_one("#launch-log", Log)
        assert log.line_count > 5
        assert any("The server is fired up and ready to roll!" in line for line in log.lines)

        await pilot.press("ctrl+x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.outcome == "stopped"
        assert "nothing left" in str(screen.query_one("#launch-stage", Static).visual)
        await pilot.press("escape")
        await pilot.pause()
        assert app.current_mode == "review" and not isinstance(app.screen, LaunchScreen)

        # F7: the run is in the local records; enter re-attaches to its log from the start
        run_id = screen.run_id
        await pilot.press("f7")
        await pilot.pause()
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        assert [r.run_id for r in runs.records] == [run_id]
        assert runs.records[0].outcome == "stopped"  # the screen's stop marks it, as `stop` does
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        lines = runs.query_one("#runs-log", Log).lines
        assert any("The server is fired up and ready to roll!" in line for line in lines)
        assert runs.outcome in ("exited", "stopped", "ready")
        status = str(runs.query_one("#runs-status", Static).visual)
        assert "(stopped)" in status, status


async def test_unreachable_host_is_reported_on_screen(tmp_path: Path, ready_dir: Path) -> None:
    profile = Profile.model_validate(
        {"model": {"path": "/m"}, "ssh": {"host": f"root@127.0.0.1:{free_port()}"}}
    )
    settings = SshSettings(
        config_paths=[], known_hosts=tmp_path / "kh", use_agent=False, connect_timeout_s=5
    )
    app = WizardApp(initial=profile, ready_dir=ready_dir, ssh_settings=settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f5", "l", "ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = str(app.screen.query_one("#launch-preflight", Static).visual)
        assert "Cannot connect" in text


async def test_model_step_reads_the_model_on_the_host(
    lab: tuple[str, SshSettings], tmp_path: Path, ready_dir: Path
) -> None:
    target, settings = lab
    model = write_model(tmp_path, "Qwen3.6-27B", qwen36_config())
    profile = Profile.model_validate(
        {"model": {"path": str(model)}, "ssh": {"host": target, "python": REMOTE_PYTHON}}
    )
    app = WizardApp(
        initial=profile, ready_dir=ready_dir, ssh_settings=settings, agent_python=REMOTE_PYTHON
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f2")
        await app.workers.wait_for_complete()
        await pilot.press("f6")
        await app.workers.wait_for_complete()
        await pilot.pause()
        card = str(app.screen.query_one("#model-card", Static).visual)
        assert f"read on {target}" in card
        assert "Qwen3_5ForConditionalGeneration" in card
        assert "48 linear-attention + 16 full-attention" in card


async def test_stop_reaches_the_run_after_the_host_field_is_edited(ready_dir: Path) -> None:
    """Editing the host field drops the connection for the next preflight, not the followed
    run's: ctrl+x still stops the run on the host it was launched on."""
    from types import SimpleNamespace

    stopped: list[str] = []

    class Host:
        async def stop(self, run_id: str, timeout_s: float = 30.0) -> SimpleNamespace:
            stopped.append(run_id)
            return SimpleNamespace(clean=True, remaining=[], gpu_holders_left=[],
                                   was_running=True)

        async def close(self) -> None:
            pass

    profile = Profile.model_validate({"model": {"path": "/m"}, "ssh": {"host": "gpu-box"}})
    app = WizardApp(initial=profile, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f5", "l")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LaunchScreen)
        host = Host()
        screen.host = screen.run_host = host  # as after a launch that is being followed
        screen.run_id, screen.outcome = "run-1", None
        screen.query_one("#launch-host").value = "other-box"  # type: ignore[attr-defined]
        await pilot.pause()
        assert screen.host is None
        await pilot.press("ctrl+x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert stopped == ["run-1"]
        assert screen.outcome == "stopped"
