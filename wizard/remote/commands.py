"""The remote subcommands' implementation (argparse wiring is in `wizard.remote.cli`).

Exit codes: 0 ok (launch: the server is ready, or launched with --no-follow), 1 the remote action
failed (preflight blocks, crash, unknown host key, connection failure), 2 the tool's input.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from wizard.cli import ToolInputError
from wizard.logstages import STAGE_LABELS, StageEvent
from wizard.remote.connection import (
    HostKeyPolicy,
    HostSpecError,
    RemoteError,
    SshSettings,
)
from wizard.remote.records import RunRecord, RunRecords, mask_env, profile_hash
from wizard.remote.session import (
    LaunchRequest,
    LogChunk,
    PreflightReport,
    PreflightRequest,
    RemoteHost,
    compare_effective,
)
from wizard.remote.watch import RunWatcher, WatchResult, watch_run

# ---------------------------------------------------------------------------------- plumbing


@dataclass
class _Target:
    host: str
    jumps: list[str] | None
    python: str
    identity: list[Path]
    runs_root: str | None


def _settings(args: argparse.Namespace, identity: Sequence[Path] = ()) -> SshSettings:
    settings = SshSettings()
    if args.ssh_config is not None:
        settings.config_paths = [args.ssh_config]
    if args.known_hosts is not None:
        settings.known_hosts = args.known_hosts
    keys = list(args.identity or []) + list(identity)
    if keys:
        settings.client_keys = [Path(k).expanduser() for k in keys]
    settings.use_agent = not args.no_agent
    return settings


async def _connect(args: argparse.Namespace, target: _Target) -> RemoteHost:
    try:
        return await RemoteHost.connect(
            target.host,
            jumps=target.jumps,
            settings=_settings(args, target.identity),
            policy=HostKeyPolicy(trusted_fingerprints=set(args.trust_host_key)),
            agent_python=args.agent_python or "python3",
            runs_root=target.runs_root,
        )
    except HostSpecError as exc:
        raise ToolInputError(str(exc)) from None


def _run(coro: Any) -> int:
    try:
        return int(asyncio.run(coro))
    except RemoteError as exc:  # UnknownHostKeyError included: its message says how to trust
        print(f"sglang-wizard: {exc}", file=sys.stderr)
        return 1


@dataclass
class _Launchable:
    profile: Any
    text: str
    argv: list[str]
    env: dict[str, str]
    target: _Target
    port: int | None
    workdir: str | None
    model_path: str
    draft_path: str | None
    plan: Any = None  # the memory plan made at preflight (wizard.memory.MemoryPlan)


def _load(args: argparse.Namespace, version: str | None = None) -> _Launchable:
    from wizard.profile import ProfileError, load_profile
    from wizard.sglang.render import render_argv, render_env

    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        raise ToolInputError(str(exc)) from None
    if version:
        profile = profile.model_copy(update={"sglang_version": version})
    host = args.host or profile.ssh.host
    if not host:
        raise ToolInputError(
            f"{args.profile}: no host: set [ssh] host in the profile or pass --host"
        )
    if profile.ssh.user and "@" not in host:
        host = f"{profile.ssh.user}@{host}"
    if profile.ssh.port and ":" not in host.rsplit("]", 1)[-1]:
        host = f"{host}:{profile.ssh.port}"
    jumps = args.jump if args.jump is not None else (list(profile.ssh.jump) or None)
    identity = [Path(profile.ssh.identity_file)] if profile.ssh.identity_file else []
    argv = render_argv(profile)
    return _Launchable(
        profile=profile,
        text=args.profile.read_text(),
        argv=argv,
        env=render_env(profile),
        target=_Target(host, jumps, profile.ssh.python, identity, args.remote_runs_dir),
        port=profile.server.port or 30000,
        workdir=profile.ssh.workdir,
        model_path=profile.model.path,
        draft_path=profile.speculative.draft_model_path,
    )


def _print_preflight(report: PreflightReport, out: TextIO) -> None:
    width = max(len(c.name) for c in report.checks)
    for item in report.checks:
        mark = "ok  " if item.ok else ("FAIL" if item.blocking else "warn")
        print(f"  [{mark}] {item.name:<{width}}  {item.detail}", file=out)


@dataclass
class _LocalCheck:
    effective: dict[str, Any]
    errors: list[str]
    fixes_by_rule: dict[str, list[str]]
    plan: Any = None  # the check's memory plan for the host's GPUs (wizard.memory.MemoryPlan)


def _local_check(
    launchable: _Launchable, report: PreflightReport, facts: Any = None, draft: Any = None
) -> _LocalCheck:
    """What the local check says for the host's SGLang version and GPUs (errors, effective
    values, fixes) with the model facts read on the host; its memory plan when the host's GPU
    kind is known (the same plan `check` and the screens show)."""
    from wizard.api import check_profile
    from wizard.gpus import find

    version = report.sglang_version
    profile = launchable.profile
    if version:
        profile = profile.model_copy(update={"sglang_version": version})
    gpus = report.gpus
    host_gpu = find(gpus.gpus[0].name) if gpus.gpus and not gpus.error else None
    try:
        checked = check_profile(
            profile,
            gpu=host_gpu.name if host_gpu else None,
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
        return _LocalCheck({}, [f"the local check cannot run for SGLang {version}: {exc}"], {})
    errors = [f"{f.rule}: {f.message}" for f in checked.errors]
    fixes = {f.rule: [fix.label for fix in f.fixes] for f in checked.findings}
    plan = checked.memory_plan if host_gpu is not None else None
    return _LocalCheck(dict(checked.effective), errors, fixes, plan)


async def _host_facts(host: RemoteHost, launchable: _Launchable) -> tuple[Any, Any]:
    """`ModelFacts` of the model and draft folders as the host has them, or (None, None) when
    they cannot be read (a repo id instead of a folder, a missing config.json...): the check then
    makes its assumptions and there is no memory plan."""
    from wizard.model_info import MODEL_FILES, facts_from_files

    async def read(path: str) -> Any:
        files = await host.model_files(path, MODEL_FILES)
        return facts_from_files(files, f"{host.host_key}:{path}", "host")

    if not _is_path(launchable.model_path):
        return None, None
    draft_path = launchable.draft_path
    try:
        facts = await read(launchable.model_path)
        draft = await read(draft_path) if draft_path and _is_path(draft_path) else None
    except Exception:  # the facts are advice: a model they cannot read must not stop a launch
        return None, None
    return facts, draft


def _is_path(text: str) -> bool:
    return text.startswith(("/", "~", "."))


async def _do_preflight(
    args: argparse.Namespace, host: RemoteHost, launchable: _Launchable, out: TextIO
) -> tuple[PreflightReport, bool]:
    request = PreflightRequest(
        python=launchable.target.python,
        env=launchable.env,
        port=launchable.port,
        model_path=launchable.model_path if _is_path(launchable.model_path) else None,
        draft_model_path=(
            launchable.draft_path
            if launchable.draft_path and _is_path(launchable.draft_path)
            else None
        ),
        argv=None if args.skip_dry_run else launchable.argv,
    )
    report = await host.preflight(request)
    print(f"preflight on {host.label}:", file=out)
    _print_preflight(report, out)
    local = _local_check(launchable, report, *await _host_facts(host, launchable))
    launchable.plan = local.plan
    if launchable.plan is not None:
        print(f"  [plan] memory per GPU: {launchable.plan.summary()}", file=out)
    ok = report.ok
    for error in local.errors:
        print(f"  [check] {error}", file=out)
    if local.errors and report.dry_run_effective is None:
        ok = False  # without the host's own verdict, the local check's errors stop the launch
        print(
            "  the local check finds errors and the host's SGLang did not accept the arguments",
            file=out,
        )
    if report.dry_run_crash is not None and report.dry_run_crash.rule_id:
        for fix in local.fixes_by_rule.get(report.dry_run_crash.rule_id, []):
            print(f"  fix: {fix}", file=out)
    if report.dry_run_effective is not None and local.effective:
        disagreements = compare_effective(local.effective, report.dry_run_effective)
        for d in disagreements:
            print(
                f"  [diff] {d.key}: local check says {d.local!r}, the host's SGLang uses {d.remote!r}",
                file=out,
            )
        if not disagreements:
            print("  the host's SGLang and the local check agree on the effective values", file=out)
    if not ok:
        print("launch blocked: " + "; ".join(c.name for c in report.blocking), file=out)
    return report, ok


def _format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "ETA unknown (first run of this profile here)"
    return f"ETA {int(seconds) // 60}m{int(seconds) % 60:02d}s"


class _Printer:
    """Prints log lines and stage changes (progress only when it moved)."""

    def __init__(self, out: TextIO, show_log: bool) -> None:
        self.out = out
        self.show_log = show_log
        self._last: tuple[Any, ...] | None = None

    def __call__(self, watcher: RunWatcher, chunk: LogChunk, events: list[StageEvent]) -> None:
        if chunk.reconnected:
            print(f"-- connection re-made, log resumed at byte {chunk.offset}", file=self.out)
        if self.show_log:
            for line in chunk.lines:
                print(line, file=self.out)
        for event in events:
            key = (event.stage, event.done, event.total)
            if key == self._last:
                continue
            self._last = key
            progress = f" {event.done}/{event.total}" if event.total else ""
            print(
                f">> {STAGE_LABELS[event.stage]}{progress}  [{event.elapsed_s:.0f}s, {_format_eta(event.eta_s)}]",
                file=self.out,
            )
        self.out.flush()


def _report_watch(result: WatchResult, out: TextIO, plan: Any = None) -> int:
    if result.outcome == "ready":
        print(f"ready after {result.startup_s:.0f}s", file=out)
        if result.ready is not None:
            r = result.ready
            print(f"  /health: {r.health_status}; test prompt -> {r.generated_text!r}", file=out)
            if r.speculative:
                values = ", ".join(
                    f"{k.removeprefix('speculative_')}={v}" for k, v in r.speculative.items()
                )
                print(f"  speculative values the server reports: {values}", file=out)
            if r.avg_spec_accept_length is not None:
                print(f"  average accept length: {r.avg_spec_accept_length:.2f}", file=out)
        return 0
    if result.outcome == "exited":
        code = result.status.exit_code if result.status else None
        stopped = " after a stop" if result.status is not None and result.status.stopped else ""
        print(f"the server was ready, then exited{stopped} (exit code {code})", file=out)
        return 0 if code == 0 or stopped else 1
    print(
        f"the server {result.outcome} (exit code {result.status.exit_code if result.status else '?'})",
        file=out,
    )
    if result.crash is not None:
        where = f" (log line {result.crash.traceback_line})" if result.crash.traceback_line else ""
        print(f"what the log says{where}:", file=out)
        for line in result.crash.explanation.summary().splitlines():
            print(f"  {line}", file=out)
        if result.crash.explanation.oom is not None and plan is not None:
            print(f"  the memory plan for this profile said: {plan.summary()}", file=out)
            for suggestion in plan.suggestions[:3]:
                print(f"    - {suggestion}", file=out)
    return 1


# ---------------------------------------------------------------------------------- commands


async def _for_host_version(
    args: argparse.Namespace, host: RemoteHost, launchable: _Launchable, out: TextIO
) -> _Launchable:
    """Render the profile's flags for the SGLang version installed on the host (flags were
    renamed between versions), so the dry run and the launch use the spelling that host knows."""
    versions = await host.versions(launchable.target.python, launchable.env)
    host_version = versions.get("sglang")
    if not host_version or host_version == launchable.profile.sglang_version:
        return launchable
    try:
        rendered = _load(args, str(host_version))
    except Exception as exc:  # a version the renderer does not know: keep the profile's flags
        print(
            f"  note: the host has SGLang {host_version}; keeping the profile's flags ({exc})",
            file=out,
        )
        return launchable
    print(
        f"  note: the host has SGLang {host_version} (profile: {launchable.profile.sglang_version}); "
        "flags rendered for the host's version",
        file=out,
    )
    return rendered


def preflight(args: argparse.Namespace) -> int:
    launchable = _load(args)

    async def go() -> int:
        async with await _connect(args, launchable.target) as host:
            for_host = await _for_host_version(args, host, launchable, sys.stdout)
            _, ok = await _do_preflight(args, host, for_host, sys.stdout)
            return 0 if ok else 1

    return _run(go())


def launch(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    launchable = _load(args)

    async def go() -> int:
        async with await _connect(args, launchable.target) as host:
            final = await _for_host_version(args, host, launchable, out)
            report, ok = await _do_preflight(args, host, final, out)
            if not ok:
                return 1
            digest = profile_hash(final.text)
            status = await host.launch(
                LaunchRequest(
                    argv=final.argv,
                    env=final.env,
                    python=final.target.python,
                    profile_toml=final.text,
                    port=final.port,
                    workdir=final.workdir,
                    profile_hash=digest,
                )
            )
            records = RunRecords()
            record = RunRecord(
                run_id=status.run_id,
                host=host.host_key,
                profile_hash=digest,
                started_at=time.time(),
                target=final.target.host,
                jumps=list(final.target.jumps or []),
                runs_root=final.target.runs_root,
                port=final.port,
                python=final.target.python,
                argv=final.argv,
                env=mask_env(final.env),
                sglang_version=report.sglang_version,
            )
            records.save(record)
            print(
                f"launched {status.run_id} on {host.label} (process group {status.pgid}); log: {status.run_dir}/log",
                file=out,
            )
            if args.no_follow:
                print(f"follow it with: sglang-wizard logs {status.run_id} --follow", file=out)
                return 0
            detach_hint = (
                f"detached from {status.run_id}: the server keeps running; "
                f"follow it with: sglang-wizard logs {status.run_id} --follow"
            )
            try:
                result = await _watch_launched(
                    host, status.run_id, final, report, records, digest, args, out
                )
            except asyncio.CancelledError:  # Ctrl-C: stop watching, not the server
                print(detach_hint, file=out)
                raise
            records.save_outcome(record, result)
            return _report_watch(result, out, final.plan)

    return _run(go())


async def _watch_launched(
    host: RemoteHost,
    run_id: str,
    final: _Launchable,
    report: PreflightReport,
    records: RunRecords,
    digest: str,
    args: argparse.Namespace,
    out: TextIO,
) -> WatchResult:
    return await watch_run(
        host,
        run_id,
        port=final.port,
        sglang_version=report.sglang_version,
        history=records.stage_history(host.host_key, digest),
        on_chunk=_Printer(out, show_log=not args.quiet_log),
    )


def _target_for_run(
    args: argparse.Namespace, run_id: str | None, records: RunRecords | None = None
) -> tuple[_Target, RunRecord | None]:
    """Where to reach a run (flags first, then the local record) and that record, if any."""
    record = (records or RunRecords()).get(run_id) if run_id else None
    host = args.host or (record.target if record else None)
    if not host:
        raise ToolInputError(
            f"run {run_id} was not launched from this machine: pass --host"
            if run_id
            else "pass --host"
        )
    jumps = args.jump if args.jump is not None else (record.jumps or None if record else None)
    runs_root = args.remote_runs_dir or (record.runs_root if record else None)
    return _Target(host, jumps, "python3", [], runs_root), record


def runs(args: argparse.Namespace) -> int:
    if not args.host:
        records = sorted(RunRecords().load(), key=lambda r: r.started_at)
        if not records:
            print("no runs launched from this machine yet")
        for r in records:
            started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started_at))
            startup = f"{r.startup_s:.0f}s" if r.startup_s is not None else "-"
            print(f"{r.run_id}  {r.host:<28} {r.outcome:<9} start-up {startup:>6}  {started}")
        return 0

    async def go() -> int:
        async with await _connect(args, _target_for_run(args, None)[0]) as host:
            runs = await host.list_runs()
            if not runs:
                print(f"no runs on {host.label}")
            for run in runs:
                port = run.meta.get("port")
                created = run.meta.get("created")
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(created)) if created else "?"
                print(
                    f"{run.run_id}  {run.state:<10} pgid {run.pgid}  port {port}  log {run.log_size} B  {when}"
                )
            return 0

    return _run(go())


def logs(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    records = RunRecords()
    target, record = _target_for_run(args, args.run, records)

    async def go() -> int:
        async with await _connect(args, target) as host:
            status = await host.run_status(args.run)
            log_path = f"{status.run_dir}/log"
            if not args.follow:
                tail = await host.run(["tail", "-n", str(args.lines), log_path])
                out.write(tail.stdout)
                print(f"-- {args.run}: {status.state}", file=out)
                return 0
            history = records.stage_history(host.host_key, record.profile_hash) if record else []
            result = await watch_run(
                host,
                args.run,
                port=status.meta.get("port"),
                sglang_version=record.sglang_version if record else None,
                history=history,
                on_chunk=_Printer(out, show_log=True),
                stop_when_ready=False,
                check_ready=False,
            )
            return _report_watch(result, out)

    return _run(go())


def stop(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    records = RunRecords()
    target, _ = _target_for_run(args, args.run, records)

    async def go() -> int:
        async with await _connect(args, target) as host:
            result = await host.stop(args.run, timeout_s=args.timeout)
            if not result.was_running:
                print(f"{args.run} was not running", file=out)
            else:
                how = "killed (did not stop on TERM)" if result.killed else "stopped on TERM"
                print(
                    f"{args.run} {how}; processes before: {' '.join(map(str, result.processes_before))}",
                    file=out,
                )
            if result.remaining:
                print(f"still running: {' '.join(map(str, result.remaining))}", file=out)
            if result.gpu_checked:
                held = result.gpu_holders_left
                print(
                    "GPU memory released" if not held else f"GPU memory still held by {held}",
                    file=out,
                )
            else:
                print("GPU memory not checked (nvidia-smi not found on the host)", file=out)
            record = records.get(args.run)  # read again: a watching launch may have saved since
            if record is not None and result.was_running:
                record.outcome = "stopped"
                records.save(record)
            return 0 if result.clean else 1

    return _run(go())
