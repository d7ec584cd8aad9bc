"""Synthetic SGLang logs for benchmarks and UI tests (no SSH): a realistic start-up followed by
a burst of decode-batch lines, as `LogChunk`s with exact byte offsets like `follow_log` yields.

The screen engineer's input-latency bench feeds `burst_chunks()` / `aburst_chunks()` into the
log view; `bench/bench_log_stream.py` writes `startup_log_lines()` to a file on the sshd host.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

from wizard.remote.runs import LogChunk

_STARTUP = (
    "[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/models/Qwen3.6-27B', tp_size=2, "
    "speculative_algorithm='EAGLE', speculative_num_steps=1, speculative_eagle_topk=1)",
    "[2026-11-29 10:00:05 TP0] Init torch distributed begin.",
    "[2026-11-29 10:00:06 TP0] Init torch distributed ends. elapsed=1.02 s, mem usage=0.00 GB",
    "[2026-11-29 10:00:06 TP0] Load weight begin. avail mem=47.05 GB",
    *(
        f"Loading safetensors checkpoint shards: {round(100 * i / 15):3d}% Completed | {i}/15 [00:{i:02d}<00:15,  1.47s/it]"
        for i in range(16)
    ),
    "[2026-11-29 10:00:30 TP0] Load weight end. elapsed=24.01 s, type=Qwen3_5ForConditionalGeneration, "
    "avail mem=20.11 GB, mem usage=26.94 GB.",
    "[2026-11-29 10:00:31 TP0] KV Cache is allocated. #tokens: 413472, K size: 6.31 GB, V size: 6.31 GB",
    "[2026-11-29 10:00:31 TP0] Memory pool end. avail mem=6.80 GB",
    "[2026-11-29 10:00:32 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=6.62 GB",
    "[2026-11-29 10:00:32 TP0] Capture cuda graph bs [1, 2, 4, 8, 16, 24, 32]",
    *(
        f"Capturing batches (bs=32 avail_mem=6.60 GB): {round(100 * i / 7):3d}%|#####     | {i}/7 [00:0{i}<00:07]"
        for i in range(8)
    ),
    "[2026-11-29 10:00:40 TP0] Capture cuda graph end. Time elapsed: 8.10 s. mem usage=0.35 GB. avail mem=6.25 GB.",
    "[2026-11-29 10:00:45] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
    "[2026-11-29 10:00:50] The server is fired up and ready to roll!",
)


def startup_log_lines(extra_lines: int = 0) -> Iterator[str]:
    """An SGLang-style start-up, then `extra_lines` decode-batch lines (no newline characters)."""
    yield from _STARTUP
    for number in range(extra_lines):
        second = 51 + number // 2000
        yield (
            f"[2026-11-29 {10 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d} TP0] Decode batch, "
            f"#running-req: 8, #token: {number}, token usage: 0.12, accept len: 2.71, "
            f"gen throughput (token/s): 812.{number % 100:02d}, #queue-req: 0,"
        )


def burst_chunks(total_lines: int = 1_000_000, lines_per_chunk: int = 2000) -> Iterator[LogChunk]:
    """The start-up plus a burst, `lines_per_chunk` lines per chunk, offsets as in the file."""
    offset = 0
    batch: list[str] = []
    extra = max(0, total_lines - len(_STARTUP))
    for line in startup_log_lines(extra):
        batch.append(line)
        if len(batch) >= lines_per_chunk:
            size = sum(len(item.encode()) + 1 for item in batch)
            yield LogChunk(offset, offset + size, batch)
            offset += size
            batch = []
    if batch:
        size = sum(len(item.encode()) + 1 for item in batch)
        yield LogChunk(offset, offset + size, batch)


async def aburst_chunks(
    total_lines: int = 1_000_000, lines_per_chunk: int = 2000
) -> AsyncIterator[LogChunk]:
    """`burst_chunks` as an async stream that gives the event loop a turn between chunks."""
    for chunk in burst_chunks(total_lines, lines_per_chunk):
        yield chunk
        await asyncio.sleep(0)
