"""Walk the incidents through the UI: from the failing flags, through SGLang's errors, to the fix and the saved TOML."""

from __future__ import annotations

import tomllib
from pathlib import Path

from textual.message import Message
from textual.widgets import OptionList, Select, Static

from screens.app import WizardApp
from screens.forms import FieldInput
from screens.messages import FixRequested, ProfileChanged
from screens.widgets.effective import EffectiveTable
from screens.widgets.findings import FindingsPanel
from wizard.profile import load_profile, profile_to_toml
from wizard.profile_schema import Profile


def detail_text(app: WizardApp) -> str:
    """The plain text of the selected finding's explanation."""
    return str(app.screen.query_one("#finding-detail", Static).visual)


def panel(app: WizardApp) -> FindingsPanel:
    return app.screen.query_one(FindingsPanel)


async def save_as(pilot, app: WizardApp, name: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+s")
    app.screen.query_one("#save-name").value = name  # type: ignore[attr-defined]
    await pilot.press("enter")
    await pilot.pause()


async def test_incident_1_from_failing_flags_to_saved_profile(
    models: dict[str, Path], ready_dir: Path, profiles_dir: Path
) -> None:
    """0.5.11, Qwen3.6 NEXTN + --speculative-num-draft-tokens 1: the hybrid-cache ValueError comes
    first, then the bare trio assert; fixing both by keys gives the profile that became ready."""
    start = Profile.model_validate(
        {
            "sglang_version": "0.5.11",
            "model": {"path": str(models["qwen36"])},
            "parallel": {"tp": 2},
            "gpu": {"kind": "RTX A6000", "count": 2},
        }
    )
    seen: list[Message] = []
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        # Algorithm step: NEXTN is offered and available for this MTP checkpoint.
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        listing = app.screen.query_one("#algo-list", OptionList)
        ids = [listing.get_option_at_index(i).id for i in range(listing.option_count)]
        assert ids[:2] == ["none", "NEXTN"]
        assert app.screen.options[0].name == "NEXTN" and app.screen.options[0].available
        listing.focus()
        listing.highlighted = 0
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.profile.speculative.algorithm == "NEXTN"

        # Parameters step: type the incident's --speculative-num-draft-tokens 1.
        await pilot.press("f4")
        draft_tokens = app.screen.query_one("#speculative-num_draft_tokens", FieldInput)
        draft_tokens.focus()
        await pilot.press("1")
        await pilot.pause()
        assert app.profile.speculative.num_draft_tokens == 1
        assert app.report is not None and app.report.verdict == "error"

        # SGLang 0.5.11 stops first at the hybrid-model cache rule (ValueError), before the trio.
        assert [f.rule for f in app.report.errors] == ["R-MAMBA-NOBUF-SPEC", "R-SPEC-STEPS-TRIO"]
        assert panel(app).selected is not None and panel(app).selected.rule == "R-MAMBA-NOBUF-SPEC"
        text = detail_text(app)
        assert "ValueError" in text and "sglang/srt/server_args.py:2453" in text
        assert "extra_buffer" in text
        cache = app.screen.query_one("#hybrid-cache_strategy", Select)
        assert cache.has_class("-offending")

        # One key applies the first fix (extra_buffer), straight from the input being edited.
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert app.profile.hybrid.cache_strategy == "extra_buffer"
        assert cache.value == "extra_buffer" and not cache.has_class("-offending")

        # Now the bare trio AssertionError is what SGLang raises (incident 1, try 2).
        assert app.report.first_error is not None
        assert app.report.first_error.rule == "R-SPEC-STEPS-TRIO"
        assert panel(app).selected.rule == "R-SPEC-STEPS-TRIO"  # type: ignore[union-attr]
        text = detail_text(app)
        assert "AssertionError" in text and "bare assert" in text
        assert "sglang/srt/server_args.py:3521" in text
        for name in ("num_steps", "eagle_topk", "num_draft_tokens"):
            assert app.screen.query_one(f"#speculative-{name}", FieldInput).has_class("-offending")

        # Choose the first fix from the findings list with its number: give all three.
        await pilot.press("ctrl+g", "1")
        await pilot.pause()
        spec = app.profile.speculative
        assert (spec.num_steps, spec.eagle_topk, spec.num_draft_tokens) == (1, 1, 2)
        assert app.report.verdict == "ok"
        assert app.screen.query_one("#speculative-num_steps", FieldInput).value == "1"
        assert not draft_tokens.has_class("-offending")
        unique = list({id(m): m for m in seen}.values())  # a bubbling message is seen per hop
        fixes = [m.rule for m in unique if isinstance(m, FixRequested)]
        assert fixes == ["R-MAMBA-NOBUF-SPEC", "R-SPEC-STEPS-TRIO"]
        verdicts = [m.report.verdict for m in unique if isinstance(m, ProfileChanged) and m.report]
        assert verdicts[-1] == "ok" and "error" in verdicts

        await save_as(pilot, app, "qwen36-incident1")
        saved = profiles_dir / "qwen36-incident1.toml"
        text = saved.read_text(encoding="utf-8")
        assert text == profile_to_toml(app.profile)
        data = tomllib.loads(text)
        assert data["sglang_version"] == "0.5.11"
        assert data["speculative"] == {
            "algorithm": "NEXTN",
            "num_steps": 1,
            "eagle_topk": 1,
            "num_draft_tokens": 2,
        }
        assert data["hybrid"] == {"cache_strategy": "extra_buffer"}
        assert data["parallel"] == {"tp": 2}
        assert data["model"] == {"path": str(models["qwen36"])}
        assert load_profile(saved) == app.profile


async def test_incident_3_shows_what_sglang_really_drafts(
    models: dict[str, Path], ready_dir: Path, profiles_dir: Path
) -> None:
    """EAGLE3 with topk 1, steps 1 and 16 draft tokens: SGLang runs 2; the table shows 16 -> 2,
    and the fix that really drafts 16 tokens (steps 15) is one key away."""
    start = Profile.model_validate(
        {
            "model": {"path": str(models["kimi"])},
            "parallel": {"tp": 8},
            "speculative": {
                "algorithm": "EAGLE3",
                "draft_model_path": str(models["eagle3"]),
                "num_steps": 1,
                "eagle_topk": 1,
            },
            # No GPU kind: the tiny config is Kimi's shape in bf16 (no INT4 quantization_config),
            # which would not fit 8 x H200; without a kind there is no memory plan in the way.
        }
    )
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        field = app.screen.query_one("#speculative-num_draft_tokens", FieldInput)
        field.focus()
        await pilot.press("1", "6")
        await pilot.pause()
        assert app.report is not None and app.report.verdict == "ok"
        assert app.report.changed()["speculative_num_draft_tokens"] == (16, 2)

        table = app.screen.query_one(EffectiveTable)
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first == ["speculative_num_draft_tokens", "16", "→ 2"]
        assert field.has_class("-adjusted")
        assert panel(app).selected is not None
        assert panel(app).selected.rule == "R-TOPK1-DRAFT-REWRITE"
        assert "Draft tokens rewritten" in detail_text(app)

        await pilot.press("ctrl+f")  # fix 1: really draft 16 tokens
        await pilot.pause()
        assert app.profile.speculative.num_steps == 15
        assert "speculative_num_draft_tokens" not in app.report.changed()
        assert app.screen.query_one("#speculative-num_steps", FieldInput).value == "15"

        await save_as(pilot, app, "kimi-eagle3-16")
        data = tomllib.loads((profiles_dir / "kimi-eagle3-16.toml").read_text(encoding="utf-8"))
        assert data["speculative"]["num_steps"] == 15
        assert data["speculative"]["eagle_topk"] == 1
        assert data["speculative"]["num_draft_tokens"] == 16
        assert data["speculative"]["algorithm"] == "EAGLE3"
