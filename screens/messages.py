"""Messages between the screens and the app (screens post, the app owns the Profile)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from wizard.profile_schema import Profile
    from wizard.rules.report import Fix, Report


@dataclass
class EditRequested(Message):
    """A screen asks the app to apply dotted-path edits to the current profile.

    `raw` holds the text of the inputs involved, so an invalid value can be marked on its input.
    """

    edits: dict[str, Any]
    raw: dict[str, str]
    final: bool = False
    """The field was left or submitted (not a keystroke): secrets typed there become references."""


@dataclass
class InputRejected(Message):
    """A typed value that the profile refused (path -> message); `{}` clears all for `paths`."""

    paths: tuple[str, ...]
    problems: dict[str, str]


@dataclass
class FixRequested(Message):
    """Apply one of a finding's fixes."""

    rule: str
    fix: Fix


@dataclass
class ProfileChanged(Message):
    """The app's current profile (and its report) changed.

    `typed` names the fields whose input the user is typing in: screens leave those inputs alone.
    """

    profile: Profile
    report: Report | None
    typed: tuple[str, ...] = ()
    answered: tuple[str, ...] = ()
    """Fields whose typed edit this answers but whose input must show the profile's value
    (e.g. a secret turned into a reference)."""


@dataclass
class ProfileSaved(Message):
    """The current profile was written to `path`."""

    path: Path


@dataclass
class ProfileOpened(Message):
    """A profile was loaded (`path` is None for an imported command or a new profile)."""

    path: Path | None
    name: str | None


@dataclass
class FindingSelected(Message):
    """The findings panel's highlighted finding changed (index into the report's findings)."""

    index: int


@dataclass
class ModelFactsRead(Message):
    """A screen read model facts the check could not get itself (a Hub id fetched in a worker):
    the app checks the profile again."""

    path: str


# Requests a screen posts to the app (`self.app.post_message(...)`, so a dialog that closes at
# once does not take them along): the app owns the profile and the navigation.


@dataclass
class RemoteFactsRead(Message):
    """Model facts read on the GPU host for `path`: the check uses them from now on."""

    path: str
    facts: Any


@dataclass
class ProfileReplaced(Message):
    """Make `profile` current (an imported command: `name` and `path` None) and check it."""

    profile: Profile
    name: str | None = None
    path: Path | None = None


@dataclass
class StepRequested(Message):
    """Show a wizard step (by its name in `screens.steps.STEPS`)."""

    step: str


@dataclass
class OpenRequested(Message):
    """Open a profile file (asking first about unsaved changes), then show `then_step`."""

    path: Path
    then_step: str | None = None


class NewProfileRequested(Message):
    """Start an empty profile on the Model step (asking first about unsaved changes)."""


class ImportRequested(Message):
    """Ask for a launch command to import (asking first about unsaved changes)."""


@dataclass
class VersionSwitchRequested(Message):
    """Check the profile against another SGLang version."""

    version: str
