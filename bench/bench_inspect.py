"""Model inspection cost with a DeepSeek-size safetensors index, measured side by side.

Prints the time of `facts_from_files` with config.json only, with the full 9 MB index text, and
with only the first 64 KiB of the index (what a remote reader needs to send), as ratios to the
config-only time, plus the cost of parsing the whole index with `json.loads` for comparison.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "model"))

import families

from wizard.model_files import INDEX_FILE
from wizard.model_info import INDEX_HEAD_BYTES, facts_from_files


def _index_text() -> str:
    weight_map = {
        f"model.layers.{layer}.mlp.experts.{expert}.{proj}.{suffix}": (
            f"model-{(layer * 256 + expert) % 163 + 1:05d}-of-000163.safetensors"
        )
        for layer in range(62)
        for expert in range(256)
        for proj in ("gate_proj", "up_proj", "down_proj")
        for suffix in ("weight", "weight_scale_inv")
    }
    return json.dumps({"metadata": {"total_size": 688_586_727_753}, "weight_map": weight_map})


def _ms(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> int:
    config = json.dumps(families.deepseek_v3().config)
    index = _index_text()
    head = index[:INDEX_HEAD_BYTES]
    only = {"config.json": config}
    full = {"config.json": config, INDEX_FILE: index}
    cut = {"config.json": config, INDEX_FILE: head}
    assert facts_from_files(full, "x").checkpoint_bytes == 688_586_727_753
    assert facts_from_files(cut, "x").checkpoint_bytes == 688_586_727_753
    base = _ms(lambda: facts_from_files(only, "x"), 50)
    rows = [
        ("config.json only", base),
        (
            f"+ full index ({len(index) / 1e6:.1f} MB text)",
            _ms(lambda: facts_from_files(full, "x"), 20),
        ),
        (f"+ index head ({len(head) // 1024} KiB)", _ms(lambda: facts_from_files(cut, "x"), 50)),
        ("json.loads of the full index", _ms(lambda: json.loads(index), 5)),
    ]
    print("bench_inspect: facts_from_files with a DeepSeek-V3-size safetensors index")
    for name, ms in rows:
        print(f"  {name:<36} {ms:8.2f} ms  x{ms / base:7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
