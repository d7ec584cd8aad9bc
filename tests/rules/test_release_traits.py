"""Behaviour switches probed from each wheel's source change the verdict where SGLang's code does.

The expectations are what each release's own condition says (read in its source and confirmed on
its real SGLang by the conformance sweeps of 2026-12-02); the traits come from `add-release`.
"""

from __future__ import annotations

from typing import Any

import pytest

from wizard.api import check_case
from wizard.sglang.releases import load_release


def _report(models: dict[str, str], version: str, *argv: str, gpu: str = "H100") -> dict[str, Any]:
    return check_case({"id": 1, "argv": ["--model-path", models["llama"], *argv],
                       "sglang_version": version, "gpu": gpu, "gpus": 1, "env": {}})


def _errors(report: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in report["findings"] if f["severity"] == "error"]


TREE_PAGED = ("--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8",
              "--page-size", "16")


@pytest.mark.parametrize(
    ("version", "backend", "refused"),
    [
        ("0.5.5", "fa3", True),  # `attention_backend != "flashinfer"`
        ("0.5.5.post2", "fa3", True),
        ("0.5.5", "flashinfer", False),
        ("0.5.6", "fa3", False),  # `not in ["flashinfer", "fa3"]`
        ("0.5.11", "triton", True),
        ("0.5.13", "triton", False),  # `not in _PAGE_TREE_SPEC_BACKENDS` (+ triton)
        ("0.5.23", "triton", False),
    ],
)
def test_tree_with_pages_is_refused_outside_the_release_backends(
    models: dict[str, str], version: str, backend: str, refused: bool
) -> None:
    report = _report(models, version, *TREE_PAGED, "--speculative-draft-model-path",
                     models["llama"], "--attention-backend", backend)
    assert ("R-TOPK-PAGE" in _errors(report)) is refused
    assert backend in load_release(version).trait("topk_page_backends") or refused


@pytest.mark.parametrize(
    ("version", "backend"),
    [("0.5.5", "flashinfer"), ("0.5.6", "flashinfer"), ("0.5.6.post2", "trtllm_mha"),
     ("0.5.7", "trtllm_mha"), ("0.5.23", "trtllm_mha")],
)
def test_blackwell_default_backend_of_mha_models_without_speculation(
    models: dict[str, str], version: str, backend: str
) -> None:
    """0.5.5/0.5.6 never default to trtllm_mha; 0.5.6.post1/2 and 0.5.7+ do on B200."""
    assert _report(models, version, gpu="B200")["effective"]["attention_backend"] == backend


def test_0_5_6_post2_counts_an_unset_topk_as_one_then_refuses_the_auto_tree(
    models: dict[str, str],
) -> None:
    """`is_blackwell() and is_no_spec_infer_or_topk_one(self)`: trtllm_mha is picked before the
    auto-chosen topk 4, which trtllm_mha then refuses (0.5.7 waits for a typed topk)."""
    argv = ("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", models["llama"])
    assert _errors(_report(models, "0.5.6.post2", *argv, gpu="B200"))[0] == "R-TRTLLM-TOPK"
    assert _errors(_report(models, "0.5.7", *argv, gpu="B200")) == []


def test_transformers_5_release_refuses_an_mla_config_without_a_rope_factor(
    models: dict[str, str],
) -> None:
    dsv3 = {"id": 1, "argv": ["--model-path", models["dsv3"]], "gpu": "H100", "gpus": 1, "env": {}}
    first = check_case({**dsv3, "sglang_version": "0.5.6.post1"})
    errors = [f for f in first["findings"] if f["severity"] == "error"]
    assert errors and errors[0]["rule"] == "R-MLA-ROPE-FACTOR"
    assert errors[0]["sglang"]["exception"] == "KeyError"
    assert errors[0]["sglang"]["where"] == load_release("0.5.6.post1").site("R-MLA-ROPE-FACTOR").where
    for version in ("0.5.6", "0.5.6.post2", "0.5.10"):  # transformers 4, or `.get("factor")`
        report = check_case({**dsv3, "sglang_version": version})
        assert "R-MLA-ROPE-FACTOR" not in _errors(report)


@pytest.mark.parametrize(
    ("version", "model", "backend"),
    [
        ("0.5.6.post1", "qwen3next", "flashinfer"),  # not in is_fa3_default_architecture's set
        ("0.5.7", "qwen3next", "flashinfer"),
        ("0.5.7", "llama", "fa3"),  # in it
        ("0.5.11", "qwen3next", "fa3"),  # 0.5.9+ no longer consult the set
    ],
)
def test_hopper_fa3_default_follows_the_release_architecture_set(
    models: dict[str, str], version: str, model: str, backend: str
) -> None:
    """NGRAM with page 64 on H100: observed on 0.5.6.post1's real SGLang (seed 73120262 case
    01828: flashinfer, so its topk/page ValueError does not fire) and read from each release."""
    report = check_case({"id": 1, "argv": ["--model-path", models[model], "--speculative-algorithm",
                                           "NGRAM", "--speculative-num-steps", "3",
                                           "--page-size", "64", "--tp", "4"],
                         "sglang_version": version, "gpu": "H100", "gpus": 4, "env": {}})
    assert report["effective"]["attention_backend"] == backend
    if backend == "flashinfer":  # the only backend 0.5.6/0.5.7 let a paged tree through
        assert "R-NGRAM-PAGE" not in _errors(report)
    else:
        assert _errors(report)


@pytest.mark.parametrize(("version", "refused"), [("0.5.5", True), ("0.5.10", True),
                                                  ("0.5.11", False)])
def test_pipeline_parallelism_with_mixed_chunk(
    models: dict[str, str], version: str, refused: bool
) -> None:
    """0.5.5-0.5.10 assert `not enable_mixed_chunk` with pp > 1 (the wording that names it;
    seen on real 0.5.5 in the seed-48120262 sweep, case 01767); 0.5.11 dropped it."""
    report = check_case({"id": 1, "argv": ["--model-path", models["llama"], "--tp", "2", "--pp-size",
                                           "2", "--enable-mixed-chunk"],
                         "sglang_version": version, "gpu": "H100", "gpus": 4, "env": {}})
    assert ("R-PP-SPEC" in _errors(report)) is refused


@pytest.mark.parametrize(("version", "refused"), [("0.5.7", False), ("0.5.8", True)])
def test_spec_v2_topk_check_covers_standalone_only_where_its_if_lists_it(
    models: dict[str, str], version: str, refused: bool
) -> None:
    """0.5.7's spec-v2 branch is `speculative_algorithm in ["EAGLE", "EAGLE3"]` (real 0.5.7
    started STANDALONE with topk 4 under SGLANG_ENABLE_SPEC_V2=1: seed 48120262 case 00180)."""
    report = check_case({"id": 1, "argv": ["--model-path", models["llama"], "--speculative-algorithm",
                                           "STANDALONE", "--speculative-draft-model-path",
                                           models["llama"], "--speculative-num-steps", "3",
                                           "--speculative-eagle-topk", "4",
                                           "--speculative-num-draft-tokens", "8"],
                         "sglang_version": version, "gpu": "A6000", "gpus": 1,
                         "env": {"SGLANG_ENABLE_SPEC_V2": "1"}})
    assert ("R-SPEC-V2-TOPK" in _errors(report)) is refused


@pytest.mark.parametrize(("version", "algorithm", "switch", "back_on"), [
    ("0.5.4", "EAGLE", "--enable-beta-spec", True),  # the flag selects spec v2 there
    ("0.5.4.post1", "EAGLE", "env", True),
    ("0.5.5", "EAGLE3", "env", False),  # `== "EAGLE"` only
    ("0.5.7", "EAGLE3", "env", True),  # `in ["EAGLE", "EAGLE3"]`
    ("0.5.7", "STANDALONE", "env", False),
    ("0.5.9", "STANDALONE", "env", True),
    ("0.5.11", "EAGLE", "env", False),  # the typed flag is kept: spec v1
])
def test_spec_v2_turns_a_typed_overlap_switch_back_off_where_its_branch_does(
    models: dict[str, str], version: str, algorithm: str, switch: str, back_on: bool
) -> None:
    """0.5.3.post2-0.5.10 set `disable_overlap_schedule = False` for the algorithms of their
    spec v2 branch whatever was typed (real 0.5.9 started a typed --disable-overlap-schedule
    with overlap on: seed 43041 case 00019); the trait `spec_v2_overlap_algorithms` is that
    branch's list."""
    draft = models["eagle3" if algorithm == "EAGLE3" else "llama"]
    argv = ["--model-path", models["llama"], "--speculative-algorithm", algorithm,
            "--speculative-draft-model-path", draft, "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
            "--disable-overlap-schedule", *([switch] if switch.startswith("--") else [])]
    env = {"SGLANG_ENABLE_SPEC_V2": "1"} if switch == "env" else {}
    report = check_case({"id": 1, "argv": argv, "sglang_version": version, "gpu": "H100",
                         "gpus": 1, "env": env})
    fired = [f for f in report["findings"] if f["rule"] == "R-SPEC-V2-OVERLAP-ON"]
    assert bool(fired) is back_on
    assert report["effective"]["disable_overlap_schedule"] is (not back_on)
