"""The live CI gate: on the releases run live this session, the wizard agrees with SGLang's real
argument code >= 99%.

Which releases run live is `live.todays_choice` (the newest, plus two picked by the UTC day;
`SGLANG_WIZARD_LIVE_RELEASES` overrides: a comma list, `all`, or `none`); every release is
replayed from its recorded results by `test_recorded.py` in any case. The venvs are built on
first use (cached in the user cache; `SGLANG_WIZARD_CACHE_DIR` moves it; all of them share one
torch base, see `wizard/conformance/venvs.py`), then each live release runs its named cases plus
`SGLANG_WIZARD_CONFORMANCE_CASES` (default 50) generated ones through the real code and through
`wizard.api.check_case`, and fails below 99%. The runs start in the background when collection
ends (see `background.py`); these tests run last and each waits for its own release. The generator
seed is new each run (printed; set `SGLANG_WIZARD_CONFORMANCE_SEED` to replay one).
`SGLANG_WIZARD_CONFORMANCE=0` skips these tests (e.g. on a machine without PyPI). The full matrix
is `make conformance`.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from wizard.conformance.cases import generate
from wizard.conformance.cli import wizard_reports
from wizard.conformance.models import write_model_folders
from wizard.conformance.named_cases import named_cases
from wizard.conformance.run import models_root, run_until_finished
from wizard.conformance.score import markdown_report, summarise
from wizard.conformance.venvs import (
    BASE_PTH_NAME,
    cache_dir,
    ensure_venv,
    pin_cache_dir,
    read_stamp,
    supported_versions,
    torch_base_dir,
    venv_python,
)

from .background import BackgroundRuns, shared_result, worker_order
from .live import todays_choice

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.timeout(1500),
    pytest.mark.skipif(os.environ.get("SGLANG_WIZARD_CONFORMANCE", "1") == "0",
                       reason="SGLANG_WIZARD_CONFORMANCE=0"),
]

CASES_PER_VERSION = int(os.environ.get("SGLANG_WIZARD_CONFORMANCE_CASES", "50"))
SEED = int(os.environ.get("SGLANG_WIZARD_CONFORMANCE_SEED") or random.SystemRandom().randrange(10**6))
MIN_AGREEMENT = 0.99
FIXTURES = Path(__file__).parent / "fixtures"
PARALLEL_RELEASES = 2
RELEASE_TIMEOUT = 1200.0  # one release's wait, after the suite (a hang fails that release)
LIVE = todays_choice(supported_versions())

Run = tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, Any]]]


def _say(message: str) -> None:
    """Progress of the background runs, to the session's own stdout: a test that swaps
    `sys.stdout` / `sys.stderr` meanwhile (in-process CLI runs) must not receive these lines."""
    print(message, file=sys.__stdout__, flush=True)


def _run_release(version: str, models: dict[str, Path], cache: Path,
                 env: dict[str, str]) -> Run:
    """Generated and named cases of one release in one runner pass (one SGLang import).

    Runs in a background thread while other tests change the environment: the cache dir and
    the environment are the ones the session started with."""
    pin_cache_dir(cache)
    started = time.monotonic()
    ensure_venv(version, log=_say)
    built = time.monotonic()
    generated = generate(version, CASES_PER_VERSION, SEED, models)
    named = named_cases(version, models)
    results = run_until_finished(version, generated + named, jobs=1, log=_say, base_env=env)
    _say(f"SGLang {version}: venv {built - started:.0f}s, {len(generated)} generated (seed "
         f"{SEED}) + {len(named)} named cases {time.monotonic() - built:.0f}s")
    return generated, named, results


_BACKGROUND: BackgroundRuns[Run] | None = None


def background() -> BackgroundRuns[Run]:
    """The session's background runs of the live releases (started on first call, one worker)."""
    global _BACKGROUND
    if _BACKGROUND is None:
        models = write_model_folders(models_root())
        print(f"\nconformance seed {SEED} (replay: SGLANG_WIZARD_CONFORMANCE_SEED={SEED})")
        cache, env = cache_dir(), dict(os.environ)
        _BACKGROUND = BackgroundRuns(
            worker_order(LIVE.releases),
            lambda version: shared_result(f"live-{version}",
                                          lambda: _run_release(version, models, cache, env)),
            max_workers=PARALLEL_RELEASES)
        if os.environ.get("SGLANG_WIZARD_CONFORMANCE", "1") != "0":
            _BACKGROUND.add_worker()
    return _BACKGROUND


def _run(version: str) -> Run:
    return background().result(version, timeout=RELEASE_TIMEOUT)


@pytest.mark.parametrize("version", LIVE.releases)
def test_wizard_agrees_with_real_sglang(version: str) -> None:
    generated, named, results = _run(version)
    cases = generated + named
    summary = summarise(cases, results, wizard_reports(cases))
    print(f"\n{summary.table()}")
    if summary.agreement(version) < MIN_AGREEMENT:
        report = markdown_report(summary, f"CI conformance {version} (seed {SEED})")
        pytest.fail(f"agreement {summary.agreement(version):.1%} < {MIN_AGREEMENT:.0%} "
                    f"(seed {SEED})\n" + report[:6000])


def _identity(result: dict[str, Any]) -> tuple[Any, ...]:
    effective = result.get("effective") or {}
    return (result.get("verdict"), result.get("stage"), result.get("exception"),
            result.get("where"), effective.get("speculative_algorithm"),
            effective.get("speculative_num_steps"), effective.get("speculative_eagle_topk"),
            effective.get("speculative_num_draft_tokens"))


@pytest.mark.parametrize("version", [v for v in LIVE.releases
                                     if (FIXTURES / f"named-results-{v}.json").exists()])
def test_committed_named_results_are_what_sglang_does(version: str) -> None:
    """The recorded results (replayed for every release, and reused by other areas' tests) are
    still what the real code does on this machine's venv."""
    fixture = json.loads((FIXTURES / f"named-results-{version}.json").read_text())
    committed = {c["name"]: c["result"] for c in fixture["cases"]}
    _generated, named, results = _run(version)
    for case in named:
        assert _identity(results[case["id"]]) == _identity(committed[case["name"]]), case["name"]


@pytest.mark.parametrize("version", LIVE.releases[-1:])
def test_live_venvs_share_one_torch_install(version: str) -> None:
    """The release venv holds no torch of its own: it imports the CPU torch of the shared base."""
    _run(version)
    stamp = read_stamp(version) or {}
    packages = [str(p).lower() for p in stamp.get("packages", [])]  # type: ignore[attr-defined]
    assert packages and not any(p.startswith("torch==") for p in packages)
    site = venv_python(version).parent.parent / "lib"
    assert [p.read_text().strip() for p in site.glob(f"python*/site-packages/{BASE_PTH_NAME}")] \
        == [str(next(torch_base_dir().glob("lib/python*/site-packages")))]
    probe = subprocess.run(
        [str(venv_python(version)), "-c", "import sys, torch, transformers; print(torch.__file__); "
         "print(torch.version.cuda); print(transformers.__file__); print(sys.prefix)"],
        capture_output=True, text=True, check=True, cwd="/")
    torch_file, cuda, transformers_file, prefix = probe.stdout.split()
    assert torch_file.startswith(str(torch_base_dir())) and cuda == "None"
    assert transformers_file.startswith(prefix) and prefix == str(venv_python(version).parent.parent)
