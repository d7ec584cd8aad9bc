"""Small hand-written flag tables (reference §1) in the dump format, for tests of the table logic.

The product uses the real dumps in `wizard/sglang/data/`; these tables let the lookup, prefix and
rename logic be tested on a parser whose contents the test fully controls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "seeds"  # copies of the incident seeds

ALGOS_11 = ["DFLASH", "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"]
ATTN = ["triton", "torch_native", "flex_attention", "fa3", "flashinfer", "trtllm_mha"]


def _a(
    options: list[str],
    dest: str | None = None,
    *,
    action: str = "_StoreAction",
    nargs: Any = None,
    type: str | None = "str",
    choices: list[Any] | None = None,
    default: Any = None,
    required: bool = False,
) -> dict[str, Any]:
    if action in {"_StoreTrueAction", "DeprecatedStoreTrueAction", "_HelpAction"}:
        type = None
        nargs = 0
        default = False if action != "_HelpAction" else "==SUPPRESS=="
    return {
        "dest": dest or options[0].lstrip("-").replace("-", "_"),
        "option_strings": options,
        "action": action,
        "nargs": nargs,
        "type": type,
        "choices": choices,
        "default": default,
        "help": "",
        "deprecated": action.startswith("Deprecated"),
        "required": required,
    }


def _common() -> list[dict[str, Any]]:
    return [
        _a(["-h", "--help"], "help", action="_HelpAction"),
        _a(["--model-path", "--model"], "model_path", required=True),
        _a(["--tokenizer-path"]),
        _a(["--served-model-name"]),
        _a(["--revision"]),
        _a(["--quantization"]),
        _a(["--kv-cache-dtype"], choices=["auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16"]),
        _a(["--host"], default="127.0.0.1"),
        _a(["--port"], type="int", default=30000),
        _a(["--trust-remote-code"], action="_StoreTrueAction"),
        _a(["--dtype"], choices=["auto", "half", "float16", "bfloat16", "float", "float32"]),
        _a(["--context-length"], type="int"),
        _a(["--log-level"], default="info"),
        _a(["--enable-metrics"], action="_StoreTrueAction"),
        _a(["--json-model-override-args"], type="loads", default="{}"),
        _a(["--speculative-draft-model-path", "--speculative-draft-model"]),
        _a(["--speculative-num-steps"], type="int"),
        _a(["--speculative-eagle-topk"], type="int"),
        _a(["--speculative-num-draft-tokens"], type="int"),
        _a(["--speculative-accept-threshold-single"], type="float", default=1.0),
        _a(["--mem-fraction-static"], type="float"),
        _a(["--max-running-requests"], type="int"),
        _a(["--chunked-prefill-size"], type="int"),
        _a(["--attention-backend"], choices=ATTN),
        _a(["--page-size"], type="int"),
        _a(["--disable-radix-cache"], action="_StoreTrueAction"),
        _a(["--disable-overlap-schedule"], action="_StoreTrueAction"),
        _a(["--mamba-track-interval"], type="int", default=256),
        _a(["--data-parallel-size", "--dp-size"], "dp_size", type="int", default=1),
        _a(["--config"]),
    ]


def table_0_5_11() -> dict[str, Any]:
    """The 0.5.11 flags of reference §1.1 (a subset)."""
    actions = [
        *_common(),
        _a(["--tensor-parallel-size", "--tp-size"], "tp_size", type="int", default=1),
        _a(["--speculative-algorithm"], choices=ALGOS_11),
        _a(["--speculative-skip-dp-mlp-sync"], action="_StoreTrueAction"),
        _a(["--speculative-dflash-draft-window-size"], type="int"),
        _a(["--enable-dp-attention"], action="_StoreTrueAction"),
        _a(
            ["--mamba-scheduler-strategy"],
            choices=["auto", "no_buffer", "extra_buffer"],
            default="auto",
        ),
        _a(["--cuda-graph-max-bs"], type="int"),
        _a(["--cuda-graph-bs"], type="int", nargs="+"),
        _a(["--disable-cuda-graph"], action="_StoreTrueAction"),
    ]
    return {
        "sglang_version": "0.5.11",
        "prog": "sglang serve",
        "allow_abbrev": True,
        "actions": actions,
    }


def table_0_5_23() -> dict[str, Any]:
    """The 0.5.23 flags of reference §1.2 (a subset)."""
    actions = [
        *_common(),
        _a(["--tp-size", "--tensor-parallel-size"], "tp_size", type="int", default=1),
        _a(["--attn-dp-size", "--attention-data-parallel-size"], "attn_dp_size", type="int"),
        _a(["--speculative-algorithm"]),
        _a(["--speculative-draft-window-size"], type="int"),
        _a(["--speculative-use-rejection-sampling"], action="_StoreTrueAction"),
        _a(["--enable-dp-attention"], action="DeprecatedStoreTrueAction"),
        _a(
            ["--mamba-radix-cache-strategy"],
            choices=["auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"],
            default="auto",
        ),
        _a(["--cuda-graph-max-bs-decode"], type="int"),
        _a(["--cuda-graph-max-bs-prefill"], type="int"),
        _a(["--cuda-graph-bs-decode"], type="int", nargs="+"),
        _a(["--cuda-graph-bs-prefill"], type="int", nargs="+"),
        _a(["--disable-cuda-graph"], action="DeprecatedStoreTrueAction"),
    ]
    return {
        "sglang_version": "0.5.23",
        "prog": "sglang serve",
        "allow_abbrev": True,
        "actions": actions,
    }
