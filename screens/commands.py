"""Command palette provider: open a profile by name, switch the SGLang version."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from textual.command import DiscoveryHit, Hit, Hits, Provider

from screens import core
from screens.messages import OpenRequested, VersionSwitchRequested
from screens.state import state_of
from wizard.profile_paths import list_profiles


class WizardCommands(Provider):
    """Profiles (saved and ready) and SGLang versions as palette commands."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.app
        out: list[tuple[str, str, Callable[[], object]]] = []
        paths: list[tuple[str, Path]] = [("saved", p) for p in list_profiles()]
        paths += [("ready", p) for p in state_of(app).ready_profiles()]
        for kind, path in paths:
            out.append(
                (
                    f"Open profile: {path.stem}",
                    f"{kind} profile {path}",
                    partial(app.post_message, OpenRequested(path)),
                )
            )
        for version in core.supported_versions():
            out.append(
                (
                    f"Switch SGLang version: {version}",
                    "Check this profile against that version's rules",
                    partial(app.post_message, VersionSwitchRequested(version)),
                )
            )
        return out

    async def discover(self) -> Hits:
        """Shown with an empty search."""
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        """Fuzzy search over the commands."""
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
