"""The launch flow, once, for the CLI (`launch`, `preflight`) and the launch screen.

profile -> `LaunchPlan` (argv/env rendered for the host's SGLang, secrets split off) -> preflight
on the host with the local check beside SGLang's own dry run -> start (run directory, record of
how the host was reached) -> watch until ready (probing with the API key) or crashed.
Every step reports readable lines through a `say` callback; the caller decides where they go.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wizard.remote.connection import HostKeyPolicy, RemoteError, SshSettings
from wizard.remote.preflight import PreflightReport, PreflightRequest, compare_effective
from wizard.remote.records import (
    RunRecord,
    RunRecords,
    api_key_of,
    is_secret_name,
    mask_argv,
    mask_text,
    profile_hash,
    secret_values,
)
from wizard.remote.runs import LaunchRequest, RunStatus
from wizard.remote.session import RemoteHost
from wizard.remote.watch import ChunkCallback, TickCallback, WatchResult, watch_run

Say = Callable[[str], None]


@dataclass
class Reach:
    """How a host is reached: what `logs`/`stop`/`runs` reuse and the hints print."""

    host: str
    jumps: list[str] | None = None
    ssh_config: str | None = None
    known_hosts: list[str] = field(default_factory=list)
    identity: list[str] = field(default_factory=list)
    runs_root: str | None = None
    use_agent: bool = True

    def settings(self) -> SshSettings:
        """`SshSettings` for this way in (unset parts: as OpenSSH would, from the config)."""
        settings = SshSettings()
        if self.ssh_config:
            settings.config_paths = [Path(self.ssh_config)]
        if self.known_hosts:
            settings.known_hosts = Path(self.known_hosts[0])
        if self.identity:
            settings.client_keys = [Path(k).expanduser() for k in self.identity]
        settings.use_agent = self.use_agent
        return settings

    def options(self, with_host: bool = True) -> list[str]:
        """The command-line options that reach the host this way again."""
        words: list[str] = ["--host", self.host] if with_host else []
        for jump in self.jumps or []:
            words += ["--jump", jump]
        if self.ssh_config:
            words += ["--ssh-config", self.ssh_config]
        for known in self.known_hosts:
            words += ["--known-hosts", known]
        for key in self.identity:
            words += ["-i", key]
        if not self.use_agent:
            words.append("--no-agent")
        if self.runs_root:
            words += ["--remote-runs-dir", self.runs_root]
        return words

    def command(self, *words: str, with_host: bool = True) -> str:
        """A complete `sglang-wizard ...` command line for this host."""
        return shlex.join(["sglang-wizard", *words, *self.options(with_host)])

    @classmethod
    def from_record(cls, record: RunRecord) -> Reach:
        """How the run of this record was reached."""
        return cls(
            record.target,
            list(record.jumps) or None,
            record.ssh_config,
            list(record.known_hosts),
            list(record.identity),
            record.runs_root,
        )


def reach_for_profile(profile: Any, typed_host: str | None = None) -> Reach:
    """The profile's `[ssh]` way in (a typed host wins; user/port added when not in it)."""
    host = (typed_host or "").strip() or (profile.ssh.host or "")
    if host and profile.ssh.user and "@" not in host:
        host = f"{profile.ssh.user}@{host}"
    if host and profile.ssh.port and ":" not in host.rsplit("]", 1)[-1]:
        host = f"{host}:{profile.ssh.port}"
    identity = (
        [str(Path(profile.ssh.identity_file).expanduser())] if profile.ssh.identity_file else []
    )
    return Reach(host, list(profile.ssh.jump) or None, identity=identity)


def masked_profile_toml(profile: Any) -> str:
    """The profile as TOML with secret env values and secret flag values replaced by `***`
    (what the run directory keeps; the hash of this text ties runs of one set-up together)."""
    from wizard.profile import profile_to_toml

    def masked_env(env: dict[str, str]) -> dict[str, str]:
        return {k: ("***" if is_secret_name(k) else v) for k, v in env.items()}

    update: dict[str, Any] = {
        "env": masked_env(profile.env),
        "extra_args": mask_argv(profile.extra_args),
    }
    if profile.nodes.hosts:  # every node's own env (a token per node) is masked as well
        hosts = [h.model_copy(update={"env": masked_env(h.env)}) for h in profile.nodes.hosts]
        update["nodes"] = profile.nodes.model_copy(update={"hosts": hosts})
    return str(profile_to_toml(profile.model_copy(update=update)))


@dataclass
class LaunchPlan:
    """A profile made ready to launch: the argv and env for one SGLang version."""

    profile: Any
    argv: list[str]
    env: dict[str, str]
    python: str
    port: int
    workdir: str | None
    model_path: str
    draft_path: str | None
    masked_toml: str
    digest: str
    memory_plan: Any = None  # wizard.memory.MemoryPlan made at preflight, when the GPU is known
    fixes_by_rule: dict[str, list[str]] = field(default_factory=dict)  # the check's, at preflight
    pull_result: dict[str, Any] | None = None  # the container image's pull, made for this launch

    @classmethod
    def from_profile(cls, profile: Any, version: str | None = None) -> LaunchPlan:
        """Render the profile (for `version` when given; RenderError when it cannot be)."""
        from wizard.sglang.render import launch_argv, render_env

        if version:
            profile = profile.model_copy(update={"sglang_version": version})
        masked = masked_profile_toml(profile)
        if profile.container is not None:  # RenderError now, not at launch, for a bad [container]
            from wizard.remote.container import launch_spec

            launch_spec(profile, render_env(profile))
        return cls(
            profile=profile,
            argv=launch_argv(profile),  # --api-key's reference read from this environment
            env=render_env(profile),
            python=profile.container.python if profile.container else profile.ssh.python,
            port=server_port(profile),
            workdir=profile.ssh.workdir,
            model_path=profile.model.path,
            draft_path=profile.speculative.draft_model_path,
            masked_toml=masked,
            digest=profile_hash(masked),
        )

    @property
    def api_key(self) -> str | None:
        """The server's `--api-key` (readiness sends it), if the profile sets one."""
        return api_key_of(self.argv)

    @property
    def in_container(self) -> bool:
        """The server runs from the profile's container image (`[container]`)."""
        return self.profile.container is not None


def server_port(profile: Any) -> int:
    """The port the server listens on: the profile's, else SGLang's default."""
    from wizard.exports import DEFAULT_SERVER_PORT

    return int(profile.server.port or DEFAULT_SERVER_PORT)


def is_host_path(text: str | None) -> bool:
    """A path on the host (not a Hub repo id)."""
    return bool(text) and str(text).startswith(("/", "~", "."))


async def connect(
    reach: Reach,
    settings: SshSettings | None = None,
    trusted: Sequence[str] = (),
    agent_python: str = "python3",
) -> RemoteHost:
    """Connect as `reach` says (`settings` given: used instead of the reach's own)."""
    return await RemoteHost.connect(
        reach.host,
        jumps=reach.jumps,
        settings=settings or reach.settings(),
        policy=HostKeyPolicy(trusted_fingerprints=set(trusted)),
        agent_python=agent_python,
        runs_root=reach.runs_root,
    )


async def for_host_version(host: RemoteHost, plan: LaunchPlan, say: Say) -> LaunchPlan:
    """The plan rendered for the SGLang version installed on the host (flags were renamed
    between versions), so the dry run and the launch use the spelling that host knows."""
    if plan.in_container:
        from wizard.remote.container import ImageUnavailableError, image_versions_pulled

        try:
            versions, pulled = await image_versions_pulled(host, plan.profile, plan.env, say)
        except RemoteError as exc:  # no runtime, no image: the preflight says which
            if isinstance(exc, ImageUnavailableError):
                plan.pull_result = exc.pull_result  # the preflight does not pull again
            say("  note: the SGLang version inside the image is not known (see the preflight)")
            return plan
        plan.pull_result = pulled
    else:
        versions = await host.versions(plan.python, plan.env)
    host_version = versions.get("sglang")
    if not host_version or host_version == plan.profile.sglang_version:
        return plan
    pull_result = plan.pull_result
    try:
        rendered = LaunchPlan.from_profile(plan.profile, str(host_version))
        rendered.pull_result = pull_result
    except Exception as exc:  # a version the renderer does not know: keep the profile's flags
        say(f"  note: the host has SGLang {host_version}; keeping the profile's flags ({exc})")
        return plan
    if plan.in_container:
        where, whose = f"the image {plan.profile.container.image}", "the image's"
    else:
        where, whose = "the host", "the host's"
    say(
        f"  note: {where} has SGLang {host_version} (profile: {plan.profile.sglang_version}); "
        f"flags rendered for {whose} version"
    )
    return rendered


@dataclass
class LocalCheck:
    """What the local check says for the host's SGLang version and GPUs."""

    effective: dict[str, Any]
    errors: list[str]
    fixes_by_rule: dict[str, list[str]]
    memory_plan: Any = None


def local_check(
    plan: LaunchPlan, report: PreflightReport, facts: Any = None, draft: Any = None
) -> LocalCheck:
    """Errors, effective values and fixes of the local check with the host's version, GPUs and
    model facts; its memory plan when the host's GPU kind is known."""
    from wizard.api import check_profile

    version = report.sglang_version
    profile = plan.profile
    if version:
        profile = profile.model_copy(update={"sglang_version": version})
    gpus = report.gpus
    host_gpu = gpus.kind()
    try:
        checked = check_profile(
            profile,
            gpu=host_gpu.spec if host_gpu else None,
            gpus=gpus.count if host_gpu else None,
            paths_local=False,
            facts=facts,
            draft_facts=draft,
            # the plan starts from the memory really free on the host (left-over workers shrink it)
            gpu_free_gib=gpus.free_gib(profile.parallel.tp * profile.parallel.pp)
            if host_gpu
            else None,
        )
    except Exception as exc:
        # e.g. a version without a rule set: say so; the host's dry run decides
        return LocalCheck({}, [f"the local check cannot run for SGLang {version}: {exc}"], {})
    errors = [f"{f.rule}: {f.message}" for f in checked.errors]
    fixes = {f.rule: [fix.label for fix in f.fixes] for f in checked.findings}
    memory = checked.memory_plan if host_gpu is not None else None
    return LocalCheck(dict(checked.effective), errors, fixes, memory)


def host_gpu_edits(profile: Any, report: PreflightReport) -> dict[str, Any]:
    """The `[gpu]` edits that make the profile say what the host has (kind as the catalog name,
    or a custom kind from the capability / gfx arch and memory the tool printed, and the count);
    empty when the profile already says so or the host's GPUs could not be read."""
    kind = report.gpus.kind()
    if kind is None:
        return {}
    edits: dict[str, Any] = {}
    if profile.gpu.kind != kind.spec:
        edits["gpu.kind"] = kind.spec
    if profile.gpu.count != report.gpus.count:
        edits["gpu.count"] = report.gpus.count
    return edits


def gpu_edits_lines(profile: Any, edits: dict[str, Any]) -> list[str]:
    """What preflight says about `host_gpu_edits`: the profile's values and the host's, and
    the TOML that fills them in."""
    if not edits:
        return []
    if profile.gpu.kind is None and profile.gpu.count is None:
        now = "names no GPUs"
    else:
        now = f"says {profile.gpu.count or '?'} x {profile.gpu.kind or 'no kind'}"
    toml = ", ".join(
        f'{key.split(".")[1]} = {value!r}'.replace("'", '"') for key, value in edits.items()
    )
    return [
        f"  [gpu] the profile {now}; the host has "
        f"{edits.get('gpu.count', profile.gpu.count)} x {edits.get('gpu.kind', profile.gpu.kind)}: "
        f"in [gpu] set {toml} (preflight --fill-gpu writes it to the profile)"
    ]


async def host_facts(host: RemoteHost, plan: LaunchPlan) -> tuple[Any, Any]:
    """`ModelFacts` of the model and draft folders as the host has them, or (None, None) when
    they cannot be read: the check then makes its assumptions and there is no memory plan."""
    from wizard.model_files import MODEL_FILES
    from wizard.model_info import facts_from_files

    async def read(path: str) -> Any:
        files = await host.model_files(path, MODEL_FILES)
        return facts_from_files(files, f"{host.host_key}:{path}", "host")

    if not is_host_path(plan.model_path):
        return None, None
    try:
        facts = await read(plan.model_path)
        draft_path = plan.draft_path
        draft = await read(draft_path) if draft_path and is_host_path(draft_path) else None
    except Exception:  # the facts are advice: a model they cannot read must not stop a launch
        return None, None
    return facts, draft


def preflight_request(plan: LaunchPlan, dry_run: bool = True) -> PreflightRequest:
    """What preflight checks for this plan."""
    return PreflightRequest(
        python=plan.python,
        env=plan.env,
        port=plan.port,
        model_path=plan.model_path if is_host_path(plan.model_path) else None,
        draft_model_path=plan.draft_path if is_host_path(plan.draft_path) else None,
        argv=plan.argv if dry_run else None,
        container=plan.profile if plan.in_container else None,
        pull_result=plan.pull_result,
    )


def preflight_lines(report: PreflightReport) -> list[str]:
    """The preflight table as text lines."""
    width = max(len(c.name) for c in report.checks)
    lines = []
    for item in report.checks:
        mark = "ok  " if item.ok else ("FAIL" if item.blocking else "warn")
        lines.append(f"  [{mark}] {item.name:<{width}}  {item.detail}")
    return lines


async def preflight(
    host: RemoteHost, plan: LaunchPlan, say: Say, dry_run: bool = True
) -> tuple[PreflightReport, bool]:
    """Preflight on the host plus the local check; says the table, the memory plan, errors,
    fixes and where the host's SGLang and the local check disagree. True: nothing blocks."""
    secrets = secret_values(plan.env, plan.argv)
    if secrets:  # a dry run's error text may echo the arguments (SGLang's server_args repr)
        unmasked = say

        def say(line: str) -> None:
            unmasked(mask_text(line, secrets))

    from wizard.remote.container import run_preflight

    request = preflight_request(plan, dry_run)
    request.on_progress = say  # e.g. a container image being pulled
    report = await run_preflight(host, request)
    say(f"preflight on {host.label}:")
    for line in preflight_lines(report):
        say(line)
    for line in gpu_edits_lines(plan.profile, host_gpu_edits(plan.profile, report)):
        say(line)
    local = local_check(plan, report, *await host_facts(host, plan))
    plan.memory_plan = local.memory_plan
    plan.fixes_by_rule = local.fixes_by_rule
    if plan.memory_plan is not None:
        say(f"  [plan] memory per GPU: {plan.memory_plan.summary()}")
    ok = report.ok
    for error in local.errors:
        say(f"  [check] {error}")
    if local.errors and report.dry_run_effective is None:
        ok = False  # without the host's own verdict, the local check's errors stop the launch
        say("  the local check finds errors and the host's SGLang did not accept the arguments")
    if report.dry_run_crash is not None and report.dry_run_crash.rule_id:
        for fix in local.fixes_by_rule.get(report.dry_run_crash.rule_id, []):
            say(f"  fix: {fix}")
    if report.dry_run_effective is not None and local.effective:
        disagreements = compare_effective(local.effective, report.dry_run_effective)
        for d in disagreements:
            say(
                f"  [diff] {d.key}: local check says {d.local!r}, the host's SGLang uses {d.remote!r}"
            )
        if not disagreements:
            say("  the host's SGLang and the local check agree on the effective values")
    if not ok:
        say("launch blocked: " + "; ".join(c.name for c in report.blocking))
    return report, ok


@dataclass
class Started:
    """A launched run: its status on the host, its local record and the record store."""

    status: RunStatus
    record: RunRecord
    records: RunRecords


async def start(
    host: RemoteHost,
    plan: LaunchPlan,
    report: PreflightReport,
    reach: Reach,
    records: RunRecords | None = None,
) -> Started:
    """Create the run directory and start the server detached; record how the host was
    reached (so `logs`/`stop`/`runs` and the hints reach it the same way)."""
    box = None
    if plan.in_container:
        from wizard.remote.container import launch_spec

        box = launch_spec(plan.profile, plan.env)
    status = await host.launch(
        LaunchRequest(
            argv=plan.argv,
            env=plan.env,
            python=plan.python,
            profile_toml=plan.masked_toml,
            port=plan.port,
            workdir=plan.workdir,
            profile_hash=plan.digest,
            container=box,
        )
    )
    records = records or RunRecords()
    record = RunRecord(
        run_id=status.run_id,
        host=host.host_key,
        profile_hash=plan.digest,
        started_at=time.time(),
        target=reach.host,
        jumps=list(reach.jumps or []),
        runs_root=reach.runs_root,
        port=plan.port,
        python=plan.python,
        argv=plan.argv,
        env=plan.env,  # masked by save()
        sglang_version=report.sglang_version,
        ssh_config=reach.ssh_config,
        known_hosts=list(reach.known_hosts),
        identity=list(reach.identity),
        container=(
            f"{plan.profile.container.runtime} {plan.profile.container.image}"
            if plan.in_container
            else None
        ),
    )
    records.save(record)
    return Started(status, record, records)


async def watch(
    host: RemoteHost,
    plan: LaunchPlan,
    started: Started,
    report: PreflightReport,
    on_chunk: ChunkCallback | None = None,
    on_tick: TickCallback | None = None,
) -> WatchResult:
    """Follow the start-up until ready (probed with the API key) or the end; save the outcome."""
    result = await watch_run(
        host,
        started.status.run_id,
        port=plan.port,
        sglang_version=report.sglang_version,
        history=started.records.stage_history(host.host_key, plan.digest),
        on_chunk=on_chunk,
        on_tick=on_tick,
        api_key=plan.api_key,
    )
    started.records.save_outcome(started.record, result)
    if result.crash is not None:
        result = replace(result, crash=with_rule_fixes(result.crash, plan.fixes_by_rule))
    return result


async def stop(
    host: RemoteHost, run_id: str, timeout_s: float = 30.0, records: RunRecords | None = None
) -> Any:
    """Stop a run (TERM its process group, KILL after `timeout_s`, confirm nothing is left) and
    mark its local record `stopped` (read again: a watching launch may have saved since)."""
    result = await host.stop(run_id, timeout_s=timeout_s)
    records = records or RunRecords()
    record = records.get(run_id)
    if record is not None and result.was_running:
        record.outcome = "stopped"
        records.save(record)
    return result


def with_rule_fixes(crash: Any, fixes_by_rule: dict[str, list[str]]) -> Any:
    """The crash report with its rule's own fixes (from the check of the launched profile) in
    place of the generic "check the profile" hint, when the check has fixes for that rule."""
    explanation = crash.explanation
    fixes = fixes_by_rule.get(explanation.rule_id or "")
    if not fixes:
        return crash
    return replace(crash, explanation=replace(explanation, fixes=tuple(fixes)))


def outcome_lines(
    result: WatchResult, run_id: str, reach: Reach | None, memory_plan: Any = None
) -> list[str]:
    """What to say about how watching ended (ready, refused, exited, crashed, killed)."""
    lines: list[str] = []
    stop_hint = (
        reach.command("stop", run_id) if reach is not None else f"sglang-wizard stop {run_id}"
    )
    if result.outcome in ("ready", "refused"):
        ready = result.ready
        if result.outcome == "refused" and ready is not None:
            lines.append(f"not ready: {ready.problem}")
            if "API key" in str(ready.problem):
                lines.append(
                    "  the probe sent the profile's --api-key; check it matches the server's"
                )
            return lines
        lines.append(f"ready after {result.startup_s:.0f}s")
        if ready is not None:
            lines += ready.summary_lines()
        return lines
    status = result.status
    if status is not None and status.stopped and result.outcome in ("exited", "stopped"):
        was_ready = "was ready, then " if result.startup_s is not None else ""
        lines.append(
            f"the server {was_ready}was stopped by the user (sglang-wizard stop; exit code "
            f"{status.exit_code})"
        )
        return lines
    if result.outcome == "exited":
        code = status.exit_code if status else None
        was_ready = "was ready, then " if result.startup_s is not None else ""
        lines.append(f"the server {was_ready}exited (exit code {code})")
        return lines
    lines.append(f"the server {result.outcome} (exit code {status.exit_code if status else '?'})")
    if result.crash is not None:
        lines.extend(f"  {line}" for line in result.crash.killed_lines(run_id, stop_hint))
        where = f" (log line {result.crash.traceback_line})" if result.crash.traceback_line else ""
        lines.append(f"what the log says{where}:")
        lines.extend(f"  {line}" for line in result.crash.explanation.summary().splitlines())
        if result.crash.explanation.oom is not None and memory_plan is not None:
            lines.append(f"  the memory plan for this profile said: {memory_plan.summary()}")
            lines.extend(f"    - {suggestion}" for suggestion in memory_plan.suggestions[:3])
    return lines


def exit_code_of(result: WatchResult) -> int:
    """0 ready (or ready then exited cleanly, or stopped by the user), else 1."""
    if result.outcome == "ready":
        return 0
    if result.outcome == "stopped" or (result.status is not None and result.status.stopped):
        return 0
    if result.outcome == "exited":
        status = result.status
        return 0 if status is not None and (status.exit_code == 0 or status.stopped) else 1
    return 1


def with_reach_defaults(reach: Reach, **changes: Any) -> Reach:
    """A copy with some fields replaced (None values leave the field as it is)."""
    return replace(reach, **{k: v for k, v in changes.items() if v is not None})
