"""Step 2, Model: model path, SGLang version, GPU kind and count, and the model card."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Label, Select, Static

from screens import core
from screens.base import WizardScreen
from screens.forms import FieldInput
from screens.messages import EditRequested
from screens.widgets.memory import memory_bar
from wizard.profile import Profile
from wizard.rules.report import Report


def _size(value: int | None, unit: str = "") -> str:
    if value is None:
        return "unknown"
    for factor, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= factor:
            return f"{value / factor:.1f}{suffix}{unit}"
    return f"{value}{unit}"


def model_card(facts: Any) -> Content:
    """Architecture, MTP layers, hybrid layers, MoE, quantization and size of a checkpoint."""
    rows: list[tuple[str, str]] = [
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


def build_card(profile: Profile, bar_width: int = 40) -> Content:
    """The model card and, when the GPU is known, the memory plan (errors become text)."""
    try:
        facts = core.model_facts(profile.model.path)
    except core.CoreUnavailable as exc:
        return Content.styled(f"Model inspection not available: {exc}", "$warning")
    except Exception as exc:  # unreadable folder, bad config.json: shown, never raised
        return Content.assemble(
            ("Cannot read the model here: ", "bold $warning"),
            str(exc),
            (f"\n\nF6 reads it on {profile.ssh.host}." if profile.ssh.host else "", "$accent"),
            (
                "\n\nMemory plan not computed: it needs the model's config.json. Point the model "
                "path at a local copy of the folder (config.json is enough), or set the SSH host "
                "and press F6 to read it on the GPU host.",
                "$text-warning",
            ),
            (
                "\n\nThe checks still run; rules that depend on the architecture assume a generic model.",
                "$text-muted",
            ),
        )
    parts: list[Content | str | tuple[str, str]] = [model_card(facts)]
    draft = None
    if profile.speculative.draft_model_path:
        try:
            draft = core.model_facts(profile.speculative.draft_model_path)
        except Exception as exc:
            parts += ["\n", ("Draft: ", "bold $warning"), str(exc), "\n"]
    try:
        plan = core.plan_memory(profile, facts, draft)
    except core.CoreUnavailable as exc:
        parts += ["\n", (f"Memory plan not available: {exc}", "$warning")]
    except Exception as exc:
        parts += ["\n", ("Memory: ", "bold $warning"), str(exc)]
    else:
        if plan is None:
            parts += ["\n", ("Choose the GPU kind to see the memory plan.", "$text-muted")]
        else:
            parts += ["\n", ("Memory per GPU", "bold"), "\n", memory_bar(plan, bar_width)]
    return Content.assemble(*parts)


class ModelScreen(WizardScreen):
    """Which model, which SGLang, which GPUs."""

    STEP = "model"
    AUTO_FOCUS = "FieldInput"
    CSS_PATH = "model.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "reload_model", "Re-read model"),
        Binding("f6", "read_on_host", "Read on host"),
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
                        [(n, n) for n in core.gpu_names()],
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
                yield Static(
                    "The model folder is read locally (config.json and the safetensors index "
                    "only); F6 reads it on the SSH host instead.",
                    classes="hint",
                )
            with VerticalScroll(id="model-card-box"):
                yield Static(id="model-card")
        yield self.footer()

    def on_mount(self) -> None:
        """Titles."""
        self.query_one("#model-form").border_title = "Model and hardware"
        self.query_one("#model-card-box").border_title = "Model card"
        self._shown_path: str | None = None
        self._choices: dict[str, list[str]] = {
            "#sglang-version": list(
                dict.fromkeys([*core.supported_versions(), self.wizard.profile.sglang_version])
            ),
            "#gpu-kind": core.gpu_names(),
        }

    def sync(self, profile: Profile, report: Report | None) -> None:
        """Show the profile; re-read the model card when the path changed."""
        self.show_fields(profile)
        self._set_select("#sglang-version", profile.sglang_version)
        self._set_select("#gpu-kind", profile.gpu.kind)
        key = repr(
            (
                profile.model.path,
                profile.speculative.draft_model_path,
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

    def _set_select(self, selector: str, value: str | None) -> None:
        select: Select[str] = self.query_one(selector, Select)
        known = self._choices.setdefault(selector, [])
        if value is not None and value not in known:
            known.append(value)  # e.g. an opened profile names a version or GPU not listed yet
            with select.prevent(Select.Changed):
                select.set_options([(v, v) for v in known])
        wanted: Any = Select.NULL if value is None else value
        if select.value != wanted:
            with select.prevent(Select.Changed):
                select.value = wanted

    @work(exclusive=True, thread=True, group="model-card")
    def load_card(self, profile: Profile, bar_width: int) -> None:
        """Read the model's config and plan memory in a thread so typing never waits on the disk."""
        card = build_card(profile, bar_width)
        self.app.call_from_thread(self.query_one("#model-card", Static).update, card)

    @work(exclusive=True, group="model-card")
    async def action_read_on_host(self) -> None:
        """Read the model folder on the profile's SSH host (through `wizard.remote`)."""
        from screens.launch import host_target

        profile = self.wizard.profile
        target = host_target(profile, "")
        card = self.query_one("#model-card", Static)
        if not target:
            card.update(Content.styled("Enter the SSH host first.", "$warning"))
            return
        card.update(f"Reading {profile.model.path} on {target} …")
        host = None
        try:
            host = await self.wizard.connect_host(target, list(profile.ssh.jump) or None)
            facts = await core.read_remote_facts(host, profile.model.path)
            self.wizard.remember_remote_facts(profile.model.path, facts)
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
        value = None if event.value is Select.NULL else event.value
        self.post_message(EditRequested({"gpu.kind": value}, {"gpu.kind": str(value or "")}))
