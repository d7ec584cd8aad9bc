"""Log streaming through the wizard vs raw `ssh cat`, side by side, on a loopback sshd.

Starts its own OpenSSH sshd on 127.0.0.1 (like tests/ssh), writes a run directory with a
1,000,000-line SGLang log (start-up + decode-batch lines), then measures in one run:

* raw:     `ssh -p PORT USER@127.0.0.1 cat LOG > /dev/null` (OpenSSH client incl. its handshake),
* transport: `cat LOG` over the wizard's already open asyncssh connection (no parsing),
* wizard:  `RemoteHost.follow_log()` from byte 0 to the end (asyncssh + remote agent + line split),
* watched: the same plus `RunWatcher` (stages, traceback/OOM scan, bounded window),

alternating the three (median of ROUNDS), prints MB/s, lines/s and the ratios wizard/raw, and
peak memory of a watched stream (tracemalloc peak and the process's max RSS).

Run: `.venv/bin/python bench/bench_log_stream.py [LINES] [ROUNDS]` (defaults 1000000, 3).
"""

from __future__ import annotations

import asyncio
import getpass
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.ssh.sshd_harness import keygen, start_sshd  # noqa: E402
from wizard.remote.burst import startup_log_lines  # noqa: E402
from wizard.remote.connection import SshSettings  # noqa: E402
from wizard.remote.session import RemoteHost  # noqa: E402
from wizard.remote.watch import RunWatcher  # noqa: E402

RUN_ID = "bench-run"


def write_run(runs_root: Path, lines: int) -> Path:
    """A finished run directory (exit_code present) whose log has `lines` lines."""
    run_dir = runs_root / RUN_ID
    run_dir.mkdir(parents=True)
    with open(run_dir / "log", "w") as log:
        batch: list[str] = []
        startup = sum(1 for _ in startup_log_lines(0))
        for line in startup_log_lines(max(0, lines - startup)):
            batch.append(line)
            if len(batch) >= 10_000:
                log.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            log.write("\n".join(batch) + "\n")
    (run_dir / "pid").write_text("999999\n")
    (run_dir / "exit_code").write_text("0\n")
    return run_dir / "log"


def raw_ssh_cat(port: int, key: Path, known_hosts: Path, log: Path) -> float:
    """Seconds for OpenSSH's client to copy the file to /dev/null."""
    start = time.perf_counter()
    subprocess.run(
        [
            "ssh", "-p", str(port), "-i", str(key), "-o", f"UserKnownHostsFile={known_hosts}",
            "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-F", "/dev/null",
            f"{getpass.getuser()}@127.0.0.1", "cat", str(log),
        ],
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - start


async def asyncssh_cat(host: RemoteHost, log: Path) -> float:
    """Seconds for `cat` over the wizard's already open asyncssh connection (transport only)."""
    start = time.perf_counter()
    process = await host.connection.create_process(f"cat {log}", encoding=None)
    while await process.stdout.read(1 << 18):
        pass
    await process.wait_closed()
    return time.perf_counter() - start


async def wizard_follow(host: RemoteHost, watch: bool) -> tuple[float, int]:
    """Seconds and lines for follow_log from byte 0 to the end (optionally through RunWatcher)."""
    watcher = RunWatcher() if watch else None
    lines = 0
    start = time.perf_counter()
    async for chunk in host.follow_log(RUN_ID, 0):
        lines += len(chunk.lines)
        if watcher is not None:
            watcher.feed(chunk)
    return time.perf_counter() - start, lines


async def main(total_lines: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-log-") as tmp:
        base = Path(tmp)
        key = base / "user_key"
        authorized = base / "authorized_keys"
        authorized.write_text(keygen(key) + "\n")
        sshd = start_sshd(base, "sshd", authorized)
        try:
            known_hosts = base / "known_hosts"
            known_hosts.write_text(sshd.known_hosts_line() + "\n")
            runs_root = base / "runs"
            log = write_run(runs_root, total_lines)
            size = log.stat().st_size
            settings = SshSettings(config_paths=[], known_hosts=known_hosts, client_keys=[key], use_agent=False)
            host = await RemoteHost.connect(
                f"{getpass.getuser()}@127.0.0.1:{sshd.port}", settings=settings, agent_python=sys.executable, runs_root=str(runs_root)
            )
            raw: list[float] = []
            transport: list[float] = []
            wiz: list[float] = []
            watched: list[float] = []
            counted = 0
            for _ in range(rounds):
                raw.append(raw_ssh_cat(sshd.port, key, known_hosts, log))
                transport.append(await asyncssh_cat(host, log))
                seconds, counted = await wizard_follow(host, watch=False)
                wiz.append(seconds)
                seconds, _ = await wizard_follow(host, watch=True)
                watched.append(seconds)
            tracemalloc.start()
            await wizard_follow(host, watch=True)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            await host.close()
        finally:
            sshd.stop()
    assert counted == total_lines, f"streamed {counted} lines, expected {total_lines}"
    mb = size / 1e6
    t_raw, t_cat, t_wiz, t_watch = (statistics.median(x) for x in (raw, transport, wiz, watched))
    print(f"log: {total_lines:,} lines, {mb:.1f} MB; median of {rounds} alternating rounds on loopback sshd")
    print(f"  raw ssh cat            {t_raw:6.2f} s  {mb / t_raw:7.1f} MB/s  {total_lines / t_raw:12,.0f} lines/s")
    print(f"  asyncssh cat (open)    {t_cat:6.2f} s  {mb / t_cat:7.1f} MB/s  {total_lines / t_cat:12,.0f} lines/s")
    print(f"  wizard follow_log      {t_wiz:6.2f} s  {mb / t_wiz:7.1f} MB/s  {total_lines / t_wiz:12,.0f} lines/s")
    print(f"  follow_log + watcher   {t_watch:6.2f} s  {mb / t_watch:7.1f} MB/s  {total_lines / t_watch:12,.0f} lines/s")
    print(
        f"  time ratios vs raw ssh cat: follow_log {t_wiz / t_raw:.2f}x, with watching {t_watch / t_raw:.2f}x; "
        f"vs asyncssh cat: follow_log {t_wiz / t_cat:.2f}x"
    )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak traced memory while watching the whole log: {peak / 1e6:.1f} MB (max RSS of this process {rss_mb:.0f} MB)")
    print(f"  (the log itself is {mb:.0f} MB: memory stays bounded by the {RunWatcher().window.maxlen}-line window)")


if __name__ == "__main__":
    lines_arg = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rounds_arg = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    asyncio.run(main(lines_arg, rounds_arg))
