"""`sglang-wizard profiles`: list, show, path and validate, through `wizard.cli.main`."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from wizard.cli import main
from wizard.profile import PROFILES_DIR_ENV, builtin_profiles_dir

CORPUS = Path(__file__).parent / "corpus"
READY = sorted(builtin_profiles_dir().glob("*.toml"))
GOOD = 'schema_version = 1\ndescription = "My Qwen. Second sentence."\n[model]\npath = "/m"\n'


@pytest.fixture
def saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated profiles dir holding one good and one broken profile."""
    directory = tmp_path / "saved"
    directory.mkdir()
    (directory / "mine.toml").write_text(GOOD)
    shutil.copy(CORPUS / "23-unknown-speculative-num_step.toml", directory / "typo.toml")
    monkeypatch.setenv(PROFILES_DIR_ENV, str(directory))
    return directory


def test_profiles_without_action_lists_saved_and_ready(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    assert f"Saved profiles ({saved}):" in out
    assert f"Ready profiles ({builtin_profiles_dir()}):" in out
    assert "mine  My Qwen." in out
    assert "Second sentence" not in out, "only the first sentence of the description"
    assert "typo  BROKEN (line 9: speculative.num_step: unknown key" in out
    for path in READY:
        assert path.stem in out
    assert out.index("Saved profiles") < out.index("mine") < out.index("Ready profiles")


def test_list_json_has_every_profile_with_its_source(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {r["name"]: r for r in rows}
    assert by_name["mine"]["source"] == "saved"
    assert by_name["mine"]["description"] == "My Qwen. Second sentence."
    assert by_name["mine"]["error"] is None
    assert by_name["typo"]["error"].startswith(f"{saved / 'typo.toml'}:9: speculative.num_step")
    assert {r["name"] for r in rows if r["source"] == "ready"} == {p.stem for p in READY}


def test_list_with_no_saved_profiles_says_how_to_make_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PROFILES_DIR_ENV, str(tmp_path / "does-not-exist"))
    assert main(["profiles", "list"]) == 0
    assert "(none yet: save one" in capsys.readouterr().out


def test_show_by_saved_name_prints_the_file(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "show", "mine"]) == 0
    assert capsys.readouterr().out == GOOD


def test_show_by_ready_name_and_by_path(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "show", READY[0].stem]) == 0
    assert capsys.readouterr().out == READY[0].read_text("utf-8")
    assert main(["profiles", "show", str(READY[0])]) == 0
    assert capsys.readouterr().out == READY[0].read_text("utf-8")


def test_saved_profile_shadows_a_ready_one_of_the_same_name(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (saved / f"{READY[0].stem}.toml").write_text(GOOD)
    assert main(["profiles", "show", READY[0].stem]) == 0
    assert capsys.readouterr().out == GOOD


def test_show_broken_profile_prints_it_and_its_errors(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "show", "typo"]) == 2
    captured = capsys.readouterr()
    assert "num_step = 3" in captured.out
    assert f"{saved / 'typo.toml'}:9: speculative.num_step: unknown key" in captured.err


def test_show_unknown_name_suggests_close_names(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "show", "mien"]) == 2
    err = capsys.readouterr().err
    assert "no profile named 'mien'" in err
    assert "did you mean mine" in err


def test_show_refuses_a_name_that_is_neither_file_nor_name(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "show", "..hidden name"]) == 2
    assert "invalid profile name" in capsys.readouterr().err


def test_path_prints_the_profiles_dir(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "path"]) == 0
    assert capsys.readouterr().out == f"{saved}\n"
    assert main(["profiles", "path", "--ready"]) == 0
    assert capsys.readouterr().out == f"{builtin_profiles_dir()}\n"


def test_validate_good_files_exit_0(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "validate", str(saved / "mine.toml"), *map(str, READY)]) == 0
    captured = capsys.readouterr()
    assert f"{saved / 'mine.toml'}: ok" in captured.out
    assert f"{len(READY) + 1} of {len(READY) + 1} profiles valid" in captured.err


def test_validate_reports_every_located_problem_and_exits_2(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = CORPUS / "41-port-70000.toml"
    missing = saved / "missing.toml"
    assert main(["profiles", "validate", "mine", str(broken), str(missing)]) == 2
    captured = capsys.readouterr()
    assert f"{saved / 'mine.toml'}: ok" in captured.out
    assert f"{broken}:9: server.port: must be at most 65535, got 70000" in captured.out
    assert f"{missing}: file not found" in captured.out
    assert "1 of 3 profiles valid" in captured.err


def test_validate_without_files_checks_all_saved_and_ready(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "validate"]) == 2  # typo.toml is broken
    out = capsys.readouterr().out
    assert f"{saved / 'mine.toml'}: ok" in out
    assert "speculative.num_step" in out
    for path in READY:
        assert f"{path}: ok" in out


def test_validate_quiet_prints_only_problems(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "validate", "-q", "mine"]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["profiles", "validate", "-q", "mine", "typo"]) == 2
    captured = capsys.readouterr()
    assert "mine.toml: ok" not in captured.out
    assert "speculative.num_step" in captured.out


def test_validate_json(saved: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profiles", "validate", "--json", "mine", "typo"]) == 2
    results = json.loads(capsys.readouterr().out)
    assert [r["ok"] for r in results] == [True, False]
    assert results[1]["problems"] == [
        {
            "key": "speculative.num_step",
            "line": 9,
            "message": "unknown key 'num_step'; did you mean 'num_steps'?",
            "allowed": results[1]["problems"][0]["allowed"],
        }
    ]
    assert results[1]["problems"][0]["allowed"].startswith("keys algorithm")


def test_validate_stdin(
    saved: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("schema_version = 1\n[model]\npath = ''\n"))
    assert main(["profiles", "validate", "-"]) == 2
    assert "<stdin>:3: model.path: must not be empty" in capsys.readouterr().out


def test_validate_stdin_that_is_not_utf8(
    saved: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cat latin1.toml | profiles validate -` said model.path "contains a character that cannot
    be saved as UTF-8, got "/m\ufffd"" where the same file says "not UTF-8 text" at its line."""
    raw = b'schema_version = 1\n[model]\npath = "/m\xff\xfe"\n'
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    assert main(["profiles", "validate", "-"]) == 2
    out = capsys.readouterr().out
    assert "<stdin>:3: not UTF-8 text (allowed: TOML files must be UTF-8)" in out
    assert "cannot be saved" not in out


def test_validate_unknown_name_is_reported_with_the_others(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "validate", "mine", "nosuchprofile"]) == 2
    out = capsys.readouterr().out
    assert "nosuchprofile: no profile named 'nosuchprofile'" in out
    assert "mine.toml: ok" in out


def test_validate_with_nothing_to_validate_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PROFILES_DIR_ENV, str(tmp_path / "empty"))
    monkeypatch.setattr("wizard.profiles_cli.builtin_profiles_dir", lambda: tmp_path / "none")
    assert main(["profiles", "validate"]) == 2
    assert "nothing to validate" in capsys.readouterr().err


BROKEN = sorted(p.name for p in CORPUS.glob("*.toml") if p.name != "expected.toml")


@pytest.mark.parametrize("name", BROKEN)
def test_validate_never_crashes_on_the_corpus(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["profiles", "validate", str(CORPUS / name)]) == 2
    out = capsys.readouterr().out
    assert out.startswith(str(CORPUS / name))
