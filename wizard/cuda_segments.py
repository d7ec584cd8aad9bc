"""What PyTorch's CUDA caching allocator still holds after `torch.cuda.empty_cache()`.

SGLang measures the weights as the drop in free device memory around model loading ("Load weight
end. ... mem usage="), after `empty_cache` (`get_available_gpu_memory(empty_cache=True)`). That call
returns only segments with no live block in them. Under `--cpu-offload-gb` (OffloaderV1) each decoder
layer is built on the GPU and its parameters are then copied to pinned host memory, which frees their
blocks; a tensor that stays on the GPU and is created later (the rotary cos/sin cache built in the
first full-attention layer of a hybrid stack, the LM head built after the layers) is carved out of
one of those freed blocks, and its whole segment stays reserved.

`LargePool` replays PyTorch's policy for the large pool (requests above 1 MiB;
`c10/cuda/CUDACachingAllocator.cpp`): a request takes the smallest cached block that holds it
(`get_free_block`, best fit), the rest of a block is split off when more than 1 MiB is left
(`should_split`), a new segment is 20 MiB for requests under 10 MiB and the request rounded up to
2 MiB otherwise (`get_allocation_size`), freed blocks merge with free neighbours of their segment, and
`empty_cache` releases segments that are entirely free (`release_cached_blocks`). The small pool
(requests up to 1 MiB, 2 MiB segments) is not replayed: what it can pin is a few MiB.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

MIB = 1 << 20
SMALL_SIZE = 1 * MIB  # kSmallSize: requests up to this go to the small pool
MIN_BLOCK_SIZE = 512  # kMinBlockSize: every request is rounded up to a multiple of it
MIN_LARGE_ALLOC = 10 * MIB  # kMinLargeAlloc
LARGE_BUFFER = 20 * MIB  # kLargeBuffer: the segment for requests from 1 to 10 MiB
ROUND_LARGE = 2 * MIB  # kRoundLarge


def _round_up(value: int, to: int) -> int:
    return -(-value // to) * to


def request_size(nbytes: int) -> int:
    """The size the allocator serves for a tensor of `nbytes` (`round_size`)."""
    return max(MIN_BLOCK_SIZE, _round_up(max(nbytes, 1), MIN_BLOCK_SIZE))


def segment_size(size: int) -> int:
    """The segment `cudaMalloc`ed when no cached block holds a request of `size` (rounded)."""
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return _round_up(size, ROUND_LARGE)


@dataclass(eq=False)  # blocks are found by identity (`list.index`), never by value
class _Block:
    size: int
    segment: int
    live: bool = False


@dataclass
class LargePool:
    """The large pool of one device and stream, block by block (see the module docstring)."""

    segments: list[list[_Block]] = field(default_factory=list)
    live_bytes: int = 0

    def malloc(self, nbytes: int) -> _Block | None:
        """Serve a tensor of `nbytes`; None for a small-pool request (not replayed)."""
        size = request_size(nbytes)
        if size <= SMALL_SIZE:
            return None
        best: _Block | None = None
        for blocks in self.segments:
            for block in blocks:
                if not block.live and block.size >= size and (best is None or block.size < best.size):
                    best = block
        if best is None:
            index = len(self.segments)
            best = _Block(segment_size(size), index)
            self.segments.append([best])
        blocks = self.segments[best.segment]
        rest = best.size - size
        if rest > SMALL_SIZE:  # should_split (large pool)
            best.size = size
            blocks.insert(blocks.index(best) + 1, _Block(rest, best.segment))
        best.live = True
        self.live_bytes += best.size
        return best

    def free(self, block: _Block | None) -> None:
        """Return a block; it merges with the free blocks beside it in its segment."""
        if block is None:
            return
        block.live = False
        self.live_bytes -= block.size
        blocks = self.segments[block.segment]
        at = blocks.index(block)
        if at + 1 < len(blocks) and not blocks[at + 1].live:
            block.size += blocks.pop(at + 1).size
        if at > 0 and not blocks[at - 1].live:
            blocks[at - 1].size += blocks.pop(at).size

    def reserved_after_empty_cache(self) -> int:
        """Bytes of the segments `empty_cache` cannot release (any live block in them)."""
        return sum(
            sum(b.size for b in blocks) for blocks in self.segments if any(b.live for b in blocks)
        )


@dataclass(frozen=True)
class LayerBuild:
    """One decoder layer as the GPU sees it while it is built: its parameter tensors in bytes
    (per GPU, in construction order) and the bytes of a buffer it creates first, if any (the
    rotary cos/sin cache: `get_rope` runs before the projections in the first attention layer,
    built from `temporaries` that are freed again)."""

    params: tuple[int, ...]
    buffer: int = 0
    temporaries: tuple[int, ...] = ()


@functools.lru_cache(maxsize=64)
def offload_build_overhead(layers: tuple[LayerBuild, ...], head: int, offload_bytes: int) -> int:
    """Bytes beyond the live tensors that stay reserved after `empty_cache` when the layers are
    built one by one and each is moved to host memory until `offload_bytes` are offloaded
    (OffloaderV1 `maybe_offload_to_cpu`: parameter by parameter, checking the budget before
    each), then the head (`head` bytes, 0 when tied or on another stage) is built. The same
    build without offload is subtracted: this is what offloading adds. Cached: the memory plan
    asks again for every fix it tries."""
    return _build_waste(layers, head, offload_bytes) - _build_waste(layers, head, 0)


GPU_PAGE = 4096  # the GPU maps pinned system memory in 4 KiB pages (the host's page size)
PTE_BYTES = 8  # one page-table entry per page, in device memory


def pinned_host_bytes(layers: tuple[LayerBuild, ...], offload_bytes: int) -> int:
    """Bytes of pinned host memory OffloaderV1 takes for `offload_bytes` of parameters: the same
    parameter-by-parameter walk as the build, each copy served by PyTorch's pinned-memory
    allocator, which rounds every request up to a power of two (`CachingHostAllocator`)."""
    pinned = offloaded = 0
    for layer in layers:
        for nbytes in layer.params:
            if offloaded >= offload_bytes:
                return pinned
            pinned += 1 << max(nbytes - 1, 0).bit_length()
            offloaded += nbytes
    return pinned


def pinned_page_table_bytes(pinned_bytes: int) -> int:
    """Device memory the driver's page tables take to map `pinned_bytes` of pinned host memory
    into the GPU's address space (every `cudaHostAlloc` block is mapped under unified virtual
    addressing): one 8-byte entry per 4 KiB page, 1/512 of the pinned bytes."""
    return -(-pinned_bytes // GPU_PAGE) * PTE_BYTES


def _build_waste(layers: tuple[LayerBuild, ...], head: int, offload_bytes: int) -> int:
    pool = LargePool()
    offloaded = 0
    for layer in layers:
        if layer.buffer:
            scratch = [pool.malloc(n) for n in layer.temporaries]
            pool.malloc(layer.buffer)
            for block in scratch:
                pool.free(block)
        blocks = [pool.malloc(n) for n in layer.params]
        for block, nbytes in zip(blocks, layer.params, strict=True):
            if offloaded >= offload_bytes:
                break
            pool.free(block)
            offloaded += nbytes
    if head:
        pool.malloc(head)
    return pool.reserved_after_empty_cache() - pool.live_bytes
