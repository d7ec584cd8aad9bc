"""The container launch of a profile with a `[container]` table, rendered once for `command`, the
SSH launch (`wizard.remote.container`) and the exports.

`docker run` / `podman run` words: the GPUs (`--gpus all` for docker, the CDI device
`--device nvidia.com/gpu=all` for podman, `/dev/kfd` + `/dev/dri` and `--group-add video` for AMD),
`--ipc=host` or `--shm-size`, `--network host` (or the published port), the model folder and HF
cache mounts, `-e NAME` for every environment variable (the value comes from the environment of
the process that runs the command, never from the command line), a container name tied to the run
id, `--init` (the server is not PID 1, so SIGTERM from `stop` reaches it), then the image and the
SGLang command inside it. Pure functions; nothing here runs anything.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wizard.gpus import lookup
from wizard.multinode import node_launch
from wizard.profile_schema import ContainerSection, Profile
from wizard.secrets import is_secret_name, mask_argv, reference_name
from wizard.sglang.errors import CommandError, RenderError
from wizard.sglang.render import LAUNCH_MODULE, render_argv
from wizard.sglang.shellwords import is_run_prefix

#: Where SGLang inside the image (running as root) looks for the HF cache.
CONTAINER_HF_HOME = "/root/.cache/huggingface"
NAME_PREFIX = "sglang-wizard-"
#: Runtimes the SSH launch drives (apptainer and enroot are for the Slurm export).
HOST_RUNTIMES = ("docker", "podman")
AMD_DEVICES = ("/dev/kfd", "/dev/dri")


def container_name(run_id: str) -> str:
    """The container's name for a run: `sglang-wizard-RUN_ID` (what `stop` and `runs` find)."""
    return NAME_PREFIX + run_id


def gpu_vendor(profile: Profile) -> str | None:
    """"nvidia", "amd" or None (no GPUs) for the container's devices, from `[container] gpus`."""
    box = profile.container
    mode = box.gpus if box is not None else "auto"
    if mode != "auto":
        return None if mode == "none" else mode
    if profile.server.device == "cpu":
        return None
    if profile.gpu.kind:
        kind = lookup(profile.gpu.kind)
        vendor = getattr(kind, "vendor", None)
        if vendor is not None:
            return str(vendor).lower()
        return "nvidia" if kind.is_cuda else "amd"
    return "nvidia"


def gpu_args(runtime: str, vendor: str | None) -> list[str]:
    """The words that make the GPUs visible inside the container."""
    if vendor is None:
        return []
    if vendor == "amd":
        words: list[str] = []
        for device in AMD_DEVICES:
            words += ["--device", device]
        return [*words, "--group-add", "video"]
    if runtime == "podman":
        return ["--device", "nvidia.com/gpu=all"]  # CDI (nvidia-ctk cdi generate)
    return ["--gpus", "all"]


def _is_host_path(path: str | None) -> bool:
    return bool(path) and str(path).startswith("/")


def mounts(profile: Profile) -> list[tuple[str, str, bool]]:
    """(host path, container path, read-only) of every mount: the model and draft folders at the
    same path (so `--model-path` is unchanged), the HF cache, then the profile's own mounts."""
    box = profile.container
    assert box is not None
    out: list[tuple[str, str, bool]] = []
    if box.mount_model:
        for path in (profile.model.path, profile.speculative.draft_model_path,
                     profile.model.tokenizer_path):
            if path and _is_host_path(path) and all(m[1] != path for m in out):
                out.append((path, path, True))
    if box.hf_cache:
        out.append((box.hf_cache, CONTAINER_HF_HOME, False))
    for spec in box.mounts:
        host, container, *options = spec.split(":")
        out.append((host, container, "ro" in (options[0].split(",") if options else [])))
    return out


def _mount_word(host: str, container: str, read_only: bool) -> str:
    return f"{host}:{container}" + (":ro" if read_only else "")


@dataclass(frozen=True)
class ContainerCommand:
    """A container launch: `runtime_words` (up to and with the image), then `inner` (the SGLang
    command inside); `env_names` are passed as `-e NAME` (values from the launching env)."""

    runtime: str
    name: str | None
    runtime_words: list[str]
    inner: list[str]
    env_names: list[str]

    @property
    def argv(self) -> list[str]:
        """The whole command as an argv."""
        return [*self.runtime_words, *self.inner]


def _network_args(box: ContainerSection, port: int, multinode: bool, host: str | None) -> list[str]:
    if box.network == "host" or multinode:
        if box.network != "host":
            raise RenderError(
                'several nodes need host networking (NCCL and the rendezvous talk between '
                'hosts): set [container] network = "host"',
                field="container.network",
            )
        return ["--network", "host"]
    if host in (None, "127.0.0.1", "localhost", "::1"):
        raise RenderError(
            f'network = "bridge" publishes port {port}, but SGLang listens on '
            f'{host or "127.0.0.1"} inside the container, which the host cannot reach: set '
            '[server] host = "0.0.0.0" or use network = "host"',
            field="container.network",
        )
    return ["-p", f"{port}:{port}"]


def run_words(
    profile: Profile,
    env_names: Sequence[str],
    *,
    name: str | None = None,
    detach: bool = True,
    port: int | None = None,
    multinode: bool = False,
    extra: Sequence[str] = (),
    network: bool = True,
) -> list[str]:
    """`RUNTIME run ... IMAGE` for a docker or podman launch (RenderError for other runtimes);
    `network=False` leaves the network words out (a preflight publishes no port)."""
    box = profile.container
    if box is None:
        raise RenderError("the profile has no [container] table", field="container")
    if box.runtime not in HOST_RUNTIMES:
        raise RenderError(
            f"runtime {box.runtime!r} is for Slurm (sglang-wizard export --format sbatch; "
            "`command` prints the apptainer exec line); the SSH launch uses "
            f"{' or '.join(HOST_RUNTIMES)}",
            field="container.runtime",
        )
    words = [box.runtime, "run"]
    if detach:
        words.append("-d")
    words.append("--init")  # the server is not PID 1: SIGTERM reaches it, children are reaped
    if name:
        words += ["--name", name]
    words += gpu_args(box.runtime, gpu_vendor(profile))
    if box.uses_host_ipc:
        words.append("--ipc=host")
    elif box.shm_size is not None:
        words += ["--shm-size", box.shm_size]  # else the runtime's default /dev/shm (64 MB)
    if network:
        words += _network_args(box, port or profile.server.port or 30000, multinode,
                               profile.server.host)
    for host, container, read_only in mounts(profile):
        words += ["-v", _mount_word(host, container, read_only)]
    for env_name in env_names:
        words += ["-e", env_name]
    words += [*extra, *box.runtime_args, box.image]
    return words


def container_command(
    profile: Profile,
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    name: str | None = None,
    detach: bool = True,
    multinode: bool = False,
) -> ContainerCommand:
    """The docker/podman command running `python -m sglang.launch_server ARGV` in the image
    with `env` passed by name."""
    box = profile.container
    if box is None:
        raise RenderError("the profile has no [container] table", field="container")
    names = list(env)
    words = run_words(profile, names, name=name, detach=detach, port=_port_of(argv, profile),
                      multinode=multinode)
    inner = [box.python, "-m", LAUNCH_MODULE, *argv]
    return ContainerCommand(box.runtime, name, words, inner, names)


def _port_of(argv: Sequence[str], profile: Profile) -> int:
    for index, word in enumerate(argv):
        if word == "--port" and index + 1 < len(argv) and argv[index + 1].isdigit():
            return int(argv[index + 1])
        if word.startswith("--port=") and word[7:].isdigit():
            return int(word[7:])
    return profile.server.port or 30000


def exec_word(word: str, home: str) -> str:
    """`word` for an argv run without a shell: a leading `~/` (alone, or as a mount's host part
    before `:`) becomes `home`, as the shell would have expanded it."""
    if word.startswith("~/"):
        return home.rstrip("/") + word[1:]
    return word


def shell_word(word: str) -> str:
    """A word for a shell, quoted, with a leading `~/` left for the shell to expand."""
    if word.startswith("~/"):
        return "~/" + shlex.quote(word[2:])
    host, colon, rest = word.partition(":")
    if colon and host.startswith("~/"):
        return "~/" + shlex.quote(host[2:] + ":" + rest)
    return shlex.quote(word)


def render_container_shell(
    profile: Profile,
    argv: Sequence[str],
    env_words: Mapping[str, str],
    *,
    multiline: bool = True,
    multinode: bool = False,
) -> str:
    """The container command as shell text: `NAME=value` for plain variables (secrets and
    references are not prefixed: `-e NAME` reads them from your shell), the runtime's words,
    the image and the SGLang command, grouped one flag per line. Apptainer: `apptainer exec`
    (it passes the shell's environment into the container itself)."""
    prefix = " ".join(f"{k}={v}" for k, v in env_words.items() if v)
    box = profile.container
    if box is not None and box.runtime == "apptainer":
        head = [" ".join(shell_word(w) for w in group) for group in apptainer_groups(profile)]
        inner = [box.python, "-m", LAUNCH_MODULE, *argv]
        groups: list[list[str]] = [inner[:3]]
        for word in inner[3:]:
            if word.startswith("--"):
                groups.append([word])
            else:
                groups[-1].append(word)
        lines = head + [" ".join(shell_word(w) for w in g) for g in groups]
        if prefix:
            lines[0] = f"{prefix} {lines[0]}"
        return (" \\\n  " if multiline else " ").join(lines)
    command = container_command(profile, argv, env_words, detach=False, multinode=multinode)
    head_words: list[list[str]] = [command.runtime_words[:2]]
    rest = command.runtime_words[2:]
    i = 0
    while i < len(rest):
        word = rest[i]
        takes_value = word in ("--name", "--device", "--group-add", "--shm-size", "--network",
                               "-p", "-v", "-e") and i + 1 < len(rest)
        head_words.append([word, rest[i + 1]] if takes_value else [word])
        i += 2 if takes_value else 1
    inner_groups: list[list[str]] = [command.inner[:3]]
    for word in command.inner[3:]:
        if word.startswith("--") or not inner_groups:
            inner_groups.append([word])
        else:
            inner_groups[-1].append(word)
    lines = [" ".join(shell_word(w) for w in group) for group in head_words + inner_groups]
    if prefix:
        lines[0] = f"{prefix} {lines[0]}"
    return (" \\\n  " if multiline else " ").join(lines)


def apptainer_groups(profile: Profile) -> list[list[str]]:
    """`apptainer exec` with the GPUs (`--nv` / `--rocm`) and the mounts (`--bind`), then the
    image, as word groups. Apptainer runs as you: the HF cache is bound at its own path."""
    box = profile.container
    assert box is not None
    vendor = gpu_vendor(profile)
    groups: list[list[str]] = [["apptainer", "exec"]]
    if vendor is not None:
        groups.append(["--rocm" if vendor == "amd" else "--nv"])
    for host, container, read_only in mounts(profile):
        if container == CONTAINER_HF_HOME or (container == host and not read_only):
            groups.append(["--bind", host])  # bound at its own path (`~` expanded by the shell)
        else:
            groups.append(["--bind", _mount_word(host, container, read_only)])
    groups.append([box.image])
    return groups


def env_words(env: Mapping[str, str], reveal: bool = False) -> dict[str, str]:
    """For each variable, what goes before the command as `NAME=...` ("" for none): plain values
    quoted; a reference to another variable as `"$OTHER"`; a secret (a reference to itself, or a
    literal unless `reveal`) gets nothing: `-e NAME` reads it from the shell that runs it."""
    out: dict[str, str] = {}
    for name, value in env.items():
        ref = reference_name(value)
        if ref is not None:
            out[name] = "" if ref == name else f'"${ref}"'
        elif is_secret_name(name) and not reveal:
            out[name] = ""
        else:
            out[name] = shlex.quote(value)
    return out


def render_profile_container(
    profile: Profile, version: str | None = None, *, multiline: bool = True,
    show_secrets: bool = False,
) -> str:
    """`sglang-wizard command` for a container profile (one node); secret flag values (--api-key)
    are `***` unless `show_secrets`."""
    argv = render_argv(profile, version)
    if not show_secrets:
        argv = mask_argv(argv)
    return render_container_shell(profile, argv, env_words(profile.env, show_secrets),
                                  multiline=multiline)


def render_node_container(profile: Profile, rank: int, version: str | None = None, *,
                          multiline: bool = True) -> str:
    """Node `rank`'s container command of a multi-node profile (host networking)."""
    launch = node_launch(profile, rank, version)
    return render_container_shell(profile, launch.argv, env_words(launch.env),
                                  multiline=multiline, multinode=launch.nnodes > 1)


# --------------------------------------------------------------------------- import (docker run)

#: `docker run` / `podman run` options that take a value (the others are switches).
_RUN_VALUE_OPTIONS = {
    "-v", "--volume", "-e", "--env", "--env-file", "-p", "--publish", "--name", "--network",
    "--net", "--ipc", "--shm-size", "--gpus", "--device", "--group-add", "-w", "--workdir", "-u",
    "--user", "--entrypoint", "--ulimit", "--cap-add", "--cap-drop", "--security-opt",
    "--runtime", "--cpus", "--cpuset-cpus", "-m", "--memory", "--mount", "-l", "--label", "-h",
    "--hostname", "--add-host", "--restart", "--pull", "--platform", "--log-driver", "--log-opt",
    "--pid", "--uts", "--userns", "--tmpfs", "--stop-signal", "--stop-timeout", "--health-cmd",
    "--memory-swap", "--oom-score-adj", "--sysctl", "--dns", "--cgroupns", "--volumes-from",
}
#: Options the wizard writes itself (or that make no sense for its launch): dropped with a note.
_RUN_DROPPED = {"-d", "--detach", "-i", "--interactive", "-t", "--tty", "-it", "-ti", "--rm",
                "--init", "--name", "--pull", "--restart", "--env-file", "-a", "--attach"}


@dataclass
class ImportedContainer:
    """What a pasted `docker run ... IMAGE python3 -m sglang.launch_server` said about the
    container: the `[container]` table, env from `-e`, notes on what was dropped."""

    table: dict[str, object]
    env: dict[str, str]
    notes: list[str]


def parse_run_words(words: Sequence[str], model_path: str | None = None) -> ImportedContainer:
    """Read `docker run [OPTIONS] IMAGE [PYTHON]` (the words before `-m sglang.launch_server`)
    into a [container] table. `-e NAME=value` goes to the profile's env (`-e NAME` as a
    reference `env:NAME`), the model folder and HF cache mounts to their keys."""
    at = is_run_prefix(words)
    assert at is not None
    runtime = words[at - 1].rsplit("/", 1)[-1]
    table: dict[str, object] = {"runtime": runtime}
    env: dict[str, str] = {}
    notes: list[str] = []
    mounts: list[str] = []
    extra: list[str] = []
    gpus: str | None = None
    ipc_host = False
    rest = list(words[at + 1:])
    i = 0
    while i < len(rest):
        word = rest[i]
        if not word.startswith("-") or word == "-":
            break
        name, eq, value = word.partition("=")
        if name in _RUN_VALUE_OPTIONS and not eq:
            value = rest[i + 1] if i + 1 < len(rest) else ""
            i += 1
        i += 1
        if name in ("-e", "--env"):
            key, has, val = value.partition("=")
            env[key] = val if has else f"env:{key}"
        elif name in ("-v", "--volume"):
            host, _, target = value.partition(":")
            path = target.split(":", 1)[0]
            if path == CONTAINER_HF_HOME:
                table["hf_cache"] = host
            elif not (host == path and path == model_path):
                mounts.append(value)
        elif name == "--gpus" or (name == "--device" and value.startswith("nvidia.com/gpu")):
            gpus = "nvidia"
        elif name == "--device" and value in AMD_DEVICES:
            gpus = "amd"
        elif name == "--group-add" and value == "video" and gpus == "amd":
            pass
        elif name == "--ipc":
            if value != "host":
                table["ipc_host"] = False
            else:
                ipc_host = True
        elif name == "--shm-size":
            table["shm_size"] = value
        elif name in ("--network", "--net"):
            table["network"] = "host" if value == "host" else "bridge"
        elif name in ("-p", "--publish"):
            table.setdefault("network", "bridge")
        elif name in _RUN_DROPPED:
            notes.append(f"dropped {word}{' ' + value if value and not eq else ''} "
                         "(the wizard writes its own)")
        else:
            extra += [word] if eq or name not in _RUN_VALUE_OPTIONS else [word, value]
    if i >= len(rest):
        raise CommandError(f"{runtime} run without an image", flag=f"{runtime} run",
                           suggestion=f"{runtime} run [OPTIONS] IMAGE python3 -m sglang.launch_server ...")
    table["image"] = rest[i]
    inside = rest[i + 1:]
    python = inside[0] if inside and inside[0] != "-m" else None
    if python and "python" in python.rsplit("/", 1)[-1] and python != "python3":
        table["python"] = python
    if gpus == "amd":
        table["gpus"] = "amd"
    elif gpus is None:
        notes.append(f"the {runtime} command passed no GPUs; the wizard passes them "
                     '([container] gpus = "auto"; "none" for none)')
    if ipc_host and "shm_size" in table:  # --ipc=host is the default of the table
        notes.append(f"dropped --shm-size {table.pop('shm_size')}: {runtime} ignores it with "
                     "--ipc=host")
    if mounts:
        table["mounts"] = mounts
    if extra:
        table["runtime_args"] = extra
    if "hf_cache" not in table:
        table["hf_cache"] = ""
    return ImportedContainer(table, env, notes)
