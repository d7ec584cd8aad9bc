"""`sglang-wizard logs RUN --follow` vs `ssh host cat LOG`, side by side, through a jump host.

Starts two OpenSSH sshd on 127.0.0.1 (a jump host and the "GPU host", like tests/ssh), writes a
finished run directory whose log has LINES lines (default 100,000: start-up + decode batches),
and times, alternating, median of ROUNDS:

* ssh cat:  `ssh -F CONFIG gpu cat LOG > /dev/null` (OpenSSH through ProxyJump: two handshakes),
* wizard:   `sglang-wizard logs bench-run --follow --host gpu ... > /dev/null` as a user runs it
            (a new process: imports, the two-hop handshake, the remote helper, line splitting,
            stage tracking, printing every line).

Prints both times and the ratio wizard / ssh cat (the issue's target: <= 1.6x).
Run: `.venv/bin/python bench/bench_logs_follow.py [LINES] [ROUNDS]`.
"""

from __future__ import annotations

import getpass
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.ssh.sshd_harness import keygen, start_sshd  # noqa: E402
from wizard.remote.burst import startup_log_lines  # noqa: E402

RUN_ID = "20261129-100000-bench0"


def write_run(runs_root: Path, lines: int) -> Path:
    """A finished run directory (exit code 0) whose log has `lines` lines."""
    run_dir = runs_root / RUN_ID
    run_dir.mkdir(parents=True)
    startup = sum(1 for _ in startup_log_lines(0))
    with open(run_dir / "log", "w") as log:
        log.write("\n".join(startup_log_lines(max(0, lines - startup))) + "\n")
    (run_dir / "pid").write_text("999999\n")
    (run_dir / "exit_code").write_text("0\n")
    return run_dir / "log"


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def main(lines: int, rounds: int) -> None:
    user = getpass.getuser()
    with tempfile.TemporaryDirectory(prefix="bench-follow-") as tmp:
        base = Path(tmp)
        key = base / "user_key"
        authorized = base / "authorized_keys"
        authorized.write_text(keygen(key) + "\n")
        jump = start_sshd(base, "jump", authorized)
        target = start_sshd(base, "target", authorized)
        try:
            known_hosts = base / "known_hosts"
            known_hosts.write_text(jump.known_hosts_line() + "\n" + target.known_hosts_line() + "\n")
            config = base / "ssh_config"
            config.write_text(
                f"Host jump\n  HostName 127.0.0.1\n  Port {jump.port}\n  User {user}\n\n"
                f"Host gpu\n  HostName 127.0.0.1\n  Port {target.port}\n  User {user}\n"
                "  ProxyJump jump\n\n"
                f"Host *\n  IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {known_hosts}\n"
                "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n"
            )
            runs_root = base / "runs"
            log = write_run(runs_root, lines)
            size_mb = log.stat().st_size / 1e6
            env = {**os.environ, "SGLANG_WIZARD_STATE_DIR": str(base / "state")}
            raw_argv = ["ssh", "-F", str(config), "gpu", "cat", str(log)]
            wizard_argv = [
                sys.executable, "-m", "wizard.cli", "logs", RUN_ID, "--follow", "--host", "gpu",
                "--ssh-config", str(config), "--no-agent", "--remote-runs-dir", str(runs_root),
                "--agent-python", sys.executable,
            ]
            check = subprocess.run(wizard_argv, capture_output=True, text=True, env=env, cwd=REPO)
            if check.returncode != 0 or check.stdout.count("\n") < lines:
                raise SystemExit(f"the wizard did not stream the log: {check.stderr[-2000:]}")
            raw: list[float] = []
            wizard: list[float] = []
            for _ in range(rounds):
                raw.append(timed(raw_argv, env))
                wizard.append(timed(wizard_argv, env))
        finally:
            target.stop()
            jump.stop()
    t_raw, t_wiz = statistics.median(raw), statistics.median(wizard)
    print(f"finished run, {lines:,} log lines; through a jump host; median of {rounds} alternating rounds")
    print(f"  ssh gpu cat LOG                 {t_raw:6.3f} s   (all: {' '.join(f'{t:.3f}' for t in raw)})")
    print(f"  sglang-wizard logs RUN --follow {t_wiz:6.3f} s   (all: {' '.join(f'{t:.3f}' for t in wizard)})")
    print(f"  ratio wizard / ssh cat: {t_wiz / t_raw:.2f}x (target <= 1.6x); log {size_mb:.1f} MB")


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 100_000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 5,
    )
