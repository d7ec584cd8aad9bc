"""Record real SGLang results per release as the fixtures `make test` replays (no venv there).

    .venv/bin/python scripts/record_sglang_results.py [--cases 30] [--seed 20261203] [VERSION ...]

For each release (default: every release with data) builds or reuses its conformance venv, runs
its named cases and ``--cases`` generated cases of ``--seed`` through its real argument code in
one runner pass, and writes `tests/conformance/fixtures/named-results-<V>.json` and
`generated-results-<V>.json` (wizard/conformance/recorded.py). Re-record a release when its venv
recipe changes what SGLang sees (new light packages) or when the named cases change; review the
diff: a changed result of SGLang itself means the environment changed, not the wizard.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from wizard.conformance.cases import generate
from wizard.conformance.models import write_model_folders
from wizard.conformance.named_cases import fixture_text, named_cases
from wizard.conformance.recorded import generated_fixture_text
from wizard.conformance.run import models_root, run_cases
from wizard.conformance.venvs import ensure_venv, supported_versions
from wizard.profile import atomic_write_text

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "conformance" / "fixtures"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="releases (default: all with data)")
    parser.add_argument("--cases", type=int, default=30, help="generated cases per release")
    parser.add_argument("--seed", type=int, default=20261203, help="generator seed")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at the same time")
    parser.add_argument("--out", type=Path, default=FIXTURES, help="fixture folder")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.versions) - set(supported_versions()))
    if unknown:
        parser.error(f"no release data for {', '.join(unknown)}")
    models = write_model_folders(models_root())
    for version in args.versions or supported_versions():
        started = time.monotonic()
        ensure_venv(version, log=lambda m: print(m, file=sys.stderr, flush=True))
        named = named_cases(version, models)
        generated = generate(version, args.cases, args.seed, models) if args.cases else []
        results = run_cases(version, named + generated, jobs=args.jobs)
        atomic_write_text(args.out / f"named-results-{version}.json",
                          fixture_text(version, results, models))
        atomic_write_text(args.out / f"generated-results-{version}.json",
                          generated_fixture_text(version, args.seed, generated, results, models))
        print(f"{version}: {len(named)} named + {len(generated)} generated cases recorded "
              f"({time.monotonic() - started:.0f}s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
