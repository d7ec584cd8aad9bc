"""SGLang's own rejection of a launch command vs the wizard's check, measured side by side.

SGLang side: the conformance runner inside the version's venv times `prepare_server_args` +
resolution + `check_server_args` inside each forked child (interpreter start, imports and a first warm-up round excluded;
SGLang builds its parser per call, so `--fresh-parser` keeps that in, as in a real launch).
Wizard side: `wizard.api.check_case` on the same cases in this process (first call excluded).
Prints p50/p99 in microseconds and the ratio. Needs the venvs (`sglang-wizard conformance build`);
a version without a venv is skipped with a note.

    .venv/bin/python bench/bench_check_vs_sglang.py [--repeat N] [--versions V1,V2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wizard.api import check_case
from wizard.conformance.models import write_model_folders
from wizard.conformance.named_cases import named_cases
from wizard.conformance.run import models_root, runner_command
from wizard.conformance.venvs import is_ready, supported_versions, venv_python

# Rejected commands of the incidents and the reference (plus one accepted for contrast).
BENCH_CASES = ("I1-try1", "I1-try2", "I3-try2", "S04", "S10", "S21", "S03")


def percentile(values: list[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def sglang_times(version: str, cases: list[dict], repeat: int) -> list[float]:
    """Per-case microseconds inside SGLang's argument code (H100 fake)."""
    batch = []
    for index in range(repeat + 1):  # round 0 warms the lazy imports; it is not counted
        for case in cases:
            batch.append({"id": f"{case['id']}#{index}", "argv": case["argv"],
                          "env": case["env"], "gpus": case["gpus"]})
    command = [*runner_command(venv_python(version), "H100", jobs=1), "--fresh-parser"]
    proc = subprocess.run(command, input="".join(json.dumps(c) + "\n" for c in batch),
                          capture_output=True, text=True, check=True)
    times = [float(json.loads(line)["elapsed_us"]) for line in proc.stdout.splitlines()]
    return times[len(cases):]


def wizard_times(cases: list[dict], repeat: int) -> list[float]:
    """Per-case microseconds of `wizard.api.check_case`."""
    for case in cases:
        check_case(case)  # warm caches once, as a long-lived UI would be
    times = []
    for _ in range(repeat):
        for case in cases:
            started = time.perf_counter()
            check_case(case)
            times.append((time.perf_counter() - started) * 1e6)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each case")
    parser.add_argument("--versions", default="",
                        help="comma-separated releases to measure (default: every one held)")
    args = parser.parse_args()
    wanted = [v for v in args.versions.split(",") if v]
    models = write_model_folders(models_root())
    print(f"{'SGLang':8} {'cases':>5} {'sglang p50 us':>14} {'p99 us':>10} "
          f"{'wizard p50 us':>14} {'p99 us':>9} {'ratio p50':>10}")
    for version in wanted or supported_versions():
        cases = [c for c in named_cases(version, models) if c["name"] in BENCH_CASES]
        if not is_ready(version):
            print(f"{version:8} skipped: no venv (run `sglang-wizard conformance build`)")
            continue
        real = sglang_times(version, cases, args.repeat)
        ours = wizard_times(cases, args.repeat)
        s50, w50 = statistics.median(real), statistics.median(ours)
        print(f"{version:8} {len(cases):5d} {s50:14.0f} {percentile(real, 0.99):10.0f} "
              f"{w50:14.0f} {percentile(ours, 0.99):9.0f} {s50 / w50:9.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
