"""PyTorch's caching-allocator policy as `wizard.cuda_segments` replays it, and what it adds to
the weights SGLang measures under --cpu-offload-gb (OffloaderV1)."""

from __future__ import annotations

from pathlib import Path

import families as fam
import pytest

from wizard.cuda_segments import (
    LargePool,
    LayerBuild,
    offload_build_overhead,
    pinned_host_bytes,
    pinned_page_table_bytes,
    segment_size,
)
from wizard.model_files import ModelReadError
from wizard.model_info import load_model_facts

MIB = 1 << 20
GIB = 1 << 30


def test_segment_sizes_follow_the_allocator() -> None:
    assert segment_size(4 * MIB) == 20 * MIB  # 1-10 MiB requests share 20 MiB segments
    assert segment_size(11 * MIB) == 12 * MIB  # larger ones are rounded up to 2 MiB
    pool = LargePool()
    assert pool.malloc(512 * 1024) is None  # the small pool is not replayed
    a, b = pool.malloc(4 * MIB), pool.malloc(4 * MIB)
    assert a is not None and b is not None and len(pool.segments) == 1  # both in one segment


def test_best_fit_splits_the_smallest_block_that_holds_the_request() -> None:
    pool = LargePool()
    small, large = pool.malloc(32 * MIB), pool.malloc(GIB)
    pool.free(small)
    pool.free(large)
    cache = pool.malloc(64 * MIB)  # 32 MiB is too small: the 1 GiB block is split
    assert cache is not None and cache.segment == 1
    assert pool.reserved_after_empty_cache() == GIB  # the whole segment stays for 64 MiB
    pool.free(cache)  # the split parts merge again; nothing is held
    assert pool.reserved_after_empty_cache() == 0
    assert [b.size for b in pool.segments[1]] == [GIB]


def test_a_remainder_of_one_mib_or_less_is_not_split_off() -> None:
    pool = LargePool()
    pool.free(pool.malloc(12 * MIB))
    block = pool.malloc(11 * MIB + 512)  # 12 MiB block, 1 MiB left: handed out whole
    assert block is not None and block.size == 12 * MIB
    assert len(pool.segments[0]) == 1


def _hybrid(rope_layer: int, count: int = 8) -> tuple[LayerBuild, ...]:
    experts = (2 * GIB, GIB)  # w13, w2 of one layer's routed experts on one GPU
    layers = []
    for index in range(count):
        buffer = 64 * MIB if index == rope_layer else 0
        temporaries = (32 * MIB,) * 3 if buffer else ()
        layers.append(LayerBuild((48 * MIB, 32 * MIB, *experts), buffer, temporaries))
    return tuple(layers)


def test_a_rotary_cache_built_after_an_offloaded_layer_holds_a_freed_expert_block() -> None:
    """Qwen3.5's first full-attention layer is layer 3: its 64 MiB cos/sin cache takes the 1 GiB
    block layer 2's w2 left, and the head (970 MiB) the next one; 0.99 GiB more is held."""
    held = offload_build_overhead(_hybrid(3), 970 * MIB, 400 * GIB)
    assert held == GIB + GIB - 64 * MIB - 970 * MIB
    # Built in layer 0 (dense models), the cache gets a fresh segment and holds nothing freed.
    assert offload_build_overhead(_hybrid(0), 0, 400 * GIB) == 0


def test_layers_kept_on_the_gpu_take_the_freed_blocks_again() -> None:
    """A budget of three layers: the cache still splits a freed 1 GiB block (the free block
    after it is 928 MiB), and each later layer kept on the GPU carves its 48 + 32 MiB out of that
    segment again: four such layers leave 640 MiB unused, twelve leave nothing."""
    budget = 3 * (3 * GIB + 80 * MIB)
    assert offload_build_overhead(_hybrid(3), 0, budget) == GIB - 64 * MIB - 4 * 80 * MIB
    assert offload_build_overhead(_hybrid(3, count=16), 0, budget) == 0
    assert offload_build_overhead(_hybrid(3), 0, 0) == 0


def test_a_head_smaller_than_an_expert_block_holds_that_block() -> None:
    layers = (LayerBuild((448 * MIB, 900 * MIB)),) * 4
    assert offload_build_overhead(layers, 221 * MIB, 400 * GIB) == 448 * MIB - 221 * MIB
    assert offload_build_overhead(layers, 2 * GIB, 400 * GIB) == 0  # larger: a fresh segment


@pytest.mark.parametrize(
    ("extra", "rotary"),
    [
        ({}, 128),
        ({"partial_rotary_factor": 0.25}, 32),
        ({"rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.5}}, 64),
        ({"rotary_pct": 0.25}, 32),
        ({"rotary_dim": 96}, 96),
    ],
)
def test_rotary_dim_is_read_from_the_config(tmp_path: Path, extra: dict, rotary: int) -> None:
    family = fam.llama31_8b()
    family.config.update(extra)
    facts = load_model_facts(family.write(tmp_path / "m"))
    assert facts.rotary_dim == rotary


def test_mla_rotates_its_rope_head_dim(tmp_path: Path) -> None:
    facts = load_model_facts(fam.deepseek_v3().write(tmp_path / "m"))
    assert facts.rotary_dim == 64


def test_a_bad_partial_rotary_factor_names_the_key(tmp_path: Path) -> None:
    family = fam.llama31_8b()
    family.config["partial_rotary_factor"] = "quarter"
    with pytest.raises(ModelReadError, match="partial_rotary_factor"):
        load_model_facts(family.write(tmp_path / "m"))


def test_pinned_copies_are_rounded_to_powers_of_two_until_the_budget_is_met() -> None:
    """OffloaderV1 checks the budget before each parameter, so the last one may overshoot; each
    pinned copy is a power of two (PyTorch's pinned-memory allocator)."""
    layers = (LayerBuild((3 * MIB, GIB)), LayerBuild((3 * MIB, GIB)))
    assert pinned_host_bytes(layers, 0) == 0
    assert pinned_host_bytes(layers, 1) == 4 * MIB  # 3 MiB served as 4
    assert pinned_host_bytes(layers, 3 * MIB + 1) == 4 * MIB + GIB
    assert pinned_host_bytes(layers, 100 * GIB) == 2 * (4 * MIB + GIB)


def test_page_tables_take_one_eight_byte_entry_per_four_kib_page() -> None:
    assert pinned_page_table_bytes(0) == 0
    assert pinned_page_table_bytes(1) == 8  # a partial page still needs its entry
    assert pinned_page_table_bytes(512 * GIB) == GIB
