"""The sglang-wizard Textual app: owns the current Profile and its Report; screens render them.

Flow: a screen posts `EditRequested` / `FixRequested` -> the app applies it with
`Profile.with_edits` / `wizard.api.apply_fix`, checks it with `wizard.api.check_profile` and posts
`ProfileChanged` to the active screen, which repaints. Nothing here decides what SGLang does.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import html
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from textual import events, on, work
from textual.actions import SkipAction
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen

import wizard.remote as remote
from screens import core
from screens.commands import WizardCommands
from screens.forms import label_for
from screens.keys import KeyGate, install_meta_digits, types_question_mark
from screens.messages import (
    EditRequested,
    FixRequested,
    ImportRequested,
    InputRejected,
    ModelFactsRead,
    NewProfileRequested,
    OpenRequested,
    ProfileChanged,
    ProfileOpened,
    ProfileReplaced,
    ProfileSaved,
    RemoteFactsRead,
    StepRequested,
    VersionSwitchRequested,
)
from screens.start import StartScreen
from screens.state import WizardState
from screens.steps import STEPS
from wizard.history import History
from wizard.profile_paths import builtin_profiles_dir, list_profiles
from wizard.rules.report import Report
from wizard.secrets import argv_references, mask_text, reference_name

if TYPE_CHECKING:
    from wizard.profile_schema import Profile

#: The ready example a new user sees first (incident 1's working set-up).
EXAMPLE_PROFILE = "qwen3.6-27b-mtp-a6000"


def _screen(name: str) -> Screen:
    if name == "start":
        return StartScreen()
    if name == "model":
        from screens.model import ModelScreen

        return ModelScreen()
    if name == "algorithm":
        from screens.algorithm import AlgorithmScreen

        return AlgorithmScreen()
    if name == "parameters":
        from screens.parameters import ParametersScreen

        return ParametersScreen()
    from screens.review import ReviewScreen

    return ReviewScreen()


class WizardApp(App[int]):
    """The terminal wizard: Start -> Model -> Algorithm -> Parameters -> Review."""

    TITLE = "sglang-wizard"
    CSS_PATH = Path(__file__).parent / "app.tcss"  # absolute: subclasses may live elsewhere
    MODES: ClassVar[dict[str, str | Callable[[], Screen]]] = {
        name: partial(_screen, name) for name in STEPS
    }
    DEFAULT_MODE = "start"
    # Screens get -narrow / -wide and -short / -tall classes: 80x24 stays usable, 120x40 roomy.
    # (Textual declares these as plain lists on App; a ClassVar annotation would clash with mypy.)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # noqa: RUF012
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # noqa: RUF012
    COMMANDS = App.COMMANDS | {WizardCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        # The step keys are shown (and clickable) in each screen's step bar, not in the footer.
        # Keys that move focus or change the screen are priority bindings: the app handles them
        # before it forwards the next key, so `2<Tab>2` typed at machine speed (a paste, a macro)
        # lands in two fields in that order, and keys typed after F4 reach the new screen.
        Binding("f1", "goto('start')", "Start", show=False, priority=True),
        Binding("f2", "goto('model')", "Model", show=False, priority=True),
        Binding("f3", "goto('algorithm')", "Algorithm", show=False, priority=True),
        Binding("f4", "goto('parameters')", "Parameters", show=False, priority=True),
        Binding("f5", "goto('review')", "Review", show=False, priority=True),
        Binding("ctrl+n", "step(1)", "Next", priority=True),
        Binding("ctrl+b", "step(-1)", "Back", show=False, priority=True),
        Binding("tab", "focus_next", "Next field", show=False, priority=True),
        Binding("shift+tab", "focus_previous", "Previous field", show=False, priority=True),
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+o", "open_profile", "Open", show=False),
        Binding("ctrl+t", "toggle_dark", "Theme", show=False),
        Binding("ctrl+z", "undo", "Undo", show=False),
        # `?` opens the keys panel from anywhere, a field with its text selected included; it is
        # typed only inside free text being edited (`screens.keys.types_question_mark`).
        Binding("question_mark", "keys", "Keys", show=False, priority=True),
        Binding("f7", "runs", "Runs", show=False),
        Binding("f8", "screenshot_here", "Screenshot", show=False),
    ]

    def __init__(
        self,
        *,
        initial: Profile | None = None,
        initial_name: str | None = None,
        ready_dir: Path | None = None,
        ssh_settings: Any = None,
        agent_python: str = "python3",
        remote_runs_root: str | None = None,
    ) -> None:
        super().__init__()
        install_meta_digits()  # M-1 from tmux / xterm is alt+1, not a macOS Option character
        self._key_gate = KeyGate(self, super().post_message)
        # Launch screen: how to reach hosts (None = the user's ~/.ssh/config, agent, known_hosts).
        self.ssh_settings = ssh_settings
        self.agent_python = agent_python
        self.remote_runs_root = remote_runs_root
        self.trusted_keys: set[str] = set()
        # Model facts read on the GPU host (F6), by model path: the check uses them instead of a
        # local config.json that does not exist on the jump host.
        self.remote_facts: dict[str, Any] = {}
        self.ready_dir = ready_dir or builtin_profiles_dir()
        self.animation_level = "none" if self.is_headless else self.animation_level
        self.input_problems: dict[str, str] = {}
        self.profile_name: str | None = initial_name
        self.profile_path: Path | None = None
        # The profile as last opened or saved (None: never saved, e.g. an imported command);
        # `dirty` compares against it, so typing the saved value back clears the `*`.
        self.baseline: Profile | None = initial
        self._saved_early: set[Path] = set()
        self.history: History[Profile] = History()  # ctrl+z: typing runs and fixes
        # Started without a profile (the `sglang-wizard` command): the first screen comes up
        # before the profile model (pydantic) and the rule engine are imported; a thread loads
        # the first profile and checks it once the screen is painted. Whatever needs the profile
        # before that loads it at once (`profile`).
        self.checking = initial is None
        self._profile: Profile | None = initial
        self._first: FirstProfile | None = None
        self._first_lock = threading.Lock()
        self._candidates = self._first_candidates() if initial is None else []
        if self._candidates:  # the name shown while loading; the loader confirms it
            self.profile_name = self._candidates[0].stem
        self.report: Report | None = None
        self.core_problem: str | None = "Checking the profile…" if self.checking else None
        if initial is not None:
            self.report = self._check(initial)

    @property
    def profile(self) -> Profile:
        """The current profile (the first one is loaded here if the start-up thread has not)."""
        if self._profile is None:
            self._adopt_first(self._load_first())
        assert self._profile is not None
        return self._profile

    @profile.setter
    def profile(self, profile: Profile) -> None:
        self._profile = profile

    @property
    def dirty(self) -> bool:
        """The profile differs from what was last opened or saved (the step bar's `*`)."""
        if self._profile is None:
            return False
        return self.baseline is None or self._profile != self.baseline

    def post_message(self, message: Any) -> bool:
        """Keys from the terminal (or a test) go through the key gate: one at a time, each
        after the previous one has settled (`screens.keys.KeyGate`)."""
        if (
            isinstance(message, events.Key)
            and not message.is_forwarded
            and not getattr(message, "_gated", False)
        ):
            message._gated = True  # type: ignore[attr-defined]
            if threading.get_ident() != self._thread_id and self._loop is not None:
                self._loop.call_soon_threadsafe(self._key_gate.offer, message)
                return True
            return self._key_gate.offer(message)
        return super().post_message(message)

    @property
    def loading(self) -> bool:
        """The first profile is not loaded yet (screens show its name and "loading")."""
        return self._profile is None

    def on_mount(self) -> None:
        """Leave when the terminal goes away (ssh dropped, tmux pane killed) instead of spinning
        without one; unsaved edits are lost either way, saved profiles never are."""
        with contextlib.suppress(NotImplementedError, RuntimeError, AttributeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.exit)
        # A child of `make` or a shell may not get the SIGHUP: watch the terminal itself.
        if not self.is_headless and _stdin_is_tty():
            self.set_interval(2.0, self._exit_without_terminal)

    def on_ready(self) -> None:
        """The first screen is painted: now load and check the first profile (a thread; a
        profile the UI has loaded already is only checked)."""
        if self.checking:
            self._first_check()

    @work(thread=True, exclusive=True, group="first-check")
    def _first_check(self) -> None:
        """Load and check the first profile off the UI thread (see `__init__`)."""
        first = self._load_first()
        try:
            report: Report | None = core.check_profile(first.profile)
            problem: Exception | None = None
        except Exception as exc:  # shown by _first_report, never raised
            report, problem = None, exc
        self.call_from_thread(self._first_report, first, report, problem)

    def _first_report(
        self, first: FirstProfile, report: Report | None, problem: Exception | None
    ) -> None:
        self.checking = False
        self._adopt_first(first)
        profile = first.profile
        if profile is not self.profile:  # edited or replaced meanwhile: that path checked it
            return
        if problem is not None:
            self.report = self._check(profile)  # the same error, reported the usual way
        else:
            self.report, self.core_problem = report, None
        self.screen.post_message(ProfileChanged(self.profile, self.report))

    def _exit_without_terminal(self) -> None:
        if not _stdin_is_tty():
            self.exit()

    # ---------------------------------------------------------------- profile state

    def _first_candidates(self) -> list[Path]:
        """The newest saved profile, then the ready example, then the other ready profiles."""
        candidates = list_profiles()
        example = self.ready_dir / f"{EXAMPLE_PROFILE}.toml"
        if example.is_file():
            candidates.append(example)
        return candidates + self.ready_profiles()

    def _load_first(self) -> FirstProfile:
        """The first candidate that loads (else an empty new profile); loaded once, by the
        start-up thread or the UI, whichever asks first."""
        with self._first_lock:
            if self._first is None:
                from wizard.profile import load_profile
                from wizard.profile_problems import ProfileError

                errors: list[str] = []
                for path in self._candidates:
                    try:
                        self._first = FirstProfile(load_profile(path), path.stem, path, errors)
                        break
                    except ProfileError as exc:
                        errors.append(str(exc))
                else:
                    self._first = FirstProfile(new_profile(), None, None, errors)
            return self._first

    def _adopt_first(self, first: FirstProfile) -> None:
        """Make the loaded first profile current unless the user has opened another meanwhile,
        and report the candidates that did not load (UI thread; once)."""
        if self._first_adopted:
            return
        self._first_adopted = True
        for error in first.errors:
            self.notify(error, title="Profile not loaded", severity="error")
        if self._profile is None:
            self._profile = first.profile
            self.profile_name, self.profile_path = first.name, first.path
            self.baseline = first.profile

    _first_adopted = False

    def ready_profiles(self) -> list[Path]:
        """The ready profiles shipped with the project."""
        return sorted(self.ready_dir.glob("*.toml")) if self.ready_dir.is_dir() else []

    async def connect_host(
        self,
        target: str,
        jumps: list[str] | None,
        runs_root: str | None = None,
        settings: Any = None,
    ) -> Any:
        """Connect to a GPU host with `wizard.remote`, asking before trusting an unknown host key.

        `settings` (how a run or profile reaches its host) is used when the app was not given
        its own. Call from a worker (the trust question waits for an answer). Raises the remote
        errors.
        """
        while True:
            try:
                return await remote.RemoteHost.connect(
                    target,
                    jumps=jumps,
                    settings=self.ssh_settings or settings,
                    policy=remote.HostKeyPolicy(trusted_fingerprints=set(self.trusted_keys)),
                    agent_python=self.agent_python,
                    runs_root=runs_root or self.remote_runs_root,
                )
            except remote.UnknownHostKeyError as exc:
                if not await self.confirm_host_key(exc):
                    raise
                self.trusted_keys.add(exc.fingerprint)

    async def confirm_host_key(self, exc: Any) -> bool:
        """Ask whether to trust an unknown host key (`UnknownHostKeyError`); call from a worker."""
        from screens.dialogs import ConfirmDialog

        question = (
            f"The host key of {exc.host}:{exc.port} is not known:\n\n  {exc.key_type} "
            f"{exc.fingerprint}\n\nCompare it with the host administrator's. Trust it "
            "and add it to known_hosts?"
        )
        answer: bool = await self.push_screen_wait(ConfirmDialog(question))
        return answer

    def facts_for(self, path: str) -> Any:
        """`ModelFacts` of a local model folder (the core caches by path and mtime)."""
        return core.model_facts(path)

    def _check(self, profile: Profile) -> Report | None:
        """Run the rule engine; a failure becomes a notification, never a traceback."""
        self.checking = False
        try:
            report = core.check_profile(profile, facts=self.remote_facts.get(profile.model.path))
        except Exception as exc:  # the engine must never take the UI down
            self.core_problem = f"Rule engine failed: {type(exc).__name__}: {exc}"
            self.notify(self.core_problem, title="Check failed", severity="error")
            return None
        self.core_problem = None
        return report

    def set_profile(
        self, profile: Profile, *, name: str | None = None, path: Path | None = None
    ) -> None:
        """Replace the current profile (opened, imported or new) and re-check it."""
        self.input_problems.clear()
        self.history.clear()
        self.profile_name = name
        self.profile_path = path
        protected, moved = self._protect_secrets(profile, "The command")
        # An imported command is unsaved work; an empty new profile is not (yet); a profile whose
        # literal secret became a reference must be saved again.
        unsaved = bool(moved) or (path is None and protected != new_profile())
        self.baseline = None if unsaved else protected
        self._update(protected)
        self.post_message(ProfileOpened(path, name))

    def _protect_secrets(self, profile: Profile, source: str) -> tuple[Profile, list[str]]:
        """Literal secrets (env vars like HF_TOKEN, `--api-key` values in extra args) become
        references to a variable (`wizard.profile.protect_secrets`), and the user is told: the
        value is never kept, shown or saved."""
        from wizard.profile import protect_secrets
        from wizard.sglang.render import profile_secret_option_of

        protected, moved = protect_secrets(profile)
        if not moved:
            return profile, moved
        refs = [f"${reference_name(v)}" for k, v in protected.env.items() if k in moved]
        option_of = profile_secret_option_of(protected)
        refs += [f"{option} ${var}" for option, var
                 in argv_references(protected.extra_args, option_of) if option in moved]
        self.notify(
            f"{source} had a literal {', '.join(moved)}: the profile keeps a reference "
            f"({', '.join(refs) or 'env:NAME'}, read from this environment at launch), never "
            "the value.",
            title="Secret not stored",
            severity="warning",
            timeout=10,
        )
        return protected, moved

    def remember_remote_facts(self, path: str, facts: Any) -> None:
        """Use facts read on the GPU host for `path` from now on, and re-check the profile."""
        self.remote_facts[path] = facts
        self._update(self.profile)

    def _update(
        self, profile: Profile, typed: tuple[str, ...] = (), answered: tuple[str, ...] = ()
    ) -> None:
        self.profile = profile
        self.report = self._check(profile)
        self.screen.post_message(ProfileChanged(profile, self.report, typed, answered))

    @on(EditRequested)
    def _on_edit(self, message: EditRequested) -> None:
        for path in message.edits:
            self.input_problems.pop(path, None)
        from pydantic import ValidationError

        from wizard.profile_problems import problems_from_validation

        try:
            profile = self.profile.with_edits(message.edits)
        except ValidationError as exc:
            for problem in problems_from_validation(exc):
                key = problem.key or next(iter(message.edits), "profile")
                path = next((p for p in message.edits if key.startswith(p)), key)
                self.input_problems[path] = problem.message
            self.screen.post_message(ProfileChanged(self.profile, self.report, tuple(message.raw)))
            return
        except KeyError as exc:
            self.notify(f"Unknown profile field {exc}", severity="error")
            return
        secret_fields = {"env", "extra_args"} & set(message.edits)
        if secret_fields and message.final:
            source = "Env vars" if "env" in secret_fields else "Extra args"
            profile, moved = self._protect_secrets(profile, source)
            if moved:  # the input shows the reference now, not the typed value
                self._remember_edit(message)
                self._update(profile, tuple(p for p in message.raw if p not in secret_fields),
                             tuple(sorted(secret_fields)))
                return
        if profile != self.profile:
            self._remember_edit(message)
        self._update(profile, tuple(message.raw))

    def _remember_edit(self, message: EditRequested) -> None:
        """Keep the profile before this edit for ctrl+z: typing in one field is one step."""
        paths = tuple(message.edits)
        what = ", ".join(label_for(p) for p in paths)
        typed = len(paths) == 1 and any(
            getattr(field, "path", None) == paths[0] for field in self.screen.query("FieldInput")
        )  # keys typed into one field merge; a choice from a list is a step of its own
        run = f"typing:{paths[0]}" if typed else None
        self.history.record(self.profile, f"the change of {what}", run)

    @on(ModelFactsRead)
    def _on_facts_read(self, message: ModelFactsRead) -> None:
        if message.path in (self.profile.model.path, self.profile.speculative.draft_model_path):
            self._update(self.profile)

    @on(RemoteFactsRead)
    def _on_remote_facts(self, message: RemoteFactsRead) -> None:
        self.remember_remote_facts(message.path, message.facts)

    @on(ProfileReplaced)
    def _on_replaced(self, message: ProfileReplaced) -> None:
        self.set_profile(message.profile, name=message.name, path=message.path)

    @on(StepRequested)
    def _on_step_requested(self, message: StepRequested) -> None:
        self.show_step(message.step)

    @on(OpenRequested)
    def _on_open_requested(self, message: OpenRequested) -> None:
        step = message.then_step
        self.open_path(message.path, None if step is None else partial(self.show_step, step))

    @on(NewProfileRequested)
    def _on_new_requested(self, _message: NewProfileRequested) -> None:
        self.action_new_profile()

    @on(ImportRequested)
    def _on_import_requested(self, _message: ImportRequested) -> None:
        self.action_import_command()

    @on(VersionSwitchRequested)
    def _on_version_requested(self, message: VersionSwitchRequested) -> None:
        self.action_switch_version(message.version)

    @on(InputRejected)
    def _on_rejected(self, message: InputRejected) -> None:
        for path in message.paths:
            self.input_problems.pop(path, None)
        self.input_problems.update(message.problems)
        self.screen.post_message(ProfileChanged(self.profile, self.report, message.paths))

    @on(FixRequested)
    def _on_fix(self, message: FixRequested) -> None:
        from pydantic import ValidationError

        try:
            profile = core.apply_fix(self.profile, message.fix)
        except (ValidationError, ValueError, KeyError) as exc:
            self.notify(str(exc), title="Fix not applied", severity="error")
            return
        for path in message.fix.edits:
            self.input_problems.pop(path, None)
        self.history.record(self.profile, f"the fix {message.fix.label!r}")
        self.notify(f"{message.fix.label} (ctrl+z undoes it)", title=f"Fix applied ({message.rule})")
        self._update(profile)

    def action_undo(self) -> None:
        """Undo the last change (ctrl+z): a run of typing in one field, a choice, or a fix."""
        step = self.history.undo()
        if step is None:
            self.notify("Nothing to undo.", severity="warning")
            return
        self.input_problems.clear()
        for field in self.screen.query("FieldInput"):
            field.pending = 0  # type: ignore[attr-defined]  # the undone text is not waited for
        self._update(step.before)
        self.notify(f"Undid {step.what}.")

    def action_undo_fix(self) -> None:
        """The former name of `action_undo` (ctrl+z undoes typing too now)."""
        self.action_undo()

    def action_keys(self) -> None:
        """Show or hide the keys of the current screen (`?`, from anywhere; inside free text
        being edited `?` is typed instead: `screens.keys.types_question_mark`)."""
        from textual.widgets import HelpPanel

        if types_question_mark(self.focused):
            raise SkipAction()

        if self.screen.query(HelpPanel):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    @on(ProfileSaved)
    def _on_saved(self, message: ProfileSaved) -> None:
        if message.path in self._saved_early:
            self._saved_early.discard(message.path)
            return
        self._mark_saved(message.path)
        self.screen.post_message(ProfileChanged(self.profile, self.report))

    def _mark_saved(self, path: Path) -> None:
        self.profile_path = path
        self.profile_name = path.stem
        self.baseline = self.profile

    # ---------------------------------------------------------------- navigation and actions

    async def action_goto(self, step: str) -> None:
        """Show a wizard step, focused on its first useful widget.

        Awaited: keys typed right after the step key wait until the step is mounted and focused,
        so none is dropped or lands on the previous step."""
        if step not in STEPS or self.current_mode == step:
            return
        if isinstance(self.screen, ModalScreen):  # a dialog answers first
            return
        await self.switch_mode(step)
        focus_first = getattr(self.screen, "focus_first", None)
        if focus_first is not None:  # before the next key is forwarded
            focus_first()

    def show_step(self, step: str) -> None:
        """Go to a step from synchronous code (a dialog's result, a palette command)."""
        self.call_later(self.action_goto, step)

    async def action_step(self, delta: int) -> None:
        """Next (+1) or previous (-1) wizard step."""
        names = list(STEPS)
        index = names.index(self.current_mode) if self.current_mode in names else 0
        await self.action_goto(names[max(0, min(len(names) - 1, index + delta))])

    def action_save(self, then: Callable[[], object] | None = None) -> None:
        """Save the current profile as TOML (asks for a name); `then` runs once it is saved."""
        from screens.dialogs import SaveProfileDialog

        def saved(path: Path | None) -> None:
            if path is not None and then is not None:
                # Mark it saved now: `then` may open another profile before ProfileSaved arrives.
                self._mark_saved(path)
                self._saved_early.add(path)
                then()

        self.push_screen(SaveProfileDialog(self.profile, self.profile_name), saved)

    def unless_unsaved(self, doing: str, then: Callable[[], object]) -> None:
        """Run `then` (which replaces or drops the profile) once unsaved changes are saved or
        discarded; with nothing unsaved at once. Cancel keeps everything as it is."""
        from screens.dialogs import UnsavedDialog

        if not self.dirty:
            then()
            return

        def answered(answer: str | None) -> None:
            if answer == "save":
                self.action_save(then)
            elif answer == "discard":
                then()

        self.push_screen(UnsavedDialog(self.profile_name, doing), answered)

    async def action_quit(self) -> None:
        """Quit (asks first when the profile has unsaved changes)."""
        self.unless_unsaved("quit", self.exit)

    def action_open_profile(self) -> None:
        """Go to the start screen's profile list."""
        self.show_step("start")
        self.call_later(self._focus_profile_list)

    def _focus_profile_list(self) -> None:
        from textual.widgets import OptionList

        with contextlib.suppress(Exception):
            self.screen.query_one("#profile-list", OptionList).focus()

    def action_import_command(self) -> None:
        """Paste a `python -m sglang.launch_server ...` line to import it (asks first when the
        current profile has unsaved changes)."""
        from screens.dialogs import ImportCommandDialog

        self.unless_unsaved(
            "import a command",
            # The command's version is the default, not the version of the profile it replaces.
            lambda: self.push_screen(ImportCommandDialog(None)),
        )

    def action_new_profile(self) -> None:
        """Start an empty profile on the Model step (asks first about unsaved changes)."""

        def start_new() -> None:
            self.set_profile(new_profile())
            self.show_step("model")

        self.unless_unsaved("start a new profile", start_new)

    def action_export_yaml(self) -> None:
        """Write SGLang `--config` YAML for the current profile."""
        from screens.dialogs import ExportYamlDialog

        self.push_screen(ExportYamlDialog(self.profile, self.profile_name))

    def action_switch_version(self, version: str) -> None:
        """Check the profile against another SGLang version."""
        self.post_message(EditRequested({"sglang_version": version}, {"sglang_version": version}))
        self.notify(f"Checking against SGLang {version}")

    def action_runs(self) -> None:
        """Runs launched from this machine: re-attach to a log, stop a run."""
        from screens.runs import RunsScreen

        if not isinstance(self.screen, RunsScreen):
            self.push_screen(RunsScreen())

    def action_toggle_dark(self) -> None:
        """Switch between the dark and the light theme."""
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def action_screenshot_here(self) -> None:
        """Save an SVG screenshot of the current screen in the exports dir (named in the message):
        only the user can read it (0600), and a literal secret still in the profile (typed but
        not yet turned into a reference) is masked in it."""
        from wizard.files import write_text
        from wizard.profile import exports_dir, profile_literal_secrets

        folder = exports_dir()
        stem = f"{self.title} {dt.datetime.now().isoformat()}"  # Textual's own naming
        path = folder / (re.sub(r'[ <>:"/\\|?*.]', "_", stem) + ".svg")
        values = [v for v in profile_literal_secrets(self.profile) if len(v) >= 4]
        # the SVG holds the text HTML-escaped, spaces as &#160; (rich's export_svg)
        values += [html.escape(v).replace(" ", "&#160;") for v in values]
        svg = mask_text(self.export_screenshot(), values)
        try:
            written = write_text(path, svg)
        except OSError as exc:
            self.notify(f"{folder}: {exc}", title="Screenshot not saved", severity="error")
            return
        self.notify(str(written), title="Screenshot saved")

    def open_path(self, path: Path, then: Callable[[], object] | None = None) -> None:
        """Load a profile file and make it current (asks first about unsaved changes; errors
        become notifications); `then` runs once it is open."""

        def load() -> None:
            from wizard.profile import load_profile
            from wizard.profile_problems import ProfileError

            try:
                profile = load_profile(path)
            except ProfileError as exc:
                self.notify(str(exc), title="Profile not loaded", severity="error", timeout=10)
                return
            self.set_profile(profile, name=path.stem, path=path)
            self.notify(str(path), title=f"Opened {path.stem}")
            if then is not None:
                then()

        if path == self.profile_path and not self.dirty:
            load()
            return
        self.unless_unsaved(f"open {path.stem}", load)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Command palette: the app's own actions, then Textual's (theme, quit, keys)."""
        yield SystemCommand(
            "Import command", "Paste a launch_server command", self.action_import_command
        )
        yield SystemCommand(
            "Export SGLang --config YAML", "Write the profile as YAML", self.action_export_yaml
        )
        yield SystemCommand("Save profile", "Save as TOML in the profiles dir", self.action_save)
        yield SystemCommand("Open profile", "Recent and ready profiles", self.action_open_profile)
        yield SystemCommand("Runs", "Runs launched from here: log, stop", self.action_runs)
        yield SystemCommand(
            "Screenshot", "Save an SVG of this screen (exports dir)", self.action_screenshot_here
        )
        yield SystemCommand("Toggle dark / light", "Switch the theme", self.action_toggle_dark)
        for name, title in STEPS.items():
            yield SystemCommand(
                f"Go to {title}", f"Wizard step {title}", lambda n=name: self.show_step(n)
            )
        yield from super().get_system_commands(screen)


def _state(app: WizardApp) -> WizardState:
    """The app is the state the screens read (mypy checks every member of `WizardState`)."""
    return app


class FirstProfile(NamedTuple):
    """The profile the app starts with, where it came from, and the candidates that failed."""

    profile: Profile
    name: str | None
    path: Path | None
    errors: list[str]


def new_profile() -> Profile:
    """A fresh profile (the model path is a placeholder the Model screen asks for)."""
    from wizard.profile_schema import ModelSection, Profile

    return Profile(model=ModelSection(path="./model"))


def _stdin_is_tty() -> bool:
    """The controlling terminal still answers (after a hang-up termios fails with EIO)."""
    import termios

    stream = sys.__stdin__
    if stream is None:
        return False
    try:
        termios.tcgetattr(stream.fileno())
    except (termios.error, OSError, ValueError):
        return False
    return True


def run_app() -> int:
    """Start the wizard; returns the process exit code."""
    result = WizardApp().run()
    return int(result or 0)
