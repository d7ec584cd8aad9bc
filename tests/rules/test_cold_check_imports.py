"""Import discipline of a cold `sglang-wizard check -- CMD` (issue 13: the CLI loads only what it needs).

Each case runs the check in a new interpreter and reports what it imported and which files it
opened. The check path (check_cli -> api -> rules engine -> one release's data) must not import the
profile model (pydantic), the UI, SSH or the Hub client, and must read the data of the asked
release only, however many releases the wizard holds. The speed itself is measured in
bench/bench_cold_check.py, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import wizard

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(wizard.__file__).resolve().parent

# Modules (and their submodules) a cold command check never needs.
FORBIDDEN = (
    "pydantic",
    "textual",
    "asyncssh",
    "huggingface_hub",
    "screens",
    "wizard.profile",
    "wizard.profile_schema",
    "wizard.profile_problems",
    "wizard.remote",
    "wizard.conformance",
)

_PROBE = """
import contextlib, io, json, sys
opened = []
def _audit(event, args):
    if event == "open" and isinstance(args[0], str):
        opened.append(args[0])
sys.addaudithook(_audit)
from wizard.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
json.dump({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules),
           "opened": opened}, sys.stdout)
"""


def cold_check(args: list[str]) -> dict[str, Any]:
    """Run `sglang-wizard ARGS` in a new interpreter: exit code, output, modules, opened files."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def forbidden_modules(modules: list[str]) -> list[str]:
    """The modules of `modules` that a cold check must not import."""
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def package_data_read(opened: list[str]) -> set[str]:
    """The wizard's own data files among `opened`, relative to the package (`releases/data/...`)."""
    out = set()
    for path in opened:
        resolved = Path(path).resolve()
        if resolved.suffix == ".json" and resolved.is_relative_to(PACKAGE):
            out.add(resolved.relative_to(PACKAGE).as_posix())
    return out


def _cases(models: dict[str, str]) -> list[tuple[str, list[str], int, bool]]:
    """(version, arguments after it, exit code, whether the rules run on the release data)."""
    return [
        ("0.5.6", ["--gpu", "H100", "--", "--model-path", models["qwen35"],
                   "--speculative-algorithm", "NEXTN"], 1, True),
        ("0.5.23", ["--json", "--gpu", "B200", "--", "python", "-m", "sglang.launch_server",
                    "--model-path", models["llama"], "--speculative-algorithm", "EAGLE3",
                    "--speculative-draft-model-path", models["eagle3"]], 0, True),
        # SGLang's argparse refuses a typo before any rule runs; which release has the flag
        # comes from the flag index, not from every release's table
        ("0.5.11", ["--", "--model-path", models["llama"], "--speculative-algoritm", "EAGLE"],
         1, False),
        ("0.5.22", ["--", "--model-path", models["llama"], "--cuda-graph-tc-compiler", "x"],
         1, False),
        ("0.5.11", ["--", "--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE"],
         0, True),
    ]


@pytest.mark.parametrize(
    "index", range(5), ids=["local", "json", "typo", "other-release-flag", "hub-id"]
)
def test_cold_check_imports_only_the_checker_and_reads_only_the_asked_release(
    models: dict[str, str], index: int
) -> None:
    version, rest, code, rules_ran = _cases(models)[index]
    result = cold_check(["check", "--sglang-version", version, *rest])
    assert result["code"] == code, result["out"]
    assert f"SGLang {version}" in result["out"] or f'"sglang_version": "{version}"' in result["out"]
    assert forbidden_modules(result["modules"]) == []
    data = package_data_read(result["opened"])
    assert f"sglang/data/flags-{version}.json" in data
    assert (f"sglang/releases/data/{version}.json" in data) == rules_ran
    # shared by every release: the index, the flag index and the GPU catalog (one small file)
    shared = {"sglang/releases/data/index.json", "sglang/data/flag-releases.json", "data/gpus.json"}
    others = {name for name in data if name not in shared and version not in Path(name).name}
    assert others == set()


def test_the_probe_sees_what_a_profile_check_imports(models: dict[str, str], tmp_path: Path) -> None:
    """The probe is not blind: checking a profile needs the profile model, and that shows."""
    profile = tmp_path / "p.toml"
    profile.write_text(
        f'schema_version = 1\nsglang_version = "0.5.11"\n[model]\npath = "{models["llama"]}"\n'
    )
    result = cold_check(["check", str(profile)])
    assert "wizard.profile" in forbidden_modules(result["modules"])
    assert "pydantic" in forbidden_modules(result["modules"])
    assert "sglang/releases/data/0.5.11.json" in package_data_read(result["opened"])
