"""The container command (`sglang-wizard command` on a [container] profile): every runtime's words.

Docker cannot run on the test machines: its path shares the renderer with Podman (which the SSH
tests run for real) and is checked here by its rendered words.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard.cli import main
from wizard.container import container_command, container_name, render_profile_container
from wizard.profile import profile_from_toml
from wizard.sglang.errors import RenderError
from wizard.sglang.render import render_argv


def profile(container: str, extra: str = "", env: str = ""):  # type: ignore[no-untyped-def]
    text = (
        'schema_version = 1\nextra_args = ["--api-key", "sk-live-abcdef"]\n'
        '[model]\npath = "/data/models/Qwen3-8B"\n[server]\nport = 30001\n'
        f'{extra}\n[container]\n{container}\n[env]\nHF_TOKEN = "env:HF_TOKEN"\n'
        f'SGLANG_ENABLE_SPEC_V2 = "1"\n{env}'
    )
    return profile_from_toml(text)


def words(p, name: str | None = "sglang-wizard-RUN1", multinode: bool = False) -> list[str]:  # type: ignore[no-untyped-def]
    return container_command(p, render_argv(p), p.env, name=name, multinode=multinode).argv


def test_docker_words() -> None:
    argv = words(profile('image = "lmsysorg/sglang:v0.5.11"\nshm_size = "32g"', '[gpu]\nkind = "H100"'))
    image = argv.index("lmsysorg/sglang:v0.5.11")
    head, inner = argv[:image], argv[image + 1:]
    assert head[:4] == ["docker", "run", "-d", "--init"]
    assert head[head.index("--name") + 1] == container_name("RUN1") == "sglang-wizard-RUN1"
    assert head[head.index("--gpus") + 1] == "all"
    assert head[head.index("--shm-size") + 1] == "32g" and "--ipc=host" not in head
    assert head[head.index("--network") + 1] == "host"
    assert "/data/models/Qwen3-8B:/data/models/Qwen3-8B:ro" in head
    assert "~/.cache/huggingface:/root/.cache/huggingface" in head
    env_names = [head[i + 1] for i, w in enumerate(head) if w == "-e"]
    assert env_names == ["HF_TOKEN", "SGLANG_ENABLE_SPEC_V2"]
    assert not any("=" in n for n in env_names)  # values come from the launching environment
    assert inner[:3] == ["python3", "-m", "sglang.launch_server"]
    assert inner[inner.index("--model-path") + 1] == "/data/models/Qwen3-8B"


def test_podman_uses_cdi_and_amd_uses_rocm_devices() -> None:
    podman = words(profile('runtime = "podman"\nimage = "i"'))
    assert podman[podman.index("--device") + 1] == "nvidia.com/gpu=all" and "--gpus" not in podman
    assert "--ipc=host" in podman
    amd = words(profile('image = "rocm/sglang"\ngpus = "amd"\npython = "/opt/venv/bin/python"'))
    devices = [amd[i + 1] for i, w in enumerate(amd) if w == "--device"]
    assert devices == ["/dev/kfd", "/dev/dri"]
    assert amd[amd.index("--group-add") + 1] == "video" and "--gpus" not in amd
    assert amd[amd.index("rocm/sglang") + 1] == "/opt/venv/bin/python"
    private = words(profile('image = "i"\nipc_host = false'))
    assert "--ipc=host" not in private and "--shm-size" not in private
    none = words(profile('image = "i"\ngpus = "none"'))
    assert "--gpus" not in none and "--device" not in none


def test_bridge_network_needs_an_outside_address_and_one_node() -> None:
    with pytest.raises(RenderError, match=r'host = "0\.0\.0\.0"'):
        words(profile('image = "i"\nnetwork = "bridge"'))
    p = profile_from_toml(
        'schema_version = 1\n[model]\npath = "/m"\n[server]\nhost = "0.0.0.0"\nport = 8000\n'
        '[container]\nimage = "i"\nnetwork = "bridge"\n')
    bridged = words(p)
    assert bridged[bridged.index("-p") + 1] == "8000:8000" and "--network" not in bridged
    with pytest.raises(RenderError, match="host networking"):
        words(p, multinode=True)


def test_apptainer_is_not_an_ssh_runtime_but_has_a_command() -> None:
    p = profile('runtime = "apptainer"\nimage = "docker://lmsysorg/sglang:v0.5.11"', '[gpu]\nkind = "H100"')
    with pytest.raises(RenderError, match="Slurm"):
        words(p)
    text = render_profile_container(p, multiline=False)
    assert text.startswith("SGLANG_ENABLE_SPEC_V2=1 apptainer exec --nv --bind "
                           "/data/models/Qwen3-8B:/data/models/Qwen3-8B:ro "
                           "--bind ~/.cache/huggingface docker://lmsysorg/sglang:v0.5.11 "
                           "python3 -m sglang.launch_server --model-path /data/models/Qwen3-8B")
    assert "HF_TOKEN" not in text  # apptainer passes the shell's environment itself


def test_shell_text_passes_secrets_by_name_only() -> None:
    text = render_profile_container(profile('image = "i"', env='OTHER = "env:MY_TOKEN"'))
    assert text.startswith("SGLANG_ENABLE_SPEC_V2=1 OTHER=\"$MY_TOKEN\" docker run \\\n")
    assert "\n  -e HF_TOKEN \\\n" in text and "HF_TOKEN=" not in text
    assert "sk-live-abcdef" not in text and "--api-key '***'" in text
    assert "\n  -v ~/.cache/huggingface:/root/.cache/huggingface \\\n" in text


def test_cli_command_prints_the_container_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'schema_version = 1\n[model]\npath = "/m"\n[container]\nruntime = "podman"\nimage = "img:1"\n'
        '[env]\nHF_TOKEN = "hf_literal_value_123"\n')
    assert main(["command", str(path), "--format", "argv-json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["container"][:3] == ["podman", "run", "--init"]
    assert "hf_literal_value_123" not in out
    assert main(["command", str(path)]) == 0
    shell = capsys.readouterr().out
    assert "-e HF_TOKEN" in shell and "hf_literal_value_123" not in shell


def test_argv_json_expands_the_home_no_shell_will_expand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """argv-json is run without a shell: `~/` in a mount is this machine's home there, while
    the shell text keeps `~/` for the shell."""
    monkeypatch.setenv("HOME", "/home/ml user")
    path = tmp_path / "p.toml"
    path.write_text(
        'schema_version = 1\n[model]\npath = "/m"\n[container]\nruntime = "podman"\n'
        'image = "img:1"\nmounts = ["~/data:/data:ro"]\n')
    assert main(["command", str(path), "--format", "argv-json"]) == 0
    words = json.loads(capsys.readouterr().out)["container"]
    assert "/home/ml user/.cache/huggingface:/root/.cache/huggingface" in words
    assert "/home/ml user/data:/data:ro" in words
    assert not any(word.startswith("~") for word in words)
    assert main(["command", str(path)]) == 0
    assert "-v ~/data:/data:ro" in capsys.readouterr().out


def test_in_image_failures_are_explained() -> None:
    from wizard.remote.container import explain_in_image

    box = profile('runtime = "podman"\nimage = "img"').container
    cdi = explain_in_image(box, 126, 'Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all')
    assert "nvidia-ctk cdi generate" in cdi
    docker = explain_in_image(box, 125, 'docker: Error response from daemon: could not select device driver "" '
                              'with capabilities: [[gpu]].')
    assert "NVIDIA Container Toolkit" in docker
    missing = explain_in_image(box, 127, 'exec: "python3": executable file not found in $PATH')
    assert "set [container] python" in missing


def test_any_valid_container_table_renders() -> None:
    """Every valid [container] table (generated from the schema, as the profile round-trip test
    does) renders a command or a RenderError naming a container key; no `None` word."""
    from hypothesis import given, settings

    from tests.profile.test_roundtrip import section
    from wizard.profile_schema import ContainerSection, Profile

    @settings(max_examples=200, deadline=None, database=None)
    @given(section(ContainerSection))
    def check(table: dict[str, object]) -> None:
        p = Profile.model_validate({"model": {"path": "/models/m"}, "container": table})
        try:
            command = container_command(p, render_argv(p), {"A": "1"}, name="n")
        except RenderError as exc:
            assert exc.field in ("container.network", "container.runtime"), exc
            return
        assert p.container is not None
        argv = command.argv
        assert "None" not in argv and argv[:4] == [p.container.runtime, "run", "-d", "--init"]
        assert command.runtime_words[-1] == p.container.image
        assert command.inner[:3] == [p.container.python, "-m", "sglang.launch_server"]
        render_profile_container(p)

    check()
