"""The memory plan against real SGLang start-up logs (`memory_logs.py`): the error per row.

Run with `-s` to see the table. The plan is made as a user would make it (GPU kind, flags,
mem-fraction of the log; the card's free memory and the weights estimated). The "formula" column
puts the log's own free memory and weights into SGLang's formula with the plan's cell size
(`free_before x fraction - weights) / cell`): it isolates the accounting from the two estimates.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from memory_logs import ROWS, LogRow

from wizard.gpus import lookup
from wizard.memory import (
    MAMBA_FULL_MEMORY_RATIO,
    MemoryInputs,
    MemoryPlan,
    context_reserve_gib,
    plan_memory,
)
from wizard.model_facts import ModelFacts
from wizard.model_info import load_model_facts


def _facts(folder: Path, files: dict[str, Any]) -> ModelFacts:
    """The facts of a model folder holding these JSON files (config.json and its companions)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return load_model_facts(folder)


def _plan(
    row: LogRow, tmp_path: Path, *, logged_free: bool = False, max_total_tokens: int | None = None
) -> MemoryPlan:
    folder = tmp_path / row.name.split(",")[0].replace(" ", "_")
    target = _facts(folder, {"config.json": row.config, **row.extra_files})
    draft = None
    if row.draft_config is not None:
        draft = _facts(folder.with_name(folder.name + "-draft"), {"config.json": row.draft_config})
    gpu = lookup(row.gpu)
    free = None
    if logged_free and row.free_before_gib is not None:
        # nvidia-smi's free memory before the launch = what SGLang saw + its own context.
        free = row.free_before_gib + context_reserve_gib(
            gpu, row.tp, row.tp * row.pp // row.nnodes if row.nnodes > 1 else None)
    return plan_memory(MemoryInputs(
        target,
        gpu,
        row.gpus,
        row.tp,
        pp=row.pp,
        nnodes=row.nnodes,
        dp=row.dp,
        enable_dp_attention=row.dp_attention,
        mem_fraction=row.mem_fraction,
        sglang_version=row.version,
        free_gib=free,
        cpu_offload_gb=row.cpu_offload_gb,
        context_length=row.context_length,
        max_running_requests=row.max_running_requests,
        chunked_prefill_size=row.chunked_prefill_size,
        disable_cuda_graph=row.disable_cuda_graph,
        quantization=row.quantization,
        attention_backend=row.attention_backend,
        use_aiter=row.env.get("SGLANG_USE_AITER", "").lower() in ("1", "true"),
        disaggregation_mode=row.disaggregation_mode,
        page_size=row.page_size,
        enable_hierarchical_cache=row.enable_hierarchical_cache,
        hicache_ratio=row.hicache_ratio,
        max_total_tokens=max_total_tokens if max_total_tokens is not None else row.max_total_tokens,
        algorithm=row.algorithm,
        draft=draft,
        num_steps=row.num_steps,
        topk=row.topk,
        num_draft_tokens=row.num_draft_tokens,
        dtype=row.dtype,
        kv_cache_dtype=row.kv_cache_dtype,
        enable_piecewise_cuda_graph=row.enable_piecewise_cuda_graph,
        moe_a2a_backend=row.moe_a2a_backend,
        ep=row.ep,
        enable_dp_lm_head=row.enable_dp_lm_head,
        moe_dense_tp_size=row.moe_dense_tp_size,
    ))


def _err(planned: float, real: float) -> float:
    return (planned - real) / real * 100


def _formula_budget_gib(row: LogRow, plan: MemoryPlan) -> float:
    """SGLang's KV (and state) budget from the log's own free memory and weights: `free_before x
    fraction - weights`, less the recurrent-state pool the plan's per-request size gives."""
    assert row.free_before_gib is not None and row.weights_gib is not None
    budget = row.free_before_gib * plan.mem_fraction_static - row.weights_gib
    slots = _formula_mamba_slots(row, plan)
    return budget - slots * plan.mamba_state_per_request_mib / 1024


def _formula_mamba_slots(row: LogRow, plan: MemoryPlan) -> int:
    """`handle_max_mamba_cache`: the state pool takes `ratio / (1 + ratio)` of the rest; slots =
    that / the state of one request (0 for models without recurrent state)."""
    assert row.free_before_gib is not None and row.weights_gib is not None
    if not plan.mamba_state_per_request_mib:
        return 0
    rest = row.free_before_gib * plan.mem_fraction_static - row.weights_gib
    return int(rest * MAMBA_FULL_MEMORY_RATIO / (1 + MAMBA_FULL_MEMORY_RATIO) * 1024
               // plan.mamba_state_per_request_mib)


def test_plan_against_real_logs(tmp_path: Path) -> None:
    """The gate: over the rows, KV tokens within 5% median / 10% worst and weights within 3% / 6%
    (issue 22). Every row with the metric is in the gate but the capped and read-back pools."""
    kv_err: list[float] = []
    formula_err: list[float] = []
    weights_err: list[float] = []
    missed: list[str] = []
    lines = [
        f"{'row':<58} {'KV tokens real/plan (err)':>32} {'formula':>9} "
        f"{'weights GiB real/plan (err)':>30} {'free GiB real/plan':>20} {'KV B/token':>22}"
    ]
    for row in ROWS:
        plan = _plan(row, tmp_path)
        kv = weights = free = per_token = with_free = "-"
        if row.kv_tokens is not None:
            e = _err(plan.kv_tokens, row.kv_tokens)
            if row.max_total_tokens is not None:
                missed.append(f"{row.name}: KV tokens {e:+.1f}% (the --max-total-tokens cap)")
            elif row.fraction_read_back:
                missed.append(f"{row.name}: KV tokens {e:+.1f}% (fraction read back from the log)")
            else:
                kv_err.append(e)
            kv = f"{row.kv_tokens:,}/{plan.kv_tokens:,} ({e:+.1f}%)"
            capped = row.max_total_tokens is not None  # the pool would hold more: no formula
            if row.free_before_gib is not None and row.weights_gib is not None and not capped:
                budget = _formula_budget_gib(row, plan)
                e2 = _err(int(budget * 2**30 // plan.kv_cell_bytes), row.kv_tokens)
                formula_err.append(e2)
                with_free = f"{e2:+.2f}%"
        if row.weights_gib is not None:
            planned = plan.weights_gib if row.pp_rank is None else plan.stage_weights_gib[row.pp_rank]
            e = _err(planned, row.weights_gib)
            weights_err.append(e)
            weights = f"{row.weights_gib:.2f}/{planned:.2f} ({e:+.1f}%)"
        if row.free_before_gib is not None:
            free = f"{row.free_before_gib:.2f}/{plan.free_before_load_gib:.2f}"
        if row.kv_bytes_per_token is not None:
            e = _err(plan.kv_bytes_per_token, row.kv_bytes_per_token)
            per_token = f"{row.kv_bytes_per_token:,.0f}/{plan.kv_bytes_per_token:,} ({e:+.2f}%)"
            assert abs(e) < 0.5, f"{row.name}: KV bytes per token {per_token}"
        lines.append(
            f"{row.name:<58} {kv:>32} {with_free:>9} {weights:>30} {free:>20} {per_token:>22}"
        )
    abs_kv = [abs(e) for e in kv_err]
    abs_w = [abs(e) for e in weights_err]
    lines.append(
        f"KV tokens: median {statistics.median(abs_kv):.1f}%, worst {max(abs_kv):.1f}% "
        f"({len(abs_kv)} rows) | SGLang's formula on the logged numbers: worst "
        f"{max(abs(e) for e in formula_err):.2f}% | weights: median "
        f"{statistics.median(abs_w):.1f}%, worst {max(abs_w):.1f}% ({len(abs_w)} rows)"
    )
    lines.extend(f"outside the gate: {m}" for m in missed)
    print("\n" + "\n".join(lines))
    assert statistics.median(abs_kv) <= 5.0 and max(abs_kv) <= 10.0
    # Two-decimal GB in the logs: 0.01 GiB of a few GiB of KV is a few tenths of a percent.
    assert max(abs(e) for e in formula_err) <= 1.0
    assert statistics.median(abs_w) <= 3.0 and max(abs_w) <= 6.0


@pytest.mark.parametrize("row", [r for r in ROWS if r.logged_fraction], ids=lambda r: r.name)
def test_automatic_fraction_is_the_logged_one(row: LogRow, tmp_path: Path) -> None:
    """SGLang's automatic mem_fraction_static as its server_args line printed it (the release's
    heuristic: activation, CUDA-graph and prefill-graph reserve, floor, VLM factor)."""
    assert _plan(row, tmp_path).mem_fraction_static == pytest.approx(row.logged_fraction, abs=1e-9)


@pytest.mark.parametrize("row", [r for r in ROWS if r.mamba_slots], ids=lambda r: r.name)
def test_recurrent_state_slots_follow_sglang(row: LogRow, tmp_path: Path) -> None:
    """`max_mamba_cache_size` from the log's own free memory and weights with the plan's state per
    request (`handle_max_mamba_cache`), and the plan's own pool next to it."""
    plan = _plan(row, tmp_path)
    assert _formula_mamba_slots(row, plan) == row.mamba_slots
    planned = round(plan.mamba_pool_gib * 1024 / plan.mamba_state_per_request_mib)
    assert row.mamba_slots is not None
    assert abs(planned - row.mamba_slots) / row.mamba_slots < 0.10


@pytest.mark.parametrize("row", [r for r in ROWS if r.free_before_gib], ids=lambda r: r.name)
def test_free_memory_before_loading_is_close_to_the_log(row: LogRow, tmp_path: Path) -> None:
    """The card minus CUDA context and NCCL buffers is what SGLang measured, within 1.5 GiB."""
    plan = _plan(row, tmp_path)
    assert row.free_before_gib is not None
    assert plan.free_before_load_gib == pytest.approx(row.free_before_gib, abs=1.5)
    assert plan.free_memory_source == "card"
    assert _plan(row, tmp_path, logged_free=True).free_memory_source == "nvidia-smi"


@pytest.mark.parametrize("row", [r for r in ROWS if r.started], ids=lambda r: r.name)
def test_launches_that_started_are_not_refused(row: LogRow, tmp_path: Path) -> None:
    """Every logged launch started and served: the plan must not say it will not fit, nor be
    short of room outside the static pool ("tight" only for the context-length reason)."""
    plan = _plan(row, tmp_path)
    assert plan.verdict != "will_not_fit", plan.reasons
    assert plan.headroom_gib >= 0, plan.reasons


@pytest.mark.parametrize("row", [r for r in ROWS if r.started is False], ids=lambda r: r.name)
def test_launches_that_failed_at_start_are_refused(row: LogRow, tmp_path: Path) -> None:
    """A logged launch that ran out of memory at start (after its KV cache line) is one the plan
    says will not fit."""
    assert _plan(row, tmp_path).verdict == "will_not_fit"


@pytest.mark.parametrize("row", [r for r in ROWS if r.hicache_host_gb], ids=lambda r: r.name)
def test_hierarchical_cache_host_pool_follows_sglang(row: LogRow, tmp_path: Path) -> None:
    """The host pool SGLang logs ("Allocating N GB host memory for hierarchical KV cache", GB of
    1e9 B): the plan's host pool over the log's own device pool (its KV tokens as the cap) is the
    logged size to the printed 0.01 GB, and the plan made from the card is within 1%."""
    assert row.hicache_host_gb is not None and row.kv_tokens is not None
    assert row.mem_fraction is not None
    # (a larger pool than the log's, capped at the log's tokens: exactly its device pool)
    roomier = dataclasses.replace(row, mem_fraction=row.mem_fraction + 0.05)
    held = _plan(roomier, tmp_path, max_total_tokens=row.kv_tokens)
    assert held.kv_tokens == row.kv_tokens
    assert held.hicache_host_gib * 2**30 / 1e9 == pytest.approx(row.hicache_host_gb, abs=0.005)
    planned = _plan(row, tmp_path).hicache_host_gib * 2**30 / 1e9
    assert planned == pytest.approx(row.hicache_host_gb, rel=0.01)


@pytest.mark.parametrize("row", [r for r in ROWS if r.max_total_tokens], ids=lambda r: r.name)
def test_max_total_tokens_caps_the_pool_as_logged(row: LogRow, tmp_path: Path) -> None:
    """`--max-total-tokens` below what the pool would hold: SGLang allocates exactly the cap
    (`_apply_token_constraints`), and without it the plan's pool is larger than the cap."""
    assert _plan(row, tmp_path).kv_tokens == row.kv_tokens == row.max_total_tokens
    assert _plan(row, tmp_path, max_total_tokens=0).kv_tokens > row.max_total_tokens


@pytest.mark.parametrize("row", [r for r in ROWS if r.draft_weights_gib], ids=lambda r: r.name)
def test_draft_as_loaded_follows_the_log(row: LogRow, tmp_path: Path) -> None:
    """The draft's "Load weight end ... mem usage=": its layers plus the vocabulary-sized
    embedding and head it builds for itself before taking the target's (`init_lm_head`), within
    the weights gate's 6%; its KV cache has the logged size per token (to the log's 0.01 GB)."""
    plan = _plan(row, tmp_path)
    assert row.draft_weights_gib is not None
    assert plan.draft_loaded_gib == pytest.approx(row.draft_weights_gib, rel=0.06)
    assert plan.draft_loaded_gib > plan.draft_weights_gib  # the embedding it gives up
    if row.draft_kv_bytes_per_token is not None and row.kv_tokens is not None:
        logged_k = row.draft_kv_bytes_per_token * row.kv_tokens / 2 / 2**30
        planned_k = plan.draft_kv_bytes_per_token * row.kv_tokens / 2 / 2**30
        assert round(planned_k, 2) == pytest.approx(logged_k, abs=0.005)


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r.logged_max_running_requests], ids=lambda r: r.name
)
def test_request_table_rows_follow_sglang(row: LogRow, tmp_path: Path) -> None:
    """The request slots SGLang logs ("max_running_requests=N" beside max_total_num_tokens): the
    rows of the plan's request table (`_resolve_max_num_reqs`: the given value, else
    `clamp(tokens / context x 512, 2048, 4096)`; a decode server would add its transfer rows)."""
    assert _plan(row, tmp_path).req_to_token_rows == row.logged_max_running_requests
