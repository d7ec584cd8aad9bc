"""Exports of a multi-node profile to the schedulers people outgrow SSH for: Slurm and Kubernetes.

Both are generated from the same per-node launch as `sglang-wizard command --node R`
(`wizard.multinode.node_launch`); only the node rank and the rendezvous host come from the
scheduler:

* **Slurm** (`render_sbatch`): one `srun` task per node; the rank is `SLURM_NODEID`, the
  rendezvous host the first host of the allocation (`scontrol show hostnames`).
* **Kubernetes** (`lws_manifest` / `render_lws`): a LeaderWorkerSet (`leaderworkerset.x-k8s.io/v1`)
  whose leader pod is rank 0 and whose workers take their rank from the LWS worker index; GPUs as
  `nvidia.com/gpu` limits per pod; the profile's env as plain values and its secrets as
  `secretKeyRef`s (values are never written).

Both serve on `0.0.0.0` (`EXPORT_HOST`): the scheduler's clients and Kubernetes' readiness probe
reach the server by the node / pod address, never by 127.0.0.1. The interpreter is a parameter
(`python=`): the LWS pods run the image's `python3` (`CONTAINER_PYTHON`), the sbatch script the
hosts' `ssh.python`, unless the caller names another.

Pure functions returning text; secrets (as `wizard.secrets` decides) never appear in the output:
secret env vars are read from the job's environment (sbatch) or a Kubernetes Secret (lws), and a
secret flag kept as a reference (`--api-key env:SGLANG_WIZARD_API_KEY`) is passed the same way,
as `"$SGLANG_WIZARD_API_KEY"` in the script or `$(SGLANG_WIZARD_API_KEY)` in the container args
(Kubernetes expands it from the container's env). A literal secret flag value is refused.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from wizard.container import gpu_vendor, mounts
from wizard.multinode import IFNAME_VARS, node_count, node_launch, rendezvous_host
from wizard.profile_schema import Profile
from wizard.secrets import is_secret_name, reference_name, reference_var, secret_flag_slots
from wizard.sglang.errors import RenderError
from wizard.sglang.render import LAUNCH_MODULE, profile_secret_option_of, quote_interpreter
from wizard.yaml_text import dump as dump_yaml

LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"
LWS_WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
DEFAULT_SERVER_PORT = 30000
RANK_VAR = "NODE_RANK"  # the worker's rank, from its LWS worker-index label
_NAME_CHARS = re.compile(r"[^a-z0-9-]+")
#: Where exported servers listen: every address of the node / pod (probes and clients use those).
EXPORT_HOST = "0.0.0.0"
#: The interpreter inside a container image (the SSH hosts' `ssh.python` path does not exist
#: there, and Kubernetes does not expand `~`).
CONTAINER_PYTHON = "python3"


def is_secret(name: str) -> bool:
    """An environment variable whose value is a secret (HF_TOKEN, *_API_KEY, ...)."""
    return is_secret_name(name)


def container_python(profile: Profile) -> str:
    """The interpreter a container runs: the profile's `[container] python`, else the image's
    `python3` (the profile's `ssh.python` is a path on the SSH hosts)."""
    return profile.container.python if profile.container else CONTAINER_PYTHON


def host_python(profile: Profile) -> str:
    """The interpreter on the scheduler's hosts themselves (no container): `ssh.python`."""
    return profile.ssh.python


def k8s_name(text: str, fallback: str = "sglang") -> str:
    """A DNS-1035 label from free text (`DeepSeek-V3 FP8` -> `deepseek-v3-fp8`), at most 40 chars."""
    name = _NAME_CHARS.sub("-", text.lower()).strip("-")[:40].strip("-")
    if not name or not name[0].isalpha():
        name = f"{fallback}-{name}".strip("-")
    return name


def _checked(profile: Profile, version: str | None,
             ) -> tuple[int, list[str], dict[str, str], list[tuple[int, str]]]:
    """(nodes, rank 0's argv without the per-node flags, env, secret flag references as
    (argv index, variable)); a secret flag with a literal value is refused."""
    count = node_count(profile)
    if count < 2:
        raise RenderError(
            "a multi-node export needs parallel.nnodes >= 2 (and [[nodes.hosts]] or "
            "nodes.rendezvous_host)", field="parallel.nnodes")
    if rendezvous_host(profile) is None:  # the scheduler names rank 0's host
        profile = profile.with_edits({"nodes.rendezvous_host": "rank0"})
    if profile.server.host != EXPORT_HOST:  # probes and clients come by the node / pod address
        profile = profile.with_edits({"server.host": EXPORT_HOST})
    launch = node_launch(profile, 0, version)
    argv = _without_node_flags(launch.argv)
    option_of = profile_secret_option_of(profile)
    refs: list[tuple[int, str]] = []
    for index, option, value in secret_flag_slots(argv, option_of):
        var = reference_name(value)
        if var is None:
            raise RenderError(_literal_secret_message(option), field="extra_args")
        refs.append((index, var))
    return count, argv, dict(profile.env), refs


def _literal_secret_message(option: str) -> str:
    """Why a literal secret flag value is not exported, and what to write instead (SGLang reads
    the flag only from its command line: no variable in its env tables sets it)."""
    var = reference_var(option)
    return (
        f"extra_args holds the value of {option} in clear, and an export never writes a secret. "
        f"SGLang reads {option} only from its command line (no environment variable of SGLang "
        f"sets it), so keep a reference in the profile instead: `{option} env:{var}` (the wizard "
        f"and `sglang-wizard import` store it so). The export then passes {option} "
        f"\"${var}\" from the job's environment (sbatch) or {option} $({var}) from a "
        f"Kubernetes Secret (lws)")


def _without_node_flags(argv: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for piece in argv:
        if skip:
            skip = False
            continue
        name = piece.split("=", 1)[0]
        if name in ("--node-rank", "--dist-init-addr", "--nnodes"):
            skip = "=" not in piece
            continue
        out.append(piece)
    return out


def gpus_per_node(profile: Profile) -> int:
    """GPUs each node runs: tp * pp / nnodes (at least 1)."""
    total = profile.parallel.tp * profile.parallel.pp
    return max(1, total // max(node_count(profile), 1))


def _interface(profile: Profile) -> str | None:
    return profile.nodes.interface or next((n.interface for n in profile.nodes.hosts if n.interface),
                                           None)


# --------------------------------------------------------------------------------------- Slurm


def render_sbatch(profile: Profile, version: str | None = None, *, job_name: str | None = None,
                  partition: str | None = None, time_limit: str | None = None,
                  python: str | None = None) -> str:
    """A Slurm batch script: one `srun` task per node, rank from SLURM_NODEID; `python` is the
    interpreter on the nodes (default `host_python`: the profile's `ssh.python`)."""
    count, argv, env, refs = _checked(profile, version)
    name = k8s_name(job_name or profile.description or "sglang")
    port = profile.nodes.rendezvous_port
    python = python or (container_python(profile) if profile.container
                        else host_python(profile))
    lines = [
        "#!/bin/bash",
        f"# SGLang {profile.sglang_version} on {count} nodes, written by sglang-wizard export "
        "--format sbatch",
        f"#SBATCH --job-name={name}",
        f"#SBATCH --nodes={count}",
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --gpus-per-node={gpus_per_node(profile)}",
        "#SBATCH --exclusive",
        "#SBATCH --output=%x-%j.log",
    ]
    if partition:
        lines.append(f"#SBATCH --partition={partition}")
    if time_limit:
        lines.append(f"#SBATCH --time={time_limit}")
    lines += ["", "set -euo pipefail", ""]
    plain = {k: v for k, v in env.items() if not is_secret(k)}
    secret = sorted(k for k in env if is_secret(k))
    interface = _interface(profile)
    if interface:
        for var in IFNAME_VARS:
            plain.setdefault(var, interface)
    for var in secret:
        lines.append(f': "${{{var}:?export {var} before sbatch (sglang-wizard never writes '
                     'secrets)}"')
        lines.append(f"export {var}")
    for var in sorted({v for _, v in refs} - set(secret)):  # read here, passed in ARGS only
        lines.append(f': "${{{var}:?export {var} before sbatch (sglang-wizard never writes '
                     'secrets)}"')
    for key, value in plain.items():
        lines.append(f"export {key}={shlex.quote(value)}")
    srun_options, wrapper, box_lines = _slurm_container(profile, env)
    lines += box_lines
    if secret or plain or box_lines:
        lines.append("")
    lines += [
        "# rank 0 is the first host of the allocation; every node meets there",
        'NODES=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))',
        f'DIST_INIT_ADDR="${{NODES[0]}}:{port}"',
        "",
        "ARGS=(",
        f"  -m {LAUNCH_MODULE}",
    ]
    by_index = dict(refs)
    words = [_shell_ref(p, by_index[i]) if i in by_index else shlex.quote(p)
             for i, p in enumerate(argv)]
    groups: list[list[str]] = []
    for piece, word in zip(argv, words, strict=True):
        if piece.startswith("--") or not groups:
            groups.append([word])
        else:
            groups[-1].append(word)
    for group in groups:
        lines.append("  " + " ".join(group))
    lines += [
        f"  --nnodes {count}",
        '  --dist-init-addr "$DIST_INIT_ADDR"',
        ")",
        "",
        "# one task per node; SLURM_NODEID (0..nnodes-1) is the node rank",
        f"srun --nodes={count} --ntasks-per-node=1 --kill-on-bad-exit=1 \\",
        *(f"  {option} \\" for option in srun_options),
        "  bash -c 'exec \"$0\" \"$@\" --node-rank \"$SLURM_NODEID\"' "
        + "".join(f"{word} " for word in wrapper)
        + f"{quote_interpreter(python)} \"${{ARGS[@]}}\"",
        "",
    ]
    return "\n".join(lines)


def _shell_ref(piece: str, var: str) -> str:
    """A secret flag's reference as the shell reads it: `"$VAR"` (`--api-key="$VAR"`)."""
    value = f"env:{var}"
    head = piece[: len(piece) - len(value)]
    return (shlex.quote(head) if head else "") + f'"${var}"'


def pyxis_image(image: str) -> str:
    """A Docker image reference as Pyxis/Enroot spell it: the registry host is followed by `#`
    (`nvcr.io/nvidia/pytorch:24.01` -> `nvcr.io#nvidia/pytorch:24.01`); Docker Hub names stay."""
    if "#" in image or image.startswith(("docker://", "/", "./")) or image.endswith(".sqsh"):
        return image
    first, slash, rest = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return f"{first}#{rest}"
    return image


def _slurm_mount_path(path: str) -> str:
    """A host path for the script: `~/x` as `$HOME/x` (expanded by the batch shell), quoted."""
    if path.startswith("~/"):
        return '"$HOME"/' + shlex.quote(path[2:])
    return shlex.quote(path)


def _slurm_container(profile: Profile, env: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(srun options, words before the python, script lines) that run each task in the profile's
    image: Pyxis/Enroot (`--container-image`, `--container-mounts`) for docker, podman and enroot
    profiles, `apptainer exec` for apptainer ones. The HF cache is mounted at the same path and
    HF_HOME points there (tasks run as the user, not root). Empty without [container]."""
    box = profile.container
    if box is None:
        return [], [], []

    pairs = [(host, container, ro) for host, container, ro in mounts(profile)
             if container != "/root/.cache/huggingface"]
    script: list[str] = []
    if box.hf_cache:
        pairs.append((box.hf_cache, box.hf_cache, False))
        if "HF_HOME" not in env:
            script.append(f"export HF_HOME={_slurm_mount_path(box.hf_cache)}")
    if box.runtime == "apptainer":
        vendor = gpu_vendor(profile)
        words = ["apptainer", "exec"] + (["--rocm"] if vendor == "amd" else ["--nv"] if vendor else [])
        for host, container, ro in pairs:
            words += ["--bind", _slurm_mount_path(host) + ":" + _slurm_mount_path(container)
                      + (":ro" if ro else "")]
        return [], [*words, shlex.quote(box.image)], script
    options = [f"--container-image={shlex.quote(pyxis_image(box.image))}"]
    if pairs:
        spec = ",".join(_slurm_mount_path(host) + ":" + _slurm_mount_path(container)
                        + (":ro" if ro else "") for host, container, ro in pairs)
        options.append(f"--container-mounts={spec}")
    return options, [], script


# ---------------------------------------------------------------------------------- Kubernetes


def _server_port(argv: list[str]) -> int:
    for i, piece in enumerate(argv):
        if piece == "--port" and i + 1 < len(argv) and argv[i + 1].isdigit():
            return int(argv[i + 1])
        if piece.startswith("--port="):
            value = piece.split("=", 1)[1]
            if value.isdigit():
                return int(value)
    return DEFAULT_SERVER_PORT


def _k8s_escape(text: str) -> str:
    """Kubernetes expands `$(VAR)` in command/args; `$$` keeps a literal `$(`."""
    return text.replace("$(", "$$(")


def lws_manifest(profile: Profile, version: str | None = None, *, name: str | None = None,
                 image: str | None = None, secret_name: str | None = None,
                 python: str | None = None) -> dict[str, Any]:
    """A LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) serving the profile on nnodes pods;
    `python` is the interpreter in the image (default `container_python`: `python3`)."""
    count, argv, env, refs = _checked(profile, version)
    python = python or container_python(profile)
    lws_name = k8s_name(name or profile.description or "sglang")
    secrets_ref = secret_name or f"{lws_name}-secrets"
    port = profile.nodes.rendezvous_port
    server_port = _server_port(argv)
    env_list: list[dict[str, Any]] = []
    interface = _interface(profile)
    plain = dict(env)
    if interface:
        for var in IFNAME_VARS:
            plain.setdefault(var, interface)
    for key, value in plain.items():
        if is_secret(key):
            env_list.append({"name": key, "valueFrom": {"secretKeyRef": {
                "name": secrets_ref, "key": key}}})
        else:
            env_list.append({"name": key, "value": value})
    for var in sorted({v for _, v in refs} - set(plain)):  # for the $(VAR) in the args
        env_list.append({"name": var, "valueFrom": {"secretKeyRef": {
            "name": secrets_ref, "key": var}}})
    by_index = dict(refs)
    shared_args = [_k8s_ref(p, by_index[i]) if i in by_index else _k8s_escape(p)
                   for i, p in enumerate(argv)]
    gpus = str(gpus_per_node(profile))

    def container(role: str, rank_arg: str, extra_env: list[dict[str, Any]]) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "name": f"sglang-{role}",
            "image": image or (profile.container.image.removeprefix("docker://")
                               if profile.container
                               else f"lmsysorg/sglang:v{profile.sglang_version}"),
            "command": [python, "-m", LAUNCH_MODULE],
            "args": [*shared_args, "--nnodes", str(count), "--node-rank", rank_arg,
                     "--dist-init-addr", f"$(LWS_LEADER_ADDRESS):{port}"],
            "env": [*extra_env, *env_list],
            "resources": {"limits": {"nvidia.com/gpu": gpus}},
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
        }
        if role == "leader":
            spec["ports"] = [{"name": "http", "containerPort": server_port}]
            spec["readinessProbe"] = {
                "tcpSocket": {"port": server_port},
                "initialDelaySeconds": 30,
                "periodSeconds": 10,
            }
        return spec

    def pod(role: str, rank_arg: str, extra_env: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"app": lws_name, "role": role}},
            "spec": {
                "containers": [container(role, rank_arg, extra_env)],
                "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
            },
        }

    worker_index = [{"name": RANK_VAR, "valueFrom": {"fieldRef": {
        "fieldPath": f"metadata.labels['{LWS_WORKER_INDEX_LABEL}']"}}}]
    return {
        "apiVersion": LWS_API_VERSION,
        "kind": "LeaderWorkerSet",
        "metadata": {"name": lws_name},
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": count,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": pod("leader", "0", []),
                "workerTemplate": pod("worker", f"$({RANK_VAR})", worker_index),
            },
        },
    }


def _k8s_ref(piece: str, var: str) -> str:
    """A secret flag's reference as Kubernetes expands it in args: `$(VAR)`."""
    value = f"env:{var}"
    return _k8s_escape(piece[: len(piece) - len(value)]) + f"$({var})"


def render_lws(profile: Profile, version: str | None = None, **options: Any) -> str:
    """The LeaderWorkerSet manifest as YAML (a header comment, then the document)."""
    manifest = lws_manifest(profile, version, **options)
    secrets = sorted({k for k in profile.env if is_secret(k)}
                     | {e["name"] for e in manifest["spec"]["leaderWorkerTemplate"]
                        ["leaderTemplate"]["spec"]["containers"][0]["env"]
                        if "secretKeyRef" in e.get("valueFrom", {})})
    header = [
        f"# SGLang {profile.sglang_version} on {manifest['spec']['leaderWorkerTemplate']['size']} "
        "pods (LeaderWorkerSet), written by sglang-wizard export --format lws",
        "# needs the LeaderWorkerSet controller (https://lws.sigs.k8s.io) and the model at "
        f"{profile.model.path} inside the image or a mounted volume",
    ]
    if secrets:
        ref = manifest["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
        names = {e["valueFrom"]["secretKeyRef"]["name"] for e in ref["env"] if "valueFrom" in e
                 and "secretKeyRef" in e["valueFrom"]}
        header.append(f"# secrets are references: kubectl create secret generic {min(names)} "
                      + " ".join(f"--from-literal={k}=..." for k in secrets))
    return "\n".join(header) + "\n" + dump_yaml(manifest, inline_lists=False)
