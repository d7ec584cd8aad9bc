"""The Model screen as model selection, against the stand-in Hub on 127.0.0.1 (never the real Hub)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Static

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))
sys.path.insert(0, str(ROOT / "model"))

from hub_repos import QWEN36_COMMIT, standard_repos  # noqa: E402
from stand_in_hub import StandInHub  # noqa: E402

from screens.app import WizardApp  # noqa: E402
from screens.model_picker import DraftPicker, ModelPicker  # noqa: E402
from wizard import api  # noqa: E402
from wizard.hub import load_hub_facts  # noqa: E402
from wizard.profile_schema import Profile  # noqa: E402

pytestmark = pytest.mark.tui

HF_VARS = ("HF_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE", "HF_TOKEN_PATH", "HUGGING_FACE_HUB_TOKEN")


@pytest.fixture
def hub(isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInHub]:
    for name in HF_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(isolated_dirs / "hf"))
    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(isolated_dirs / "wizard-cache"))
    api._HUB_FACTS.clear()
    api._HUB_MISSES.clear()
    with StandInHub(standard_repos()) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


def _options(app: WizardApp, selector: str) -> list[str]:
    options = app.screen.query_one(selector, OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def _settle(app: WizardApp, pilot) -> None:
    """Wait for the workers (Hub reads run in threads), then for the messages they posted."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_hub_id_is_read_and_the_check_uses_it(hub: StandInHub) -> None:
    profile = Profile.model_validate(
        {"model": {"path": "Qwen/Qwen3.6-27B"}, "gpu": {"kind": "RTX A6000", "count": 2},
         "parallel": {"tp": 2},
         "speculative": {"algorithm": "NEXTN", "num_draft_tokens": 1}}
    )
    app = WizardApp(initial=profile)
    async with app.run_test(size=(140, 44)) as pilot:
        await app.action_goto("model")
        await _settle(app, pilot)
        card = str(app.screen.query_one("#model-card", Static).visual)
        assert f"Qwen/Qwen3.6-27B @ {QWEN36_COMMIT[:12]}" in card and "Hugging Face Hub" in card
        assert "48 linear-attention + 16 full-attention" in card
        assert app.report is not None and app.report.model_source is not None
        assert app.report.first_error is not None
        assert app.report.first_error.rule == "R-MAMBA-NOBUF-SPEC"  # incident 1 with the real config
    assert hub.weight_requests() == []


async def test_gated_hub_id_card_says_what_to_do(hub: StandInHub) -> None:
    app = WizardApp(initial=Profile.model_validate(
        {"model": {"path": "meta-llama/Llama-3.1-8B-Instruct"}, "gpu": {"kind": "H100"}}))
    async with app.run_test(size=(140, 44)) as pilot:
        await app.action_goto("model")
        await _settle(app, pilot)
        card = str(app.screen.query_one("#model-card", Static).visual)
        assert "Cannot read the model from the Hub" in card and "HF_TOKEN" in card
        assert "Not computed: the memory plan" in card
        assert app.report is not None
        missing = [f for f in app.report.findings if f.rule == "R-FACTS-MISSING"]
        assert missing and "gated" in missing[0].message and "not computed" in missing[0].message


async def test_find_a_model_in_the_cache_and_on_the_hub(hub: StandInHub) -> None:
    load_hub_facts("Qwen/Qwen3.6-27B")  # now in this machine's HF cache
    app = WizardApp(initial=Profile.model_validate({"model": {"path": "/m"}}))
    async with app.run_test(size=(140, 44)) as pilot:
        await app.action_goto("model")
        await pilot.pause()
        await pilot.press("ctrl+y")
        await _settle(app, pilot)
        assert isinstance(app.screen, ModelPicker)
        listed = _options(app, "#model-results")
        assert any("Qwen/Qwen3.6-27B" in line for line in listed)
        query = app.screen.query_one("#model-query", Input)
        query.value = "qwen3-8b"
        query.focus()
        await pilot.press("enter")
        await _settle(app, pilot)
        listed = _options(app, "#model-results")
        hub_rows = listed[listed.index(next(x for x in listed if x.startswith("Hub search"))):]
        assert any(x.strip() == "Qwen/Qwen3-8B" for x in hub_rows)
        options = app.screen.query_one("#model-results", OptionList)
        options.highlighted = next(
            i for i in range(options.option_count)
            if str(options.get_option_at_index(i).prompt).strip() == "Qwen/Qwen3-8B"
        )
        options.focus()
        await pilot.press("enter")
        await _settle(app, pilot)
        assert not isinstance(app.screen, ModelPicker)
        assert app.profile.model.path == "Qwen/Qwen3-8B"
        card = str(app.screen.query_one("#model-card", Static).visual)
        assert "Qwen3ForCausalLM" in card


async def test_find_a_fitting_eagle3_draft(hub: StandInHub) -> None:
    app = WizardApp(initial=Profile.model_validate({"model": {"path": "Qwen/Qwen3-8B"}}))
    async with app.run_test(size=(140, 44)) as pilot:
        await app.action_goto("model")
        await _settle(app, pilot)
        await pilot.press("f9")
        await _settle(app, pilot)
        assert isinstance(app.screen, DraftPicker)
        lines = _options(app, "#draft-results")
        assert lines[0].startswith("fits AngelSlim/Qwen3-8B_eagle3 [EAGLE3]")
        wide = next(x for x in lines if "eagle3-wide" in x)
        assert wide.startswith("no ") and "expects hidden size 5120" in wide
        status = str(app.screen.query_one("#draft-status", Static).visual)
        assert "4 candidates, 2 fit the target" in status
        await pilot.press("enter")  # the first (fitting) candidate is highlighted
        await _settle(app, pilot)
        assert app.profile.speculative.draft_model_path == "AngelSlim/Qwen3-8B_eagle3"
        assert app.profile.speculative.algorithm == "EAGLE3"
    assert hub.weight_requests() == []


async def test_model_path_completion_from_the_cache(hub: StandInHub) -> None:
    load_hub_facts("Qwen/Qwen3.6-27B")
    app = WizardApp(initial=Profile.model_validate({"model": {"path": "/m"}}))
    async with app.run_test(size=(140, 44)) as pilot:
        await app.action_goto("model")
        await pilot.pause()
        field = app.screen.query_one("#model-path", Input)
        field.focus()
        field.value = ""
        await pilot.press(*"Qwen/Qwen3.")
        await _settle(app, pilot)
        assert field._suggestion == "Qwen/Qwen3.6-27B"
        await pilot.press("right")  # accept the completion
        await _settle(app, pilot)
        assert app.profile.model.path == "Qwen/Qwen3.6-27B"
