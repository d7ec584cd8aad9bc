"""Classify the disagreements of saved ROCm sweeps: ROCm's own, or also there on H100.

    .venv/bin/python scripts/rocm_on_h100.py RESULTS.jsonl [...] [--out classified.jsonl]

Each RESULTS file is written by `conformance run --gpu MI300X|MI325X|MI355X --results-out`. Every
case the wizard disagrees on (re-scored against the wizard as it is now) runs again on a faked
H100, on real SGLang and through the wizard, with the same argv, environment and GPU count. A
case that agrees on H100 is ROCm's own (what ROCm changes is what differs); one that disagrees on
H100 too is a generic gap of the rules.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from wizard.conformance.cli import wizard_reports
from wizard.conformance.run import run_until_finished
from wizard.conformance.score import summarise


def load(path: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    cases, sglang = [], {}
    for line in path.read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            cases.append(entry["case"])
            sglang[str(entry["case"]["id"])] = entry["sglang"]
    return cases, sglang


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, help="one JSON line per disagreement, classified")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for path in args.results:
        cases, sglang = load(path)
        summary = summarise(cases, sglang, wizard_reports(cases))
        bad = summary.disagreements()
        if not bad:
            continue
        by_version: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in bad:
            twin = {**item.case, "id": f"{item.case['id']}-h100", "gpu": "H100"}
            by_version[str(twin["sglang_version"])].append(twin)
        for version, twins in by_version.items():
            h100 = run_until_finished(version, twins, jobs=args.jobs)
            h100_summary = summarise(twins, h100, wizard_reports(twins))
            h100_agree = {str(s.case["id"])[:-5]: s for s in h100_summary.scores}
            for item in bad:
                if str(item.case["sglang_version"]) != version:
                    continue
                twin_score = h100_agree[str(item.case["id"])]
                rows.append({
                    "id": item.case["id"], "gpu": item.case["gpu"], "file": path.name,
                    "rocm_own": twin_score.agree, "signature": item.signature,
                    "h100_signature": None if twin_score.agree else twin_score.signature,
                    "argv": item.case["argv"], "env": item.case.get("env") or {},
                })
    own = [r for r in rows if r["rocm_own"]]
    print(f"{len(rows)} disagreements, {len(own)} ROCm's own (agree on H100), "
          f"{len(rows) - len(own)} also on H100")
    for row in rows:
        tag = "ROCM " if row["rocm_own"] else "both "
        print(f"{tag} {row['id']} {row['gpu']}: {row['signature']}")
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
