"""Containers on a GPU host over SSH: how the server is checked, started, logged and stopped when
the profile has a `[container]` table (docker or podman).

The launch flow (`wizard.remote.flow`) calls in here at three seams: the SGLang version (read by
running Python inside the image), preflight (the runtime and image on the host, then the agent's
own preflight run inside the image: its python, SGLang, GPUs as a container sees them, the model
path where the container sees it, SGLang's dry run) and the launch request (`launch_spec`: the
runtime's words for the agent's container start script). Following and stopping a run need no
seam: the agent streams the container's log into the run's log file and stops a container run
with the runtime (see `agent.py`).
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

import asyncssh

from wizard.container import mounts, run_words, shell_word
from wizard.remote.connection import RemoteError
from wizard.remote.preflight import (
    PreflightCheck,
    PreflightReport,
    PreflightRequest,
    build_preflight_report,
    preflight_payload,
)
from wizard.remote.records import split_secret_env
from wizard.remote.session import RemoteHost, agent_source

#: Where the secrets FIFO is mounted inside the container (read once by the boot code).
SECRETS_PATH = "/run/sglang-wizard/secrets"
UNBUFFERED = {"PYTHONUNBUFFERED": "1"}


class ImageUnavailableError(RemoteError):
    """The image is not on the host and pulling it failed (`pull_result`: `{"rc", "out"}`)."""

    def __init__(self, message: str, pull_result: dict[str, Any]) -> None:
        super().__init__(message)
        self.pull_result = pull_result


def _runtime(profile: Any) -> list[str]:
    return [profile.container.runtime]


def launch_spec(profile: Any, env: Mapping[str, str], multinode: bool = False) -> dict[str, Any]:
    """What the agent needs to start a run's container: the runtime, the `run` arguments
    (detached, plain variables by name; secrets go through the FIFO instead), the image and the
    python inside it. The agent names the container after the run (`container_name`)."""
    plain, _ = split_secret_env(dict(env))
    names = list({**plain, **UNBUFFERED})
    words = run_words(profile, names, detach=True, port=profile.server.port, multinode=multinode)
    return {
        "runtime": _runtime(profile),
        "run_args": words[2:-1],
        "image": words[-1],
        "python": profile.container.python,
        "secrets_path": SECRETS_PATH,
    }


def _in_image_command(profile: Any, *agent_args: str) -> str:
    """`RUNTIME run --rm -i ... IMAGE PYTHON -S -c AGENT ARGS` as shell text for the host."""
    # --pull=never: a missing image is the preflight's "image" row (which pulls it), not a pull here
    words = run_words(profile, [], detach=False, network=False,
                      extra=["--rm", "-i", "--pull=never"])
    inner = [profile.container.python, "-S", "-c", agent_source(), *agent_args]
    return " ".join(shell_word(w) for w in words) + " " + shlex.join(inner)


async def _in_image(host: RemoteHost, profile: Any, payload: Mapping[str, Any], *args: str,
                    timeout_s: float = 600) -> dict[str, Any]:
    """Run the agent inside the image (payload on stdin); its JSON answer."""
    result = await host.run(_in_image_command(profile, *args), input=json.dumps(payload),
                            timeout_s=timeout_s)
    try:
        return dict(json.loads(result.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        detail = (result.stderr or result.stdout).strip()[-1500:]
        raise RemoteError(
            f"{host.label}: {explain_in_image(profile.container, result.exit_status, detail)}"
        ) from None


def explain_in_image(box: Any, exit_status: int, detail: str) -> str:
    """Why the image did not run the helper, with what to do (GPU passthrough, no python, ...)."""
    lower = detail.lower()
    head = f"cannot run {box.python} inside {box.image} (exit {exit_status}): {detail}"
    if any(word in lower for word in ("could not select device driver", "nvidia.com/gpu",
                                      "cdi device", "unresolvable cdi", "libnvidia-container",
                                      "nvidia-container-cli")):
        fix = ("install the NVIDIA Container Toolkit: for docker `nvidia-ctk runtime configure "
               "--runtime=docker` and restart docker; for podman `nvidia-ctk cdi generate "
               "--output=/etc/cdi/nvidia.yaml`")
        return f"{head}. The GPUs cannot be passed into the container: {fix}"
    if "/dev/kfd" in lower or "/dev/dri" in lower:
        return f"{head}. The ROCm devices are missing on the host (amdgpu driver not loaded?)"
    if exit_status in (126, 127) or "executable file not found" in lower or "no such file" in lower:
        return (f"{head}. The image has no {box.python}: set [container] python to the image's "
                "interpreter (e.g. /opt/venv/bin/python or python3)")
    return head


async def image_versions(host: RemoteHost, profile: Any, env: Mapping[str, str]) -> dict[str, Any]:
    """Python and SGLang versions inside the image (what selects the rule set)."""
    payload = {"python": profile.container.python, "env": dict(env)}
    return await _in_image(host, profile, payload, "versions", timeout_s=300)


async def image_versions_pulled(
    host: RemoteHost, profile: Any, env: Mapping[str, str], say: Callable[[str], None]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The image's versions, pulling the image first when the host does not have it (its
    progress said); (versions, the pull's result or None). RemoteError when the runtime does not
    work or the image cannot be had, with the reason."""
    hosted = await host_check(host, profile, None, pull=False)
    info = hosted.get("info") or {}
    if info.get("rc") != 0:
        raise RemoteError(explain_runtime(profile.container.runtime, info))
    pull = None
    if not (hosted.get("image") or {}).get("present"):
        pull = await pull_image(host, profile, say)
        if pull["rc"] != 0:
            raise ImageUnavailableError(explain_pull(profile.container.image, pull), pull)
    return await image_versions(host, profile, env), pull


async def host_check(host: RemoteHost, profile: Any, port: int | None, pull: bool = True) -> dict[str, Any]:
    """The host's side: runtime usable, image present (pulled when missing and `pull`), every
    mount source there (the HF cache folder created), port, disk."""
    payload = {"runtime": _runtime(profile), "image": profile.container.image, "pull": pull,
               "port": port, "mounts": [source for source, _, _ in mounts(profile)],
               "create": [profile.container.hf_cache] if profile.container.hf_cache else []}
    result = await host.run(host._agent_command("container-check"), input=json.dumps(payload),
                            timeout_s=3900)
    try:
        return dict(json.loads(result.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        raise RemoteError(
            f"{host.label}: the container check failed: {(result.stderr or result.stdout)[-800:]}"
        ) from None


async def pull_image(
    host: RemoteHost, profile: Any, on_line: Callable[[str], None] | None = None,
    timeout_s: float = 3600,
) -> dict[str, Any]:
    """`RUNTIME pull IMAGE` on the host, its output passed to `on_line` as it comes (the layers'
    progress); `{"rc", "out"}` (the output's end) like the agent's captures."""
    box = profile.container
    command = shlex.join([box.runtime, "pull", box.image]) + " 2>&1"
    if on_line is not None:
        on_line(f"  pulling {box.image} on the host (not there yet)")
    await host.ensure_connected()
    tail: list[str] = []
    last = ""

    async def stream() -> int:
        nonlocal last
        process = await host.connection.create_process(command, encoding="utf-8",
                                                        errors="replace")
        try:
            buffer = ""
            while True:
                data = await process.stdout.read(65536)
                if not data:
                    break
                buffer += data
                *lines, buffer = re.split(r"[\r\n]", buffer)
                for line in (raw.strip() for raw in lines):
                    if line and line != last:
                        last = line
                        tail.append(line)
                        del tail[:-40]
                        if on_line is not None:
                            on_line(f"    {line}")
            await process.wait_closed()
            return process.exit_status if process.exit_status is not None else -1
        finally:
            process.close()

    try:
        rc = await asyncio.wait_for(stream(), timeout_s)
    except TimeoutError:
        return {"rc": 124, "out": "\n".join(tail) + f"\ntimed out after {timeout_s:.0f}s"}
    except (asyncssh.Error, OSError) as exc:
        return {"rc": 255, "out": "\n".join(tail) + f"\nconnection lost: {exc}"}
    return {"rc": rc, "out": "\n".join(tail)}


def explain_runtime(runtime: str, info: Mapping[str, Any]) -> str:
    """Why `RUNTIME info` failed, in words with what to do."""
    out = str(info.get("out") or "").strip()
    if info.get("rc") == 127:
        return f"{runtime} is not installed on the host (or not on the PATH of an SSH session)"
    if "permission denied" in out.lower() and "sock" in out.lower():
        return (f"{runtime} is installed but this user may not use its socket ({out[-200:]}); "
                f"add the user to the {runtime} group (sudo usermod -aG {runtime} $USER, then "
                "log in again) or use rootless podman")
    if "cannot connect" in out.lower() or "is the docker daemon running" in out.lower():
        return f"{runtime} cannot reach its daemon: {out[-300:]} (start it: sudo systemctl start {runtime})"
    return f"`{runtime} info` failed (exit {info.get('rc')}): {out[-400:]}"


def explain_pull(image: str, pull: Mapping[str, Any]) -> str:
    """Why pulling the image failed, with what to do."""
    out = str(pull.get("out") or "").strip()
    lower = out.lower()
    if any(word in lower for word in ("manifest unknown", "not found", "does not exist")):
        why = "the registry has no such image or tag: check the name and tag"
    elif any(word in lower for word in ("unauthorized", "authentication required", "denied")):
        why = "the registry refused the pull: log in first (docker login / podman login)"
    elif any(word in lower for word in ("no such host", "dial tcp", "timeout", "network is unreachable",
                                         "connection refused", "i/o timeout")):
        why = ("the host cannot reach the registry: load the image another way (docker save | ssh "
               "HOST docker load) or use a registry mirror")
    elif "no space left" in lower:
        why = "the host's disk is full"
    else:
        why = "the pull failed"
    last = out.splitlines()[-1] if out else f"exit {pull.get('rc')}"
    return f"{image} is not on the host and pulling it failed: {why} ({last[-300:]})"


async def run_preflight(host: RemoteHost, request: PreflightRequest) -> PreflightReport:
    """The preflight of a request: inside the image when it has a container, else on the host."""
    if request.container is not None:
        return await preflight(host, request.container, request)
    return await host.preflight(request)


async def preflight(host: RemoteHost, profile: Any, request: PreflightRequest) -> PreflightReport:
    """Preflight of a container launch: runtime and image on the host, then the agent's preflight
    inside the image (versions, GPUs, model path as the container sees it, the dry run)."""
    box = profile.container
    runtime = box.runtime
    hosted = await host_check(host, profile, request.port, pull=False)
    image = hosted.get("image") or {}
    if (hosted.get("info") or {}).get("rc") == 0 and not image.get("present"):
        pull = request.pull_result or await pull_image(host, profile, request.on_progress)
        image.update(pull=pull, pulled=pull["rc"] == 0, present=pull["rc"] == 0)
    elif request.pull_result is not None and request.pull_result.get("rc") == 0:
        image["pulled"] = True
    checks: list[PreflightCheck] = []
    info = hosted.get("info") or {}
    usable = info.get("rc") == 0
    checks.append(PreflightCheck(
        "runtime", usable,
        f"{runtime} works (`{runtime} info`)" if usable else explain_runtime(runtime, info)))
    present = bool(image.get("present"))
    if usable:
        if present:
            detail = f"{box.image} is on the host" + (" (pulled now)" if image.get("pulled") else "")
        elif image.get("pull"):
            detail = explain_pull(box.image, image["pull"])
        else:
            detail = f"{box.image} is not on the host: {runtime} pull {box.image}"
        checks.append(PreflightCheck("image", present, detail))
    missing = [m["source"] for m in hosted.get("mounts") or [] if not m.get("exists")]
    sources = hosted.get("mounts") or []
    created = [m["source"] for m in sources if m.get("created")]
    checks.append(PreflightCheck(
        "mounts", not missing,
        f"not on the host: {', '.join(missing)} ({runtime} refuses to start a container with a "
        "missing mount source; fix [model] path or [container] mounts)" if missing
        else f"{len(sources)} host path(s) to mount exist" + (
            f" (created {', '.join(created)})" if created else "")))
    raw: dict[str, Any] = {"versions": {"python": None, "sglang": None,
                                        "error": f"not run: the {runtime} image cannot run"}}
    if usable and present and not missing:
        payload = preflight_payload(request, box.python, None)
        try:
            raw = await _in_image(host, profile, payload, "preflight",
                                  timeout_s=request.dry_run_timeout_s + 240)
        except RemoteError as exc:
            raw = {"versions": {"python": None, "sglang": None, "error": str(exc)}}
    raw["port"] = hosted.get("port") or {}
    raw["disk"] = hosted.get("disk") or {}
    inside = PreflightRequest(**{**request.__dict__, "python": f"{box.python} in {box.image}"})
    report = build_preflight_report(raw, inside)
    if not (usable and present and not missing):  # the image did not run: one row says so
        report.checks = [c for c in report.checks if c.name not in ("python", "sglang", "gpus")]
        checks.append(PreflightCheck(
            "in the image", False,
            "python, SGLang, GPUs, model path and the dry run are checked inside the image once "
            "the rows above pass"))
    report.checks[:0] = checks
    return report
