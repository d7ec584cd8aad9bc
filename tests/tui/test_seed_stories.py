"""The three incident seed stories (tests/fixtures/seeds, tests/fixtures/incidents.md) played key by key,
at 120x40 and at 80x24, asserting what is on the screen at each step."""

from __future__ import annotations

import html
import re
import sys
import tomllib
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static, TextArea

from screens.app import WizardApp
from screens.dialogs import ImportCommandDialog, SaveProfileDialog
from screens.forms import FieldInput
from screens.widgets.findings import FindingsPanel
from wizard.profile import load_profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))
import families as fam

SIZES = {"120x40": (120, 40), "80x24": (80, 24)}


def screen_text(app: WizardApp) -> str:
    """What the terminal shows, as plain text lines (from the app's own SVG screenshot)."""
    svg = app.export_screenshot()
    lines: list[str] = []
    for match in re.finditer(r'<text class="[^"]*" x="[^"]*" y="([^"]*)"[^>]*>([^<]*)</text>', svg):
        y, text = float(match.group(1)), html.unescape(match.group(2)).replace("\xa0", " ")
        if lines and abs(y - lines_y[-1]) < 1:
            lines[-1] += text
        else:
            lines.append(text)
            lines_y.append(y)
    lines_y.clear()
    return "\n".join(lines)


lines_y: list[float] = []


def flat(app: WizardApp) -> str:
    """The screen's words in reading order, box lines removed (for phrases that wrap)."""
    return " ".join(re.sub(r"[│╭╮╰╯─▼▁▂▃▄▅▆▇█]", " ", screen_text(app)).split())


def top_line(app: WizardApp) -> str:
    """The step bar (first line of the screen)."""
    return screen_text(app).splitlines()[0]


async def type_text(pilot: Pilot[int], text: str) -> None:
    """Type text one key at a time (space and symbols by their key names)."""
    names = {" ": "space", "-": "minus", ".": "full_stop", "/": "slash", "_": "underscore"}
    await pilot.press(*[names.get(ch, ch) for ch in text])


async def open_from_start(pilot: Pilot[int], app: WizardApp, entry: str) -> None:
    """F1, then walk the profile list with the arrow keys to `entry` and press enter."""
    await pilot.press("f1")
    await pilot.pause()
    listing = app.screen.query_one("#profile-list", OptionList)
    assert app.focused is listing
    for _ in range(listing.option_count):
        option = listing.highlighted_option
        if option is not None and option.id is not None and option.id.endswith(entry):
            break
        await pilot.press("down")
    await pilot.press("enter")
    await pilot.pause()


@pytest.mark.parametrize("size", list(SIZES))
async def test_story_1_qwen36_nextn_from_one_draft_token_to_the_known_good_set(
    size: str, models: dict[str, Path], ready_dir: Path, profiles_dir: Path
) -> None:
    """Seed 000: import `--speculative-num-draft-tokens 1` on 0.5.11; the hybrid ValueError comes
    first, the bare trio assert second; both fixed by keys; saved; re-opened."""
    app = WizardApp(ready_dir=ready_dir)
    async with app.run_test(size=SIZES[size]) as pilot:
        await pilot.press("i")
        assert isinstance(app.screen, ImportCommandDialog)
        assert isinstance(app.focused, TextArea)
        await type_text(
            pilot,
            f"python -m sglang.launch_server --model-path {models['qwen36']} "
            "--speculative-algorithm NEXTN --speculative-num-draft-tokens 1 "
            "--tensor-parallel-size 2",
        )
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.current_mode == "parameters"
        assert isinstance(app.focused, FieldInput) and app.focused.path == "speculative.num_steps"
        # The verdict is on the first line at both sizes.
        assert "✗ refuses" in top_line(app)
        text = flat(app)
        assert "R-MAMBA-NOBUF-SPEC" in text and "extra_buffer" in text
        assert "ValueError" in text and "2453" in text
        assert "Fixes" in text  # reachable without scrolling, also at 80x24

        await pilot.press("alt+1")  # fix 1 from the focused field: extra_buffer
        await pilot.pause()
        assert app.profile.hybrid.cache_strategy == "extra_buffer"
        assert "✗ refuses" in top_line(app)
        panel = app.screen.query_one(FindingsPanel)
        assert panel.selected is not None and panel.selected.rule == "R-SPEC-STEPS-TRIO"
        text = screen_text(app)
        assert "AssertionError" in text and "(bare" in text
        assert "3521" in text

        await pilot.press("alt+1")  # all three: steps 1, topk 1, draft tokens 2
        await pilot.pause()
        spec = app.profile.speculative
        assert (spec.num_steps, spec.eagle_topk, spec.num_draft_tokens) == (1, 1, 2)
        # It starts. The pasted command names no GPU kind: no memory plan, no memory finding
        # (a plan for an assumed card would be a guess); the verdict is SGLang's adjustment.
        assert "✓ starts, adjusted" in top_line(app)
        assert "GPU memory plan" not in screen_text(app)
        assert "SGLang runs" in screen_text(app)

        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SaveProfileDialog)
        await type_text(pilot, "qwen36-incident1")
        await pilot.press("enter")
        await pilot.pause()
        saved = profiles_dir / "qwen36-incident1.toml"
        data = tomllib.loads(saved.read_text(encoding="utf-8"))
        assert data["speculative"] == {
            "algorithm": "NEXTN",
            "num_steps": 1,
            "eagle_topk": 1,
            "num_draft_tokens": 2,
        }
        assert data["hybrid"] == {"cache_strategy": "extra_buffer"}
        assert "*" not in top_line(app)

        # Re-opened from the Start list (which shows the new file at once).
        kept = app.profile
        await open_from_start(pilot, app, "qwen36-incident1.toml")
        assert app.current_mode == "parameters"
        assert app.profile == kept == load_profile(saved)
        assert app.profile_name == "qwen36-incident1"
        assert "✓ starts, adjusted" in top_line(app)


@pytest.mark.parametrize("size", list(SIZES))
async def test_story_3_kimi_eagle3_sixteen_draft_tokens_become_two(
    size: str, ready_dir: Path, profiles_dir: Path, isolated_dirs: Path
) -> None:
    """Seed story 3: Kimi-K2.5 (INT4) + its EAGLE-3 draft on 8x H200, topk 1 and 16 draft
    tokens: the trio assert, then with steps 1 the rewrite 16 -> 2 shown and explained, then
    the fix that really drafts 16 (and ctrl+z undoes it)."""
    kimi = fam.kimi_k25_int4().write(isolated_dirs / "models" / "Kimi-K2.5")
    draft = fam.kimi_k25_eagle3_draft().write(isolated_dirs / "models" / "Kimi-K2.5-EAGLE3")
    (profiles_dir / "kimi-try2.toml").write_text(
        'schema_version = 1\nsglang_version = "0.5.11"\n'
        f'[model]\npath = "{kimi}"\n[parallel]\ntp = 8\n'
        f'[speculative]\nalgorithm = "EAGLE3"\ndraft_model_path = "{draft}"\n'
        "eagle_topk = 1\nnum_draft_tokens = 16\n"
        '[gpu]\nkind = "H200"\ncount = 8\n',
        encoding="utf-8",
    )
    app = WizardApp(ready_dir=ready_dir)
    async with app.run_test(size=SIZES[size]) as pilot:
        await open_from_start(pilot, app, "kimi-try2.toml")
        assert app.profile_name == "kimi-try2"
        assert "✗ refuses" in top_line(app)
        assert "AssertionError" in screen_text(app)

        # F3 and F4 agree: EAGLE3 suits this target and draft.
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        eagle3 = next(o for o in app.screen.options if o.name == "EAGLE3")  # type: ignore[attr-defined]
        assert eagle3.available

        # Try 3: steps 1 typed into the Steps field, which F4 focuses on entry.
        await pilot.press("f4", "1")
        await pilot.pause()
        assert app.profile.speculative.num_steps == 1
        assert "✓ starts, adjusted" in top_line(app)
        text = screen_text(app)
        assert "16" in text and "→ 2" in text  # the rewrite in the table, at both sizes
        assert "Draft tokens rewritten" in text
        panel = app.screen.query_one(FindingsPanel)
        assert panel.selected is not None and panel.selected.rule == "R-TOPK1-DRAFT-REWRITE"

        await pilot.press("alt+1")  # really draft 16: steps 15
        await pilot.pause()
        assert app.profile.speculative.num_steps == 15
        assert app.report is not None and "speculative_num_draft_tokens" not in app.report.changed()
        await pilot.press("ctrl+z")  # and back
        await pilot.pause()
        assert app.profile.speculative.num_steps == 1


@pytest.mark.parametrize("size", list(SIZES))
async def test_story_2_qwen35_397b_nvfp4_memory_plan_or_why_not(
    size: str, ready_dir: Path, isolated_dirs: Path
) -> None:
    """Seed 003: the ready 397B NVFP4 profile on 8x RTX PRO 6000. The model folder is not on this
    machine: the Model step reads the config shipped with the example and says so (issue 25);
    a path that is neither here nor an example says the memory plan is not computed, why, and
    how to get it; with the folder typed in, the plan per GPU."""
    app = WizardApp(ready_dir=ready_dir)
    async with app.run_test(size=SIZES[size]) as pilot:
        await open_from_start(pilot, app, "qwen3.5-397b-nvfp4-mtp-rtxpro6000.toml")
        await pilot.press("f2")
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = flat(app)
        assert "not on this machine" in text and "example config" in text
        card = str(app.screen.query_one("#model-card", Static).visual)  # scrolled at 80x24
        assert "Memory per GPU" in card
        assert app.profile.model.path == "/root/models/Qwen3.5-397B-A17B-NVFP4"

        assert isinstance(app.focused, FieldInput) and app.focused.path == "model.path"
        await pilot.press("end", "ctrl+u")  # a copy elsewhere that is not here either
        await type_text(pilot, "/root/models/Qwen3.5-397B-copy")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = flat(app)
        assert "Not computed: the memory plan" in text
        assert "To get them" in text and "F6" in text  # why it is missing, and how to get it

        folder = fam.qwen35_397b_nvfp4().write(isolated_dirs / "models" / "Qwen3.5-397B")
        assert isinstance(app.focused, FieldInput) and app.focused.path == "model.path"
        await pilot.press("end", "ctrl+u")  # clear the field, then type the local copy's path
        await type_text(pilot, str(folder))
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.profile.model.path == str(folder)
        assert app.report is not None and app.report.memory_plan is not None
        text = flat(app)
        assert "Memory per GPU" in text
        assert "Memory plan not computed" not in text
        assert "✓ starts" in top_line(app)
