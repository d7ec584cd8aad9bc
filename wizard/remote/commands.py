"""The remote subcommands' implementation (argparse wiring is in `wizard.remote.cli`).

The launch flow itself (plan, preflight, start, watch) is `wizard.remote.flow`, shared with the
launch screen. Exit codes: 0 ok (launch: the server is ready, or launched with --no-follow),
1 the remote action failed (preflight blocks, crash, API key refused, unknown host key,
connection failure), 2 the tool's input (profile, flags, a run id that does not exist).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from wizard.errors import ToolInputError
from wizard.logstages import STAGE_LABELS, StageEvent
from wizard.remote import flow
from wizard.remote.connection import HostSpecError, RemoteError
from wizard.remote.flow import LaunchPlan, Reach, reach_for_profile
from wizard.remote.records import RunRecord, RunRecords, mask_text, secret_values
from wizard.remote.runs import LogChunk, RunStatus
from wizard.remote.session import RemoteHost, RunNotFoundError
from wizard.remote.watch import RunWatcher, watch_run

# ---------------------------------------------------------------------------------- plumbing

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _check_run_id(run_id: str) -> None:
    if not _RUN_ID.match(run_id):
        raise ToolInputError(
            f"invalid run id {run_id!r}: run ids look like 20261129-101500-a1b2c3 "
            "(see `sglang-wizard runs`)"
        )


def _reach(args: argparse.Namespace, profile: Any = None, record: RunRecord | None = None) -> Reach:
    """How to reach the host: flags first, then the run's record, then the profile."""
    if profile is not None:
        base = reach_for_profile(profile, args.host)
    elif record is not None:
        base = Reach.from_record(record)
    else:
        base = Reach(args.host or "")
    if args.host and profile is None:
        base.host = args.host
    if args.jump is not None:
        base.jumps = list(args.jump)
    if args.ssh_config is not None:
        base.ssh_config = str(args.ssh_config)
    if args.known_hosts is not None:
        base.known_hosts = [str(args.known_hosts)]
    if args.identity:
        base.identity = [str(Path(k).expanduser()) for k in args.identity] + [
            k for k in base.identity if profile is not None
        ]
    if args.remote_runs_dir:
        base.runs_root = args.remote_runs_dir
    base.use_agent = not args.no_agent
    return base


async def _connect(args: argparse.Namespace, reach: Reach, out: TextIO | None = None) -> RemoteHost:
    try:
        host = await flow.connect(
            reach, trusted=args.trust_host_key, agent_python=args.agent_python or "python3"
        )
    except HostSpecError as exc:
        raise ToolInputError(str(exc)) from None
    stream = out or sys.stdout

    def notice(text: str) -> None:  # a lost or stalled connection, being re-made
        print(f"-- {text}", file=stream, flush=True)

    host.on_notice = notice
    return host


def _run(coro: Any) -> int:
    try:
        return int(asyncio.run(coro))
    except RunNotFoundError as exc:  # a run id the host does not have: the tool's input
        print(f"sglang-wizard: error: {exc}", file=sys.stderr)
        return 2
    except RemoteError as exc:  # UnknownHostKeyError included: its message says how to trust
        print(f"sglang-wizard: {exc}", file=sys.stderr)
        return 1


def _load(args: argparse.Namespace) -> tuple[LaunchPlan, Reach]:
    from wizard.profile import load_profile
    from wizard.profile_problems import ProfileError
    from wizard.sglang.render import RenderError

    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        raise ToolInputError(str(exc)) from None
    reach = _reach(args, profile)
    if not reach.host:
        raise ToolInputError(
            f"{args.profile}: no host: set [ssh] host in the profile or pass --host"
        )
    try:
        plan = LaunchPlan.from_profile(profile)
    except RenderError as exc:
        raise ToolInputError(f"{args.profile}: {exc.message}") from None
    return plan, reach


def _format_eta(seconds: float | None) -> str:
    if seconds is None:
        return "ETA unknown (first run of this profile here)"
    return f"ETA {int(seconds) // 60}m{int(seconds) % 60:02d}s"


class _Printer:
    """Prints log lines (secret values masked) and stage changes (progress only when it moved);
    `tick` prints the running stage's clock every 10 s while the log is quiet."""

    def __init__(self, out: TextIO, show_log: bool, secrets: Sequence[str] = ()) -> None:
        self.out = out
        self.show_log = show_log
        self.secrets = list(secrets)
        self._last: tuple[Any, ...] | None = None
        self._last_print = time.monotonic()

    def _stage(self, event: StageEvent) -> None:
        progress = f" {event.done}/{event.total}" if event.total else ""
        print(
            f">> {STAGE_LABELS[event.stage]}{progress}  [{event.elapsed_s:.0f}s, {_format_eta(event.eta_s)}]",
            file=self.out,
        )
        self._last_print = time.monotonic()

    def __call__(self, watcher: RunWatcher, chunk: LogChunk, events: list[StageEvent]) -> None:
        if chunk.reconnected:
            print(f"-- connection re-made, log resumed at byte {chunk.offset}", file=self.out)
        if self.show_log and chunk.lines:
            text = "\n".join(chunk.lines)
            print(mask_text(text, self.secrets) if self.secrets else text, file=self.out)
        for event in events:
            key = (event.stage, event.done, event.total)
            if key == self._last:
                continue
            self._last = key
            self._stage(event)
        self.out.flush()

    def tick(self, watcher: RunWatcher, event: StageEvent) -> None:
        """A quiet stretch (CUDA graphs, a slow shard): the stage line with the time now."""
        if time.monotonic() - self._last_print >= 10:
            self._stage(event)
            self.out.flush()


def _print_lines(lines: Sequence[str], out: TextIO) -> None:
    for line in lines:
        print(line, file=out)


# ---------------------------------------------------------------------------------- commands


def preflight(args: argparse.Namespace) -> int:
    plan, reach = _load(args)

    def say(line: str) -> None:
        print(line)

    async def go() -> int:
        async with await _connect(args, reach) as host:
            for_host = await flow.for_host_version(host, plan, say)
            report, ok = await flow.preflight(host, for_host, say, dry_run=not args.skip_dry_run)
            edits = flow.host_gpu_edits(plan.profile, report)
            if getattr(args, "fill_gpu", False) and edits:
                _fill_gpu(args.profile, edits, say)
            return 0 if ok else 1

    return _run(go())


def _fill_gpu(path: Path, edits: dict[str, object], say: Callable[[str], None]) -> None:
    """Write the host's `[gpu]` kind and count into the profile file: only those lines change
    (comments, order and every other value stay as the user wrote them), the result is checked
    by loading it before it atomically replaces the file."""
    from wizard.profile import atomic_write_text, load_profile, profile_from_toml
    from wizard.profile_problems import ProfileError

    try:
        before = load_profile(path)
        text = set_gpu_lines(path.read_text(encoding="utf-8-sig"), edits)
        after = profile_from_toml(text, str(path))
        if after.with_edits({"gpu.kind": before.gpu.kind, "gpu.count": before.gpu.count}) != before:
            raise ValueError("the edit would change more than [gpu]: edit it by hand")
        atomic_write_text(path, text)
    except (ProfileError, ValueError, OSError) as exc:
        say(f"  [gpu] not written to {path}: {exc}")
        return
    say(f"  [gpu] written to {path}: " + ", ".join(f"{k} = {v}" for k, v in edits.items()))


def set_gpu_lines(text: str, edits: dict[str, object]) -> str:
    """`text` (a profile TOML) with `gpu.kind` / `gpu.count` set in its `[gpu]` table (added at
    the end when there is none). ValueError when the file sets them another way (inline table,
    dotted keys): then the user edits it by hand."""
    import json as _json

    values = {key.split(".", 1)[1]: value for key, value in edits.items()}
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.strip() == "[gpu]"), None)
    if header is None:
        if re.search(r"^\s*gpu\s*[.=]", text, re.MULTILINE):
            raise ValueError("the profile sets gpu as an inline table or dotted keys: edit it by hand")
        block = ["", "[gpu]", *(f"{k} = {_json.dumps(v)}" for k, v in values.items())]
        return "\n".join([*lines, *block]) + "\n"
    end = next((i for i in range(header + 1, len(lines)) if lines[i].lstrip().startswith("[")),
               len(lines))
    if "kind" in values:  # the table form of a custom kind is replaced by the kind itself
        kept = [line for line in lines[header + 1:end]
                if not re.match(r"\s*(capability|arch|memory|name)\s*=", line)]
        lines[header + 1:end] = kept
        end = header + 1 + len(kept)
    for key, value in values.items():
        line = f"{key} = {_json.dumps(value)}"
        at = next((i for i in range(header + 1, end)
                   if re.match(rf"\s*{key}\s*=", lines[i])), None)
        if at is None:
            lines.insert(header + 1, line)
            end += 1
        else:
            lines[at] = line
    return "\n".join(lines) + "\n"


def launch(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    plan, reach = _load(args)

    def say(line: str) -> None:
        print(line, file=out)

    async def go() -> int:
        async with await _connect(args, reach, out) as host:
            final = await flow.for_host_version(host, plan, say)
            report, ok = await flow.preflight(host, final, say, dry_run=not args.skip_dry_run)
            if not ok:
                return 1
            started = await flow.start(host, final, report, reach)
            run_id = started.status.run_id
            box = started.status.container
            say(
                f"launched {run_id} on {host.label} "
                + (f"in container {box}" if box else f"(process group {started.status.pgid})")
                + f"; log: {started.status.run_dir}/log"
            )
            follow_hint = reach.command("logs", run_id, "--follow")
            if args.no_follow:
                say(f"follow it with: {follow_hint}")
                say(f"stop it with: {reach.command('stop', run_id)}")
                return 0
            printer = _Printer(out, not args.quiet_log, secret_values(final.env, final.argv))
            try:
                result = await flow.watch(
                    host, final, started, report, on_chunk=printer, on_tick=printer.tick
                )
            except asyncio.CancelledError:  # Ctrl-C: stop watching, not the server
                say(
                    f"detached from {run_id}: the server keeps running; follow it with: {follow_hint}"
                )
                raise
            _print_lines(flow.outcome_lines(result, run_id, reach, final.memory_plan), out)
            if result.outcome in ("ready", "refused"):
                say(f"the server keeps running; follow it with: {follow_hint}")
                say(f"stop it with: {reach.command('stop', run_id)}")
            return flow.exit_code_of(result)

    return _run(go())


def _record_for(args: argparse.Namespace, records: RunRecords) -> tuple[Reach, RunRecord | None]:
    """Where to reach a run (flags first, then the local record) and that record, if any."""
    _check_run_id(args.run)
    record = records.get(args.run)
    reach = _reach(args, record=record)
    if not reach.host:
        raise ToolInputError(f"run {args.run} was not launched from this machine: pass --host")
    return reach, record


_AGE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[smhdw]?)$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _age_s(text: str) -> float:
    match = _AGE.match(text.strip())
    if not match:
        raise ToolInputError(
            f"--prune {text!r}: give an age like 7d, 12h, 30m or 0 (every run that has ended)"
        )
    return float(match["n"]) * _UNIT_S[match["unit"]]


def runs(args: argparse.Namespace) -> int:
    records = RunRecords()
    if args.prune is not None:
        return _prune(args, records, _age_s(args.prune))
    if not args.host:
        local = sorted(records.load(), key=lambda r: r.started_at)
        if not local:
            print("no runs launched from this machine yet")
        for r in local:
            started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started_at))
            startup = f"{r.startup_s:.0f}s" if r.startup_s is not None else "-"
            box = f"  in {r.container}" if r.container else ""
            print(
                f"{r.run_id}  {r.host:<28} {r.outcome:<9} start-up {startup:>6}  {started}{box}"
            )
        return 0

    reach = _reach(args)

    async def go() -> int:
        async with await _connect(args, reach) as host:
            found = await host.list_runs()
            if not found:
                print(f"no runs on {host.label}")
            for run in found:
                port = run.meta.get("port")
                created = run.meta.get("created")
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(created)) if created else "?"
                box = f"  container {run.container}" if run.container else ""
                print(
                    f"{run.run_id}  {run.state:<10} pgid {run.pgid}  port {port}  log {run.log_size} B  {when}{box}"
                )
                _reconcile(records, run, reach)
            return 0

    return _run(go())


def _reconcile(records: RunRecords, run: RunStatus, reach: Reach) -> None:
    """Bring the local record in line with what the host says; hint at `stop` for leftovers."""
    record = records.get(run.run_id)
    if record is not None and not run.alive:
        ended = (
            "stopped" if run.stopped else ("crashed" if run.signal or run.exit_code else "exited")
        )
        if record.outcome in ("launched", "ready") and record.outcome != ended:
            print(f"    the local record said {record.outcome}; the host says {run.state}: updated")
            record.outcome = ended
            records.save(record)
    if run.leftover:
        print(
            f"    processes left: {' '.join(map(str, run.leftover))}; stop them with: "
            f"{Reach.from_record(record).command('stop', run.run_id) if record else reach.command('stop', run.run_id)}"
        )


def _prune(args: argparse.Namespace, records: RunRecords, age_s: float) -> int:
    if args.host:
        reaches = [_reach(args)]
    else:
        seen: dict[tuple[str, str | None], Reach] = {}
        for record in records.load():
            seen.setdefault((record.target, record.runs_root), _reach(args, record=record))
        reaches = list(seen.values())
        if not reaches:
            print("no runs launched from this machine: pass --host to prune a host's runs")
            return 0

    async def go() -> int:
        for reach in reaches:
            async with await _connect(args, reach) as host:
                result = await host.prune(age_s, dry_run=args.dry_run)
                removed = [r["run_id"] for r in result.get("removed", [])]
                verb = "would remove" if args.dry_run else "removed"
                print(
                    f"{host.label}: {verb} {len(removed)} run director{'y' if len(removed) == 1 else 'ies'}"
                    + (f": {' '.join(removed)}" if removed else "")
                )
                for kept in result.get("kept", []):
                    if kept.get("why") == "processes still running":
                        print(f"  kept {kept['run_id']}: processes still running")
                if removed and not args.dry_run:
                    records.forget(removed)
        return 0

    return _run(go())


def logs(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    records = RunRecords()
    reach, record = _record_for(args, records)

    async def go() -> int:
        async with await _connect(args, reach, out) as host:
            if not args.follow:
                status = await host.run_status(args.run)
                lines = 200 if args.lines is None else args.lines
                tail = await host.run(["tail", "-n", str(lines), f"{status.run_dir}/log"])
                out.write(tail.stdout)
                print(f"-- {args.run}: {status.state}", file=out)
                if status.leftover:
                    print(
                        f"-- processes left: {' '.join(map(str, status.leftover))}; stop them with: "
                        f"{reach.command('stop', args.run)}",
                        file=out,
                    )
                return 0
            history = records.stage_history(host.host_key, record.profile_hash) if record else []
            result = await watch_run(
                host,
                args.run,
                port=None,
                sglang_version=record.sglang_version if record else None,
                history=history,
                on_chunk=_Printer(out, show_log=True),  # the host's log is masked
                stop_when_ready=False,
                check_ready=False,
                tail_lines=args.lines,
            )
            _print_lines(flow.outcome_lines(result, args.run, reach), out)
            return flow.exit_code_of(result)

    return _run(go())


def stop(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    records = RunRecords()
    reach, _ = _record_for(args, records)

    async def go() -> int:
        async with await _connect(args, reach, out) as host:
            result = await flow.stop(host, args.run, args.timeout, records)
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
            if result.container is not None:
                print(
                    f"container {result.container} removed"
                    if result.container_removed
                    else f"container {result.container} is still there: remove it on the host",
                    file=out,
                )
            if result.gpu_checked:
                held = result.gpu_holders_left
                print(
                    "GPU memory released" if not held else f"GPU memory still held by {held}",
                    file=out,
                )
            else:
                print("GPU memory not checked (nvidia-smi not found on the host)", file=out)
            return 0 if result.clean else 1

    return _run(go())
