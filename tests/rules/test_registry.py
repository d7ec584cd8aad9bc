"""Every finding id the product emits is registered once, with one severity, in `RULES_BY_ID`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from wizard.api import check_argv, check_profile
from wizard.multinode import node_findings
from wizard.profile import load_profile
from wizard.rules.catalog import ALL_RULES, CONTEXT_RULES, RULES_BY_ID, RUNTIME_RULES
from wizard.rules.checks import CHECKS
from wizard.rules.model import Rule
from wizard.rules.report import Finding

ROOT = Path(__file__).resolve().parents[2]
RULE_ID = re.compile(r"""["'](R-[A-Z0-9][A-Z0-9-]*)["']""")


def _source_ids() -> dict[str, set[str]]:
    files = subprocess.run(["git", "ls-files", "wizard/*.py", "screens/*.py"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    found: dict[str, set[str]] = {}
    for name in files:
        for rule_id in RULE_ID.findall((ROOT / name).read_text(encoding="utf-8")):
            found.setdefault(rule_id, set()).add(name)
    return found


def test_every_rule_id_in_the_source_is_registered() -> None:
    unregistered = {k: sorted(v) for k, v in _source_ids().items() if k not in RULES_BY_ID}
    assert unregistered == {}


def test_each_id_is_registered_once() -> None:
    ids = [r.id for r in ALL_RULES] + [c.id for c in CHECKS]
    assert len(ids) == len(set(ids)) == len(RULES_BY_ID)
    for check in CHECKS:
        assert len(check.why) > 30, check.id


def _assert_registered(findings: list[Finding] | tuple[Finding, ...]) -> set[str]:
    for finding in findings:
        rule = RULES_BY_ID.get(finding.rule)
        assert rule is not None, finding.rule
        assert finding.severity == rule.severity, (finding.rule, finding.severity)
    return {f.rule for f in findings}


def test_emitted_findings_are_registered_with_their_one_severity() -> None:
    seen: set[str] = set()
    for version in ("0.5.11", "0.5.23"):
        for argv in (
            ["--model-path", "/m", "--no-such-flag"],
            ["--model-path", "/m", "--tp-size", "16", "--nnodes", "2",
             "--dist-init-addr", "10.0.0.1:5000"],
            ["--model-path", "/m", "--speculative-algorithm", "EAGLE",
             "--speculative-num-steps", "3"],
        ):
            seen |= _assert_registered(check_argv(argv, sglang_version=version, gpu="H100",
                                                  gpus=4).findings)
    ready = load_profile(ROOT / "profiles" / "deepseek-v3-fp8-2x8-h100.toml")
    nodes = ready.with_edits({
        "parallel.nnodes": 2,
        "extra_args": ["--node-rank", "1"],
        "nodes.hosts": [{"host": "gpu-a", "gpu_count": 4}, {"host": "gpu-a", "gpu_count": 16},
                        {"host": "gpu-c", "gpu_kind": "A100-80GB"}],
    })
    seen |= _assert_registered(node_findings(nodes))
    seen |= _assert_registered(check_profile(ready.with_edits({
        "attention.backend": "FA3", "extra_args": ["--tp-size", "4"]})).findings)
    assert {"R-ARGPARSE", "R-NODE-GPUS", "R-NODES-COUNT", "R-NODES-DUPLICATE",
            "R-NODES-EXTRA-ARGS", "R-NODES-GPU-KIND", "R-ARGPARSE-CHOICE",
            "R-EXTRA-ARGS-FIELD"} <= seen


@pytest.mark.parametrize("version", ["0.5.1", "0.5.6", "0.5.23"])
def test_the_effective_table_shows_only_fields_the_release_has(version: str) -> None:
    """0.5.6 has no --mamba-scheduler-strategy: the wizard does not show a value for it."""
    from wizard.sglang.fields import release_dest
    from wizard.sglang.releases import release_for

    report = check_argv(["--model-path", "/models/none"], gpu="H100", sglang_version=version)
    dests = release_for(version).dests
    assert report.effective and set(report.effective) <= set(dests)
    strategy = release_dest("mamba_scheduler_strategy", release_for(version))
    assert (strategy in report.effective) == (version == "0.5.23")


def test_ngram_draft_tokens_follow_the_release_source() -> None:
    """NGRAM without --speculative-num-draft-tokens: 0.5.3-0.5.9 copy the match window size
    (real 0.5.6 with window 8 resolves 8), 0.5.10 on set their own number (read from source)."""
    from wizard.sglang.releases import release_for

    argv = ["--model-path", "/models/none", "--speculative-algorithm", "NGRAM",
            "--speculative-ngram-max-match-window-size", "8"]
    old = check_argv(argv, gpu="H100", sglang_version="0.5.6")
    assert old.effective["speculative_num_draft_tokens"] == 8
    assert release_for("0.5.6").trait("ngram_draft_tokens") == (
        "speculative_ngram_max_match_window_size")
    assert isinstance(release_for("0.5.23").trait("ngram_draft_tokens"), int)


# The engine's rules in registry order as they stood before wizard/rules/catalog.py was split into
# topic modules (main at 9cf3fc4). The order decides which error SGLang reports first, so moving a
# rule between modules must not move it here. A rule added since may stand anywhere: only these
# ids' relative order is pinned.
ORDER_BEFORE_SPLIT: tuple[str, ...] = (
    "R-SPEC-V2-TOPK", "R-FA4-DECODE", "R-MODEL-TYPE-UNKNOWN", "R-DPATTN-TP-DIVISIBLE",
    "R-FA4-PAGE", "R-DRAFT-SINK-WINDOW", "R-REJECTION-SAMPLING-TOPK", "R-ALGO-CHOICES",
    "R-MAMBA-AUTO", "R-MAMBA-EXTRA-UNSUPPORTED", "R-MAMBA-EXTRA-NOT-HYBRID",
    "R-MAMBA-EXTRA-NORADIX", "R-MAMBA-EXTRA-DEVICE", "R-MAMBA-TRACK-INTERVAL",
    "R-MAMBA-EXTRA-PAGE", "R-MAMBA-FLA-CHUNK", "R-MAMBA-NOBUF-PAGE", "R-MAMBA-NOBUF-OVERLAP",
    "R-MAMBA-NOBUF-SPEC", "R-MAMBA-NOBUF-PAGE-23", "R-MAMBA-NOBUF-OVERLAP-23",
    "R-MAMBA-NOBUF-TRTLLM-23", "R-FLEX-NO-SPEC", "R-TRTLLM-MLA-GPU", "R-TRTLLM-MHA-GPU",
    "R-TRTLLM-PAGE", "R-TRTLLM-MLA-PAGE", "R-MOE-RUNNER", "R-NEXTN-ALIAS",
    "R-SKIP-DP-MLP-SYNC", "R-DFLASH-DPATTN", "R-DFLASH-PP", "R-DFLASH-DRAFT", "R-DFLASH-BLOCK",
    "R-STANDALONE-DPATTN", "R-MAXREQ-48", "R-SPEC-V2-OVERLAP-ON", "R-SPEC-V1-SELECT", "R-MIXED-CHUNK", "R-DRAFT-AUTO",
    "R-DRAFT-NOT-NEEDED", "R-MTP-PAGE-FLASHINFER", "R-SPEC-STEPS-TRIO", "R-SPEC-AUTO-PARAMS",
    "R-TOPK-NONE-TYPEERROR-TRTLLM", "R-TOPK-NONE-TYPEERROR", "R-TRTLLM-TOPK",
    "R-TOPK1-DRAFT-REWRITE", "R-TOPK-PAGE", "R-NGRAM-DEVICE", "R-NGRAM-DEFAULTS",
    "R-NGRAM-CORPUS", "R-NGRAM-CORPUS-LIMIT", "R-NGRAM-PAGE", "R-NGRAM-DPATTN", "R-PP-SPEC",
    "R-PP-SPEC-ALGO", "R-CHUNKED-PAGE", "R-LORA-SPEC", "R-ADAPTIVE", "R-ADAPTIVE-STEPS",
    "R-MLA-ROPE-FACTOR", "R-DRAFT-CONFIG-READ", "R-CONTEXT-LEN", "R-QUANT-MISMATCH",
    "R-QUANT-UNKNOWN", "R-QUANT-ROCM", "R-GPT-OSS-ATTENTION", "R-HICACHE-NO-RADIX",
    "R-MULTINODE-TP", "R-MULTINODE-DP", "R-ATTN-DP-WITH-DP", "R-MEMORY-NOFIT", "R-MEMORY-PLAN",
    "R-V2-BEFORE-AUTO", "R-MAMBA-TRACK-INTERVAL-FINAL", "R-TREE-CAPACITY", "R-NEXTN-NO-MTP",
    "R-DRAFT-MISSING", "R-EAGLE3-DRAFT-WITH-EAGLE", "R-DRAFT-HIDDEN-SIZE", "R-DRAFT-VOCAB",
    "R-NODE-RANK", "R-DIST-INIT-ADDR", "R-DIST-INIT-FORMAT", "R-NODE-GPUS", "R-GPUS-TOO-FEW",
    "R-VERSION-NEAREST", "R-GPU-ASSUMED", "R-FACTS-MISSING", "R-SPEC-V2-ENV",
    "R-NEXTN-MULTI-LAYER", "R-DEPRECATED-FLAG",
)
RUNTIME_BEFORE_SPLIT: tuple[str, ...] = (
    "R-MEMORY-NOFIT", "R-MEMORY-PLAN", "R-V2-BEFORE-AUTO", "R-MAMBA-TRACK-INTERVAL-FINAL",
    "R-TREE-CAPACITY", "R-NEXTN-NO-MTP", "R-DRAFT-MISSING", "R-EAGLE3-DRAFT-WITH-EAGLE",
    "R-DRAFT-HIDDEN-SIZE", "R-DRAFT-VOCAB", "R-NODE-RANK", "R-DIST-INIT-ADDR",
    "R-DIST-INIT-FORMAT", "R-NODE-GPUS", "R-GPUS-TOO-FEW",
)
CONTEXT_BEFORE_SPLIT: tuple[str, ...] = (
    "R-VERSION-NEAREST", "R-GPU-ASSUMED", "R-FACTS-MISSING", "R-SPEC-V2-ENV",
    "R-NEXTN-MULTI-LAYER", "R-DEPRECATED-FLAG",
)


@pytest.mark.parametrize(("pinned", "rules"), [
    (ORDER_BEFORE_SPLIT, ALL_RULES), (RUNTIME_BEFORE_SPLIT, RUNTIME_RULES),
    (CONTEXT_BEFORE_SPLIT, CONTEXT_RULES)])
def test_the_registry_keeps_its_order(pinned: tuple[str, ...], rules: tuple[Rule, ...]) -> None:
    ids = [r.id for r in rules]
    assert [i for i in ids if i in pinned] == list(pinned)
