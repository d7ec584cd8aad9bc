"""`sglang-wizard conformance ...`: build the SGLang venvs, run cases, score the wizard against them.

    sglang-wizard conformance add-release V [--cases N] [--seed S] [--no-run]
                                                 # onboard a release: derive, run, review
    sglang-wizard conformance build [--version V]
    sglang-wizard conformance run --version V --cases N --seed S [--gpu KIND] [--report FILE]
    sglang-wizard conformance named [--version V] [--write-fixtures DIR]
    sglang-wizard conformance score --results FILE [--report FILE]
    sglang-wizard conformance witnesses [--version V] [--write-fixtures DIR]

Exit codes: 0 agreement at or above `--min-agreement` (default 0.99), 1 below it, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wizard.api import check_case
from wizard.conformance import witnesses as wit
from wizard.conformance.cases import GPU_KINDS, generate, generate_multinode, generate_wide
from wizard.conformance.models import public_model_configs, write_model_folders
from wizard.conformance.named_cases import fixture_text, named_cases
from wizard.conformance.onboard import onboard, review_summary
from wizard.conformance.recorded import FOUND_FIXTURE, keep_found
from wizard.conformance.run import RunnerError, models_root, run_cases
from wizard.conformance.score import Summary, markdown_report, summarise, wizard_first_error
from wizard.conformance.venvs import VenvBuildError, ensure_venv, supported_versions
from wizard.errors import ToolInputError
from wizard.gpus import UnknownGpuError, lookup
from wizard.profile import atomic_write_text
from wizard.sglang.releases import (
    VersionError,
    known_versions,
    parse_version,
    previous_release,
    resolve_version,
)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _versions(value: str | None) -> list[str]:
    """The releases asked for (default: every release with its own data).

    An identical `.postN` alias (`0.5.8.post1`) is accepted: its own venv is built and the wizard
    checks it with its base release's data, which is exactly the claim worth testing."""
    if value is None:
        return list(supported_versions())

    supported = list(known_versions())
    chosen = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in supported]
    if unknown:
        raise ToolInputError(
            f"--version {', '.join(unknown)}: no release data; choose from {', '.join(supported)} "
            "(onboard a new one with `sglang-wizard conformance add-release V`)"
        )
    return chosen


def cmd_add_release(args: argparse.Namespace) -> int:
    """Onboard a release: derive its data, run its named cases and a fresh sweep, print a review.

    The review lists what a person must read before committing the data: rules whose site was
    not found or matched fuzzily, uncovered `assert`/`raise` sites, the cases where the wizard's
    outcome changed against the nearest older release's data, and every disagreement with the
    release's real SGLang."""
    try:
        parse_version(args.release)
    except VersionError as exc:
        raise ToolInputError(str(exc)) from None
    if args.cases < 0:
        raise ToolInputError("--cases must be 0 or more")
    try:
        path, review = onboard(args.release, _log)
    except (VenvBuildError, RuntimeError) as exc:
        return _failed(exc)
    print(f"wrote {path}")
    print("review (absent rules do not hold in this release; read every fuzzy match):")
    print(review_summary(review))
    if args.no_run:
        print(f"not run (--no-run); next: sglang-wizard conformance named --version "
              f"{args.release} && sglang-wizard conformance run --version {args.release} "
              f"--cases 300 --seed <new seed>")
        return 0

    models = write_model_folders(models_root())
    seed = args.seed if args.seed is not None else int(time.time())
    cases = named_cases(args.release, models)
    if args.cases:
        cases += generate(args.release, args.cases, seed, models)
    try:
        summary = score_cases(cases, args.jobs)
    except (VenvBuildError, RunnerError) as exc:
        return _failed(exc)
    changed = outcome_changes(cases)
    print(changed_summary(args.release, changed, len(cases)))
    return _finish(summary, args, f"add-release {args.release}: {len(cases) - args.cases} "
                   f"named + {args.cases} generated cases, seed {seed}")


def _outcome(report: dict[str, Any]) -> str:
    """A case's wizard outcome in one line: the first error (rule, type, where) or the trio."""
    error = wizard_first_error(report)
    if error is not None:
        return f"refuses: {error.get('rule')} {error.get('exception')} at {error.get('where')}"
    effective = report.get("effective") or {}
    trio = [effective.get(f"speculative_{n}") for n in ("num_steps", "eagle_topk",
                                                         "num_draft_tokens")]
    return f"starts: {effective.get('speculative_algorithm')} steps/topk/draft {trio}"


def outcome_changes(cases: Sequence[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """Cases whose wizard outcome differs between a release and the nearest older release's data.

    Returns (case id, older release, outcome with the older data, outcome with the new data)."""
    changed: list[tuple[str, str, str, str]] = []
    previous_of: dict[str, str | None] = {}
    for case in cases:
        version = str(case["sglang_version"])
        if version not in previous_of:
            previous_of[version] = previous_release(resolve_version(version)[0])
        previous = previous_of[version]
        if previous is None:
            continue
        new = _outcome(check_case(case))
        old = _outcome(check_case({**case, "sglang_version": previous}))
        if new != old:
            changed.append((str(case["id"]), previous, old, new))
    return changed


def changed_summary(release: str, changed: Sequence[tuple[str, str, str, str]],
                    total: int) -> str:
    """The "outcome changed" part of the review: real changes grouped by change, and cases where
    only the statement's line moved (same rule, same exception) counted per rule."""
    if not changed:
        return f"outcome changed against the previous release's data: none of {total} cases"
    moved: dict[str, set[str]] = {}
    groups: dict[tuple[str, str], list[str]] = {}
    for case_id, _previous, old, new in changed:
        old_rule, new_rule = old.split(" at ")[0], new.split(" at ")[0]
        if old.startswith("refuses:") and old_rule == new_rule:
            moved.setdefault(old_rule.removeprefix("refuses: "), set()).add(
                f"{old.split(' at ')[-1]} -> {new.split(' at ')[-1]}")
            continue
        groups.setdefault((old, new), []).append(case_id)
    real = sum(len(ids) for ids in groups.values())
    lines = [f"outcome changed against {changed[0][1]}'s data: {real} of {total} cases "
             f"(each should match a change in {release}'s argument code)"]
    for (old, new), ids in sorted(groups.items(), key=lambda item: -len(item[1]))[:20]:
        lines.append(f"  {len(ids):4d}  {old}  ->  {new}  e.g. {ids[0]}")
    if moved:
        lines.append(f"same outcome, statement moved ({len(moved)} rules): " + "; ".join(
            f"{rule} {', '.join(sorted(wheres))}" for rule, wheres in sorted(moved.items())))
    return "\n".join(lines)


def wizard_reports(cases: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The wizard's `check_case` report for every case, by id."""
    return {str(case["id"]): check_case(case) for case in cases}


def score_cases(cases: list[dict[str, Any]], jobs: int,
                results_out: Path | None = None) -> Summary:
    """Run the cases on real SGLang (per version) and through the wizard; compare. With
    `results_out`, SGLang's results are saved before the wizard's side runs (a wizard failure
    does not lose a long sweep).

    Raises VenvBuildError / RunnerError when a venv cannot be built or the runner fails."""
    sglang: dict[str, dict[str, Any]] = {}
    for version in sorted({str(c["sglang_version"]) for c in cases}):
        ensure_venv(version, log=_log)
        chosen = [c for c in cases if c["sglang_version"] == version]
        sglang.update(run_cases(version, chosen, jobs=jobs, log=_log))
    if results_out is not None:
        atomic_write_text(results_out, "".join(
            json.dumps({"case": c, "sglang": sglang[str(c["id"])]}) + "\n" for c in cases
            if str(c["id"]) in sglang))
    started = time.monotonic()
    wizard = wizard_reports(cases)
    _log(f"wizard: {len(cases)} cases in {time.monotonic() - started:.1f}s")
    return summarise(cases, sglang, wizard)


def cmd_build(args: argparse.Namespace) -> int:
    """Build (or confirm) the venvs."""
    for version in _versions(args.version):
        started = time.monotonic()
        try:
            python = ensure_venv(version, log=_log, force=args.force)
        except VenvBuildError as exc:
            print(f"building the SGLang {version} venv failed: {exc}", file=sys.stderr)
            return 1
        print(f"sglang {version}: {python} ({time.monotonic() - started:.0f}s)")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Generate cases, score them, print the table, write the report."""
    if args.cases < 1:
        raise ToolInputError("--cases must be at least 1")
    if args.gpu is not None:
        try:
            lookup(args.gpu)
        except UnknownGpuError as exc:
            raise ToolInputError(f"--gpu: {exc}") from None

    kind_name = getattr(args, "kind", "spec")
    models = write_model_folders(models_root())
    if kind_name == "wide":
        models.update(write_model_folders(models_root(), public_model_configs()))
    cases: list[dict[str, Any]] = []
    make = {"multinode": generate_multinode, "wide": generate_wide}.get(kind_name, generate)
    extra = [part for typed in (getattr(args, "with_flags", None) or []) for part in typed.split()]
    for version in _versions(args.version):
        if kind_name == "wide":
            cases += generate_wide(version, args.cases, args.seed, models, gpu=args.gpu,
                                   focus=tuple(extra))
        else:
            cases += make(version, args.cases, args.seed, models, gpu=args.gpu)
    if extra:
        # a focused sweep: every case also types these flags (a flag the case already types is
        # typed again; argparse keeps the last value)
        for case in cases:
            case["argv"] = [*case["argv"], *extra]
            case["origin"] = f"{case.get('origin', '')} +{' '.join(extra)}"
    if args.cases_out:
        atomic_write_text(Path(args.cases_out), "".join(json.dumps(c) + "\n" for c in cases))
    try:
        summary = score_cases(cases, args.jobs,
                              Path(args.results_out) if args.results_out else None)
    except (VenvBuildError, RunnerError) as exc:
        return _failed(exc)
    kind = {"multinode": " (multi-node)", "wide": " (wide)"}.get(kind_name, "")
    return _finish(summary, args,
                   f"Conformance{kind}: {args.cases} cases per version, seed {args.seed}")


def cmd_score(args: argparse.Namespace) -> int:
    """Score saved SGLang results (`run --results-out`) against the wizard as it is now."""
    path = Path(args.results)
    cases, sglang = _saved_results(path)
    summary = summarise(cases, sglang, wizard_reports(cases))
    return _finish(summary, args, f"Conformance (re-scored): {path.name}")


def _saved_results(path: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The cases and SGLang's results of a file written by `run --results-out`."""
    cases: list[dict[str, Any]] = []
    sglang: dict[str, dict[str, Any]] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ToolInputError(f"cannot read {path}: {exc.strerror}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            case, result = entry["case"], entry["sglang"]
            sglang[str(case["id"])] = result
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ToolInputError(
                f"{path}:{number}: not a saved result line ({exc}); write one with "
                "`conformance run --results-out FILE`"
            ) from None
        cases.append(case)
    if not cases:
        raise ToolInputError(f"{path} holds no results")
    return cases, sglang


def cmd_keep(args: argparse.Namespace) -> int:
    """Keep cases of a saved sweep, with SGLang's results, in the repository's found cases."""
    cases, sglang = _saved_results(Path(args.results))
    by_id = {str(c["id"]): c for c in cases}
    missing = [i for i in args.ids if i not in by_id]
    if missing:
        raise ToolInputError(f"{args.results} has no case {', '.join(missing)}; its ids look "
                             f"like {next(iter(by_id))}")
    models = write_model_folders(models_root())
    models.update(write_model_folders(models_root(), public_model_configs()))
    count = keep_found(Path(args.fixtures), [(by_id[i], sglang[i], args.why) for i in args.ids],
                       models)
    _log(f"kept {len(args.ids)} case(s); {Path(args.fixtures) / FOUND_FIXTURE} holds {count}")
    return 0


def cmd_named(args: argparse.Namespace) -> int:
    """Run the named cases (incidents and the reference's executed cases)."""
    models = write_model_folders(models_root())
    cases = [c for v in _versions(args.version) for c in named_cases(v, models)]
    try:
        summary = score_cases(cases, args.jobs)
    except (VenvBuildError, RunnerError) as exc:
        return _failed(exc)
    if args.write_fixtures:
        for version in _versions(args.version):
            results = {str(s.case["id"]): s.sglang for s in summary.scores
                       if s.case["sglang_version"] == version}
            path = Path(args.write_fixtures) / f"named-results-{version}.json"
            atomic_write_text(path, fixture_text(version, results, models))
            _log(f"wrote {path}")
    return _finish(summary, args, "Conformance: named cases")


def cmd_witnesses(args: argparse.Namespace) -> int:
    """Run every rule's witness pair on real SGLang where the rule holds; judge the wizard."""
    root = models_root()
    models = {**write_model_folders(root), **wit.write_witness_models(root)}
    failed = 0
    for version in _versions(args.version):
        cases = wit.all_cases(version, models)
        kept: dict[str, Any] | None = None
        fixture = Path(args.write_fixtures or ".") / f"witness-results-{version}.json"
        if args.rule:
            cases = [c for c in cases if c["rule"] in args.rule]
            if args.write_fixtures and fixture.exists():
                recorded = json.loads(fixture.read_text(encoding="utf-8"))["witnesses"]
                kept = {k: v for k, v in recorded.items() if k not in args.rule}
        try:
            ensure_venv(version, log=_log)
            results = run_cases(version, cases, jobs=args.jobs, log=_log)
        except (VenvBuildError, RunnerError) as exc:
            return _failed(exc)
        by_rule: dict[str, dict[str, Any]] = {}
        for case in cases:
            witness = wit.BY_RULE[str(case["rule"])]
            side = by_rule.setdefault(witness.rule, {})
            side[str(case["side"])] = (case, wit.compact_result(witness, results[str(case["id"])],
                                                                models))
        problems = 0
        for rule_id, sides in by_rule.items():
            (fires_case, fires), (near_case, near) = sides["fires"], sides["near"]
            found = wit.judge(wit.BY_RULE[rule_id], version, fires, near,
                              wizard_reports([fires_case])[str(fires_case["id"])],
                              wizard_reports([near_case])[str(near_case["id"])], models)
            for problem in found:
                print(f"{version} {rule_id}: {problem}")
            problems += bool(found)
        print(f"sglang {version}: {len(by_rule)} witnesses, {len(by_rule) - problems} agree")
        failed += problems
        if args.write_fixtures:
            path = fixture
            if kept is not None and set(kept) | set(by_rule) != {
                    w.rule for w in wit.sglang_witnesses(version)}:
                kept = None  # a witness neither run nor recorded: the whole table is needed
                print(f"{version}: the fixture lacks witnesses besides --rule; not written")
                failed += 1
                continue
            atomic_write_text(path, wit.fixture_text(version, results, models, kept))
            _log(f"wrote {path}")
    return 1 if failed else 0


def _failed(exc: Exception) -> int:
    """A venv that cannot be built or a runner that failed as a whole: say why, exit 1."""
    print(f"sglang-wizard: conformance: {exc}", file=sys.stderr)
    return 1


def _finish(summary: Summary, args: argparse.Namespace, title: str) -> int:
    print(summary.table())
    fields = summary.field_differences()
    if fields:
        print("effective fields shown differently (accepted cases): "
              + ", ".join(f"{k}: {n}" for k, n in fields.most_common()))
    for signature, items in summary.grouped_disagreements()[:20]:
        print(f"  {len(items):4d}  {signature}  e.g. {items[0].case['id']}")
    if args.report:
        atomic_write_text(Path(args.report), markdown_report(summary, title))
        print(f"report: {args.report}")
    worst = min(summary.agreement(v) for v in {str(s.case["sglang_version"])
                                               for s in summary.scores})
    return 0 if worst >= args.min_agreement else 1


def register(subparsers: Any) -> None:
    """Add `conformance` with its `build`, `run`, `score` and `named` subcommands."""
    parser = subparsers.add_parser(
        "conformance", help="prove the wizard's check against SGLang's real argument code"
    )
    sub = parser.add_subparsers(dest="conformance_command", metavar="ACTION")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--report", help="write the Markdown report of disagreements here")
        p.add_argument("--jobs", type=int, default=2, help="cases run at the same time")
        p.add_argument("--min-agreement", type=float, default=0.99,
                       help="exit 1 when a version's agreement is below this (default 0.99)")

    add = sub.add_parser("add-release", help="onboard an SGLang release: derive its release data "
                         "from its wheel (venv, flag/env dumps, located rule sites), print a review")
    add.add_argument("release", help="the SGLang release, e.g. 0.5.15")
    add.add_argument("--cases", type=int, default=200,
                     help="generated cases run on the release's real SGLang after the named ones "
                     "(default 200; 0: named cases only)")
    add.add_argument("--seed", type=int, help="generator seed (default: the current time)")
    add.add_argument("--no-run", action="store_true",
                     help="only derive and write the data; run nothing on SGLang")
    common(add)
    add.set_defaults(func=cmd_add_release)
    build = sub.add_parser("build", help="build the per-version SGLang venvs (cached)")
    build.add_argument("--version", help="one SGLang version (default: all supported)")
    build.add_argument("--force", action="store_true", help="rebuild even if up to date")
    build.set_defaults(func=cmd_build)

    run = sub.add_parser("run", help="generated cases: agreement per version and GPU kind")
    run.add_argument("--version", help="one SGLang version (default: all supported)")
    run.add_argument("--cases", type=int, required=True, help="cases per version")
    run.add_argument("--seed", type=int, required=True, help="generator seed")
    run.add_argument("--gpu", help=f"only this GPU kind of the catalog (default: {', '.join(GPU_KINDS)} "
                     "in turn; e.g. 'RTX PRO 6000 Blackwell', H200, A100-80GB)")
    run.add_argument("--kind", choices=("spec", "multinode", "wide"), default="spec",
                     help="spec: the speculative-decoding grid (default); multinode: one node's "
                     "command of N-node launches (nnodes, node rank, dist-init-addr, tp/pp/dp/ep); "
                     "wide: public model configs, every GPU kind, the flags users type plus any "
                     "flag of the release's table")
    run.add_argument("--with", dest="with_flags", action="append", metavar="FLAGS",
                     help="a focused sweep: every generated case also types these flags "
                     "(repeatable; a value starting with - needs the = form: --with=--enable-mis)")
    run.add_argument("--cases-out", help="also write the generated cases as JSON lines")
    run.add_argument("--results-out",
                     help="also save the cases with SGLang's results, for `conformance score`")
    common(run)
    run.set_defaults(func=cmd_run)

    score = sub.add_parser(
        "score", help="re-score saved SGLang results against the current wizard (no venv)"
    )
    score.add_argument("--results", required=True, help="a file written by `run --results-out`")
    common(score)
    score.set_defaults(func=cmd_score)

    keep = sub.add_parser(
        "keep", help="keep cases of a saved sweep (SGLang's results) as found cases the tests "
        "replay on every run"
    )
    keep.add_argument("--results", required=True, help="a file written by `run --results-out`")
    keep.add_argument("ids", nargs="+", metavar="CASE_ID", help="case ids, e.g. 0.5.16-w00019")
    keep.add_argument("--why", required=True, help="what the case caught (kept beside it)")
    keep.add_argument("--fixtures", default="tests/conformance/fixtures",
                      help="the fixtures folder (default: tests/conformance/fixtures)")
    keep.set_defaults(func=cmd_keep)

    named = sub.add_parser("named", help="the incidents' and the reference's named cases")
    named.add_argument("--version", help="one SGLang version (default: all supported)")
    named.add_argument("--write-fixtures", metavar="DIR",
                       help="write named-results-<V>.json (SGLang's results) into DIR")
    common(named)
    named.set_defaults(func=cmd_named)

    witnesses = sub.add_parser(
        "witnesses", help="every rule's fires / near-miss pair on real SGLang, per release"
    )
    witnesses.add_argument("--version", help="one SGLang version (default: all supported)")
    witnesses.add_argument("--write-fixtures", metavar="DIR",
                           help="write witness-results-<V>.json (SGLang's results) into DIR")
    witnesses.add_argument("--jobs", type=int, default=2, help="cases run at the same time")
    witnesses.add_argument("--rule", action="append", metavar="ID",
                           help="only this rule's witness (repeatable); with --write-fixtures "
                                "the other witnesses' recorded results are kept")
    witnesses.set_defaults(func=cmd_witnesses)
