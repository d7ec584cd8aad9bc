"""Named conformance cases: every try of incidents.md and the reference's executed cases.

Each entry holds the command as flags with `{kind}` placeholders for the tiny model folders
(`models.py`), the environment, the GPU kind, per-version spellings where a flag was renamed, and
what the reference recorded per version (`expected`: verdict, and stage / exception / where or key
effective values). SGLang's real results for these cases are committed as
`tests/conformance/fixtures/named-results-<V>.json` (written by `conformance named
--write-fixtures`), so unit tests of other areas can use them without the venvs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

L = "--model-path {llama}"
EAGLE_L = f"{L} --speculative-algorithm EAGLE --speculative-draft-model-path {{llama}}"
SPEC_V2_ON = {"SGLANG_ENABLE_SPEC_V2": "1"}
SPEC_V2_OFF = {"SGLANG_ENABLE_SPEC_V2": "0"}
NOBUF_23 = "--mamba-radix-cache-strategy"


def _e(verdict: str, exception: str | None = None, where: str | None = None,
       stage: str | None = None, **effective: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"verdict": verdict}
    if exception:
        out["exception"] = exception
    if where:
        out["where"] = where
    if stage:
        out["stage"] = stage
    if effective:
        out["effective"] = effective
    return out


def _ok(algo: str, steps: int | None, topk: int | None, draft: int | None,
        **more: Any) -> dict[str, Any]:
    return _e("ok", speculative_algorithm=algo, speculative_num_steps=steps,
              speculative_eagle_topk=topk, speculative_num_draft_tokens=draft, **more)


ARGPARSE = _e("error", "SystemExit", stage="argparse")

# (id, argv template, env, gpu, gpus, {version: argv override}, {version: expected}, note)
NAMED: list[dict[str, Any]] = [
    # ---- incidents.md
    {"id": "I1-try1", "gpu": "A6000", "gpus": 2,
     "argv": "--model-path {qwen35} --tensor-parallel-size 2 --speculative-algorithm NEXTN "
             "--speculative-num-draft-tokens 1",
     "expected": {"0.5.11": _e("error", "ValueError", "server_args.py:2453"),
                  "0.5.23": _e("error", "AssertionError", "arg_groups/speculative_hook.py:1162")}},
    {"id": "I1-try2", "gpu": "A6000", "gpus": 2, "env": SPEC_V2_ON,
     "argv": "--model-path {qwen35} --tensor-parallel-size 2 --speculative-algorithm NEXTN "
             "--speculative-num-draft-tokens 1 --mamba-scheduler-strategy extra_buffer",
     "expected": {"0.5.11": _e("error", "AssertionError", "server_args.py:3521"),
                  "0.5.23": ARGPARSE}},
    {"id": "I1-try3", "gpu": "A6000", "gpus": 2, "env": SPEC_V2_ON,
     "argv": "--model-path {qwen35} --tensor-parallel-size 2 --speculative-algorithm NEXTN "
             "--speculative-num-steps 1 --speculative-eagle-topk 1 --mamba-scheduler-strategy "
             "extra_buffer --trust-remote-code --dtype bfloat16",
     "expected": {"0.5.11": _ok("EAGLE", 1, 1, 2), "0.5.23": ARGPARSE}},
    {"id": "I1-try3-0.5.23-spelling", "gpu": "A6000", "gpus": 2, "env": SPEC_V2_ON,
     "argv": "--model-path {qwen35} --tensor-parallel-size 2 --speculative-algorithm NEXTN "
             "--speculative-num-steps 1 --speculative-eagle-topk 1 --mamba-radix-cache-strategy "
             "extra_buffer --trust-remote-code --dtype bfloat16",
     "expected": {"0.5.11": ARGPARSE, "0.5.23": _ok("EAGLE", 1, 1, 2)}},
    {"id": "I2-try1", "gpu": "B200", "gpus": 8, "env": SPEC_V2_ON,
     "argv": "--model-path {qwen35moe} --tp-size 8 --speculative-algorithm NEXTN "
             "--speculative-num-draft-tokens 2 --speculative-eagle-topk 1",
     "note": "real hardware was RTX PRO 6000 (SM120); B200 is the nearest faked kind",
     "expected": {"0.5.11": _e("error", "ValueError", "server_args.py:2453"),
                  "0.5.23": _e("error", "AssertionError", "arg_groups/speculative_hook.py:1162")}},
    {"id": "I2-try2", "gpu": "B200", "gpus": 8, "env": SPEC_V2_ON,
     "argv": "--model-path {qwen35moe} --tp-size 8 --speculative-algorithm NEXTN "
             "--speculative-num-draft-tokens 2 --speculative-eagle-topk 1 "
             "--mamba-scheduler-strategy extra_buffer",
     "expected": {"0.5.11": _e("error", "AssertionError", "server_args.py:3521"),
                  "0.5.23": ARGPARSE}},
    {"id": "I2-try3", "gpu": "B200", "gpus": 8, "env": SPEC_V2_ON,
     "argv": "--model-path {qwen35moe} --tp-size 8 --speculative-algorithm NEXTN "
             "--mamba-scheduler-strategy extra_buffer",
     "expected": {"0.5.11": _ok("EAGLE", 3, 1, 4), "0.5.23": ARGPARSE}},
    {"id": "I3-try1", "argv": f"{L} --num-speculative-tokens 16",
     "expected": {"0.5.11": ARGPARSE, "0.5.23": ARGPARSE}},
    {"id": "I3-try2",
     "argv": f"{L} --speculative-algorithm EAGLE3 --speculative-draft-model-path {{eagle3_draft}} "
             "--speculative-num-draft-tokens 16 --speculative-eagle-topk 1",
     "expected": {"0.5.11": _e("error", "AssertionError", "server_args.py:3521"),
                  "0.5.23": _e("error", "AssertionError", "arg_groups/speculative_hook.py:1162")}},
    {"id": "I3-try3",
     "argv": f"{L} --speculative-algorithm EAGLE3 --speculative-draft-model-path {{eagle3_draft}} "
             "--speculative-num-draft-tokens 16 --speculative-eagle-topk 1 "
             "--speculative-num-steps 1",
     "expected": {"0.5.11": _ok("EAGLE3", 1, 1, 2), "0.5.23": _ok("EAGLE3", 1, 1, 2)}},
    # ---- reference §5, S01-S25 (draft = the target itself, as the reference ran them)
    {"id": "S01", "argv": EAGLE_L,
     "expected": {v: _ok("EAGLE", 5, 4, 8, page_size=1, attention_backend="fa3",
                         disable_overlap_schedule=False) for v in ("0.5.11", "0.5.23")}},
    {"id": "S02", "argv": f"{L} --speculative-algorithm EAGLE3 --speculative-draft-model-path "
                          "{llama} --speculative-num-draft-tokens 16 --speculative-eagle-topk 1",
     "expected": {"0.5.11": _e("error", "AssertionError", "server_args.py:3521"),
                  "0.5.23": _e("error", "AssertionError", "arg_groups/speculative_hook.py:1162")}},
    {"id": "S03", "argv": f"{L} --speculative-algorithm EAGLE3 --speculative-draft-model-path "
                          "{llama} --speculative-num-draft-tokens 16 --speculative-eagle-topk 1 "
                          "--speculative-num-steps 1",
     "expected": {v: _ok("EAGLE3", 1, 1, 2) for v in ("0.5.11", "0.5.23")}},
    {"id": "S04", "argv": f"{EAGLE_L} --speculative-num-steps 3",
     "expected": {"0.5.11": _e("error", "TypeError", "server_args.py:3549"),
                  "0.5.23": _e("error", "TypeError", "arg_groups/speculative_hook.py:1274")}},
    {"id": "S05", "argv": f"{EAGLE_L} --speculative-num-steps 3 --speculative-eagle-topk 4 "
                          "--speculative-num-draft-tokens 8",
     "expected": {"0.5.11": _ok("EAGLE", 3, 4, 8, disable_overlap_schedule=True,
                                attention_backend="flashinfer"),
                  "0.5.23": _ok("EAGLE", 3, 4, 8, disable_overlap_schedule=False,
                                attention_backend="flashinfer")}},
    {"id": "S06", "argv": f"{EAGLE_L} --speculative-num-steps 3 --speculative-eagle-topk 4 "
                          "--speculative-num-draft-tokens 8 --attention-backend triton "
                          "--page-size 16",
     "expected": {"0.5.11": _e("error", "ValueError"),
                  "0.5.23": _ok("EAGLE", 3, 4, 8, page_size=16, attention_backend="triton")}},
    {"id": "S07", "gpu": "B200", "argv": f"{EAGLE_L} --attention-backend trtllm_mha",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "S08", "gpu": "B200", "argv": f"{EAGLE_L} --speculative-num-steps 3 "
                                         "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
     "expected": {v: _ok("EAGLE", 3, 1, 4, attention_backend="trtllm_mha", page_size=64)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "S08-auto", "gpu": "B200", "argv": EAGLE_L,
     "expected": {v: _ok("EAGLE", 5, 4, 8, attention_backend="flashinfer", page_size=1)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "S09", "argv": "--model-path {dsv3} --speculative-algorithm NEXTN",
     "expected": {v: _ok("EAGLE", 3, 1, 4, attention_backend="fa3")
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "S09-draft", "argv": "--model-path {dsv3} --speculative-algorithm NEXTN "
                                "--speculative-draft-model-path {dsv3}",
     "expected": {v: _ok("EAGLE", 3, 1, 4) for v in ("0.5.11", "0.5.23")}},
    {"id": "S10", "argv": "--model-path {qwen35} --speculative-algorithm NEXTN",
     "expected": {"0.5.11": _e("error", "ValueError", "server_args.py:2453"),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, mamba_radix_cache_strategy="extra_buffer")}},
    {"id": "S10-B200", "gpu": "B200", "argv": "--model-path {qwen35} --speculative-algorithm NEXTN",
     "expected": {"0.5.11": _e("error", "ValueError", "server_args.py:2453"),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, attention_backend="triton", page_size=1)}},
    {"id": "S11", "argv": "--model-path {qwen35} --speculative-algorithm NEXTN "
                          "--speculative-num-draft-tokens 1 --tp-size 2", "gpus": 2,
     "expected": {"0.5.11": _e("error", "ValueError", "server_args.py:2453"),
                  "0.5.23": _e("error", "AssertionError", "arg_groups/speculative_hook.py:1162")}},
    {"id": "S12", "env": SPEC_V2_ON,
     "argv": "--model-path {qwen35} --speculative-algorithm NEXTN --speculative-num-draft-tokens 1 "
             "--mamba-scheduler-strategy extra_buffer",
     "expected": {"0.5.11": _e("error", "AssertionError", "server_args.py:3521"),
                  "0.5.23": ARGPARSE}},
    {"id": "S13", "env": SPEC_V2_ON,
     "argv": "--model-path {qwen35} --speculative-algorithm NEXTN --speculative-num-steps 1 "
             "--speculative-eagle-topk 1 --mamba-scheduler-strategy extra_buffer "
             "--trust-remote-code --dtype bfloat16",
     "versions": {"0.5.23": "--model-path {qwen35} --speculative-algorithm NEXTN "
                            "--speculative-num-steps 1 --speculative-eagle-topk 1 "
                            f"{NOBUF_23} extra_buffer --trust-remote-code --dtype bfloat16"},
     "expected": {v: _ok("EAGLE", 1, 1, 2, disable_overlap_schedule=False)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "S14",
     "argv": "--model-path {qwen35} --speculative-algorithm NEXTN --mamba-scheduler-strategy "
             "extra_buffer --mamba-track-interval 2 --speculative-num-steps 3 "
             "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
     "versions": {"0.5.23": "--model-path {qwen35} --speculative-algorithm NEXTN "
                            f"{NOBUF_23} extra_buffer --mamba-track-interval 2 "
                            "--speculative-num-steps 3 --speculative-eagle-topk 1 "
                            "--speculative-num-draft-tokens 4"},
     "expected": {"0.5.11": _e("error", "AssertionError"),
                  "0.5.23": _e("error", "AssertionError", "arg_groups/mamba_hook.py:133")}},
    {"id": "S15",
     "argv": "--model-path {qwen35} --speculative-algorithm NEXTN --mamba-scheduler-strategy "
             "extra_buffer --mamba-track-interval 2",
     "versions": {"0.5.23": "--model-path {qwen35} --speculative-algorithm NEXTN "
                            f"{NOBUF_23} extra_buffer --mamba-track-interval 2"},
     "expected": {v: _ok("EAGLE", 3, 1, 4) for v in ("0.5.11", "0.5.23")}},
    {"id": "S16", "argv": f"--model-path {{qwen35}} --speculative-algorithm NEXTN {NOBUF_23} "
                          "no_buffer",
     "expected": {"0.5.11": ARGPARSE, "0.5.23": _e("error", "AssertionError")}},
    {"id": "S16-no-overlap", "argv": f"--model-path {{qwen35}} --speculative-algorithm NEXTN "
                                     f"{NOBUF_23} no_buffer --disable-overlap-schedule",
     "expected": {"0.5.11": ARGPARSE, "0.5.23": _ok("EAGLE", 3, 1, 4)}},
    {"id": "S17", "argv": f"{L} --speculative-algorithm NGRAM",
     "expected": {"0.5.11": _ok("NGRAM", None, 10, 12, disable_overlap_schedule=True),
                  "0.5.23": _ok("NGRAM", 1, 10, 12, disable_overlap_schedule=False)}},
    {"id": "S18", "argv": f"{L} --speculative-algorithm NGRAM --page-size 16",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "S18-flashinfer", "argv": f"{L} --speculative-algorithm NGRAM --page-size 16 "
                                     "--attention-backend flashinfer",
     "expected": {v: _e("ok") for v in ("0.5.11", "0.5.23")}},
    {"id": "S19", "argv": f"{L} --speculative-algorithm DFLASH --speculative-draft-model-path "
                          "{standalone_draft}",
     "expected": {"0.5.11": _ok("DFLASH", 1, 1, 16, disable_overlap_schedule=True),
                  "0.5.23": _ok("DFLASH", 1, 1, 16, disable_overlap_schedule=False)}},
    {"id": "S19-nodraft", "argv": f"{L} --speculative-algorithm DFLASH",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "S20", "argv": f"{EAGLE_L} --speculative-moe-runner-backend flashinfer_trtllm",
     "expected": {"0.5.11": _e("error", "AssertionError"), "0.5.23": _ok("EAGLE", 5, 4, 8)}},
    {"id": "S21", "argv": f"{EAGLE_L} --pp-size 2", "gpus": 2,
     "expected": {v: _e("error", "AssertionError", stage="check") for v in ("0.5.11", "0.5.23")}},
    {"id": "S22", "argv": f"{EAGLE_L} --speculative-num-steps 3 --speculative-eagle-topk 1 "
                          "--speculative-num-draft-tokens 4 --enable-mixed-chunk",
     "expected": {"0.5.11": _ok("EAGLE", 3, 1, 4, enable_mixed_chunk=False),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, enable_mixed_chunk=True)}},
    {"id": "S23", "argv": "--model-path {dsv3} --speculative-algorithm nextn",
     "expected": {"0.5.11": ARGPARSE, "0.5.23": _ok("EAGLE", 3, 1, 4)}},
    {"id": "S24", "argv": f"{EAGLE_L} --speculative-adaptive",
     "expected": {"0.5.11": _ok("EAGLE", 5, 4, 8, speculative_adaptive=False),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, speculative_adaptive=True)}},
    {"id": "S25", "argv": f"{EAGLE_L} --enable-lora --lora-paths a={{llama}}",
     "expected": {"0.5.11": _e("error", "ValueError", stage="check"),
                  "0.5.23": _ok("EAGLE", 5, 4, 8)}},
    # ---- reference §5.1
    {"id": "C44", "argv": "--model-path {qwen35} --speculative-algorithm NEXTN "
                          "--mamba-scheduler-strategy extra_buffer --page-size 48",
     "versions": {"0.5.23": f"--model-path {{qwen35}} --speculative-algorithm NEXTN {NOBUF_23} "
                            "extra_buffer --page-size 48"},
     "expected": {"0.5.11": _e("error", "AssertionError"),
                  "0.5.23": _e("error", "AssertionError", "arg_groups/mamba_hook.py:135")}},
    {"id": "D06", "argv": "--model-path {qwen35} --speculative-algorithm NEXTN "
                          "--mamba-scheduler-strategy extra_buffer --disable-radix-cache",
     "versions": {"0.5.23": f"--model-path {{qwen35}} --speculative-algorithm NEXTN {NOBUF_23} "
                            "extra_buffer --disable-radix-cache"},
     "expected": {"0.5.11": _e("error", "ValueError"), "0.5.23": _e("ok")}},
    {"id": "T14", "argv": "--model-path {qwen35} --speculative-algorithm NEXTN "
                          "--disable-radix-cache",
     "expected": {v: _ok("EAGLE", 3, 1, 4) for v in ("0.5.11", "0.5.23")}},
    {"id": "T16", "env": SPEC_V2_OFF,
     "argv": "--model-path {qwen35} --speculative-algorithm NEXTN --mamba-scheduler-strategy "
             "extra_buffer",
     "expected": {"0.5.11": _ok("EAGLE", 3, 1, 4, disable_overlap_schedule=True),
                  "0.5.23": ARGPARSE}},
    {"id": "D03", "gpu": "B200",
     "argv": "--model-path {qwen35} --speculative-algorithm NEXTN --speculative-num-steps 3 "
             "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
             "--mamba-scheduler-strategy extra_buffer",
     "versions": {"0.5.23": "--model-path {qwen35} --speculative-algorithm NEXTN "
                            "--speculative-num-steps 3 --speculative-eagle-topk 1 "
                            "--speculative-num-draft-tokens 4"},
     "expected": {v: _ok("EAGLE", 3, 1, 4, attention_backend="trtllm_mha", page_size=64)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "D03n", "gpu": "B200",
     "argv": "--model-path {qwen35} --speculative-algorithm NEXTN --speculative-num-steps 3 "
             "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
     "expected": {"0.5.11": _e("error", "ValueError"),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, attention_backend="trtllm_mha", page_size=64)}},
    {"id": "C60", "argv": "--model-path {qwen35} --speculative-algorithm NEXTN "
                          "--speculative-num-steps 3 --speculative-eagle-topk 2 "
                          "--speculative-num-draft-tokens 6",
     "expected": {"0.5.11": _e("error", "ValueError"),
                  "0.5.23": _ok("EAGLE", 3, 2, 6, attention_backend="flashinfer")}},
    {"id": "C60-extra", "argv": "--model-path {qwen35} --speculative-algorithm NEXTN "
                                "--speculative-num-steps 3 --speculative-eagle-topk 2 "
                                "--speculative-num-draft-tokens 6 --mamba-scheduler-strategy "
                                "extra_buffer",
     "expected": {"0.5.11": _ok("EAGLE", 3, 2, 6, disable_overlap_schedule=True,
                                attention_backend="flashinfer"), "0.5.23": ARGPARSE}},
    {"id": "D08", "argv": f"{L} --mamba-scheduler-strategy extra_buffer",
     "versions": {"0.5.23": f"{L} {NOBUF_23} extra_buffer"},
     "expected": {"0.5.11": _e("ok"), "0.5.23": _e("error", "ValueError")}},
    {"id": "T30", "argv": f"{L} --speculative-algorithm NGRAM --speculative-skip-dp-mlp-sync",
     "expected": {"0.5.11": _e("error", "AssertionError"), "0.5.23": ARGPARSE}},
    {"id": "T18", "gpus": 2, "argv": f"{L} --speculative-algorithm NGRAM --tp-size 2 --dp-size 2 "
                                     "--enable-dp-attention",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "T36", "gpus": 2, "argv": f"{L} --speculative-algorithm STANDALONE "
                                     "--speculative-draft-model-path {standalone_draft} "
                                     "--tp-size 2 --dp-size 2 --enable-dp-attention",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "C50", "gpus": 2, "argv": f"{L} --speculative-algorithm DFLASH "
                                     "--speculative-draft-model-path {standalone_draft} "
                                     "--tp-size 2 --dp-size 2 --enable-dp-attention",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "T38", "argv": f"{L} --speculative-algorithm DFLASH --speculative-draft-model-path "
                          "{standalone_draft} --speculative-num-draft-tokens 8 "
                          "--speculative-dflash-block-size 16",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "C49", "argv": f"{L} --speculative-algorithm NGRAM "
                          "--speculative-ngram-external-corpus-path x",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "T35", "argv": f"{EAGLE_L} --attention-backend flex_attention",
     "expected": {v: _e("error", "AssertionError") for v in ("0.5.11", "0.5.23")}},
    {"id": "C41", "argv": f"{L} --speculative-algorithm NGRAM --device cpu",
     "expected": {"0.5.11": _e("error", "ValueError"), "0.5.23": _e("ok")}},
    {"id": "C41e", "argv": f"{EAGLE_L} --speculative-num-steps 3 --speculative-eagle-topk 1 "
                           "--speculative-num-draft-tokens 4 --device cpu",
     "expected": {"0.5.11": _ok("EAGLE", 3, 1, 4, disable_overlap_schedule=False),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, disable_overlap_schedule=True)}},
    {"id": "T34", "env": SPEC_V2_OFF,
     "argv": f"{EAGLE_L} --speculative-num-steps 3 --speculative-eagle-topk 1 "
             "--speculative-num-draft-tokens 4",
     "expected": {"0.5.11": _ok("EAGLE", 3, 1, 4, disable_overlap_schedule=True),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, disable_overlap_schedule=False)}},
    {"id": "D04", "env": {"SGLANG_ENABLE_SPEC_V2": "on"},
     "argv": f"{EAGLE_L} --speculative-num-steps 3 --speculative-eagle-topk 1 "
             "--speculative-num-draft-tokens 4",
     "expected": {v: _ok("EAGLE", 3, 1, 4, disable_overlap_schedule=False)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "C54", "argv": f"{EAGLE_L} --speculative-num-steps 3 --speculative-eagle-topk 1 "
                          "--speculative-num-draft-tokens 4 --disable-overlap-schedule",
     "expected": {v: _ok("EAGLE", 3, 1, 4, disable_overlap_schedule=True)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "C55", "argv": "--model-path {dsv3} --speculative-algorithm NEXTN "
                          "--max-running-requests 256",
     "expected": {v: _ok("EAGLE", 3, 1, 4, max_running_requests=256)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "C57", "argv": "--model-path {dsv3} --speculative-algorithm NEXTN --speculative-adaptive",
     "expected": {"0.5.11": _ok("EAGLE", 3, 1, 4, speculative_adaptive=False),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, speculative_adaptive=True)}},
    {"id": "C57b", "argv": "--model-path {dsv3} --speculative-algorithm NEXTN "
                           "--speculative-adaptive --disable-overlap-schedule",
     "expected": {v: _ok("EAGLE", 3, 1, 4, speculative_adaptive=True)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "C58", "argv": "--model-path {dsv3} --speculative-algorithm NEXTN --speculative-adaptive "
                          "--speculative-num-steps 2 --speculative-eagle-topk 1 "
                          "--speculative-num-draft-tokens 3",
     "expected": {"0.5.11": _ok("EAGLE", 2, 1, 3, speculative_adaptive=False),
                  "0.5.23": _e("error", "ValueError")}},
    {"id": "C52", "argv": f"{EAGLE_L} --speculative-use-rejection-sampling",
     "expected": {"0.5.11": ARGPARSE, "0.5.23": _e("error", "ValueError")}},
    {"id": "C51", "argv": f"{EAGLE_L} --speculative-draft-sink-size 4",
     "expected": {"0.5.11": ARGPARSE, "0.5.23": _e("error", "ValueError")}},
    {"id": "C61", "argv": f"{EAGLE_L} --cuda-graph-max-bs 512",
     "expected": {"0.5.11": _e("ok"), "0.5.23": ARGPARSE}},
    {"id": "T39", "argv": f"{L} --speculative-algorithm MEDUSA",
     "expected": {"0.5.11": ARGPARSE, "0.5.23": _e("error", "ValueError")}},
    {"id": "C62", "argv": "--model-path {dsv3} --speculative-algorithm EAGLE3 "
                          "--speculative-draft-model-path {eagle3_draft}",
     "expected": {v: _ok("EAGLE3", 3, 1, 4) for v in ("0.5.11", "0.5.23")}},
    {"id": "D07", "argv": f"{L} --speculative-algorithm NEXTN",
     "expected": {v: _ok("EAGLE", 5, 4, 8) for v in ("0.5.11", "0.5.23")}},
    {"id": "E01", "argv": f"{L} --speculative-algorithm EAGLE --speculative-draft-model-path "
                          "/nonexistent/draft-folder",
     "expected": {"0.5.11": _e("ok"), "0.5.23": _e("error", "OSError")}},
    {"id": "T31", "argv": "--model-path {qwen3next} --speculative-algorithm NEXTN",
     "expected": {"0.5.11": _e("error", "ValueError"),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, mamba_radix_cache_strategy="extra_buffer")}},
    {"id": "C47", "gpus": 2, "argv": "--model-path {dsv3} --speculative-algorithm NEXTN "
                                     "--tp-size 2 --dp-size 2 --enable-dp-attention",
     "expected": {v: _ok("EAGLE", 3, 1, 4) for v in ("0.5.11", "0.5.23")}},
    {"id": "C56", "gpus": 2, "argv": "--model-path {dsv3} --speculative-algorithm NEXTN "
                                     "--tp-size 2 --dp-size 2 --enable-dp-attention "
                                     "--speculative-skip-dp-mlp-sync",
     "expected": {"0.5.11": _ok("EAGLE", 3, 1, 4), "0.5.23": ARGPARSE}},
    # ---- wide launches (issue 24): causes found by `conformance run --kind wide`
    # The Qwen3-MoE family's SM100 branch picks the flashinfer_trtllm MoE runner, which the
    # draft inherits (0.5.11 maps it to auto; 0.5.5-0.5.6 leave the draft's unset).
    {"id": "W01", "gpu": "B200", "argv": "--model-path {qwen3next}",
     "expected": {"0.5.11": _e("ok", speculative_moe_runner_backend="auto"),
                  "0.5.23": _e("ok", speculative_moe_runner_backend="flashinfer_trtllm")}},
    {"id": "W02", "gpu": "B200", "argv": "--model-path {qwen35moe} --quantization fp8",
     "expected": {"0.5.11": _e("ok", speculative_moe_runner_backend="auto"),
                  "0.5.23": _e("ok", speculative_moe_runner_backend="flashinfer_trtllm")}},
    # ROCm: the default attention backend of MHA models is aiter; MLA models get aiter only
    # with 16 or 128 KV heads per GPU (the tiny DeepSeek has 8: triton).
    {"id": "W03", "gpu": "MI300X", "argv": "--model-path {llama}",
     "expected": {v: _e("ok", attention_backend="aiter") for v in ("0.5.11", "0.5.23")}},
    {"id": "W04", "gpu": "MI300X", "argv": "--model-path {dsv3}",
     "expected": {v: _e("ok", attention_backend="triton") for v in ("0.5.11", "0.5.23")}},
    # 0.5.5.post2-0.5.6.x turn the overlap scheduler off for Qwen3-Next while the radix cache is
    # on (0.5.11: its no_buffer strategy does; 0.5.23 picks extra_buffer and keeps it)
    {"id": "W05", "argv": "--model-path {qwen3next}",
     "expected": {"0.5.6.post1": _e("ok", disable_overlap_schedule=True),
                  "0.5.11": _e("ok", disable_overlap_schedule=True),
                  "0.5.23": _e("ok", disable_overlap_schedule=False)}},
    # The quantization method must be registered on the platform: plain GPTQ is gone on CUDA in
    # later releases, MXFP4 exists on AMD only for gfx95
    {"id": "W06", "argv": "--model-path {llama} --quantization gptq",
     "expected": {"0.5.11": _e("ok"), "0.5.23": _e("error", "ValueError")}},
    {"id": "W07", "gpu": "MI300X", "argv": "--model-path {llama} --quantization mxfp4",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    # The hicache step's decode backend for an implicit FA3 decode: flashinfer only where
    # flashinfer is available (CUDA), triton on ROCm (0.5.5-0.5.13; later releases leave it unset)
    {"id": "W08", "gpu": "MI300X",
     "argv": "--model-path {llama} --attention-backend fa3 --enable-hierarchical-cache",
     "expected": {"0.5.11": _e("ok", decode_attention_backend="triton"),
                  "0.5.23": _e("ok", decode_attention_backend=None)}},
    # ---- every effective value (issue 24 deliverable 2): what SGLang resolves beside the trio.
    # Deterministic inference: where the handler runs after the default backend (0.5.4.post1-
    # 0.5.11) it refuses the Blackwell default (trtllm_mha / trtllm_mla); where it runs before
    # (0.5.12 on) an unset backend becomes flashinfer on Blackwell, fa3 elsewhere (even on
    # Ampere), and flashinfer turns the radix cache off. DeepSeek on B200 keeps refusing in
    # 0.5.23: its model-specific step has set trtllm_mla before the handler runs.
    {"id": "V01", "gpu": "B200", "argv": "--model-path {llama} --enable-deterministic-inference",
     "expected": {"0.5.11": _e("error", "ValueError"),
                  "0.5.23": _e("ok", attention_backend="flashinfer", disable_radix_cache=True)}},
    {"id": "V02", "gpu": "B200", "argv": "--model-path {dsv3} --enable-deterministic-inference",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "V03", "gpu": "A6000", "argv": "--model-path {llama} --enable-deterministic-inference",
     "expected": {"0.5.11": _e("ok", attention_backend="flashinfer", disable_radix_cache=True),
                  "0.5.23": _e("ok", attention_backend="fa3", disable_radix_cache=False)}},
    {"id": "V04", "argv": "--model-path {llama} --rl-on-policy-target fsdp "
                          "--attention-backend flashinfer",
     "expected": {v: _e("ok", attention_backend="flashinfer", disable_radix_cache=True)
                  for v in ("0.5.11", "0.5.23")}},
    # --enable-mis (multi-item scoring) turns the radix cache off
    {"id": "V05", "gpu": "A6000", "argv": "--model-path {llama} --enable-mis",
     "expected": {v: _e("ok", disable_radix_cache=True) for v in ("0.5.11", "0.5.23")}},
    # EAGLE3 with mixed chunk: the eagle-family handler turns it off up to 0.5.18; from 0.5.19
    # `supports_mixed_chunk()` keeps it for EAGLE / EAGLE3
    {"id": "V06", "argv": "--model-path {llama} --speculative-algorithm EAGLE3 "
                          "--speculative-draft-model-path {eagle3_draft} --enable-mixed-chunk "
                          "--disable-overlap-schedule",
     "expected": {"0.5.11": _e("ok", enable_mixed_chunk=False),
                  "0.5.23": _e("ok", enable_mixed_chunk=True)}},
    # Qwen3-Next with trtllm_mha on SM100: no radix cache (trtllm_mha cannot run its page size 1)
    {"id": "V07", "gpu": "B200", "argv": "--model-path {qwen3next} --attention-backend trtllm_mha",
     "expected": {"0.5.11": _e("ok", disable_radix_cache=True),
                  "0.5.23": _e("ok", disable_radix_cache=False)}},
    # ---- ROCm (AMD Instinct, faked by the runner: torch.version.hip, gcnArchName, rocminfo):
    # the paths users hit with DeepSeek / Kimi on MI300X / MI355X. Expected outcomes are what real
    # SGLang 0.5.11 / 0.5.23 did on the faked device (issue 21 item 4).
    {"id": "ROCM-DSV3-TP8-AITER", "gpu": "MI300X", "gpus": 8,
     "argv": "--model-path {dsv3_h128} --tp-size 8",
     "note": "MLA on ROCm: 128 KV heads / tp 8 = 16 per rank -> aiter",
     "expected": {v: _e("ok", attention_backend="aiter") for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-DSV3-TP4-TRITON", "gpu": "MI300X", "gpus": 4,
     "argv": "--model-path {dsv3_h128} --tp-size 4",
     "note": "32 KV heads per rank: aiter's MLA kernels take 16 or 128, so triton",
     "expected": {v: _e("ok", attention_backend="triton") for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-KIMI-TP8-TRITON", "gpu": "MI300X", "gpus": 8,
     "argv": "--model-path {kimi_k2_h64} --tp-size 8",
     "note": "Kimi-K2's 64 heads / tp 8 = 8 per rank -> triton, not aiter",
     "expected": {v: _e("ok", attention_backend="triton") for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-KIMI-TP4-AITER", "gpu": "MI300X", "gpus": 4,
     "argv": "--model-path {kimi_k2_h64} --tp-size 4 --kv-cache-dtype fp8_e4m3",
     "note": "64 / 4 = 16 per rank -> aiter, with an fp8 KV cache",
     "expected": {v: _e("ok", attention_backend="aiter") for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-DSV3-NEXTN-DPATTN-FP8KV", "gpu": "MI355X", "gpus": 8,
     "argv": "--model-path {dsv3_h128} --tp-size 8 --dp-size 8 --enable-dp-attention "
             "--speculative-algorithm NEXTN --kv-cache-dtype fp8_e4m3",
     "note": "DeepSeek MTP with DP attention and fp8 KV on MI355X (gfx950)",
     "expected": {v: _ok("EAGLE", 3, 1, 4, attention_backend="aiter")
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-DSV3-AITER-PAGE", "gpu": "MI300X", "gpus": 8,
     "argv": "--model-path {dsv3_h128} --tp-size 8 --attention-backend aiter --page-size 16 "
             "--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 2 "
             "--speculative-num-draft-tokens 6",
     "note": "a draft tree with paged KV on aiter: refused (only flashinfer/fa3/triton)",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-LLAMA-EAGLE-TREE-PAGE", "gpu": "MI300X",
     "argv": f"{EAGLE_L} --speculative-num-steps 3 --speculative-eagle-topk 4 "
             "--speculative-num-draft-tokens 8 --page-size 16",
     "note": "MHA defaults to aiter on ROCm, so a tree with pages > 1 is refused",
     "expected": {v: _e("error", "ValueError") for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-QWEN3NEXT-NEXTN", "gpu": "MI300X",
     "argv": "--model-path {qwen3next} --speculative-algorithm NEXTN",
     "note": "0.5.11 disables the radix cache on ROCm instead of refusing",
     "expected": {"0.5.11": _ok("EAGLE", 3, 1, 4),
                  "0.5.23": _ok("EAGLE", 3, 1, 4, mamba_radix_cache_strategy="extra_buffer")}},
    {"id": "ROCM-KIMI-DPATTN-FP8KV", "gpu": "MI355X", "gpus": 8,
     "argv": "--model-path {kimi_k2_h64} --tp-size 8 --dp-size 8 --enable-dp-attention "
             "--kv-cache-dtype fp8_e4m3",
     "note": "Kimi-K2 on 8x MI355X with DP attention and fp8 KV: the attention TP size is 1, "
             "64 heads per rank -> triton (aiter's MLA kernels take 16 or 128)",
     "expected": {v: _e("ok", attention_backend="triton", enable_dp_attention=True)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-DSV3-DPATTN", "gpu": "MI300X", "gpus": 8,
     "argv": "--model-path {dsv3_h128} --tp-size 8 --dp-size 8 --enable-dp-attention",
     "note": "DeepSeek-V3 with DP attention on MI300X: 128 heads per rank -> aiter",
     "expected": {v: _e("ok", attention_backend="aiter", enable_dp_attention=True)
                  for v in ("0.5.11", "0.5.23")}},
    {"id": "ROCM-DSV3-FP8KV-GFX942", "gpu": "MI300X", "gpus": 8,
     "argv": "--model-path {dsv3_h128} --tp-size 8 --kv-cache-dtype fp8_e4m3",
     "note": "fp8 KV on gfx942 (stored as e4m3fnuz at run time): the arguments are accepted, aiter",
     "expected": {v: _e("ok", attention_backend="aiter") for v in ("0.5.11", "0.5.23")}},
]


def _argv(template: str, models: dict[str, Path]) -> list[str]:
    return [token.format(**{k: str(v) for k, v in models.items()})
            for token in template.split()]


def named_cases(version: str, models: dict[str, Path]) -> list[dict[str, Any]]:
    """The named cases for one SGLang version, with real model folder paths."""
    cases = []
    for entry in NAMED:
        template = entry.get("versions", {}).get(version, entry["argv"])
        cases.append({
            "id": f"{version}-{entry['id']}",
            "name": entry["id"],
            "sglang_version": version,
            "gpu": entry.get("gpu", "H100"),
            "gpus": entry.get("gpus", 1),
            "argv": _argv(template, models),
            "env": dict(entry.get("env", {})),
            "origin": "named",
            "expected": entry["expected"].get(version),
            "note": entry.get("note", ""),
        })
    return cases


def with_placeholders(value: Any, models: dict[str, Path]) -> Any:
    """``value`` with every model folder path written as its `{kind}` placeholder."""
    if isinstance(value, str):
        for kind, path in sorted(models.items(), key=lambda kv: -len(str(kv[1]))):
            value = value.replace(str(path), "{" + kind + "}")
        return value
    if isinstance(value, list):
        return [with_placeholders(v, models) for v in value]
    if isinstance(value, dict):
        return {k: with_placeholders(v, models) for k, v in value.items()}
    return value


def fixture_text(version: str, results: dict[str, dict[str, Any]],
                 models: dict[str, Path]) -> str:
    """The committed fixture: named cases with SGLang's real results, paths as `{kind}`."""
    entries = []
    for case in named_cases(version, models):
        result = results.get(str(case["id"]))
        if result is None:
            continue
        entries.append(with_placeholders({
            "name": case["name"], "gpu": case["gpu"], "gpus": case["gpus"],
            "argv": case["argv"], "env": case["env"], "expected": case["expected"],
            "result": {k: v for k, v in result.items() if k not in ("id", "elapsed_us")},
        }, models))
    return json.dumps({"sglang_version": version, "cases": entries}, indent=1) + "\n"
