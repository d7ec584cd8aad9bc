"""TUI benchmark: keystroke -> findings repainted, and cold start, each next to a bare Textual app.

Both halves run the wizard and a bare Textual app the same way in the same run and print the
ratio, so the numbers mean something on any machine:

* keystroke: Pilot types into the Parameters step's "Draft tokens" field (alternating `1` and
  backspace, so every keystroke flips SGLang's verdict and the whole findings panel and effective
  table repaint); the clock stops when the findings panel shows the new report and the app is
  idle again. The bare app gets the same keys into a plain Input.
* cold start: a fresh `python` subprocess imports the app and runs it headless; the bare app is a
  Textual App with one Static, started the same way. Two moments are timed inside the process:
  *first screen* (Textual's `Ready`: the first screen is laid out and painted) and *settled* (the
  app is idle again: for the wizard that includes loading the first profile and its verdict,
  which a thread does after the first screen is up). The process column is the whole run, from
  `python` to exit, so it includes the settled work too.

Run: `.venv/bin/python bench/bench_tui.py [--keys 200] [--starts 9]` (0 skips a half).
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
shown = []
if kind == "wizard":
    from screens.app import WizardApp

    class Timed(WizardApp):
        def on_ready(self):
            shown.append(time.perf_counter() - t0)

    app = Timed()
else:
    from textual.app import App
    from textual.widgets import Footer, Static

    class Bare(App[int]):
        def compose(self):
            yield Static("hello")
            yield Footer()

        def on_ready(self):
            shown.append(time.perf_counter() - t0)

    app = Bare()

async def settle(pilot):
    await pilot.pause()
    if kind == "wizard":  # the first profile's verdict is on screen
        assert pilot.app.report is not None, pilot.app.core_problem
    pilot.app.exit(0)

app.run(headless=True, auto_pilot=settle)
print(shown[0], time.perf_counter() - t0)
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
    from wizard.profile_schema import Profile

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


def cold_start(kind: str, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds of the subprocess, then inside it from the first import: seconds to the
    first screen, seconds until settled)."""
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
    shown, settled = (float(x) for x in done.stdout.strip().splitlines()[-1].split())
    return wall, shown, settled


def main() -> int:
    """Run both benchmarks and print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--keys", type=int, default=200, help="keystrokes per app (default 200; 0 skips)"
    )
    parser.add_argument("--starts", type=int, default=9, help="cold starts per app (default 9; 0 skips)")
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

        if args.keys:
            keystrokes(args.keys, model)
        if args.starts:
            cold_starts(args.starts, args.no_bytecode_cache)
    return 0


def keystrokes(count: int, model: Path) -> None:
    """The keystroke half: both apps, then the table."""
    wizard = asyncio.run(wizard_keystrokes(count, model))
    bare = asyncio.run(bare_keystrokes(count))
    print(f"keystroke -> findings repainted, {count} keys each (ms)")
    print(f"{'':24}{'p50':>8}{'p99':>8}")
    print(
        f"{'wizard (Parameters)':24}{percentile(wizard, 50):8.2f}{percentile(wizard, 99):8.2f}"
    )
    print(f"{'bare Textual Input':24}{percentile(bare, 50):8.2f}{percentile(bare, 99):8.2f}")
    print(
        f"{'ratio wizard / bare':24}{percentile(wizard, 50) / percentile(bare, 50):8.2f}"
        f"{percentile(wizard, 99) / percentile(bare, 99):8.2f}"
    )


def cold_starts(starts: int, keep_bytecode_setting: bool) -> None:
    """The cold-start half: interleaved runs of both apps, then the table of medians."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # As installed apps start: with cached bytecode. The bare app's modules (site-packages)
    # always have .pyc files from pip; with PYTHONDONTWRITEBYTECODE set (some CI and sandbox
    # shells) the wizard's own modules would be compiled on every start instead, which
    # measures the compiler, not the app. --no-bytecode-cache keeps the caller's setting.
    if not keep_bytecode_setting:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    runs: dict[str, list[tuple[float, float, float]]] = {"wizard": [], "bare": []}
    cold_start("bare", env)  # warm the OS file cache for both equally
    cold_start("wizard", env)
    for _ in range(starts):
        for kind in ("wizard", "bare"):  # interleaved, so load on the box hits both
            runs[kind].append(cold_start(kind, env))
    print()
    cached = "PYTHONDONTWRITEBYTECODE" not in env
    print(
        f"cold start, {starts} runs each, median (s); "
        f"bytecode cache {'on' if cached else 'off'}"
    )
    medians = {
        kind: [statistics.median(run[i] for run in runs[kind]) for i in range(3)]
        for kind in runs
    }
    print(f"{'':24}{'first screen':>14}{'settled':>10}{'process':>10}")
    for kind, label in (("wizard", "wizard"), ("bare", "bare Textual app")):
        wall, shown, settled = medians[kind]
        print(f"{label:24}{shown:14.3f}{settled:10.3f}{wall:10.3f}")
    wizard, bare = medians["wizard"], medians["bare"]
    print(
        f"{'ratio wizard / bare':24}{wizard[1] / bare[1]:14.2f}{wizard[2] / bare[2]:10.2f}"
        f"{wizard[0] / bare[0]:10.2f}"
    )
    print("(settled and process include the wizard's first profile load and check)")


if __name__ == "__main__":
    raise SystemExit(main())
