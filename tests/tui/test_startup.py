"""Issue 10, cold start: the first screen is painted before the profile model (pydantic) and the
rule engine are imported; a thread then loads the first profile and its verdict replaces
"loading". Each case runs `sglang-wizard` (no arguments) headless in a new interpreter. The speed
itself is measured in bench/bench_tui.py, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
from screens.app import WizardApp
seen = {}

class Probe(WizardApp):
    def on_ready(self):  # the first screen is laid out and painted
        seen["first_screen"] = {
            "pydantic": "pydantic" in sys.modules,
            "engine": "wizard.rules.engine" in sys.modules,
            "loading": self.loading,
            "status": str(self.screen.query_one("#status").visual),
            "preview": str(self.screen.query_one("#preview").visual),
        }

async def settle(pilot):
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    app = pilot.app
    seen["settled"] = {
        "loading": app.loading, "name": app.profile_name,
        "verdict": app.report.verdict if app.report else None,
        "status": str(app.screen.query_one("#status").visual),
        "preview": str(app.screen.query_one("#preview").visual),
        "continue": str(app.screen.query_one("#profile-list").get_option("current").prompt),
        "notes": [n.message for n in app._notifications],
    }
    app.exit(0)

Probe().run(headless=True, size=(120, 40), auto_pilot=settle)
json.dump(seen, sys.stdout)
"""


def start(profiles: Path) -> dict[str, Any]:
    """Start the app without arguments in a new interpreter; what it showed and when."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "SGLANG_WIZARD_PROFILES_DIR": str(profiles)}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_first_screen_comes_before_the_profile_model_and_its_verdict_after(
    tmp_path: Path,
) -> None:
    seen = start(tmp_path / "no-profiles-yet")
    first = seen["first_screen"]
    assert not first["pydantic"] and not first["engine"]
    assert first["loading"]
    assert "loading" in first["status"] and "qwen3.6-27b-mtp-a6000" in first["status"]
    assert "loading" in first["preview"]
    settled = seen["settled"]
    assert not settled["loading"] and settled["name"] == "qwen3.6-27b-mtp-a6000"
    assert settled["verdict"] == "ok"
    assert "starts" in settled["status"] and "loading" not in settled["status"]
    # (the preview's own "loading…" line; the memory plan may say "free before loading")
    assert "loading…" not in settled["preview"] and "SGLang" in settled["preview"]


def test_a_broken_saved_profile_is_reported_and_the_next_one_opens(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "broken.toml").write_text("[model\npath = 1\n")
    seen = start(profiles)
    assert "broken" in seen["first_screen"]["status"]  # the newest saved one is tried first
    settled = seen["settled"]
    assert settled["name"] == "qwen3.6-27b-mtp-a6000"
    assert "qwen3.6-27b-mtp-a6000" in settled["continue"] and "broken" not in settled["continue"]
    assert any("broken.toml" in note for note in settled["notes"])
