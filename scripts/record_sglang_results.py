"""Record real SGLang results per release as the fixtures `make test` replays (no venv there).

    .venv/bin/python scripts/record_sglang_results.py [--cases 30] [--seed 20261203] [VERSION ...]
    .venv/bin/python scripts/record_sglang_results.py --repair [VERSION ...]
    .venv/bin/python scripts/record_sglang_results.py --named W01 [--named W02 ...] [VERSION ...]

For each release (default: every release with data) builds or reuses its conformance venv, runs
its named cases and ``--cases`` generated cases of ``--seed`` through its real argument code in
one runner pass, and writes `tests/conformance/fixtures/named-results-<V>.json` and
`generated-results-<V>.json` (wizard/conformance/recorded.py). Re-record a release when its venv
recipe changes what SGLang sees (new light packages) or when the named cases change; review the
diff: a changed result of SGLang itself means the environment changed, not the wizard.

`--new-named` runs only the named cases a release's named recording does not hold yet (cases added
to `named_cases.py`) and adds their results to it, leaving the recorded ones and the generated
recording as they are.

A case the runner could not finish (a timeout on a loaded machine: `runner_error`) is run again,
alone, up to twice; `--repair` does only that for recordings already written.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from wizard.conformance.cases import generate
from wizard.conformance.models import write_model_folders
from wizard.conformance.named_cases import fixture_text, named_cases
from wizard.conformance.recorded import generated_fixture_text, recorded_cases, restore_paths
from wizard.conformance.run import models_root, run_until_finished
from wizard.conformance.venvs import ensure_venv, supported_versions
from wizard.profile import atomic_write_text

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "conformance" / "fixtures"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def write(out: Path, version: str, seed: int, named: list[dict[str, Any]],
          generated: list[dict[str, Any]], results: dict[str, dict[str, Any]],
          models: dict[str, Path]) -> None:
    """Write both fixtures of one release."""
    unfinished = sorted(i for i, r in results.items() if r.get("runner_error"))
    if unfinished:
        raise SystemExit(f"{version}: the runner did not finish {unfinished}; not written")
    if named:
        atomic_write_text(out / f"named-results-{version}.json",
                          fixture_text(version, results, models))
    atomic_write_text(out / f"generated-results-{version}.json",
                      generated_fixture_text(version, seed, generated, results, models))


def repair(out: Path, version: str, models: dict[str, Path]) -> None:
    """Run again the recorded cases of ``version`` that hold a runner error; rewrite both files."""
    cases, results = recorded_cases(out, version, models)
    unfinished = [c for c in cases if results[str(c["id"])].get("runner_error")]
    if not unfinished:
        print(f"{version}: nothing to repair")
        return
    ensure_venv(version, log=_log)
    results.update(run_until_finished(version, unfinished, jobs=1, log=_log))
    seed = json.loads((out / f"generated-results-{version}.json").read_text())["seed"]
    write(out, version, seed, [c for c in cases if c.get("origin") == "named"],
          [c for c in cases if c.get("origin") != "named"], results, models)
    print(f"{version}: {len(unfinished)} unfinished cases run again and recorded")


def record_named(out: Path, version: str, names: set[str], models: dict[str, Path],
                 jobs: int) -> None:
    """Run only the named cases ``names`` of ``version`` on its real SGLang and write them into
    its named fixture beside the results recorded before (new named cases, without re-running
    the others; the generated fixture is left as it is)."""
    path = out / f"named-results-{version}.json"
    recorded = ({e["name"]: e["result"] for e in json.loads(path.read_text())["cases"]}
                if path.exists() else {})
    cases = named_cases(version, models)
    chosen = [c for c in cases if c["name"] in names]
    missing = sorted(c["name"] for c in cases if c["name"] not in names
                     and c["name"] not in recorded)
    if missing:
        raise SystemExit(f"{version}: no recorded result for {missing}; record the release whole")
    ensure_venv(version, log=_log)
    results = run_until_finished(version, chosen, jobs, log=_log)
    unfinished = sorted(i for i, r in results.items() if r.get("runner_error"))
    if unfinished:
        raise SystemExit(f"{version}: the runner did not finish {unfinished}; not written")
    for case in cases:
        if case["name"] not in names:
            results[str(case["id"])] = recorded[case["name"]]
    atomic_write_text(path, fixture_text(version, results, models))
    print(f"{version}: {len(chosen)} named cases recorded, {len(cases) - len(chosen)} kept")


def record_new_named(out: Path, version: str, models: dict[str, Path], jobs: int) -> None:
    """Run the named cases the recording of ``version`` lacks; add them to its named fixture."""
    path = out / f"named-results-{version}.json"
    if not path.exists():
        print(f"{version}: no named recording (record the release first)")
        return
    recorded = {c["name"]: restore_paths(c["result"], models)
                for c in json.loads(path.read_text())["cases"]}
    named = named_cases(version, models)
    new = [c for c in named if c["name"] not in recorded]
    if not new:
        print(f"{version}: every named case is recorded")
        return
    ensure_venv(version, log=_log)
    results = {str(c["id"]): {**recorded[c["name"]], "id": c["id"]}
               for c in named if c["name"] in recorded}
    fresh = run_until_finished(version, new, jobs, log=_log)
    unfinished = sorted(i for i, r in fresh.items() if r.get("runner_error"))
    if unfinished:
        raise SystemExit(f"{version}: the runner did not finish {unfinished}; not written")
    results.update(fresh)
    atomic_write_text(path, fixture_text(version, results, models))
    print(f"{version}: {len(new)} new named cases recorded", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="releases (default: all with data)")
    parser.add_argument("--cases", type=int, default=30, help="generated cases per release")
    parser.add_argument("--seed", type=int, default=20261203, help="generator seed")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at the same time")
    parser.add_argument("--out", type=Path, default=FIXTURES, help="fixture folder")
    parser.add_argument("--repair", action="store_true",
                        help="only run again the recorded cases that hold a runner error")
    parser.add_argument("--named", action="append", metavar="NAME",
                        help="only run this named case (repeatable) and add its result to the "
                             "named fixture, keeping the recorded ones")
    parser.add_argument("--new-named", action="store_true",
                        help="only run the named cases not recorded yet and add them")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.versions) - set(supported_versions()))
    if unknown:
        parser.error(f"no release data for {', '.join(unknown)}")
    models = write_model_folders(models_root())
    for version in args.versions or supported_versions():
        if args.repair:
            repair(args.out, version, models)
            continue
        if args.named:
            record_named(args.out, version, set(args.named), models, args.jobs)
            continue
        if args.new_named:
            record_new_named(args.out, version, models, args.jobs)
            continue
        started = time.monotonic()
        ensure_venv(version, log=_log)
        named = named_cases(version, models)
        generated = generate(version, args.cases, args.seed, models) if args.cases else []
        results = run_until_finished(version, named + generated, args.jobs, log=_log)
        write(args.out, version, args.seed, named, generated, results, models)
        print(f"{version}: {len(named)} named + {len(generated)} generated cases recorded "
              f"({time.monotonic() - started:.0f}s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
