"""The [container] table: validated with file:line errors like every other table."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.profile import load_profile, profile_from_toml, profile_to_toml
from wizard.profile_problems import ProfileError

BASE = 'schema_version = 1\n[model]\npath = "/models/m"\n'


def problems(text: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "p.toml"
    path.write_text(BASE + text)
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    return [p.render(str(path)) for p in caught.value.problems]


def test_each_wrong_key_is_located(tmp_path: Path) -> None:
    lines = problems(
        '[container]\nruntime = "podmn"\nimage = "x"\nshm_size = "lots"\n'
        'mounts = ["/a"]\nruntime_args = ["--env=HF_TOKEN=hf_x"]\nimagee = "y"\n',
        tmp_path,
    )
    joined = "\n".join(lines)
    assert ':5: container.runtime: "podmn" is not an allowed value; did you mean "podman"?' in joined
    assert ":7: container.shm_size: 'lots' is not a size" in joined
    assert ":8: container.mounts[0]: '/a' is not a mount" in joined
    assert ":9: container.runtime_args:" in joined and "environment" in joined
    assert ":10: container.imagee: unknown key 'imagee'" in joined
    assert "hf_x" not in joined.split("runtime_args:")[1].split("(allowed")[1]


def test_image_is_required_and_ipc_excludes_shm(tmp_path: Path) -> None:
    assert any(":4: container.image: required key is missing" in p
               for p in problems("[container]\nruntime = \"podman\"\n", tmp_path))
    both = problems('[container]\nimage = "i"\nipc_host = true\nshm_size = "8g"\n', tmp_path)
    assert any(":4: container:" in p and "not both" in p for p in both)


def test_defaults_and_round_trip() -> None:
    profile = profile_from_toml(BASE + '[container]\nimage = "lmsysorg/sglang:v0.5.11"\n')
    box = profile.container
    assert box is not None
    assert (box.runtime, box.python, box.gpus, box.network) == ("docker", "python3", "auto", "host")
    assert box.uses_host_ipc and box.mount_model and box.hf_cache == "~/.cache/huggingface"
    assert profile_from_toml(profile_to_toml(profile)) == profile
    shm = profile_from_toml(BASE + '[container]\nimage = "i"\nshm_size = "32g"\n').container
    assert shm is not None and not shm.uses_host_ipc
    assert profile_from_toml(BASE).container is None


def test_edits_create_and_remove_the_optional_table() -> None:
    profile = profile_from_toml(BASE)
    assert profile.get("container.image") is None
    boxed = profile.with_edits({"container.image": "lmsysorg/sglang:v0.5.11"})
    assert boxed.container is not None and boxed.container.runtime == "docker"
    podman = boxed.with_edits({"container.runtime": "podman"})
    assert podman.get("container.runtime") == "podman"
    assert podman.with_edits({"container.image": None}).container is None  # empty image: no container
    assert profile.with_edits({"container.image": None}).container is None
    with pytest.raises(Exception, match=r"container\.image"):  # a key without the image: refused
        profile.with_edits({"container.runtime": "podman"})


def test_image_host_paths_and_named_volumes(tmp_path: Path) -> None:
    """`image = "x y"` and `image = "--privileged"` were accepted (the second becomes a runtime
    option), and a host path like `data/x` (podman: "names must match ...") failed only at launch."""
    lines = problems(
        '[container]\nimage = "--privileged"\nmounts = ["data/sets:/datasets:ro"]\n'
        'hf_cache = "cache/hf"\n',
        tmp_path,
    )
    joined = "\n".join(lines)
    assert ":5: container.image: '--privileged' is not an image reference" in joined
    assert ":6: container.mounts[0]: 'data/sets:/datasets:ro': 'data/sets' is neither" in joined
    assert ":7: container.hf_cache: 'cache/hf' is neither" in joined
    assert any(":5: container.image: 'a b' is not an image reference" in p
               for p in problems('[container]\nimage = "a b"\n', tmp_path))
    ok = profile_from_toml(
        BASE + '[container]\nimage = "i"\nmounts = ["hf-vol:/v", "~/d:/d", "./w:/w", "/a:/a:ro"]\n'
        'hf_cache = ""\n'
    ).container
    assert ok is not None and len(ok.mounts) == 4


def test_a_render_refusal_names_file_line_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`command` on a bridge-network profile said "c.toml: network = ..." with no line or key."""
    from wizard.cli import main

    path = tmp_path / "c.toml"
    path.write_text(BASE + '[container]\nimage = "i"\nnetwork = "bridge"\n')
    assert main(["command", str(path)]) == 2
    assert f"{path}:6: container.network: network = \"bridge\" publishes" in capsys.readouterr().err
