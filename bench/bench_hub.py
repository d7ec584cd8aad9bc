"""Model facts by Hub id, measured side by side against a stand-in Hub on 127.0.0.1.

Cold (empty HF cache: model info + HEAD/GET per small file), warm HF cache in a new process (one
model-info request; files by commit need none), offline from the cache (no request), the
in-process cache the check hits on every keystroke, and a local folder for comparison. Ratios are
to the local folder read. The cold read includes a DeepSeek-size 9 MB safetensors index.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "model"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

import families  # noqa: E402
from stand_in_hub import Repo, StandInHub  # noqa: E402

from wizard import api  # noqa: E402
from wizard.hub import load_hub_facts  # noqa: E402
from wizard.model_files import INDEX_FILE  # noqa: E402
from wizard.model_info import load_model_facts  # noqa: E402

REPO = "deepseek-ai/DeepSeek-V3"


def _index_text() -> str:
    weight_map = {
        f"model.layers.{layer}.mlp.experts.{expert}.{proj}.weight": f"model-{layer:05d}.safetensors"
        for layer in range(62)
        for expert in range(256)
        for proj in ("gate_proj", "up_proj", "down_proj")
    }
    return json.dumps({"metadata": {"total_size": 688_586_727_753}, "weight_map": weight_map})


def _ms(fn, repeat: int, before=None) -> float:
    best = float("inf")
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> int:
    fam = families.deepseek_v3()
    files = {"config.json": json.dumps(fam.config), INDEX_FILE: _index_text()}
    with tempfile.TemporaryDirectory() as tmp, StandInHub(
        {REPO: Repo(files, safetensors={"BF16": 684_531_386_000})}
    ) as hub:
        folder = fam.write(Path(tmp) / "local")
        (folder / INDEX_FILE).write_text(files[INDEX_FILE])
        os.environ.update(
            HF_ENDPOINT=hub.url,
            HF_HOME=str(Path(tmp) / "hf"),
            SGLANG_WIZARD_CACHE_DIR=str(Path(tmp) / "wizard"),
        )
        for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE"):
            os.environ.pop(name, None)
        counter = iter(range(10**6))

        def cold() -> None:
            os.environ["HF_HOME"] = str(Path(tmp) / f"hf-{next(counter)}")
            load_hub_facts(REPO)

        local = _ms(lambda: load_model_facts(folder), 10)
        hub.clear()
        cold_ms = _ms(cold, 5)
        cold_requests = len(hub.requests) // 5
        os.environ["HF_HOME"] = str(Path(tmp) / "hf")
        load_hub_facts(REPO)
        hub.clear()
        warm_ms = _ms(lambda: load_hub_facts(REPO), 20)
        warm_requests = len(hub.requests) // 20
        os.environ["HF_HUB_OFFLINE"] = "1"
        hub.clear()
        offline_ms = _ms(lambda: load_hub_facts(REPO), 20)
        offline_requests = len(hub.requests)
        os.environ.pop("HF_HUB_OFFLINE")
        api.load_facts(REPO)
        keystroke_ms = _ms(lambda: api.load_facts(REPO, fetch=False), 200)
        assert hub.weight_requests() == []
    rows = [
        ("local folder (config + 9 MB index)", local, "-"),
        ("Hub id, cold cache", cold_ms, str(cold_requests)),
        ("Hub id, warm HF cache, new process", warm_ms, str(warm_requests)),
        ("Hub id, HF_HUB_OFFLINE=1 from cache", offline_ms, str(offline_requests)),
        ("Hub id, in-process (every keystroke)", keystroke_ms, "0"),
    ]
    print("bench_hub: DeepSeek-V3 facts by Hub id (stand-in Hub on 127.0.0.1) vs a local folder")
    print(f"  {'':<40} {'ms':>9} {'x local':>8} {'requests':>9}")
    for name, ms, requests in rows:
        print(f"  {name:<40} {ms:9.3f} {ms / local:8.2f} {requests:>9}")
    print(f"  cold / warm: x{cold_ms / warm_ms:.1f}; warm / in-process: x{warm_ms / keystroke_ms:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
