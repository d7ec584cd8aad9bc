"""Launches whose automatic `mem_fraction_static` moves with the prefill ("piecewise") CUDA-graph
term of SGLang's heuristic, and SGLang's own resolved fraction for them (issue 22).

`fixtures/piecewise-fractions.json` holds what each release's real argument code resolved (the
runner, with a faked GPU); `tests/model/test_prefill_graph_reserve.py` holds the memory plan to
those values, and `test_piecewise_fractions.py` re-runs them live where the venv is built.
Record again (one SGLang process at a time) with

    python -m tests.conformance.piecewise_fractions 0.5.6 0.5.8 0.5.11 0.5.23
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "piecewise-fractions.json"

#: (name, GPU kind, GPU count, launch flags after --model-path {llama}). Each is launched with the
#: release's prefill-graph flag when that graph is opt-in (`--enable-piecewise-cuda-graph`), and
#: "default" also without it.
CASES: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    ("h100", "H100", 1, ()),
    # 512 + 2048 x 1.5 + 128 + 256 x 2 = 4,224 MiB: the 10 GiB floor binds, so a term counted
    # before it vanishes and one counted after it does not.
    ("h100-chunked-2048", "H100", 1, ("--chunked-prefill-size", "2048")),
    ("b200", "B200", 1, ()),
    ("a6000", "A6000", 1, ()),  # 48 GiB: no floor
    ("h100-max-total-3000", "H100", 1, ("--max-total-tokens", "3000")),
    ("h100-context-1024", "H100", 1, ("--context-length", "1024")),
    ("h100-tp2", "H100", 2, ("--tp-size", "2")),
    # the GPU-memory tiers of the chunked prefill / graph batch defaults (and 0.5.1-0.5.2's reserve)
    ("rtx4090", "RTX 4090", 1, ()),
    ("rtx4090-tp4", "RTX 4090", 4, ("--tp-size", "4")),
    ("a100-40gb", "A100-40GB", 1, ()),
    ("l40s-tp4", "L40S", 4, ("--tp-size", "4")),
    ("h20", "H20", 1, ()),
    ("h200-tp8", "H200", 8, ("--tp-size", "8")),
    # The graph's max tokens / capture sizes typed, in the release's spelling ({max} / {sizes}:
    # --piecewise-cuda-graph-max-tokens / -tokens, later --cuda-graph-max-bs-prefill / -bs-prefill).
    ("h100-typed-max-16384", "H100", 1, ("{max}", "16384")),
    ("h100-typed-sizes-3", "H100", 1, ("{sizes}", "8", "16", "32")),
)

#: Launches over the other inputs of the heuristic (name, GPU kind, GPU count, model, flags;
#: `{kind}` is a model folder): decode CUDA-graph batch, speculative reserves, PD roles, torch
#: compile, pipeline parallel, DP attention and DeepEP on an MLA MoE model, a hybrid model. As
#: typed on every release (no opt-in flag added); a launch the release refuses is not recorded.
HEURISTIC_CASES: tuple[tuple[str, str, int, str, tuple[str, ...]], ...] = (
    ("h100-cuda-graph-bs-512", "H100", 1, "llama", ("{decode_bs}", "512")),
    ("h100-ngram", "H100", 1, "llama", ("--speculative-algorithm", "NGRAM")),
    ("h100-eagle", "H100", 1, "llama", (
        "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "{eagle_draft}",
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4")),
    ("h100-pd-decode", "H100", 1, "llama", ("--disaggregation-mode", "decode")),
    ("h100-pd-prefill", "H100", 1, "llama", ("--disaggregation-mode", "prefill")),
    ("h100-torch-compile", "H100", 1, "llama", ("--enable-torch-compile",)),
    ("h100x4-tp2-pp2", "H100", 4, "llama", ("--tp-size", "2", "--pp-size", "2")),
    ("h100x8-dsv3", "H100", 8, "dsv3", ("--tp-size", "8")),
    ("h100x8-dsv3-dp-attention", "H100", 8, "dsv3",
     ("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention")),
    ("h100x8-dsv3-deepep", "H100", 8, "dsv3", ("--tp-size", "8", "--moe-a2a-backend", "deepep")),
    ("h100x8-dsv3-deepep-decode", "H100", 8, "dsv3",
     ("--tp-size", "8", "--moe-a2a-backend", "deepep", "--disaggregation-mode", "decode")),
    ("h100x4-qwen3next", "H100", 4, "qwen3next", ("--tp-size", "4")),
    ("h100-cpu-offload", "H100", 1, "llama", ("--cpu-offload-gb", "10")),
    ("h100-hicache", "H100", 1, "llama", ("--enable-hierarchical-cache",)),
    ("h100-standalone", "H100", 1, "llama", (
        "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path",
        "{standalone_draft}", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4")),
    ("h100x8-dsv3-dp-attention-bs-400", "H100", 8, "dsv3",
     ("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "{decode_bs}", "400")),
    ("h100x4-qwen35", "H100", 4, "qwen35", ("--tp-size", "4")),
    ("h100x4-qwen35moe", "H100", 4, "qwen35moe", ("--tp-size", "4")),
)

#: Each release has one spelling of each typed prefill-graph flag (its own ServerArgs fields).
SPELLINGS = {
    "{max}": (("piecewise_cuda_graph_max_tokens", "--piecewise-cuda-graph-max-tokens"),
              ("cuda_graph_max_bs_prefill", "--cuda-graph-max-bs-prefill")),
    "{sizes}": (("piecewise_cuda_graph_tokens", "--piecewise-cuda-graph-tokens"),
                ("cuda_graph_bs_prefill", "--cuda-graph-bs-prefill")),
    # the decode graph's batch (0.5.20 drops the old name, an ambiguous prefix from then on)
    "{decode_bs}": (("cuda_graph_max_bs", "--cuda-graph-max-bs"),
                    ("cuda_graph_max_bs_decode", "--cuda-graph-max-bs-decode")),
}


def spelled(version: str, flags: tuple[str, ...]) -> tuple[str, ...] | None:
    """`flags` with the release's spelling of the typed prefill-graph flags (None: it has none);
    a list flag its parser reads as JSON (`json_list_type`, 0.5.6-0.5.7) gets `[8,16,32]`."""
    from wizard.sglang.flags import load_table
    from wizard.sglang.releases import load_release

    dests = set(load_release(version).dests)
    types = {action.dest: action.type for action in load_table(version).actions}
    out: list[str] = []
    values: list[str] | None = None  # the values of a JSON list flag, joined at its end

    def close() -> None:
        if values is not None:
            out.append("[" + ",".join(values) + "]")

    for flag in flags:
        if values is not None and not flag.startswith("--"):
            values.append(flag)
            continue
        close()
        values = None
        if flag in SPELLINGS:
            names = [(dest, option) for dest, option in SPELLINGS[flag] if dest in dests]
            if not names:
                return None
            out.append(names[0][1])
            values = [] if types.get(names[0][0]) == "json_list_type" else None
            continue
        out.append(flag)
    close()
    return tuple(out)


def release_cases(version: str, models: dict[str, Path]) -> list[dict[str, Any]]:
    """The runner cases of one release (ids `<version>-<name>[-flag]`)."""
    from wizard.memory import graph_policy

    opt_in = graph_policy(version).prefill_graph_default == "opt_in"
    out = []
    for name, gpu, gpus, typed in CASES:
        flags = spelled(version, typed)
        if flags is None:
            continue
        variants = [("", ())]
        if opt_in:
            variants = [("-flag", ("--enable-piecewise-cuda-graph",))]
            if name == "h100":
                variants.append(("", ()))
        for suffix, extra in variants:
            argv = ["--model-path", str(models["llama"]), *flags, *extra]
            out.append({"id": f"{version}-{name}{suffix}", "sglang_version": version, "gpu": gpu,
                        "gpus": gpus, "argv": argv, "env": {}})
    for name, gpu, gpus, model, typed in HEURISTIC_CASES:
        flags = spelled(version, typed)
        if flags is None:
            continue
        argv = ["--model-path", str(models[model]),
                *(str(models[f[1:-1]]) if f[1:-1] in models else f for f in flags)]
        out.append({"id": f"{version}-{name}", "sglang_version": version, "gpu": gpu,
                    "gpus": gpus, "argv": argv, "env": {}})
    return out


_HEURISTIC_NAMES = frozenset(name for name, *_rest in HEURISTIC_CASES)


def load() -> dict[str, list[dict[str, Any]]]:
    """The recorded cases by release: id, gpu, gpus, argv ({llama} placeholder) and SGLang's
    resolved mem_fraction_static, chunked_prefill_size and cuda_graph_max_bs."""
    data: dict[str, list[dict[str, Any]]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def run(version: str) -> list[dict[str, Any]]:
    """Run one release's cases through its real argument code; the fixture's rows."""
    from wizard.conformance.models import write_model_folders
    from wizard.conformance.named_cases import with_placeholders
    from wizard.conformance.run import models_root, run_cases

    models = write_model_folders(models_root())
    cases = release_cases(version, models)
    results = run_cases(version, cases, jobs=1)
    rows = []
    for case in cases:
        result = results[case["id"]]
        effective = result.get("effective") or {}
        if result.get("verdict") != "ok" and case["id"].split("-", 1)[1] in _HEURISTIC_NAMES:
            print(f"not recorded: {case['id']} ({result.get('verdict')}: "
                  f"{str(result.get('error') or '')[:120]})")
            continue
        rows.append({
            "id": case["id"], "gpu": case["gpu"], "gpus": case["gpus"],
            "argv": with_placeholders(case["argv"], models), "verdict": result.get("verdict"),
            **{key: effective.get(key) for key in (
                "mem_fraction_static", "chunked_prefill_size", "cuda_graph_max_bs")},
        })
    return rows


def record(versions: list[str]) -> None:
    data = load() if FIXTURE.exists() else {}
    for version in versions:
        data[version] = run(version)
        print(version, [(r["id"], r["mem_fraction_static"]) for r in data[version]])
    ordered = dict(sorted(data.items(), key=lambda kv: [int(p.removeprefix("post"))
                                                        for p in kv[0].split(".")]))
    FIXTURE.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    record(sys.argv[1:])
