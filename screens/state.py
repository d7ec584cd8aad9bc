"""What a screen may read from the app, typed without importing it (`screens.app` sits above
every screen): the state the app owns, and the two SSH helpers that may ask the user a question.

Screens change nothing through this: they post a message (`screens.messages`) and the app acts.
`screens.app` checks that `WizardApp` has every member listed here (mypy).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from textual.app import App

    from wizard.profile_schema import Profile
    from wizard.rules.report import Report


class WizardState(Protocol):
    """The app as a screen sees it."""

    @property
    def profile(self) -> Profile:
        """The current profile (loaded at once if the start-up thread has not yet)."""

    @property
    def report(self) -> Report | None:
        """The current profile's report (None while the engine could not check it)."""

    @property
    def profile_name(self) -> str | None:
        """The name the step bar shows."""

    @property
    def dirty(self) -> bool:
        """Unsaved changes (the step bar's `*`)."""

    @property
    def checking(self) -> bool:
        """The first check has not answered yet."""

    @property
    def loading(self) -> bool:
        """The first profile is not loaded yet."""

    @property
    def core_problem(self) -> str | None:
        """Why there is no report, when there is none."""

    @property
    def input_problems(self) -> dict[str, str]:
        """Typed values the profile refused: dotted path -> message."""

    @property
    def ssh_settings(self) -> Any:
        """How the app was told to reach hosts (None: the user's ssh config)."""

    @property
    def trusted_keys(self) -> set[str]:
        """Host-key fingerprints the user trusted in this session."""

    @property
    def remote_runs_root(self) -> str | None:
        """Where runs live on the hosts (None: the default)."""

    def ready_profiles(self) -> list[Path]:
        """The ready profiles shipped with the project."""

    async def connect_host(
        self, target: str, jumps: list[str] | None, runs_root: str | None = None,
        settings: Any = None,
    ) -> Any:
        """A connected `RemoteHost` (asks before trusting an unknown host key)."""

    async def confirm_host_key(self, exc: Any) -> bool:
        """Ask whether to trust an unknown host key."""


def state_of(app: App[Any]) -> WizardState:
    """The running app as `WizardState` (`screens.app.WizardApp` is one)."""
    return cast(WizardState, app)
