"""Key gate cost, side by side: the wizard with its key gate (`screens.keys.KeyGate`) and with
Textual's own key delivery, interleaved on the same machine.

* burst: 40 keys queued at once into Extra args (what `tmux send-keys` or a paste sent as keys
  does), timed until the profile holds the typed arguments;
* keystroke: the bench_tui keystroke loop (Draft tokens, 1 / backspace) for each delivery.

Run: `.venv/bin/python bench/bench_keys.py [--rounds 8] [--keys 20]`. Prints medians and the ratio.
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import bench_tui  # noqa: E402
from textual import events  # noqa: E402
from textual.app import App  # noqa: E402
from textual.keys import _character_to_key  # noqa: E402

from screens.app import WizardApp  # noqa: E402
from screens.forms import FieldInput  # noqa: E402
from wizard.profile_schema import Profile  # noqa: E402

GATED = WizardApp.post_message
TEXT = "--context-length 4096 --max-total-tokens 9"[:40]


async def burst(model: Path) -> float:
    """Milliseconds for TEXT, queued at once, to reach the profile."""
    profile = Profile.model_validate(
        {"model": {"path": str(model)}, "parallel": {"tp": 2}, "gpu": {"kind": "RTX A6000", "count": 2}}
    )
    app = WizardApp(initial=profile, ready_dir=model.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        field = next(x for x in app.screen.query(FieldInput) if x.path == "extra_args")
        field.focus()
        await pilot.pause()
        start = time.perf_counter()
        for char in TEXT:
            name = char if char.isalnum() else _character_to_key(char)
            app.post_message(events.Key(name, char))
        while app.profile.extra_args != TEXT.split():
            await asyncio.sleep(0.001)
        took = time.perf_counter() - start
        assert field.value == TEXT, field.value
        return took * 1000


def main() -> int:
    """Interleave both deliveries `--rounds` times; print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--keys", type=int, default=20, help="keystrokes per round (0 skips)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SGLANG_WIZARD_PROFILES_DIR"] = str(Path(tmp) / "profiles")
        model = bench_tui.tiny_model(Path(tmp) / "models")
        bursts: dict[str, list[float]] = {"gate": [], "textual": []}
        keys: dict[str, list[float]] = {"gate": [], "textual": []}
        for _ in range(args.rounds):
            for mode in bursts:
                WizardApp.post_message = GATED if mode == "gate" else App.post_message  # type: ignore[method-assign]
                bursts[mode].append(asyncio.run(burst(model)))
                if args.keys:
                    keys[mode] += asyncio.run(bench_tui.wizard_keystrokes(args.keys, model))
        WizardApp.post_message = GATED  # type: ignore[method-assign]
    print(f"{'(ms, median)':24}{'gate':>10}{'textual':>10}{'ratio':>8}")
    for name, data in ((f"burst of {len(TEXT)} keys", bursts), ("one keystroke", keys)):
        if all(data.values()):
            gate, plain = (statistics.median(data[m]) for m in ("gate", "textual"))
            print(f"{name:24}{gate:10.1f}{plain:10.1f}{gate / plain:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
