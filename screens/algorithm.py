"""Step 3, Algorithm: what the chosen SGLang offers, and what is available for this model and why."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from screens import core
from screens.base import WizardScreen
from screens.forms import FieldInput
from screens.messages import EditRequested
from wizard.profile_schema import Profile
from wizard.rules.report import Report

NONE = "none"


class AlgorithmScreen(WizardScreen):
    """Pick a speculative algorithm (or none) and, when it needs one, the draft model."""

    STEP = "algorithm"
    AUTO_FOCUS = "#algo-list"
    CSS_PATH = "algorithm.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "choose", "Choose", show=True),
        Binding("d", "focus_draft", "Draft path"),
    ]

    def compose(self) -> ComposeResult:
        """Algorithm list, details, draft path."""
        yield self.step_bar()
        with Horizontal(id="algo-body"):
            yield OptionList(id="algo-list")
            with Vertical(id="algo-side"):
                with VerticalScroll(id="algo-detail-box"):
                    yield Static(id="algo-detail")
                with Horizontal(classes="row", id="draft-row"):
                    yield Label("Draft model", classes="label")
                    yield FieldInput(
                        "speculative.draft_model_path",
                        "str",
                        placeholder="path of the draft checkpoint",
                    )
        yield self.footer()

    def on_mount(self) -> None:
        """Titles."""
        self.query_one("#algo-list").border_title = "Speculative algorithm"
        self.query_one("#algo-detail-box").border_title = "Details"
        self.options: list[Any] = []
        self._key: tuple[str, str | None, str, str | None] | None = None
        self._cursor: str | None = None  # the option the cursor is on (None: the chosen one)

    keys_wait = False
    """The choices are being read (a thread): keys wait for them (`screens.keys.KeyGate`), so
    `F3 Down Enter` sent at once moves from the profile's algorithm, not from an empty list."""

    def on_screen_resume(self) -> None:
        """Entering the step puts the cursor on the profile's algorithm (not where it was left
        for another profile). Runs before `WizardScreen.on_screen_resume` repaints."""
        self._cursor = None

    def sync(self, profile: Profile, report: Report | None) -> None:
        """Show the chosen algorithm; reload the choices when model, draft or version changed."""
        problems = self.wizard.input_problems
        draft = self.query_one(FieldInput)
        if draft.path not in problems and draft.path not in self.typed and not draft.pending:
            draft.show(profile.speculative.draft_model_path)
        draft.set_class(draft.path in problems, "-offending")
        key = (
            profile.model.path,
            profile.speculative.draft_model_path,
            profile.sglang_version,
            profile.speculative.token_map,
        )
        if key != self._key:
            self._key = key
            self.keys_wait = True
            self.load_options(profile)
        else:
            self._fill(self.options, None)

    @work(exclusive=True, thread=True, group="algorithms")
    def load_options(self, profile: Profile) -> None:
        """Read the model (and draft) facts off the UI thread, then ask the core what is available."""
        note: str | None = None
        options: list[Any] = []
        model, draft = profile.model.path, profile.speculative.draft_model_path
        try:
            target = _facts_or_none(self, model)
            draft_facts = _facts_or_none(self, draft) if draft else None
            options = core.algorithm_choices(profile, target, draft_facts)
            if target is None:
                note = "The model folder could not be read here: availability assumes nothing about it."
        except Exception as exc:
            note = f"Could not list the algorithms: {type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._fill, options, note)

    def _fill(self, options: list[Any], note: str | None) -> None:
        self.keys_wait = False
        self.options = options
        if note is not None:
            self._note = note
        listing = self.query_one("#algo-list", OptionList)
        current = self.wizard.profile.speculative.algorithm or NONE
        items = [
            Option(
                Content.assemble(
                    ("○ " if current != NONE else "● ", "bold"), "none (no speculative decoding)"
                ),
                id=NONE,
            )
        ]
        for option in options:
            mark = "● " if option.name == current else "○ "
            status = ("✓", "$text-success") if option.available else ("✗", "$text-error")
            items.append(
                Option(
                    Content.assemble(
                        (mark, "bold"),
                        (status[0] + " ", status[1]),
                        (f"{option.name:<11}", "bold"),
                        option.description,
                        (
                            "\n\u00a0\u00a0\u00a0\u00a0"
                            + (option.reason if option.reason != "ok" else "available"),
                            "$text-muted",
                        ),
                    ),
                    id=option.name,
                )
            )
        if current != NONE and all(o.name != current for o in options):
            items.append(
                Option(
                    Content.assemble(
                        ("● ", "bold"),
                        ("? ", "$text-warning"),
                        current,
                        "  (not offered by this version)",
                    ),
                    id=current,
                )
            )
        ids = [i.id for i in items]
        wanted = self._cursor if self._cursor in ids else current
        with listing.prevent(OptionList.OptionHighlighted):
            listing.set_options(items)
            listing.highlighted = ids.index(wanted) if wanted in ids else 0
        self._detail()

    @on(OptionList.OptionHighlighted, "#algo-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._cursor = event.option.id  # kept while the list is refilled on this visit
        self._detail()

    def _detail(self) -> None:
        listing = self.query_one("#algo-list", OptionList)
        option_id = listing.highlighted_option.id if listing.highlighted_option else NONE
        chosen = next((o for o in self.options if o.name == option_id), None)
        parts: list[Content | tuple[str, str] | str] = []
        if option_id == NONE:
            parts.append("Plain decoding: no draft, no speculative flags.")
        elif chosen is None:
            parts.append(f"{option_id} is not one of this SGLang version's algorithms.")
        else:
            parts += [(chosen.name, "bold"), "\n", chosen.description, "\n\n"]
            parts.append(
                (
                    "✓ available" if chosen.available else "✗ not available",
                    "bold $text-success" if chosen.available else "bold $text-error",
                )
            )
            if chosen.reason:
                parts += [": ", chosen.reason]
            if chosen.needs_draft:
                draft_path = self.wizard.profile.speculative.draft_model_path
                if draft_path:
                    parts += ["\n\n", ("Draft model: ", "bold"), draft_path, " (d changes it)"]
                else:
                    parts += ["\n\n", ("Needs a draft model: ", "bold"),
                              "enter its path below (d)."]
        note = getattr(self, "_note", None)
        if note:
            parts += ["\n\n", (note, "$text-warning")]
        parts += ["\n\n", ("Enter chooses; F4 goes on to the parameters.", "$text-muted")]
        self.query_one("#algo-detail", Static).update(Content.assemble(*parts))
        draft = self.query_one(FieldInput)
        # A field being typed in never vanishes (emptying it would drop focus and the next keys).
        self.query_one("#draft-row").display = bool(
            (chosen is not None and chosen.needs_draft)
            or self.wizard.profile.speculative.draft_model_path
            or draft.has_focus
            or draft.value
        )

    @on(OptionList.OptionSelected, "#algo-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option.id)

    def action_choose(self) -> None:
        """Choose the highlighted algorithm."""
        option = self.query_one("#algo-list", OptionList).highlighted_option
        if option is not None:
            self._choose(option.id)

    def _choose(self, option_id: str | None) -> None:
        self._cursor = None  # follows the chosen algorithm from now on
        value = None if option_id in (None, NONE) else option_id
        self.post_message(
            EditRequested({"speculative.algorithm": value}, {"speculative.algorithm": value or ""})
        )

    def action_focus_draft(self) -> None:
        """Focus the draft model path."""
        self.query_one("#draft-row").display = True
        self.query_one(FieldInput).focus()


def _facts_or_none(screen: AlgorithmScreen, path: str) -> Any:
    try:
        return core.model_facts(path)
    except Exception:
        return None
