"""Scorer (hand-made reports), case generator and venv helpers: no venv needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wizard.conformance import cases as cases_mod
from wizard.conformance import venvs
from wizard.conformance.models import MODEL_CONFIGS, write_model_folders
from wizard.conformance.named_cases import NAMED, fixture_text, named_cases
from wizard.conformance.score import markdown_report, normalise_where, score_case, summarise

DATA = Path(__file__).resolve().parents[2] / "wizard" / "sglang" / "data"
CASE = {"id": "c1", "sglang_version": "0.5.11", "gpu": "H100", "gpus": 1,
        "argv": ["--model-path", "/m/llama"], "env": {}}


def _sglang(verdict: str = "ok", **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "c1", "verdict": verdict, "stage": None, "exception": None,
                            "where": None, "bare": False, "effective": {}, "warnings": [],
                            "runner_error": False}
    base.update(kw)
    return base


def _wizard(verdict: str = "ok", findings: list[dict[str, Any]] | None = None,
            **effective: Any) -> dict[str, Any]:
    return {"id": "c1", "verdict": verdict, "sglang_verdict": verdict,
            "findings": findings or [], "effective": effective}


def _error(rule: str, stage: str, exception: str, where: str | None) -> dict[str, Any]:
    return {"rule": rule, "severity": "error", "message": "m",
            "sglang": {"stage": stage, "exception": exception, "where": where, "bare": True}}


TRIO = {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3,
        "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4}


def test_same_error_agrees_and_where_prefixes_are_normalised() -> None:
    sglang = _sglang("error", stage="resolve", exception="AssertionError",
                     where="sglang/srt/server_args.py:3521")
    info = {"rule": "R-MAXREQ-48", "severity": "info", "message": "",
            "sglang": {"stage": "resolve", "exception": None, "where": "x.py:1"}}
    wizard = _wizard("error", [info, _error("R-SPEC-STEPS-TRIO", "resolve", "AssertionError",
                                            "srt/server_args.py:3521")])
    result = score_case(CASE, sglang, wizard)
    assert result.agree and result.reason == "same error"
    assert normalise_where("sglang/srt/a.py:1") == normalise_where("srt/a.py:1") == "a.py:1"


@pytest.mark.parametrize(
    ("wizard_error", "reason"),
    [
        (("R-X", "check", "AssertionError", "sglang/srt/server_args.py:3521"),
         "first error stage differs"),
        (("R-X", "resolve", "ValueError", "sglang/srt/server_args.py:3521"),
         "first error exception differs"),
        (("R-X", "resolve", "AssertionError", "sglang/srt/server_args.py:3520"),
         "first error where differs"),
    ],
)
def test_a_different_first_error_disagrees(wizard_error: tuple[str, str, str, str],
                                           reason: str) -> None:
    sglang = _sglang("error", stage="resolve", exception="AssertionError",
                     where="sglang/srt/server_args.py:3521")
    result = score_case(CASE, sglang, _wizard("error", [_error(*wizard_error)]))
    assert not result.agree and result.reason == reason


def test_first_sglang_error_field_picks_the_finding() -> None:
    sglang = _sglang("error", stage="argparse", exception="SystemExit")
    wizard = _wizard("error", [_error("R-OTHER", "resolve", "ValueError", "a.py:1"),
                               _error("R-ARGPARSE", "argparse", "SystemExit", None)])
    wizard["first_sglang_error"] = "R-ARGPARSE"
    assert score_case(CASE, sglang, wizard).agree


def test_verdicts_and_effective_values() -> None:
    ok = _sglang("ok", effective={**TRIO, "page_size": 1, "attention_backend": "fa3"})
    assert score_case(CASE, ok, _wizard("ok", **TRIO, page_size=1,
                                        attention_backend="fa3")).agree
    wrong_draft = score_case(CASE, ok, _wizard("ok", **{**TRIO,
                                                         "speculative_num_draft_tokens": 16}))
    assert not wrong_draft.agree
    assert wrong_draft.reason == "effective differs: speculative_num_draft_tokens"
    # secondary fields are reported but do not decide agreement
    other_backend = score_case(CASE, ok, _wizard("ok", **TRIO, page_size=1,
                                                 attention_backend="flashinfer"))
    assert other_backend.agree and other_backend.secondary["attention_backend"] is False
    missed = score_case(CASE, _sglang("error", stage="resolve", exception="ValueError"),
                        _wizard("ok", **TRIO))
    assert missed.reason == "verdict: sglang error, wizard ok"
    # the wizard's own advice (verdict) does not count, only what it predicts SGLang does
    advice = _wizard("ok", **TRIO)
    advice["verdict"] = "error"
    assert score_case(CASE, _sglang("ok", effective=TRIO), advice).agree
    assert not score_case(CASE, _sglang("error", runner_error=True), advice).agree


def test_summary_table_and_report_list_every_disagreement_with_both_sides() -> None:
    cases = [dict(CASE, id=f"c{i}", gpu=gpu) for i, gpu in enumerate(("H100", "B200", "H100"))]
    sglang = {"c0": _sglang("ok", effective=TRIO), "c1": _sglang("ok", effective=TRIO),
              "c2": _sglang("error", stage="resolve", exception="ValueError",
                            where="sglang/srt/server_args.py:2453", message="needs extra_buffer")}
    wizard = {"c0": _wizard("ok", **TRIO), "c1": _wizard("ok", **TRIO),
              "c2": _wizard("ok", **TRIO)}
    summary = summarise(cases, sglang, wizard)
    assert summary.agreement("0.5.11") == pytest.approx(2 / 3)
    table = summary.table()
    assert "| 0.5.11 | H100 | 2 | 1 | 50.0% |" in table
    assert "| 0.5.11 | B200 | 1 | 1 | 100.0% |" in table
    assert "| 0.5.11 | all | 3 | 2 | 66.7% |" in table
    report = markdown_report(summary)
    assert "### c2" in report and "needs extra_buffer" in report
    assert "wizard: verdict ok" in report and "### c0" not in report


def test_generator_is_reproducible_covers_the_grid_and_uses_real_flags(tmp_path: Path) -> None:
    models = write_model_folders(tmp_path)
    first = cases_mod.generate("0.5.23", 300, seed=7, models=models)
    assert first == cases_mod.generate("0.5.23", 300, seed=7, models=models)
    assert first != cases_mod.generate("0.5.23", 300, seed=8, models=models)
    cells = {c["origin"] for c in first}
    assert len(cells) == min(300, len(cases_mod.grid()))
    assert {c["gpu"] for c in first} == set(cases_mod.GPU_KINDS)
    known: set[str] = set()
    for version in venvs.supported_versions():
        table = json.loads((DATA / f"flags-{version}.json").read_text())
        known |= {o for a in table["actions"] for o in a["option_strings"]}
    for case in first:
        for token in case["argv"]:
            if token.startswith("--"):
                flag = token.split("=", 1)[0]
                # a real option, or an abbreviation argparse expands uniquely (--tp, --dp)
                assert flag in known or len([o for o in known if o.startswith(flag)]) == 1, (
                    case["id"], token)
        assert Path(case["argv"][1].split("=", 1)[-1]).parent == tmp_path or "=" in case["argv"][0]


def test_model_folders_hold_the_architectures_sglang_keys_on(tmp_path: Path) -> None:
    paths = write_model_folders(tmp_path)
    assert set(paths) == set(MODEL_CONFIGS)
    config = json.loads((paths["qwen35"] / "config.json").read_text())
    assert config["architectures"] == ["Qwen3_5ForConditionalGeneration"]
    assert config["text_config"]["mtp_num_hidden_layers"] == 1
    assert "linear_attention" in config["text_config"]["layer_types"]
    assert json.loads((paths["dsv3"] / "config.json").read_text())["num_nextn_predict_layers"] == 1
    before = (paths["llama"] / "config.json").stat().st_mtime_ns
    write_model_folders(tmp_path)  # idempotent: unchanged files are not rewritten
    assert (paths["llama"] / "config.json").stat().st_mtime_ns == before


def test_named_cases_and_fixture_use_placeholders(tmp_path: Path) -> None:
    models = write_model_folders(tmp_path)
    cases = named_cases("0.5.23", models)
    assert len(cases) == len(NAMED)
    by_name = {c["name"]: c for c in cases}
    assert "--mamba-radix-cache-strategy" in by_name["S13"]["argv"]
    assert by_name["I1-try1"]["gpu"] == "A6000" and by_name["I1-try1"]["gpus"] == 2
    results = {c["id"]: {"id": c["id"], "verdict": "ok", "effective": {
        "speculative_draft_model_path": str(models["llama"])}} for c in cases}
    text = fixture_text("0.5.23", results, models)
    assert str(tmp_path) not in text
    fixture = json.loads(text)
    assert fixture["cases"][0]["argv"][1].startswith("{")


def test_pins_come_from_the_wheel_metadata() -> None:
    metadata = "\n".join([
        "Name: sglang", "Requires-Dist: transformers==5.6.0", "Requires-Dist: pyzmq>=25.1.2",
        "Requires-Dist: openai==2.6.1", 'Requires-Dist: PyYAML==6.0.1; extra == "diffusion"',
        "Requires-Dist: compressed-tensors",
    ])
    pins = venvs.pins_from_metadata(metadata, ("transformers", "pyzmq", "PyYAML",
                                               "compressed_tensors", "dill"))
    assert pins == ["transformers==5.6.0", "pyzmq>=25.1.2", "PyYAML", "compressed-tensors",
                    "dill"]
    assert venvs.requires_dist(metadata + '\nRequires-Dist: numpy; python_version < "4"') == [
        "transformers==5.6.0", "pyzmq>=25.1.2", "openai==2.6.1", "compressed-tensors",
        'numpy; python_version < "4"']


def test_downloads_are_cached_inside_the_wizard_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    monkeypatch.delenv("PIP_CACHE_DIR", raising=False)
    assert venvs.download_cache_env() == {
        "UV_CACHE_DIR": str(tmp_path / "conformance" / "uv-cache"),
        "PIP_CACHE_DIR": str(tmp_path / "conformance" / "pip-cache")}
    monkeypatch.setenv("UV_CACHE_DIR", "/elsewhere")
    assert venvs.download_cache_env()["UV_CACHE_DIR"] == "/elsewhere"


def test_venv_location_stamp_and_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(tmp_path))
    assert venvs.venv_dir("0.5.11") == tmp_path / "conformance" / "venv-0.5.11"
    assert not venvs.is_ready("0.5.11")
    target = venvs.venv_dir("0.5.11")
    (target / "bin").mkdir(parents=True)
    (target / "bin" / "python").write_text("")
    (target / venvs.STAMP_NAME).write_text(json.dumps({"recipe_hash": "stale"}))
    assert not venvs.is_ready("0.5.11")  # a changed recipe means rebuild
    (target / venvs.STAMP_NAME).write_text(
        json.dumps({"recipe_hash": venvs.recipe_hash("0.5.11")}))
    assert not venvs.is_ready("0.5.11")  # the shared torch base it stands on is missing
    base = venvs.torch_base_dir()
    assert base.parent == tmp_path / "conformance" and venvs.base_hash() in base.name
    (base / "bin").mkdir(parents=True)
    (base / "bin" / "python").write_text("")
    (base / venvs.TORCH_CONSTRAINTS_NAME).write_text("sympy>=1.13.3\n")
    (base / venvs.STAMP_NAME).write_text(json.dumps({"base_hash": venvs.base_hash()}))
    assert venvs.is_base_ready() and venvs.is_ready("0.5.11")
    assert venvs.recipe("0.5.11")["torch_base"] == venvs.base_hash()
    assert venvs.recipe_hash("0.5.11") != venvs.recipe_hash("0.5.23")
    with pytest.raises(ValueError, match="is not an SGLang release"):
        venvs.recipe("0.5")
    with pytest.raises(ValueError, match="is not an SGLang release"):
        venvs.recipe("0.5.11; rm -rf /")


def test_saved_results_are_rescored_against_the_current_wizard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wizard.cli import main

    models = write_model_folders(tmp_path / "models")
    case = {"id": "0.5.11-x", "sglang_version": "0.5.11", "gpu": "H100", "gpus": 1, "env": {},
            "argv": ["--model-path", str(models["llama"]), "--speculative-algorithm", "EAGLE3",
                     "--speculative-draft-model-path", str(models["eagle3_draft"]),
                     "--speculative-num-draft-tokens", "16", "--speculative-eagle-topk", "1"]}
    # what real SGLang 0.5.11 does with incident 3's try 2 (see the named-case fixture)
    sglang = _sglang("error", id="0.5.11-x", stage="resolve", exception="AssertionError",
                     where="sglang/srt/server_args.py:3521", bare=True)
    saved = tmp_path / "results.jsonl"
    saved.write_text(json.dumps({"case": case, "sglang": sglang}) + "\n")
    report = tmp_path / "report.md"
    assert main(["conformance", "score", "--results", str(saved), "--report", str(report)]) == 0
    assert "| 0.5.11 | H100 | 1 | 1 | 100.0% |" in capsys.readouterr().out
    assert report.read_text().startswith("# Conformance (re-scored): results.jsonl")

    saved.write_text(json.dumps({"case": case}) + "\n")
    assert main(["conformance", "score", "--results", str(saved)]) == 2
    assert f"{saved}:1: not a saved result line" in capsys.readouterr().err


def test_a_venv_that_cannot_be_built_is_a_message_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from wizard.cli import main
    from wizard.conformance import cli as conformance_cli

    def fail(version: str, **_kwargs: Any) -> Path:
        raise venvs.VenvBuildError(f"command failed (1): pip install sglang=={version}")

    monkeypatch.setenv("SGLANG_WIZARD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(conformance_cli, "ensure_venv", fail)
    assert main(["conformance", "named", "--version", "0.5.11"]) == 1
    assert "pip install sglang==0.5.11" in capsys.readouterr().err
