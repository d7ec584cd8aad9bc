"""`sglang-wizard import` of a pasted `docker run ... IMAGE python3 -m sglang.launch_server ...`:
the container options become the [container] table, and `command` writes an equivalent back."""

from __future__ import annotations

import pytest

from wizard.container import container_command
from wizard.sglang.errors import CommandError
from wizard.sglang.parse import parse_command
from wizard.sglang.render import render_argv

SGLANG_DOCS = (
    "docker run --gpus all --shm-size 32g -p 30000:30000 "
    "-v ~/.cache/huggingface:/root/.cache/huggingface --env \"HF_TOKEN=hf_docs_token_1234\" "
    "--ipc=host lmsysorg/sglang:latest python3 -m sglang.launch_server "
    "--model-path meta-llama/Llama-3.1-8B-Instruct --host 0.0.0.0 --port 30000"
)


def test_the_sglang_docs_docker_command() -> None:
    result = parse_command(SGLANG_DOCS)
    box = result.profile.container
    assert box is not None
    assert (box.runtime, box.image, box.shm_size, box.network) == (
        "docker", "lmsysorg/sglang:latest", None, "bridge")
    assert box.uses_host_ipc  # docker ignores --shm-size with --ipc=host: so does the import
    assert any("dropped --shm-size 32g" in note for note in result.notes)
    assert box.hf_cache == "~/.cache/huggingface" and box.mounts == []
    assert result.profile.model.path == "meta-llama/Llama-3.1-8B-Instruct"
    assert result.profile.env["HF_TOKEN"] == "hf_docs_token_1234"  # saved as env:HF_TOKEN
    words = container_command(result.profile, render_argv(result.profile), result.profile.env).argv
    assert words[words.index("-p") + 1] == "30000:30000" and "--gpus" in words


def test_podman_rocm_python_mounts_and_references() -> None:
    text = (
        "SGLANG_ENABLE_SPEC_V2=1 sudo podman run -d --rm --device /dev/kfd --device /dev/dri "
        "--group-add video --network host --cap-add SYS_PTRACE -v /models/q:/models/q:ro "
        "-v /data:/data -e HF_TOKEN --name x rocm/sglang:v0.5.11 /opt/venv/bin/python -m "
        "sglang.launch_server --model-path /models/q --tp 8"
    )
    result = parse_command(text)
    box = result.profile.container
    assert box is not None
    assert (box.runtime, box.gpus, box.network, box.python) == (
        "podman", "amd", "host", "/opt/venv/bin/python")
    assert box.mounts == ["/data:/data"]  # the model folder is mounted by mount_model
    assert box.runtime_args == ["--cap-add", "SYS_PTRACE"]
    assert box.hf_cache == ""  # the command mounted none
    assert result.profile.env == {"SGLANG_ENABLE_SPEC_V2": "1", "HF_TOKEN": "env:HF_TOKEN"}
    assert result.profile.ssh.python == "python3"  # the image's python is not the host's
    assert any("dropped --name x" in note for note in result.notes)


def test_a_run_without_image_is_refused() -> None:
    with pytest.raises(CommandError, match="without an image"):
        parse_command("docker run --gpus all -m sglang.launch_server --model-path /m")


@pytest.mark.parametrize("table", [
    {"runtime": "docker", "image": "lmsysorg/sglang:v0.5.11", "shm_size": "32g",
     "mounts": ["/data:/datasets:ro"], "runtime_args": ["--cap-add", "SYS_PTRACE"]},
    {"runtime": "podman", "image": "rocm/sglang:1", "gpus": "amd", "python": "/opt/venv/bin/python",
     "hf_cache": "", "network": "bridge"},
])
def test_command_then_import_gives_the_same_table(table: dict[str, object]) -> None:
    from wizard.container import render_profile_container
    from wizard.profile_schema import Profile

    profile = Profile.model_validate({
        "model": {"path": "/models/q"}, "server": {"host": "0.0.0.0", "port": 8000},
        "container": table, "env": {"HF_TOKEN": "env:HF_TOKEN", "SGLANG_ENABLE_SPEC_V2": "1"}})
    back = parse_command(render_profile_container(profile, multiline=False)).profile
    assert back.container == profile.container
    assert back.env == profile.env and back.model == profile.model
