"""Memory plans: the three incidents with their numbers, and the verdict boundaries."""

from __future__ import annotations

from pathlib import Path

import families as fam
import pytest

from wizard.gpus import lookup
from wizard.memory import GIB, MIB, plan_memory
from wizard.model_info import ModelFacts, load_model_facts

A6000 = lookup("RTX A6000")
PRO6000 = lookup("RTX PRO 6000 Blackwell")


def _facts(builder, tmp_path: Path) -> ModelFacts:
    family = builder()
    return load_model_facts(family.write(tmp_path / family.name))


# --- incident 1: Qwen3.6-27B bf16, 2x RTX A6000, tp 2, NEXTN 1/1/2 on 0.5.11 --------------------


def test_incident1_qwen36_27b_on_two_a6000_numbers(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    plan = plan_memory(target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2)
    # SGLang 0.5.11 heuristic on a 49140 MiB card: reserve 512 + 4096*1.5 + 32*2 + 2/8*1024
    # + 50 piecewise graphs * 8 = 7376 MiB, + 4096 MiB for speculative decoding -> 0.767,
    # then the vision-tower factor 0.95 * 0.9734 -> 0.709.
    assert plan.mem_fraction_static == pytest.approx(0.709)
    # bf16 weights split over two GPUs.
    assert target.params_total is not None
    assert plan.weights_gib == pytest.approx(target.params_total * 2 / 2 / GIB, rel=0.01)
    assert 25.0 < plan.weights_gib < 26.0
    # KV: 16 full-attention layers x K and V x 2 of 4 KV heads per GPU x 256 x 2 bytes.
    assert plan.kv_bytes_per_token == 16 * 2 * 2 * 256 * 2
    # Recurrent state per request per GPU: conv (2*2048 + 6144)/2 x 3 x 2 B + state 24 x 128 x
    # 128 x 4 B, for 48 Gated DeltaNet layers.
    per_req = ((2 * 2048 + 6144) // 2 * 3 * 2 + 24 * 128 * 128 * 4) * 48
    assert plan.mamba_state_per_request_mib == pytest.approx(per_req / MIB)
    # Speculative state buffer: 48 requests (SGLang's default with spec) x 2 draft tokens.
    assert plan.spec_mamba_buffer_gib == pytest.approx(per_req * 48 * 2 / GIB)
    assert plan.draft_kind is not None and "MTP" in plan.draft_kind
    assert 0.3 < plan.draft_weights_gib < 0.6  # one MTP layer (~0.42B params) / 2
    # It started (the incident says so), but only just: few tokens and ~2 concurrent requests.
    assert plan.verdict == "tight"
    assert 20_000 < plan.kv_tokens < 40_000
    assert plan.max_running_requests_limit is not None and plan.max_running_requests_limit <= 3
    assert plan.headroom_gib > 0
    assert any("--max-running-requests" in s for s in plan.suggestions)
    # The fix is a profile edit to a request count the state pool really holds.
    fix = next(f for f in plan.fixes if "memory.max_running_requests" in f.edits)
    count = fix.edits["memory.max_running_requests"]
    applied = plan_memory(
        target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2, max_running_requests=count
    )
    assert applied.max_running_requests_limit is not None
    assert applied.max_running_requests_limit >= count
    assert applied.kv_tokens > plan.kv_tokens


def test_incident1_fewer_running_requests_frees_kv(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    default = plan_memory(target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2)
    eight = plan_memory(
        target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2, max_running_requests=8
    )
    assert eight.spec_mamba_buffer_gib == pytest.approx(default.spec_mamba_buffer_gib / 6)
    assert eight.kv_tokens > 3 * default.kv_tokens
    assert eight.max_running_requests_limit is not None
    assert eight.max_running_requests_limit >= 8


def test_incident1_without_spec_has_room(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    plan = plan_memory(target, A6000, 2, 2)
    assert plan.mem_fraction_static == pytest.approx(0.786)
    assert plan.spec_mamba_buffer_gib == 0 and plan.draft_weights_gib == 0
    assert plan.kv_tokens > 150_000


# --- incident 2: Qwen3.5-397B-A17B NVFP4, 8x RTX PRO 6000, tp 8, with and without MTP ----------


def test_incident2_fits_with_and_without_mtp(tmp_path: Path) -> None:
    target = _facts(fam.qwen35_397b_nvfp4, tmp_path)
    without = plan_memory(target, PRO6000, 8, 8)
    with_mtp = plan_memory(target, PRO6000, 8, 8, algorithm="NEXTN")
    # NVFP4 experts (0.5625 B/param) + bf16 attention/embeddings: ~28 GiB per GPU of 95.6.
    assert 25 < without.weights_gib < 31
    assert with_mtp.weights_gib == pytest.approx(without.weights_gib)
    # The MTP layer (a full MoE layer, left in bf16 by the exclude list) is ~12.9 GB / 8.
    assert 1.3 < with_mtp.draft_weights_gib < 1.8
    # KV: 15 full layers x K and V x one KV head per GPU (2 heads over 8 ranks) x 256 x 2 B.
    assert with_mtp.kv_bytes_per_token == 15 * 2 * 1 * 256 * 2
    assert without.verdict == "fits" and with_mtp.verdict == "fits"
    # Fits by several GiB even with MTP: the numbers do not support "out of memory".
    assert with_mtp.headroom_gib > 5
    assert with_mtp.kv_tokens > 1_000_000
    # What the MTP layer costs: draft weights + draft KV outside the pool, a state buffer inside.
    assert with_mtp.draft_kv_gib > 0.5
    assert with_mtp.spec_mamba_buffer_gib > 3
    assert with_mtp.kv_tokens < without.kv_tokens


def test_incident2_on_0523_keeps_no_spec_reserve(tmp_path: Path) -> None:
    target = _facts(fam.qwen35_397b_nvfp4, tmp_path)
    old = plan_memory(target, PRO6000, 8, 8, algorithm="NEXTN", sglang_version="0.5.11")
    new = plan_memory(target, PRO6000, 8, 8, algorithm="NEXTN", sglang_version="0.5.23")
    assert new.mem_fraction_static > old.mem_fraction_static
    # 0.5.14+ loads the draft before sizing the KV cache: it comes out of the static pool.
    assert new.draft_in_static_pool and not old.draft_in_static_pool
    smaller_reserve = (new.mem_fraction_static - old.mem_fraction_static) * new.free_before_load_gib
    assert new.headroom_gib == pytest.approx(
        old.headroom_gib - smaller_reserve + old.draft_weights_gib, abs=0.3
    )
    assert new.verdict == "fits"


# --- incident 3: Kimi-K2.5 INT4 + EAGLE-3 draft, 8x RTX PRO 6000, tp 8 ---------------------------


def test_incident3_kimi_int4_with_eagle3_draft(tmp_path: Path) -> None:
    target = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    plan = plan_memory(target, PRO6000, 8, 8, algorithm="EAGLE3", draft=draft, num_draft_tokens=2)
    # INT4 g32 routed experts (~1.01T params x 0.5625 B) + bf16 rest: ~70 GiB per GPU.
    assert 65 < plan.weights_gib < 75
    # MLA: one latent of 512 + 64 per layer, 61 layers, bf16, on every rank.
    assert plan.kv_bytes_per_token == (512 + 64) * 61 * 2
    # The draft minus the embedding it takes from the target, over 8 ranks.
    assert 0.1 < plan.draft_weights_gib < 0.4
    assert plan.verdict == "tight"
    assert 15_000 < plan.kv_tokens < 60_000
    assert plan.kv_tokens < (plan.context_length or 0)
    assert any("--context-length" in s or "fp8" in s for s in plan.suggestions)
    fp8 = plan_memory(
        target,
        PRO6000,
        8,
        8,
        algorithm="EAGLE3",
        draft=draft,
        num_draft_tokens=2,
        kv_cache_dtype="fp8_e4m3",
    )
    assert fp8.kv_tokens == pytest.approx(2 * plan.kv_tokens, rel=0.01)


# --- boundaries --------------------------------------------------------------------------------


def test_70b_bf16_on_one_a6000_will_not_fit_and_suggests_tp(tmp_path: Path) -> None:
    target = _facts(fam.llama31_70b, tmp_path)
    plan = plan_memory(target, A6000, 4, 1)
    assert plan.verdict == "will_not_fit"
    assert "weights need" in plan.reasons[0]
    assert any("--tp-size 4" in s for s in plan.suggestions)
    assert plan_memory(target, A6000, 4, 4).verdict in ("fits", "tight")


def test_given_fraction_too_high_leaves_no_room_for_the_draft(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    plan = plan_memory(
        target, A6000, 2, 2, mem_fraction=0.99, algorithm="NEXTN", num_draft_tokens=2
    )
    assert plan.mem_fraction_source == "given"
    assert plan.verdict == "will_not_fit"
    assert plan.headroom_gib < 0
    assert any("--mem-fraction-static" in s for s in plan.suggestions)


def test_invalid_inputs(tmp_path: Path) -> None:
    target = _facts(fam.llama31_8b, tmp_path)
    with pytest.raises(ValueError, match="tp 4 needs 4 GPUs"):
        plan_memory(target, A6000, 2, 4)
    with pytest.raises(ValueError, match="unknown speculative algorithm"):
        plan_memory(target, A6000, 1, 1, algorithm="MEDUSA")


def test_plan_json_round_numbers(tmp_path: Path) -> None:
    target = _facts(fam.llama31_8b, tmp_path)
    data = plan_memory(target, lookup("H100"), 1, 1).to_json()
    assert data["verdict"] == "fits"
    assert data["gpu"] == "H100"
    for key in ("weights_gib", "kv_tokens", "kv_bytes_per_token", "headroom_gib", "suggestions"):
        assert key in data
    # Llama-3.1-8B: 32 layers x K and V x 8 heads x 128 x 2 B = 128 KiB per token.
    assert data["kv_bytes_per_token"] == 131072


def test_plan_uses_the_draft_tokens_sglang_will_use(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    # Incident 3's pattern on a hybrid model: 16 typed, topk 1 and steps 1 -> SGLang drafts 2.
    typed = plan_memory(
        target, A6000, 2, 2, algorithm="NEXTN", num_steps=1, topk=1, num_draft_tokens=16
    )
    two = plan_memory(target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2)
    assert typed.spec_mamba_buffer_gib == pytest.approx(two.spec_mamba_buffer_gib)
    assert any("SGLang will use 2" in a for a in typed.assumptions)
    auto = plan_memory(target, A6000, 2, 2, algorithm="NEXTN")
    assert auto.spec_mamba_buffer_gib == pytest.approx(2 * two.spec_mamba_buffer_gib)  # 3/1/4
