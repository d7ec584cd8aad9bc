"""Start-up stages, tracebacks and out-of-memory errors read from SGLang's own log lines.

Pure functions and small state machines (no I/O): the remote log follower feeds lines in, the
screens and the CLI read the results. The patterns match the logger messages of SGLang itself
(read from the wheels of the held releases; file:line citations in `tests/fixtures/stand_in/`):

* `Load weight begin. avail mem=...`                       (model_executor/model_runner.py)
* `Loading safetensors checkpoint shards:  47% Completed | 7/15 [...]` (model_loader/weight_utils.py)
* `Load weight end. elapsed=... type=..., avail mem=..., mem usage=... GB.`
* `KV Cache is allocated. #tokens: N, K size: ..., V size: ...` (mem_cache/memory_pool.py)
* `Memory pool end. avail mem=... GB`
* `Capture cuda graph begin. This can take up to several minutes. avail mem=...` (older releases), and
  `Capture target decode CUDA graph begin. backend=...` / `Capture draft ... graph begin` (newer releases)
* `Capturing batches (bs=8 avail_mem=...):  40%|...| 2/5 [...]` (cuda_graph_runner.py, tqdm)
* `Capture cuda graph end. Time elapsed: ... s. mem usage=... GB. avail mem=... GB.`
* `Uvicorn running on http://...` and `The server is fired up and ready to roll!` (http_server.py)
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field


class Stage(enum.StrEnum):
    """Start-up stages of an SGLang server, in the order they happen."""

    STARTING = "starting"
    WEIGHTS = "weights"
    KV_CACHE = "kv_cache"
    CUDA_GRAPH = "cuda_graph"
    READY = "ready"


STAGE_ORDER: tuple[Stage, ...] = tuple(Stage)

STAGE_LABELS: Mapping[Stage, str] = {
    Stage.STARTING: "starting (args, distributed init)",
    Stage.WEIGHTS: "loading weights",
    Stage.KV_CACHE: "allocating KV cache",
    Stage.CUDA_GRAPH: "capturing CUDA graphs",
    Stage.READY: "ready",
}

_WEIGHTS_BEGIN = re.compile(r"Load weight begin\b")
_SHARDS = re.compile(
    r"Loading (?:safetensors|pt) checkpoint shards:\s+(?P<pct>\d+)% Completed \|\s*(?P<done>\d+)/(?P<total>\d+)"
)
_WEIGHTS_END = re.compile(r"Load weight end\b")
_KV_ALLOCATED = re.compile(r"KV Cache is allocated\b")
_MEMORY_POOL_END = re.compile(r"Memory pool end\b")
_GRAPH_BEGIN = re.compile(
    r"Capture (?:[\w ]+? )?(?:cuda|CUDA|npu|NPU|cpu|CPU|xpu|XPU) graph begin\b"
)
_GRAPH_BATCHES = re.compile(
    r"Capturing batches \((?P<desc>[^)]*)\):\s+(?P<pct>\d+)%.*?(?P<done>\d+)/(?P<total>\d+)"
)
_GRAPH_END = re.compile(r"Capture (?:[\w ]+? )?(?:cuda|CUDA|npu|NPU|cpu|CPU|xpu|XPU) graph end\b")
_READY = re.compile(r"The server is fired up and ready to roll!")
_UVICORN = re.compile(r"Uvicorn running on (?P<url>\S+)")
# Substrings every stage line contains: cheap tests before the specific patterns run.
_STAGE_WORDS: tuple[str, ...] = (
    "Load weight",
    "checkpoint shards",
    "KV Cache",
    "Memory pool",
    "graph begin",
    "graph end",
    "Capturing batches",
    "Uvicorn",
    "ready to roll",
)


def _has_stage_word(text: str) -> bool:
    return any(word in text for word in _STAGE_WORDS)


@dataclass(frozen=True)
class StageEvent:
    """One change seen in the log: a stage began, or progress inside a stage moved."""

    stage: Stage
    line_number: int
    elapsed_s: float
    done: int | None = None
    total: int | None = None
    detail: str = ""
    eta_s: float | None = None  # seconds to ready at this point, when history allows (RunWatcher)

    @property
    def fraction(self) -> float | None:
        """Progress inside the stage (0..1) when the log reports it."""
        if self.done is None or not self.total:
            return None
        return min(1.0, self.done / self.total)


@dataclass
class StageTracker:
    """Follows the start-up stages through a stream of log lines.

    Feed each line with the seconds elapsed since launch; `events` keeps the changes, `durations`
    the seconds each finished stage took (used for ETAs of later runs of the same profile).
    """

    stage: Stage = Stage.STARTING
    line_number: int = 0
    stage_started_s: dict[Stage, float] = field(default_factory=lambda: {Stage.STARTING: 0.0})
    durations: dict[Stage, float] = field(default_factory=dict)
    progress: tuple[int, int] | None = None
    uvicorn_url: str | None = None
    events: list[StageEvent] = field(default_factory=list)
    max_events: int = 200

    def _enter(self, stage: Stage, elapsed_s: float, detail: str) -> StageEvent | None:
        if STAGE_ORDER.index(stage) <= STAGE_ORDER.index(self.stage):
            return None
        self.durations[self.stage] = elapsed_s - self.stage_started_s.get(self.stage, 0.0)
        self.stage = stage
        self.stage_started_s[stage] = elapsed_s
        self.progress = None
        return StageEvent(stage, self.line_number, elapsed_s, detail=detail)

    def _progress(
        self, stage: Stage, done: int, total: int, elapsed_s: float, detail: str
    ) -> StageEvent | None:
        if STAGE_ORDER.index(stage) > STAGE_ORDER.index(self.stage):
            self._enter(stage, elapsed_s, detail)
        if stage is not self.stage:
            return None  # progress of an earlier stage arriving late: the stage is over
        self.progress = (done, total)
        return StageEvent(stage, self.line_number, elapsed_s, done, total, detail)

    def feed(self, line: str, elapsed_s: float) -> list[StageEvent]:
        """Read one log line; return the stage changes / progress it reports (often none)."""
        self.line_number += 1
        if self.stage is Stage.READY or not _has_stage_word(line):
            return []  # the common case in a long log: one search, no event
        found: list[StageEvent] = []
        # tqdm progress bars rewrite themselves with carriage returns: only the last state counts.
        text = line.rsplit("\r", 1)[-1] if "\r" in line.rstrip("\r\n") else line
        event: StageEvent | None = None
        if _WEIGHTS_BEGIN.search(text):
            event = self._enter(Stage.WEIGHTS, elapsed_s, text.strip())
        elif m := _SHARDS.search(text):
            event = self._progress(
                Stage.WEIGHTS, int(m["done"]), int(m["total"]), elapsed_s, text.strip()
            )
        elif _WEIGHTS_END.search(text):
            # Weights are loaded (a draft model may follow): progress shows complete, in the
            # shard counts already shown (not a new "1/1" after "18/18").
            total = self.progress[1] if self.progress and self.stage is Stage.WEIGHTS else 1
            event = self._progress(Stage.WEIGHTS, total, total, elapsed_s, text.strip())
        elif _KV_ALLOCATED.search(text) or _MEMORY_POOL_END.search(text):
            event = self._enter(Stage.KV_CACHE, elapsed_s, text.strip())
        elif _GRAPH_BEGIN.search(text):
            event = self._enter(Stage.CUDA_GRAPH, elapsed_s, text.strip())
        elif m := _GRAPH_BATCHES.search(text):
            event = self._progress(
                Stage.CUDA_GRAPH, int(m["done"]), int(m["total"]), elapsed_s, m["desc"]
            )
        elif _GRAPH_END.search(text):
            # Capture is over: complete in the batch counts already shown (not "1/1" after "7/7").
            total = self.progress[1] if self.progress and self.stage is Stage.CUDA_GRAPH else 1
            event = self._progress(Stage.CUDA_GRAPH, total, total, elapsed_s, text.strip())
        elif m := _UVICORN.search(text):
            self.uvicorn_url = m["url"]
        elif _READY.search(text):
            event = self._enter(Stage.READY, elapsed_s, text.strip())
        if event is not None:
            found.append(event)
            self.events.append(event)
            if len(self.events) > self.max_events:
                del self.events[: len(self.events) - self.max_events]
        return found

    def skip(self, count: int) -> None:
        """Account for `count` lines known to hold no stage word (see `may_change_stage`)."""
        self.line_number += count

    def may_change_stage(self, text: str) -> bool:
        """Cheap test on a block of lines: False means feeding them would report nothing."""
        return self.stage is not Stage.READY and _has_stage_word(text)

    @property
    def ready(self) -> bool:
        """True once the ready line was seen."""
        return self.stage is Stage.READY

    def completed_durations(self) -> dict[str, float]:
        """Durations of the finished stages, keyed by stage name (JSON friendly)."""
        return {stage.value: round(seconds, 3) for stage, seconds in self.durations.items()}

    def eta_s(self, history: Sequence[Mapping[str, float]], elapsed_s: float) -> float | None:
        """Seconds left until ready, from earlier runs' stage durations (median per stage).

        Returns None without history. Inside the current stage the median duration is scaled by
        the reported progress when there is some, else the time already spent is subtracted.
        """
        if not history or self.ready:
            return 0.0 if self.ready else None
        remaining = 0.0
        current_index = STAGE_ORDER.index(self.stage)
        for stage in STAGE_ORDER[current_index:-1]:
            samples = sorted(h[stage.value] for h in history if stage.value in h)
            if not samples:
                continue
            median = samples[len(samples) // 2]
            if stage is self.stage:
                spent = elapsed_s - self.stage_started_s.get(stage, 0.0)
                if self.progress and self.progress[1]:
                    left = median * (1 - self.progress[0] / self.progress[1])
                else:
                    left = median - spent
                remaining += max(0.0, left)
            else:
                remaining += median
        return remaining


# ---------------------------------------------------------------------------- tracebacks

_TB_START = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$')
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?::|$)")


@dataclass(frozen=True)
class Frame:
    """One frame of a Python traceback."""

    path: str
    line: int
    function: str
    source: str = ""

    @property
    def sglang_location(self) -> str | None:
        """`sglang/<...>.py:LINE` when the frame is inside the sglang package, else None."""
        return sglang_location(self.path, self.line)


def sglang_location(path: str, line: int) -> str | None:
    """Normalise a file path to `sglang/...py:LINE` (site-packages or source checkout)."""
    normalised = path.replace("\\", "/")
    index = normalised.rfind("/sglang/")
    if index >= 0:
        return f"{normalised[index + 1 :]}:{line}"
    if normalised.startswith("sglang/"):
        return f"{normalised}:{line}"
    return None


@dataclass(frozen=True)
class TracebackInfo:
    """The last traceback of a log: frames, exception line and where in SGLang it was raised."""

    start_line: int
    frames: tuple[Frame, ...]
    exception_type: str
    exception_message: str
    text: str

    @property
    def innermost_sglang_frame(self) -> Frame | None:
        """The deepest frame inside the sglang package (where SGLang raised)."""
        for frame in reversed(self.frames):
            if frame.sglang_location:
                return frame
        return None

    @property
    def location(self) -> str | None:
        """`sglang/srt/server_args.py:3521` style location of the innermost SGLang frame."""
        frame = self.innermost_sglang_frame
        return frame.sglang_location if frame else None

    @property
    def exception_line(self) -> str:
        """`Type: message` as Python printed it."""
        return (
            f"{self.exception_type}: {self.exception_message}"
            if self.exception_message
            else self.exception_type
        )


class TracebackScanner:
    """Finds the last complete Python traceback in a log read line by line, in bounded memory.

    Only the traceback being read and the last finished one are kept (each capped at
    `max_lines`), so a log of any length can be scanned from its first byte.
    """

    def __init__(self, max_lines: int = 400) -> None:
        self.max_lines = max_lines
        self.last: TracebackInfo | None = None
        self._current: list[str] | None = None
        self._start_line = 0
        self._line_number = 0

    def feed(self, line: str) -> TracebackInfo | None:
        """Read one line; return a traceback when this line completed one."""
        self._line_number += 1
        text = line.rstrip("\r\n")
        position = text.find(_TB_START)
        if position >= 0:
            self._current = [_TB_START]
            self._start_line = self._line_number
            return None
        if self._current is None:
            return None
        if text.startswith((" ", "\t")) or not text.strip():
            if len(self._current) < self.max_lines:
                self._current.append(text)
            return None
        if text.startswith(
            ("During handling of the above exception", "The above exception was the direct cause")
        ):
            self._current = None
            return None
        # First non-indented line after the frames: the exception line (it may span more lines,
        # but the first one holds the type and the start of the message).
        self._current.append(text)
        finished = _build_traceback(self._start_line, self._current)
        self._current = None
        if finished is not None:
            self.last = finished
        return finished

    @property
    def inside(self) -> bool:
        """True while a traceback is being read."""
        return self._current is not None

    def may_find(self, text: str) -> bool:
        """Cheap test on a block of lines: False means feeding them would change nothing."""
        return self._current is not None or _TB_START in text

    def skip(self, count: int) -> None:
        """Account for `count` lines known to change nothing (see `may_find`)."""
        self._line_number += count

    def feed_many(self, lines: Iterable[str]) -> TracebackInfo | None:
        """Read many lines; return the last traceback seen so far."""
        for line in lines:
            self.feed(line)
        return self.last


def _build_traceback(start_line: int, lines: list[str]) -> TracebackInfo | None:
    frames: list[Frame] = []
    pending: Frame | None = None
    for text in lines[1:-1]:
        if m := _FRAME.match(text):
            if pending:
                frames.append(pending)
            pending = Frame(m["path"], int(m["line"]), m["func"])
        elif pending and text.strip() and not pending.source:
            pending = Frame(pending.path, pending.line, pending.function, text.strip())
    if pending:
        frames.append(pending)
    last = lines[-1].strip()
    # Exception lines may carry a logging prefix when a logger printed them.
    exc_type, _, message = last.partition(":")
    if not frames and not _EXCEPTION_LINE.match(last):
        return None
    return TracebackInfo(
        start_line=start_line,
        frames=tuple(frames),
        exception_type=exc_type.strip(),
        exception_message=message.strip(),
        text="\n".join(lines),
    )


def find_last_traceback(lines: Iterable[str]) -> TracebackInfo | None:
    """The last complete traceback in the whole log (not only its tail), or None."""
    return TracebackScanner().feed_many(lines)


# ---------------------------------------------------------------------------- out of memory

_OOM_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"CUDA out of memory"),
    re.compile(r"torch\.OutOfMemoryError|torch\.cuda\.OutOfMemoryError"),
    re.compile(r"Not enough memory\. Please try to increase --mem-fraction-static"),
    re.compile(r"RuntimeError: Not enough memory"),
    re.compile(r"CUBLAS_STATUS_ALLOC_FAILED|cudaErrorMemoryAllocation"),
)
_OOM_DETAIL = re.compile(
    r"Tried to allocate (?P<want>[\d.]+ [GMK]iB)\. GPU (?P<gpu>\d+) has a total capacity of (?P<total>[\d.]+ [GMK]iB) of which (?P<free>[\d.]+ [GMK]iB) is free"
)


@dataclass(frozen=True)
class OutOfMemory:
    """An out-of-memory failure seen in the log."""

    line_number: int
    line: str
    gpu: int | None = None
    wanted: str | None = None
    total: str | None = None
    free: str | None = None

    def explain(self) -> str:
        """One paragraph for the operator, tied to the memory plan."""
        where = (
            f" on GPU {self.gpu} (wanted {self.wanted}, {self.free} free of {self.total})"
            if self.gpu is not None
            else ""
        )
        return (
            f"The server ran out of GPU memory{where}. Compare with the memory plan: weights of the "
            "target and the draft/MTP layers, KV cache (--mem-fraction-static) and CUDA-graph buffers "
            "must fit. Lower --mem-fraction-static or --cuda-graph-max-bs, or check for left-over "
            "processes holding GPU memory (preflight lists them)."
        )


# Substrings every OOM pattern above contains (substring tests are far cheaper than regexes).
_OOM_WORDS: tuple[str, ...] = (
    "out of memory",
    "OutOfMemoryError",
    "Not enough memory",
    "ALLOC_FAILED",
    "MemoryAllocation",
)


def may_report_oom(text: str) -> bool:
    """Cheap test on a block of lines: False means no line in it reports out-of-memory."""
    return any(word in text for word in _OOM_WORDS)


def detect_oom(line: str, line_number: int = 0) -> OutOfMemory | None:
    """Return an OutOfMemory when the line reports one."""
    if not may_report_oom(line) or not any(p.search(line) for p in _OOM_PATTERNS):
        return None
    m = _OOM_DETAIL.search(line)
    if m:
        return OutOfMemory(
            line_number, line.strip(), int(m["gpu"]), m["want"], m["total"], m["free"]
        )
    return OutOfMemory(line_number, line.strip())


# ---------------------------------------------------------------------------- crash mapping


@dataclass(frozen=True)
class CrashExplanation:
    """What the wizard can tell about a crash: the traceback, the rule behind it, OOM."""

    traceback: TracebackInfo | None
    oom: OutOfMemory | None
    rule_id: str | None = None
    explanation: str = ""
    fixes: tuple[str, ...] = ()

    def summary(self) -> str:
        """Human text: exception, location, rule and fix, or the OOM explanation."""
        parts: list[str] = []
        if self.traceback is not None:
            location = self.traceback.location or "outside sglang"
            parts.append(f"{self.traceback.exception_line} at {location}")
        if self.rule_id:
            parts.append(f"rule {self.rule_id}: {self.explanation}")
            parts.extend(f"fix: {fix}" for fix in self.fixes)
        if self.oom is not None:
            parts.append(self.oom.explain())
        if not parts:
            parts.append("The process exited without a Python traceback in its log.")
        return "\n".join(parts)


# Rule fixes are computed from a profile (`Rule.fixes` is a callable), so a crash can only point
# to the check, which lists them.
_CHECK_FOR_FIXES = "check the profile with the wizard to see the fixes for this rule and apply one"


def traceback_from_location(location: str, exception_type: str, message: str = "") -> TracebackInfo:
    """A one-frame traceback for a failure reported as `sglang/...py:LINE` (e.g. by the dry run)."""
    path, _, line = location.rpartition(":")
    frames = (Frame(path, int(line), ""),) if line.isdigit() else ()
    text = f"{exception_type}: {message}" if message else exception_type
    return TracebackInfo(0, frames, exception_type, message, text)


def explain_crash(
    traceback: TracebackInfo | None, oom: OutOfMemory | None, sglang_version: str | None
) -> CrashExplanation:
    """Map a crash to the rule catalog (`wizard.rules.catalog.rule_for_location`) when it exists."""
    rule_id: str | None = None
    explanation = ""
    fixes: tuple[str, ...] = ()
    location = traceback.location if traceback else None
    if location and sglang_version:
        from wizard.rules.catalog import rule_for_location  # heavy: only when there is a crash

        rule = rule_for_location(sglang_version, location)
        if rule is not None:
            rule_id = rule.id
            explanation = ": ".join(part for part in (rule.title, rule.why) if part)
            fixes = (_CHECK_FOR_FIXES,)
    return CrashExplanation(traceback, oom, rule_id, explanation, fixes)
