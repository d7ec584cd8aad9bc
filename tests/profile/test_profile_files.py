"""Saving, finding and naming profile files: atomic saves, overwrite refusal, the profiles dir."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import wizard.files as files_module
from wizard.profile import (
    PROFILES_DIR_ENV,
    atomic_write_text,
    builtin_profiles_dir,
    list_profiles,
    load_profile,
    profile_from_toml,
    profile_path,
    profile_to_toml,
    profiles_dir,
    save_profile,
    validate_profile_name,
)
from wizard.profile_problems import ProfileError
from wizard.profile_schema import ModelSection, Profile

ROOT = Path(__file__).resolve().parents[2]


def _profile(path: str = "/models/old", description: str = "") -> Profile:
    return Profile(model=ModelSection(path=path), description=description)


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# ---------------------------------------------------------------------------------------------
# Atomic saves


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_failed_save_keeps_the_old_file_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "p.toml"
    save_profile(_profile("/models/old"), target)
    before = target.read_bytes()
    new = _profile("/models/new", description="x" * 100_000)

    class Crash(Exception):
        pass

    if failing == "write":
        real_fdopen = os.fdopen

        class HalfWriter:
            """Writes half of the data to the temp file, then 'crashes'."""

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                self.handle = real_fdopen(*args, **kwargs)

            def __enter__(self) -> HalfWriter:
                return self

            def __exit__(self, *exc: object) -> None:
                self.handle.close()

            def write(self, data: bytes) -> int:
                self.handle.write(data[: len(data) // 2])
                self.handle.flush()
                raise Crash

        monkeypatch.setattr(files_module.os, "fdopen", HalfWriter)
    else:

        def crash(*args: Any, **kwargs: Any) -> None:
            raise Crash

        monkeypatch.setattr(files_module.os, failing, crash)

    with pytest.raises(Crash):
        save_profile(new, target, overwrite=True)
    monkeypatch.undo()

    assert target.read_bytes() == before
    assert load_profile(target) == _profile("/models/old")
    assert _leftovers(tmp_path) == []


def test_failed_first_save_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files_module.os, "replace", crash)
    with pytest.raises(OSError, match="No space left"):
        save_profile(_profile(), tmp_path / "new.toml")
    assert list(tmp_path.iterdir()) == []


CHILD = textwrap.dedent(
    """
    import sys
    from wizard.profile import save_profile
    from wizard.profile_schema import ModelSection, Profile

    target = sys.argv[1]
    big = "x" * 400_000  # a slower write: the kill may land in the middle of one
    profiles = [
        Profile(model=ModelSection(path="/models/a"), description="A" + big),
        Profile(model=ModelSection(path="/models/b"), description="B" + big),
    ]
    n = 0
    while True:
        save_profile(profiles[n % 2], target, overwrite=True)
        n += 1
        print(n, flush=True)
    """
)


@pytest.mark.parametrize("saves_before_kill", [1, 3])
def test_sigkill_while_saving_leaves_the_old_or_the_new_profile(
    tmp_path: Path, saves_before_kill: int
) -> None:
    """A writer killed with SIGKILL at a random point never leaves a partial profile."""
    target = tmp_path / "p.toml"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(target)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout is not None
        for _ in range(saves_before_kill):  # wait for the child's own "saved" reports
            assert child.stdout.readline().strip(), "child died before saving"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    saved = load_profile(target)
    assert saved.model.path in {"/models/a", "/models/b"}
    assert saved.description[0] == saved.model.path[-1].upper()
    assert len(saved.description) == 400_001
    # a killed writer cannot clean up its temp file, but it is hidden and never listed
    assert list_profiles(tmp_path) == [target]


def test_saved_file_parses_back_and_starts_with_the_schema_version(tmp_path: Path) -> None:
    profile = _profile(description='quote " and newline\n')
    path = save_profile(profile, tmp_path / "deep" / "dir" / "p.toml")
    assert path.read_text("utf-8").startswith("schema_version = 1\n")
    assert load_profile(path) == profile


def test_save_refuses_to_overwrite_without_permission(tmp_path: Path) -> None:
    target = tmp_path / "p.toml"
    save_profile(_profile("/models/old"), target)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        save_profile(_profile("/models/new"), target)
    assert load_profile(target).model.path == "/models/old"
    save_profile(_profile("/models/new"), target, overwrite=True)
    assert load_profile(target).model.path == "/models/new"


def test_unencodable_text_fails_before_touching_the_disk(tmp_path: Path) -> None:
    target = tmp_path / "p.toml"
    atomic_write_text(target, "old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "lone surrogate \udc80")
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_profiles_cannot_hold_text_that_cannot_be_saved() -> None:
    with pytest.raises(ValueError, match="cannot be saved as UTF-8"):
        Profile.model_validate({"model": {"path": "/m"}, "env": {"A": "\udc80"}})
    with pytest.raises(ValueError, match="cannot be saved as UTF-8"):
        Profile.model_validate({"model": {"path": "/m"}, "extra_args": ["\ud800"]})


# ---------------------------------------------------------------------------------------------
# Where profiles live


def test_profiles_dir_env_var_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROFILES_DIR_ENV, str(tmp_path / "mine"))
    assert profiles_dir() == tmp_path / "mine"
    monkeypatch.setenv(PROFILES_DIR_ENV, "~/profiles-here")
    assert profiles_dir() == Path.home() / "profiles-here"


def test_profiles_dir_defaults_to_the_xdg_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PROFILES_DIR_ENV, raising=False)
    monkeypatch.setenv(PROFILES_DIR_ENV, "")  # empty counts as unset
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert profiles_dir() == tmp_path / "config" / "sglang-wizard" / "profiles"


def test_profile_path_uses_the_profiles_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PROFILES_DIR_ENV, str(tmp_path))
    assert profile_path("qwen-a6000") == tmp_path / "qwen-a6000.toml"
    assert profile_path("qwen-a6000.toml") == tmp_path / "qwen-a6000.toml"
    assert profile_path("x", tmp_path / "other") == tmp_path / "other" / "x.toml"
    with pytest.raises(ValueError):
        profile_path("../escape")


def test_list_profiles_newest_first_only_toml(tmp_path: Path) -> None:
    for index, name in enumerate(["old", "newest", "middle"]):
        path = save_profile(_profile(), tmp_path / f"{name}.toml")
        stamp = {"old": 1_000_000, "middle": 2_000_000, "newest": 3_000_000}[name] + index
        os.utime(path, (stamp, stamp))
    (tmp_path / "notes.txt").write_text("not a profile")
    (tmp_path / ".p.toml.abc123.tmp").write_text("temp file of a killed save")
    assert [p.stem for p in list_profiles(tmp_path)] == ["newest", "middle", "old"]


def test_list_profiles_of_a_missing_dir_is_empty(tmp_path: Path) -> None:
    assert list_profiles(tmp_path / "nothing-here") == []


@pytest.mark.parametrize("version", ["0.5.11-foo", "0.5.x", "1.0.0.0"])
def test_a_version_the_checker_cannot_read_is_refused(version: str) -> None:
    # these passed the profile's own shape check, then `check`/`command` crashed in resolve_version
    with pytest.raises(ValidationError, match="is not a version number"):
        Profile.model_validate({"model": {"path": "/m"}, "sglang_version": version})


def test_list_profiles_skips_a_dangling_symlink(tmp_path: Path) -> None:
    # `profiles list` and the TUI's start screen used to crash on stat() of a dangling link
    saved = save_profile(_profile(), tmp_path / "kept.toml")
    (tmp_path / "gone.toml").symlink_to(tmp_path / "deleted-target.toml")
    assert list_profiles(tmp_path) == [saved]


@pytest.mark.parametrize(
    "name", ["qwen", "Qwen3.6-27B_mtp", "a", "kimi.k2.5", "x" * 64, "qwen.toml", "9lives"]
)
def test_valid_profile_names(name: str) -> None:
    assert validate_profile_name(name) == name.removesuffix(".toml")


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".",
        "..",
        "../x",
        "a/b",
        "/etc/passwd",
        "a\\b",
        ".hidden",
        "-flag",
        "x" * 65,
        "with space",
        "new\nline",
        "trailing-newline\n",
        "ünïcode",
        ".toml",
        "a:b",
    ],
)
def test_invalid_profile_names(name: str) -> None:
    with pytest.raises(ValueError, match="invalid profile name"):
        validate_profile_name(name)


# ---------------------------------------------------------------------------------------------
# The ready profiles shipped in profiles/

READY = sorted(builtin_profiles_dir().glob("*.toml"))


def test_there_are_ready_profiles() -> None:
    assert builtin_profiles_dir() == ROOT / "profiles"
    assert len(READY) >= 3


@pytest.mark.parametrize("path", READY, ids=[p.name for p in READY])
def test_ready_profile_loads_and_round_trips(path: Path, tmp_path: Path) -> None:
    profile = load_profile(path)
    assert profile.description, "ready profiles explain themselves"
    validate_profile_name(path.name)
    assert profile_from_toml(profile_to_toml(profile)) == profile
    copy = save_profile(profile, tmp_path / path.name)
    assert load_profile(copy) == profile


def test_a_broken_ready_profile_would_be_reported(tmp_path: Path) -> None:
    """The check above can fail: a ready profile with a typo raises a located error."""
    text = READY[0].read_text("utf-8").replace("[model]", "[model]\npaht = 'typo'", 1)
    with pytest.raises(ProfileError) as caught:
        profile_from_toml(text, READY[0].name)
    assert caught.value.first.key == "model.paht"
