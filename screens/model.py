"""Step 2, Model: model path, SGLang version, GPU kind and count, and the model card."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static
from textual.worker import get_current_worker

from screens import core
from screens.base import WizardScreen
from screens.dialogs import DIALOG_CSS
from screens.forms import LABELS, FieldInput, OrderedInput
from screens.launch import host_target
from screens.messages import EditRequested, ModelFactsRead, RemoteFactsRead
from screens.model_picker import DraftPick, DraftPicker, ModelPathSuggester, ModelPick, ModelPicker
from screens.widgets.memory import memory_bar
from wizard.profile_schema import Profile
from wizard.rules.report import Report

# the labels the Model step shows (undo and the findings name fields by them)
for _path, _label in (("model.path", "Model path"), ("sglang_version", "SGLang"),
                      ("gpu.kind", "GPU kind"), ("gpu.count", "GPU count"),
                      ("ssh.host", "SSH host"), ("container.image", "Container")):
    LABELS.setdefault(_path, _label)


def _size(value: int | None, unit: str = "") -> str:
    if value is None:
        return "unknown"
    for factor, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= factor:
            return f"{value / factor:.1f}{suffix}{unit}"
    return f"{value}{unit}"


def model_card(facts: Any) -> Content:
    """Architecture, MTP layers, hybrid layers, MoE, quantization and size of a checkpoint."""
    origin = str(getattr(facts, "origin", "local"))
    rows: list[tuple[str, str]] = []
    if origin != "local":  # a local folder is the path in the form; say where the rest came from
        if origin == "example":  # source says it all: the path is not here, the config is shipped
            rows.append(("read from", str(facts.source)))
        else:
            where = "Hugging Face Hub" if origin == "hub" else "GPU host"
            rows.append(("read from", f"{facts.source} ({where})"))
    rows += [
        ("architecture", facts.architecture or "unknown"),
        ("family", str(facts.family)),
        ("layers", str(facts.num_layers)),
        ("MTP layers", f"{facts.mtp_layers} (built-in draft head)" if facts.mtp_layers else "none"),
    ]
    if facts.hybrid is not None:
        rows.append(
            (
                "hybrid",
                f"{facts.hybrid.linear_layers} linear-attention + {facts.hybrid.full_layers} full-attention layers",
            )
        )
    if facts.moe is not None:
        rows.append(
            ("MoE", f"{facts.moe.experts} experts, {facts.moe.active_experts} active per token")
        )
    rows.append(("attention", str(facts.attention)))
    quant = facts.quant.scheme if getattr(facts, "quant", None) else facts.quantization
    rows.append(("quantization", quant or f"none ({facts.dtype or 'dtype unknown'})"))
    params = _size(facts.params_total)
    if facts.params_active and facts.params_active != facts.params_total:
        params += f" ({_size(facts.params_active)} active)"
    rows.append(("parameters", f"{params} [{facts.params_source}]"))
    if facts.checkpoint_bytes:
        rows.append(("checkpoint", f"{facts.checkpoint_bytes / 2**30:.1f} GiB"))
    if facts.context_length:
        rows.append(("context", str(facts.context_length)))
    if facts.is_eagle3_draft or facts.is_eagle_draft:
        rows.append(("draft", "EAGLE-3 draft" if facts.is_eagle3_draft else "EAGLE draft"))
    parts: list[Content | tuple[str, str] | str] = []
    for label, value in rows:
        parts += [(f"{label:<13}", "$text-muted"), value, "\n"]
    for note in facts.notes:
        parts += [("note ", "$warning"), str(note), "\n"]
    return Content.assemble(*parts)


def _is_repo_id(path: str) -> bool:
    return core.is_repo_id(path)


def build_card(profile: Profile, bar_width: int = 40) -> Content:
    """The model card and, when the GPU is known, the memory plan (errors become text)."""
    try:
        facts = core.model_facts(profile.model.path, profile.model.revision)
    except Exception as exc:  # unreadable folder, bad config.json, Hub errors: shown, never raised
        hub = _is_repo_id(profile.model.path)
        return Content.assemble(
            ("Cannot read the model from the Hub: " if hub else "Cannot read the model here: ",
             "bold $warning"),
            str(exc),
            (f"\n\nF6 reads it on {profile.ssh.host}." if profile.ssh.host else "", "$accent"),
            (
                "\n\nNot computed: the memory plan and the architecture-dependent checks; they "
                "assume a generic model (not hybrid, no MTP, no MoE). To get them: "
                + ("do what the message says, then Ctrl+R." if hub else
                   "give a Hub id (ORG/NAME), a local folder (Ctrl+Y finds one) or F6 on the host."),
                "$text-muted",
            ),
        )
    parts: list[Content | str | tuple[str, str]] = [model_card(facts)]
    draft = None
    if profile.speculative.draft_model_path:
        try:
            draft = core.model_facts(
                profile.speculative.draft_model_path, profile.speculative.draft_model_revision
            )
        except Exception as exc:
            parts += ["\n", ("Draft: ", "bold $warning"), str(exc), "\n"]
    try:
        plan = core.plan_memory(profile, facts, draft)
    except Exception as exc:
        parts += ["\n", ("Memory: ", "bold $warning"), str(exc)]
    else:
        if plan is None:
            parts += ["\n", ("Choose the GPU kind to see the memory plan.", "$text-muted")]
        else:
            parts += ["\n", ("Memory per GPU", "bold"), "\n", memory_bar(plan, bar_width)]
    return Content.assemble(*parts)


class CustomGpuDialog(ModalScreen[str | None]):
    """Ask for a GPU the catalog does not list: its compute capability (NVIDIA) or gfx arch (AMD)
    and its memory; checked as typed, returns the kind's spec."""

    DEFAULT_CSS = DIALOG_CSS.format(name="CustomGpuDialog")
    AUTO_FOCUS = "#custom-gpu"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current: str | None) -> None:
        super().__init__()
        custom = current if current and current.lower().startswith("custom:") else ""
        self.initial = custom[len("custom:"):] if custom else ""

    def compose(self) -> ComposeResult:
        """The spec input, its problem and the examples."""
        with Vertical():
            yield Label("Custom GPU kind: compute capability (NVIDIA) or gfx arch (AMD) and memory")
            yield OrderedInput(self.initial, placeholder="sm=8.9,mem=48GB", id="custom-gpu")
            yield Static("", id="custom-gpu-error", classes="error")
            yield Static(
                "e.g. sm=8.6,mem=24564MiB,name=RTX A5000   arch=gfx942,mem=192GB   "
                "(MiB as nvidia-smi prints it, or GiB / GB; optional nvlink=yes, sms=N)",
                classes="hint",
            )
            with Horizontal(classes="buttons"):
                yield Button("Use it (enter)", id="custom-gpu-ok", variant="primary")
                yield Button("Cancel (esc)", id="custom-gpu-cancel")

    @on(Input.Changed, "#custom-gpu")
    def _check(self, event: Input.Changed) -> None:
        _, problem = core.custom_gpu_kind(event.value)
        self.query_one("#custom-gpu-error", Static).update(problem or "")

    @on(Input.Submitted, "#custom-gpu")
    @on(Button.Pressed, "#custom-gpu-ok")
    def action_submit(self) -> None:
        """Use the typed kind when it is valid; else say why and stay."""
        spec, problem = core.custom_gpu_kind(self.query_one("#custom-gpu", Input).value)
        if problem:
            self.query_one("#custom-gpu-error", Static).update(problem)
            return
        self.dismiss(spec)

    @on(Button.Pressed, "#custom-gpu-cancel")
    def action_cancel(self) -> None:
        """Keep the kind the profile has."""
        self.dismiss(None)


class ModelScreen(WizardScreen):
    """Which model, which SGLang, which GPUs."""

    STEP = "model"
    AUTO_FOCUS = "FieldInput"
    CSS_PATH = "model.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "reload_model", "Re-read model"),
        Binding("f6", "read_on_host", "Read on host"),
        Binding("ctrl+y", "find_model", "Find model"),
        Binding("f9", "find_draft", "Find draft"),
    ]

    def compose(self) -> ComposeResult:
        """Form on the left, the model card on the right."""
        yield self.step_bar()
        with Horizontal(id="model-body"):
            with VerticalScroll(id="model-form"):
                with Horizontal(classes="row"):
                    yield Label("Model path", classes="label")
                    yield FieldInput(
                        "model.path", "str", placeholder="/models/Qwen3.6-27B or org/name"
                    )
                with Horizontal(classes="row"):
                    yield Label("SGLang", classes="label")
                    profile = self.wizard.profile
                    versions = list(
                        dict.fromkeys([*core.supported_versions(), profile.sglang_version])
                    )
                    yield Select(
                        [(v, v) for v in versions],
                        value=profile.sglang_version,
                        allow_blank=False,
                        id="sglang-version",
                        compact=True,
                    )
                with Horizontal(classes="row"):
                    yield Label("GPU kind", classes="label")
                    yield Select(
                        self._gpu_options(profile.gpu.kind),
                        prompt="not set",
                        value=profile.gpu.kind or Select.NULL,
                        id="gpu-kind",
                        compact=True,
                    )
                with Horizontal(classes="row"):
                    yield Label("GPU count", classes="label")
                    yield FieldInput("gpu.count", "int", placeholder="not set")
                with Horizontal(classes="row"):
                    yield Label("TP", classes="label")
                    yield FieldInput("parallel.tp", "int", placeholder="1", id="model-tp")
                with Horizontal(classes="row"):
                    yield Label("SSH host", classes="label")
                    yield FieldInput("ssh.host", "str", placeholder="none: the model is local")
                with Horizontal(classes="row"):
                    yield Label("Container", classes="label")
                    yield FieldInput(
                        "container.image", "str", placeholder="none: the host's python",
                        tooltip="Run in a container: the image (an lmsysorg/sglang tag of the profile's release); "
                        "more keys in the profile's [container] table",
                    )
                yield Static(
                    "A folder is read here, a Hub id ORG/NAME from the Hub or HF cache (small "
                    "JSON files only); F6 reads it on the SSH host instead.",
                    classes="hint",
                )
            with VerticalScroll(id="model-card-box"):
                yield Static(id="model-card")
        yield self.footer()

    def on_mount(self) -> None:
        """Titles."""
        self.query_one("#model-form").border_title = "Model and hardware"
        self.query_one("#model-card-box").border_title = "Model card"
        self.query_one("#model-path", FieldInput).suggester = ModelPathSuggester()
        self._shown_path: str | None = None
        self._choices: dict[str, list[str]] = {
            "#sglang-version": list(
                dict.fromkeys([*core.supported_versions(), self.wizard.profile.sglang_version])
            ),
            "#gpu-kind": [value for _, value in core.gpu_choices()],
        }

    def sync(self, profile: Profile, report: Report | None) -> None:
        """Show the profile; re-read the model card when the path changed."""
        self.show_fields(profile)
        self._set_select("#sglang-version", profile.sglang_version)
        self._set_select("#gpu-kind", profile.gpu.kind)
        key = repr(
            (
                profile.model.path,
                profile.model.revision,
                profile.speculative.draft_model_path,
                profile.speculative.draft_model_revision,
                profile.speculative.algorithm,
                profile.gpu,
                profile.parallel.tp,
                profile.memory,
                profile.sglang_version,
            )
        )
        if key != self._shown_path:
            self._shown_path = key
            self.load_card(profile, self._bar_width())

    @staticmethod
    def _gpu_options(extra: str | None = None) -> list[tuple[str, str]]:
        """The catalog by family and the custom choice; a custom kind in use is listed first."""
        options = core.gpu_choices()
        if extra and extra not in {value for _, value in options}:
            options.insert(0, (core.gpu_label(extra), extra))
        return options

    def _set_select(self, selector: str, value: str | None) -> None:
        select: Select[str] = self.query_one(selector, Select)
        known = self._choices.setdefault(selector, [])
        if value is not None and value not in known:
            known.append(value)  # e.g. an opened profile names a version or GPU not listed yet
            with select.prevent(Select.Changed):
                if selector == "#gpu-kind":
                    select.set_options(self._gpu_options(value))
                else:
                    select.set_options([(v, v) for v in known])
        wanted: Any = Select.NULL if value is None else value
        if select.value != wanted:
            with select.prevent(Select.Changed):
                select.value = wanted

    @work(exclusive=True, thread=True, group="model-card")
    def load_card(self, profile: Profile, bar_width: int) -> None:
        """Read the model's config and plan memory in a thread so typing never waits on the disk
        (or the Hub: a Hub id is fetched here, then the app checks again with its facts)."""
        path = profile.model.path
        hub = _is_repo_id(path)
        if hub:
            self.app.call_from_thread(
                self.query_one("#model-card", Static).update,
                Content.styled(f"Reading {path} from the Hugging Face Hub (or the HF cache) …",
                               "$text-muted"),
            )
        card = build_card(profile, bar_width)
        if get_current_worker().is_cancelled:
            return  # the path changed while this one was read: a newer card is on its way
        self.app.call_from_thread(self.query_one("#model-card", Static).update, card)
        for name in (path, profile.speculative.draft_model_path):
            if name and _is_repo_id(name):
                self.post_message(ModelFactsRead(name))

    @work(exclusive=True, group="model-card")
    async def action_read_on_host(self, path: str | None = None) -> None:
        """Read the model folder (or a Hub id from the host's HF cache) on the profile's SSH host
        (through `wizard.remote`)."""
        profile = self.wizard.profile
        model_path = path or profile.model.path
        target = host_target(profile, "")
        card = self.query_one("#model-card", Static)
        if not target:
            card.update(Content.styled("Enter the SSH host first.", "$warning"))
            return
        card.update(f"Reading {model_path} on {target} …")
        host = None
        try:
            host = await self.wizard.connect_host(target, list(profile.ssh.jump) or None)
            facts = await core.read_remote_facts(host, model_path, dict(profile.env))
            self.app.post_message(RemoteFactsRead(model_path, facts))
            parts: list[Content | str | tuple[str, str]] = [
                (f"read on {target}\n", "$text-muted"),
                model_card(facts),
            ]
            plan = core.plan_memory(profile, facts, None)
            if plan is not None:
                parts += [
                    "\n",
                    ("Memory per GPU", "bold"),
                    "\n",
                    memory_bar(plan, self._bar_width()),
                ]
            card.update(Content.assemble(*parts))
        except Exception as exc:  # connection, missing folder, bad config.json: shown
            card.update(
                Content.assemble(
                    (f"Cannot read the model on {target}: ", "bold $warning"), str(exc)
                )
            )
        finally:
            if host is not None:
                await host.close()

    def action_find_model(self) -> None:
        """Find a model: this machine's HF cache, the GPU host's (over SSH), the Hub by name."""
        profile = self.wizard.profile
        host = profile.ssh.host
        lister = self._host_lister() if host else None
        name = profile.model.path.rstrip("/").split("/")[-1] if profile.model.path else ""
        self.app.push_screen(ModelPicker(name, host, lister), self._picked_model)

    def _host_lister(self) -> Any:
        profile = self.wizard.profile
        target = host_target(profile, "")

        async def list_host() -> list[dict[str, Any]]:
            host = await self.wizard.connect_host(target, list(profile.ssh.jump) or None)
            try:
                roots = {str(p).rsplit("/", 1)[0] for p in (profile.model.path,) if "/" in p}
                folders = sorted(r for r in roots if r.startswith("/"))
                return list(await host.list_models(folders, core.cache_env(dict(profile.env))))
            finally:
                await host.close()

        return list_host

    def _picked_model(self, pick: ModelPick | None) -> None:
        if pick is None:
            return
        self.post_message(EditRequested({"model.path": pick.value}, {"model.path": pick.value}))
        if pick.where == "host":
            self.action_read_on_host(pick.value)

    def action_find_draft(self) -> None:
        """Find an EAGLE / EAGLE3 draft for the model and show which ones fit before choosing."""
        profile = self.wizard.profile
        algorithm = (profile.speculative.algorithm or "").upper()
        if algorithm not in ("EAGLE", "EAGLE3"):
            algorithm = "EAGLE3"
            if profile.speculative.algorithm:
                self.notify(
                    f"{profile.speculative.algorithm} takes no EAGLE draft; showing EAGLE3 drafts",
                    title="Find draft",
                )
        self.app.push_screen(
            DraftPicker(profile.model.path, profile.model.revision, algorithm), self._picked_draft
        )

    def _picked_draft(self, pick: DraftPick | None) -> None:
        if pick is None:
            return
        edits: dict[str, Any] = {"speculative.draft_model_path": pick.repo_id}
        if self.wizard.profile.speculative.algorithm is None and pick.kind:
            edits["speculative.algorithm"] = pick.kind
        self.post_message(EditRequested(edits, {"speculative.draft_model_path": pick.repo_id}))

    def _bar_width(self) -> int:
        width = self.query_one("#model-card-box").content_size.width
        return max(16, min(60, (width or 42) - 2))

    def action_reload_model(self) -> None:
        """Read the model folder again (the core re-reads a changed config.json)."""
        self.load_card(self.wizard.profile, self._bar_width())

    @on(Select.Changed, "#sglang-version")
    def _version(self, event: Select.Changed) -> None:
        if event.value is not Select.NULL:
            self.post_message(
                EditRequested({"sglang_version": event.value}, {"sglang_version": str(event.value)})
            )

    @on(Select.Changed, "#gpu-kind")
    def _gpu(self, event: Select.Changed) -> None:
        value = None if event.value is Select.NULL else str(event.value)
        if value is not None and value.startswith(core.GPU_FAMILY_PREFIX):
            self._set_select("#gpu-kind", self.wizard.profile.gpu.kind)  # a header: no kind
            return
        if value == core.GPU_CUSTOM_CHOICE:
            current = self.wizard.profile.gpu.kind
            self._set_select("#gpu-kind", current)
            self.app.push_screen(CustomGpuDialog(current), self._custom_gpu)
            return
        self.post_message(EditRequested({"gpu.kind": value}, {"gpu.kind": str(value or "")}))

    def _custom_gpu(self, spec: str | None) -> None:
        if spec:
            self.post_message(EditRequested({"gpu.kind": spec}, {"gpu.kind": spec}, final=True))
