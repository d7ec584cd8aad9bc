"""Sane ranges of the numbers users give the tool (profiles, options, batch lines, configs).

SGLang itself bounds few of them; the wizard sizes plans, loops and node lists by them, so a
value far outside what any machine has is refused as an input error (exit 2) naming the field and
the range, instead of being planned for (an hour-long loop, a terabyte string). The bounds are
orders of magnitude above today's largest deployments.
"""

from __future__ import annotations

import math

#: tp, pp, dp, ep, attention-DP sizes (the largest launches today: a few hundred GPUs).
MAX_PARALLEL = 4096
#: Nodes of one launch: every node gets its own command, SSH session and run record.
MAX_NODES = 1024
#: GPUs of one machine (`--gpus`, `gpu.count`, a batch line's `gpus`).
MAX_GPUS = 1024
#: Speculative steps, topk and draft tokens (SGLang sizes buffers by them).
MAX_SPEC_COUNT = 1024
#: Context length, chunked prefill, token budgets (today's longest context: 10M tokens).
MAX_TOKENS = 2**30
#: Running requests, CUDA-graph batch sizes.
MAX_BATCH = 2**20
#: Layers of a model config (today's deepest: ~130).
MAX_LAYERS = 100_000
#: Any other integer of a model config (hidden sizes, vocab, experts): far above any model.
MAX_CONFIG_INT = 2**40
#: The bytes a checkpoint stores (`metadata.total_size`): 1 PiB.
MAX_CHECKPOINT_BYTES = 2**50
#: Nesting of the JSON files of a model folder (real configs: 3-4 levels).
MAX_JSON_DEPTH = 64


def int_in_range(value: object, low: int, high: int) -> bool:
    """`value` is an int (not a bool) within `low..high`."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def fraction_ok(value: float) -> bool:
    """A finite number in (0, 1] (mem-fraction-static)."""
    return math.isfinite(value) and 0 < value <= 1
