"""Writing a file the user named, safely: every writer of the wizard goes through `write_text`.

A regular file (or a new one) is replaced atomically: a temp file beside it, fsync, rename, so a
reader sees the old or the complete new text, never a part. Anything else is never replaced:

* a symlink is followed: its target is written (a dangling link creates the target it names),
  the link itself stays; a symlink loop is refused (`UnsafeTargetError`);
* a character device or a FIFO (`-o /dev/null`, `-o >(cat)`) is written directly, as the shell's
  `>` would: renaming a temp file over it would replace the device with a regular file (as root,
  over `/dev/null`, that breaks the machine); a FIFO without a reader is refused, not waited on;
* a directory, a socket or a block device is refused.

No pydantic, no Textual: the CLI, the profile saver and the screens all call it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

#: The mode of a file the wizard creates: only the user reads what it writes (profiles, exports,
#: screenshots), whatever the umask (callers pass another mode where one is needed, e.g. 0o755).
PRIVATE_MODE = 0o600


class UnsafeTargetError(OSError):
    """A path that must not be written (a symlink loop, a directory, a socket, a block device,
    a FIFO nobody reads); `str()` says why and what to do."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(errno.EINVAL, reason, str(path))
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.filename}: {self.reason}"


def resolve_target(path: Path | str) -> Path:
    """The file a write to `path` must change: symlinks followed (a dangling one to the path it
    names); `UnsafeTargetError` for a symlink loop or a chain that cannot be followed."""
    p = Path(path)
    seen: set[str] = set()
    while True:
        try:
            info = os.lstat(p)
        except FileNotFoundError:
            return p
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeTargetError(p, "is a symlink loop; give another path") from None
            raise
        if not stat.S_ISLNK(info.st_mode):
            return p
        key = os.path.abspath(p)
        if key in seen or len(seen) > 40:
            raise UnsafeTargetError(path, "is a symlink loop; give another path")
        seen.add(key)
        link = Path(os.readlink(p))
        p = link if link.is_absolute() else p.parent / link


def write_text(path: Path | str, text: str, *, mode: int = PRIVATE_MODE) -> Path:
    """Write `text` (UTF-8) to `path` as described in the module docstring; returns the file
    written (the symlink's target when `path` is a link). A new or replaced regular file gets
    `mode`; a device or FIFO keeps its own."""
    data = text.encode("utf-8")  # fails before any file is touched
    target = resolve_target(path)
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeTargetError(path, "is a symlink loop; give another path") from None
        raise
    if info is not None and not stat.S_ISREG(info.st_mode):
        _write_special(target, info, data)
        return target
    _replace_regular(target, data, mode)
    return target


def _write_special(target: Path, info: os.stat_result, data: bytes) -> None:
    """Write to a character device or a FIFO in place; refuse every other non-regular file."""
    kind = info.st_mode
    if stat.S_ISDIR(kind):
        raise UnsafeTargetError(target, "is a directory; give a file name")
    if not (stat.S_ISCHR(kind) or stat.S_ISFIFO(kind)):
        what = "a socket" if stat.S_ISSOCK(kind) else "a block device" if stat.S_ISBLK(kind) \
            else "not a regular file"
        raise UnsafeTargetError(target, f"is {what}; the wizard writes only files, character "
                                "devices and FIFOs")
    flags = os.O_WRONLY | getattr(os, "O_NOCTTY", 0)
    if stat.S_ISFIFO(kind):
        flags |= os.O_NONBLOCK  # a FIFO without a reader: ENXIO now instead of waiting forever
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO and stat.S_ISFIFO(kind):
            raise UnsafeTargetError(target, "is a FIFO that nobody reads; start the reader "
                                    "first") from None
        raise
    try:
        if stat.S_ISFIFO(kind):
            os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _replace_regular(target: Path, data: bytes, mode: int) -> None:
    """Temp file beside `target`, fsync, rename over it, fsync the folder."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
