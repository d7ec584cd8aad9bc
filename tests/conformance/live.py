"""Which SGLang releases `make test` runs live (the rest are replayed from recorded results).

Every run: the newest release, plus `DAILY_PICKS` older ones picked by the UTC day, so
consecutive days walk through every release (with 25 older releases and 2 picks a day, each is
run live at least once in any 13 consecutive days). The choice is printed at the start and end
of the session. `SGLANG_WIZARD_LIVE_RELEASES` overrides it: a comma list of releases, `all` (the
whole matrix, as `make conformance`), or `none` (replay only).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass

LIVE_ENV = "SGLANG_WIZARD_LIVE_RELEASES"
DAILY_PICKS = 2


class LiveChoiceError(ValueError):
    """`SGLANG_WIZARD_LIVE_RELEASES` names something that is not a release."""


@dataclass(frozen=True)
class LiveChoice:
    """The releases run live this session, and why."""

    releases: tuple[str, ...]
    why: str

    def describe(self) -> str:
        """One line for the terminal: the choice, why, and how to override it."""
        chosen = ", ".join(self.releases) or "none"
        return (f"live SGLang releases: {chosen} ({self.why}); every release is replayed from "
                f"recorded results; override: {LIVE_ENV}=0.5.11,0.5.23 | all | none")


def choose_live(releases: Sequence[str], day: dt.date, override: str | None = None) -> LiveChoice:
    """The live releases among ``releases`` (oldest first) on ``day``, or as ``override`` says."""
    if not releases:
        return LiveChoice((), "no releases")
    text = (override or "").strip()
    if text.lower() == "all":
        return LiveChoice(tuple(releases), f"{LIVE_ENV}=all")
    if text.lower() == "none":
        return LiveChoice((), f"{LIVE_ENV}=none")
    if text:
        asked = [v.strip() for v in text.split(",") if v.strip()]
        unknown = [v for v in asked if v not in releases]
        if unknown:
            raise LiveChoiceError(f"{LIVE_ENV}={text}: {', '.join(unknown)} is not a release with "
                                  f"data; choose from {', '.join(releases)}, or all, or none")
        return LiveChoice(tuple(v for v in releases if v in asked), f"{LIVE_ENV}={text}")
    newest, older = releases[-1], list(releases[:-1])
    start = day.toordinal() * DAILY_PICKS
    picks = {older[(start + i) % len(older)] for i in range(min(DAILY_PICKS, len(older)))}
    chosen = (*(v for v in releases if v in picks), newest)
    return LiveChoice(chosen, f"the newest, and {DAILY_PICKS} picked by the day {day.isoformat()}")


def todays_choice(releases: Sequence[str]) -> LiveChoice:
    """`choose_live` for today (UTC) and the environment's override."""
    return choose_live(releases, dt.datetime.now(dt.UTC).date(), os.environ.get(LIVE_ENV))
