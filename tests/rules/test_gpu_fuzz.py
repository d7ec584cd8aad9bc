"""Seeded, bounded fuzz of the GPU inputs: `--gpu` / `--gpus` of check and inspect, the `"gpu"` /
`"gpus"` of `check --jsonl`, and the profile's `[gpu]` table. Every case ends with exit 0, 1 or 2,
never a traceback (issue 21 item 3, issue 25 items 18/20)."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from wizard.cli import main
from wizard.gpus import CATALOG

SEED = 2112
CASES = 120  # per entry point; each case is a few milliseconds

PIECES = [
    "custom:", "sm=", "arch=", "mem=", "name=", "nvlink=", "sms=", ",", "=", "8.9", "12.0", "gfx942",
    "gfx9zz", "48GB", "49140MiB", "0GB", "-1GB", "1e30TB", "nan", "yes", "maybe", " ", "\t", "é",
    "\u202e", "NVIDIA ", "AMD Instinct ", "H100", "mi300x", "A6000", "custom", ":", "99999", "..",
]


def _kinds(rng: random.Random) -> list[str]:
    out = []
    for _ in range(CASES):
        roll = rng.random()
        if roll < 0.2:
            out.append(rng.choice(CATALOG).name.lower().replace(" ", rng.choice(["", "-", "_", " "])))
        elif roll < 0.7:
            out.append("".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8))))
        else:
            alphabet = string.printable + "ΩЖ中"
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))))
    return out


def _counts(rng: random.Random) -> list[object]:
    pool: list[object] = [0, -1, 1, 2, 8, 2.5, 1e400, True, None, "8", "x", "", [8], {"n": 1},
                          10**12, -(10**12), 65536, 65537, float("nan")]
    return [rng.choice(pool) for _ in range(CASES)]


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own errors are exit 2
        return int(exc.code or 0)


def test_fuzz_gpu_flags(models: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(SEED)
    for kind, count in zip(_kinds(rng), _counts(rng), strict=True):
        flags = ["--gpu", kind] if rng.random() < 0.8 else []
        if count is not None and not isinstance(count, (list, dict)):
            flags += ["--gpus", str(count)]
        for argv in (["check", *flags, "--", "--model-path", models["llama"]],
                     ["inspect", models["llama"], *flags]):
            if "\x00" in " ".join(argv):
                continue  # a NUL cannot reach argv from a shell
            code = _run(argv)
            err = capsys.readouterr().err
            assert code in (0, 1, 2), (argv, code)
            assert "Traceback" not in err, (argv, err)


def test_fuzz_jsonl_gpu_keys(models: dict[str, str], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(SEED + 1)
    lines = []
    for i, (kind, count) in enumerate(zip(_kinds(rng), _counts(rng), strict=True)):
        case: dict[str, object] = {"id": i, "argv": ["--model-path", models["llama"]]}
        if rng.random() < 0.9:
            case["gpu"] = rng.choice([kind, kind, 5, None, ["H100"], {"k": 1}, 1.5, True])
        if count is not None or rng.random() < 0.5:
            case["gpus"] = count
        lines.append(json.dumps(case, allow_nan=True))
    batch = tmp_path / "fuzz.jsonl"
    batch.write_text("\n".join(lines) + "\n")
    assert main(["check", "--jsonl", str(batch)]) in (0, 1, 2)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(lines)  # one answer per line: no line aborts the batch
    assert all(json.loads(line)["verdict"] in ("ok", "warning", "error", "input-error")
               for line in out)


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return str(value)


def test_fuzz_profile_gpu_table(models: dict[str, str], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(SEED + 2)
    keys = ["kind", "count", "capability", "arch", "memory", "name", "colour"]
    for i, (kind, count) in enumerate(zip(_kinds(rng), _counts(rng), strict=True)):
        table = {"kind": kind} if rng.random() < 0.8 else {}
        if count is not None:
            table["count"] = count  # type: ignore[assignment]
        for key in rng.sample(keys[2:], rng.randint(0, 2)):
            table[key] = rng.choice(["8.9", "gfx942", "48GB", 48, "", "x,y=z", True])  # type: ignore[assignment]
        body = "\n".join(f"{k} = {_toml_value(v)}" for k, v in table.items())
        profile = tmp_path / f"p{i}.toml"
        profile.write_text(
            f'schema_version = 1\nsglang_version = "0.5.11"\n[model]\npath = "{models["llama"]}"\n'
            f"[gpu]\n{body}\n", encoding="utf-8", errors="surrogatepass")
        for argv in (["check", str(profile)], ["inspect", "--profile", str(profile)]):
            code = _run(argv)
            err = capsys.readouterr().err
            assert code in (0, 1, 2), (body, argv, code)
            assert "Traceback" not in err, (body, err)
