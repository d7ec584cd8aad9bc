"""The Model screen's GPU kind picker: the catalog by family with memory, and a custom kind."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Select, Static

from screens.app import WizardApp
from screens.model import CustomGpuDialog
from wizard.profile_schema import Profile

pytestmark = pytest.mark.tui


def _start(ready_dir: Path, kind: str | None = "H100") -> WizardApp:
    data: dict[str, object] = {"model": {"path": "/m"}}
    if kind:
        data["gpu"] = {"kind": kind, "count": 8}
    return WizardApp(initial=Profile.model_validate(data), ready_dir=ready_dir)


async def test_the_picker_lists_the_catalog_by_family_with_memory(ready_dir: Path) -> None:
    app = _start(ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.action_goto("model")
        await pilot.pause()
        select = app.screen.query_one("#gpu-kind", Select)
        labels = [str(prompt) for prompt, _ in select._options if _ is not Select.NULL]
        headers = [label for label in labels if label.startswith("──")]
        assert headers == ["── NVIDIA data center ──", "── NVIDIA workstation ──",
                           "── NVIDIA consumer ──", "── AMD Instinct ──"]
        assert "MI300X  192.0 GiB gfx942" in labels and "H100  79.6 GiB sm90" in labels
        assert labels.index("── AMD Instinct ──") < labels.index("MI355X  288.0 GiB gfx950")
        assert labels[-1].startswith("Custom")
        # picking a kind edits the profile; a family header is not a kind
        select.value = "MI355X"
        await pilot.pause()
        assert app.profile.gpu.kind == "MI355X"
        select.value = "family:AMD Instinct"
        await pilot.pause()
        assert app.profile.gpu.kind == "MI355X" and select.value == "MI355X"


async def test_a_custom_kind_is_typed_checked_and_kept(ready_dir: Path) -> None:
    app = _start(ready_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.action_goto("model")
        await pilot.pause()
        select = app.screen.query_one("#gpu-kind", Select)
        select.value = "custom:"
        await pilot.pause()
        assert isinstance(app.screen, CustomGpuDialog)
        await pilot.press(*"sm=8.6,mem=24")
        await pilot.press("enter")  # no unit: refused, the dialog stays and says why
        await pilot.pause()
        assert isinstance(app.screen, CustomGpuDialog)
        assert "needs a unit" in str(app.screen.query_one("#custom-gpu-error", Static).render())
        await pilot.press(*"GB", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, CustomGpuDialog)
        assert app.profile.gpu.kind == "custom:sm=8.6,mem=24576MiB"
        select = app.screen.query_one("#gpu-kind", Select)
        assert select.value == "custom:sm=8.6,mem=24576MiB"
        assert ("custom sm86 24 GiB", "custom:sm=8.6,mem=24576MiB") in select._options


async def test_escape_keeps_the_kind(ready_dir: Path) -> None:
    app = _start(ready_dir, kind="custom:arch=gfx942,mem=128GB")
    async with app.run_test(size=(120, 40)) as pilot:
        await app.action_goto("model")
        await pilot.pause()
        select = app.screen.query_one("#gpu-kind", Select)
        assert select.value == "custom:arch=gfx942,mem=131072MiB"  # listed although not in the catalog
        select.value = "custom:"
        await pilot.pause()
        field = app.screen.query_one("#custom-gpu")
        assert field.value == "arch=gfx942,mem=131072MiB"  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.pause()
        assert app.profile.gpu.kind == "custom:arch=gfx942,mem=131072MiB"


async def test_undo_names_the_gpu_kind_by_its_label(ready_dir: Path) -> None:
    """ctrl+z after picking a GPU kind said "Undid the change of gpu.kind." (the profile key),
    where every field of the Parameters step is named by its label."""
    app = _start(ready_dir)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await app.action_goto("model")
        await pilot.pause()
        app.screen.query_one("#gpu-kind", Select).value = "MI355X"
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.profile.gpu.kind == "H100"
        said = [str(n.message) for n in app._notifications]
        assert "Undid the change of GPU kind." in said, said


async def test_algorithm_details_show_the_draft_once_it_is_given(
    ready_dir: Path, models: dict[str, Path]
) -> None:
    """With a draft path typed, the Algorithm step still said "Needs a draft model: enter its
    path below (d)."."""
    from textual.widgets import OptionList

    start = Profile.model_validate({
        "model": {"path": str(models["kimi"])}, "gpu": {"kind": "H200", "count": 8},
        "parallel": {"tp": 8},
        "speculative": {"algorithm": "EAGLE3", "draft_model_path": str(models["eagle3"])},
    })
    app = WizardApp(initial=start, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.action_goto("algorithm")
        await pilot.pause()
        listing = app.screen.query_one("#algo-list", OptionList)
        listing.highlighted = next(i for i in range(listing.option_count)
                                   if listing.get_option_at_index(i).id == "EAGLE3")
        await pilot.pause()
        text = str(app.screen.query_one("#algo-detail", Static).render())
        assert "Needs a draft model" not in text
        assert f"Draft model: {models['eagle3']}" in text


def test_the_start_preview_names_a_custom_kind_as_the_model_step_does() -> None:
    """The Start preview showed "2 x custom:sm=8.9,mem=49152MiB" where the Model step shows
    "custom sm89 48 GiB"."""
    from screens.start import describe

    profile = Profile.model_validate(
        {"model": {"path": "/m"}, "gpu": {"kind": "custom:sm=8.9,mem=48GB", "count": 2}})
    text = describe("p", profile, None).plain
    assert "2 x custom sm89 48 GiB" in text and "mem=49152MiB" not in text
