"""Step 1, Start: recent profiles, ready profiles, a new profile, or import a pasted command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from screens import core
from screens.base import WizardScreen
from screens.messages import ImportRequested, NewProfileRequested, OpenRequested, StepRequested
from screens.widgets.stepbar import VERDICT_STYLE
from wizard.profile_paths import list_profiles, profiles_dir
from wizard.rules.report import Report
from wizard.secrets import display_env
from wizard.verdict import verdict_of

if TYPE_CHECKING:
    from wizard.profile_schema import Profile

NEW = "new"
IMPORT = "import"
CURRENT = "current"


class StartScreen(WizardScreen):
    """Choose what to work on; the preview shows the highlighted profile and SGLang's verdict."""

    STEP = "start"
    AUTO_FOCUS = "#profile-list"
    CSS_PATH = "start.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_highlighted", "Open", show=True),
        Binding("n", "new_profile", "New"),
        Binding("i", "app.import_command", "Import command"),
        Binding("r", "reload", "Refresh", show=False),
    ]

    def compose(self) -> ComposeResult:
        """The list and the preview."""
        yield self.step_bar()
        with Horizontal(id="start-body"):
            yield OptionList(id="profile-list")
            with VerticalScroll(id="start-preview"):
                yield Static(id="preview")
        yield self.footer()

    def on_mount(self) -> None:
        """Fill the list."""
        self.query_one("#profile-list").border_title = "Profiles"
        self.query_one("#start-preview").border_title = "Preview"
        self.action_reload()

    def _continue_prompt(self) -> Content:
        name = self.wizard.profile_name or "the current profile"
        return Content.assemble("▶ Continue with ", (name, "bold"))

    def action_reload(self) -> None:
        """Re-read the profile directories."""
        listing = self.query_one("#profile-list", OptionList)
        app = self.wizard
        options: list[Option | None] = [
            Option(self._continue_prompt(), id=CURRENT),
            Option("+ New profile", id=NEW),
            Option("⇣ Import a launch_server command…", id=IMPORT),
            None,
            Option(
                Content.styled(f"Saved profiles  ({profiles_dir()})", "$text-muted"), disabled=True
            ),
        ]
        saved = list_profiles()
        options += [Option(f"  {p.stem}", id=f"saved:{p}") for p in saved]
        if not saved:
            options.append(
                Option(Content.styled("  none yet: ctrl+s saves one", "$text-muted"), disabled=True)
            )
        options.append(None)
        options.append(Option(Content.styled("Ready profiles", "$text-muted"), disabled=True))
        ready = app.ready_profiles()
        options += [Option(f"  {p.stem}", id=f"ready:{p}") for p in ready]
        highlighted = listing.highlighted
        listing.set_options(options)
        listing.highlighted = highlighted if highlighted is not None else 0
        listing.focus()

    def sync(self, profile: Profile, report: Report | None) -> None:
        """Refresh the "continue" entry and the preview."""
        listing = self.query_one("#profile-list", OptionList)
        prompt = self._continue_prompt()
        if listing.option_count and listing.get_option(CURRENT).prompt != prompt:
            listing.replace_option_prompt(CURRENT, prompt)
        self._preview(listing.highlighted_option.id if listing.highlighted_option else CURRENT)

    @on(OptionList.OptionHighlighted, "#profile-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._preview(event.option.id)

    @on(OptionList.OptionSelected, "#profile-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option.id)

    def action_open_highlighted(self) -> None:
        """Open the highlighted entry."""
        option = self.query_one("#profile-list", OptionList).highlighted_option
        if option is not None:
            self._open(option.id)

    def action_new_profile(self) -> None:
        """Start a new profile on the Model step (asks first about unsaved changes)."""
        self.app.post_message(NewProfileRequested())

    def on_screen_resume(self) -> None:
        """Re-read the lists (a profile saved on another step shows up here at once); Textual
        then runs `WizardScreen.on_screen_resume` (handlers are called along the MRO)."""
        self.action_reload()

    def _open(self, option_id: str | None) -> None:
        if option_id == CURRENT:
            self.app.post_message(StepRequested("parameters"))
        elif option_id == NEW:
            self.action_new_profile()
        elif option_id == IMPORT:
            self.app.post_message(ImportRequested())
        elif option_id and ":" in option_id:
            self.app.post_message(OpenRequested(Path(option_id.split(":", 1)[1]), "parameters"))

    def _preview(self, option_id: str | None) -> None:
        preview = self.query_one("#preview", Static)
        app = self.wizard
        if option_id == NEW:
            preview.update("Start from an empty profile: model path, SGLang version and GPU first.")
            return
        if option_id == IMPORT:
            preview.update(
                "Paste a whole `python -m sglang.launch_server ...` line (continuation backslashes "
                "and env assignments included); the wizard reads it into a profile and checks it."
            )
            return
        if option_id and ":" in option_id:
            from wizard.profile import load_profile
            from wizard.profile_problems import ProfileError

            path = Path(option_id.split(":", 1)[1])
            try:
                profile = load_profile(path)
            except ProfileError as exc:
                preview.update(Content.styled(str(exc), "$text-error"))
                return
            name = path.stem
            note: str | None = "Not checked (the rule engine failed on it)."
            try:
                report: Report | None = core.check_profile(profile)
            except Exception:
                report = None
        elif app.loading:  # the start-up thread answers with ProfileChanged
            preview.update(
                Content.assemble((app.profile_name or "profile", "bold"), ("\n\nloading…", "$text-muted"))
            )
            return
        else:
            profile, report, name = app.profile, app.report, app.profile_name or "unsaved profile"
            note = app.core_problem
        preview.update(describe(name, profile, report, note))


def describe(
    name: str, profile: Profile, report: Report | None, note: str | None = None
) -> Content:
    """A short summary of a profile and SGLang's verdict on it."""
    spec = profile.speculative
    parts: list[Content | tuple[str, str] | str] = [(name, "bold"), "\n"]
    if profile.description:
        parts += [(profile.description, "italic"), "\n"]
    trio = ", ".join(
        f"{label} {'auto' if value is None else value}"
        for label, value in (
            ("steps", spec.num_steps),
            ("topk", spec.eagle_topk),
            ("draft", spec.num_draft_tokens),
        )
    )
    kind = profile.gpu.kind
    if kind and kind.lower().startswith("custom:"):
        kind = core.gpu_label(kind)  # `custom sm89 48 GiB`, as the Model step shows it
    gpu = f"{profile.gpu.count or '?'} x {kind}" if kind else "not set"
    parts += [
        "\nmodel      ",
        profile.model.path,
        "\nSGLang     ",
        profile.sglang_version,
        "\nGPU        ",
        gpu,
        f", TP {profile.parallel.tp}",
        "\nalgorithm  ",
        spec.algorithm or "none",
    ]
    if spec.algorithm:
        parts += ["\ntrio       ", trio]
    if profile.env:
        shown = display_env(profile.env)
        parts += ["\nenv        ", " ".join(f"{k}={v}" for k, v in shown.items())]
    parts.append("\n\n")
    if report is None:
        parts.append((note or "Not checked (rule engine unavailable).", "$text-warning"))
    else:
        summary = verdict_of(report)
        parts.append((f"{summary.symbol} {summary.sentence}", VERDICT_STYLE[summary.kind]))
    parts += [
        "\n\n",
        ("Enter opens it; F2-F5 walk the steps; ctrl+p lists every command.", "$text-muted"),
    ]
    return Content.assemble(*parts)
