"""Exports of a [container] profile: sbatch through Pyxis/Enroot or Apptainer, LWS with the image
and the image's python. The scripts are run with a fake srun / apptainer / python3 on PATH."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from wizard.exports import lws_manifest, pyxis_image, render_sbatch
from wizard.profile import load_profile
from wizard.profile_schema import Profile

ROOT = Path(__file__).resolve().parents[2]
READY = ROOT / "profiles" / "deepseek-v3-fp8-2x8-h100.toml"
SECRET = "hf_never_written_container_42"


def _profile(container: dict[str, Any]) -> Profile:
    return load_profile(READY).with_edits(
        {"env": {"HF_TOKEN": "env:HF_TOKEN"}, "container": container})


def _fake_slurm(bin_dir: Path, out: Path) -> None:
    bin_dir.mkdir()
    scripts = {
        "scontrol": 'printf "node-a\\nnode-b\\n"\n',
        # srun: records its --container-* options, runs the task once per node
        "srun": f'n=1\nwhile [[ $1 == --* ]]; do [[ $1 == --nodes=* ]] && n=${{1#--nodes=}}\n'
                f'  [[ $1 == --container-* ]] && printf "%s\\n" "$1" >> {out}/srun-options\n'
                'shift; done\nfor ((i = 0; i < n; i++)); do SLURM_NODEID=$i "$@" || exit $?; done\n',
        # apptainer exec [--nv] [--bind X]... IMAGE CMD...: records the words, runs CMD
        "apptainer": f'printf "%s\\0" "$@" > {out}/apptainer-$SLURM_NODEID\nshift\n'
                     'while [[ $1 == --* ]]; do [[ $1 == --bind ]] && shift; shift; done\nshift\n'
                     'exec "$@"\n',
        "python3": f"printf '%s\\0' \"$@\" > {out}/argv-$SLURM_NODEID\n"
                   f"env > {out}/env-$SLURM_NODEID\n",
    }
    for name, body in scripts.items():
        (bin_dir / name).write_text("#!/bin/bash\n" + body)
        (bin_dir / name).chmod(0o755)


def _run(script_text: str, tmp_path: Path) -> Path:
    script = tmp_path / "job.sh"
    script.write_text(script_text)
    assert SECRET not in script_text
    out = tmp_path / "out"
    out.mkdir()
    _fake_slurm(tmp_path / "bin", out)
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "SLURM_JOB_NODELIST": "node-[a-b]",
           "HF_TOKEN": SECRET, "HOME": "/home/alice"}
    run = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return out


def _env(out: Path, rank: int) -> dict[str, str]:
    lines = (out / f"env-{rank}").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def test_sbatch_with_pyxis(tmp_path: Path) -> None:
    profile = _profile({"runtime": "enroot", "image": "nvcr.io/lmsys/sglang:v0.5.11",
                        "mounts": ["/lustre/data:/data:ro"]})
    out = _run(render_sbatch(profile), tmp_path)
    options = (out / "srun-options").read_text().splitlines()
    assert options[0] == "--container-image=nvcr.io#lmsys/sglang:v0.5.11"  # Pyxis' registry#image
    mounts = options[1].removeprefix("--container-mounts=").split(",")
    model = profile.model.path
    assert f"{model}:{model}:ro" in mounts and "/lustre/data:/data:ro" in mounts
    assert "/home/alice/.cache/huggingface:/home/alice/.cache/huggingface" in mounts
    for rank in (0, 1):
        argv = (out / f"argv-{rank}").read_bytes().split(b"\0")[:-1]
        assert argv[:2] == [b"-m", b"sglang.launch_server"] and argv[-2:] == [b"--node-rank", str(rank).encode()]
        env = _env(out, rank)
        assert env["HF_TOKEN"] == SECRET and env["HF_HOME"] == "/home/alice/.cache/huggingface"


def test_sbatch_with_apptainer(tmp_path: Path) -> None:
    profile = _profile({"runtime": "apptainer", "image": "docker://lmsysorg/sglang:v0.5.11"})
    out = _run(render_sbatch(profile), tmp_path)
    assert not (out / "srun-options").exists()
    for rank in (0, 1):
        words = [w.decode() for w in (out / f"apptainer-{rank}").read_bytes().split(b"\0")[:-1]]
        image = words.index("docker://lmsysorg/sglang:v0.5.11")
        assert words[:2] == ["exec", "--nv"] and words[image + 1] == "python3"
        assert "/home/alice/.cache/huggingface:/home/alice/.cache/huggingface" in words[:image]
        assert (out / f"argv-{rank}").read_bytes().split(b"\0")[-2] == str(rank).encode()


def test_lws_uses_the_image_and_its_python() -> None:
    profile = _profile({"runtime": "docker", "image": "lmsysorg/sglang:v0.5.11-cu129",
                        "python": "/opt/venv/bin/python"})
    spec = lws_manifest(profile)["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        container = spec[role]["spec"]["containers"][0]
        assert container["image"] == "lmsysorg/sglang:v0.5.11-cu129"
        assert container["command"] == ["/opt/venv/bin/python", "-m", "sglang.launch_server"]
    assert lws_manifest(profile, image="mirror/sglang:1")["spec"]["leaderWorkerTemplate"][
        "leaderTemplate"]["spec"]["containers"][0]["image"] == "mirror/sglang:1"


@pytest.mark.parametrize(("image", "pyxis"), [
    ("lmsysorg/sglang:v0.5.11", "lmsysorg/sglang:v0.5.11"),
    ("nvcr.io/nvidia/pytorch:24.01", "nvcr.io#nvidia/pytorch:24.01"),
    ("localhost:5000/sglang:dev", "localhost:5000#sglang:dev"),
    ("/shared/images/sglang.sqsh", "/shared/images/sglang.sqsh"),
])
def test_pyxis_image_names(image: str, pyxis: str) -> None:
    assert pyxis_image(image) == pyxis
