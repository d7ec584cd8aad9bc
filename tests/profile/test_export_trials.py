"""The export failures new users hit (issue 25 items 7-10 and the YAML numbers of item 16): the
image's python in pods, 0.0.0.0 for probes, the check before export, the --api-key advice."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from wizard.exports import lws_manifest, render_lws, render_sbatch
from wizard.profile import load_profile
from wizard.profile_schema import Profile
from wizard.sglang.errors import RenderError
from wizard.sglang.render import render_yaml

ROOT = Path(__file__).resolve().parents[2]
READY = ROOT / "profiles" / "deepseek-v3-fp8-2x8-h100.toml"
KEY = "sk-live-never-written-42"


def _profile(**edits: Any) -> Profile:
    base = load_profile(READY).with_edits({"ssh.python": "~/ml-env/bin/python3",
                                           "server.host": "127.0.0.1"})
    return base.with_edits(edits) if edits else base


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard.cli", "export", *args],
                          capture_output=True, text=True, cwd=ROOT, check=False, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def _containers(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    template = manifest["spec"]["leaderWorkerTemplate"]
    return [template[t]["spec"]["containers"][0] for t in ("leaderTemplate", "workerTemplate")]


def _arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_lws_pods_run_the_images_python_not_the_ssh_hosts() -> None:
    manifest = lws_manifest(_profile())
    for container in _containers(manifest):
        assert container["command"][0] == "python3"
        assert not any("~" in word for word in container["command"] + container["args"])
    custom = lws_manifest(_profile(), python="/opt/conda/bin/python")
    assert _containers(custom)[0]["command"][0] == "/opt/conda/bin/python"


def test_sbatch_keeps_the_hosts_python_and_lets_bash_expand_the_tilde(tmp_path: Path) -> None:
    script = render_sbatch(_profile())
    assert "~/'ml-env/bin/python3'" in script or "~/ml-env/bin/python3 " in script
    assert "'~/ml-env/bin/python3'" not in script  # quoted ~ is never expanded
    assert "/usr/bin/python3.12" in render_sbatch(_profile(), python="/usr/bin/python3.12")


def test_exports_serve_on_every_address_and_probe_that_port(tmp_path: Path) -> None:
    manifest = lws_manifest(_profile(**{"server.port": 31000}))
    leader, worker = _containers(manifest)
    for container in (leader, worker):
        assert _arg(container["args"], "--host") == "0.0.0.0"
    assert leader["readinessProbe"]["tcpSocket"]["port"] == 31000
    assert leader["ports"][0]["containerPort"] == 31000
    assert "--host 0.0.0.0" in render_sbatch(_profile())
    done = _cli(str(_write(tmp_path, _profile())), "--format", "lws")
    assert done.returncode == 0 and "0.0.0.0" in done.stderr  # says why the host changed


def _write(tmp_path: Path, profile: Profile, name: str = "p.toml") -> Path:
    from wizard.profile import save_profile

    return save_profile(profile, tmp_path / name, overwrite=True)


def test_export_runs_the_check_and_refuses_a_layout_sglang_refuses(tmp_path: Path) -> None:
    bad = _write(tmp_path, _profile(**{"parallel.tp": 3}))
    out = tmp_path / "job.sh"
    for fmt in ("sbatch", "lws"):
        done = _cli(str(bad), "--format", fmt, "-o", str(out))
        assert done.returncode == 1, done.stderr
        assert "R-MULTINODE-TP" in done.stderr and "--force" in done.stderr
        assert not out.exists()
    forced = _cli(str(bad), "--format", "sbatch", "-o", str(out), "--force")
    assert forced.returncode == 0 and out.exists() and "--force" in forced.stderr
    good = _cli(str(READY), "--format", "lws")
    assert good.returncode == 0 and yaml.safe_load(good.stdout)["kind"] == "LeaderWorkerSet"


def test_a_literal_api_key_is_refused_with_advice_sglang_can_follow(tmp_path: Path) -> None:
    profile = _profile(extra_args=["--api-key", KEY])
    with pytest.raises(RenderError) as caught:
        render_lws(profile)
    message = caught.value.message
    assert KEY not in message
    read_by_sglang = {v["name"] for path in (ROOT / "wizard/sglang/data").glob("env-*.json")
                      for v in json.loads(path.read_text())["variables"]}
    # the advice names no variable as SGLang's own (it reads --api-key only from its argv) ...
    assert "only from its command line" in message
    assert not [w for w in re.findall(r"\b[A-Z][A-Z0-9_]{3,}\b", message) if w in read_by_sglang]
    # ... and says how to pass it: a reference, expanded by Kubernetes from a Secret
    assert "--api-key env:SGLANG_WIZARD_API_KEY" in message
    assert "$(SGLANG_WIZARD_API_KEY)" in message
    hand_written = tmp_path / "hand.toml"  # a save would already keep the reference
    hand_written.write_text(READY.read_text().replace(
        "[model]", f'extra_args = ["--api-key", "{KEY}"]\n\n[model]', 1))
    done = _cli(str(hand_written), "--format", "sbatch")
    assert done.returncode == 2 and KEY not in done.stdout + done.stderr
    assert "only from its command line" in done.stderr


def test_an_api_key_reference_reaches_the_pods_from_a_secret() -> None:
    profile = _profile(extra_args=["--api-key", "env:SGLANG_WIZARD_API_KEY"])
    text = render_lws(profile, secret_name="keys")
    doc = yaml.safe_load(text)
    assert doc == lws_manifest(profile, secret_name="keys")
    assert "--from-literal=SGLANG_WIZARD_API_KEY=..." in text
    for container in _containers(doc):
        assert _arg(container["args"], "--api-key") == "$(SGLANG_WIZARD_API_KEY)"
        ref = next(e for e in container["env"] if e["name"] == "SGLANG_WIZARD_API_KEY")
        assert ref["valueFrom"]["secretKeyRef"] == {"name": "keys", "key": "SGLANG_WIZARD_API_KEY"}


def test_an_api_key_reference_reaches_the_sbatch_nodes_from_the_job_env(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_text(render_sbatch(_profile(
        extra_args=["--api-key", "env:SGLANG_WIZARD_API_KEY"], **{"ssh.python": "python3"})))
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    bin_dir, out = tmp_path / "bin", tmp_path / "out"
    bin_dir.mkdir()
    out.mkdir()
    (bin_dir / "scontrol").write_text('#!/bin/bash\nprintf "node-a\\nnode-b\\n"\n')
    (bin_dir / "srun").write_text(
        "#!/bin/bash\nwhile [[ $1 == --* ]]; do shift; done\n"
        "for i in 0 1; do SLURM_NODEID=$i \"$@\" || exit $?; done\n")
    (bin_dir / "python3").write_text(
        f"#!/bin/bash\nprintf '%s\\0' \"$@\" > {out}/argv-$SLURM_NODEID\n")
    for name in ("scontrol", "srun", "python3"):
        (bin_dir / name).chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_JOB_NODELIST": "node-[a-b]"}
    run = subprocess.run(["bash", str(script)], env={**env, "SGLANG_WIZARD_API_KEY": KEY},
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    argv = [a.decode() for a in (out / "argv-1").read_bytes().split(b"\0")[:-1]]
    assert _arg(argv, "--api-key") == KEY and KEY not in script.read_text()
    missing = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                             check=False)
    assert missing.returncode != 0 and "export SGLANG_WIZARD_API_KEY" in missing.stderr


def test_yaml_writes_numbers_as_numbers_and_reads_back_the_same_text() -> None:
    profile = Profile.model_validate({
        "model": {"path": "/m", "context_length": 102400, "served_model_name": "007"},
        "memory": {"mem_fraction_static": 0.8, "cuda_graph_bs": [1, 2, 4]},
    })
    text = render_yaml(profile)
    assert "context-length: 102400\n" in text and "mem-fraction-static: 0.8\n" in text
    data = yaml.safe_load(text)
    assert data["context-length"] == 102400 and data["cuda-graph-bs"] == [1, 2, 4]
    assert data["served-model-name"] == "007"  # stays text: YAML would read 007 as 7
    lws = yaml.safe_load(render_lws(_profile()))
    args = _containers(lws)[0]["args"]
    assert all(isinstance(a, str) for a in args)  # Kubernetes args are strings: '16', not 16
