"""`sglang-wizard inspect`: text, JSON, profiles and input errors."""

from __future__ import annotations

import json
from pathlib import Path

import families as fam
import pytest

from wizard.cli import main

REPO = Path(__file__).resolve().parents[2]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["inspect", *argv])
    except SystemExit as exc:  # argparse's own errors (e.g. an unknown --gpu kind) exit 2
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_text_facts_without_plan(tmp_path: Path, capsys) -> None:
    folder = fam.qwen36_27b().write(tmp_path / "q")
    code, out, _ = _run(capsys, str(folder))
    assert code == 0
    assert "Qwen3_5ForConditionalGeneration" in out
    assert "hybrid: 48 linear-attention + 16 full" in out
    assert "MTP layers     1" in out
    assert "yes NEXTN" in out
    assert "Memory plan" not in out


def test_json_keys_documented(tmp_path: Path, capsys) -> None:
    folder = fam.qwen35_397b_nvfp4().write(tmp_path / "q")
    code, out, _ = _run(
        capsys, str(folder), "--json", "--gpu", "RTX PRO 6000", "--gpus", "8", "--tp", "8"
    )
    assert code == 0
    data = json.loads(out)
    model = data["model"]
    assert model["architecture"] == "Qwen3_5MoeForConditionalGeneration"
    assert model["mtp_layers"] == 1
    assert model["hybrid"]["linear"] == 45 and model["hybrid"]["full"] == 15
    assert model["moe"]["experts"] == 512 and model["moe"]["active"] == 10
    assert model["attention"] == "GQA"
    assert model["quantization"] == "modelopt_fp4"
    assert model["params_total"] > 390e9 and model["params_active"] < 20e9
    assert data["memory"]["verdict"] == "fits"
    assert data["memory"]["tp"] == 8
    docs = (REPO / "docs" / "inspect.md").read_text(encoding="utf-8")
    for key in list(model) + list(data["memory"]) + list(data):
        assert f"`{key}`" in docs, f"JSON key {key!r} is not documented in docs/inspect.md"


def test_profile_supplies_gpus_and_speculative_flags(tmp_path: Path, capsys) -> None:
    folder = fam.qwen36_27b().write(tmp_path / "q")
    profile = REPO / "profiles" / "qwen3.6-27b-mtp-a6000.toml"
    code, out, _ = _run(capsys, str(folder), "--profile", str(profile), "--json")
    assert code == 0
    plan = json.loads(out)["memory"]
    assert plan["gpu"] == "RTX A6000" and plan["gpus"] == 2 and plan["tp"] == 2
    assert plan["draft_kind"] is not None  # NEXTN: the MTP layer is planned
    # num_steps 1 + topk 1: SGLang drafts 2 tokens; 48 requests x 2 x 73.4 MiB of state.
    assert plan["spec_mamba_buffer_gib"] == pytest.approx(48 * 2 * 73.41 / 1024, rel=0.01)


def test_multinode_profile_counts_gpus_per_node(tmp_path: Path, capsys) -> None:
    """The shipped 2x 8 H100 profile (tp 16, nnodes 2, gpu.count 8 per node) is planned over 16
    GPUs with the NCCL memory of a group spanning nodes; --nnodes does the same by hand."""
    folder = fam.deepseek_v3().write(tmp_path / "d")
    profile = REPO / "profiles" / "deepseek-v3-fp8-2x8-h100.toml"
    code, out, _ = _run(capsys, str(folder), "--profile", str(profile), "--json")
    assert code == 0
    plan = json.loads(out)["memory"]
    assert plan["gpus"] == 16 and plan["tp"] == 16
    assert plan["context_reserve_gib"] == pytest.approx(1.0 + 1.14, abs=0.01)
    code, by_hand, _ = _run(capsys, str(folder), "--gpu", "H100", "--gpus", "8", "--nnodes", "2",
                            "--tp", "16", "--json")
    assert code == 0 and json.loads(by_hand)["memory"]["free_before_load_gib"] == plan[
        "free_before_load_gib"]
    code, _, err = _run(capsys, str(folder), "--gpu", "H100", "--gpus", "8", "--tp", "16")
    assert code == 2 and "--nnodes N" in err
    code, _, err = _run(capsys, str(folder), "--gpu", "H100", "--nnodes", "0", "--tp", "16")
    assert code == 2 and "--nnodes must be at least 1" in err


def test_will_not_fit_exits_1(tmp_path: Path, capsys) -> None:
    folder = fam.llama31_70b().write(tmp_path / "l")
    code, out, _ = _run(capsys, str(folder), "--gpu", "A6000", "--gpus", "1")
    assert code == 1
    assert "WILL NOT FIT" in out and "weights need" in out


def test_draft_checks_printed(tmp_path: Path, capsys) -> None:
    target = fam.kimi_k25_int4().write(tmp_path / "k")
    draft = fam.kimi_k25_eagle3_draft().write(tmp_path / "d")
    code, out, _ = _run(
        capsys, str(target), "--draft", str(draft), "--algorithm", "EAGLE", "--json"
    )
    assert code == 0
    checks = json.loads(out)["draft_checks"]
    assert [c["check_id"] for c in checks] == ["R-EAGLE3-DRAFT-WITH-EAGLE"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{missing}"], "does not exist"),
        (["{model}", "--gpu", "NoSuchCard"], "unknown GPU kind 'NoSuchCard'"),
        (["{model}", "--gpu", "H100", "--gpus", "2", "--tp", "4"], "--tp 4 needs 4 GPUs"),
        (["{model}", "--tp", "2"], "--tp needs --gpu"),
        (["{model}", "--profile", "{missing}"], "file not found"),
        ([], "give MODEL (a folder or Hub id ORG/NAME"),
        (["{broken}"], "config.json: is not valid JSON"),
    ],
)
def test_input_errors_exit_2(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    model = fam.llama31_8b().write(tmp_path / "m")
    broken = tmp_path / "b"
    broken.mkdir()
    (broken / "config.json").write_text("{", encoding="utf-8")
    names = {"model": str(model), "missing": str(tmp_path / "nope"), "broken": str(broken)}
    code, _, err = _run(capsys, *[a.format(**names) for a in argv])
    assert code == 2
    assert message in err


def test_launch_flags_after_dashes_give_the_plan_check_makes(tmp_path: Path, capsys) -> None:
    folder = fam.qwen3_32b().write(tmp_path / "q")
    code, out, _ = _run(
        capsys, str(folder), "--json", "--gpu", "H100", "--gpus", "16",
        "--", "--tp", "4", "--pp-size", "4", "--mem-fraction-static", "0.85",
    )
    assert code == 0
    data = json.loads(out)
    plan = data["memory"]
    assert (plan["tp"], plan["pp"], plan["layers_per_gpu"], plan["gpus"]) == (4, 4, 16, 16)
    assert plan["mem_fraction_static"] == 0.85 and plan["mem_fraction_source"] == "given"
    assert data["launch_errors"] == []
    # `check --json` on the same flags carries the same plan.
    assert main([
        "check", "--json", "--gpu", "H100", "--gpus", "16", "--",
        "--model-path", str(folder), "--tp", "4", "--pp-size", "4", "--mem-fraction-static", "0.85",
    ]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert checked["memory_plan"] == plan


def test_launch_flags_errors(tmp_path: Path, capsys) -> None:
    folder = fam.qwen3_32b().write(tmp_path / "q")
    code, _, err = _run(capsys, str(folder), "--gpu", "H100", "--tp", "2", "--", "--tp", "2")
    assert code == 2 and "--tp and SGLang flags after `--`" in err
    code, _, err = _run(capsys, str(folder), "--gpu", "H100", "--", "--tp", "2", "--bogus-flag")
    assert code == 2 and "SGLang's parser refuses" in err and "--bogus-flag" in err
    code, _, err = _run(capsys, str(folder), "--", "--tp", "2")
    assert code == 2 and "needs --gpu" in err
    code, _, err = _run(capsys, str(folder), "--gpu", "H100", "--", "--model-path", "/x")
    assert code == 2 and "MODEL_DIR" in err
    # Anything else argparse does not know still fails as before.
    with pytest.raises(SystemExit):
        main(["inspect", str(folder), "--bogus"])


@pytest.mark.parametrize("gpu", ["MI300X", "MI355X", "custom:arch=gfx942,mem=192GB", "H100"])
def test_inspect_plans_the_pool_check_plans(tmp_path: Path, capsys, gpu: str) -> None:
    """On AMD `inspect --gpu MI300X` planned without the aiter backend SGLang picks by default, so
    its static pool (0.801) was bigger than `check`'s for the same launch (0.681: aiter scales it
    above 8K context)."""
    folder = fam.qwen36_27b().write(tmp_path / "q")
    code, out, _ = _run(capsys, str(folder), "--json", "--gpu", gpu, "--gpus", "2", "--tp", "2")
    assert code in (0, 1)
    inspected = json.loads(out)["memory"]
    assert main(["check", "--json", "--gpu", gpu, "--gpus", "2", "--", "--model-path", str(folder),
                 "--tp", "2"]) in (0, 1)
    checked = json.loads(capsys.readouterr().out)["memory_plan"]
    for key in ("mem_fraction_static", "static_pool_gib", "kv_tokens"):
        assert inspected[key] == checked[key], key


def test_a_missing_relative_folder_is_named_clearly(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new profile's `./model` was reported as "model folder model does not exist"."""
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(capsys, "./model")
    assert code == 2
    assert f"model folder 'model' ({tmp_path / 'model'}) does not exist" in err


@pytest.mark.parametrize("model", ["llama", "deepseek"])
def test_inspect_plans_the_pool_check_plans_on_releases_whose_runner_picks_aiter(
        tmp_path: Path, capsys, model: str) -> None:
    """0.5.4 picks the ROCm backend (aiter; MLA only with 16 or 128 KV heads per rank) in its
    model runner and scales the pool there: `check` leaves the effective backend None, and both
    plans take the runner's choice."""
    family = fam.llama31_8b() if model == "llama" else fam.deepseek_v3()
    folder = family.write(tmp_path / model)
    code, out, _ = _run(capsys, str(folder), "--json", "--gpu", "MI355X", "--gpus", "8", "--tp",
                        "8", "--sglang-version", "0.5.4")
    assert code in (0, 1)
    inspected = json.loads(out)["memory"]
    assert main(["check", "--json", "--gpu", "MI355X", "--gpus", "8", "--sglang-version",
                 "0.5.4", "--", "--model-path", str(folder), "--tp", "8"]) in (0, 1)
    checked = json.loads(capsys.readouterr().out)["memory_plan"]
    for key in ("mem_fraction_static", "static_pool_gib", "kv_tokens"):
        assert inspected[key] == checked[key], key
    assert any("aiter" in a for a in checked["assumptions"])
