"""Write the config.json files of the ready profiles' models into wizard/data/example_models.

The ready profiles in `profiles/` name models that are not on a fresh machine
(`/root/models/Qwen3.6-27B`, ...); the wizard reads these shipped configs instead, so the
examples are checked with their model facts offline (`wizard.example_models`). The configs are
the reconstructions of `tests/model/families.py` (public facts, checked against the published
sizes there); `tests/model/test_example_models.py` keeps the two identical.

    .venv/bin/python scripts/example_models.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "model"))

import families  # noqa: E402

#: The path a ready profile names -> the builder of its checkpoint.
EXAMPLES = {
    "/root/models/Qwen3.6-27B": families.qwen36_27b,
    "/root/models/Qwen3.5-397B-A17B-NVFP4": families.qwen35_397b_nvfp4,
    "/root/models/Kimi-K2.5": families.kimi_k25_int4,
    "/root/models/Kimi-K2.5-EAGLE3": families.kimi_k25_eagle3_draft,
    "/models/DeepSeek-V3": families.deepseek_v3,
}


def main() -> None:
    """Write each example's folder and the index (path -> folder)."""
    out = ROOT / "wizard" / "data" / "example_models"
    out.mkdir(parents=True, exist_ok=True)
    index: dict[str, str] = {}
    for path, build in EXAMPLES.items():
        family = build()
        folder = out / family.name
        folder.mkdir(exist_ok=True)
        files = {"config.json": family.config, **family.extra_files}
        for name, data in files.items():
            (folder / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        index[path] = family.name
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(index)} example models to {out}")


if __name__ == "__main__":
    main()
