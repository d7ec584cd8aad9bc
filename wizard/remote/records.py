"""Local run records (`runs.jsonl` in the user state dir) and secret masking.

A record holds the profile hash, host, run id, start time, outcome and start-up duration with
the per-stage timings that later runs of the same profile on the same host use for their ETA.
Secret values (env vars whose names look secret, secret-looking flags) never reach this file.
The file is rewritten atomically (temp file + rename), so a crash never leaves half a record.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from wizard import secrets as _secrets
from wizard.files import write_text

STATE_DIR_ENV = "SGLANG_WIZARD_STATE_DIR"
# Which env names and flags are secret is decided once, in wizard.secrets (re-exported here).
MASK = _secrets.MASK
is_secret_name = _secrets.is_secret_name
mask_argv = _secrets.mask_argv


def split_secret_env(env: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split env into (plain, secret) by name."""
    plain = {k: v for k, v in env.items() if not is_secret_name(k)}
    secret = {k: v for k, v in env.items() if is_secret_name(k)}
    return plain, secret


def mask_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy with secret values replaced by `***` (for screens, logs and records)."""
    return {k: (MASK if is_secret_name(k) else v) for k, v in env.items()}


def split_secret_argv(argv: Sequence[str]) -> tuple[list[str], dict[int, str]]:
    """(argv with secret flag values `***`, {index: value} of what was masked).

    `--api-key=X` masks the whole word: its value in the dict is that word."""
    masked = mask_argv(argv)
    return masked, {i: a for i, (a, m) in enumerate(zip(argv, masked, strict=True)) if a != m}


def secret_values(env: Mapping[str, str], argv: Sequence[str]) -> list[str]:
    """The secret values in env and argv (for masking them in streamed text)."""
    values = [v for k, v in env.items() if is_secret_name(k)]
    for word in split_secret_argv(argv)[1].values():
        values.append(word.partition("=")[2] if word.startswith("--") and "=" in word else word)
    return sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)


mask_text = _secrets.mask_text


def api_key_of(argv: Sequence[str]) -> str | None:
    """The value of `--api-key` in an SGLang argv, if any."""
    for index, arg in enumerate(argv):
        if arg == "--api-key" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--api-key="):
            return arg.partition("=")[2]
    return None


def profile_hash(profile_text: str) -> str:
    """Short stable hash of the profile text (ties ETA history to one set-up)."""
    return hashlib.sha256(profile_text.encode()).hexdigest()[:16]


def state_dir() -> Path:
    """`$SGLANG_WIZARD_STATE_DIR`, else platformdirs' user state path."""
    override = os.environ.get(STATE_DIR_ENV)
    return Path(override) if override else platformdirs.user_state_path("sglang-wizard")


@dataclass
class RunRecord:
    """One launch as the local side remembers it (no secret values)."""

    run_id: str
    host: str
    profile_hash: str
    started_at: float
    target: str = ""  # what to connect to again: ssh alias or user@host:port
    jumps: list[str] = field(default_factory=list)
    runs_root: str | None = None
    port: int | None = None
    python: str = "python3"
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    sglang_version: str | None = None
    ssh_config: str | None = None  # how the host was reached: config file, known_hosts, keys
    known_hosts: list[str] = field(default_factory=list)
    identity: list[str] = field(default_factory=list)
    outcome: str = "launched"  # launched | ready | crashed | exited | stopped | refused
    startup_s: float | None = None
    stage_durations: dict[str, float] = field(default_factory=dict)
    detail: str = ""
    container: str | None = None  # `runtime image` of a container run (`[container]`)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRecord:
        """Build from a JSON object, ignoring unknown keys (older/newer files)."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


class RunRecords:
    """The `runs.jsonl` store: one JSON object per line, last write per run id wins."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / "runs.jsonl"

    def load(self) -> list[RunRecord]:
        """All records (a damaged line is skipped, never fatal)."""
        if not self.path.is_file():
            return []
        records: dict[str, RunRecord] = {}
        for line in self.path.read_text().splitlines():
            try:
                record = RunRecord.from_dict(json.loads(line))
            except (ValueError, TypeError):
                continue
            records[record.run_id] = record
        return list(records.values())

    def forget(self, run_ids: Iterable[str]) -> int:
        """Drop the records of these runs (after `runs --prune`); returns how many were dropped."""
        drop = set(run_ids)
        records = self.load()
        kept = [r for r in records if r.run_id not in drop]
        if len(kept) != len(records):
            self._write(kept)
        return len(records) - len(kept)

    def get(self, run_id: str) -> RunRecord | None:
        """The record of one run, if this machine launched it."""
        return next((r for r in self.load() if r.run_id == run_id), None)

    def save_outcome(self, record: RunRecord, result: Any) -> None:
        """Store how a watched run ended (`WatchResult`): outcome, start-up time, stage times, crash."""
        record.outcome = result.outcome
        record.startup_s = result.startup_s
        record.stage_durations = result.watcher.tracker.completed_durations()
        if result.crash is not None:
            record.detail = result.crash.explanation.summary()
        self.save(record)

    def save(self, record: RunRecord) -> None:
        """Insert or replace a record; the file is replaced atomically."""
        record.env = mask_env(record.env)
        record.argv = mask_argv(record.argv)
        records = {r.run_id: r for r in self.load()}
        records[record.run_id] = record
        self._write(records.values())

    def _write(self, records: Iterable[RunRecord]) -> None:
        text = "".join(json.dumps(asdict(record), sort_keys=True) + "\n" for record in records)
        write_text(self.path, text)

    def stage_history(
        self, host: str, profile_digest: str, limit: int = 10
    ) -> list[dict[str, float]]:
        """Stage durations of earlier runs of the same profile on the same host that got ready."""
        matching = [
            r
            for r in self.load()
            if r.host == host
            and r.profile_hash == profile_digest
            and r.startup_s is not None  # it got ready (it may have been stopped since)
            and r.stage_durations
        ]
        matching.sort(key=lambda r: r.started_at)
        return [dict(r.stage_durations) for r in matching[-limit:]]


def new_run_id(now: float | None = None) -> str:
    """`YYYYmmdd-HHMMSS-xxxxxx`: sortable by time, unique by the random tail."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now if now is not None else time.time()))
    return f"{stamp}-{os.urandom(3).hex()}"
