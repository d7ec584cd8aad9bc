"""Conformance tests run last, and their SGLang runs start in the background at collection.

The live releases of the session (see `live.py`) are printed when collection ends and again in
the terminal summary."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the tests that wait for SGLang runs to the end (stable for the others)."""
    items.sort(key=lambda item: item.get_closest_marker("conformance") is not None)


def _live_tests_collected(session: pytest.Session) -> bool:
    return any(item.nodeid.startswith("tests/conformance/test_conformance.py")
               for item in session.items)


def _say(config: pytest.Config, line: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the background runs when any release-wide conformance test was collected."""
    if _live_tests_collected(session):
        from .test_conformance import LIVE, background

        _say(session.config, LIVE.describe())
        background()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """Repeat the session's live choice at the end, where a reader of CI logs looks."""
    from .test_conformance import LIVE, SEED

    if any(r.nodeid.startswith("tests/conformance/test_conformance.py")
           for key in ("passed", "failed", "error") for r in terminalreporter.stats.get(key, [])
           if hasattr(r, "nodeid")):
        terminalreporter.write_line(f"{LIVE.describe()}; generator seed {SEED}")
