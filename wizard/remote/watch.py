"""Watch a run start: log window, stages with ETA, crash and ready handling.

`RunWatcher` is the pure part (feed it `LogChunk`s); `watch_run` drives it from a `RemoteHost`
and returns how the start-up ended. The screens can use either: the watcher's `window` is the
bounded set of lines to show, `tracker` the stage/progress state, `eta_s()` the time left.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from wizard import logstages
from wizard.remote.runs import CrashReport, LogChunk, ReadyReport, RunStatus
from wizard.remote.session import RemoteHost

_STAMP_FORMAT = "%Y-%m-%d %H:%M:%S"


@functools.lru_cache(maxsize=64)
def _parse_stamp(text: str) -> float | None:
    try:
        return datetime.strptime(text, _STAMP_FORMAT).timestamp()
    except ValueError:
        return None


def line_timestamp(line: str) -> float | None:
    """Seconds since the epoch (naive, host-local) of SGLang's `[YYYY-mm-dd HH:MM:SS ...]` prefix."""
    if len(line) < 20 or line[0] != "[" or line[5] != "-":
        return None
    return _parse_stamp(line[1:20])  # many lines share a second: parse each second once


class RunWatcher:
    """Feeds log lines to the stage tracker, the traceback scanner and OOM detection.

    Memory is bounded: `window` keeps the last `window_lines` lines, the scanner keeps one
    traceback. Elapsed time comes from SGLang's line timestamps (so a re-read of an old log gives
    the real durations), or from the local clock for lines before the first timestamp.
    """

    def __init__(
        self,
        history: Sequence[Mapping[str, float]] = (),
        window_lines: int = 2000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.history = list(history)
        self.window: deque[str] = deque(maxlen=window_lines)
        self.tracker = logstages.StageTracker()
        self.scanner = logstages.TracebackScanner()
        self.oom: logstages.OutOfMemory | None = None
        self.offset = 0
        self.lines_seen = 0
        self._clock = clock
        self._clock_start = clock()
        self._first_stamp: float | None = None
        self._elapsed = 0.0
        self._last_feed_clock = self._clock_start
        self._elapsed_at_feed = 0.0

    def elapsed_s(self) -> float:
        """Seconds since the start of the log (timestamps) or of watching (clock)."""
        return self._elapsed

    def _note_time(self, line: str) -> None:
        stamp = line_timestamp(line)
        if stamp is not None:
            if self._first_stamp is None:
                self._first_stamp = stamp - (self._clock() - self._clock_start)
            self._elapsed = max(self._elapsed, stamp - self._first_stamp)
        elif self._first_stamp is None:
            self._elapsed = self._clock() - self._clock_start

    def tick(self) -> logstages.StageEvent | None:
        """The current stage with the time now, for a display that ticks every second while a
        stage prints only progress bars (which carry no timestamp) or nothing at all.

        Between timestamped lines the clock moves the elapsed time on; None once ready."""
        if self.tracker.ready:
            return None
        self._advance_clock()
        progress = self.tracker.progress
        return logstages.StageEvent(
            self.tracker.stage,
            self.tracker.line_number,
            self._elapsed,
            progress[0] if progress else None,
            progress[1] if progress else None,
            eta_s=self.eta_s(),
        )

    def _advance_clock(self) -> None:
        """Move the elapsed time on by the clock since the last chunk (lines without timestamps,
        such as progress bars, then carry the real time; a fast re-read of an old log moves it
        by almost nothing, so its timestamps still decide)."""
        since = self._clock() - self._last_feed_clock
        self._elapsed = max(self._elapsed, self._elapsed_at_feed + since)

    def _fed(self) -> None:
        self._last_feed_clock = self._clock()
        self._elapsed_at_feed = self._elapsed

    def feed(self, chunk: LogChunk) -> list[logstages.StageEvent]:
        """Read one chunk; return the stage changes and progress it carried (its incomplete
        progress segment included, so a bar's newest state shows without waiting for the next)."""
        if self._first_stamp is not None:
            self._advance_clock()
        events = self._feed_lines(chunk)
        if chunk.partial and self.tracker.may_change_stage(chunk.partial):
            line_number = self.tracker.line_number
            for event in self.tracker.feed(chunk.partial, self._elapsed):
                events.append(dataclasses.replace(event, eta_s=self.eta_s()))
            self.tracker.line_number = line_number  # counted when it arrives as a complete line
        self._fed()
        return events

    def _feed_lines(self, chunk: LogChunk) -> list[logstages.StageEvent]:
        lines = chunk.lines
        self.window.extend(lines)
        self.offset = chunk.end_offset
        text = "\n".join(lines)
        stage_words = self.tracker.may_change_stage(text)
        traceback = self.scanner.may_find(text)
        oom = logstages.may_report_oom(text)
        if not (stage_words or traceback or oom):
            # The common case in a long log: nothing to look at line by line.
            for line in reversed(lines):
                if line_timestamp(line) is not None:
                    self._note_time(line)
                    break
            self.lines_seen += len(lines)
            self.tracker.skip(len(lines))
            self.scanner.skip(len(lines))
            return []
        events: list[logstages.StageEvent] = []
        for line in lines:
            self.lines_seen += 1
            self._note_time(line)
            if stage_words:
                for event in self.tracker.feed(line, self._elapsed):
                    events.append(dataclasses.replace(event, eta_s=self.eta_s()))
            else:
                self.tracker.skip(1)
            if traceback:
                self.scanner.feed(line)
            else:
                self.scanner.skip(1)
            if oom:
                found = logstages.detect_oom(line, self.lines_seen)
                if found is not None:
                    self.oom = found
        return events

    def eta_s(self) -> float | None:
        """Seconds left until ready from earlier runs (None without history)."""
        return self.tracker.eta_s(self.history, self._elapsed)


@dataclass(frozen=True)
class WatchResult:
    """How watching ended."""

    outcome: str  # ready | refused (ready, but the probe was refused) | exited | crashed | stopped
    watcher: RunWatcher
    status: RunStatus | None
    startup_s: float | None
    crash: CrashReport | None = None
    ready: ReadyReport | None = None


ChunkCallback = Callable[[RunWatcher, LogChunk, list[logstages.StageEvent]], None]
TickCallback = Callable[[RunWatcher, logstages.StageEvent], None]


async def _ticking(watcher: RunWatcher, on_tick: TickCallback, every_s: float) -> None:
    while True:
        await asyncio.sleep(every_s)  # a display clock, not synchronisation
        event = watcher.tick()
        if event is None:
            return
        on_tick(watcher, event)


async def watch_run(
    host: RemoteHost,
    run_id: str,
    *,
    port: int | None,
    sglang_version: str | None = None,
    history: Sequence[Mapping[str, float]] = (),
    from_offset: int = 0,
    on_chunk: ChunkCallback | None = None,
    on_tick: TickCallback | None = None,
    tick_s: float = 1.0,
    stop_when_ready: bool = True,
    check_ready: bool = True,
    api_key: str | None = None,
    tail_lines: int | None = None,
) -> WatchResult:
    """Follow the log until ready (then probe the server, with its API key when it has one) or
    until the process exits (then find the traceback in the whole log and explain it).

    `on_tick` gets the current stage every `tick_s` seconds while nothing new arrives, so elapsed
    time and ETA keep moving through phases that print only progress bars."""
    watcher = RunWatcher(history)
    ticker = (
        asyncio.create_task(_ticking(watcher, on_tick, tick_s)) if on_tick is not None else None
    )
    try:
        async for chunk in host.follow_log(run_id, from_offset, tail_lines=tail_lines):
            events = watcher.feed(chunk)
            if on_chunk is not None:
                on_chunk(watcher, chunk, events)
            if watcher.tracker.ready and stop_when_ready:
                ready = (
                    await host.check_ready(port, api_key=api_key) if check_ready and port else None
                )
                status = await host.run_status(run_id)
                outcome = "refused" if ready is not None and ready.problem else "ready"
                return WatchResult(outcome, watcher, status, watcher.elapsed_s(), ready=ready)
    finally:
        if ticker is not None:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
    status = host.last_status or await host.run_status(run_id)
    if watcher.tracker.ready:
        return WatchResult("exited", watcher, status, watcher.elapsed_s())
    if status.exit_code == 0 and status.signal is None and not status.leftover:
        # a clean exit whose ready line was before the part followed (`logs -n N`)
        return WatchResult("exited", watcher, status, None)
    crash = await host.crash_report(run_id, sglang_version)
    outcome = "stopped" if status.stopped else "crashed"
    return WatchResult(outcome, watcher, status, None, crash=crash)
