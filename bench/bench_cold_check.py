"""Cold start: `sglang-wizard check -- CMD` in a new process vs SGLang's own cold rejection of CMD.

Both sides start a new interpreter per run, alternating, so machine noise hits both alike:

- wizard: `sglang-wizard check --gpu H100 --sglang-version V -- ARGV` (what a script or CI runs);
- SGLang: the release's venv imports `sglang.srt.server_args` and runs its argument code on the
  same ARGV (`prepare_server_args` + resolution + `check_server_args`, GPU probes answered as an
  H100 by the conformance runner). A real launch does more before it refuses (CUDA init, model
  config download), so the ratio is a lower bound.
- `python -c pass` of each interpreter is printed for scale.

Prints the medians and the ratio (issue 13's target: wizard <= 0.1 s here, ratio >= 40x).

    .venv/bin/python bench/bench_cold_check.py [--runs N] [--version V]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wizard.conformance.models import write_model_folders
from wizard.conformance.named_cases import named_cases
from wizard.conformance.run import models_root, runner_command
from wizard.conformance.venvs import is_ready, venv_python

WIZARD = Path(sys.executable).with_name("sglang-wizard")


def wall(command: list[str], stdin: str | None = None) -> float:
    """Seconds from start to exit of one new process."""
    started = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, text=True, check=False,
                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--version", default="0.5.11")
    parser.add_argument("--case", default="I1-try1", help="a named conformance case")
    args = parser.parse_args()
    models = write_model_folders(models_root())
    case = next(c for c in named_cases(args.version, models) if c["name"] == args.case)
    env_prefix = [f"{k}={v}" for k, v in (case.get("env") or {}).items()]
    wizard_cmd = [str(WIZARD), "check", "--gpu", case.get("gpu") or "H100",
                  "--gpus", str(case.get("gpus") or 1), "--sglang-version", args.version,
                  "--", *env_prefix, *case["argv"]]
    print(f"case {args.case} on SGLang {args.version}: {' '.join(case['argv'])[:100]}...")
    if not is_ready(args.version):
        print(f"SGLang side skipped: no venv for {args.version} (`sglang-wizard conformance build`)")
    python = venv_python(args.version)
    sglang_cmd = runner_command(python, case.get("gpu") or "H100", jobs=1)
    payload = json.dumps({k: case[k] for k in ("id", "argv", "env", "gpus") if k in case}) + "\n"
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(args.runs):
        ours.append(wall(wizard_cmd))
        if is_ready(args.version):
            theirs.append(wall(sglang_cmd, payload))
    base = statistics.median(wall([sys.executable, "-c", "pass"]) for _ in range(args.runs))
    w50 = statistics.median(ours)
    print(f"python -c pass          {base * 1000:8.0f} ms")
    print(f"wizard cold check       {w50 * 1000:8.0f} ms  (median of {args.runs}; "
          f"min {min(ours) * 1000:.0f} ms)")
    if theirs:
        s50 = statistics.median(theirs)
        print(f"SGLang cold rejection   {s50 * 1000:8.0f} ms  (median of {args.runs})")
        print(f"ratio                   {s50 / w50:8.1f}x  (SGLang / wizard)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
