"""Issue 25 items 16, 18-20: each traceback, hang and silent acceptance found by the fuzz run,
replayed exactly. Bad input is refused at the boundary (exit 2, naming the option or field and its
range), a bad batch line is reported with its id and the batch goes on, no loop runs unbounded.

Most cases run in-process (`fuzz_harness.run_cli`: a hang fails after its time limit instead of
stalling the suite); `test_real_process_exit_codes` runs a few as real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from fuzz_harness import Outcome, run_cli

ROOT = Path(__file__).resolve().parents[2]
LONG = "a" * 300  # longer than NAME_MAX (255): OSError errno 36 where a path is looked at
MULTINODE = "deepseek-v3-fp8-2x8-h100.toml"
SINGLE = "qwen3.6-27b-mtp-a6000.toml"


def _ok(outcome: Outcome, code: int | tuple[int, ...]) -> str:
    """Assert a clean end with `code`; return stderr + stdout."""
    problem = outcome.problem()
    assert problem is None, problem
    codes = code if isinstance(code, tuple) else (code,)
    assert outcome.code in codes, (outcome.code, outcome.err, outcome.out[-2000:])
    return outcome.err + outcome.out


def _model(folder: Path, config: dict[str, object] | str, **files: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    text = config if isinstance(config, str) else json.dumps(config)
    (folder / "config.json").write_text(text, encoding="utf-8")
    for name, content in files.items():
        (folder / name.replace("__", ".")).write_text(content, encoding="utf-8")
    return str(folder)


def _config(model_dirs: dict[str, str], name: str) -> dict[str, object]:
    return dict(json.loads((Path(model_dirs[name]) / "config.json").read_text()))


# ------------------------------------------------------------------ item 18: --sglang-version


@pytest.mark.parametrize("version", ["latest", "", "0"])
def test_check_profile_refuses_a_version_that_is_not_one(workdir: Path, version: str) -> None:
    text = _ok(run_cli(["check", "--sglang-version", version, SINGLE]), 2)
    assert "--sglang-version" in text and "is not an SGLang version" in text


@pytest.mark.parametrize("version", ["latest", "", "0"])
def test_inspect_refuses_a_version_that_is_not_one(
    workdir: Path, model_dirs: dict[str, str], version: str
) -> None:
    text = _ok(run_cli(["inspect", model_dirs["llama"], "--sglang-version", version]), 2)
    assert "--sglang-version" in text and "0.5.11" in text


def test_check_command_names_the_version_option(workdir: Path) -> None:
    text = _ok(run_cli(["check", "--sglang-version", "latest", "--", "--model-path", "m"]), 2)
    assert "--sglang-version: 'latest' is not an SGLang version" in text


# ------------------------------------------------------------------ item 18: inspect numbers


def test_inspect_refuses_an_absurd_tp(workdir: Path, model_dirs: dict[str, str]) -> None:
    text = _ok(run_cli(["inspect", model_dirs["llama"], "--gpu", "H100", "--gpus", "8",
                        "--tp", "4294967297"]), 2)
    assert "--tp must be an integer from 1 to 4096, got 4294967297" in text


@pytest.mark.parametrize("value", ["1e21", "nan", "inf", "-inf", "0", "-0.5", "1.5"])
def test_inspect_names_mem_fraction_out_of_range(
    workdir: Path, model_dirs: dict[str, str], value: str
) -> None:
    text = _ok(run_cli(["inspect", model_dirs["llama"], "--gpu", "H100", f"--mem-fraction={value}"]), 2)
    assert "--mem-fraction must be a number greater than 0 and at most 1" in text


@pytest.mark.parametrize("flag", ["--num-steps", "--topk", "--num-draft-tokens"])
def test_inspect_refuses_speculative_counts_out_of_range(
    workdir: Path, model_dirs: dict[str, str], flag: str
) -> None:
    text = _ok(run_cli(["inspect", model_dirs["llama"], "--gpu", "H100", flag, "100000000000"]), 2)
    assert f"{flag} must be an integer from 1 to 1024" in text


def test_huge_safetensors_total_size_is_refused_naming_the_key(
    workdir: Path, model_dirs: dict[str, str]
) -> None:
    index = json.dumps({"metadata": {"total_size": 1e300}, "weight_map": {}})
    folder = _model(workdir / "huge", _config(model_dirs, "llama"),
                    model__safetensors__index__json=index)
    text = _ok(run_cli(["inspect", folder, "--gpu", "H100"]), 2)
    assert "model.safetensors.index.json" in text and "metadata.total_size" in text
    assert "from 1 to 1125899906842624" in text


def test_huge_but_readable_sizes_plan_without_crashing(
    workdir: Path, model_dirs: dict[str, str]
) -> None:
    """Sizes at the top of the accepted range give a plan that does not fit, not a MemoryError."""
    config = {**_config(model_dirs, "llama"), "hidden_size": 2**39, "intermediate_size": 2**40,
              "vocab_size": 2**40}
    folder = _model(workdir / "big", config)
    text = _ok(run_cli(["inspect", folder, "--gpu", "H100", "--gpus", "8", "--tp", "8"]), 1)
    assert "WILL NOT FIT" in text


@pytest.mark.parametrize("shape", [[10**200, 10**200], [2**40, 2**40]])
def test_an_absurd_safetensors_header_keeps_the_estimate(
    workdir: Path, model_dirs: dict[str, str], shape: list[int]
) -> None:
    """A shard header whose tensor holds more than 1 PiB of elements is not used (it crashed the
    plan with OverflowError: int too large to convert to float)."""
    import struct

    config = {**_config(model_dirs, "llama"), "quantization_config": {"quant_method": "fp8"}}
    folder = Path(_model(workdir / "shard", config))
    header = json.dumps({"w": {"dtype": "F8_E4M3", "shape": shape, "data_offsets": [0, 0]}})
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header.encode())
    outcome = run_cli(["inspect", str(folder), "--gpu", "H100", "--json"])
    _ok(outcome, (0, 1))
    assert json.loads(outcome.out)["model"]["params_source"] == "estimate"


def test_memory_bar_stays_in_its_width() -> None:
    from wizard.inspect_cli import _bar

    class Plan:
        gpu_total_gib = 80.0
        weights_gib = float("inf")
        mamba_pool_gib = spec_mamba_buffer_gib = 0.0
        kv_budget_gib = 1e300
        draft_weights_gib = draft_kv_gib = float("nan")
        activation_estimate_gib = cuda_graph_estimate_gib = 1.0

    bar = _bar(Plan())  # type: ignore[arg-type]
    assert len(bar) == 52 and bar.startswith("[W")


# ------------------------------------------------------------------ item 18: nested JSON


def _nested(model_dirs: dict[str, str], folder: Path, depth: int = 100_000) -> str:
    text = json.dumps(_config(model_dirs, "llama"))[:-1]
    return _model(folder, text + ', "deep": ' + '{"x": ' * depth + "1" + "}" * depth + "}")


@pytest.mark.parametrize("depth", [100_000, 500])
def test_deeply_nested_config_is_an_input_error(
    workdir: Path, model_dirs: dict[str, str], depth: int
) -> None:
    folder = _nested(model_dirs, workdir / "nested", depth)
    text = _ok(run_cli(["inspect", folder]), 2)
    assert "config.json: is nested more than 64 levels deep" in text
    text = _ok(run_cli(["inspect", model_dirs["llama"], "--draft", folder, "--algorithm", "EAGLE"]), 2)
    assert "draft" in text and "nested" in text


def test_check_with_a_deeply_nested_config_reports_missing_facts(
    workdir: Path, model_dirs: dict[str, str]
) -> None:
    folder = _nested(model_dirs, workdir / "nested")
    outcome = run_cli(["check", "--json", "--", "--model-path", folder])
    _ok(outcome, (0, 1))
    report = json.loads(outcome.out)
    missing = [f for f in report["findings"] if f["rule"] == "R-FACTS-MISSING"]
    assert missing and "nested" in missing[0]["message"]


# ------------------------------------------------------------------ item 18: long paths


@pytest.mark.parametrize("argv", [
    ["inspect", LONG],
    ["inspect", "--profile", LONG],
    ["profiles", "show", LONG],
    ["profiles", "validate", LONG],
    ["check", LONG],
    ["command", LONG],
    ["export", MULTINODE, "--format", "sbatch", "-o", LONG],
    ["export", MULTINODE, "--format", "lws", "-o", f"{LONG}/x.yaml"],
    ["import", "-o", LONG, "--", "--model-path", "m"],
], ids=lambda argv: "-".join(a for a in argv[:2] if a != LONG))
def test_a_path_too_long_for_the_file_system_is_an_input_error(
    workdir: Path, argv: list[str]
) -> None:
    text = _ok(run_cli(argv), 2)
    assert "sglang-wizard: error" in text or "profiles valid" in text
    assert LONG not in text.split("error:", 1)[-1][:200] or "…" in text or "..." in text


# ------------------------------------------------------------------ items 18/20: check --jsonl


def _batch(workdir: Path, lines: list[str]) -> tuple[Outcome, list[dict[str, object]]]:
    source = workdir / "cases.jsonl"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    outcome = run_cli(["check", "--jsonl", str(source)])
    return outcome, [json.loads(line) for line in outcome.out.splitlines()]


def test_a_bad_batch_line_does_not_lose_the_lines_after_it(
    workdir: Path, model_dirs: dict[str, str]
) -> None:
    good = json.dumps({"id": "last", "argv": ["--model-path", model_dirs["llama"]], "gpu": "H100"})
    outcome, reports = _batch(workdir, [
        json.dumps({"id": "env", "argv": ["--model-path", "m"], "env": "x"}),
        json.dumps({"id": "gpu", "argv": ["--model-path", "m"], "gpu": 5}),
        good,
    ])
    _ok(outcome, 2)
    assert [r["id"] for r in reports] == ["env", "gpu", "last"]
    assert reports[0]["verdict"] == reports[1]["verdict"] == "input-error"
    assert '"env": expected an object' in str(reports[0]["error"])
    assert '"gpu": expected a GPU kind' in str(reports[1]["error"])
    assert reports[2]["verdict"] == "ok"


def test_a_batch_line_that_is_not_utf8_is_that_lines_input_error(
    workdir: Path, model_dirs: dict[str, str]
) -> None:
    """A Latin-1 byte in one line ended the whole batch ("cases.jsonl: not UTF-8 text", no report
    at all); from stdin it was checked with a garbled model path. Now that line is an input
    error and the lines after it are checked."""
    good = json.dumps({"id": "last", "argv": ["--model-path", model_dirs["llama"]], "gpu": "H100"})
    source = workdir / "cases.jsonl"
    source.write_bytes(b'{"id": "latin1", "argv": ["--model-path", "/m\xe9"]}\n'
                       + good.encode() + b"\n")
    outcome = run_cli(["check", "--jsonl", str(source)])
    _ok(outcome, 2)
    reports = [json.loads(line) for line in outcome.out.splitlines()]
    assert [r["id"] for r in reports] == ["latin1", "last"]
    assert reports[0]["verdict"] == "input-error" and reports[0]["line"] == 1
    assert "cases.jsonl:1: not UTF-8 text" in str(reports[0]["error"])
    assert reports[1]["verdict"] == "ok"


@pytest.mark.parametrize("value", ['"x"', "2.5", "-1", "0", "true", "NaN", "1e400", "4294967297",
                                   "[8]", '{"n": 8}'])
def test_batch_gpus_must_be_a_count(workdir: Path, value: str) -> None:
    outcome, reports = _batch(workdir, ['{"id": 7, "argv": ["--model-path", "m"], "gpus": '
                                        + value + "}"])
    _ok(outcome, 2)
    (report,) = reports
    assert report["id"] == 7 and report["verdict"] == "input-error"
    assert '"gpus": expected an integer from 1 to 1024' in str(report["error"])
    assert "object" not in str(report["error"]).split("got")[0]  # no Python internals


def test_batch_argv_must_be_a_list(workdir: Path) -> None:
    outcome, reports = _batch(workdir, ['{"id": "s", "argv": "--model-path m"}',
                                        '{"id": "n", "argv": ["--tp", null]}'])
    _ok(outcome, 2)
    assert [r["verdict"] for r in reports] == ["input-error", "input-error"]
    assert '"argv": expected a list of strings' in str(reports[0]["error"])
    assert '"argv"[1]: expected a string, got null' in str(reports[1]["error"])


@pytest.mark.parametrize("line, case_id", [
    ('{"id": "v", "argv": [], "sglang_version": "latest"}', "v"),
    ('{"id": 12, "argv": [], "env": {"1X": "y"}}', 12),
    ('{"id": "broken", "argv": [', "broken"),  # not JSON: the id is read from the text
    ('{"id": 3.5, oops}', 3.5),
    ("[1, 2]", None),
])
def test_input_errors_keep_the_line_id(workdir: Path, line: str, case_id: object) -> None:
    outcome, reports = _batch(workdir, [line])
    _ok(outcome, 2)
    assert reports[0]["id"] == case_id and reports[0]["line"] == 1
    assert reports[0]["verdict"] == "input-error" and reports[0]["error"]


def test_batch_numbers_in_argv_and_env_are_read_as_text(
    workdir: Path, model_dirs: dict[str, str]
) -> None:
    outcome, reports = _batch(workdir, [json.dumps(
        {"id": 1, "argv": ["--model-path", model_dirs["llama"], "--tp", 2], "gpus": 2,
         "gpu": "H100", "env": {"SGLANG_ENABLE_SPEC_V2": 1}})])
    _ok(outcome, 0)
    assert reports[0]["verdict"] == "ok"


# ------------------------------------------------------------------ item 19: hangs


def _with_nnodes(workdir: Path, nnodes: int) -> str:
    text = (workdir / MULTINODE).read_text(encoding="utf-8").replace("nnodes = 2",
                                                                     f"nnodes = {nnodes}")
    path = workdir / "many-nodes.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("command", [["check"], ["command"], ["export", "--format", "sbatch"]])
def test_absurd_nnodes_in_a_profile_is_refused_naming_the_field(
    workdir: Path, command: list[str]
) -> None:
    path = _with_nnodes(workdir, 1099511627776)
    argv = [command[0], path, *command[1:]]
    text = _ok(run_cli(argv, timeout=30), 2)
    assert "parallel.nnodes: must be at most 1024, got 1099511627776" in text
    assert "(allowed: an integer from 1 to 1024)" in text


def test_absurd_nnodes_as_a_flag_is_checked_at_once(workdir: Path, model_dirs: dict[str, str]) -> None:
    """SGLang takes the flag and refuses tp * pp % nnodes: so does the check, without searching
    for a tp (the old loop counted up to 2**40)."""
    start = time.monotonic()
    outcome = run_cli(["check", "--json", "--", "--model-path", model_dirs["llama"], "--nnodes",
                       "1099511627776", "--dist-init-addr", "10.0.0.1:5000"], timeout=30)
    _ok(outcome, 1)
    assert time.monotonic() - start < 20
    report = json.loads(outcome.out)
    first = next(f for f in report["findings"] if f["rule"] == "R-MULTINODE-TP")
    assert [fix["edits"] for fix in first["fixes"]] == [{"parallel.nnodes": 1}]  # no tp 2**40


@pytest.mark.parametrize("tp, pp, nnodes, expected", [
    (3, 1, 2, 4), (1, 2, 4, 2), (6, 4, 8, 6), (5, 3, 9, 6), (1, 1, 1099511627776, 1099511627776),
    (7, 1099511627776, 1099511627776, 7), (0, 1, 4, 4),
])
def test_next_tp_is_computed(tp: int, pp: int, nnodes: int, expected: int) -> None:
    from wizard.rules.multinode import _next_tp

    got = _next_tp({"tp_size": tp, "pp_size": pp, "nnodes": nnodes})  # type: ignore[arg-type]
    assert got == expected and got >= max(tp, 1) and (got * pp) % nnodes == 0


def test_a_config_with_1e30_layers_is_refused_at_once(
    workdir: Path, model_dirs: dict[str, str]
) -> None:
    config = {**_config(model_dirs, "dsv3"), "num_hidden_layers": 1e30}  # MoE: _moe_info's loop
    folder = _model(workdir / "layers", config)
    start = time.monotonic()
    text = _ok(run_cli(["inspect", folder], timeout=30), 2)
    assert time.monotonic() - start < 20
    assert "'num_hidden_layers': expected an integer from 1 to 100000" in text
    outcome = run_cli(["check", "--", "--model-path", folder], timeout=30)
    assert "num_hidden_layers" in _ok(outcome, (0, 1))


@pytest.mark.parametrize("key, value", [
    ("cuda_graph_max_bs", 10**12), ("max_running_requests", 10**12),
    ("context_length", 10**12), ("chunked_prefill_size", 10**12),
])
def test_absurd_memory_sizes_in_a_profile_are_refused(workdir: Path, key: str, value: int) -> None:
    text = (workdir / SINGLE).read_text(encoding="utf-8")
    section = "model" if key == "context_length" else "memory"
    text += f"\n[{section}]\n{key} = {value}\n" if f"[{section}]" not in text else ""
    if f"{key} =" not in text:
        text = text.replace(f"[{section}]\n", f"[{section}]\n{key} = {value}\n", 1)
    path = workdir / "sizes.toml"
    path.write_text(text, encoding="utf-8")
    message = _ok(run_cli(["check", str(path)], timeout=30), 2)
    assert f"{section}.{key}: must be at most" in message


def test_absurd_flag_sizes_give_no_plan_instead_of_a_hang(
    workdir: Path, model_dirs: dict[str, str]
) -> None:
    outcome = run_cli(["check", "--gpu", "H100", "--", "--model-path", model_dirs["llama"],
                       "--cuda-graph-max-bs", "1000000000000", "--mem-fraction-static", "inf",
                       "--context-length", "100000000000000"], timeout=30)
    _ok(outcome, (0, 1))


# ------------------------------------------------------------------ item 20: node hosts


def test_a_node_host_port_outside_the_range_is_refused(workdir: Path) -> None:
    text = (workdir / MULTINODE).read_text(encoding="utf-8")
    path = workdir / "bad-port.toml"
    path.write_text(text.replace('host = "gpu-b"', 'host = "u@gpu-b:99999"'), encoding="utf-8")
    line = next(n for n, row in enumerate(path.read_text().splitlines(), 1) if "99999" in row)
    message = _ok(run_cli(["profiles", "validate", str(path)]), 2)
    assert f"bad-port.toml:{line}: nodes.hosts[1].host: port 99999 in 'u@gpu-b:99999' is " \
           "outside 1..65535" in message
    ok = workdir / "good-port.toml"
    ok.write_text(text.replace('host = "gpu-b"', 'host = "u@gpu-b:2222"'), encoding="utf-8")
    _ok(run_cli(["profiles", "validate", str(ok)]), 0)


@pytest.mark.parametrize("spec", ["gpu:0", "u@gpu:65536", "[::1]:70000"])
def test_an_ssh_host_port_outside_the_range_is_refused(workdir: Path, spec: str) -> None:
    path = workdir / "ssh.toml"
    path.write_text(f'schema_version = 1\n[model]\npath = "m"\n[ssh]\nhost = "{spec}"\n',
                    encoding="utf-8")
    assert "ssh.host: port" in _ok(run_cli(["profiles", "validate", str(path)]), 2)


# ------------------------------------------------------------------ item 16: check NAME


def test_check_takes_a_name_that_profiles_lists(workdir: Path) -> None:
    os.remove(workdir / SINGLE)  # not in the current directory: found among the ready profiles
    listed = run_cli(["profiles", "list", "--json"])
    names = [row["name"] for row in json.loads(listed.out)]
    name = SINGLE.removesuffix(".toml")
    assert name in names
    for argv in (["check", name], ["command", name], ["inspect", "--profile", name],
                 ["export", MULTINODE.removesuffix(".toml"), "--format", "sbatch"]):
        if argv[0] == "export":
            os.remove(workdir / MULTINODE)
        outcome = run_cli(argv)
        problem = outcome.problem()
        assert problem is None, problem
        assert outcome.code in (0, 1, 2) and "file not found" not in outcome.err, (argv, outcome.err)
    assert _ok(run_cli(["check", name]), (0, 1)).startswith("SGLang")


def test_a_saved_profile_name_wins_over_a_ready_one(workdir: Path) -> None:
    saved = workdir / "saved-profiles"
    saved.mkdir()
    name = SINGLE.removesuffix(".toml")
    os.remove(workdir / SINGLE)
    (saved / SINGLE).write_text('schema_version = 1\ndescription = "mine"\n[model]\npath = "m"\n',
                                encoding="utf-8")
    outcome = run_cli(["command", name, "--format", "argv-json"])
    _ok(outcome, 0)
    assert '"m"' in outcome.out
    text = _ok(run_cli(["check", "no-such-profile"]), 2)
    assert "no-such-profile" in text and "file not found" in text


# ------------------------------------------------------------------ GPU helper's inputs


_GPU_CASES = [
    ["check", "--gpu", "zz", SINGLE],
    ["check", "--gpus", "0", SINGLE],
    ["check", "--gpus", "-1", SINGLE],
    ["inspect", "--gpus", "0", "MODEL"],
]


@pytest.mark.parametrize("argv", _GPU_CASES, ids=lambda a: " ".join(a[:3]))
def test_gpu_options_never_traceback(
    workdir: Path, model_dirs: dict[str, str], argv: list[str]
) -> None:
    argv = [model_dirs["llama"] if a == "MODEL" else a for a in argv]
    outcome = run_cli(argv)
    assert outcome.problem() is None, outcome.problem()
    assert outcome.code in (0, 1, 2)


# ------------------------------------------------------------------ item 20: make app


def test_pyproject_license_is_an_spdx_string() -> None:
    """setuptools >= 77 warns (40 lines on every `make app`) about `license = { text = ... }`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))


# ------------------------------------------------------------------ real processes


@pytest.mark.parametrize("argv, code, says", [
    (["check", "--sglang-version", "latest", SINGLE], 2, "--sglang-version"),
    (["inspect", "MODEL", "--gpu", "H100", "--tp", "4294967297"], 2, "--tp must be"),
    (["inspect", "MODEL", "--gpu", "H100", "--mem-fraction", "1e21"], 2, "--mem-fraction must"),
    (["inspect", LONG], 2, "File name too long"),
    (["check", "--jsonl", "CASES"], 2, ""),
    (["check", "MANY_NODES"], 2, "parallel.nnodes"),
], ids=["version", "tp", "mem-fraction", "long-path", "jsonl", "nnodes"])
def test_real_process_exit_codes(
    workdir: Path, model_dirs: dict[str, str], argv: list[str], code: int, says: str
) -> None:
    (workdir / "cases.jsonl").write_text('{"id": 1, "env": "x"}\n{"id": 2, "argv": []}\n')
    swap = {"MODEL": model_dirs["llama"], "CASES": str(workdir / "cases.jsonl"),
            "MANY_NODES": _with_nnodes(workdir, 1099511627776)}
    argv = [swap.get(a, a) for a in argv]
    done = subprocess.run([sys.executable, "-m", "wizard.cli", *argv], capture_output=True,
                          text=True, timeout=120, cwd=workdir, env={**os.environ,
                                                                    "PYTHONPATH": str(ROOT)})
    assert done.returncode == code, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and says in done.stderr + done.stdout
    if argv[1] == "--jsonl":
        assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1, 2]
