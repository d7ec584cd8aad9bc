"""Issue 22: one memory verdict everywhere, no plan without a GPU kind, fixes that converge,
and the flags that move memory (`--cpu-offload-gb`, `--max-total-tokens`)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import families as fam
import memory_logs
import pytest

from wizard.api import apply_fix, check_profile
from wizard.cli import main
from wizard.gpus import lookup
from wizard.memory import GIB, MemoryInputs, plan_memory
from wizard.model_info import load_model_facts
from wizard.profile_schema import Profile
from wizard.verdict import verdict_of

MEMORY_RULES = ("R-MEMORY-PLAN", "R-MEMORY-NOFIT")


def _folder(builder, tmp_path: Path) -> str:
    family = builder()
    return str(family.write(tmp_path / family.name))


def _profile(model_path: str, gpu: str | None, count: int | None = None, **sections) -> Profile:
    data: dict = {"sglang_version": "0.5.11", "model": {"path": model_path}}
    if gpu is not None:
        data["gpu"] = {"kind": gpu, **({"count": count} if count else {})}
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    return Profile.model_validate(data)


# --- one verdict ---------------------------------------------------------------------------------


def test_a_plan_that_will_not_fit_is_one_error_everywhere(tmp_path: Path, capsys) -> None:
    """Llama 3.1 70B bf16 on one 48 GB card: check, check --json, the header and inspect agree."""
    model = _folder(fam.llama31_70b, tmp_path)
    report = check_profile(_profile(model, "RTX A6000", 1))
    nofit = [f for f in report.findings if f.rule == "R-MEMORY-NOFIT"]
    assert len(nofit) == 1 and nofit[0].severity == "error"
    assert not any(f.rule == "R-MEMORY-PLAN" for f in report.findings)
    assert report.verdict == "error"
    assert verdict_of(report).headline == "fails at run time"
    # Said in words, not as a negative size.
    assert "GiB more than the static pool" in nofit[0].message and "+ -" not in nofit[0].message

    argv = ["--model-path", model]
    assert main(["check", "--gpu", "RTX A6000", "--gpus", "1", "--json", "--", *argv]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "error" and out["sglang_verdict"] == "ok"
    assert out["memory_plan"]["verdict"] == "will_not_fit"

    assert main(["check", "--gpu", "RTX A6000", "--gpus", "1", "--", *argv]) == 1
    assert "FAIL at run time" in capsys.readouterr().out

    assert main(["inspect", model, "--gpu", "RTX A6000", "--gpus", "1"]) == 1
    capsys.readouterr()


def test_a_tight_plan_is_a_warning_everywhere(tmp_path: Path, capsys) -> None:
    """Qwen3.6-27B with NEXTN on 2x A6000 (incident 1's launch that started): tight, exit 0."""
    model = _folder(fam.qwen36_27b, tmp_path)
    profile = _profile(model, "RTX A6000", 2, parallel={"tp": 2},
                       speculative={"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1},
                       hybrid={"cache_strategy": "extra_buffer"})
    report = check_profile(profile)
    assert [f.severity for f in report.findings if f.rule in MEMORY_RULES] == ["warning"]
    assert report.verdict == "ok"
    assert verdict_of(report).kind == "warnings"


def test_no_gpu_kind_no_plan_and_no_memory_finding(tmp_path: Path, capsys) -> None:
    model = _folder(fam.llama31_70b, tmp_path)
    report = check_profile(_profile(model, None))
    assert report.memory_plan is None
    assert not any(f.rule in MEMORY_RULES for f in report.findings)
    assert main(["check", "--json", "--", "--model-path", model]) == 0
    assert json.loads(capsys.readouterr().out)["memory_plan"] is None


# --- fixes that converge -------------------------------------------------------------------------

BUILDERS = (fam.llama31_8b, fam.llama31_70b, fam.qwen3_32b, fam.qwen3_next_80b, fam.qwen36_27b,
            fam.glm45, fam.gpt_oss_120b)
GPUS = ("RTX A6000", "L40S", "H100", "RTX 4090", "L4", "A100-40GB")


def test_every_memory_fix_removes_its_finding(tmp_path: Path) -> None:
    """Seeded sweep over models, GPUs, tp, context length and request counts: applying any fix of
    a memory finding removes that finding, and no rule asks for more requests at the same time."""
    seed = int(os.environ.get("SGLANG_WIZARD_FUZZ_SEED", random.randrange(1 << 30)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    folders = {b.__name__: _folder(b, tmp_path) for b in BUILDERS}
    findings_seen = fixes_tried = 0
    for _ in range(int(os.environ.get("SGLANG_WIZARD_FUZZ_CASES", "60"))):
        model = folders[rng.choice(BUILDERS).__name__]
        tp = rng.choice((1, 2, 4))
        sections: dict = {"parallel": {"tp": tp}}
        if rng.random() < 0.5:
            sections["model"] = {"context_length": rng.choice((4096, 32768, 131072))}
        if rng.random() < 0.4:
            sections["memory"] = {"max_running_requests": rng.choice((8, 64, 256))}
        if rng.random() < 0.3:
            sections.setdefault("memory", {})["mem_fraction_static"] = rng.choice((0.5, 0.7, 0.9))
        try:
            profile = _profile(model, rng.choice(GPUS), tp * rng.choice((1, 2)), **sections)
            report = check_profile(profile)
        except ValueError:
            continue
        for finding in report.findings:
            if finding.rule not in MEMORY_RULES:
                continue
            findings_seen += 1
            raises = [f for f in report.findings if f.rule == "R-MAXREQ-48" and f.fixes]
            lowers = any("memory.max_running_requests" in fx.edits for fx in finding.fixes)
            assert not (raises and lowers), (seed, profile)
            for fix in finding.fixes:
                fixes_tried += 1
                after = check_profile(apply_fix(profile, fix))
                assert not any(f.rule == finding.rule for f in after.findings), (
                    seed, finding.message, fix.label, [f.message for f in after.findings
                                                       if f.rule in MEMORY_RULES])
    print(f"memory findings {findings_seen}, fixes tried {fixes_tried}")
    assert findings_seen > 5 and fixes_tried > 5, (seed, findings_seen, fixes_tried)


def test_the_context_length_is_named_first_when_it_is_the_cause(tmp_path: Path) -> None:
    """Incident 1 with --max-running-requests 8: the KV pool is below one 262k request; the first
    fix is the context length (not fewer requests again and again), and applying it fits."""
    model = _folder(fam.qwen36_27b, tmp_path)
    profile = _profile(model, "RTX A6000", 2, parallel={"tp": 2},
                       speculative={"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1},
                       hybrid={"cache_strategy": "extra_buffer"},
                       memory={"max_running_requests": 8})
    finding = next(f for f in check_profile(profile).findings if f.rule == "R-MEMORY-PLAN")
    assert "context length" in finding.message
    first = finding.fixes[0]
    assert "model.context_length" in first.edits
    fixed = check_profile(apply_fix(profile, first))
    assert not any(f.rule in MEMORY_RULES for f in fixed.findings)


# --- flags that move memory ----------------------------------------------------------------------


def _qwen35_397b_fp8(tmp_path: Path) -> str:
    config = memory_logs._qwen35_397b_fp8()
    return str(fam.Family("Qwen3.5-397B-A17B-FP8", config, 397e9, 17e9).write(tmp_path / "q"))


def test_cpu_offload_moves_the_decoder_layers_off_the_gpu(tmp_path: Path) -> None:
    """Qwen3.5-397B-A17B-FP8 on 2x RTX 4090 with --cpu-offload-gb 400 (issue 22's real log,
    github.com/kvcache-ai/ktransformers/issues/1870, a row of tests/model/memory_logs.py: 3.76 GiB
    loaded per GPU, 580,364 KV tokens). Without offload the plan counts ~186 GiB and no KV."""
    target = load_model_facts(Path(_qwen35_397b_fp8(tmp_path)))
    gpu = lookup("RTX 4090")
    logged = dict(sglang_version="0.5.9", mem_fraction=0.85, context_length=8192,
                  max_running_requests=1, chunked_prefill_size=2048, disable_cuda_graph=True)
    plain = plan_memory(MemoryInputs(target, gpu, 2, 2, **logged))  # type: ignore[arg-type]
    assert plain.verdict == "will_not_fit" and plain.weights_gib > 150 and plain.kv_tokens == 0
    assert any("--cpu-offload-gb" in f.label for f in plain.fixes)
    offloaded = plan_memory(
        MemoryInputs(target, gpu, 2, 2, cpu_offload_gb=400, **logged)  # type: ignore[arg-type]
    )
    assert offloaded.verdict == "fits"
    assert offloaded.cpu_offload_gib > 150
    # What stays: embedding and head shards, the vision tower, the rotary cache, the freed
    # expert block the cache was carved from and the page tables of the pinned copies (real:
    # 3.76 GiB, 580,364 KV tokens).
    assert abs(offloaded.weights_gib - 3.76) / 3.76 < 0.06
    assert abs(offloaded.kv_tokens - 580_364) / 580_364 < 0.10
    assert any("stay reserved" in a for a in offloaded.assumptions)
    # A smaller offload keeps the rest of the layers on the GPU.
    partial = plan_memory(
        MemoryInputs(target, gpu, 2, 2, cpu_offload_gb=100, **logged)  # type: ignore[arg-type]
    )
    assert partial.cpu_offload_gib == pytest.approx(100)
    # The freed blocks are taken again by the layers that stay: nothing extra is held but the
    # GPU page tables of the pinned copies (8 B per 4 KiB page of at least 100 GiB, at most
    # twice that after PyTorch's power-of-two rounding).
    tables = partial.weights_gib - (plain.weights_gib - 100)
    assert 100 / 512 - 0.01 <= tables <= 200 / 512
    assert any("page tables" in a for a in partial.assumptions)
    assert not any("page tables" in a for a in plain.assumptions)


def test_cpu_offload_from_the_command_line(tmp_path: Path, capsys) -> None:
    model = _qwen35_397b_fp8(tmp_path)
    argv = ["--model-path", model, "--tp", "2", "--cpu-offload-gb", "400"]
    assert main(["check", "--gpu", "RTX 4090", "--gpus", "2", "--json", "--", *argv]) == 0
    plan = json.loads(capsys.readouterr().out)["memory_plan"]
    assert plan["verdict"] == "fits" and plan["cpu_offload_gib"] > 150


def test_max_total_tokens_caps_the_kv_pool(tmp_path: Path) -> None:
    target = load_model_facts(Path(_folder(fam.llama31_8b, tmp_path)))
    gpu = lookup("H100")
    free = plan_memory(MemoryInputs(target, gpu, 1, 1))
    capped = plan_memory(MemoryInputs(target, gpu, 1, 1, max_total_tokens=100_000))
    assert free.kv_tokens > 100_000 and capped.kv_tokens == 100_000
    above = plan_memory(MemoryInputs(target, gpu, 1, 1, max_total_tokens=10**9))
    assert above.kv_tokens == free.kv_tokens  # a cap above the pool changes nothing


def test_max_total_tokens_leaves_the_rest_of_the_pool_free(tmp_path: Path) -> None:
    """SGLang allocates the KV pool for the capped tokens only: the bytes shown are the cap's,
    and what the pool would have held is free outside it (headroom)."""
    target = load_model_facts(Path(_folder(fam.llama31_8b, tmp_path)))
    gpu = lookup("H100")
    free = plan_memory(MemoryInputs(target, gpu, 1, 1))
    capped = plan_memory(MemoryInputs(target, gpu, 1, 1, max_total_tokens=100_000))
    assert capped.kv_budget_gib == pytest.approx(100_000 * capped.kv_cell_bytes / GIB)
    assert capped.kv_cap_free_gib == pytest.approx(free.kv_budget_gib - capped.kv_budget_gib)
    assert capped.headroom_gib == pytest.approx(free.headroom_gib + capped.kv_cap_free_gib)
    assert free.kv_cap_free_gib == 0


def test_the_pp_layer_partition_of_the_launch_reaches_the_plan(tmp_path: Path, capsys) -> None:
    """SGLANG_PP_LAYER_PARTITION before the command splits the layers as SGLang will."""
    model = _folder(fam.qwen3_32b, tmp_path)
    argv = ["python", "-m", "sglang.launch_server", "--model-path", model, "--tp", "2",
            "--pp-size", "4"]
    main(["check", "--gpu", "H100", "--gpus", "8", "--json", "--", *argv])
    even = json.loads(capsys.readouterr().out)["memory_plan"]
    main(["check", "--gpu", "H100", "--gpus", "8", "--json", "--",
          "SGLANG_PP_LAYER_PARTITION=10,18,18,18", *argv])
    split = json.loads(capsys.readouterr().out)["memory_plan"]
    assert even["layers_per_gpu"] == 16 and split["layers_per_gpu"] == 18
    assert split["stage_weights_gib"][0] < even["stage_weights_gib"][0]
    assert any("SGLANG_PP_LAYER_PARTITION" in a for a in split["assumptions"])
