"""Models by Hub id against the stand-in Hub: same facts as the folder, errors that say what to do."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import families
import pytest
from hub_repos import QWEN36_COMMIT, files_of
from stand_in_hub import StandInHub

from wizard import api
from wizard.api import check_argv
from wizard.cli import main
from wizard.hub import HubError, is_repo_id, load_hub_facts
from wizard.rules.engine import first_sglang_error

QWEN = "Qwen/Qwen3.6-27B"
GATED = "meta-llama/Llama-3.1-8B-Instruct"


def _inspect_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["inspect", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _fresh_process() -> None:
    """Forget what this process read (as a new `sglang-wizard` run would)."""
    api._HUB_FACTS.clear()
    api._HUB_MISSES.clear()


def test_repo_id_is_what_sglang_downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert is_repo_id("Qwen/Qwen3.6-27B")
    assert not is_repo_id("/models/Qwen3.6-27B")
    assert not is_repo_id("./Qwen/Qwen3.6-27B")
    assert not is_repo_id("Qwen3.6-27B")
    (tmp_path / "Qwen" / "Qwen3.6-27B").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert not is_repo_id("Qwen/Qwen3.6-27B")  # an existing local folder wins, as in SGLang


def test_inspect_repo_id_gives_the_folder_facts(
    hub: StandInHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = families.qwen36_27b().write(tmp_path / "local")
    local = _inspect_json(capsys, str(folder))["model"]
    remote = _inspect_json(capsys, QWEN)["model"]
    for key in ("architecture", "mtp_layers", "hybrid", "moe", "quantization", "attention",
                "num_layers", "hidden_size", "vocab_size", "context_length", "family"):
        assert remote[key] == local[key], key
    assert remote["hybrid"] == {"linear": 48, "full": 16, "full_attention_interval": 4}
    assert remote["origin"] == "hub" and local["origin"] == "local"
    assert remote["revision"] == QWEN36_COMMIT
    assert remote["source"].startswith(f"{QWEN} @ {QWEN36_COMMIT[:12]}")
    assert remote["params_source"] == "safetensors"
    assert abs(remote["params_total"] / 27e9 - 1) < 0.03
    assert remote["generation_defaults"] == {"temperature": 0.6, "top_p": 0.95}
    assert hub.weight_requests() == []
    paths = {p.split("?")[0] for _, p in hub.requests}
    assert f"/{QWEN}/resolve/{QWEN36_COMMIT}/config.json" in paths
    assert f"/{QWEN}/resolve/{QWEN36_COMMIT}/model.safetensors.index.json" in paths


def test_text_output_says_where_the_facts_came_from(
    hub: StandInHub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", QWEN]) == 0
    out = capsys.readouterr().out
    assert f"Model: {QWEN} @ {QWEN36_COMMIT[:12]}" in out and "(Hugging Face Hub)" in out
    assert "exact: safetensors metadata" in out


def test_cached_read_needs_one_request_and_offline_none(
    hub: StandInHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load_hub_facts(QWEN)
    cold = len(hub.requests)
    assert cold >= 3  # model info + HEAD/GET per file
    hub.clear()
    _fresh_process()
    again = load_hub_facts(QWEN)
    assert [m for m, _ in hub.requests] == ["GET"]  # the model info only: files by commit
    assert again.params_total == first.params_total
    hub.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = load_hub_facts(QWEN)
    assert hub.requests == []
    assert offline.params_total == first.params_total
    assert offline.params_source == "safetensors"  # the Hub's counts were cached too
    assert offline.source.endswith("(HF cache)") and offline.revision == QWEN36_COMMIT


def test_offline_without_cache_says_how_to_fill_it(
    hub: StandInHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["inspect", QWEN]) == 2
    err = capsys.readouterr().err
    assert "HF_HUB_OFFLINE=1" in err and f"hf download {QWEN}" in err
    assert "Traceback" not in err
    assert hub.requests == []


def test_gated_repo_names_the_token(
    hub: StandInHub, hf_env: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["inspect", GATED]) == 2
    err = capsys.readouterr().err
    assert "gated" in err and "HF_TOKEN" in err and "hf auth login" in err
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_secret")
    assert main(["inspect", GATED]) == 2
    captured = capsys.readouterr()
    assert "(HF_TOKEN) has no access" in captured.err
    assert "hf_wrong_secret" not in captured.err + captured.out
    monkeypatch.delenv("HF_TOKEN")
    hf_env.mkdir(parents=True, exist_ok=True)
    (hf_env / "token").write_text("hf_good\n")  # what `hf auth login` stores
    facts = _inspect_json(capsys, GATED)["model"]
    assert facts["architecture"] == "LlamaForCausalLM"
    assert hub.weight_requests() == []
    written = [p for p in hf_env.parent.rglob("*") if p.is_file() and p != hf_env / "token"]
    assert written and not [p for p in written if b"hf_" in p.read_bytes()]  # no token stored


def test_unknown_repo_and_revision(hub: StandInHub, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "Qwen/No-Such-Model"]) == 2
    err = capsys.readouterr().err
    assert "no model repository Qwen/No-Such-Model" in err and "Traceback" not in err
    assert main(["inspect", QWEN, "--revision", "v9"]) == 2
    assert "revision 'v9' not found" in capsys.readouterr().err


def test_revision_by_commit(hub: StandInHub, capsys: pytest.CaptureFixture[str]) -> None:
    facts = _inspect_json(capsys, QWEN, "--revision", QWEN36_COMMIT)["model"]
    assert facts["revision"] == QWEN36_COMMIT
    assert all(QWEN36_COMMIT in p for _, p in hub.requests if "/resolve/" in p)


def test_unreachable_endpoint_is_a_clear_error(
    hf_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    assert main(["inspect", QWEN]) == 2
    err = capsys.readouterr().err
    assert "cannot reach http://127.0.0.1:" in err and "hf download" in err
    assert "Traceback" not in err


INCIDENT1 = (
    "--speculative-algorithm", "NEXTN", "--speculative-num-draft-tokens", "1",
    "--tensor-parallel-size", "2",
)


def test_incident1_repo_id_gives_the_local_configs_first_error(
    hub: StandInHub, tmp_path: Path
) -> None:
    folder = families.qwen36_27b().write(tmp_path / "Qwen3.6-27B")
    local = check_argv(["--model-path", str(folder), *INCIDENT1], sglang_version="0.5.11",
                       gpu="A6000", gpus=2)
    remote = check_argv(["--model-path", QWEN, *INCIDENT1], sglang_version="0.5.11",
                        gpu="A6000", gpus=2)
    first_local, first_remote = first_sglang_error(local), first_sglang_error(remote)
    assert first_local is not None and first_remote is not None
    assert first_remote.rule == first_local.rule == "R-MAMBA-NOBUF-SPEC"
    assert first_remote.sglang is not None
    assert first_remote.sglang.where == "sglang/srt/server_args.py:2453"
    assert remote.model_source is not None and remote.model_source.startswith(QWEN + " @ ")
    assert "R-FACTS-MISSING" not in {f.rule for f in remote.findings}


def test_check_cli_json_names_the_source(
    hub: StandInHub, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--json", "--gpu", "A6000", "--gpus", "2", "--",
                 "--model-path", QWEN, *INCIDENT1])
    assert code == 1
    report = json.loads(capsys.readouterr().out)
    assert report["model_source"].startswith(f"{QWEN} @ {QWEN36_COMMIT[:12]}")
    assert report["first_sglang_error"] == "R-MAMBA-NOBUF-SPEC"


def test_check_without_facts_says_what_it_assumed(
    hub: StandInHub, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--gpu", "A6000", "--gpus", "2", "--", "--model-path", GATED,
                 "--tp", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert "model facts: not read" in out
    assert "not computed: the memory plan" in out
    assert "HF_TOKEN" in out and "Assumed instead: a generic model" in out


def test_check_profile_with_revision_reads_that_revision(
    hub: StandInHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text(
        'schema_version = 1\nsglang_version = "0.5.11"\n[model]\npath = "Qwen/Qwen3.6-27B"\nrevision = "v9"\n'
        '[gpu]\nkind = "RTX A6000"\ncount = 2\n'
    )
    assert main(["check", str(profile)]) == 0
    out = capsys.readouterr().out
    assert "revision 'v9' not found" in out


def test_nvfp4_moe_counts_unpacked_and_memory_plan(
    hub: StandInHub, capsys: pytest.CaptureFixture[str]
) -> None:
    fam = families.qwen35_397b_nvfp4()
    code = main(["inspect", "nvidia/Qwen3.5-397B-A17B-NVFP4", "--json", "--gpu", "B200",
                 "--gpus", "4", "--tp", "4"])
    data = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    model = data["model"]
    assert model["quantization"] == "modelopt_fp4" and model["mtp_layers"] == 1
    assert model["params_source"] == "safetensors"
    assert abs(model["params_total"] / fam.params_total - 1) < 0.03
    counts = hub.repos["nvidia/Qwen3.5-397B-A17B-NVFP4"].safetensors
    assert counts is not None
    stored = counts["U8"] + counts["F8_E4M3"] + 2 * counts["BF16"] + 4 * counts["F32"]
    assert model["checkpoint_bytes"] == stored  # the weights the plan sizes: the stored bytes
    assert data["memory"] is not None and data["memory"]["weights_source"] == "index"
    assert hub.weight_requests() == []


def test_hub_error_is_a_model_read_error(hub: StandInHub) -> None:
    with pytest.raises(HubError) as info:
        load_hub_facts(GATED)
    assert info.value.kind == "gated"
    assert str(info.value).startswith(f"{GATED} is a gated repository")


def test_files_are_exactly_the_folder_files(hub: StandInHub) -> None:
    """What the Hub read hands to the facts is byte-for-byte the repo's small files."""
    from wizard.hub import fetch_model_files

    got = fetch_model_files(QWEN)
    assert got.files["config.json"] == files_of(families.qwen36_27b())["config.json"]
    assert set(got.files) == {"config.json", "model.safetensors.index.json",
                              "generation_config.json"}


def test_draft_by_hub_id_is_checked_against_the_target(hub: StandInHub) -> None:
    argv = ["--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", "other/Qwen3-8B-eagle3-wide"]
    report = check_argv(argv, sglang_version="0.5.11", gpu="H100")
    assert "R-DRAFT-HIDDEN-SIZE" in {f.rule for f in report.findings}
    argv[-1] = "AngelSlim/Qwen3-8B_eagle3"
    fitting = check_argv(argv, sglang_version="0.5.11", gpu="H100")
    assert not {"R-DRAFT-HIDDEN-SIZE", "R-DRAFT-VOCAB"} & {f.rule for f in fitting.findings}
    argv[3] = "EAGLE"  # an EAGLE-3 head under EAGLE: starts, accepts nothing
    mismatched = check_argv(argv, sglang_version="0.5.11", gpu="H100")
    assert "R-EAGLE3-DRAFT-WITH-EAGLE" in {f.rule for f in mismatched.findings}
    assert hub.weight_requests() == []


def test_import_keeps_the_hub_id_and_revision_for_the_check(
    hub: StandInHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "imported.toml"
    command = (f"python -m sglang.launch_server --model-path {QWEN} --revision {QWEN36_COMMIT} "
               "--tp 2 --speculative-algorithm NEXTN --speculative-num-draft-tokens 1")
    assert main(["import", "-o", str(out), "--", command]) == 0
    text = out.read_text()
    assert f'path = "{QWEN}"' in text and f'revision = "{QWEN36_COMMIT}"' in text
    capsys.readouterr()
    assert main(["check", "--json", "--gpu", "A6000", "--gpus", "2", str(out)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["model_source"].startswith(f"{QWEN} @ {QWEN36_COMMIT[:12]}")
    assert report["first_sglang_error"] == "R-MAMBA-NOBUF-SPEC"


def test_inspect_profile_and_draft_by_hub_id(
    hub: StandInHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text(
        'schema_version = 1\nsglang_version = "0.5.11"\n[model]\npath = "Qwen/Qwen3-8B"\n'
        '[speculative]\nalgorithm = "EAGLE3"\n'
        'draft_model_path = "other/Qwen3-8B-eagle3-wide"\n'
    )
    data = _inspect_json(capsys, "--profile", str(profile))
    assert data["model"]["source"].startswith("Qwen/Qwen3-8B @ ")
    assert data["draft"]["source"].startswith("other/Qwen3-8B-eagle3-wide @ ")
    assert [c["check_id"] for c in data["draft_checks"]] == ["R-DRAFT-HIDDEN-SIZE"]


def test_the_suite_never_reaches_the_real_hub() -> None:
    """Outside the stand-in fixtures a Hub id meets the suite's refused endpoint (tests/conftest.py)."""
    _fresh_process()
    report = check_argv(["--model-path", "Qwen/Qwen3.6-27B"], sglang_version="0.5.11")
    missing = next(f for f in report.findings if f.rule == "R-FACTS-MISSING")
    assert "cannot reach http://127.0.0.1:9" in missing.message
    _fresh_process()


def test_revision_cannot_leave_the_cache(hub: StandInHub, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", QWEN, "--revision", "../../etc"]) == 2
    assert "revision '../../etc' is not a branch, tag or commit" in capsys.readouterr().err
    assert hub.requests == []
