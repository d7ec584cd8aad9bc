"""`sglang-wizard check`: exit codes, text and JSON output, batch mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard.cli import main


def test_profile_that_starts_exits_0(
    models: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text(
        'schema_version = 1\nsglang_version = "0.5.11"\n[model]\npath = "{}"\n'
        '[speculative]\nalgorithm = "NEXTN"\n[gpu]\nkind = "b300"\ncount = 8\n'
        '[parallel]\ntp = 8\n'.format(models["dsv3"])  # bf16 DeepSeek-V3 fits 8x B300, not 1x H100
    )
    assert main(["check", str(profile)]) == 0
    out = capsys.readouterr().out
    assert "SGLang would START this" in out and "speculative_algorithm: NEXTN -> EAGLE" in out


def test_refused_command_exits_1_with_the_first_error_marked(
    models: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "check",
            "--gpu",
            "A6000",
            "--",
            "SGLANG_ENABLE_SPEC_V2=1",
            "python",
            "-m",
            "sglang.launch_server",
            "--model-path",
            models["qwen35"],
            "--speculative-algorithm",
            "NEXTN",
            "--speculative-num-draft-tokens",
            "1",
        ]
    )
    assert code == 1
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith(">>"))
    assert "R-MAMBA-NOBUF-SPEC" in first
    assert "sglang/srt/server_args.py:2453" in out and "R-SPEC-STEPS-TRIO" in out


def test_json_report(models: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "check",
            "--json",
            "--sglang-version",
            "0.5.23",
            "--",
            "--model-path",
            models["llama"],
            "--speculative-algorithm",
            "EAGLE3",
            "--speculative-draft-model-path",
            models["eagle3"],
            "--speculative-num-draft-tokens",
            "16",
            "--speculative-eagle-topk",
            "1",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert (
        code == 1
        and report["verdict"] == "error"
        and report["first_sglang_error"] == "R-SPEC-STEPS-TRIO"
    )
    trio = next(f for f in report["findings"] if f["rule"] == "R-SPEC-STEPS-TRIO")
    assert trio["sglang"] == {
        "stage": "resolve",
        "exception": "AssertionError",
        "where": "sglang/srt/arg_groups/speculative_hook.py:1162",
        "bare": True,
        "message": trio["sglang"]["message"],
    }
    assert trio["fixes"] and all("edits" in fix for fix in trio["fixes"])


def test_batch_mode_keeps_order_and_reports_bad_lines(
    models: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "id": "a",
                        "argv": [
                            "--model-path",
                            models["dsv3"],
                            "--speculative-algorithm",
                            "NEXTN",
                        ],
                    }
                ),
                "[1, 2]",
                json.dumps(
                    {
                        "id": "c",
                        "argv": [
                            "--model-path",
                            models["dsv3"],
                            "--speculative-algorithm",
                            "nextn",
                        ],
                        "sglang_version": "0.5.11",
                    }
                ),
            ]
        )
        + "\n"
    )
    assert main(["check", "--jsonl", str(cases)]) == 2
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line.get("id") for line in lines] == ["a", None, "c"]
    assert [line["verdict"] for line in lines] == ["ok", "input-error", "error"]
    assert f"{cases}:2" in lines[1]["error"]


def test_tool_input_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "missing.toml")]) == 2
    assert "missing.toml" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text('schema_version = 1\n[model]\npath = "/m"\n[speculative]\nnum_step = 3\n')
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.toml:5" in err and "num_step" in err
    assert main(["check"]) == 2
    assert main(["check", "--jsonl", str(tmp_path / "nope.jsonl")]) == 2


def test_a_path_with_a_space_is_a_profile_not_a_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check "My Profiles/x.toml"` and `check "odd dir"` were read as a pasted launch command
    ("no SGLang launch command found"), unlike `command` and `profiles show` with the same path."""
    folder = tmp_path / "my profiles"
    folder.mkdir()
    good = folder / "qwen 27b.toml"
    good.write_text('schema_version = 1\n[model]\npath = "/m"\n')
    assert main(["check", str(good)]) == 0
    assert "SGLang would START" in capsys.readouterr().out
    assert main(["check", str(folder)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["check", str(folder / "missing one.toml")]) == 2
    assert "file not found" in capsys.readouterr().err
    # a pasted one-string command with spaces is still a command
    assert main(["check", "python -m sglang.launch_server --model-path /m"]) == 0


@pytest.mark.parametrize("args", [["profiles", "list", "--json"], ["check", "--json", "qwen3.6-27b-mtp-a6000"]])
def test_a_closed_pipe_is_quiet(args: list[str], tmp_path: Path) -> None:
    """`sglang-wizard profiles list --json | head` printed a BrokenPipeError traceback. The read end
    is closed before the process starts, so every write fails (no timing involved)."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "SGLANG_WIZARD_PROFILES_DIR": str(tmp_path)}
    try:
        done = subprocess.run([sys.executable, "-m", "wizard.cli", *args], stdout=write,
                              stderr=subprocess.PIPE, env=env, timeout=120, check=False)
    finally:
        os.close(write)
    assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141


def test_help_examples_keep_their_line_continuations(capsys: pytest.CaptureFixture[str]) -> None:
    """`check --help` printed "--tp 2       --speculative-algorithm NEXTN" on one line (a `\\`
    lost in the epilog): every example line that goes on ends with a backslash."""
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "--tp 2 \\\n      --speculative-algorithm NEXTN" in out
    assert "--tp 2       --speculative" not in out


def test_values_after_a_refusal_say_they_are_those_of_the_fixed_launch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Incident 1 try 1: `check` listed "mamba_scheduler_strategy: extra_buffer (SGLang's
    choice)" under "values SGLang will use" while its own finding said auto becomes no_buffer;
    the values are those once the errors are fixed (the TUI's table says so)."""
    code = main(["check", "--gpu", "H100", "--", "--model-path", "/m", "--speculative-algorithm",
                 "EAGLE", "--speculative-draft-model-path", "/d", "--speculative-eagle-topk", "1"])
    out = capsys.readouterr().out
    assert code == 1
    assert "values SGLang will use once the errors are fixed (typed -> effective):" in out
    assert main(["check", "--gpu", "H100", "--", "--model-path", "/m"]) == 0
    assert "values SGLang will use (typed -> effective):" in capsys.readouterr().out
