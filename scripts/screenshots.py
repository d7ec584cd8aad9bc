"""Make the README/docs screenshots (docs/img/*.svg) from the real app, driven by Pilot.

Run: `.venv/bin/python scripts/screenshots.py` (writes docs/img/tui-*.svg; about 20 s).
The model folders are tiny `config.json`-only copies under a fixed temporary directory, so the
images show the same paths every time; saved profiles go to a temporary profiles dir.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img"
WORK = Path("/tmp/sglang-wizard-screenshots")


def _prepare() -> dict[str, Path]:
    shutil.rmtree(WORK, ignore_errors=True)
    (WORK / "profiles").mkdir(parents=True)
    os.environ["SGLANG_WIZARD_PROFILES_DIR"] = str(WORK / "profiles")
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from tui.conftest import deepseek_v3_config, eagle3_draft_config, qwen36_config, write_model

    models = WORK / "models"
    return {
        "qwen36": write_model(models, "Qwen3.6-27B", qwen36_config()),
        "kimi": write_model(models, "Kimi-K2.5", deepseek_v3_config()),
        "eagle3": write_model(models, "Kimi-K2.5-eagle3", eagle3_draft_config()),
    }


async def _shoot(app, size: tuple[int, int], shots: list[tuple[str, list[str]]]) -> None:  # type: ignore[no-untyped-def]
    async with app.run_test(size=size) as pilot:
        for name, keys in shots:
            for key in keys:
                await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
            app.save_screenshot(f"{name}.svg", str(OUT))
            print(OUT / f"{name}.svg")


def main() -> int:
    """Write the screenshots."""
    models = _prepare()
    from screens.app import WizardApp
    from wizard.profile import builtin_profiles_dir
    from wizard.profile_schema import Profile

    OUT.mkdir(parents=True, exist_ok=True)
    incident1 = Profile.model_validate(
        {
            "sglang_version": "0.5.11",
            "model": {"path": str(models["qwen36"]), "trust_remote_code": True},
            "parallel": {"tp": 2},
            "speculative": {"algorithm": "NEXTN", "num_draft_tokens": 1},
            "server": {"port": 30000},
            "gpu": {"kind": "RTX A6000", "count": 2},
        }
    )
    app = WizardApp(initial=incident1, initial_name="incident-1", ready_dir=builtin_profiles_dir())
    asyncio.run(
        _shoot(
            app,
            (120, 40),
            [
                ("tui-start", []),
                ("tui-model", ["f2"]),
                ("tui-algorithm", ["f3"]),
                ("tui-parameters-incident1", ["f4"]),
                ("tui-parameters-incident1-fixed", ["ctrl+f", "ctrl+g", "1"]),
                ("tui-review", ["f5"]),
            ],
        )
    )
    incident3 = Profile.model_validate(
        {
            "model": {"path": str(models["kimi"])},
            "parallel": {"tp": 8},
            "speculative": {
                "algorithm": "EAGLE3",
                "draft_model_path": str(models["eagle3"]),
                "num_steps": 1,
                "eagle_topk": 1,
                "num_draft_tokens": 16,
            },
            "gpu": {"kind": "H200", "count": 8},
        }
    )
    app = WizardApp(initial=incident3, initial_name="incident-3", ready_dir=builtin_profiles_dir())
    asyncio.run(_shoot(app, (120, 40), [("tui-parameters-incident3", ["f4"])]))
    app = WizardApp(initial=incident1, initial_name="incident-1", ready_dir=builtin_profiles_dir())
    asyncio.run(_shoot(app, (80, 24), [("tui-parameters-80x24", ["f4"])]))
    shutil.rmtree(WORK, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
