"""Fuzz the command line: whatever the options, batch lines, profiles or model configs hold,
`sglang-wizard` ends with exit 0, 1 or 2, prints no traceback and does not hang.

Seeded and bounded (see fuzz_harness.Budget): each test prints its seed; set
SGLANG_WIZARD_FUZZ_SEED to replay one, SGLANG_WIZARD_FUZZ_CASES / SGLANG_WIZARD_FUZZ_SECONDS for
a longer run (e.g. 5000 cases, 600 s). Cases run in-process through `wizard.cli.main`, each in a
thread with a time limit (a hang fails the case instead of the suite timing out); a few run as
real processes for their exit codes (tests/fuzz/test_bad_input.py).
"""

from __future__ import annotations

import functools
import json
import math
import random
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from fuzz_harness import Budget, Outcome, run_cli

# ------------------------------------------------------------------------------ value pools

WORDS = [
    "", "0", "-1", "1", "2", "3", "8", "16", "2.5", "-0", "nan", "NaN", "inf", "-inf", "1e21",
    "1e400", "-1e400", "4294967297", "1099511627776", "9" * 40, "0x10", "latest", "zz", "0.5.11",
    "0.5.23", "0.5.11.post1", "0.4.0", "9.9.9", "0.5", "a" * 300, "/", ".", "..", "~", "-", "--",
    "é", "x y", "🙂", "$(id)", "%s", "\\", "'", '"', "a=b", "=", ":", "u@gpu-b:99999",
    "10.0.0.1:5000", "[::1]:5000", "EAGLE", "NEXTN", "fp8_e4m3", "auto", "true",
]
GPU_KINDS = ["H100", "h100", "A6000", "RTX A6000", "B200", "b300", "H200", "L4", "pro6000", "H20"]
# `--gpus` values the GPU helper validates (0, -1) are left to tests/fuzz/test_bad_input.py.
GPU_COUNTS = ["1", "2", "4", "8", "16", "3", "4294967297", "1099511627776"]
SGLANG_FLAGS = [
    "--tp", "--tp-size", "--pp-size", "--dp", "--dp-size", "--ep-size", "--nnodes", "--node-rank",
    "--dist-init-addr", "--mem-fraction-static", "--context-length", "--max-running-requests",
    "--cuda-graph-max-bs", "--chunked-prefill-size", "--speculative-algorithm",
    "--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens",
    "--speculative-draft-model-path", "--page-size", "--kv-cache-dtype", "--attention-backend",
    "--enable-dp-attention", "--quantization", "--dtype", "--max-total-tokens", "--port",
    "--host", "--api-key", "--mamba-scheduler-strategy", "--disable-radix-cache", "--unknown-x",
]
NUMBERS = ["1", "2", "4", "8", "16", "0", "-1", "3", "1099511627776", "4294967297", "1e30",
           "0.5", "0.85", "1e21", "nan", "inf", "100000000000000000000"]


def _word(rng: random.Random, extra: list[str] | None = None) -> str:
    pool = WORDS + (extra or [])
    return rng.choice(pool)


@functools.cache
def _release_flags(version: str) -> tuple[tuple[str, str | None, tuple[str, ...]], ...]:
    """(long option, type, choices) of every flag of a release's real parser."""
    from wizard.sglang.flags import load_table

    return tuple(
        (action.long_options[0], action.type, tuple(str(c) for c in action.choices or ()))
        for action in load_table(version).actions
        if action.long_options and action.kind not in ("help", "version")
    )


def _table_flag(rng: random.Random, models: list[str]) -> list[str]:
    """Any flag of a release with a value of its type (or not)."""
    option, kind, choices = rng.choice(_release_flags(rng.choice(["0.5.11", "0.5.23", "0.5.5"])))
    roll = rng.random()
    if roll < 0.15:
        return [option]
    if choices and roll < 0.6:
        return [option, rng.choice(choices)]
    if kind in ("int", "float") and roll < 0.85:
        return [option, rng.choice(NUMBERS)]
    return [option, _word(rng, models)]


def _sglang_flags(rng: random.Random, models: list[str]) -> list[str]:
    argv: list[str] = []
    for _ in range(rng.randrange(0, 7)):
        if rng.random() < 0.35:
            argv += _table_flag(rng, models)
            continue
        flag = rng.choice(SGLANG_FLAGS)
        roll = rng.random()
        if roll < 0.1:
            argv.append(flag)  # no value
        elif roll < 0.6:
            argv += [flag, rng.choice(NUMBERS)]
        else:
            argv += [flag, _word(rng, models)]
    return argv


def _command(rng: random.Random, models: list[str]) -> list[str]:
    head = rng.choice([[], ["python", "-m", "sglang.launch_server"], ["sglang", "serve"],
                       ["SGLANG_ENABLE_SPEC_V2=1", "python3", "-m", "sglang.launch_server"]])
    model = [] if rng.random() < 0.1 else ["--model-path", rng.choice([*models, _word(rng)])]
    return [*head, *model, *_sglang_flags(rng, models)]


# ------------------------------------------------------------------------------ CLI options


def _option_case(rng: random.Random, models: list[str], files: list[str]) -> list[str]:
    command = rng.choice(["check", "check", "inspect", "inspect", "profiles", "export",
                          "command", "import"])
    targets = [*files, *models]
    pick = lambda: _word(rng, targets) if rng.random() < 0.4 else rng.choice(targets)  # noqa: E731
    argv = [command]
    if command == "check":
        options = {"--sglang-version": lambda: _word(rng), "--gpu": lambda: rng.choice(GPU_KINDS),
                   "--gpus": lambda: rng.choice(GPU_COUNTS), "--json": None}
        argv += _options(rng, options)
        if rng.random() < 0.5:
            argv += [pick()]
        else:
            argv += ["--", *_command(rng, models)]
    elif command == "inspect":
        argv += [pick()]
        options = {
            "--gpu": lambda: rng.choice(GPU_KINDS), "--gpus": lambda: rng.choice(GPU_COUNTS),
            "--tp": lambda: rng.choice(NUMBERS), "--mem-fraction": lambda: rng.choice(NUMBERS),
            "--sglang-version": lambda: _word(rng), "--json": None,
            "--draft": pick, "--algorithm": lambda: rng.choice(["EAGLE", "EAGLE3", "NEXTN", "x"]),
            "--num-draft-tokens": lambda: rng.choice(NUMBERS), "--num-steps": lambda: rng.choice(NUMBERS),
            "--topk": lambda: rng.choice(NUMBERS), "--context-length": lambda: rng.choice(NUMBERS),
            "--max-running-requests": lambda: rng.choice(NUMBERS), "--profile": pick,
            "--kv-cache-dtype": lambda: _word(rng), "--revision": lambda: _word(rng),
        }
        argv += _options(rng, options)
        if rng.random() < 0.25:
            argv += ["--gpu", rng.choice(GPU_KINDS), "--", *_sglang_flags(rng, models)]
    elif command == "profiles":
        action = rng.choice(["list", "show", "path", "validate", ""])
        argv += [action] if action else []
        if action in ("show", "validate"):
            argv += [pick() for _ in range(1 if action == "show" else rng.randrange(1, 3))]
        if action in ("list", "validate") and rng.random() < 0.5:
            argv.append("--json")
    elif command == "export":
        argv += [pick(), "--format", rng.choice(["sbatch", "lws", "lws", "x"])]
        argv += _options(rng, {"-o": lambda: _word(rng, ["out.sh", "sub/out.yaml"]),
                               "--force": None, "--sglang-version": lambda: _word(rng),
                               "--name": lambda: _word(rng), "--image": lambda: _word(rng),
                               "--partition": lambda: _word(rng), "--time": lambda: _word(rng)})
    elif command == "command":
        argv += [pick()]
        argv += _options(rng, {"--format": lambda: rng.choice(["shell", "yaml", "argv-json"]),
                               "--sglang-version": lambda: _word(rng), "--single-line": None,
                               "--node": lambda: rng.choice(NUMBERS[:8])})
        if "--node" not in argv and rng.random() < 0.3:
            argv.append("--all-nodes")
    else:
        argv += _options(rng, {"-o": lambda: _word(rng, ["imported.toml"]), "--force": None,
                               "--sglang-version": lambda: _word(rng)})
        argv += ["--", *_command(rng, models)]
    return argv


def _options(rng: random.Random, options: dict[str, Any]) -> list[str]:
    argv: list[str] = []
    for name in rng.sample(sorted(options), rng.randrange(0, len(options) + 1)):
        value = options[name]
        argv += [name] if value is None else [name, value()]
    return argv


def _assert_ok(budget: Budget, outcome: Outcome, extra: str = "") -> None:
    problem = outcome.problem()
    if problem is not None:
        budget.record(outcome, problem, extra)
        if outcome.hung:  # its thread still runs: stop here
            _finish(budget)


def _finish(budget: Budget) -> None:
    report = budget.report()
    if report is not None:
        pytest.fail(report, pytrace=False)


def test_cli_options(workdir: Path, model_dirs: dict[str, str]) -> None:
    budget = Budget("cli-options", cases=200, seconds=10)
    files = sorted(p.name for p in workdir.glob("*.toml"))
    models = sorted(model_dirs.values())
    for _ in budget:
        _assert_ok(budget, run_cli(_option_case(budget.rng, models, files)))
    _finish(budget)


# ------------------------------------------------------------------------------ check --jsonl

_JSON_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 2, 2.5, 8, 1e400, float("nan"), float("inf"), 4294967297,
    1099511627776, "", "x", "H100", "8", "0.5.11", "latest", [], ["x"], {}, {"a": 1}, [1, 2],
    "a" * 300, "\u0000", "🙂",
]


def _case_line(rng: random.Random, models: list[str]) -> tuple[str, Any]:
    """One input line and the id it carries (or a marker when it has none)."""
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(["{", "[1, 2]", '"x"', "null", '{"id": 3,', "{'id': 1}"]), "no-id"
    case: dict[str, Any] = {}
    case_id: Any = rng.choice([rng.randrange(10**6), f"case-{rng.randrange(1000)}", None])
    if rng.random() < 0.9:
        case["id"] = case_id
    fields = {
        "argv": lambda: (["--model-path", rng.choice(models), *_sglang_flags(rng, models)]
                         if rng.random() < 0.8 else rng.choice(_JSON_VALUES)),
        "env": lambda: rng.choice([{}, {"SGLANG_ENABLE_SPEC_V2": "1"}, {"A": 1},
                                   *_JSON_VALUES]),
        "sglang_version": lambda: rng.choice(["0.5.11", "0.5.23", "0.5.9", *_JSON_VALUES]),
        "gpu": lambda: rng.choice([*GPU_KINDS, *_JSON_VALUES]),
        "gpus": lambda: rng.choice([1, 2, 8, *_JSON_VALUES]),
        "note": lambda: rng.choice(_JSON_VALUES),
    }
    for name in rng.sample(sorted(fields), rng.randrange(1, len(fields) + 1)):
        case[name] = fields[name]()
    text = json.dumps(case, allow_nan=True)
    return text, case.get("id")


def test_check_jsonl(workdir: Path, model_dirs: dict[str, str]) -> None:
    """Every line gets one output line, with its id; a bad line never stops the batch."""
    budget = Budget("check-jsonl", cases=60, seconds=10)
    models = sorted(model_dirs.values())
    for _ in budget:
        lines = [_case_line(budget.rng, models) for _ in range(budget.rng.randrange(1, 8))]
        source = workdir / "cases.jsonl"
        source.write_text("".join(text + "\n" for text, _ in lines), encoding="utf-8")
        stdin = budget.rng.random() < 0.3
        argv = ["check", "--jsonl", "-" if stdin else str(source)]
        outcome = run_cli(argv, stdin=source.read_text(encoding="utf-8") if stdin else "")
        shown = "input lines:\n" + "".join(f"  {t}\n" for t, _ in lines)
        _assert_ok(budget, outcome, shown)
        if outcome.problem() is not None:
            continue
        out = outcome.out.splitlines()
        if len(out) != len(lines):
            answers = "".join(f"  {line}\n" for line in out)
            budget.record(outcome, f"{len(out)} output lines for {len(lines)} input lines",
                          f"{shown}output lines:\n{answers}")
            continue
        for (text, case_id), reply in zip(lines, out, strict=True):
            report = json.loads(reply)
            if case_id != "no-id" and not _same(report.get("id"), case_id):
                budget.record(outcome, f"line {text[:300]!r} answered with id "
                              f"{report.get('id')!r}", shown)
            if report.get("verdict") == "internal-error":
                budget.record(outcome, f"internal error: {report.get('error')}", shown)
            if report.get("verdict") == "input-error" and not report.get("error"):
                budget.record(outcome, "input-error without a message", shown)
    _finish(budget)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


# ------------------------------------------------------------------------------ profiles

_PROFILE_VALUES: list[Any] = [
    0, -1, 1, 2, 3, 8, 16, 2.5, 4294967297, 1099511627776, 2**63 - 1, float("nan"), float("inf"),
    "", "x", "H100", "auto", "u@gpu-b:99999", "gpu-b:22", "[::1]:2222", "0.5.11", "latest", True,
    False, [], ["--tp", "2"], ["x"], {}, {"a": "b"}, "a" * 300, "env:HF_TOKEN", 1e30,
]
_HUGE: list[Any] = [4294967297, 1099511627776, 2**63 - 1, 10**12, 10**30, 1e30]
_PROFILE_KEYS = {
    "sglang_version": None, "description": None,
    "model": ["path", "context_length", "dtype", "quantization", "kv_cache_dtype", "revision"],
    "parallel": ["tp", "dp", "pp", "ep", "nnodes", "attn_dp_size", "enable_dp_attention"],
    "speculative": ["algorithm", "num_steps", "eagle_topk", "num_draft_tokens", "draft_model_path",
                    "dflash_block_size", "accept_threshold_single"],
    "memory": ["mem_fraction_static", "max_running_requests", "chunked_prefill_size",
               "cuda_graph_max_bs", "cuda_graph_bs"],
    "attention": ["backend", "page_size"],
    "hybrid": ["cache_strategy", "track_interval"],
    "server": ["host", "port", "device"],
    "gpu": ["kind", "count"],
    "ssh": ["host", "user", "port", "python", "workdir"],
    "nodes": ["rendezvous_host", "rendezvous_port", "interface"],
    "env": ["HF_TOKEN", "SGLANG_ENABLE_SPEC_V2", "1BAD"],
    "extra_args": None,
}


_KEY_SWEEP = [(section, key) for section, keys in sorted(_PROFILE_KEYS.items())
              for key in (keys or [None])]


def _mutated_profile(rng: random.Random, base: dict[str, Any], models: list[str],
                     first: tuple[str, str | None, bool] | None = None) -> dict[str, Any]:
    """`base` with one to five keys set to odd values, or just `first` (one odd key in a valid
    profile reaches further than five, most of which stop the profile at validation)."""
    data = json.loads(json.dumps(base))  # a deep copy of plain TOML data
    data.setdefault("model", {})["path"] = rng.choice([*models, data["model"].get("path", "m")])
    for number in range(1 if first else rng.randrange(1, 6)):
        section, key = first[:2] if first and number == 0 else rng.choice(_KEY_SWEEP)
        # sizes far out of range a quarter of the time (always in the sweep's first pass): loops
        # and plans are sized by them
        if first is not None and first[2]:
            value: Any = rng.choice(_HUGE[:4])
        else:
            value = rng.choice(_HUGE if rng.random() < 0.25 else _PROFILE_VALUES)
        if key is None:
            data[section] = value
        elif isinstance(data.get(section), dict) or section not in data:
            data.setdefault(section, {})[key] = value
    if rng.random() < 0.4:
        hosts = []
        for _ in range(rng.randrange(0, 4)):
            host: dict[str, Any] = {"host": rng.choice(["gpu-a", "u@gpu-b:99999", "gpu-c:22",
                                                        "", "[::1]:70000", "x y", "a" * 300])}
            for key in rng.sample(["port", "address", "gpu_kind", "gpu_count", "env", "python"],
                                  rng.randrange(0, 3)):
                host[key] = rng.choice(_PROFILE_VALUES)
            hosts.append(host)
        data.setdefault("nodes", {})
        if isinstance(data["nodes"], dict):
            data["nodes"]["hosts"] = hosts
    return data


def _profile_text(rng: random.Random, data: dict[str, Any]) -> str:
    try:
        text = tomli_w.dumps(data)
    except (TypeError, ValueError):
        text = 'schema_version = 1\n[model]\npath = "m"\n'
    roll = rng.random()
    if roll < 0.08:  # a cut file
        text = text[: rng.randrange(len(text) + 1)]
    elif roll < 0.12:
        spot = rng.randrange(len(text) + 1)
        text = text[:spot] + rng.choice(["[[", "= =", "\u0000", "\ud800x", "]]\n", '"""']) + text[spot:]
    return text


def test_profiles(workdir: Path, model_dirs: dict[str, str]) -> None:
    budget = Budget("profiles", cases=200, seconds=10)
    models = sorted(model_dirs.values())
    bases = [tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted(workdir.glob("*.toml"))]
    # every key early in the run, alone in a valid profile: first set to a huge integer and checked,
    # then to any odd value
    sweep = [(*k, True) for k in budget.rng.sample(_KEY_SWEEP, len(_KEY_SWEEP))]
    sweep += [(*k, False) for k in budget.rng.sample(_KEY_SWEEP, len(_KEY_SWEEP))]
    for index in budget:
        rng = budget.rng
        first = sweep[index] if index < len(sweep) else None
        data = _mutated_profile(rng, rng.choice(bases), models, first)
        text = data_text = _profile_text(rng, data) if first is None else tomli_w.dumps(data)
        path = workdir / f"fuzz-{index}.toml"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        if first is not None and first[2]:
            _assert_ok(budget, run_cli(["check", str(path)]), f"profile:\n{data_text[:4000]}\n")
            continue
        argv = rng.choice([
            ["check", str(path)], ["check", "--json", str(path)],
            ["command", str(path)], ["command", str(path), "--all-nodes"],
            ["command", str(path), "--node", rng.choice(["0", "1", "7", "-1"])],
            ["command", str(path), "--format", "yaml"],
            ["export", str(path), "--format", rng.choice(["sbatch", "lws"])],
            ["profiles", "validate", str(path)], ["profiles", "show", str(path)],
            ["inspect", "--profile", str(path)],
        ])
        _assert_ok(budget, run_cli(argv), f"profile:\n{text[:4000]}\n")
    _finish(budget)


# ------------------------------------------------------------------------------ model configs

_CONFIG_VALUES: list[Any] = [
    0, -1, 1, 2, 7, 2.5, 1e30, -1e30, 10**20, 2**63, 4294967297, 1099511627776, "x", "", None,
    True, [], [1], {}, {"a": 1}, float("nan"), float("inf"),
]
_CONFIG_KEYS = [
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
    "intermediate_size", "vocab_size", "max_position_embeddings", "n_routed_experts",
    "num_experts", "num_experts_per_tok", "moe_intermediate_size", "first_k_dense_replace",
    "decoder_sparse_step", "mlp_only_layers", "kv_lora_rank", "qk_rope_head_dim",
    "qk_nope_head_dim", "v_head_dim", "num_nextn_predict_layers", "layer_types",
    "full_attention_interval", "sliding_window", "torch_dtype", "architectures", "model_type",
    "text_config", "quantization_config", "tie_word_embeddings", "linear_num_value_heads",
    "linear_key_head_dim", "draft_vocab_size", "target_hidden_size", "rope_scaling",
]


def _deep(depth: int) -> str:
    return '{"x": ' * depth + "1" + "}" * depth


def _mutated_config(rng: random.Random, base: dict[str, Any]) -> str:
    config = json.loads(json.dumps(base))
    target = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    for _ in range(rng.randrange(1, 5)):
        target[rng.choice(_CONFIG_KEYS)] = rng.choice(_CONFIG_VALUES)
    text = json.dumps(config, allow_nan=True)
    roll = rng.random()
    if roll < 0.08:  # deeply nested
        depth = rng.choice([100, 5000, 100_000])
        text = text[:-1] + f', "deep": {_deep(depth)}' + "}"
    elif roll < 0.12:
        text = text[: rng.randrange(len(text) + 1)]
    elif roll < 0.14:
        text = rng.choice(["[]", "null", "1", '"x"', "", "\ufeff{}"])
    return text


def test_model_configs(workdir: Path, model_dirs: dict[str, str]) -> None:
    budget = Budget("model-configs", cases=120, seconds=10)
    bases = {name: json.loads((Path(d) / "config.json").read_text()) for name, d in model_dirs.items()}
    for index in budget:
        rng = budget.rng
        name = rng.choice(sorted(bases))
        folder = workdir / f"model-{index}"
        folder.mkdir()
        config = _mutated_config(rng, bases[name])
        (folder / "config.json").write_text(config, encoding="utf-8")
        for extra in Path(model_dirs[name]).iterdir():
            if extra.name != "config.json":
                (folder / extra.name).write_bytes(extra.read_bytes())
        if rng.random() < 0.3:
            total = rng.choice([1, 10**12, 10**300, -5, 1e300, "x", None, 2**64])
            index_text = json.dumps({"metadata": {"total_size": total}, "weight_map": {}})
            (folder / "model.safetensors.index.json").write_text(index_text)
        if rng.random() < 0.2:  # a shard header (read for quantized checkpoints)
            dims = [rng.choice([0, 1, 7, 4096, 2**40, 10**30, -1, 2.5, "x"])
                    for _ in range(rng.randrange(0, 4))]
            header = json.dumps({"w": {"dtype": rng.choice(["BF16", "U8", "F8_E4M3", "I32", "?"]),
                                       "shape": dims, "data_offsets": [0, 0]}}).encode()
            size = rng.choice([len(header), len(header), 0, 2**63, len(header) + 9])
            (folder / "model.safetensors").write_bytes(size.to_bytes(8, "little") + header)
            if rng.random() < 0.5:
                try:
                    config_data = json.loads(config)
                except (ValueError, RecursionError):
                    config_data = None
                if isinstance(config_data, dict):  # quantized: the header is read
                    config_data["quantization_config"] = {"quant_method": rng.choice(
                        ["fp8", "modelopt_fp4", "awq", "compressed-tensors", "mxfp4"])}
                    config = json.dumps(config_data, allow_nan=True)
                    (folder / "config.json").write_text(config, encoding="utf-8")
        if rng.random() < 0.15:
            (folder / "generation_config.json").write_text(rng.choice(
                ["{", "[]", _deep(50_000), '{"temperature": 1e400}']))
        gpu = ["--gpu", rng.choice(GPU_KINDS)]
        argv = rng.choice([
            ["inspect", str(folder)], ["inspect", str(folder), "--json"],
            ["inspect", str(folder), *gpu, "--gpus", "8", "--tp", rng.choice(["1", "2", "8"])],
            ["inspect", str(folder), *gpu, "--", "--tp", rng.choice(["1", "2", "8"])],
            ["inspect", model_dirs["llama"], "--draft", str(folder), "--algorithm", "EAGLE3"],
            ["check", "--gpus", "8", *gpu, "--", "--model-path", str(folder), "--tp", "8"],
            ["check", "--json", "--", "--model-path", str(folder), "--speculative-algorithm",
             "EAGLE", "--speculative-draft-model-path", str(folder)],
        ])
        _assert_ok(budget, run_cli(argv), f"config.json:\n{config[:3000]}\n")
    _finish(budget)
