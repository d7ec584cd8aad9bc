"""Where profiles and exports live, and profile names: plain paths, no pydantic.

The TUI lists profiles on its first screen before the profile model (pydantic) is imported;
`wizard.profile` re-exports everything here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PROFILES_DIR_ENV = "SGLANG_WIZARD_PROFILES_DIR"
EXPORTS_DIR_ENV = "SGLANG_WIZARD_EXPORTS_DIR"

_PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def profiles_dir() -> Path:
    """The user's profile directory (XDG config dir via platformdirs; `SGLANG_WIZARD_PROFILES_DIR` overrides)."""
    override = os.environ.get(PROFILES_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_config_path

    return user_config_path("sglang-wizard") / "profiles"


def exports_dir() -> Path:
    """Where exports (YAML, copied commands) and screenshots go: the user data dir via
    platformdirs (`~/.local/share/sglang-wizard/exports`); `SGLANG_WIZARD_EXPORTS_DIR` overrides.
    Never the current directory: the wizard is often started inside a repository."""
    override = os.environ.get(EXPORTS_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_path

    return user_data_path("sglang-wizard") / "exports"


def builtin_profiles_dir() -> Path:
    """The ready profiles shipped with the project (`profiles/`)."""
    return Path(__file__).resolve().parent.parent / "profiles"


def validate_profile_name(name: str) -> str:
    """A profile name usable as a file name: letters, digits, `.`, `_`, `-`; at most 64 characters."""
    stem = name[:-5] if name.endswith(".toml") else name
    if not _PROFILE_NAME.fullmatch(stem) or stem in {".", ".."}:
        raise ValueError(
            f"invalid profile name {name!r}: use letters, digits, '.', '_' or '-' "
            "(start with a letter or digit, at most 64 characters)"
        )
    return stem


def find_profile(reference: str) -> Path | None:
    """The saved profile called `reference` (a bare name, `.toml` optional), else the ready one,
    else None. A path (with `/`) or an invalid name is never looked up."""
    if "/" in reference or os.sep in reference:
        return None
    try:
        stem = validate_profile_name(reference)
    except ValueError:
        return None
    for directory in (profiles_dir(), builtin_profiles_dir()):
        candidate = directory / f"{stem}.toml"
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


def profile_path(name: str, directory: Path | None = None) -> Path:
    """Path of a named profile in the profiles dir."""
    return (directory or profiles_dir()) / f"{validate_profile_name(name)}.toml"


def list_profiles(directory: Path | None = None) -> list[Path]:
    """Saved profiles, newest first (a dangling symlink or a file deleted meanwhile is left out)."""
    d = directory or profiles_dir()
    if not d.is_dir():
        return []
    found: list[tuple[float, Path]] = []
    for path in d.glob("*.toml"):
        try:
            found.append((path.stat().st_mtime, path))
        except OSError:
            continue
    found.sort(key=lambda item: item[0], reverse=True)
    return [path for _, path in found]
