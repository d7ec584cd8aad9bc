"""SVG snapshots of every wizard step at 120x40 and 80x24 (`make snapshots` re-records them).

Everything on screen is fixed: profiles dir, model folder and ready profiles live under one
emptied directory, the cursor does not blink and animations are off.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from screens.app import WizardApp
from wizard.profile import profile_to_toml
from wizard.profile_schema import Profile

from .conftest import qwen36_config, write_model

SIZES = {"120x40": (120, 40), "80x24": (80, 24)}
STEPS = {"start": "f1", "model": "f2", "algorithm": "f3", "parameters": "f4", "review": "f5"}


def snapshot_app(root: Path) -> WizardApp:
    """Incident 1, try 2 on 0.5.11: extra_buffer given, draft tokens 1 without steps (trio assert)."""
    model = write_model(root / "models", "Qwen3.6-27B", qwen36_config())
    ready = root / "ready"
    ready.mkdir(parents=True, exist_ok=True)
    working = Profile.model_validate(
        {
            "description": "Incident 1, try 3: the launch that became ready",
            "model": {"path": str(model), "trust_remote_code": True},
            "parallel": {"tp": 2},
            "speculative": {"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1},
            "hybrid": {"cache_strategy": "extra_buffer"},
            "server": {"port": 30000},
            "gpu": {"kind": "RTX A6000", "count": 2},
        }
    )
    (ready / "qwen3.6-27b-mtp-a6000.toml").write_text(profile_to_toml(working), encoding="utf-8")
    failing = working.with_edits(
        {
            "description": "Incident 1, try 2: draft tokens 1 without steps",
            "speculative.num_steps": None,
            "speculative.eagle_topk": None,
            "speculative.num_draft_tokens": 1,
        }
    )
    return WizardApp(initial=failing, initial_name="incident-1-try-2", ready_dir=ready)


def goto(key: str):  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.press(key)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("step", list(STEPS))
def test_step(step: str, size: str, snap_compare, snapshot_root: Path) -> None:  # type: ignore[no-untyped-def]
    app = snapshot_app(snapshot_root)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=goto(STEPS[step]))


def test_save_dialog(snap_compare, snapshot_root: Path) -> None:  # type: ignore[no-untyped-def]
    app = snapshot_app(snapshot_root)

    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.press("f4", "ctrl+s", *"bad name")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_import_dialog(snap_compare, snapshot_root: Path) -> None:  # type: ignore[no-untyped-def]
    app = snapshot_app(snapshot_root)

    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.press("i")
        await pilot.pause()
        pilot.app.screen.query_one("TextArea").text = (  # type: ignore[attr-defined]
            "python -m sglang.launch_server --model-path /models/x \\\n  --num-speculative-tokens 16"
        )
        await pilot.press("ctrl+s")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_launch_screen(snap_compare, snapshot_root: Path) -> None:  # type: ignore[no-untyped-def]
    app = snapshot_app(snapshot_root)

    async def run_before(pilot: Pilot[int]) -> None:
        # the failing profile is refused at Review; open the ready (working) one, then launch
        pilot.app.open_path(snapshot_root / "ready" / "qwen3.6-27b-mtp-a6000.toml")  # type: ignore[attr-defined]
        await pilot.press("f5", "l")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_parameters_light_theme(snap_compare, snapshot_root: Path) -> None:  # type: ignore[no-untyped-def]
    app = snapshot_app(snapshot_root)

    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.press("ctrl+t", "f4")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
