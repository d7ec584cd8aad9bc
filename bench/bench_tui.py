"""TUI benchmark: keystroke -> findings repainted, and cold start, each next to a bare Textual app.

Both halves run the wizard and a bare Textual app the same way in the same run and print the
ratio, so the numbers mean something on any machine:

* keystroke: Pilot types into the Parameters step's "Draft tokens" field (alternating `1` and
  backspace, so every keystroke flips SGLang's verdict and the whole findings panel and effective
  table repaint); the clock stops when the findings panel shows the new report and the app is
  idle again. The bare app gets the same keys into a plain Input.
* cold start: a fresh `python` subprocess imports the app, runs it headless and exits as soon as
  the first screen is up; the bare app is a Textual App with one Static, started the same way.

Run: `.venv/bin/python bench/bench_tui.py [--keys 200] [--starts 5]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COLD_START = r"""
import os, sys, time
t0 = time.perf_counter()
kind = sys.argv[1]
if kind == "wizard":
    from screens.app import WizardApp
    app = WizardApp()
else:
    from textual.app import App
    from textual.widgets import Footer, Static

    class Bare(App[int]):
        def compose(self):
            yield Static("hello")
            yield Footer()

    app = Bare()

async def first_screen(pilot):
    await pilot.pause()
    pilot.app.exit(0)

app.run(headless=True, auto_pilot=first_screen)
print(time.perf_counter() - t0)
"""


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def tiny_model(root: Path) -> Path:
    """A config.json-only Qwen3.6-shaped hybrid model folder (as the TUI tests build)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from tui.conftest import qwen36_config, write_model

    return write_model(root, "Qwen3.6-27B", qwen36_config())


async def wizard_keystrokes(count: int, model: Path) -> list[float]:
    """ms from key press to the findings panel showing the new report, app idle."""
    from screens.app import WizardApp
    from screens.forms import FieldInput
    from screens.widgets.findings import FindingsPanel
    from wizard.profile import Profile

    profile = Profile.model_validate(
        {
            "model": {"path": str(model)},
            "parallel": {"tp": 2},
            "speculative": {"algorithm": "NEXTN"},
            "hybrid": {"cache_strategy": "extra_buffer"},
            "gpu": {"kind": "RTX A6000", "count": 2},
        }
    )
    app = WizardApp(initial=profile, ready_dir=model.parent)
    timings: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        panel = app.screen.query_one(FindingsPanel)
        field = app.screen.query_one("#speculative-num_draft_tokens", FieldInput)
        field.focus()
        await pilot.pause()
        for i in range(count):
            key = "1" if i % 2 == 0 else "backspace"
            before = panel.findings
            start = time.perf_counter()
            await pilot.press(key)
            while panel.findings is before:
                await asyncio.sleep(0)
            await pilot.pause()
            timings.append((time.perf_counter() - start) * 1000)
        verdict = app.report.verdict if app.report else "unchecked"
        assert verdict in ("ok", "error"), verdict
    return timings


async def bare_keystrokes(count: int) -> list[float]:
    """The same keys into a plain Input of a bare Textual app."""
    from textual.app import App, ComposeResult
    from textual.widgets import Input

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Input()

    app = Bare()
    timings: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        field = app.query_one(Input)
        field.focus()
        await pilot.pause()
        for i in range(count):
            key = "1" if i % 2 == 0 else "backspace"
            start = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            timings.append((time.perf_counter() - start) * 1000)
    return timings


def cold_start(kind: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds of the subprocess, seconds measured inside it from first import)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", COLD_START, kind],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    inner = float(done.stdout.strip().splitlines()[-1])
    return wall, inner


def main() -> int:
    """Run both benchmarks and print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=200, help="keystrokes per app (default 200)")
    parser.add_argument("--starts", type=int, default=5, help="cold starts per app (default 5)")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE from the environment for the cold starts",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["SGLANG_WIZARD_PROFILES_DIR"] = str(root / "profiles")
        model = tiny_model(root / "models")

        wizard = asyncio.run(wizard_keystrokes(args.keys, model))
        bare = asyncio.run(bare_keystrokes(args.keys))
        print(f"keystroke -> findings repainted, {args.keys} keys each (ms)")
        print(f"{'':24}{'p50':>8}{'p99':>8}")
        print(
            f"{'wizard (Parameters)':24}{percentile(wizard, 50):8.2f}{percentile(wizard, 99):8.2f}"
        )
        print(f"{'bare Textual Input':24}{percentile(bare, 50):8.2f}{percentile(bare, 99):8.2f}")
        print(
            f"{'ratio wizard / bare':24}{percentile(wizard, 50) / percentile(bare, 50):8.2f}"
            f"{percentile(wizard, 99) / percentile(bare, 99):8.2f}"
        )

        env = dict(os.environ, PYTHONPATH=str(ROOT))
        # As installed apps start: with cached bytecode. The bare app's modules (site-packages)
        # always have .pyc files from pip; with PYTHONDONTWRITEBYTECODE set (some CI and sandbox
        # shells) the wizard's own modules would be compiled on every start instead, which
        # measures the compiler, not the app. --no-bytecode-cache keeps the caller's setting.
        if not args.no_bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        walls: dict[str, list[float]] = {"wizard": [], "bare": []}
        inner: dict[str, list[float]] = {"wizard": [], "bare": []}
        cold_start("bare", env)  # warm the OS file cache for both equally
        cold_start("wizard", env)
        for _ in range(args.starts):
            for kind in ("wizard", "bare"):  # interleaved, so load on the box hits both
                w, i = cold_start(kind, env)
                walls[kind].append(w)
                inner[kind].append(i)
        print()
        cached = "PYTHONDONTWRITEBYTECODE" not in env
        print(
            f"cold start to first screen, {args.starts} runs each, median (s); "
            f"bytecode cache {'on' if cached else 'off'}"
        )
        print(f"{'':24}{'process':>9}{'in-app':>9}")
        for kind, label in (("wizard", "wizard"), ("bare", "bare Textual app")):
            print(
                f"{label:24}{statistics.median(walls[kind]):9.3f}{statistics.median(inner[kind]):9.3f}"
            )
        print(
            f"{'ratio wizard / bare':24}"
            f"{statistics.median(walls['wizard']) / statistics.median(walls['bare']):9.2f}"
            f"{statistics.median(inner['wizard']) / statistics.median(inner['bare']):9.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
