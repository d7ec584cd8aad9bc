"""`sglang-wizard command` and `sglang-wizard import`: output formats, files, stdin, exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from wizard.cli import main
from wizard.profile import builtin_profiles_dir, load_profile
from wizard.sglang.parse import parse_command

QWEN = builtin_profiles_dir() / "qwen3.6-27b-mtp-a6000.toml"


def test_command_shell_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["command", str(QWEN)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("~/ml-env/bin/python3 -m sglang.launch_server \\\n  --model-path ")
    assert "--mamba-scheduler-strategy extra_buffer" in out
    assert parse_command(out).profile.speculative == load_profile(QWEN).speculative


def test_command_for_another_version_uses_its_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["command", str(QWEN), "--sglang-version", "0.5.23", "--single-line"]) == 0
    out = capsys.readouterr().out
    assert "--mamba-radix-cache-strategy extra_buffer" in out and "\\\n" not in out


def test_command_yaml_and_argv_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["command", str(QWEN), "--format", "yaml"]) == 0
    out = capsys.readouterr().out
    assert "mamba-scheduler-strategy: extra_buffer" in out and "tp-size: 2" in out
    assert main(["command", str(QWEN), "--format", "argv-json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["argv"][:3] == ["~/ml-env/bin/python3", "-m", "sglang.launch_server"]
    assert data["env"] == {}


def test_command_unsupported_version_warns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["command", str(QWEN), "--sglang-version", "0.6.0"]) == 0
    assert "using the 0.5.23 release data" in capsys.readouterr().err


def test_import_stdin_that_is_not_utf8(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import -` of a Latin-1 command said "Input should be a valid string, unable to parse raw
    data as a unicode string (profile field model.path)"; --from-file says "not UTF-8 text"."""
    raw = b"python -m sglang.launch_server \\\n  --model-path /m\xff\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    assert main(["import", "-"]) == 2
    err = capsys.readouterr().err
    assert "<stdin>:2: not UTF-8 text" in err and "unicode string" not in err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["command", "/nonexistent.toml"], "file not found"),
        (["command", str(QWEN), "--sglang-version", "banana"], "not an SGLang version"),
    ],
)
def test_command_input_errors_exit_2(
    args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    assert fragment in capsys.readouterr().err


def test_command_field_missing_in_version_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text(
        'schema_version = 1\nsglang_version = "0.5.23"\n[model]\npath = "/m"\n'
        "[speculative]\nskip_dp_mlp_sync = true\n",
        encoding="utf-8",
    )
    assert main(["command", str(profile)]) == 2
    err = capsys.readouterr().err
    assert str(profile) in err and "speculative.skip_dp_mlp_sync" in err


def test_import_words_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "import",
            "--",
            "SGLANG_ENABLE_SPEC_V2=1",
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "/m x",
            "--tp",
            "2",
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert 'path = "/m x"' in captured.out and "tp = 2" in captured.out
    assert "SGLANG_ENABLE_SPEC_V2" in captured.out
    assert "--tp is a prefix" in captured.err


def test_import_one_quoted_string_and_output_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "p.toml"
    command = "nohup python3 -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3 > log 2>&1 &"
    assert main(["import", "-o", str(target), "--", command]) == 0
    assert load_profile(target).speculative.algorithm == "EAGLE3"
    assert "wrote" in capsys.readouterr().err
    # an existing file is not replaced without --force, and stays intact
    before = target.read_bytes()
    assert main(["import", "-o", str(target), "--", "sglang serve --model-path /other"]) == 2
    assert "--force" in capsys.readouterr().err
    assert target.read_bytes() == before
    assert main(["import", "--force", "-o", str(target), "--", "sglang serve --model-path /o"]) == 0
    assert load_profile(target).model.path == "/o"


def test_import_from_file_locates_the_bad_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "launch.sh"
    script.write_text(
        "#!/bin/sh\npython3 -m sglang.launch_server \\\n  --model-path /m \\\n"
        "  --num-speculative-tokens 16\n",
        encoding="utf-8",
    )
    assert main(["import", "--from-file", str(script)]) == 2
    err = capsys.readouterr().err
    assert f"{script}:4:" in err
    assert "--speculative-num-draft-tokens" in err
    assert "sglang serve: error: unrecognized arguments: --num-speculative-tokens 16" in err


def test_import_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(
        "sys.stdin", io.StringIO("sglang serve --model-path /s --trust-remote-code\n")
    )
    assert main(["import", "--sglang-version", "0.5.23", "-"]) == 0
    out = capsys.readouterr().out
    assert 'sglang_version = "0.5.23"' in out and "trust_remote_code = true" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["import"], "no command given"),
        (["import", "--", "echo hi"], "no SGLang launch command"),
        (["import", "--sglang-version", "x", "--", "sglang serve --model-path /m"], "version"),
        (
            ["import", "--", "sglang serve --model-path /m --speculative-algorithm nextn"],
            "invalid choice",
        ),
        (["import", "--from-file", "/nonexistent.sh"], "file not found"),
    ],
)
def test_import_input_errors_exit_2(
    args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    assert fragment in capsys.readouterr().err
