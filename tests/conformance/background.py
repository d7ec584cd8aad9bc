"""Conformance runs in the background of the test session.

Running SGLang's argument code for every release is the suite's largest cost, and most of the
rest of the suite waits on sockets, sshd and the terminal rather than the CPU. So the runs start
as soon as collection ends (one worker thread, each run is a subprocess), the conformance tests
are moved to the end of the session, and when the first of them starts waiting a second worker
joins. Each release's test waits only for its own release.

Under pytest-xdist (`make test` runs two workers) every worker starts these runs; the workers
share them through `shared_result` (one worker runs a release, the others read its result) and
take the releases in different orders, so no release runs twice.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
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


#: The folder the xdist workers of one session share (set by the controller, tests/conftest.py).
SHARE_ENV = "SGLANG_WIZARD_XDIST_SHARE"


def worker_order(versions: Iterable[str]) -> list[str]:
    """The order this process runs the releases in: odd xdist workers (gw1, gw3, ...) from the
    other end, so two workers start on different releases."""
    ordered = list(versions)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    return ordered[::-1] if index % 2 else ordered


def shared_result(key: str, compute: Callable[[], T]) -> T:
    """`compute()` once per xdist session: the first worker to take `key`'s lock computes and
    saves the result; a worker that gets the lock afterwards reads it. Without xdist (no shared
    folder) it just computes. A failed computation saves nothing (the next caller tries again)."""
    share = os.environ.get(SHARE_ENV)
    if not share:
        return compute()
    folder = Path(share)
    folder.mkdir(parents=True, exist_ok=True)
    saved = folder / f"{key}.pickle"
    with open(folder / f"{key}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if saved.exists():
                with open(saved, "rb") as handle:
                    result: T = pickle.load(handle)
                return result
            result = compute()
            partial = saved.with_suffix(".partial")
            with open(partial, "wb") as handle:
                pickle.dump(result, handle)
            os.replace(partial, saved)
            return result
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
