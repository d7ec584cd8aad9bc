"""Memory plans: the three incidents with their numbers, and the verdict boundaries."""

from __future__ import annotations

import json
from pathlib import Path

import families as fam
import pytest

from wizard.gpus import lookup
from wizard.memory import GIB, MIB, MemoryInputs, plan_memory
from wizard.model_facts import ModelFacts
from wizard.model_info import load_model_facts

A6000 = lookup("RTX A6000")
PRO6000 = lookup("RTX PRO 6000 Blackwell")


def _facts(builder, tmp_path: Path) -> ModelFacts:
    family = builder()
    return load_model_facts(family.write(tmp_path / family.name))


# --- incident 1: Qwen3.6-27B bf16, 2x RTX A6000, tp 2, NEXTN 1/1/2 on 0.5.11 --------------------


def test_incident1_qwen36_27b_on_two_a6000_numbers(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    plan = plan_memory(MemoryInputs(target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2))
    # SGLang 0.5.11 heuristic on a 49140 MiB card: reserve 512 + 4096*1.5 + 32*2 + 2/8*1024
    # = 6976 MiB (no piecewise-graph term: `_handle_piecewise_cuda_graph` turns the graphs off
    # for a multimodal model), + 4096 MiB for speculative decoding -> 0.775, then the
    # vision-tower factor 0.95 * 0.9734 -> 0.7167 (SGLang does not round that product).
    assert plan.mem_fraction_static == pytest.approx(0.775 * 0.95 * 0.97344, abs=1e-5)
    # bf16 weights split over two GPUs.
    assert target.params_total is not None
    # bf16 weights split over two GPUs, plus the rotary cache (262144 positions x the 64
    # dimensions partial_rotary_factor 0.25 leaves of head_dim 256, fp32) and kernels.
    assert plan.load_overhead_gib == pytest.approx(0.1 + 262144 * 64 * 4 / GIB)
    weights = plan.weights_gib - plan.load_overhead_gib
    assert weights == pytest.approx(target.params_total * 2 / 2 / GIB, rel=0.01)
    assert 25.0 < weights < 26.0
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
    assert 5_000 < plan.kv_tokens < 40_000
    assert plan.max_running_requests_limit is not None and plan.max_running_requests_limit <= 3
    assert plan.headroom_gib > 0
    assert any("--max-running-requests" in s for s in plan.suggestions)
    # The fix is a profile edit to a request count the state pool really holds.
    fix = next(f for f in plan.fixes if "memory.max_running_requests" in f.edits)
    count = fix.edits["memory.max_running_requests"]
    applied = plan_memory(MemoryInputs(
        target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2, max_running_requests=count
    ))
    assert applied.max_running_requests_limit is not None
    assert applied.max_running_requests_limit >= count
    assert applied.kv_tokens > plan.kv_tokens


def test_incident1_fewer_running_requests_frees_kv(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    default = plan_memory(MemoryInputs(target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2))
    eight = plan_memory(MemoryInputs(
        target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2, max_running_requests=8
    ))
    assert eight.spec_mamba_buffer_gib == pytest.approx(default.spec_mamba_buffer_gib / 6)
    assert eight.kv_tokens > 3 * default.kv_tokens
    assert eight.max_running_requests_limit is not None
    assert eight.max_running_requests_limit >= 8


def test_incident1_without_spec_has_room(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    plan = plan_memory(MemoryInputs(target, A6000, 2, 2))
    # (49140 - 6976) / 49140 = 0.858 (multimodal: no piecewise-graph term), x 0.95 x 0.9734.
    assert plan.mem_fraction_static == pytest.approx(0.858 * 0.95 * 0.97344, abs=1e-5)
    assert plan.spec_mamba_buffer_gib == 0 and plan.draft_weights_gib == 0
    assert plan.kv_tokens > 150_000


# --- incident 2: Qwen3.5-397B-A17B NVFP4, 8x RTX PRO 6000, tp 8, with and without MTP ----------


def test_incident2_fits_with_and_without_mtp(tmp_path: Path) -> None:
    target = _facts(fam.qwen35_397b_nvfp4, tmp_path)
    without = plan_memory(MemoryInputs(target, PRO6000, 8, 8))
    with_mtp = plan_memory(MemoryInputs(target, PRO6000, 8, 8, algorithm="NEXTN"))
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
    old = plan_memory(MemoryInputs(target, PRO6000, 8, 8, algorithm="NEXTN", sglang_version="0.5.11"))
    new = plan_memory(MemoryInputs(target, PRO6000, 8, 8, algorithm="NEXTN", sglang_version="0.5.23"))
    assert new.mem_fraction_static > old.mem_fraction_static
    # 0.5.14+ loads the draft before sizing the KV cache: it comes out of the static pool.
    assert new.draft_in_static_pool and not old.draft_in_static_pool
    smaller_reserve = (new.mem_fraction_static - old.mem_fraction_static) * new.free_before_load_gib
    # The draft's own embedding and head come out of the pool and are free again afterwards.
    assert new.headroom_gib == pytest.approx(
        old.headroom_gib - smaller_reserve + old.draft_weights_gib + new.draft_placeholder_gib,
        abs=0.3,
    )
    assert new.verdict == "fits"


def test_draft_embedding_and_head_sit_in_the_pool_while_sglang_sizes_it(tmp_path: Path) -> None:
    """0.5.14+ (trait `draft_head_shared_after_sizing`): the MTP draft builds its own bf16
    embedding and head (vocabulary over tp each) and swaps them for the target's only in
    `alloc_memory_pool`, after the KV cache is sized: the pool loses them, the room outside gets
    them back. sglang PR 32468's 0.5.19 log on a 27B of this shape at tp 2: the draft's
    "mem usage=2.57 GB", of which 124,160 x 5,120 x 2 B twice are these two copies."""
    target = _facts(fam.qwen36_27b, tmp_path)
    kw: dict[str, object] = {"algorithm": "NEXTN", "num_draft_tokens": 2, "mem_fraction": 0.85}
    old = plan_memory(MemoryInputs(target, A6000, 2, 2, sglang_version="0.5.13", **kw))
    new = plan_memory(MemoryInputs(target, A6000, 2, 2, sglang_version="0.5.14", **kw))
    copies = 2 * 124_160 * 5_120 * 2 / GIB
    assert old.draft_placeholder_gib == 0
    assert new.draft_placeholder_gib == pytest.approx(copies)
    assert any("own embedding and head" in a for a in new.assumptions)
    # The static pool holds weights, draft, the two copies, then recurrent state and KV.
    held = new.weights_gib + new.draft_weights_gib + copies
    state = new.mamba_pool_gib + new.spec_mamba_buffer_gib + new.kv_budget_gib
    assert held + state == pytest.approx(new.static_pool_gib, abs=0.01)
    # ... and outside it the copies are free again once the draft's pool exists.
    need = (new.workspace_gib + new.req_to_token_gib + new.activation_estimate_gib
            + new.cuda_graph_estimate_gib + new.draft_kv_gib)
    assert new.headroom_gib == pytest.approx(new.reserve_gib + copies - need, abs=0.01)


def test_draft_own_head_counts_for_separate_drafts_and_dp_attention(tmp_path: Path) -> None:
    """An EAGLE-3 draft keeps its own (small-vocabulary) head and gives up only the embedding;
    under DP attention the MTP draft's embedding is whole on every rank, like the target's
    (`VocabParallelEmbedding(enable_tp=not dp attention)`)."""
    target = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    eagle3 = plan_memory(MemoryInputs(target, PRO6000, 8, 8, algorithm="EAGLE3", draft=draft,
                                      num_draft_tokens=2, sglang_version="0.5.23"))
    embedding = draft.vocab_size * draft.hidden_size * 2 / 8 / GIB
    assert eagle3.draft_placeholder_gib == pytest.approx(embedding, rel=0.01)
    r1 = _facts(fam.deepseek_v3, tmp_path)
    dp = plan_memory(MemoryInputs(r1, lookup("H200"), 8, 8, algorithm="NEXTN", dp=8,
                                  enable_dp_attention=True, sglang_version="0.5.23"))
    one = r1.vocab_size * r1.hidden_size * 2 / GIB
    assert dp.draft_placeholder_gib == pytest.approx(one + one / 8, rel=0.01)


# --- incident 3: Kimi-K2.5 INT4 + EAGLE-3 draft, 8x RTX PRO 6000, tp 8 ---------------------------


def test_incident3_kimi_int4_with_eagle3_draft(tmp_path: Path) -> None:
    target = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    plan = plan_memory(MemoryInputs(target, PRO6000, 8, 8, algorithm="EAGLE3", draft=draft, num_draft_tokens=2))
    # INT4 g32 routed experts (~1.01T params x 0.5625 B) + bf16 rest: ~70 GiB per GPU.
    assert 65 < plan.weights_gib < 75
    # MLA: one latent of 512 + 64 per layer, 61 layers, bf16, on every rank.
    assert plan.kv_bytes_per_token == (512 + 64) * 61 * 2
    # The draft minus the embedding it takes from the target, over 8 ranks.
    assert 0.1 < plan.draft_weights_gib < 0.4
    # The vision tower (27 x 1152, SGLang's KimiK25VisionConfig) takes the fraction to 0.908 x
    # 0.95 x 0.9576 before the 0.5.11 speculative reserve (4 GiB): 0.733 of 94.3 GiB is less
    # than the ~70 GiB of weights + the draft, so 0.5.11 has no KV left on these cards.
    assert plan.mem_fraction_static == pytest.approx(0.7332, abs=5e-4)
    assert plan.verdict == "will_not_fit" and plan.kv_tokens == 0
    # 0.5.14+ dropped the speculative reserve: the launch starts, with far less KV than the
    # 262k context (the incident's try 3 started, on SGLang built from source).
    new = plan_memory(MemoryInputs(target, PRO6000, 8, 8, algorithm="EAGLE3", draft=draft,
                                   num_draft_tokens=2, sglang_version="0.5.14"))
    assert new.verdict == "tight"
    assert 5_000 < new.kv_tokens < 60_000
    assert new.kv_tokens < (new.context_length or 0)
    assert any("--context-length" in s or "fp8" in s for s in new.suggestions)
    fp8 = plan_memory(MemoryInputs(
        target,
        PRO6000,
        8,
        8,
        algorithm="EAGLE3",
        draft=draft,
        num_draft_tokens=2,
        kv_cache_dtype="fp8_e4m3",
        sglang_version="0.5.14",
    ))
    assert fp8.kv_tokens == pytest.approx(2 * new.kv_tokens, rel=0.01)


# --- boundaries --------------------------------------------------------------------------------


def test_70b_bf16_on_one_a6000_will_not_fit_and_suggests_tp(tmp_path: Path) -> None:
    target = _facts(fam.llama31_70b, tmp_path)
    plan = plan_memory(MemoryInputs(target, A6000, 4, 1))
    assert plan.verdict == "will_not_fit"
    assert "weights need" in plan.reasons[0]
    assert any("--tp-size 4" in s for s in plan.suggestions)
    assert plan_memory(MemoryInputs(target, A6000, 4, 4)).verdict in ("fits", "tight")


def test_given_fraction_too_high_leaves_no_room_for_the_draft(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    plan = plan_memory(MemoryInputs(
        target, A6000, 2, 2, mem_fraction=0.99, algorithm="NEXTN", num_draft_tokens=2
    ))
    assert plan.mem_fraction_source == "given"
    assert plan.verdict == "will_not_fit"
    assert plan.headroom_gib < 0
    assert any("--mem-fraction-static" in s for s in plan.suggestions)


def test_invalid_inputs(tmp_path: Path) -> None:
    target = _facts(fam.llama31_8b, tmp_path)
    with pytest.raises(ValueError, match="tp 4 needs 4 GPUs"):
        plan_memory(MemoryInputs(target, A6000, 2, 4))
    with pytest.raises(ValueError, match="unknown speculative algorithm"):
        plan_memory(MemoryInputs(target, A6000, 1, 1, algorithm="MEDUSA"))


def test_plan_json_round_numbers(tmp_path: Path) -> None:
    target = _facts(fam.llama31_8b, tmp_path)
    data = plan_memory(MemoryInputs(target, lookup("H100"), 1, 1)).to_json()
    assert data["verdict"] == "fits"
    assert data["gpu"] == "H100"
    for key in ("weights_gib", "kv_tokens", "kv_bytes_per_token", "headroom_gib", "suggestions"):
        assert key in data
    # Llama-3.1-8B: 32 layers x K and V x 8 heads x 128 x 2 B = 128 KiB per token.
    assert data["kv_bytes_per_token"] == 131072


def test_plan_uses_the_draft_tokens_sglang_will_use(tmp_path: Path) -> None:
    target = _facts(fam.qwen36_27b, tmp_path)
    # Incident 3's pattern on a hybrid model: 16 typed, topk 1 and steps 1 -> SGLang drafts 2.
    typed = plan_memory(MemoryInputs(
        target, A6000, 2, 2, algorithm="NEXTN", num_steps=1, topk=1, num_draft_tokens=16
    ))
    two = plan_memory(MemoryInputs(target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2))
    assert typed.spec_mamba_buffer_gib == pytest.approx(two.spec_mamba_buffer_gib)
    assert any("SGLang will use 2" in a for a in typed.assumptions)
    auto = plan_memory(MemoryInputs(target, A6000, 2, 2, algorithm="NEXTN"))
    assert auto.spec_mamba_buffer_gib == pytest.approx(2 * two.spec_mamba_buffer_gib)  # 3/1/4


# --- SGLang's accounting (issue 14) --------------------------------------------------------------

H100 = lookup("H100")
H200 = lookup("H200")
B200 = lookup("B200")


def test_static_pool_is_fraction_of_free_memory_before_loading(tmp_path: Path) -> None:
    target = _facts(fam.llama31_8b, tmp_path)
    card = plan_memory(MemoryInputs(target, H100, 1, 1, mem_fraction=0.88))
    assert card.free_memory_source == "card"
    assert card.free_before_load_gib == pytest.approx(card.gpu_total_gib - 1.0)
    assert card.static_pool_gib == pytest.approx(card.free_before_load_gib * 0.88)
    # The free memory read on the host (another process holds 10 GiB) shrinks the pool.
    busy = plan_memory(MemoryInputs(target, H100, 1, 1, mem_fraction=0.88, free_gib=card.gpu_total_gib - 10))
    assert busy.free_memory_source == "nvidia-smi"
    assert busy.static_pool_gib == pytest.approx(card.static_pool_gib - 10 * 0.88)
    assert busy.kv_tokens < card.kv_tokens
    assert any("nvidia-smi" in a for a in busy.assumptions)


def test_nccl_buffers_grow_with_tp_peers() -> None:
    from wizard.memory import context_reserve_gib

    assert context_reserve_gib(H100, 8) == pytest.approx(1.0 + 7 * 0.28)
    assert context_reserve_gib(lookup("L4"), 4) < context_reserve_gib(H100, 4)


def test_a_tp_group_spanning_nodes_holds_buffers_for_its_local_peers_only(tmp_path: Path) -> None:
    """tp 16 over two 8-GPU nodes: "Init torch distributed ends. mem usage=1.14 GB" (DeepSeek-R1,
    0.5.8.post1), not 15 one-node NVLink peers' 4.2 GiB; the rules pass --nnodes to the plan."""
    from wizard.api import check_case
    from wizard.conformance.models import write_model_folders
    from wizard.memory import context_reserve_gib

    assert context_reserve_gib(H100, 16, 8) == pytest.approx(1.0 + 1.14)
    assert context_reserve_gib(H100, 16) == pytest.approx(1.0 + 15 * 0.28)
    assert context_reserve_gib(H100, 8, 8) == context_reserve_gib(H100, 8)  # one node each
    folder = write_model_folders(tmp_path)["dsv3_h128"]
    plans = {
        nodes: check_case({"id": 1, "sglang_version": "0.5.8", "gpu": "H100", "gpus": 16 // nodes,
                           "argv": ["--model-path", str(folder), "--tp", "16", "--nnodes",
                                    str(nodes), "--node-rank", "0",
                                    "--dist-init-addr", "10.0.0.1:5000"],
                           "env": {}})["memory_plan"]
        for nodes in (1, 2)
    }
    assert plans[2]["free_before_load_gib"] - plans[1]["free_before_load_gib"] == pytest.approx(
        15 * 0.28 - 1.14, abs=0.02)
    assert plans[2]["kv_tokens"] > plans[1]["kv_tokens"]


def test_mla_a_projections_and_the_indexer_are_whole_on_every_rank(tmp_path: Path) -> None:
    """SGLang builds `fused_qkv_a_proj_with_mqa` (q_a + kv_a) and the sparse-attention indexer's
    projections as ReplicatedLinear: at tp 16 each rank holds them whole."""
    facts = _facts(fam.deepseek_v3, tmp_path)
    parts = facts.params_estimate
    assert parts is not None
    assert parts.attention_replicated == 7168 * (1536 + 512 + 64) * 61
    one = plan_memory(MemoryInputs(facts, H100, 8, 8, sglang_version="0.5.8"))
    wide = plan_memory(MemoryInputs(facts, H100, 16, 16, sglang_version="0.5.8"))
    replicated_gib = parts.attention_replicated / 2**30  # fp8: one byte a parameter
    sharded_gib = (one.weights_gib - replicated_gib) / 2  # what halves from tp 8 to tp 16
    assert wide.weights_gib == pytest.approx(sharded_gib + replicated_gib, rel=0.02)


def test_pipeline_parallel_splits_layers_weights_and_kv(tmp_path: Path) -> None:
    target = _facts(fam.qwen3_32b, tmp_path)
    flat = plan_memory(MemoryInputs(target, H100, 2, 2, mem_fraction=0.85))
    pp4 = plan_memory(MemoryInputs(target, H100, 8, 2, pp=4, mem_fraction=0.85))
    assert pp4.layers_per_gpu == 16 and pp4.pp == 4
    # A quarter of the layers per GPU: KV bytes per token exactly, weights about (plus the
    # larger of embedding / head on the first / last stage).
    assert pp4.kv_bytes_per_token * 4 == flat.kv_bytes_per_token
    assert flat.weights_gib / 4 < pp4.weights_gib < flat.weights_gib / 3
    with pytest.raises(ValueError, match="tp 2 x pp 4 needs 8 GPUs"):
        plan_memory(MemoryInputs(target, H100, 4, 2, pp=4))


def test_pipeline_stages_follow_the_release_split() -> None:
    """`get_pp_indices`: 0.5.1-0.5.5 give the last stage all of the remainder, later releases
    one extra layer to each of the last stages; SGLANG_PP_LAYER_PARTITION wins when it adds up."""
    from pathlib import Path as _Path

    from wizard.conformance.onboard import pp_layer_split
    from wizard.memory import pp_stage_layers
    from wizard.sglang.releases import release_for

    assert pp_stage_layers(94, 4, "extra_on_last_stages") == (23, 23, 24, 24)
    assert pp_stage_layers(94, 4, "rest_on_last_stage") == (23, 23, 23, 25)
    assert pp_stage_layers(64, 4, "rest_on_last_stage") == (16, 16, 16, 16)
    assert pp_stage_layers(94, 4, "extra_on_last_stages", (30, 30, 30, 4)) == (30, 30, 30, 4)
    assert pp_stage_layers(94, 4, "extra_on_last_stages", (30, 30)) == (23, 23, 24, 24)
    assert release_for("0.5.5").behaviour.pp_layer_split == "rest_on_last_stage"
    assert release_for("0.5.9").behaviour.pp_layer_split == "extra_on_last_stages"
    missing = _Path(__file__).with_name("no-such-utils.py")
    assert pp_layer_split(missing) == ""


def test_the_plan_is_of_the_stage_with_the_fewest_kv_tokens(tmp_path: Path) -> None:
    """94 layers over 4 stages: on 0.5.5 the last stage has 25 layers and the head, on 0.5.9 24;
    the stage the plan describes is the last either way, and each stage's weights are listed."""
    from memory_logs import _qwen3_235b

    folder = tmp_path / "q"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_qwen3_235b()), encoding="utf-8")
    facts = load_model_facts(folder)
    old = plan_memory(MemoryInputs(facts, H100, 32, 8, pp=4, nnodes=4, mem_fraction=0.85,
                                   sglang_version="0.5.5"))
    new = plan_memory(MemoryInputs(facts, H100, 32, 8, pp=4, nnodes=4, mem_fraction=0.85,
                                   sglang_version="0.5.9"))
    assert old.layers_per_gpu == 25 and new.layers_per_gpu == 24
    assert len(new.stage_weights_gib) == 4 and new.weights_gib == new.stage_weights_gib[3]
    layer = new.stage_weights_gib[3] - new.stage_weights_gib[1]  # 24 + head vs 23 layers
    assert old.weights_gib > new.weights_gib + 0.5 * layer
    assert new.stage_weights_gib[0] < new.stage_weights_gib[2]  # 23 + embedding vs 24
    assert any("stages of 23/23/24/24" in a for a in new.assumptions)
    partitioned = plan_memory(MemoryInputs(facts, H100, 32, 8, pp=4, nnodes=4, mem_fraction=0.85,
                                           sglang_version="0.5.9",
                                           pp_layer_partition=(22, 24, 24, 24)))
    assert partitioned.stage_weights_gib[0] < new.stage_weights_gib[0]
    assert any("SGLANG_PP_LAYER_PARTITION" in a for a in partitioned.assumptions)


def test_a_model_class_without_a_layer_range_sizes_every_layer_on_each_stage(
        tmp_path: Path) -> None:
    """SGLang's model runner takes `getattr(model, "start_layer", 0)` .. `end_layer` (default:
    all layers); Qwen2_5_VLForConditionalGeneration has neither, so at pp 2 each stage's KV cache
    has every layer (sglang PR 13075: 2,524,524 tokens at 28 layers' cell, tp 2 x pp 2). Its
    text sibling Qwen2ForCausalLM has a range: half the layers a stage."""
    from memory_logs import _qwen25_vl_7b

    from wizard.sglang.releases import release_for

    assert "Qwen2_5_VLForConditionalGeneration" in release_for("0.5.11").arch_set(
        "pp_kv_all_layers")
    assert "Qwen2ForCausalLM" not in release_for("0.5.11").arch_set("pp_kv_all_layers")
    vl_folder = tmp_path / "vl"
    vl_folder.mkdir()
    (vl_folder / "config.json").write_text(json.dumps(_qwen25_vl_7b()), encoding="utf-8")
    vl = load_model_facts(vl_folder)
    text_config = {**_qwen25_vl_7b(), "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}
    text_config.pop("vision_config", None)
    text_folder = tmp_path / "text"
    text_folder.mkdir()
    (text_folder / "config.json").write_text(json.dumps(text_config), encoding="utf-8")
    text = load_model_facts(text_folder)
    for facts, stage_share in ((vl, 1), (text, 2)):
        flat = plan_memory(MemoryInputs(facts, H100, 2, 2, mem_fraction=0.8,
                                        sglang_version="0.5.11"))
        pp2 = plan_memory(MemoryInputs(facts, H100, 4, 2, pp=2, mem_fraction=0.8,
                                       sglang_version="0.5.11"))
        assert pp2.kv_bytes_per_token * stage_share == flat.kv_bytes_per_token
    assert any("no start_layer" in a for a in plan_memory(MemoryInputs(
        vl, H100, 4, 2, pp=2, sglang_version="0.5.11")).assumptions)


def test_dp_attention_replicates_attention_and_keeps_the_mla_latent(tmp_path: Path) -> None:
    target = _facts(fam.deepseek_v3, tmp_path)
    tp8 = plan_memory(MemoryInputs(target, H200, 8, 8))
    dp8 = plan_memory(MemoryInputs(target, H200, 8, 8, dp=8, enable_dp_attention=True))
    assert dp8.attention_dp and dp8.attention_tp == 1 and not tp8.attention_dp
    # Attention (~11B params, FP8) and the embedding are whole on every rank under DP attention.
    assert dp8.weights_gib - tp8.weights_gib > 8
    assert dp8.kv_bytes_per_token == tp8.kv_bytes_per_token == (512 + 64) * 61 * 2
    # SGLang's heuristic reserves cuda_graph_max_bs x dp x 3 (x 1.5 more above 300) MiB more.
    assert dp8.mem_fraction_static < tp8.mem_fraction_static
    # dp without the attention flag is plain data parallelism: nothing changes per GPU.
    assert plan_memory(MemoryInputs(target, H200, 8, 8, dp=8)).weights_gib == pytest.approx(tp8.weights_gib)
    with pytest.raises(ValueError, match="must divide"):
        plan_memory(MemoryInputs(target, H200, 8, 8, dp=3, enable_dp_attention=True))


def _v32(tmp_path: Path) -> ModelFacts:
    config = fam._deepseek_v3_text(
        architectures=["DeepseekV32ForCausalLM"], index_head_dim=128, index_topk=2048
    )
    return load_model_facts(fam.Family("V3.2", config, 671e9).write(tmp_path / "v32"))


def test_nsa_layout_of_deepseek_v32(tmp_path: Path) -> None:
    target = _v32(tmp_path)
    assert target.index_head_dim == 128
    # B200 defaults NSA to fp8: latent 512 + 512/128 x 4 scale bytes + rope 64 in bf16, and the
    # fp8 indexer key 128 + 4 scale bytes, per layer (48,068 B; SGLang's log: 43.67 GB / 975,424).
    old = plan_memory(MemoryInputs(target, B200, 8, 8, sglang_version="0.5.11"))
    new = plan_memory(MemoryInputs(target, B200, 8, 8, sglang_version="0.5.23"))
    assert old.kv_bytes_per_token == new.kv_bytes_per_token == (656 + 132) * 61
    # Up to 0.5.16 the token count divides by the unscaled latent (576 B), from 0.5.17 by 656.
    assert old.kv_cell_bytes == (576 + 132) * 61
    assert new.kv_cell_bytes == (656 + 132) * 61
    # Hopper defaults NSA to bf16.
    assert plan_memory(MemoryInputs(target, H200, 8, 8)).kv_bytes_per_token == (576 * 2 + 132) * 61


def test_fp4_kv_and_page_size(tmp_path: Path) -> None:
    target = _facts(fam.llama31_8b, tmp_path)
    bf16 = plan_memory(MemoryInputs(target, H100, 1, 1, mem_fraction=0.88))
    fp4 = plan_memory(MemoryInputs(target, H100, 1, 1, mem_fraction=0.88, kv_cache_dtype="fp4_e2m1"))
    # Half a byte per element plus one fp8 scale per 16 elements.
    assert fp4.kv_bytes_per_token == int(bf16.kv_bytes_per_token / 2 * (0.5 + 1 / 16))
    paged = plan_memory(MemoryInputs(target, H100, 1, 1, mem_fraction=0.88, page_size=64))
    assert paged.kv_tokens % 64 == 0 and bf16.kv_tokens - paged.kv_tokens < 64


def test_sliding_window_layers_use_a_smaller_pool(tmp_path: Path) -> None:
    target = _facts(fam.gpt_oss_120b, tmp_path)
    plan = plan_memory(MemoryInputs(target, H100, 1, 1, mem_fraction=0.88))
    one_layer = 2 * 8 * 64 * 2  # 8 KV heads x 64, K and V, bf16
    # 18 full layers + 0.8 (swa_full_tokens_ratio) x 18 sliding-window layers per token.
    assert plan.kv_cell_bytes == int(18 * one_layer + 0.8 * 18 * one_layer)
    assert plan.swa_kv_tokens == int(plan.kv_tokens * 0.8)
    assert "sliding-window" in plan.kv_layout


def test_release_accounting() -> None:
    from wizard.memory import accounting

    assert accounting("0.5.5").spec_reserve_mib == 2048
    assert accounting("0.5.11").spec_reserve_mib == 4096
    assert not accounting("0.5.13").draft_in_static_pool
    assert accounting("0.5.14").spec_reserve_mib == 0 and accounting("0.5.14").draft_in_static_pool
    assert not accounting("0.5.16").nsa_scaled_cell and accounting("0.5.17").nsa_scaled_cell
    assert accounting("0.5.23.post1") == accounting("0.5.23")
    # 20-35 GiB cards: 0.5.20 raised the defaults (read from the 0.5.19 and 0.5.20 wheels).
    assert accounting("0.5.19").small_card_graph_bs == (24, 80)
    assert accounting("0.5.20").small_card_chunked == 4096
    assert accounting("0.5.20").small_card_graph_bs == (48, 160)


def test_req_to_token_table_counts_outside_the_pool(tmp_path: Path) -> None:
    target = _facts(fam.llama31_8b, tmp_path)
    plan = plan_memory(MemoryInputs(target, H100, 1, 1, mem_fraction=0.88))
    # 2048-4096 request slots x (context 131072 + 4) x int32.
    assert plan.req_to_token_gib == pytest.approx(2048 * (131072 + 4) * 4 / GIB, rel=0.5)
    assert plan.verdict == "fits"


def test_a_plan_without_kv_room_names_the_draft_copies(tmp_path: Path) -> None:
    """When the pool has no room for the KV cache on 0.5.14+, the summary's sum names the draft's
    own embedding and head it counts (what is held adds up to the parts it names)."""
    target = _facts(fam.qwen36_27b, tmp_path)
    plan = plan_memory(MemoryInputs(target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2,
                                    mem_fraction=0.6, sglang_version="0.5.23"))
    assert plan.verdict == "will_not_fit" and plan.draft_placeholder_gib > 2
    assert "draft's own embedding and head" in plan.summary()


def test_a_draft_loaded_after_the_pool_needs_room_for_its_own_head_to_start(tmp_path: Path) -> None:
    """Before 0.5.14 the draft loads after the KV cache is sized, outside the pool, and allocates
    its KV pool before `init_lm_head` gives up its own embedding and head: the room outside the
    pool must hold them then, or the start fails (a reserve between the two sums will not fit)."""
    target = _facts(fam.qwen36_27b, tmp_path)

    def plan_at(fraction: float):
        return plan_memory(MemoryInputs(
            target, A6000, 2, 2, algorithm="NEXTN", num_draft_tokens=2, mem_fraction=fraction,
            context_length=4096, max_running_requests=8, sglang_version="0.5.11",
        ))

    plan = plan_at(0.9)
    own = plan.draft_loaded_gib - plan.draft_weights_gib
    assert own == pytest.approx(2 * 124_160 * 5_120 * 2 / GIB)
    for _ in range(3):  # the draft KV follows the pool: settle the fraction on the boundary
        without = plan.workspace_gib + plan.req_to_token_gib + plan.draft_weights_gib + plan.draft_kv_gib
        fraction = 1 - (without + own / 2) / plan.free_before_load_gib
        plan = plan_at(fraction)
    assert without < plan.reserve_gib < without + own
    assert plan.verdict == "will_not_fit"
    assert any("draft weights as loaded" in r for r in plan.reasons)
