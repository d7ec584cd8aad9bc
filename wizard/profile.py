"""The launch profile as files: TOML text in and out.

The schema is `wizard.profile_schema`, the wording of problems `wizard.profile_problems`. TOML
files carry a `schema_version`; loading reports every problem with file, dotted key, line and what
is allowed; saving is atomic (temp file + fsync + rename), so a crash never leaves a half-written
profile, and writes a reference in place of a literal secret.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import ValidationError

from wizard.files import PRIVATE_MODE, write_text

# The path helpers live in wizard.profile_paths (no pydantic); callers may import them from here.
from wizard.profile_paths import EXPORTS_DIR_ENV as EXPORTS_DIR_ENV
from wizard.profile_paths import PROFILES_DIR_ENV as PROFILES_DIR_ENV
from wizard.profile_paths import builtin_profiles_dir as builtin_profiles_dir
from wizard.profile_paths import exports_dir as exports_dir
from wizard.profile_paths import find_profile as find_profile
from wizard.profile_paths import list_profiles as list_profiles
from wizard.profile_paths import profile_path as profile_path
from wizard.profile_paths import profiles_dir as profiles_dir
from wizard.profile_paths import validate_profile_name as validate_profile_name
from wizard.profile_problems import (
    Problem,
    ProfileError,
    line_for,
    locate_keys,
    problems_from_validation,
    show_value,
    syntax_problem,
)
from wizard.profile_schema import SCHEMA_VERSION, Profile
from wizard.secrets import (
    OptionOf,
    exact_secret_option,
    literal_secrets,
    protect_argv,
    protect_env,
)
from wizard.sglang.errors import FlagDataError
from wizard.sglang.flags import load_table, secret_option_of
from wizard.sglang.versions import VersionError


def profile_from_toml(text: str, file: str = "<profile>") -> Profile:
    """Parse and validate TOML text; raise `ProfileError` with located problems."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(file, [syntax_problem(exc, text)]) from None
    except RecursionError:
        raise ProfileError(
            file, [Problem(None, None, "not valid TOML: lists or tables nested too deeply")]
        ) from None
    return profile_from_data(data, file, text)


def profile_from_data(
    data: Mapping[str, Any], file: str = "<profile>", text: str | None = None
) -> Profile:
    """Validate parsed TOML data; check `schema_version` first."""
    if not isinstance(data, Mapping):
        raise ProfileError(
            file, [Problem(None, None, f"expected a table of keys, got {show_value(data)}")]
        )
    version = data.get("schema_version")
    if version is None:
        raise ProfileError(
            file,
            [
                Problem(
                    "schema_version",
                    None,
                    "required key is missing",
                    f"schema_version = {SCHEMA_VERSION} as the first line",
                )
            ],
        )
    if type(version) is not int or version != SCHEMA_VERSION:
        line = line_for("schema_version", locate_keys(text)) if text else None
        newer = type(version) is int and version > SCHEMA_VERSION
        message = (
            f"unsupported schema version {version}"
            if type(version) is int
            else f"expected the integer {SCHEMA_VERSION}, got {show_value(version)}"
        )
        allowed = f"schema_version = {SCHEMA_VERSION} (this sglang-wizard)"
        if newer:
            allowed += "; the file was written by a newer sglang-wizard: upgrade the tool"
        raise ProfileError(file, [Problem("schema_version", line, message, allowed)])
    try:
        return Profile.model_validate(dict(data))
    except ValidationError as exc:
        raise ProfileError(file, problems_from_validation(exc, text)) from None
    except RecursionError:
        raise ProfileError(file, [Problem(None, None, "values nested too deeply")]) from None


def protect_secrets(profile: Profile) -> tuple[Profile, list[str]]:
    """The profile with every literal secret turned into a reference (`wizard.secrets`), and
    what was moved: env vars (`HF_TOKEN`, also each node's env) and secret flag values in
    extra_args (`--api-key sk-...` -> `--api-key env:SGLANG_WIZARD_API_KEY`)."""
    env, moved = protect_env(profile.env)
    option_of = _secret_option_of(profile.sglang_version)
    argv, flags = protect_argv(profile.extra_args, option_of)
    moved += flags
    hosts = []
    for node in profile.nodes.hosts:
        node_env, node_moved = protect_env(node.env)
        moved += [m for m in node_moved if m not in moved]
        hosts.append(node.model_copy(update={"env": node_env}) if node_moved else node)
    if not moved:
        return profile, moved
    nodes = profile.nodes.model_copy(update={"hosts": hosts})
    return profile.model_copy(update={"env": env, "extra_args": argv, "nodes": nodes}), moved


def profile_literal_secrets(profile: Profile) -> list[str]:
    """The literal secret values the profile holds in memory (env, nodes' env, extra_args):
    what a screenshot of a form being typed in must mask (`wizard.secrets.mask_text`)."""
    option_of = _secret_option_of(profile.sglang_version)
    values = literal_secrets(profile.env, profile.extra_args, option_of)
    for node in profile.nodes.hosts:
        values += literal_secrets(node.env, [])
    return values


def _secret_option_of(version: str) -> OptionOf:
    """Which words name a secret flag in `version` (argparse prefixes included)."""
    try:
        return secret_option_of(load_table(version))
    except (VersionError, FlagDataError):
        return exact_secret_option


def profile_to_toml(profile: Profile) -> str:
    """Serialise a profile; only non-default values are written, so `load(save(p)) == p`.

    Secrets are never written: a literal secret (HF_TOKEN=hf_..., `--api-key sk-...`) is written
    as a reference to a variable (`env:HF_TOKEN`, read at launch; `protect_secrets`)."""
    profile = protect_secrets(profile)[0]
    data = profile.model_dump(mode="python", exclude_defaults=True)
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "sglang_version": profile.sglang_version,
    }
    if profile.description:
        out["description"] = profile.description
    for key, value in data.items():
        if key in out or value in ({}, []):
            continue
        out[key] = value
    return tomli_w.dumps(out)


def load_profile(path: str | Path) -> Profile:
    """Read a profile file; every failure is a `ProfileError` naming the file.

    A bare NAME that is not a file here (`qwen3.6-27b-mtp-a6000`, `.toml` optional) is the saved
    profile of that name, else the ready one: the names `sglang-wizard profiles` lists.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        named = find_profile(str(path)) if isinstance(path, str) else None
        if named is not None:
            return load_profile(named)
        raise ProfileError(
            str(p),
            [
                Problem(
                    None,
                    None,
                    "file not found",
                    "a path to a .toml profile; `sglang-wizard profiles` lists saved ones",
                )
            ],
        ) from None
    except IsADirectoryError:
        raise ProfileError(
            str(p),
            [Problem(None, None, "is a directory, not a profile file", "a profile file (.toml)")],
        ) from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ProfileError(_short_path(p), [Problem(None, None, f"cannot read: {reason}")]) from None
    except ValueError as exc:  # a NUL character in the path
        raise ProfileError(_short_path(p), [Problem(None, None, f"not a usable path ({exc})")]) from None
    try:
        text = raw.decode("utf-8-sig")  # a BOM (as some Windows editors write) is dropped
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ProfileError(
            str(p), [Problem(None, line, "not UTF-8 text", "TOML files must be UTF-8")]
        ) from None
    return profile_from_toml(text, str(p))


def _short_path(path: Path, limit: int = 120) -> str:
    """The path for a message, cut in the middle when longer than `limit` characters."""
    text = str(path)
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2:]}"


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write text so that readers see either the old file or the complete new one, never a part
    (`wizard.files.write_text`: only regular files are replaced; a symlink's target is written,
    a device or FIFO is written in place, a symlink loop refused)."""
    write_text(path, text, mode=PRIVATE_MODE if mode is None else mode)


def save_profile(profile: Profile, path: str | Path, *, overwrite: bool = False) -> Path:
    """Atomically save a profile; refuse to replace an existing file unless `overwrite`."""
    p = Path(path)
    if p.exists() and not overwrite:
        raise FileExistsError(f"{p} exists; pass overwrite=True (CLI: --force) to replace it")
    atomic_write_text(p, profile_to_toml(profile))
    return p
