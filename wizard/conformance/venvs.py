"""Per-release SGLang venvs for the conformance runner, built on demand into the user cache.

Two layers, so every release shares ONE torch install:

- the torch base (`<cache>/conformance/torch-base-<hash>/`): a venv holding only the CPU torch
  (`TORCH_REQUIREMENT`, the local file pip and uv find in `/opt/wheels`; never a CUDA build: the
  build checks `torch.version.cuda is None`) and torch's own dependencies, with the bytecode of
  `import torch` written once;
- a release venv (`<cache>/conformance/venv-<V>/`): `sglang==V` installed without its
  dependencies and only the light packages SGLang's argument code imports (found by trial: import
  `sglang.srt.server_args`, resolve the named cases, add what is missing), pinned from the sglang
  wheel's own METADATA, so each release gets the transformers it was released with. A `.pth` file
  puts the base's site-packages BEHIND the venv's own, so the release's packages win and torch
  comes from the base. The light packages are resolved under torch's own requirements as
  constraints (`torch-requirements.txt` in the base), which is what resolving them together with
  torch gave. GPU-only packages are not installed: the runner stubs them
  (`sglang_runner.STUB_REASONS`).

Builds use `uv` when it is installed (the test extra brings it), else pip. Their download caches
live inside the wizard's cache (`<cache>/conformance/uv-cache`, `pip-cache`) unless `UV_CACHE_DIR`
/ `PIP_CACHE_DIR` say otherwise: `du -sh <cache>` is then everything the venvs cost, and uv's hard
links from its cache into the venvs stay on one filesystem (a file linked twice is counted once).

Each layer has a `.conformance-stamp.json` written last. A build happens in a temporary sibling
directory that is renamed into place only when complete, so an interrupted build never leaves a
half venv that looks finished. The venvs' scripts keep the temporary path in their shebangs:
always call `bin/python -m pip`, never `bin/pip`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs

from wizard.sglang.releases import release_names

TORCH_REQUIREMENT = "torch==2.13.0"  # the CPU build lies on these machines' disk (/opt/wheels)

# Imported by the argument code and installed with their dependencies; pins from METADATA.
_COMMON_LIGHT = (
    "numpy", "orjson", "psutil", "pybase64", "requests", "packaging", "pillow", "fastapi",
    "tqdm", "IPython", "pydantic", "aiohttp", "transformers", "pyzmq", "openai",
    "partial_json_parser", "sentencepiece", "msgspec",
)
LIGHT_REQUIREMENTS: tuple[str, ...] = (*_COMMON_LIGHT, "xxhash", "zstandard", "einops", "uvloop",
                                         "setproctitle", "uvicorn")
# Imported by the argument code, installed WITHOUT dependencies: their declared dependencies pull
# triton / CUDA wheels, which the argument code never needs (their pure deps are listed above).
# 0.5.23's xgrammar needs the real tvm-ffi (imported lazily, e.g. by the DFLASH path).
NO_DEPS_REQUIREMENTS: tuple[str, ...] = ("xgrammar", "compressed-tensors", "gguf",
                                          "apache-tvm-ffi")
# Imported but not declared by the sglang wheel (dill: sglang/srt/sampling; loguru: by
# compressed-tensors, whose dependencies are skipped). Installed unpinned.
UNDECLARED_REQUIREMENTS: tuple[str, ...] = ("dill", "loguru")
STAMP_NAME = ".conformance-stamp.json"
BASE_PTH_NAME = "_sglang_wizard_torch_base.pth"
TORCH_CONSTRAINTS_NAME = "torch-requirements.txt"
LAYOUT = "release venv + .pth to the shared torch base"
RUNNER_PATH = Path(__file__).with_name("sglang_runner.py")


class VenvBuildError(RuntimeError):
    """A conformance venv could not be built (pip or the import check failed)."""


_PINNED = threading.local()


def cache_dir() -> Path:
    """The wizard's cache (env `SGLANG_WIZARD_CACHE_DIR` overrides the platform default; a thread
    that pinned it with `pin_cache_dir` keeps its own, whatever the environment says later)."""
    pinned = getattr(_PINNED, "path", None)
    if pinned is not None:
        return Path(pinned)
    override = os.environ.get("SGLANG_WIZARD_CACHE_DIR")
    return Path(override) if override else platformdirs.user_cache_path("sglang-wizard")


def pin_cache_dir(path: Path | None) -> None:
    """Fix this thread's cache dir (background runs beside tests that change the environment)."""
    _PINNED.path = path


def venv_dir(version: str) -> Path:
    """Where the venv of one SGLang version lives."""
    return cache_dir() / "conformance" / f"venv-{version}"


def venv_python(version: str) -> Path:
    """The Python interpreter of a version's venv (built or not)."""
    return venv_dir(version) / "bin" / "python"


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins_from_metadata(metadata: str, names: tuple[str, ...]) -> list[str]:
    """Requirement strings for ``names`` as the wheel's METADATA declares them (no extras).

    A name the base requirements do not declare takes its pin from the runtime extras
    (`runtime-common`, then `srt`): releases up to 0.5.4.post3 declare their runtime packages
    (transformers, xgrammar, openai, ...) only there, which `pip install "sglang[all]"` pulls in.
    Later releases declare them in the base requirements, so this never changes their pins.
    A name declared nowhere is returned bare (unpinned).
    """
    declared: dict[str, str] = {}
    from_extras: dict[str, str] = {}
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        requirement, _, marker = line[len("Requires-Dist:"):].strip().partition(";")
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        if not match:
            continue
        pin = requirement.strip().replace(" ", "")
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
        if extra is None:
            declared.setdefault(_normalise(match.group(1)), pin)
        elif _normalise(extra.group(1)) in _RUNTIME_EXTRAS:
            rank = _RUNTIME_EXTRAS.index(_normalise(extra.group(1)))
            from_extras.setdefault(f"{rank}:{_normalise(match.group(1))}", pin)
    for key in sorted(from_extras):
        declared.setdefault(key.partition(":")[2], from_extras[key])
    return [declared.get(_normalise(name), name) for name in names]


def requires_dist(metadata: str) -> list[str]:
    """A wheel METADATA's `Requires-Dist` lines that hold without extras (markers kept)."""
    out = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        requirement = line[len("Requires-Dist:"):].strip()
        if "extra ==" not in requirement.partition(";")[2]:
            out.append(requirement)
    return out


# The extras of older wheels that hold their runtime requirements, most specific first.
_RUNTIME_EXTRAS: tuple[str, ...] = ("runtime-common", "srt")


def supported_versions() -> tuple[str, ...]:
    """Every SGLang release the wizard holds data for (the release registry)."""
    return release_names()


def _python_tag() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def base_recipe() -> dict[str, object]:
    """Everything that decides the torch base's content; a changed recipe is a new base."""
    return {"torch": TORCH_REQUIREMENT, "python": _python_tag(),
            "bytecode": "written by `import torch`", "constraints": TORCH_CONSTRAINTS_NAME}


def base_hash() -> str:
    """A short hash of `base_recipe()` (part of the base's folder name)."""
    return hashlib.sha256(json.dumps(base_recipe(), sort_keys=True).encode()).hexdigest()[:12]


def torch_base_dir() -> Path:
    """Where the shared torch base lives (its name carries its recipe's hash)."""
    return cache_dir() / "conformance" / f"torch-base-{base_hash()}"


def _site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{_python_tag()}" / "site-packages"


def is_base_ready() -> bool:
    """True when the torch base finished building with the current recipe."""
    base = torch_base_dir()
    try:
        stamp = json.loads((base / STAMP_NAME).read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return (isinstance(stamp, dict) and stamp.get("base_hash") == base_hash()
            and (base / "bin" / "python").exists() and (base / TORCH_CONSTRAINTS_NAME).exists())


def recipe(version: str) -> dict[str, object]:
    """Everything that decides a venv's content; a changed recipe rebuilds the venv."""
    if not re.fullmatch(r"\d+\.\d+\.\d+(\.post\d+)?", version):
        raise ValueError(f"{version!r} is not an SGLang release (the form is 0.5.11 or 0.5.5.post1)")
    return {
        "sglang": version,
        "torch": TORCH_REQUIREMENT,
        "torch_base": base_hash(),
        "layout": LAYOUT,
        "light": list(LIGHT_REQUIREMENTS),
        "no_deps": list(NO_DEPS_REQUIREMENTS),
        "undeclared": list(UNDECLARED_REQUIREMENTS),
        "python": _python_tag(),
        "bytecode": "written by the import check",  # older venvs: top up, which writes it
    }


def recipe_hash(version: str) -> str:
    """A short hash of `recipe(version)`."""
    return hashlib.sha256(json.dumps(recipe(version), sort_keys=True).encode()).hexdigest()[:16]


def read_stamp(version: str) -> dict[str, object] | None:
    """The stamp of a finished venv, or None when missing or unreadable."""
    try:
        data = json.loads((venv_dir(version) / STAMP_NAME).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def is_ready(version: str) -> bool:
    """True when the venv exists, finished building, matches the current recipe, and the torch
    base it stands on is there."""
    stamp = read_stamp(version)
    if not stamp:
        return False
    return (stamp.get("recipe_hash") == recipe_hash(version) and venv_python(version).exists()
            and is_base_ready())


def _base_python() -> str:
    base = getattr(sys, "_base_executable", None) or sys.executable
    return str(base)


def _uv() -> str | None:
    """The `uv` binary beside this Python (the test extra installs it) or on PATH."""
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.exists() else shutil.which("uv")


def _installer(python: str) -> list[str]:
    """The install command for the venv of ``python``: uv when available, else its pip."""
    uv = _uv()
    if uv:
        return [uv, "pip", "install", "-q", "-p", python, *_find_links()]
    return [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]


def _find_links() -> list[str]:
    """uv does not read pip's config: pass the local wheel folders pip is told about."""
    links = [p for p in os.environ.get("PIP_FIND_LINKS", "").split() if p]
    if not links and Path("/opt/wheels").is_dir():
        links = ["/opt/wheels"]
    return [arg for link in links for arg in ("--find-links", link)]


def download_cache_env() -> dict[str, str]:
    """uv's and pip's download caches inside the wizard's cache, unless the environment sets them
    (`UV_CACHE_DIR`, `PIP_CACHE_DIR`): counted by `du` of the cache, and on the venvs' filesystem,
    so uv hard-links each package file into every venv instead of copying it."""
    root = cache_dir() / "conformance"
    return {"UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR") or str(root / "uv-cache"),
            "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR") or str(root / "pip-cache")}


def _run(cmd: list[str], log: Callable[[str], None]) -> str:
    log("$ " + " ".join(cmd))
    started = time.monotonic()
    env = {**os.environ, **download_cache_env()}
    # The import check writes the bytecode of everything SGLang imports into the venv, so later
    # runner starts do not recompile torch and transformers (PYTHONDONTWRITEBYTECODE would).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if Path("/etc/ssl/certs/ca-certificates.crt").exists():
        env.setdefault("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")
    # a fixed working directory: the caller's may have been removed (background CI runs)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, cwd="/")
    log(f"  ({time.monotonic() - started:.0f}s)")
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise VenvBuildError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{tail}")
    return proc.stdout


@contextmanager
def _locked(name: str) -> Iterator[None]:
    """An exclusive lock file in the conformance cache (processes and threads take turns)."""
    lock_path = cache_dir() / "conformance" / name
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _new_venv(target: Path, log: Callable[[str], None]) -> Path:
    """An empty venv in a temporary sibling of ``target`` (renamed into place by the caller)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    uv = _uv()
    if uv:
        _run([uv, "venv", "-q", "-p", _base_python(), str(work)], log)
    else:
        _run([_base_python(), "-m", "venv", str(work)], log)
    return work


def _move_into_place(work: Path, target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    os.rename(work, target)


def ensure_torch_base(log: Callable[[str], None] = lambda _m: None) -> Path:
    """Build the shared torch base unless it is ready; returns its site-packages folder."""
    if not is_base_ready():
        with _locked(".torch-base.lock"):
            if not is_base_ready():
                _build_torch_base(log)
    return _site_packages(torch_base_dir())


def _build_torch_base(log: Callable[[str], None]) -> None:
    target = torch_base_dir()
    work = _new_venv(target, log)
    try:
        python = str(work / "bin" / "python")
        _run([*_installer(python), TORCH_REQUIREMENT], log)
        info = json.loads(_run([python, "-c", "import json, torch; print(json.dumps("
                                "{'version': torch.__version__, 'cuda': torch.version.cuda}))"],
                               log).strip().splitlines()[-1])
        if info["cuda"] is not None or not str(info["version"]).startswith(
                TORCH_REQUIREMENT.partition("==")[2]):
            raise VenvBuildError(f"the torch base got torch {info['version']} (CUDA "
                                 f"{info['cuda']}); wanted the CPU build {TORCH_REQUIREMENT}")
        metadata = next(_site_packages(work).glob("torch-*.dist-info/METADATA"), None)
        if metadata is None:
            raise VenvBuildError(f"torch METADATA not found in {work}")
        (work / TORCH_CONSTRAINTS_NAME).write_text(
            "".join(line + "\n" for line in requires_dist(metadata.read_text())))
        stamp = {"base_hash": base_hash(), "recipe": base_recipe(), "torch": info["version"],
                 "packages": sorted(_freeze(python, log).split())}
        (work / STAMP_NAME).write_text(json.dumps(stamp, indent=1) + "\n")
        _move_into_place(work, target)
        log(f"torch base ready: {target}")
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def ensure_venv(version: str, log: Callable[[str], None] = lambda _m: None,
                force: bool = False) -> Path:
    """Build the venv of ``version`` (and the torch base it stands on) unless a finished one
    with the same recipe exists.

    Returns the venv's Python. Raises `VenvBuildError` with pip's last lines when a step fails.
    Builds of one version are serialised by a lock file (two test processes or threads asking
    for the same venv build it once; the second waits and then finds it ready).
    """
    if not force and is_ready(version):
        return venv_python(version)
    ensure_torch_base(log)
    with _locked(f".venv-{version}.lock"):
        return _ensure_venv_locked(version, log, force)


def _ensure_venv_locked(version: str, log: Callable[[str], None], force: bool) -> Path:
    target = venv_dir(version)
    if not force and is_ready(version):
        return venv_python(version)
    stamp = read_stamp(version)
    old_recipe = stamp.get("recipe") if stamp else None
    if not force and isinstance(old_recipe, dict) and stamp and stamp.get(
            "sglang_version") == version and old_recipe.get("torch_base") == base_hash() and (
            venv_python(version).exists()):
        # Same SGLang on the same base, changed recipe: top the venv up in place (the installer
        # skips what is there). The stamp goes first, so an interrupted upgrade leads to a full
        # rebuild next time.
        log(f"venv for sglang {version}: recipe changed, upgrading in place")
        (target / STAMP_NAME).unlink()
        _install(target, version, log)
        return venv_python(version)
    work = _new_venv(target, log)
    try:
        _install(work, version, log)
        _move_into_place(work, target)
        log(f"venv for sglang {version} ready: {target}")
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return venv_python(version)


def _install(venv: Path, version: str, log: Callable[[str], None]) -> None:
    """Link the torch base, install sglang and the light packages into ``venv``, check the
    import, write the stamp."""
    python = str(venv / "bin" / "python")
    base_site = _site_packages(torch_base_dir())
    (_site_packages(venv) / BASE_PTH_NAME).write_text(f"{base_site}\n")
    pip = _installer(python)
    if not _uv() and subprocess.run([python, "-m", "pip", "--version"], capture_output=True,
                                    check=False).returncode != 0:
        _run([python, "-m", "ensurepip", "-q"], log)  # a venv uv made has no pip of its own
    _run([*pip, "--no-deps", f"sglang=={version}"], log)
    metadata = _installed_metadata(venv, version)
    constraints = torch_base_dir() / TORCH_CONSTRAINTS_NAME
    _run([*pip, "-c", str(constraints), *pins_from_metadata(metadata, LIGHT_REQUIREMENTS),
          *UNDECLARED_REQUIREMENTS], log)
    _run([*pip, "--no-deps", *pins_from_metadata(metadata, NO_DEPS_REQUIREMENTS)], log)
    info = json.loads(_run([python, str(RUNNER_PATH), "--fake-gpu", "H100", "--info"], log)
                      .strip().splitlines()[-1])
    stamp = {
        "sglang_version": info.get("sglang_version"),
        "recipe_hash": recipe_hash(version),
        "recipe": recipe(version),
        "torch_base": str(torch_base_dir()),
        "stubbed": info.get("stubbed", []),
        "packages": sorted(_freeze(python, log).split()),
    }
    if stamp["sglang_version"] != version:
        raise VenvBuildError(f"venv reports sglang {stamp['sglang_version']}, wanted {version}")
    if any(_normalise(p).startswith("torch==") for p in stamp["packages"]):
        raise VenvBuildError(f"the venv of sglang {version} installed its own torch; it must "
                             "come from the shared torch base")
    (venv / STAMP_NAME).write_text(json.dumps(stamp, indent=1) + "\n")


def _freeze(python: str, log: Callable[[str], None]) -> str:
    """`pip freeze` of one venv (its own site-packages, not the base behind the .pth)."""
    uv = _uv()
    site = _site_packages(Path(python).parent.parent)
    return _run([uv, "pip", "freeze", "-p", python] if uv else
                [python, "-m", "pip", "freeze", "--disable-pip-version-check", "--path", str(site)],
                log)


def _installed_metadata(venv: Path, version: str) -> str:
    candidates = list(venv.glob(f"lib/python*/site-packages/sglang-{version}.dist-info/METADATA"))
    if not candidates:
        raise VenvBuildError(f"sglang {version} METADATA not found in {venv}")
    return candidates[0].read_text()
