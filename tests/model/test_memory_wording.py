"""Counts in the memory plan's reasons read as English: `1 running request`, `2 running requests`."""

from __future__ import annotations

import json

import families as fam

from wizard.gpus import lookup
from wizard.memory import MemoryInputs, plan_memory
from wizard.model_info import facts_from_files


def test_the_state_pool_reason_says_one_running_request() -> None:
    facts = facts_from_files({"config.json": json.dumps(fam.qwen36_27b().config)}, "qwen36")
    gpu = lookup("RTX A6000")
    reasons = {
        fraction: plan_memory(MemoryInputs(
            facts, gpu, 2, 2, mem_fraction=fraction, algorithm="NEXTN", max_running_requests=48
        ))
        for fraction in (0.86, 0.88)
    }
    assert reasons[0.86].max_running_requests_limit == 1
    assert any("holds 1 running request," in r for r in reasons[0.86].reasons)
    assert not any("1 running requests" in r for r in reasons[0.86].reasons)
    assert any("holds 2 running requests," in r for r in reasons[0.88].reasons)
