"""Compiled code of generated source, kept between processes.

The rule engine turns each release's R-ARG-SITE conditions into Python source and compiles it
once per process; for the newest releases that compile is most of a cold `check`'s rule time.
`compile_cached` keeps the code object (marshal, keyed by the source text and the interpreter's
bytecode tag) in the wizard's cache directory, the way Python keeps `__pycache__`: a miss, an
unwritable or a damaged cache only costs the compile, never a result. `load_cached` /
`store_cached` keep any marshal-able value under a key the caller derives more cheaply than the
source (a release's generated code and its constants, keyed by the release file's digest).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any


def _cache_root() -> Path:
    override = os.environ.get("SGLANG_WIZARD_CACHE_DIR")
    if override:
        return Path(override)
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "sglang-wizard"
    import platformdirs

    return platformdirs.user_cache_path("sglang-wizard")


def _path(key: str) -> Path:
    tag = sys.implementation.cache_tag or "python"
    digest = hashlib.sha256(f"{tag}\0{key}".encode()).hexdigest()[:32]
    return _cache_root() / "code" / f"{digest}.{tag}.marshal"


def load_cached(key: str) -> Any:
    """The value stored under `key` by this interpreter (None: none, or unreadable)."""
    try:
        return marshal.loads(_path(key).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def store_cached(key: str, value: Any) -> None:
    """Keep `value` (code objects, tuples, dicts, frozensets and plain constants) under `key`;
    written whole (a temporary file, then renamed) or not at all."""
    try:
        data = marshal.dumps(value)
        path = _path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".code-")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except (OSError, ValueError):
        pass


def compile_cached(source: str, filename: str) -> CodeType:
    """`compile(source, filename, "exec")`, read from the cache when this source was compiled
    before by this interpreter."""
    key = f"{filename}\0{source}"
    code = load_cached(key)
    if isinstance(code, CodeType):
        return code
    code = compile(source, filename, "exec")
    store_cached(key, code)
    return code
