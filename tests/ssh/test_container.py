"""A [container] profile launched over SSH with a real Podman: preflight inside the image, ready,
the log followed across forced reconnects, no secret written anywhere, stop removes the container.

The image is built here (`container_image.py`: this machine's python + the stand-in SGLang
0.5.10, while the host's stand-in is 0.5.11), so the version the checks use is visibly the
image's. Podman runs with runc and cgroupfs through a containers.conf that the test sshd hands
to every session (`SetEnv CONTAINERS_CONF=...`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from wizard.cli import main
from wizard.remote.connection import HostKeyPolicy, SshSettings
from wizard.remote.records import RunRecords
from wizard.remote.session import RemoteHost, split_log_lines

from .conftest import SshLab
from .container_image import CONTAINERS_CONF, IMAGE_SGLANG_VERSION, ensure_image, podman_available
from .helpers import USER, model_dir
from .sshd_harness import Sshd, free_port, start_sshd

pytestmark = pytest.mark.ssh

HF_TOKEN = "hf_containerSecret9f8e7d6c"
API_KEY = "sk-container-key-4c3b2a19"
EXTRA_LINES = 40_000  # ~6 MB: several 1 MiB chunks, a connection killed under each of the first


@dataclass
class PodmanLab:
    """An sshd whose sessions run podman with the lab's containers.conf, and the test image."""

    sshd: Sshd
    second: Sshd  # another "host" (the same machine) for the two-node launch
    image: str
    env: dict[str, str]
    ssh_config: Path
    known_hosts: Path
    user_key: Path

    @property
    def target(self) -> str:
        return f"{USER}@127.0.0.1:{self.sshd.port}"

    @property
    def second_target(self) -> str:
        return f"{USER}@127.0.0.1:{self.second.port}"

    def podman(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["podman", *args], env=self.env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def podman_lab(ssh_lab: SshLab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PodmanLab]:
    why = podman_available()
    if why:
        pytest.skip(why)
    directory = tmp_path_factory.mktemp("podman")
    conf = directory / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    env = {**os.environ, "CONTAINERS_CONF": str(conf)}
    image = ensure_image(env)
    sshd, second = (start_sshd(directory, name, ssh_lab.directory / "authorized_keys",
                               extra_config=[f"SetEnv CONTAINERS_CONF={conf}"])
                    for name in ("podman-host", "podman-host-2"))
    known = directory / "known_hosts"
    known.write_text(sshd.known_hosts_line() + "\n" + second.known_hosts_line() + "\n")
    config = directory / "ssh_config"
    config.write_text("Host *\n  GlobalKnownHostsFile none\n")
    try:
        yield PodmanLab(sshd, second, image, env, config, known, ssh_lab.user_key)
    finally:
        sshd.stop()
        second.stop()


def _args(lab: PodmanLab, runs_root: Path) -> list[str]:
    return ["--ssh-config", str(lab.ssh_config), "--known-hosts", str(lab.known_hosts),
            "-i", str(lab.user_key), "--no-agent", "--remote-runs-dir", str(runs_root),
            "--agent-python", sys.executable]


def _profile(lab: PodmanLab, tmp_path: Path, port: int, image: str | None = None,
             **env: str) -> Path:
    model = model_dir(tmp_path)
    extra_env = "".join(f'{k} = "{v}"\n' for k, v in env.items())
    path = tmp_path / "box.toml"
    path.write_text(
        'schema_version = 1\nsglang_version = "0.5.11"\n'
        f'extra_args = ["--api-key", "{API_KEY}"]\n'
        f'[model]\npath = "{model}"\n[server]\nport = {port}\n'
        f'[ssh]\nhost = "{lab.target}"\n'
        f'[container]\nruntime = "podman"\nimage = "{image or lab.image}"\ngpus = "none"\n'
        'hf_cache = ""\n'
        '[env]\nHF_TOKEN = "env:HF_TOKEN"\nFAKE_NVIDIA_SMI = "h100x8-idle"\n'
        f'STAND_IN_PACE = "0.002"\n{extra_env}'
    )
    return path


def _run_id(output: str) -> str:
    match = re.search(r"launched (\S+) on ", output)
    assert match, output
    return match.group(1)


async def _follow_with_drops(host: RemoteHost, run_id: str, lab: PodmanLab, drops: int) -> tuple[list[str], int]:
    lines: list[str] = []
    dropped = reconnections = chunks = 0
    last = f"#token: {EXTRA_LINES - 1},"
    async for chunk in host.follow_log(run_id, 0, poll_s=0.02, reconnect_delay_s=0.05):
        chunks += 1
        reconnections += chunk.reconnected
        lines.extend(chunk.lines)
        if dropped < drops and (chunks == 1 or chunk.reconnected):
            assert lab.sshd.drop_connections(), "no connection to drop"
            dropped += 1
        if any(last in line for line in chunk.lines):
            break
    assert dropped == drops and reconnections >= drops
    return lines, reconnections


async def _follow(lab: PodmanLab, runs_root: Path, run_id: str) -> list[str]:
    host = await RemoteHost.connect(
        lab.target,
        settings=SshSettings(config_paths=[lab.ssh_config], known_hosts=lab.known_hosts,
                             global_known_hosts=[], client_keys=[lab.user_key], use_agent=False,
                             connect_timeout_s=10),
        policy=HostKeyPolicy(), agent_python=sys.executable, runs_root=str(runs_root),
    )
    try:
        lines, _ = await _follow_with_drops(host, run_id, lab, drops=3)
        return lines
    finally:
        await host.close()


def _files_holding(root: Path, secrets: list[str]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path}: {s}" for s in secrets if s.encode() in data]
    return found


def test_container_launch_follow_stop(
    podman_lab: PodmanLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(state))
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    port = free_port()
    profile = _profile(podman_lab, tmp_path, port, STAND_IN_EXTRA_LINES=str(EXTRA_LINES))
    args = _args(podman_lab, runs_root)

    code = main(["launch", str(profile), *args, "--quiet-log"])
    out = capsys.readouterr().out
    assert code == 0, out
    run_id = _run_id(out)
    name = f"sglang-wizard-{run_id}"
    try:
        # the image's SGLang (0.5.10, not the profile's 0.5.11) selects the rule set and the flags
        assert f"the image {podman_lab.image} has SGLang {IMAGE_SGLANG_VERSION} (profile: 0.5.11)" in out
        assert f"in container {name}" in out
        assert f"SGLang {IMAGE_SGLANG_VERSION} (selects the rule set" in out
        assert f"the host's SGLang {IMAGE_SGLANG_VERSION} accepts the arguments" in out  # dry run in the image
        assert "[ok  ] runtime" in out and f"{podman_lab.image} is on the host" in out
        assert "ready after" in out  # probed with the API key the container got through the FIFO
        record = RunRecords().get(run_id)
        assert record is not None and record.sglang_version == IMAGE_SGLANG_VERSION

        # the container runs detached under its run's name; its config holds no secret value
        inspect = podman_lab.podman("inspect", name)
        assert inspect.returncode == 0, inspect.stderr
        config = json.loads(inspect.stdout)[0]
        assert config["State"]["Running"]
        assert HF_TOKEN not in inspect.stdout and API_KEY not in inspect.stdout
        env_names = {item.split("=", 1)[0] for item in config["Config"]["Env"]}
        assert {"FAKE_NVIDIA_SMI", "STAND_IN_PACE"} <= env_names and "HF_TOKEN" not in env_names
        # nor does the runtime's own log of the container (the server logs its server_args,
        # API key included: the boot inside the container masks them before the runtime sees them)
        runtime_files = [Path(config["HostConfig"]["LogConfig"]["Path"]), Path(config["OCIConfigPath"]),
                         *sorted(Path(config["StaticDir"]).rglob("*"))]
        assert runtime_files[0].is_file() and b"server_args=" in runtime_files[0].read_bytes()
        for path in runtime_files:
            if path.is_file():
                assert HF_TOKEN.encode() not in path.read_bytes(), path
                assert API_KEY.encode() not in path.read_bytes(), path
        # ... while the server inside has it: its scheduler child process was started with it
        inside = _pids_in(config["Id"])
        assert any(f"HF_TOKEN={HF_TOKEN}".encode() in _environ(pid) for pid in inside), inside

        # the log, followed with connections killed under it: nothing lost, nothing doubled
        lines = asyncio.run(_follow(podman_lab, runs_root, run_id))
        on_disk = split_log_lines((runs_root / run_id / "log").read_bytes().decode())
        assert lines == on_disk[: len(lines)]
        assert sum("Decode batch" in line for line in lines) == EXTRA_LINES
        assert any("The server is fired up and ready to roll!" in line for line in lines)

        assert main(["runs", *args, "--host", podman_lab.target]) == 0
        listed = capsys.readouterr().out
        assert run_id in listed and f"container {name}" in listed and "running" in listed
        assert main(["runs"]) == 0  # the local records say it ran in the image
        assert f"in podman {podman_lab.image}" in capsys.readouterr().out
    finally:
        code = main(["stop", run_id, *args, "--timeout", "20"])
        stopped = capsys.readouterr().out
    assert code == 0, stopped
    assert f"container {name} removed" in stopped and "stopped on TERM" in stopped  # --init passed TERM on
    assert podman_lab.podman("container", "exists", name).returncode == 1
    assert main(["logs", run_id, *args]) == 0
    assert f"-- {run_id}: stopped" in capsys.readouterr().out
    # no secret value in anything the tool wrote: run directory, run records, the profile
    assert _files_holding(runs_root, [HF_TOKEN, API_KEY]) == []
    assert _files_holding(state, [HF_TOKEN, API_KEY]) == []
    assert HF_TOKEN not in profile.read_text()


def test_container_crash_is_explained_and_removed(
    podman_lab: PodmanLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    profile = _profile(podman_lab, tmp_path, free_port(), STAND_IN_CRASH="oom")
    code = main(["launch", str(profile), *_args(podman_lab, runs_root), "--quiet-log",
                 "--skip-dry-run"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "the server crashed (exit code 1)" in out or "exited" in out, out
    assert "out of memory" in out.lower(), out
    run_id = _run_id(out)
    assert podman_lab.podman("container", "exists", f"sglang-wizard-{run_id}").returncode == 1


def test_missing_image_blocks_with_the_pull_explained(
    podman_lab: PodmanLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(podman_lab, tmp_path, free_port(), image="127.0.0.1:9/sglang-wizard/absent:1")
    code = main(["preflight", str(profile), *_args(podman_lab, runs_root)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "pulling 127.0.0.1:9/sglang-wizard/absent:1 on the host" in out  # the pull's lines as they come
    assert "[FAIL] image" in out and "pulling it failed" in out
    assert "cannot reach the registry" in out, out
    assert "launch blocked: image" in out


def _pids_in(container_id: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if container_id in Path(f"/proc/{entry}/cgroup").read_text():
                    pids.append(int(entry))
            except OSError:
                continue
    return pids


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def test_two_nodes_in_containers(
    podman_lab: PodmanLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`nodes launch` with a [container] profile: host networking (rank 1 joins rank 0's
    rendezvous on the host's loopback), rank 0 first, the merged log, `nodes stop` removes both."""
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    model = model_dir(tmp_path)
    path = tmp_path / "two.toml"
    path.write_text(
        'schema_version = 1\n'
        f'[model]\npath = "{model}"\n[parallel]\ntp = 2\nnnodes = 2\n[server]\nport = {free_port()}\n'
        f'[ssh]\npython = "{sys.executable}"\n'
        f'[nodes]\nrendezvous_host = "127.0.0.1"\nrendezvous_port = {free_port(span=2)}\n'
        f'[[nodes.hosts]]\nhost = "{podman_lab.target}"\n'
        f'[[nodes.hosts]]\nhost = "{podman_lab.second_target}"\n'
        f'[container]\nruntime = "podman"\nimage = "{podman_lab.image}"\ngpus = "none"\nhf_cache = ""\n'
        '[env]\nFAKE_NVIDIA_SMI = "h100x8-idle"\nSTAND_IN_PACE = "0.002"\n'
    )
    args = _args(podman_lab, runs_root)[:-2]  # `nodes` takes no --agent-python
    assert main(["command", str(path), "--node", "1"]) == 0
    node1 = capsys.readouterr().out
    assert "--network host" in node1 and "--node-rank 1" in node1 and "podman run" in node1

    code = main(["nodes", "launch", str(path), *args])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ready: every node joined" in out and "[n0] " in out and "[n1] " in out
    assert f"SGLang {IMAGE_SGLANG_VERSION}" in out  # each node's checks ran inside the image
    group_id = out.split("group ", 1)[1].split(":", 1)[0]
    names = [f"sglang-wizard-{group_id}-n{rank}" for rank in (0, 1)]
    assert all(podman_lab.podman("container", "exists", n).returncode == 0 for n in names)
    code = main(["nodes", "stop", group_id, *args])
    stopped = capsys.readouterr().out
    assert code == 0, stopped
    assert "node 0: stopped, clean" in stopped and "node 1: stopped, clean" in stopped
    assert all(podman_lab.podman("container", "exists", n).returncode == 1 for n in names)


def test_stop_kills_a_server_that_ignores_term_within_the_timeout(
    podman_lab: PodmanLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import time

    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(podman_lab, tmp_path, free_port(), STAND_IN_IGNORE_TERM="1")
    args = _args(podman_lab, runs_root)
    assert main(["launch", str(profile), *args, "--quiet-log", "--skip-dry-run"]) == 0
    run_id = _run_id(capsys.readouterr().out)
    started = time.monotonic()
    code = main(["stop", run_id, *args, "--timeout", "2"])
    took = time.monotonic() - started
    out = capsys.readouterr().out
    assert code == 0, out
    assert "killed (did not stop on TERM)" in out and f"container sglang-wizard-{run_id} removed" in out
    assert took < 2 + 20, took  # the runtime's stop escalates after the timeout, not its default 10 s
    assert podman_lab.podman("container", "exists", f"sglang-wizard-{run_id}").returncode == 1


def test_a_missing_mount_source_blocks_and_the_hf_cache_is_created(
    podman_lab: PodmanLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(podman_lab, tmp_path, free_port())
    cache = tmp_path / "new-hf-cache"
    gone = tmp_path / "no such model"
    profile.write_text(profile.read_text().replace('hf_cache = ""', f'hf_cache = "{cache}"')
                       .replace(str(tmp_path / "model"), str(gone)))
    code = main(["preflight", str(profile), *_args(podman_lab, runs_root)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "[FAIL] mounts" in out and f"not on the host: {gone}" in out
    assert cache.is_dir()  # created like SGLang would, so the runtime can mount it


def test_gpus_that_cannot_be_passed_in_are_explained(
    podman_lab: PodmanLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """This machine has no CDI spec: podman refuses --device nvidia.com/gpu=all, and preflight
    says how to make GPUs visible in containers instead of a bare runtime error."""
    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(podman_lab, tmp_path, free_port())
    profile.write_text(profile.read_text().replace('gpus = "none"', 'gpus = "nvidia"'))
    code = main(["preflight", str(profile), *_args(podman_lab, runs_root)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "[FAIL] python" in out and "nvidia-ctk cdi generate" in out


def _processes_with(*words: bytes) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if all(word in argv for word in words):
                found.append(int(entry))
    return found


def test_the_log_copy_survives_a_killed_log_reader(
    podman_lab: PodmanLab, runs_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`RUNTIME logs -f` dies while the container runs (three times): the start script follows
    again and skips what it copied, so the run's log has every line exactly once, in order."""
    import signal
    import time

    monkeypatch.setenv("SGLANG_WIZARD_STATE_DIR", str(tmp_path / "state"))
    profile = _profile(podman_lab, tmp_path, free_port(), STAND_IN_EXTRA_LINES=str(EXTRA_LINES))
    args = _args(podman_lab, runs_root)
    assert main(["launch", str(profile), *args, "--no-follow", "--skip-dry-run"]) == 0
    run_id = _run_id(capsys.readouterr().out)
    name = f"sglang-wizard-{run_id}".encode()
    log = runs_root / run_id / "log"
    killed: list[int] = []
    deadline = time.monotonic() + 120
    try:
        while len(killed) < 3 and time.monotonic() < deadline:
            for pid in _processes_with(b"logs", b"-f", name):
                if pid not in killed:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.05)  # polling interval of the process scan (bounded by the deadline)
        assert len(killed) == 3, killed
        last = f"#token: {EXTRA_LINES - 1},".encode()
        while last not in log.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.1)  # polling interval of the log check (bounded by the deadline)
        lines = split_log_lines(log.read_bytes().decode())
        tokens = [int(line.split("#token: ")[1].split(",")[0]) for line in lines if "Decode batch" in line]
        assert tokens == list(range(EXTRA_LINES))  # nothing lost, nothing doubled
        assert sum("The server is fired up" in line for line in lines) == 1
        assert sum("server_args=" in line for line in lines) == 1
    finally:
        assert main(["stop", run_id, *args]) == 0
