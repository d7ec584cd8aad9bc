"""The Slurm and Kubernetes exports of a multi-node profile, checked by running and parsing them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wizard.exports import lws_manifest, render_lws, render_sbatch
from wizard.multinode import node_launch
from wizard.profile import load_profile
from wizard.profile_schema import Profile
from wizard.sglang.errors import RenderError

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
READY = ROOT / "profiles" / "deepseek-v3-fp8-2x8-h100.toml"
SECRET = "hf_never_written_0123456789"


def _profile(**edits: Any) -> Profile:
    profile = load_profile(READY).with_edits(
        {"env": {"HF_TOKEN": SECRET, "NCCL_DEBUG": "WARN", "ODD": "a b'$(x)\"c"}})
    return profile.with_edits(edits) if edits else profile


# ------------------------------------------------------------------------------------- Slurm


def _fake_slurm(bin_dir: Path, out_dir: Path) -> None:
    """scontrol answering two hosts, srun running the task once per node, python3 recording argv."""
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text('#!/bin/bash\nprintf "node-a\\nnode-b\\n"\n')
    (bin_dir / "srun").write_text(
        "#!/bin/bash\nn=1\nwhile [[ $1 == --* ]]; do [[ $1 == --nodes=* ]] && n=${1#--nodes=}; "
        "shift; done\nfor ((i = 0; i < n; i++)); do SLURM_NODEID=$i \"$@\" || exit $?; done\n")
    (bin_dir / "python3").write_text(
        f"#!/bin/bash\nprintf '%s\\0' \"$@\" > {out_dir}/argv-$SLURM_NODEID\n"
        f"env > {out_dir}/env-$SLURM_NODEID\n")
    for name in ("scontrol", "srun", "python3"):
        (bin_dir / name).chmod(0o755)


def test_sbatch_is_valid_bash_and_runs_every_node_with_its_rank(tmp_path: Path) -> None:
    profile = _profile()
    script = tmp_path / "job.sh"
    script.write_text(render_sbatch(profile))
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    text = script.read_text()
    assert SECRET not in text
    assert "#SBATCH --nodes=2" in text and "#SBATCH --gpus-per-node=8" in text
    out = tmp_path / "out"
    out.mkdir()
    _fake_slurm(tmp_path / "bin", out)
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "SLURM_JOB_NODELIST": "node-[a-b]",
           "HF_TOKEN": SECRET}
    run = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    expected_profile = profile.with_edits({"nodes.rendezvous_host": "node-a", "nodes.hosts": []})
    for rank in (0, 1):
        argv = (out / f"argv-{rank}").read_bytes().split(b"\0")[:-1]
        got = [a.decode() for a in argv]
        want = node_launch(expected_profile, rank).argv
        assert got[:2] == ["-m", "sglang.launch_server"]
        assert sorted(_pairs(got[2:])) == sorted(_pairs(want)), rank
        node_env = dict(line.split("=", 1) for line in (out / f"env-{rank}").read_text()
                        .splitlines() if "=" in line)
        assert node_env["HF_TOKEN"] == SECRET  # passed through from the submitter, not written
        assert node_env["NCCL_SOCKET_IFNAME"] == "eth0" and node_env["ODD"] == "a b'$(x)\"c"
    missing = subprocess.run(["bash", str(script)], env={**env, "HF_TOKEN": ""},
                             capture_output=True, text=True, check=False)
    assert missing.returncode != 0 and "export HF_TOKEN before sbatch" in missing.stderr


def _pairs(argv: list[str]) -> list[tuple[str, str | None]]:
    """Flags with their values, order-independent (the script writes the node flags last)."""
    out: list[tuple[str, str | None]] = []
    for i, piece in enumerate(argv):
        if piece.startswith("--"):
            value = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("--") else None
            out.append((piece, value))
    return out


def test_exports_refuse_what_they_cannot_write() -> None:
    one_node = load_profile(READY).with_edits({"parallel.nnodes": 1, "nodes.hosts": []})
    with pytest.raises(RenderError, match="nnodes >= 2"):
        render_sbatch(one_node)
    with pytest.raises(RenderError, match="--api-key"):
        lws_manifest(_profile(extra_args=["--api-key", "sk-1"]))


# ---------------------------------------------------------------------------------- Kubernetes

DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
LWS_INJECTED = {"LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"}


def _check_container(container: dict[str, Any], volumes: set[str]) -> None:
    assert set(container) <= {"name", "image", "command", "args", "env", "resources", "ports",
                              "volumeMounts", "readinessProbe"}
    assert DNS_LABEL.match(container["name"])
    assert isinstance(container["image"], str) and container["image"]
    assert all(isinstance(x, str) for x in container["command"] + container["args"])
    names = []
    for item in container["env"]:
        assert set(item) in ({"name", "value"}, {"name", "valueFrom"}), item
        names.append(item["name"])
        if "value" in item:
            assert isinstance(item["value"], str)
        else:
            source = item["valueFrom"]
            assert len(source) == 1 and next(iter(source)) in ("secretKeyRef", "fieldRef")
            if "secretKeyRef" in source:
                assert set(source["secretKeyRef"]) == {"name", "key"}
            else:
                assert set(source["fieldRef"]) == {"fieldPath"}
    assert len(names) == len(set(names))
    for arg in container["args"]:
        for ref in re.findall(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)", arg):
            assert ref in names or ref in LWS_INJECTED, ref
    limits = container["resources"]["limits"]
    assert set(container["resources"]) == {"limits"}
    assert all(isinstance(v, str) and v.isdigit() for v in limits.values())
    for mount in container["volumeMounts"]:
        assert mount["name"] in volumes and mount["mountPath"].startswith("/")
    for port in container.get("ports", []):
        assert isinstance(port["containerPort"], int) and 0 < port["containerPort"] < 65536


def _check_pod_template(template: dict[str, Any]) -> dict[str, Any]:
    assert set(template) == {"metadata", "spec"}
    labels = template["metadata"]["labels"]
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items())
    spec = template["spec"]
    assert set(spec) <= {"containers", "volumes"}
    volumes = {v["name"] for v in spec.get("volumes", [])}
    assert len(spec["containers"]) == 1
    _check_container(spec["containers"][0], volumes)
    return dict(spec["containers"][0])


def _expand(args: list[str], env: dict[str, str]) -> list[str]:
    """Kubernetes' $(VAR) expansion of container args ($$ keeps a literal $)."""
    def one(text: str) -> str:
        return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                      lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)),
                      text)
    return [one(a) for a in args]


def test_lws_manifest_has_the_leaderworkerset_v1_shape_and_each_pods_command() -> None:
    profile = _profile(**{"model.served_model_name": "$(not-a-var)"})
    text = render_lws(profile, name="DeepSeek V3", secret_name="hf")
    assert SECRET not in text
    assert "kubectl create secret generic hf --from-literal=HF_TOKEN=..." in text
    doc = yaml.safe_load(text)
    assert doc == lws_manifest(profile, name="deepseek-v3", secret_name="hf")  # YAML == data
    assert doc["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert doc["kind"] == "LeaderWorkerSet"
    assert set(doc) == {"apiVersion", "kind", "metadata", "spec"}
    assert DNS_LABEL.match(doc["metadata"]["name"])
    spec = doc["spec"]
    assert set(spec) <= {"replicas", "leaderWorkerTemplate", "rolloutStrategy", "startupPolicy"}
    assert isinstance(spec["replicas"], int) and spec["replicas"] >= 1
    template = spec["leaderWorkerTemplate"]
    assert set(template) <= {"leaderTemplate", "workerTemplate", "size", "restartPolicy"}
    assert template["size"] == 2
    assert template["restartPolicy"] in ("RecreateGroupOnPodRestart", "None")
    leader = _check_pod_template(template["leaderTemplate"])
    worker = _check_pod_template(template["workerTemplate"])
    assert leader["resources"]["limits"] == {"nvidia.com/gpu": "8"}
    secret_ref = next(e for e in leader["env"] if e["name"] == "HF_TOKEN")
    assert secret_ref["valueFrom"]["secretKeyRef"] == {"name": "hf", "key": "HF_TOKEN"}
    rank_source = next(e for e in worker["env"] if e["name"] == "NODE_RANK")
    assert rank_source["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']")
    # the pods run exactly `command --node R` with the LWS leader as rendezvous host
    expected = profile.with_edits({"nodes.rendezvous_host": "lead.svc", "nodes.hosts": []})
    for rank, container, env in ((0, leader, {}), (1, worker, {"NODE_RANK": "1"})):
        args = _expand(container["args"], {"LWS_LEADER_ADDRESS": "lead.svc", **env})
        assert container["command"] == ["python3", "-m", "sglang.launch_server"]
        assert sorted(_pairs(args)) == sorted(_pairs(node_launch(expected, rank).argv))
        assert "$(not-a-var)" in args


def test_export_cli_writes_files_and_refuses_bad_input(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wizard.cli", "export", *args],
                              capture_output=True, text=True, cwd=ROOT, check=False)

    out = tmp_path / "job.sh"
    done = cli(str(READY), "--format", "sbatch", "-o", str(out), "--partition", "gpu")
    assert done.returncode == 0, done.stderr
    assert "#SBATCH --partition=gpu" in out.read_text() and os.access(out, os.X_OK)
    again = cli(str(READY), "--format", "sbatch", "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    lws = cli(str(READY), "--format", "lws", "--image", "registry/sglang:x")
    assert lws.returncode == 0 and yaml.safe_load(lws.stdout)["kind"] == "LeaderWorkerSet"
    single = tmp_path / "single.toml"
    single.write_text('schema_version = 1\n[model]\npath = "/m"\n')
    refused = cli(str(single), "--format", "lws")
    assert refused.returncode == 2 and "nnodes >= 2" in refused.stderr
    assert shutil.which("bash") is not None
    assert json.loads(json.dumps(yaml.safe_load(lws.stdout)))  # plain data only
