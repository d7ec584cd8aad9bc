"""The choice of releases run live (`live.py`): the newest plus a daily rotation, overridable."""

from __future__ import annotations

import datetime as dt

import pytest

from wizard.sglang.releases import release_names

from .live import DAILY_PICKS, LIVE_ENV, LiveChoiceError, choose_live, todays_choice

RELEASES = ("0.5.5", "0.5.6", "0.5.7", "0.5.8", "0.5.9", "0.5.10", "0.5.11")


def test_the_newest_and_the_days_picks_run_live() -> None:
    choice = choose_live(RELEASES, dt.date(2026, 12, 3))
    assert choice.releases[-1] == "0.5.11"
    assert len(choice.releases) == DAILY_PICKS + 1 and len(set(choice.releases)) == 3
    assert "2026-12-03" in choice.why and LIVE_ENV in choice.describe()
    assert choose_live(RELEASES, dt.date(2026, 12, 3)) == choice  # same day, same choice
    assert choose_live(RELEASES, dt.date(2026, 12, 4)) != choice


def test_the_rotation_reaches_every_release() -> None:
    releases = release_names()
    days = -(-(len(releases) - 1) // DAILY_PICKS)  # ceil: older releases / picks a day
    start = dt.date(2026, 12, 3)
    seen = {v for n in range(days)
            for v in choose_live(releases, start + dt.timedelta(days=n)).releases}
    assert seen == set(releases)


def test_the_environment_overrides_the_choice() -> None:
    day = dt.date(2026, 12, 3)
    assert choose_live(RELEASES, day, "all").releases == RELEASES
    assert choose_live(RELEASES, day, "none").releases == ()
    assert choose_live(RELEASES, day, " 0.5.11, 0.5.5 ").releases == ("0.5.5", "0.5.11")
    with pytest.raises(LiveChoiceError, match=r"0\.5\.99 is not a release with data"):
        choose_live(RELEASES, day, "0.5.11,0.5.99")


def test_todays_choice_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LIVE_ENV, "none")
    assert todays_choice(RELEASES).releases == ()
    monkeypatch.delenv(LIVE_ENV)
    assert todays_choice(RELEASES).releases[-1] == "0.5.11"
    assert choose_live((), dt.date(2026, 12, 3)).releases == ()
    assert choose_live(("0.5.11",), dt.date(2026, 12, 3)).releases == ("0.5.11",)
