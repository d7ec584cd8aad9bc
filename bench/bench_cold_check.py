"""Cold start: `sglang-wizard check -- CMD` in a new process vs SGLang's own cold rejection of CMD.

Both sides start a new interpreter per run, alternating, so machine noise hits both alike:

- wizard: `sglang-wizard check --gpu H100 --sglang-version V -- ARGV` (what a script or CI runs);
- SGLang: the release's venv imports `sglang.srt.server_args` and runs its argument code on the
  same ARGV (`prepare_server_args` + resolution + `check_server_args`, GPU probes answered as an
  H100 by the conformance runner). A real launch does more before it refuses (CUDA init, model
  config download), so the ratio is a lower bound.
- `python -c pass` of each interpreter is printed for scale.

The wizard's bytecode is compiled first, as pip compiles an installed wheel (and SGLang's venv):
where PYTHONDONTWRITEBYTECODE is set Python never writes it for an editable checkout, and every
start would compile the checker from source. The same check from a bytecode-less copy of the
package is measured alongside, so that cost stays visible.

Prints the medians and the ratio (issue 13's target: wizard <= 0.1 s here, ratio >= 40x).

    .venv/bin/python bench/bench_cold_check.py [--runs N] [--version V]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wizard.conformance.models import write_model_folders
from wizard.conformance.named_cases import named_cases
from wizard.conformance.run import models_root, runner_command
from wizard.conformance.venvs import is_ready, venv_python
from wizard.sglang.releases import default_version

ROOT = Path(__file__).resolve().parents[1]
WIZARD = Path(sys.executable).with_name("sglang-wizard")
TARGET_S = 0.1
TARGET_RATIO = 40.0
# `sglang-wizard ARGS` from another copy of the package (PYTHONPATH, run in that folder so the
# checkout's own package is not found first), never writing bytecode.
FROM_SOURCE = "import sys, wizard; sys.stderr.write(wizard.__file__ + '\\n'); " \
    "from wizard.cli import main; sys.exit(main())"


def wall(command: list[str], stdin: str | None = None, env: dict[str, str] | None = None,
         cwd: Path | None = None) -> float:
    """Seconds from start to exit of one new process."""
    started = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, text=True, check=False, cwd=cwd,
                   env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})
    return time.perf_counter() - started


def verdict(ok: bool) -> str:
    """`ok` / `MISSED` for a target line."""
    return "ok" if ok else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--version", default=default_version(),
                        help="an SGLang release (default: the wizard's default release)")
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
    compileall.compile_dir(ROOT / "wizard", quiet=1)  # no-op when the bytecode is current
    source_copy = Path(tempfile.mkdtemp(prefix="wizard-source-"))
    shutil.copytree(ROOT / "wizard", source_copy / "wizard",
                    ignore=shutil.ignore_patterns("__pycache__"))
    from_source = [sys.executable, "-c", FROM_SOURCE, *wizard_cmd[1:]]
    source_env = {"PYTHONPATH": str(source_copy), "PYTHONDONTWRITEBYTECODE": "1"}
    ours: list[float] = []
    uncompiled: list[float] = []
    theirs: list[float] = []
    try:
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        installed, copy = (
            subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=cwd,
                           env={**env, **extra})
            for cmd, cwd, extra in ((wizard_cmd, None, {}), (from_source, source_copy, source_env))
        )
        if (installed.stdout != copy.stdout or "SGLang" not in installed.stdout
                or not copy.stderr.startswith(str(source_copy))):
            raise SystemExit("the copy without bytecode does not answer as the installed wizard")
        for _ in range(args.runs):  # alternating, so machine noise hits every side alike
            ours.append(wall(wizard_cmd))
            uncompiled.append(wall(from_source, env=source_env, cwd=source_copy))
            if is_ready(args.version):
                theirs.append(wall(sglang_cmd, payload))
    finally:
        shutil.rmtree(source_copy, ignore_errors=True)
    base = statistics.median(wall([sys.executable, "-c", "pass"]) for _ in range(args.runs))
    w50 = statistics.median(ours)
    print(f"python -c pass          {base * 1000:8.0f} ms  (the wizard's interpreter)")
    if theirs:
        sglang_base = statistics.median(wall([str(python), "-c", "pass"]) for _ in range(args.runs))
        print(f"python -c pass          {sglang_base * 1000:8.0f} ms  (SGLang {args.version}'s venv)")
    print(f"wizard cold check       {w50 * 1000:8.0f} ms  (median of {args.runs}; "
          f"min {min(ours) * 1000:.0f} ms)  target <= {TARGET_S * 1000:.0f} ms: "
          f"{verdict(w50 <= TARGET_S)}")
    print(f"  without bytecode      {statistics.median(uncompiled) * 1000:8.0f} ms  "
          f"(median; the package compiled from source at every start)")
    if theirs:
        s50 = statistics.median(theirs)
        print(f"SGLang cold rejection   {s50 * 1000:8.0f} ms  (median of {args.runs})")
        print(f"ratio                   {s50 / w50:8.1f}x  (SGLang / wizard)  target >= "
              f"{TARGET_RATIO:.0f}x: {verdict(s50 / w50 >= TARGET_RATIO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
