"""Conformance tests run last, and their SGLang runs start in the background at collection."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the tests that wait for SGLang runs to the end (stable for the others)."""
    items.sort(key=lambda item: item.get_closest_marker("conformance") is not None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the background runs when any release-wide conformance test was collected."""
    if any(item.nodeid.startswith("tests/conformance/test_conformance.py")
           for item in session.items):
        from .test_conformance import background

        background()
