"""A small local container image for the container tests (no registry is reachable here).

The image holds this machine's python3 (binary, the shared libraries it and its extension
modules load, the standard library, all at their paths here), `/usr/bin/env`, the stand-in SGLang at `/opt/stand_in` (as
the `sglang` package, version `IMAGE_SGLANG_VERSION`) and the fake `nvidia-smi` with its
fixtures. It is built with `podman import` of a rootfs tarball and cached under a tag derived from
its contents: a second run (or another test module) reuses it.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STAND_IN = REPO / "tests" / "fixtures" / "stand_in"
SMI_FIXTURES = REPO / "tests" / "fixtures" / "nvidia-smi"
def _system_python() -> Path:
    """The machine's python3 (its real file: the image gets it at the same path)."""
    found = Path("/usr/bin/python3")
    if not found.exists():
        found = Path(getattr(sys, "_base_executable", sys.executable))
    return found.resolve()


PYTHON = _system_python()
IMAGE_SGLANG_VERSION = "0.5.10"  # differs from the host's stand-in (0.5.11): the checks must use this
SKIP_STDLIB = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data",
               "site-packages", "dist-packages", "__pycache__"}

CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
log_driver = "k8s-file"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


def podman_available() -> str | None:
    """Why the container tests cannot run here, or None."""
    if shutil.which("podman") is None or shutil.which("runc") is None:
        return "podman/runc not installed (scripts/ensure-system-packages.sh installs them as root)"
    if not PYTHON.exists():
        return f"{PYTHON} is missing (the image copies this machine's python3)"
    return None


def _libraries(binaries: list[Path]) -> set[Path]:
    found: set[Path] = set()
    for binary in binaries:
        out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            path = parts[2] if "=>" in parts and len(parts) > 2 else parts[0] if parts else ""
            if path.startswith("/"):
                found.add(Path(path))
    return found


def _stdlib() -> Path:
    out = subprocess.run([str(PYTHON), "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def _files() -> Iterator[tuple[str, Path]]:
    """(path in the image, path here) of every regular file of the image."""
    yield str(PYTHON), PYTHON
    yield "/usr/bin/env", Path("/usr/bin/env")
    stdlib = _stdlib()
    binaries = [PYTHON, Path("/usr/bin/env")]
    for root, dirs, files in os.walk(stdlib):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_STDLIB and not d.startswith("config-"))
        for name in sorted(files):
            path = Path(root) / name
            if path.suffix in (".pyc",):
                continue
            if path.suffix == ".so":
                binaries.append(path)
            yield str(path), path
    for lib in sorted(_libraries(binaries)):
        yield str(lib), lib.resolve()
    for path in sorted(STAND_IN.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield "/opt/stand_in/" + str(path.relative_to(STAND_IN)), path
    for path in sorted(SMI_FIXTURES.iterdir()):
        if path.is_file():
            yield "/opt/nvidia-smi/" + path.name, path  # the fake finds them at bin/../../nvidia-smi


def image_tag() -> str:
    """The tag of the image for the current stand-in, fixtures, python and this builder."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for inside, here in _files():
        stat = here.stat()
        digest.update(f"{inside}\0{stat.st_size}\0".encode())
        if inside.startswith("/opt/"):
            digest.update(here.read_bytes())
    return f"localhost/sglang-wizard-test:{digest.hexdigest()[:16]}"


def _rootfs_tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for directory, mode in (("tmp", 0o1777), ("root", 0o700), ("proc", 0o755), ("sys", 0o755),
                                ("dev", 0o755), ("etc", 0o755), ("run", 0o755), ("lib64", 0o755)):
            info = tarfile.TarInfo(directory)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)
        for name, text in (("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
                           ("etc/group", "root:x:0:\nvideo:x:44:\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        added: set[str] = set()
        for inside, here in _files():
            if inside in added:
                continue
            added.add(inside)
            tar.add(str(here), arcname=inside.lstrip("/"), recursive=False)
        if str(PYTHON) != "/usr/bin/python3":
            link = tarfile.TarInfo("usr/bin/python3")
            link.type, link.linkname = tarfile.SYMTYPE, str(PYTHON)
            tar.addfile(link)
    return buffer.getvalue()


def ensure_image(env: Mapping[str, str]) -> str:
    """Build the image unless an image of this tag exists; returns the tag. Test processes take
    turns (pytest-xdist workers may ask at the same time)."""
    with open(Path(tempfile.gettempdir()) / "sglang-wizard-test-image.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _ensure_image(env)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _ensure_image(env: Mapping[str, str]) -> str:
    tag = image_tag()
    exists = subprocess.run(["podman", "image", "exists", tag], env=dict(env))
    if exists.returncode == 0:
        return tag
    changes = [
        "ENV=PATH=/opt/stand_in/bin:/usr/local/bin:/usr/bin:/bin",
        "ENV=PYTHONPATH=/opt/stand_in",
        f"ENV=STAND_IN_SGLANG_VERSION={IMAGE_SGLANG_VERSION}",
        "ENV=HOME=/root",
    ]
    argv = ["podman", "import"]
    for change in changes:
        argv += ["--change", change]
    done = subprocess.run([*argv, "-", tag], input=_rootfs_tar(), env=dict(env),
                          capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"podman import failed: {done.stderr.decode(errors='replace')}")
    # older builds of this image (other contents) are not needed any more; one in use stays
    listed = subprocess.run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}",
                             tag.split(":")[0]], env=dict(env), capture_output=True, text=True)
    old = [name for name in listed.stdout.split() if name != tag]
    if old:
        subprocess.run(["podman", "rmi", *old], env=dict(env), capture_output=True)
    return tag


if __name__ == "__main__":  # build by hand: python tests/ssh/container_image.py CONF_DIR
    conf = Path(sys.argv[1]) / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    print(ensure_image({**os.environ, "CONTAINERS_CONF": str(conf)}))
