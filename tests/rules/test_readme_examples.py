"""The README's example output is produced by the code: every shown line is in the real output,
in the same order (an omitted part of a line is written `...`), so the numbers never go stale."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from wizard.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"
MODEL_PATH = "/models/Qwen3.6-27B"


def qwen36_config() -> dict[str, object]:
    """The incident-1 model shape the TUI tests use (tests/tui/conftest.py)."""
    import importlib.util

    path = README.parent / "tests" / "tui" / "conftest.py"
    spec = importlib.util.spec_from_file_location("tui_conftest_for_readme", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config: dict[str, object] = module.qwen36_config()
    return config


def console_blocks(text: str) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) of each ```console block that runs `sglang-wizard check`."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        lines = body.splitlines()
        if not lines or not lines[0].startswith("$ sglang-wizard check"):
            continue
        command = [lines[0][2:]]
        index = 1
        while command[-1].endswith("\\"):
            command[-1] = command[-1][:-1]
            command.append(lines[index].strip())
            index += 1
        blocks.append((" ".join(command), lines[index:]))
    return blocks


def shows(shown: str, real: str) -> bool:
    """`shown` is `real`, or `real` with parts left out as `...` / `[...]`."""
    pieces = [p for p in re.split(r"\s?\[?\.\.\.\]?,?\s?", shown) if p]
    position = 0
    for piece in pieces:
        found = real.find(piece, position)
        if found < 0 or (position == 0 and piece is pieces[0] and found != 0):
            return False
        position = found + len(piece)
    return True


def test_readme_check_example_is_the_real_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = console_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "the README shows a `sglang-wizard check` example"
    model = tmp_path / "Qwen3.6-27B"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(qwen36_config()), encoding="utf-8")
    for command, shown in blocks:
        argv = [str(model) if w == MODEL_PATH else w for w in shlex.split(command)[1:]]
        main(argv)
        real = capsys.readouterr().out.replace(str(model), MODEL_PATH).splitlines()
        cursor = 0
        for line in shown:
            while cursor < len(real) and not shows(line, real[cursor]):
                cursor += 1
            assert cursor < len(real), f"README line not in the real output (in order): {line!r}"
            cursor += 1
