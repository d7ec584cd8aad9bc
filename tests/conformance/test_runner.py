"""The stdlib runner against a tiny stand-in `sglang` package (no venv, no torch, no GPU).

The stand-in mimics the two argument pipelines the runner supports: 0.5.11 (`prepare_server_args`
resolves in the constructor) and 0.5.23 (`resolve_once()` after parsing). It keeps module-level
state so a leak between cases is visible.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "wizard" / "conformance" / "sglang_runner.py"

SERVER_ARGS = '''
import argparse
import logging
import os
import time

logger = logging.getLogger(__name__)
CONSTRUCTED = {"count": 0}


class ServerArgs:
    def __init__(self, **values):
        self.__dict__.update(values)
        CONSTRUCTED["count"] += 1
        if not RESOLVE_ONCE:
            self.__post_init__()

    def __post_init__(self):
        self._resolve()

    def resolve_once_impl(self):
        self._resolve()

    def _resolve(self):
        if CONSTRUCTED["count"] != 1:
            raise RuntimeError("state leaked from an earlier case")
        if self.model_path == "hang":
            time.sleep(60)
        if self.speculative_algorithm == "NEXTN":
            self.speculative_algorithm = "EAGLE"
        if self.speculative_algorithm is not None:
            if self.speculative_num_steps is None:
                assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None
                self.speculative_num_steps, self.speculative_eagle_topk = 3, 1
                self.speculative_num_draft_tokens = 4
            elif self.speculative_eagle_topk == 1:
                logger.warning("draft tokens adjusted")
                self.speculative_num_draft_tokens = self.speculative_num_steps + 1
        self.disable_overlap_schedule = os.environ.get("SGLANG_ENABLE_SPEC_V2") == "0"
        self.page_size = 7 if self.flag_from_env == "0" else 1  # a parser default read from env

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", required=True)
        parser.add_argument("--speculative-algorithm", choices=["EAGLE", "NEXTN"])
        parser.add_argument("--speculative-num-steps", type=int)
        parser.add_argument("--speculative-eagle-topk", type=int)
        parser.add_argument("--speculative-num-draft-tokens", type=int)
        parser.add_argument("--pp-size", type=int, default=1)
        parser.add_argument("--flag-from-env", default=os.environ.get("SGLANG_ENABLE_SPEC_V2"))

    @classmethod
    def from_cli_args(cls, args):
        return cls(**vars(args))

    def check_server_args(self):
        if self.pp_size > 1:
            raise ValueError("pipeline parallelism is not allowed here")


def prepare_server_args(argv):
    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return ServerArgs.from_cli_args(parser.parse_args(argv))
'''


def _stand_in(root: Path, version: str) -> Path:
    package = root / "sglang" / "srt"
    package.mkdir(parents=True)
    (root / "sglang" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    resolve_once = version == "0.5.23"
    source = f"RESOLVE_ONCE = {resolve_once}\n" + SERVER_ARGS
    if resolve_once:
        source += "\nServerArgs.resolve_once = ServerArgs.resolve_once_impl\n"
    (package / "server_args.py").write_text(source)
    dist = root / f"sglang-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n")
    return root


def _run(root: Path, cases: list[dict[str, Any]], *extra: str) -> list[dict[str, Any]]:
    payload = "".join(json.dumps(c) + "\n" for c in cases)
    proc = subprocess.run(
        [sys.executable, str(RUNNER), *extra], input=payload, capture_output=True, text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


CASES = [
    {"id": "auto", "argv": ["--model-path", "m", "--speculative-algorithm", "NEXTN"]},
    {"id": "trio", "argv": ["--model-path", "m", "--speculative-algorithm", "EAGLE",
                            "--speculative-num-draft-tokens", "16"]},
    {"id": "bad-choice", "argv": ["--model-path", "m", "--speculative-algorithm", "nextn"]},
    {"id": "v1", "argv": ["--model-path", "m", "--speculative-algorithm", "EAGLE",
                          "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
                          "--speculative-num-draft-tokens", "16"],
     "env": {"SGLANG_ENABLE_SPEC_V2": "0"}},
    {"id": "env-not-leaked", "argv": ["--model-path", "m"]},
    {"id": "pp", "argv": ["--model-path", "m", "--pp-size", "2"]},
]


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
@pytest.mark.parametrize("jobs", ["1", "3"])
def test_runner_reports_stage_exception_where_and_effective(
    tmp_path: Path, version: str, jobs: str
) -> None:
    results = _run(_stand_in(tmp_path, version), CASES, "--jobs", jobs)
    by_id = {r["id"]: r for r in results}
    assert [r["id"] for r in results] == [c["id"] for c in CASES]  # input order kept
    assert all(r["sglang_version"] == version for r in results)

    auto = by_id["auto"]
    assert auto["verdict"] == "ok" and auto["stage"] is None
    assert auto["effective"]["speculative_algorithm"] == "EAGLE"
    assert [auto["effective"][k] for k in ("speculative_num_steps", "speculative_eagle_topk",
                                           "speculative_num_draft_tokens")] == [3, 1, 4]

    trio = by_id["trio"]
    assert (trio["verdict"], trio["stage"], trio["exception"]) == ("error", "resolve",
                                                                  "AssertionError")
    assert trio["bare"] is True and trio["message"] == ""
    source = (tmp_path / "sglang" / "srt" / "server_args.py").read_text().splitlines()
    line = int(trio["where"].rsplit(":", 1)[1])
    assert trio["where"].startswith("sglang/srt/server_args.py:")
    assert source[line - 1].strip().startswith("assert self.speculative_eagle_topk is None")

    bad = by_id["bad-choice"]
    assert (bad["stage"], bad["exception"], bad["where"]) == ("argparse", "SystemExit", None)
    assert bad["message"].startswith("argument --speculative-algorithm: invalid choice: 'nextn'")

    v1 = by_id["v1"]
    assert v1["effective"]["speculative_num_draft_tokens"] == 2
    assert v1["effective"]["disable_overlap_schedule"] is True
    assert "draft tokens adjusted" in v1["warnings"]
    assert by_id["env-not-leaked"]["effective"]["disable_overlap_schedule"] is False

    pp = by_id["pp"]
    assert (pp["stage"], pp["exception"]) == ("check", "ValueError")
    assert pp["message"] == "pipeline parallelism is not allowed here"


def test_parser_is_built_under_each_case_environment(tmp_path: Path) -> None:
    """The reused parser is keyed by the case's env: defaults read from env stay per case."""
    root = _stand_in(tmp_path, "0.5.11")
    cases = [{"id": "a", "argv": ["--model-path", "m"], "env": {"SGLANG_ENABLE_SPEC_V2": "0"}},
             {"id": "b", "argv": ["--model-path", "m"]}]
    reused = _run(root, cases)
    fresh = _run(root, cases, "--fresh-parser")
    assert [r["effective"]["page_size"] for r in reused] == [7, 1]
    for result in reused + fresh:
        result.pop("elapsed_us")
    assert reused == fresh


def test_a_hanging_case_times_out_without_stopping_the_batch(tmp_path: Path) -> None:
    root = _stand_in(tmp_path, "0.5.11")
    results = _run(root, [{"id": "hang", "argv": ["--model-path", "hang"]}, CASES[0]],
                   "--timeout", "1", "--jobs", "2")
    assert results[0]["runner_error"] is True and results[0]["exception"] == "RunnerError"
    assert "timeout" in results[0]["message"]
    assert results[1]["verdict"] == "ok"


def test_dump_flags_describes_the_real_parser(tmp_path: Path) -> None:
    root = _stand_in(tmp_path, "0.5.23")
    proc = subprocess.run([sys.executable, str(RUNNER), "--dump-flags"], capture_output=True,
                          text=True, env={"PYTHONPATH": str(root)}, timeout=60, check=True)
    table = json.loads(proc.stdout)
    assert table["sglang_version"] == "0.5.23" and table["prog"] == "sglang serve"
    actions = {a["dest"]: a for a in table["actions"]}
    algo = actions["speculative_algorithm"]
    assert algo["option_strings"] == ["--speculative-algorithm"]
    assert algo["choices"] == ["EAGLE", "NEXTN"] and algo["action"] == "store"
    assert actions["speculative_num_steps"]["type"] == "int"
    assert actions["model_path"]["required"] is True
    assert actions["help"]["action"] == "help"


def test_a_python_without_sglang_gets_a_clear_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(RUNNER)], input="", capture_output=True,
                          text=True, env={"PYTHONPATH": str(tmp_path)}, timeout=60, check=False)
    assert proc.returncode == 3
    assert "cannot import SGLang's argument code" in proc.stderr and proc.stdout == ""


def test_probe_caches_of_partials_are_cleared_on_retarget() -> None:
    """`lru_cache(partial(probe))` (SGLang's `is_sm100_supported`) reports module `functools`."""
    import functools
    import types

    from wizard.conformance import sglang_runner

    module = types.ModuleType("sglang_probe_stand_in")
    exec(
        "import functools\n"
        "def _check(majors):\n    return majors\n"
        "probe = functools.lru_cache(maxsize=1)(functools.partial(_check, majors=[10]))\n",
        module.__dict__,
    )
    module._check.__module__ = module.__name__
    sys.modules[module.__name__] = module
    try:
        module.probe()
        assert module.probe.cache_info().currsize == 1
        assert isinstance(module.probe.__wrapped__, functools.partial)
        sglang_runner.clear_probe_caches()
        assert module.probe.cache_info().currsize == 0
    finally:
        del sys.modules[module.__name__]
