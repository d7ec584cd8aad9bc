"""What new users hit over SSH (issue 25): a follow of a run that `stop` ends from another
terminal, a connection dropped during preflight, a stalled connection. Real loopback sshd."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from pathlib import Path

import pytest

from wizard.cli import build_parser, main
from wizard.remote import commands

from .conftest import SshLab
from .helpers import STAND_IN, USER, model_dir
from .sshd_harness import free_port

pytestmark = pytest.mark.ssh

WAIT_S = 60  # bound of every wait on another thread's condition


class _Watched(io.StringIO):
    """Output that tells a waiting test when a text has been written."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = threading.Condition()

    def write(self, text: str) -> int:
        with self._changed:
            count = super().write(text)
            self._changed.notify_all()
        return count

    def wait_for(self, needle: str, timeout: float = WAIT_S) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: needle in self.getvalue(), timeout)


def _profile(tmp_path: Path, host: str, **env: str) -> Path:
    model = model_dir(tmp_path, "model")
    values = {
        "PYTHONPATH": str(STAND_IN),
        "STAND_IN_PACE": "0.005",
        "PATH": f"{STAND_IN / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "FAKE_NVIDIA_SMI": "a6000x2-idle",
        **env,
    }
    env_toml = "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items())
    path = tmp_path / "profile.toml"
    path.write_text(
        f'schema_version = 1\nsglang_version = "0.5.11"\n\n[model]\npath = {json.dumps(str(model))}\n\n'
        f'[server]\nport = {free_port()}\n\n[ssh]\nhost = "{host}"\npython = "{sys.executable}"\n\n'
        f"[env]\n{env_toml}\n"
    )
    return path


def _launched(profile: Path, cli_args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["launch", str(profile), "--no-follow", "--quiet-log", *cli_args]) == 0
    return capsys.readouterr().out.split("launched ", 1)[1].split()[0]


def _follow_in_thread(argv: list[str]) -> tuple[threading.Thread, _Watched, list[int]]:
    """`sglang-wizard logs ... --follow` as another terminal runs it."""
    out = _Watched()
    codes: list[int] = []
    args = build_parser().parse_args(argv)
    thread = threading.Thread(target=lambda: codes.append(commands.logs(args, out)), daemon=True)
    thread.start()
    return thread, out, codes


def test_a_follow_ends_with_exit_0_when_stop_ends_the_run_from_another_terminal(
    cli_args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _launched(_profile(tmp_path, "gpu-box"), cli_args, capsys)
    follower, out, codes = _follow_in_thread(["logs", run_id, "--follow", *cli_args])
    try:
        assert out.wait_for("fired up and ready"), out.getvalue()[-2000:]
    finally:
        assert main(["stop", run_id, *cli_args]) == 0
    follower.join(WAIT_S)
    assert not follower.is_alive()
    text = out.getvalue()
    assert codes == [0], text[-1500:]
    assert "was ready, then was stopped by the user" in text, text[-1500:]
    assert "exited (exit code" not in text


def test_a_connection_dropped_during_preflight_is_said_and_re_made(
    cli_args: list[str], ssh_lab: SshLab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    profile = _profile(tmp_path, "gpu-box", FAKE_NVIDIA_SMI_HOLD=str(fifo))
    dropped: list[int] = []

    def drop_while_held() -> None:
        with open(fifo) as held:  # nvidia-smi runs inside the remote preflight now
            held.read()
        dropped.extend(ssh_lab.target.drop_connections())
        with open(fifo, "w") as release:
            release.write("go\n")

    dropper = threading.Thread(target=drop_while_held, daemon=True)
    dropper.start()
    code = main(["preflight", str(profile), "--skip-dry-run", *cli_args])
    dropper.join(WAIT_S)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert dropped, "the connection was not dropped"
    assert code == 0, text
    assert "-- connection to " in text and "lost during 'preflight'" in text, text
    assert "reconnecting" in text and "re-made" in text
    assert "remote helper" not in text and "No such process" not in text
    assert "[ok  ] gpus" in text


def test_a_stalled_connection_is_said_and_re_made(
    cli_args: list[str], ssh_lab: SshLab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing comes back over the connection (its sshd is SIGSTOPped): after the keepalive
    timeout (ServerAliveInterval 1 x (ServerAliveCountMax 1 + 1) = 2 s) the follower says the
    connection stalled and follows on over a new one."""
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host gpu-stall\n  HostName 127.0.0.1\n  Port {ssh_lab.target.port}\n  User {USER}\n"
        f"  IdentityFile {ssh_lab.user_key}\n  ServerAliveInterval 1\n  ServerAliveCountMax 1\n"
    )
    args = [a if a != str(ssh_lab.ssh_config) else str(config) for a in cli_args]
    run_id = _launched(_profile(tmp_path, "gpu-stall", STAND_IN_NEVER_READY="1"), args, capsys)
    follower, out, codes = _follow_in_thread(["logs", run_id, "--follow", *args])
    stalled: list[int] = []
    try:
        assert out.wait_for("Capture cuda graph end"), out.getvalue()[-2000:]
        stalled = ssh_lab.target.stall_connections()
        assert stalled
        assert out.wait_for("stalled during the log stream"), out.getvalue()[-2000:]
        assert out.wait_for(" re-made"), out.getvalue()[-2000:]
    finally:
        ssh_lab.target.end_stalled(stalled)
        assert main(["stop", run_id, *args]) == 0
    follower.join(WAIT_S)
    text = out.getvalue()
    assert codes == [0], text[-1500:]
    assert "(no answer to keepalives for 2 s), reconnecting" in text
    assert "stopped by the user" in text


def test_a_crash_of_a_known_rule_names_the_rules_fixes_not_the_generic_hint(
    tmp_path: Path,
) -> None:
    """The crash mapping (SGLang's bare trio assert at its 0.5.11 line) names the fixes the check
    of the launched profile offers for that rule, as the preflight's dry run already does."""
    from wizard import logstages
    from wizard.api import check_profile
    from wizard.profile_schema import Profile
    from wizard.remote.flow import with_rule_fixes
    from wizard.remote.runs import CrashReport

    profile = Profile.model_validate({
        "sglang_version": "0.5.11",
        "model": {"path": str(model_dir(tmp_path, architectures="LlamaForCausalLM"))},
        "speculative": {"algorithm": "EAGLE", "eagle_topk": 4, "num_draft_tokens": 8,
                        "draft_model_path": str(model_dir(tmp_path, "draft"))},
    })
    report = check_profile(profile, verify_fixes=False)
    fixes = {f.rule: [fix.label for fix in f.fixes] for f in report.findings}
    traceback = logstages.traceback_from_location("sglang/srt/server_args.py:3521", "AssertionError")
    explanation = logstages.explain_crash(traceback, None, "0.5.11")
    assert explanation.rule_id == "R-SPEC-STEPS-TRIO"
    assert fixes.get("R-SPEC-STEPS-TRIO"), fixes
    crash = with_rule_fixes(CrashReport(explanation, 10, 100), fixes)
    text = crash.explanation.summary()
    assert "check the profile with the wizard" not in text
    for label in fixes["R-SPEC-STEPS-TRIO"]:
        assert f"fix: {label}" in text
    unknown = with_rule_fixes(CrashReport(explanation, 10, 100), {})
    assert "check the profile with the wizard" in unknown.explanation.summary()
