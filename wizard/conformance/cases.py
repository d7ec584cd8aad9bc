"""Conformance cases: a seeded generator over the speculative-decoding flag space.

A case is a JSON-able dict: ``{"id", "sglang_version", "gpu", "gpus", "argv", "env", "model",
"origin"}`` where ``argv`` are the flags after ``python -m sglang.launch_server`` and model paths
point at the tiny `config.json` folders of `models.py`. The same dict feeds SGLang's runner and the
wizard's ``check_case``.

Each case first takes the next cell of a grid (algorithm x target model x how the trio is given,
visited in a seeded order so every sample of a few hundred covers it), then draws every other
dimension at random: flag spellings and aliases, `SGLANG_ENABLE_SPEC_V2`, hybrid cache strategy
and track interval, page size, attention backend, tp/dp/pp and DP attention, overlap and radix
switches, GPU kind.
"""

from __future__ import annotations

import itertools
import random
from functools import cache
from pathlib import Path
from typing import Any

from wizard.conformance.models import PUBLIC_KINDS, TARGET_KINDS, public_model_configs
from wizard.gpus import names as gpu_names
from wizard.rules.arg_sites import env_names
from wizard.sglang.flags import load_table
from wizard.sglang.releases import load_release

ALGORITHMS: tuple[str | None, ...] = (None, "NEXTN", "EAGLE", "EAGLE3", "STANDALONE", "NGRAM",
                                      "DFLASH")
GPU_KINDS: tuple[str, ...] = ("A6000", "H100", "B200")

# How the steps / topk / draft-tokens trio is given (None = flag not typed).
TRIO_PATTERNS: tuple[tuple[str, tuple[int | None, int | None, int | None]], ...] = (
    ("none", (None, None, None)),
    ("chain", (3, 1, 4)),
    ("tree", (3, 4, 8)),
    ("topk1_wrong_draft", (1, 1, 16)),
    ("draft_only", (None, None, 4)),
    ("topk_draft", (None, 1, 2)),
    ("steps_only", (3, None, None)),
    ("steps_topk", (2, 1, None)),
    ("random", (None, None, None)),  # each of the three drawn independently
)
STEP_VALUES = (None, 1, 2, 3, 5)
TOPK_VALUES = (None, 1, 2, 4)
DRAFT_VALUES = (None, 1, 2, 4, 8, 16)


def grid() -> list[tuple[str | None, str, str]]:
    """Every (algorithm, target model, trio pattern) cell."""
    return [
        (algorithm, model, pattern)
        for algorithm, model, (pattern, _values) in itertools.product(
            ALGORITHMS, TARGET_KINDS, TRIO_PATTERNS
        )
        if not (algorithm is None and pattern != "none" and pattern != "random")
    ]


def _draft_for(algorithm: str | None, model: str, rng: random.Random) -> str | None:
    """The model kind passed as draft path (None = flag not typed)."""
    natural = {
        "EAGLE": "eagle_draft",
        "EAGLE3": "eagle3_draft",
        "STANDALONE": "standalone_draft",
        "DFLASH": "standalone_draft",
    }.get(algorithm or "")
    roll = rng.random()
    if algorithm in (None, "NGRAM"):
        return None if roll < 0.9 else "eagle_draft"
    if algorithm == "NEXTN":
        return None if roll < 0.75 else model
    if roll < 0.08:
        return None  # forgotten draft path
    if roll < 0.15:
        return model  # the target itself as draft
    return natural


def _spelling(flag: str, value: str | None, rng: random.Random) -> list[str]:
    """A flag with a value as `--flag value` or `--flag=value`."""
    if value is None:
        return [flag]
    return [f"{flag}={value}"] if rng.random() < 0.2 else [flag, value]


def make_case(
    index: int,
    cell: tuple[str | None, str, str],
    version: str,
    rng: random.Random,
    models: dict[str, Path],
    gpu: str | None = None,
) -> dict[str, Any]:
    """One case: the grid cell plus random draws for every other dimension."""
    algorithm, model, pattern = cell
    argv: list[str] = []
    env: dict[str, str] = {}
    model_flag = "--model-path" if rng.random() < 0.9 else "--model"
    argv += _spelling(model_flag, str(models[model]), rng)

    if algorithm is not None:
        algo_text = algorithm
        roll = rng.random()
        if roll < 0.06:
            algo_text = algorithm.lower()  # case spelling (0.5.11 refuses, 0.5.23 accepts)
        elif roll < 0.08:
            algo_text = "MEDUSA"  # not an SGLang algorithm
        argv += _spelling("--speculative-algorithm", algo_text, rng)
        draft = _draft_for(algorithm, model, rng)
        if draft is not None:
            draft_flag = ("--speculative-draft-model-path" if rng.random() < 0.85
                          else "--speculative-draft-model")
            argv += _spelling(draft_flag, str(models[draft]), rng)
        values = dict(TRIO_PATTERNS)[pattern]
        if pattern == "random":
            values = (rng.choice(STEP_VALUES), rng.choice(TOPK_VALUES), rng.choice(DRAFT_VALUES))
        for flag, value in zip(
            ("--speculative-num-steps", "--speculative-eagle-topk",
             "--speculative-num-draft-tokens"), values, strict=True
        ):
            if value is not None:
                argv += _spelling(flag, str(value), rng)
        if algorithm == "DFLASH" and rng.random() < 0.15:
            argv += _spelling("--speculative-dflash-block-size", rng.choice(("8", "16")), rng)
        if rng.random() < 0.08:
            argv.append("--speculative-adaptive")
        if rng.random() < 0.05:
            argv += _spelling("--speculative-moe-runner-backend",
                              rng.choice(("triton", "flashinfer_trtllm", "auto")), rng)

    spec_v2 = rng.random()
    if spec_v2 < 0.15:
        env["SGLANG_ENABLE_SPEC_V2"] = "0"
    elif spec_v2 < 0.3:
        env["SGLANG_ENABLE_SPEC_V2"] = "1"

    hybrid = model in ("qwen3next", "qwen35", "qwen35moe")
    if rng.random() < (0.55 if hybrid else 0.06):
        # the release's own spelling (its `strategy_field`) most of the time, the other sometimes
        own = "--" + load_release(version).strategy_field.replace("_", "-")
        other = next(f for f in _STRATEGY_FLAGS if f != own)
        flag = own if rng.random() < 0.85 else other
        argv += _spelling(flag, rng.choice(("auto", "no_buffer", "extra_buffer", "extra_buffer")),
                          rng)
    if rng.random() < (0.2 if hybrid else 0.03):
        argv += _spelling("--mamba-track-interval", rng.choice(("2", "4", "128", "256")), rng)

    if rng.random() < 0.2:
        argv += _spelling("--page-size", rng.choice(("1", "16", "32", "64", "48")), rng)
    if rng.random() < 0.25:
        argv += _spelling(
            "--attention-backend",
            rng.choice(("fa3", "flashinfer", "triton", "trtllm_mha", "flex_attention", "fa4")),
            rng,
        )

    tp = rng.choice((1, 1, 2, 2, 4, 8))
    dp = 1
    dp_attention = False
    if rng.random() < 0.15:
        dp = rng.choice((2, 4))
        dp_attention = rng.random() < 0.6
        if dp_attention and rng.random() < 0.8:
            tp = max(tp, dp)  # DP attention splits the TP group: usually tp is a multiple of dp
    if tp > 1:
        argv += _spelling(rng.choice(("--tp-size", "--tensor-parallel-size", "--tp")), str(tp),
                          rng)
    if dp > 1:
        argv += _spelling(rng.choice(("--dp-size", "--data-parallel-size", "--dp")), str(dp), rng)
        if dp_attention:
            argv.append("--enable-dp-attention")
    pp = 1
    if rng.random() < 0.07:
        pp = 2
        argv += _spelling(rng.choice(("--pp-size", "--pipeline-parallel-size")), "2", rng)
    if rng.random() < 0.12:
        argv.append("--disable-overlap-schedule")
    if rng.random() < 0.12:
        argv.append("--disable-radix-cache")
    if rng.random() < 0.05:
        argv.append("--enable-mixed-chunk")

    gpu_kind = gpu or GPU_KINDS[index % len(GPU_KINDS)]
    gpus = max(1, tp * pp * (1 if dp_attention else dp))
    return {
        "id": f"{version}-{index:05d}",
        "sglang_version": version,
        "gpu": gpu_kind,
        "gpus": min(gpus, 8),
        "argv": argv,
        "env": env,
        "model": model,
        "origin": f"grid:{algorithm or 'none'}/{model}/{pattern}",
    }


#: The two spellings of the hybrid models' cache strategy (each release has one).
_STRATEGY_FLAGS = ("--mamba-scheduler-strategy", "--mamba-radix-cache-strategy")


def generate(
    version: str,
    count: int,
    seed: int,
    models: dict[str, Path],
    gpu: str | None = None,
) -> list[dict[str, Any]]:
    """``count`` cases for one SGLang version, reproducible from ``seed``."""
    rng = random.Random(f"{version}:{seed}")
    cells = grid()
    rng.shuffle(cells)
    return [
        make_case(index, cells[index % len(cells)], version, rng, models, gpu)
        for index in range(count)
    ]


# ---------------------------------------------------------------------------------------------
# Multi-node launches: one node's command of an N-node launch (`conformance run --kind multinode`)

NNODES_VALUES = (2, 2, 2, 3, 4)
MULTINODE_TP = (1, 2, 3, 4, 6, 8, 8, 16, 16)
MULTINODE_MODELS = ("dsv3", "dsv3", "llama")  # known to every release's transformers


def make_multinode_case(
    index: int,
    version: str,
    rng: random.Random,
    models: dict[str, Path],
    gpu: str | None = None,
) -> dict[str, Any]:
    """One node's command of a multi-node launch: nnodes, node rank, dist-init-addr, tp/pp/dp/ep,
    DP attention, sometimes speculative decoding (what the two multi-node checks of SGLang's
    `check_server_args` read, and the checks that run before and after them)."""
    model = rng.choice(MULTINODE_MODELS)
    argv: list[str] = _spelling("--model-path", str(models[model]), rng)
    nnodes = rng.choice(NNODES_VALUES)
    argv += _spelling("--nnodes", str(nnodes), rng)
    roll = rng.random()
    rank = rng.randrange(nnodes) if roll < 0.85 else nnodes  # sometimes out of range
    if rank or rng.random() < 0.5:
        argv += _spelling("--node-rank", str(rank), rng)
    roll = rng.random()
    if roll < 0.8:
        argv += _spelling("--dist-init-addr", "10.0.0.1:5000", rng)
    elif roll < 0.88:
        argv += _spelling("--dist-init-addr", "10.0.0.1", rng)  # no port
    tp = rng.choice(MULTINODE_TP)
    pp = rng.choice((1, 1, 1, 2, 4))
    dp = rng.choice((1, 1, 1, 2, 4))
    if tp > 1:
        argv += _spelling(rng.choice(("--tp-size", "--tensor-parallel-size", "--tp")), str(tp), rng)
    if pp > 1:
        argv += _spelling(rng.choice(("--pp-size", "--pipeline-parallel-size")), str(pp), rng)
    dp_attention = False
    if dp > 1:
        argv += _spelling(rng.choice(("--dp-size", "--data-parallel-size")), str(dp), rng)
        dp_attention = rng.random() < 0.5
        if dp_attention:
            argv.append("--enable-dp-attention")
    if rng.random() < 0.2:
        argv += _spelling(rng.choice(("--ep-size", "--expert-parallel-size")),
                          str(rng.choice((tp, 2, 1))), rng)
    if rng.random() < 0.25 and model in ("dsv3", "llama"):
        algorithm = "NEXTN" if model == "dsv3" else "EAGLE"
        argv += _spelling("--speculative-algorithm", algorithm, rng)
        if algorithm == "EAGLE":
            argv += _spelling("--speculative-draft-model-path", str(models["eagle_draft"]), rng)
        if rng.random() < 0.5:
            argv += ["--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                     "--speculative-num-draft-tokens", "4"]
    if rng.random() < 0.15:
        argv.append("--disable-overlap-schedule")
    if rng.random() < 0.1:
        argv += _spelling("--page-size", rng.choice(("1", "64", "48")), rng)
    per_node = max(1, (tp * pp) // nnodes)
    return {
        "id": f"{version}-mn{index:05d}",
        "sglang_version": version,
        "gpu": gpu or "H100",
        "gpus": min(max(per_node, 1), 8),
        "argv": argv,
        "env": {},
        "model": model,
        "origin": f"multinode:{nnodes}n/tp{tp}/pp{pp}/dp{dp}{'/dpattn' if dp_attention else ''}",
    }


def generate_multinode(
    version: str,
    count: int,
    seed: int,
    models: dict[str, Path],
    gpu: str | None = None,
) -> list[dict[str, Any]]:
    """``count`` multi-node cases for one SGLang version, reproducible from ``seed``."""
    rng = random.Random(f"{version}:{seed}:multinode")
    return [make_multinode_case(index, version, rng, models, gpu) for index in range(count)]


# Hand-written multi-node cases: (name, model kind, argv after the model path). Their real SGLang
# results per release are committed in tests/rules/fixtures/multinode-sglang.json
# (scripts/multinode_fixture.py) and replayed against the wizard without a venv.
MULTINODE_NAMED: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("tp3-2nodes", "llama", ("--tp-size", "3", "--nnodes", "2", "--dist-init-addr", "10.0.0.1:5000")),
    ("tp16-2nodes", "dsv3", ("--tp-size", "16", "--nnodes", "2", "--node-rank", "1",
                             "--dist-init-addr", "10.0.0.1:5000")),
    ("tp8-pp2-4nodes", "llama", ("--tp-size", "8", "--pp-size", "2", "--nnodes", "4",
                                 "--dist-init-addr", "10.0.0.1:5000")),
    ("tp3-pp2-4nodes", "llama", ("--tp-size", "3", "--pp-size", "2", "--nnodes", "4")),
    ("tp2-4nodes", "llama", ("--tp-size", "2", "--nnodes", "4")),
    ("dp2-2nodes", "llama", ("--tp-size", "16", "--dp-size", "2", "--nnodes", "2",
                             "--dist-init-addr", "10.0.0.1:5000")),
    ("dp2-dpattn-2nodes", "dsv3", ("--tp-size", "16", "--dp-size", "2", "--enable-dp-attention",
                                   "--nnodes", "2", "--dist-init-addr", "10.0.0.1:5000")),
    ("tp3-pp3-nextn-2nodes", "dsv3", ("--tp-size", "3", "--pp-size", "3", "--nnodes", "2",
                                      "--speculative-algorithm", "NEXTN")),
    ("pp2-nextn-2nodes", "dsv3", ("--tp-size", "8", "--pp-size", "2", "--nnodes", "2",
                                  "--disable-overlap-schedule", "--speculative-algorithm", "NEXTN")),
    ("pp2-dp2-2nodes", "llama", ("--tp-size", "8", "--pp-size", "2", "--dp-size", "2",
                                 "--nnodes", "2", "--disable-overlap-schedule")),
    ("rank-out-of-range", "llama", ("--tp-size", "16", "--nnodes", "2", "--node-rank", "5",
                                    "--dist-init-addr", "10.0.0.1:5000")),
    ("no-dist-init-addr", "llama", ("--tp-size", "16", "--nnodes", "2")),
    ("dist-init-no-port", "llama", ("--tp-size", "16", "--nnodes", "2",
                                    "--dist-init-addr", "10.0.0.1")),
    ("ep16-2nodes", "dsv3", ("--tp-size", "16", "--ep-size", "16", "--nnodes", "2",
                             "--dist-init-addr", "10.0.0.1:5000")),
    ("tp16-1node-rank0", "llama", ("--tp-size", "16", "--nnodes", "1")),
    ("attn-dp2-2nodes", "dsv3", ("--tp-size", "16", "--attn-dp-size", "2", "--nnodes", "2",
                                 "--dist-init-addr", "10.0.0.1:5000")),
    ("attn-dp2-dp2-2nodes", "dsv3", ("--tp-size", "16", "--attn-dp-size", "2", "--dp-size", "2",
                                     "--nnodes", "2")),
    ("dpattn-tp3-dp2-2nodes", "dsv3", ("--tp-size", "3", "--dp-size", "2",
                                       "--enable-dp-attention", "--nnodes", "2")),
)


def multinode_named_cases(version: str, models: dict[str, Path]) -> list[dict[str, Any]]:
    """The hand-written multi-node cases as runner/check cases for one version (H100)."""
    out = []
    for name, model, argv in MULTINODE_NAMED:
        flags = list(argv)
        numbers = {flags[i]: int(flags[i + 1]) for i in range(len(flags) - 1)
                   if flags[i] in ("--tp-size", "--pp-size", "--nnodes")}
        per_node = (numbers.get("--tp-size", 1) * numbers.get("--pp-size", 1)
                    // numbers.get("--nnodes", 1))
        out.append({
            "id": f"{version}-{name}", "name": name, "sglang_version": version, "gpu": "H100",
            "gpus": min(max(per_node, 1), 8), "argv": ["--model-path", str(models[model]), *flags],
            "env": {}, "model": model, "origin": f"multinode-named:{name}",
        })
    return out


# ---------------------------------------------------------------------------------------------
# Wide launches: every flag of the release's flag table, on real public model configs
# (`conformance run --kind wide`)

# What users type most, with the values they type (flag -> values; None = a switch). Values a
# release's flag table does not accept are dropped per release (choices from the dump).
WIDE_COMMON: tuple[tuple[str, float, tuple[str | None, ...]], ...] = (
    ("--attention-backend", 0.25, ("fa3", "flashinfer", "triton", "trtllm_mha", "fa4",
                                    "flashmla", "cutlass_mla", "trtllm_mla", "torch_native")),
    ("--page-size", 0.15, ("1", "16", "32", "64", "128")),
    ("--kv-cache-dtype", 0.15, ("auto", "fp8_e4m3", "fp8_e5m2", "bf16")),
    ("--quantization", 0.15, ("fp8", "awq", "gptq", "mxfp4", "w8a8_fp8", "compressed-tensors",
                               "modelopt_fp4", "bitsandbytes")),
    ("--chunked-prefill-size", 0.12, ("-1", "2048", "4096", "8192", "16384")),
    ("--disable-overlap-schedule", 0.1, (None,)),
    ("--cuda-graph-max-bs", 0.1, ("8", "32", "128", "256")),
    ("--disable-cuda-graph", 0.06, (None,)),
    ("--disable-radix-cache", 0.1, (None,)),
    ("--enable-hierarchical-cache", 0.06, (None,)),
    ("--enable-torch-compile", 0.06, (None,)),
    ("--mem-fraction-static", 0.15, ("0.7", "0.8", "0.85", "0.9")),
    ("--max-running-requests", 0.08, ("16", "64", "256")),
    ("--sampling-backend", 0.05, ("flashinfer", "pytorch")),
    ("--grammar-backend", 0.05, ("xgrammar", "outlines", "llguidance", "none")),
    ("--enable-mixed-chunk", 0.04, (None,)),
    ("--trust-remote-code", 0.1, (None,)),
    ("--dtype", 0.05, ("auto", "bfloat16", "float16")),
)
# Flags a random draw never picks: paths, network, processes, devices and files the runner has
# not got, and the flags the dimensions above already draw.
WIDE_SKIP_TYPES = ("str", "json", None)
WIDE_SKIP_WORDS = ("path", "dir", "file", "url", "host", "port", "addr", "config", "token",
                   "key", "name", "device", "nnodes", "node_rank", "rank", "api", "log", "dump",
                   "remote", "prometheus", "metrics", "export", "trace", "profil", "crash",
                   "lora", "debug", "mock", "dummy")
WIDE_SPEC = ("EAGLE3", "NEXTN", "EAGLE", "NGRAM", "STANDALONE")


def _table_choices(version: str) -> dict[str, Any]:
    """The release's dumped flag table by option string (lazy: flags.py is not light)."""
    return load_table(version).by_option


def _random_value(action: Any, rng: random.Random) -> str | None:
    if action.choices:
        return str(rng.choice(list(action.choices)))
    if action.type in ("int", "human_readable_int"):
        return str(rng.choice((0, 1, 2, 4, 8, 64, 1024)))
    if action.type == "float":
        return str(rng.choice((0.0, 0.5, 0.9, 1.0)))
    return None


def _drawable(action: Any) -> bool:
    dest = action.dest.lower()
    if any(word in dest for word in WIDE_SKIP_WORDS) or action.required:
        return False
    if action.kind in ("store_true", "store_false", "boolean_optional", "deprecated_store_true"):
        return True
    if action.kind != "store" or action.nargs not in (None, "?"):
        return False
    return bool(action.choices) or action.type in ("int", "human_readable_int", "float")


# How often a wide case sets one of the environment variables the release's argument code reads
# (most launches set none), and how often when the sweep's `--with` flags are read by a site
# that also reads one.
WIDE_ENV_CHANCE = 0.1
WIDE_ENV_FOCUS_CHANCE = 0.4


def _env_values(node: list[Any], compared: list[Any]) -> list[str]:
    """Values a user sets an `["env", ...]` variable to: for a boolean SGLang's first true and
    false words (the one that is not the default first), for a number or a string the
    constants the conditions compare it with (and a few numbers)."""
    parse, default = node[2], node[3]
    if parse[0] == "bool":
        words = [parse[1][0], parse[2][0] if parse[2] else "0"]
        return words if default is not True else words[::-1]
    values = [str(c) for c in compared if isinstance(c, str | int | float)
              and not isinstance(c, bool)]
    if parse[0] in ("int", "float"):
        values += [v for v in ("0", "1", "4096") if v not in values]
    return values


def _env_nodes(tree: Any, out: dict[str, tuple[list[Any], list[Any]]]) -> None:
    """Each `["env", ...]` node of a tree with the constants compared with it (an
    `["envset", name]` node as a string variable set to "1")."""
    if not isinstance(tree, list) or not tree:
        return
    if tree[0] == "env":
        out.setdefault(tree[1], (tree, []))
        return
    if tree[0] == "envset":
        out.setdefault(tree[1], (["env", tree[1], ["str"], None, None], ["1"]))
        return
    if tree[0] == "cmp":
        for env, other in ((tree[2], tree[3]), (tree[3], tree[2])):
            if isinstance(env, list) and env[:1] == ["env"] and other[:1] == ["const"]:
                _node, compared = out.setdefault(env[1], (env, []))
                value = other[1]
                compared.extend(value if isinstance(value, list) else [value])
    for part in tree[1:]:
        _env_nodes(part, out)


@cache
def release_env_reads(version: str) -> dict[str, tuple[list[str], frozenset[str]]]:
    """The environment variables the release's argument code reads in its sites' and replayed
    writes' conditions (its data, `generic_sites` / `generic_writes`): variable -> (values to
    set it to, the options of the flags those sites read)."""
    release = load_release(version)
    out: dict[str, tuple[list[str], frozenset[str]]] = {}
    for entry in [*release.generic_sites, *release.generic_writes]:
        if not env_names(entry.get("condition")) and not env_names(entry.get("value")):
            continue
        nodes: dict[str, tuple[list[Any], list[Any]]] = {}
        _env_nodes(entry.get("condition"), nodes)
        _env_nodes(entry.get("value"), nodes)
        flags = frozenset("--" + name.replace("_", "-") for name in entry.get("defaults", {}))
        for name, (node, compared) in nodes.items():
            values = _env_values(node, compared)
            if not values:
                continue
            known, reading = out.get(name, ([], frozenset()))
            out[name] = ([*known, *[v for v in values if v not in known]], reading | flags)
    return dict(sorted(out.items()))


def _draw_env(env: dict[str, str], reads: dict[str, tuple[list[str], frozenset[str]]],
              focus: frozenset[str], rng: random.Random) -> None:
    """Sometimes one variable the release's argument code reads (`release_env_reads`), more
    often one read by a site over a flag the sweep focuses on (`--with`)."""
    focused = sorted(name for name, (_values, flags) in reads.items() if flags & focus)
    roll = rng.random()
    if focused and roll < WIDE_ENV_FOCUS_CHANCE:
        name = rng.choice(focused)
    elif roll < WIDE_ENV_CHANCE or (focused and roll < WIDE_ENV_CHANCE + WIDE_ENV_FOCUS_CHANCE):
        name = rng.choice(sorted(reads)) if reads else ""
    else:
        return
    if name and name not in env:
        values = reads[name][0]
        env[name] = values[0] if rng.random() < 0.7 else rng.choice(values)


def make_wide_case(index: int, version: str, rng: random.Random, models: dict[str, Path],
                   gpu: str | None = None, env_rng: random.Random | None = None,
                   focus: frozenset[str] = frozenset()) -> dict[str, Any]:
    """One wide case: a public model, parallelism as users combine it, the common flags with
    the values users type, a speculative setup sometimes, and 0-3 other flags of the table;
    with `env_rng`, sometimes an environment variable the release's argument code reads (its
    own random stream, so a seed's flags stay what they were)."""
    table = _table_choices(version)
    model = PUBLIC_KINDS[index % len(PUBLIC_KINDS)]
    config = public_model_configs()[model]
    argv = _spelling("--model-path", str(models[model]), rng)
    env: dict[str, str] = {}
    used: set[str] = {"--model-path"}

    def add(flag: str, value: str | None) -> None:
        action = table.get(flag)
        if action is None and flag in ("--tp", "--dp"):  # abbreviations argparse expands
            action = table.get(flag + "-size")
        if action is None or flag in used:
            return
        if value is not None and action.choices and value not in [str(c) for c in action.choices]:
            return
        used.add(flag)
        argv.extend(_spelling(flag, value, rng))

    # parallelism as users combine it
    tp = rng.choice((1, 1, 2, 4, 8, 8))
    dp, dp_attention, pp = 1, False, 1
    if rng.random() < 0.2:
        dp = rng.choice((2, 4, 8))
        dp_attention = rng.random() < 0.6
        if dp_attention and rng.random() < 0.8:
            tp = max(tp, dp)
    if rng.random() < 0.06:
        pp = 2
    if tp > 1:
        add(rng.choice(("--tp-size", "--tp", "--tensor-parallel-size")), str(tp))
    if dp > 1:
        add(rng.choice(("--dp-size", "--dp")), str(dp))
        if dp_attention:
            add("--enable-dp-attention", None)
    if pp > 1:
        add("--pp-size", "2")
    if (config.get("num_experts") or config.get("n_routed_experts")
            or config.get("num_local_experts")) and rng.random() < 0.2:
        add("--ep-size", str(rng.choice((tp, 2, 8))))

    # context length: the derived one, above it, or below
    if rng.random() < 0.2:
        base = int(config.get("max_position_embeddings")
                   or (config.get("text_config") or {}).get("max_position_embeddings") or 4096)
        add("--context-length", str(rng.choice((base, base * 2, base // 4, 32768, 262144))))
        if rng.random() < 0.2:
            env["SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"] = "1"
    for flag, chance, values in WIDE_COMMON:
        if rng.random() < chance:
            add(flag, rng.choice(values))

    # speculative decoding sometimes
    if rng.random() < 0.15:
        algorithm = rng.choice(WIDE_SPEC)
        add("--speculative-algorithm", algorithm)
        if algorithm in ("EAGLE", "EAGLE3", "STANDALONE"):
            draft = {"EAGLE": "eagle_draft", "EAGLE3": "eagle3_draft"}.get(algorithm,
                                                                           "standalone_draft")
            add("--speculative-draft-model-path", str(models[draft]))
        if algorithm != "NGRAM" and rng.random() < 0.6:
            steps = rng.choice((1, 2, 3, 5))
            topk = rng.choice((1, 1, 2, 4))
            add("--speculative-num-steps", str(steps))
            add("--speculative-eagle-topk", str(topk))
            add("--speculative-num-draft-tokens", str(steps + 1 if topk == 1 else 8))

    # and any other flag of the release's table
    drawable = sorted({a.option_strings[0] for a in table.values() if _drawable(a)} - used)
    for flag in rng.sample(drawable, k=min(len(drawable), rng.choice((0, 0, 0, 0, 1, 1, 2)))):
        action = table[flag]
        switch = action.kind in ("store_true", "store_false", "boolean_optional",
                                 "deprecated_store_true")
        value = None if switch else _random_value(action, rng)
        if switch or value is not None:
            flag = (rng.choice(action.option_strings) if action.kind == "boolean_optional"
                    else flag)
            add(flag, value)

    if env_rng is not None:
        _draw_env(env, release_env_reads(version), focus, env_rng)

    kinds = gpu_names()
    gpu_kind = gpu or kinds[index % len(kinds)]
    gpus = max(1, tp * pp * (1 if dp_attention else dp))
    return {
        "id": f"{version}-w{index:05d}",
        "sglang_version": version,
        "gpu": gpu_kind,
        "gpus": min(gpus, 8),
        "argv": argv,
        "env": env,
        "model": model,
        "origin": f"wide:{model}",
    }


def generate_wide(version: str, count: int, seed: int, models: dict[str, Path],
                  gpu: str | None = None, focus: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """``count`` wide cases for one SGLang version, reproducible from ``seed``; the model
    folders must include the public ones (`models.public_model_configs`). `focus`: the flags a
    focused sweep adds to every case (`run --with`), whose env-reading sites get their
    variables set more often."""
    rng = random.Random(f"wide:{version}:{seed}")
    env_rng = random.Random(f"wide-env:{version}:{seed}")
    options = frozenset(part.split("=", 1)[0] for part in focus if part.startswith("--"))
    return [make_wide_case(index, version, rng, models, gpu, env_rng, options)
            for index in range(count)]
