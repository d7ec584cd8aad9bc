"""Model selection dialogs: find a model (HF caches, GPU host, Hub search) and a fitting draft.

Both only render and dispatch: the lists come from the core through `screens.core` (in worker
threads, the Hub calls are synchronous) and, for the GPU host, from a lister the Model screen
passes in (it goes through `wizard.remote`). The chosen entry is the dialog's result.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from screens import core
from screens.forms import OrderedInput

PICKER_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{
    width: 100; max-width: 100%; height: 90%; border: thick $primary;
    background: $surface; padding: 0 1;
}}
{name} OptionList {{ height: 1fr; }}
{name} .status {{ color: $text-muted; height: auto; }}
"""

Where = Literal["cache", "hub", "host", "typed"]


@dataclass(frozen=True)
class ModelPick:
    """The chosen model: the path or repo id for `model.path`, and where it was found."""

    value: str
    where: Where


HostLister = Callable[[], Awaitable[list[dict[str, Any]]]]


class ModelPathSuggester(Suggester):
    """Completes a model path as typed: local folders, or repo ids of this machine's HF cache."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        """The first completion that extends `value`."""
        options = core.complete_model_path(value)
        return next((o for o in options if o.startswith(value) and o != value), None)


class ModelPicker(ModalScreen[ModelPick | None]):
    """Find a model: this machine's HF cache, the GPU host's cache and folders, the Hub by name."""

    DEFAULT_CSS = PICKER_CSS.format(name="ModelPicker")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, query: str = "", host: str | None = None,
                 list_host: HostLister | None = None) -> None:
        super().__init__()
        self.initial = query
        self.host = host
        self.list_host = list_host
        self._sections: dict[str, list[tuple[str, ModelPick]]] = {}
        self._status: dict[str, str] = {}
        self._titles: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        """Query input, result list, status line."""
        with Vertical():
            yield Label("Find a model: type a name and press Enter to search the Hub")
            yield OrderedInput(
                value=self.initial,
                placeholder="name to search, or a path / ORG/NAME to use as typed",
                id="model-query",
                suggester=ModelPathSuggester(),
            )
            yield OptionList(id="model-results")
            yield Static("", id="model-status", classes="status")

    def on_mount(self) -> None:
        """List the caches at once; the Hub is searched on Enter."""
        self._section("cache", "This machine's HF cache", [], "reading the HF cache …")
        self.load_cache()
        if self.list_host is not None and self.host:
            self._section("host", f"GPU host {self.host}", [], f"reading {self.host} …")
            self.load_host()

    def _section(self, key: str, title: str, rows: list[tuple[str, ModelPick]],
                 status: str) -> None:
        self._sections[key] = rows
        self._status[key] = status
        self._titles[key] = title
        self._refresh_list()

    def _refresh_list(self) -> None:
        options = self.query_one("#model-results", OptionList)
        options.clear_options()
        for key in ("typed", "cache", "host", "hub"):
            if key not in self._sections:
                continue
            rows = self._sections[key]
            options.add_option(Option(Content.styled(self._titles[key], "bold"), disabled=True))
            for index, (label, _pick) in enumerate(rows):
                options.add_option(Option("  " + label, id=f"{key}:{index}"))
            if not rows:
                options.add_option(Option(Content.styled("  " + self._status[key],
                                                         "$text-muted"), disabled=True))
        status = "  ".join(s for s in self._status.values() if s)
        self.query_one("#model-status", Static).update(
            (status + "\n" if status else "") + "Enter: search · ↓/↑ and Enter: choose · Esc: cancel"
        )

    @work(thread=True, exclusive=True, group="picker-cache")
    def load_cache(self) -> None:
        """This machine's HF cache (no network)."""
        try:
            models = core.cached_models()
            settings = core.hub_settings()
        except Exception as exc:  # an unreadable cache is shown, not raised
            self.app.call_from_thread(self._section, "cache", "This machine's HF cache", [],
                                      f"cannot read the HF cache: {exc}")
            return
        rows = [
            (m.repo_id + ("" if m.has_config else "  (no config.json: incomplete download)"),
             ModelPick(m.repo_id, "cache"))
            for m in models
        ]
        self.app.call_from_thread(
            self._section, "cache", f"This machine's HF cache ({settings['cache_dir']})", rows,
            "" if rows else "empty",
        )

    @work(exclusive=True, group="picker-host")
    async def load_host(self) -> None:
        """The GPU host's HF cache and model folders, through the Model screen's SSH lister."""
        assert self.list_host is not None
        title = f"GPU host {self.host}"
        try:
            found = await self.list_host()
        except Exception as exc:  # connection or agent errors are shown
            self._section("host", title, [], f"cannot list models on {self.host}: {exc}")
            return
        rows = [
            (f"{m['name']}" + ("  (HF cache)" if m.get("kind") == "cache" else ""),
             ModelPick(str(m["name"]), "host"))
            for m in found
        ]
        self._section("host", title, rows, "" if rows else "no models found")

    @on(Input.Submitted, "#model-query")
    def _search(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        typed: list[tuple[str, ModelPick]] = []
        if "/" in text or text.startswith(("~", ".")):
            typed = [(f"{text}  (use as typed)", ModelPick(text, "typed"))]
        if typed:
            self._section("typed", "Typed", typed, "")
        else:
            self._sections.pop("typed", None)
        self._section("hub", f"Hub search: {text}", [], f"searching the Hub for {text!r} …")
        self.search(text)

    @work(thread=True, exclusive=True, group="picker-search")
    def search(self, text: str) -> None:
        """Search the Hub by name (HF_ENDPOINT, token and offline mode as configured)."""
        try:
            found = core.search_hub(text)
        except Exception as exc:  # offline, unreachable, refused: the reason is shown
            self.app.call_from_thread(self._section, "hub", f"Hub search: {text}", [], str(exc))
            return
        rows = [(repo, ModelPick(repo, "hub")) for repo in found]
        self.app.call_from_thread(
            self._section, "hub", f"Hub search: {text}", rows, "" if rows else "nothing found"
        )

    @on(OptionList.OptionSelected, "#model-results")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        key, _, index = (event.option.id or "").partition(":")
        rows = self._sections.get(key)
        if rows is not None and index.isdigit() and int(index) < len(rows):
            self.dismiss(rows[int(index)][1])

    def action_cancel(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


@dataclass(frozen=True)
class DraftPick:
    """The chosen draft: repo id and its kind (`EAGLE` / `EAGLE3`, None when unknown)."""

    repo_id: str
    kind: str | None


class DraftPicker(ModalScreen[DraftPick | None]):
    """Drafts for the target found on the Hub (by name) and in the HF cache, with their fit."""

    DEFAULT_CSS = PICKER_CSS.format(name="DraftPicker")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, target: str, revision: str | None, algorithm: str) -> None:
        super().__init__()
        self.target = target
        self.revision = revision
        self.algorithm = algorithm
        self._candidates: list[Any] = []

    def compose(self) -> ComposeResult:
        """Title, candidates, status."""
        with Vertical():
            yield Label(f"{self.algorithm} drafts for {self.target}")
            yield OptionList(id="draft-results")
            yield Static(f"Looking for {self.algorithm} drafts of {self.target} …",
                         id="draft-status", classes="status")

    def on_mount(self) -> None:
        """Start looking."""
        self.find()

    @work(thread=True, exclusive=True, group="draft-picker")
    def find(self) -> None:
        """Read the target, find candidates, read each one's config and check the fit."""
        try:
            target = core.model_facts(self.target, self.revision)
            found = core.draft_candidates(self.target, target, self.algorithm)
        except Exception as exc:  # target unreadable, Hub unreachable: shown
            self.app.call_from_thread(self._show, [], f"Cannot look for drafts: {exc}")
            return
        fit = sum(1 for c in found if c.fits)
        why = (
            f"{len(found)} candidates, {fit} fit the target (hidden {target.hidden_size}, vocab "
            f"{target.vocab_size}, {self.algorithm} layout). Enter: choose · Esc: cancel"
        )
        if not found:
            why = (f"No {self.algorithm} draft found for {self.target} on the Hub or in the HF "
                   "cache; type a draft path on the Algorithm step instead.")
        self.app.call_from_thread(self._show, found, why)

    def _show(self, found: list[Any], status: str) -> None:
        self._candidates = found
        options = self.query_one("#draft-results", OptionList)
        options.clear_options()
        for index, c in enumerate(found):
            style = "$success" if c.fits else "$warning"
            options.add_option(Option(Content.assemble(
                ("fits " if c.fits else "no   ", f"bold {style}"),
                c.repo_id,
                (f" [{c.kind or 'not a draft'}] ({c.where})", "$text-muted"),
                ("\n      " + "; ".join(c.problems)) if c.problems else "",
            ), id=f"draft:{index}"))
        self.query_one("#draft-status", Static).update(status)
        if found:
            options.highlighted = 0
            options.focus()

    @on(OptionList.OptionSelected, "#draft-results")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        index = (event.option.id or "").partition(":")[2]
        if index.isdigit() and int(index) < len(self._candidates):
            c = self._candidates[int(index)]
            self.dismiss(DraftPick(c.repo_id, c.kind))

    def action_cancel(self) -> None:
        """Close without choosing."""
        self.dismiss(None)
