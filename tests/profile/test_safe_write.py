"""Every writer only replaces regular files (issue 25 item 21): `import --force -o /dev/null` once
replaced the machine's /dev/null with a regular file.

The devices here are made in tmp_path (a null-like character device, c 1 3, needs root; the real
/dev/null is never touched), the FIFOs with os.mkfifo, the links with os.symlink.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from wizard.files import UnsafeTargetError, write_text
from wizard.profile import atomic_write_text, save_profile
from wizard.profile_schema import Profile

ROOT = Path(__file__).resolve().parents[2]
MULTINODE = ROOT / "profiles" / "deepseek-v3-fp8-2x8-h100.toml"
COMMAND = ["python", "-m", "sglang.launch_server", "--model-path", "/m"]


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "wizard.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, check=False, timeout=120)


def _null_device(tmp_path: Path) -> Path:
    """A character device like /dev/null (major 1, minor 3) inside tmp_path (root only)."""
    if os.geteuid() != 0:
        pytest.skip("making a character device needs root")
    path = tmp_path / "null"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("this container may not make device nodes")
    return path


class _FifoReader:
    """Reads a FIFO in a thread (what `-o >(cat)` or a waiting consumer does)."""

    def __init__(self, path: Path) -> None:
        self.data = b""
        self._thread = threading.Thread(target=self._read, args=(path,), daemon=True)
        self._thread.start()

    def _read(self, path: Path) -> None:
        with open(path, "rb") as handle:
            self.data = handle.read()

    def join(self) -> bytes:
        self._thread.join(timeout=60)
        assert not self._thread.is_alive()
        return self.data


# ------------------------------------------------------------------------------ the helper


def test_a_regular_file_is_replaced_atomically_with_a_private_mode(tmp_path: Path) -> None:
    target = tmp_path / "p.toml"
    target.write_text("old")
    os.chmod(target, 0o644)
    write_text(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["p.toml"]  # no temp file left


def test_a_character_device_is_written_in_place_never_replaced(tmp_path: Path) -> None:
    device = _null_device(tmp_path)
    write_text(device, "discarded")
    atomic_write_text(device, "discarded too")
    info = os.lstat(device)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)


def test_a_fifo_is_written_in_place_and_one_without_reader_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeTargetError, match="nobody reads"):
        write_text(fifo, "x")  # no reader: refused at once, not a hang
    reader = _FifoReader(fifo)
    while True:  # the reader thread opens the FIFO; write_text waits for nobody
        try:
            write_text(fifo, "through the pipe")
            break
        except UnsafeTargetError:
            threading.Event().wait(0.01)
    assert reader.join() == b"through the pipe"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_symlinks_are_followed_and_loops_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text("old")
    link = tmp_path / "link.toml"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"

    dangling = tmp_path / "dangling.toml"
    dangling.symlink_to(tmp_path / "sub" / "created.toml")
    write_text(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "sub" / "created.toml").read_text() == "made"

    loop_a, loop_b = tmp_path / "a", tmp_path / "b"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    with pytest.raises(UnsafeTargetError, match="symlink loop"):
        write_text(loop_a, "x")
    assert loop_a.is_symlink() and loop_b.is_symlink()

    with pytest.raises(UnsafeTargetError, match="directory"):
        write_text(tmp_path, "x")


def test_save_profile_follows_a_symlink_to_the_profile(tmp_path: Path) -> None:
    real = tmp_path / "kept" / "p.toml"
    real.parent.mkdir()
    real.write_text("")
    link = tmp_path / "p.toml"
    link.symlink_to(real)
    save_profile(Profile.model_validate({"model": {"path": "/m"}}), link, overwrite=True)
    assert link.is_symlink() and 'path = "/m"' in real.read_text()


# ------------------------------------------------------------------------------- the CLI


def test_import_force_onto_a_device_keeps_the_device(tmp_path: Path) -> None:
    device = _null_device(tmp_path)
    done = _cli("import", "--force", "-o", str(device), "--", *COMMAND)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_import_onto_a_fifo_writes_through_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = _FifoReader(fifo)
    done = _cli("import", "--force", "-o", str(fifo), "--", *COMMAND)
    assert done.returncode == 0, done.stderr
    assert b'path = "/m"' in reader.join()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_import_onto_a_dangling_symlink_writes_its_target_and_a_loop_is_refused(
    tmp_path: Path,
) -> None:
    dangling = tmp_path / "out.toml"
    dangling.symlink_to(tmp_path / "target.toml")
    done = _cli("import", "-o", str(dangling), "--", *COMMAND)
    assert done.returncode == 0, done.stderr
    assert dangling.is_symlink() and 'path = "/m"' in (tmp_path / "target.toml").read_text()

    loop = tmp_path / "loop.toml"
    loop.symlink_to(loop)
    done = _cli("import", "--force", "-o", str(loop), "--", *COMMAND)
    assert done.returncode == 2 and "symlink loop" in done.stderr
    assert loop.is_symlink() and os.readlink(loop) == str(loop)


def test_export_force_onto_a_device_keeps_the_device(tmp_path: Path) -> None:
    device = _null_device(tmp_path)
    mode = stat.S_IMODE(os.lstat(device).st_mode)
    for fmt in ("sbatch", "lws"):
        done = _cli("export", str(MULTINODE), "--format", fmt, "--force", "-o", str(device))
        assert done.returncode == 0, done.stderr
        info = os.lstat(device)  # still the device, its mode not made executable
        assert stat.S_ISCHR(info.st_mode) and stat.S_IMODE(info.st_mode) == mode


def test_export_onto_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    loop = tmp_path / "job.sh"
    loop.symlink_to(loop)
    done = _cli("export", str(MULTINODE), "--format", "sbatch", "--force", "-o", str(loop))
    assert done.returncode == 2 and "symlink loop" in done.stderr
    assert loop.is_symlink()
