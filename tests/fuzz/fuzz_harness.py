"""Run `sglang-wizard` in-process with captured stdio, a per-case time limit and a seeded budget.

A case is an argv (and optional stdin). `run_cli` calls `wizard.cli.main(argv)` in a worker thread
and waits at most `CASE_TIMEOUT_S`: a case still running then is a hang (reported, not waited for).
The outcome says how the command ended: its exit code, or the exception that escaped `main` (a
traceback for the user). `Budget` bounds a fuzz test by a case count and a wall-clock time, and
its seed comes from `SGLANG_WIZARD_FUZZ_SEED` (else a fresh one), printed so a failure replays.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TextIO

SEED_ENV = "SGLANG_WIZARD_FUZZ_SEED"
CASES_ENV = "SGLANG_WIZARD_FUZZ_CASES"
SECONDS_ENV = "SGLANG_WIZARD_FUZZ_SECONDS"
CASE_TIMEOUT_S = float(os.environ.get("SGLANG_WIZARD_FUZZ_CASE_TIMEOUT", "20"))
ALLOWED_EXIT_CODES = (0, 1, 2)


@dataclass
class Outcome:
    """How one in-process run ended."""

    argv: list[str]
    code: int | None = None  # None: an exception escaped, or the case hung
    out: str = ""
    err: str = ""
    escaped: str | None = None  # the traceback of an exception that escaped `main`
    hung: bool = False
    seconds: float = 0.0

    def problem(self) -> str | None:
        """What is wrong with this outcome (None when it ended with 0, 1 or 2 and no traceback)."""
        if self.hung:
            return f"hung (still running after {CASE_TIMEOUT_S:.0f} s)"
        if self.escaped is not None:
            return "traceback:\n" + self.escaped
        if self.code not in ALLOWED_EXIT_CODES:
            return f"exit code {self.code} (allowed: 0, 1, 2)"
        if "Traceback (most recent call last)" in self.err + self.out:
            return "a traceback was printed:\n" + self.err[-3000:]
        if self.code == 2 and not (self.err.strip() or self.out.strip()):
            return "exit 2 without saying why"
        return None


class _Stdin(io.StringIO):
    """Standard input for a case (`buffer` for code that reads bytes)."""

    @property
    def buffer(self) -> io.BytesIO:  # type: ignore[override]
        return io.BytesIO(self.getvalue().encode("utf-8", "surrogatepass"))


_LOCK = threading.Lock()  # sys.stdout is process-wide: one case at a time


class _CaseStream(io.TextIOBase):
    """Standard output or error during a case: the case's writes (its thread and the threads it
    starts) are captured; a thread an earlier test left running writes where it wrote before,
    so its output never lands in a case's answer."""

    def __init__(self, capture: io.StringIO, outside: TextIO, before: set[int]) -> None:
        self.capture, self.outside, self.before = capture, outside, before

    def write(self, text: str) -> int:
        if threading.get_ident() in self.before:
            return self.outside.write(text)
        return self.capture.write(text)

    def flush(self) -> None:
        pass


class CaseTimeout(BaseException):
    """Raised inside a case's thread that ran past its time limit."""


def _stop(worker: threading.Thread, grace: float = 5.0) -> None:
    """Raise CaseTimeout in a hung case's thread, so a Python loop that never ends stops
    spinning (and slowing every later case); a thread stuck in C code is left behind (daemon)."""
    import ctypes

    if worker.ident is None:
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(worker.ident), ctypes.py_object(CaseTimeout)
    )
    worker.join(grace)


def run_cli(argv: Sequence[str], stdin: str = "", timeout: float = CASE_TIMEOUT_S) -> Outcome:
    """Run `main(argv)` with captured stdout/stderr and `stdin`; never wait more than `timeout`."""
    from wizard.cli import main

    outcome = Outcome(list(argv))
    out, err = io.StringIO(), io.StringIO()

    def target() -> None:
        try:
            outcome.code = main(list(argv))
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            code = exc.code
            outcome.code = code if isinstance(code, int) else (0 if code is None else 2)
            if isinstance(code, str):
                err.write(code)
        except CaseTimeout:
            pass  # stopped by `_stop` after the time limit: reported as hung
        except BaseException:
            outcome.escaped = traceback.format_exc()

    with _LOCK:
        saved = sys.stdin, sys.stdout, sys.stderr
        before = {t.ident for t in threading.enumerate() if t.ident is not None}
        sys.stdin = _Stdin(stdin)
        sys.stdout = _CaseStream(out, saved[1], before)
        sys.stderr = _CaseStream(err, saved[2], before)
        start = time.monotonic()
        worker = threading.Thread(target=target, daemon=True, name="fuzz-case")
        try:
            worker.start()
            worker.join(timeout)
        finally:
            outcome.seconds = time.monotonic() - start
            outcome.hung = worker.is_alive()
            if outcome.hung:
                _stop(worker)
            sys.stdin, sys.stdout, sys.stderr = saved
    outcome.out, outcome.err = out.getvalue(), err.getvalue()
    return outcome


@dataclass
class Budget:
    """A seeded case generator bounded by a case count and a wall-clock budget.

    Defaults keep a test to a few seconds; set SGLANG_WIZARD_FUZZ_CASES / _SECONDS for a long run
    and SGLANG_WIZARD_FUZZ_SEED to replay one.
    """

    name: str
    cases: int = 150
    seconds: float = 8.0
    seed: int = field(init=False)
    rng: random.Random = field(init=False)
    ran: int = 0
    failures: dict[str, str] = field(default_factory=dict)  # signature -> first message

    def __post_init__(self) -> None:
        given = os.environ.get(SEED_ENV)
        self.seed = int(given) if given else random.SystemRandom().randrange(2**32)
        self.cases = int(os.environ.get(CASES_ENV, self.cases))
        self.seconds = float(os.environ.get(SECONDS_ENV, self.seconds))
        # each test draws its own stream from the seed, so one test's cases do not depend on
        # how many cases another ran
        self.rng = random.Random(f"{self.seed}:{self.name}")
        print(f"fuzz {self.name}: seed {self.seed} ({SEED_ENV}={self.seed} replays it)")

    def __iter__(self) -> Iterator[int]:
        start = time.monotonic()
        deadline = start + self.seconds
        for index in range(self.cases):
            if time.monotonic() > deadline:
                break
            self.ran = index + 1
            yield index
        print(f"fuzz {self.name}: {self.ran} cases in {time.monotonic() - start:.1f} s, "
              f"{len(self.failures)} distinct problem(s)")

    def fail_message(self, outcome: Outcome, problem: str, extra: str = "") -> str:
        """The message of a failed case: the problem, the argv and how to replay it."""
        return (
            f"{self.name} case {self.ran} (seed {self.seed}; replay with {SEED_ENV}={self.seed}): "
            f"sglang-wizard {' '.join(repr(a) for a in outcome.argv)}\n{extra}{problem}"
        )

    def record(self, outcome: Outcome, problem: str, extra: str = "") -> None:
        """Keep the first case of each distinct problem (by its last traceback line)."""
        lines = [line for line in problem.strip().splitlines() if line.strip()]
        signature = lines[-1][:200] if lines else problem
        self.failures.setdefault(signature, self.fail_message(outcome, problem, extra))

    def report(self) -> str | None:
        """All distinct problems found, or None."""
        if not self.failures:
            return None
        shown = list(self.failures.values())[:8]
        return (
            f"{len(self.failures)} distinct problem(s) in {self.ran} cases "
            f"(seed {self.seed}):\n\n" + "\n\n".join(s[-6000:] for s in shown)
        )


@contextlib.contextmanager
def chdir(path: str | os.PathLike[str]) -> Iterator[None]:
    """Run cases in `path` (relative outputs land there)."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)
