"""Compiled code of generated source, kept between processes.

The rule engine turns each release's R-ARG-SITE conditions into Python source and compiles it
once per process; for the newest releases that compile is most of a cold `check`'s rule time.
`compile_cached` keeps the code object (marshal, keyed by the source text and the interpreter's
bytecode tag) in the wizard's cache directory, the way Python keeps `__pycache__`: a miss, an
unwritable or a damaged cache only costs the compile, never a result.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType


def _cache_root() -> Path:
    override = os.environ.get("SGLANG_WIZARD_CACHE_DIR")
    if override:
        return Path(override)
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "sglang-wizard"
    import platformdirs

    return platformdirs.user_cache_path("sglang-wizard")


def compile_cached(source: str, filename: str) -> CodeType:
    """`compile(source, filename, "exec")`, read from the cache when this source was compiled
    before by this interpreter."""
    tag = sys.implementation.cache_tag or "python"
    digest = hashlib.sha256(f"{tag}\0{filename}\0{source}".encode()).hexdigest()[:32]
    path = _cache_root() / "code" / f"{digest}.{tag}.marshal"
    try:
        code = marshal.loads(path.read_bytes())
        if isinstance(code, CodeType):
            return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".code-")
        with os.fdopen(handle, "wb") as out:
            out.write(marshal.dumps(code))
        os.replace(temporary, path)
    except OSError:
        pass
    return code
