"""Conformance runs in the background of the test session.

Running SGLang's argument code for every release is the suite's largest cost, and most of the
rest of the suite waits on sockets, sshd and the terminal rather than the CPU. So the runs start
as soon as collection ends (one worker thread, each run is a subprocess), the conformance tests
are moved to the end of the session, and when the first of them starts waiting a second worker
joins. Each release's test waits only for its own release.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")


class BackgroundRuns(Generic[T]):
    """Run `work(version)` for every version in worker threads; one future per version."""

    def __init__(self, versions: Iterable[str], work: Callable[[str], T], max_workers: int = 2):
        self._queue: deque[str] = deque(versions)
        self._work = work
        self._max_workers = max_workers
        self._lock = threading.Lock()
        self._workers = 0
        self.futures: dict[str, Future[T]] = {v: Future() for v in self._queue}

    def add_worker(self) -> None:
        """Start one more worker thread (up to `max_workers`)."""
        with self._lock:
            if self._workers >= self._max_workers or not self._queue:
                return
            self._workers += 1
        threading.Thread(target=self._drain, daemon=True, name="conformance").start()

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    return
                version = self._queue.popleft()
            future = self.futures[version]
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._work(version))
            except BaseException as exc:  # the release's own test reports it
                future.set_exception(exc)

    def result(self, version: str, timeout: float | None = None) -> T:
        """The run of `version` (all workers busy from now on: the suite waits for them)."""
        self.add_worker()
        self.add_worker()
        return self.futures[version].result(timeout)
