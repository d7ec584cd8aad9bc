"""Import every try of the three incidents, with the literal commands from seeds/ and incidents.md."""

from __future__ import annotations

import re

import pytest
from sglang_hand_tables import SEEDS

from wizard.sglang.errors import CommandError
from wizard.sglang.parse import parse_command

QWEN36 = "/root/models/Qwen3.6-27B"
QWEN35 = "/root/models/Qwen3.5-397B-A17B-NVFP4"


def _seed(name: str) -> str:
    return (SEEDS / name).read_text(encoding="utf-8")


def _incident1_try3_literal() -> str:
    """The launch block quoted in seed 000 (incident 1, try 3), verbatim."""
    text = _seed("000_8b3bab28e017e719.txt")
    start = text.index("SGLANG_ENABLE_SPEC_V2=1 nohup")
    end = text.index("2>&1 &", start) + len("2>&1 &")
    return text[start:end]


def _incident2_try2_flags() -> str:
    """The four flag lines quoted in seed 003 (incident 2, try 2), verbatim."""
    text = _seed("003_fd167ce1b8af5443.txt")
    start = text.index("--speculative-algorithm NEXTN \\")
    end = text.index("--mamba-scheduler-strategy extra_buffer", start)
    return text[start : end + len("--mamba-scheduler-strategy extra_buffer")]


def test_incident1_try3_literal_seed_command() -> None:
    command = _incident1_try3_literal()
    assert "\\\n" in command and "nohup" in command  # really the multi-line pasted form
    result = parse_command(command, "0.5.11")
    p = result.profile
    assert p.model.path == QWEN36
    assert (p.speculative.algorithm, p.speculative.num_steps, p.speculative.eagle_topk) == (
        "NEXTN",
        1,
        1,
    )
    assert p.speculative.num_draft_tokens is None
    assert p.parallel.tp == 2
    assert (p.server.port, p.server.host) == (30000, "0.0.0.0")
    assert p.model.trust_remote_code is True
    assert p.model.dtype == "bfloat16"
    assert p.hybrid.cache_strategy == "extra_buffer"
    assert p.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert p.ssh.python == "~/ml-env/bin/python3"
    assert p.extra_args == []
    notes = " | ".join(result.notes)
    assert "nohup" in notes and "/root/sglang_serve.log" in notes and "2>&1" in notes
    assert "&" in notes


def test_incident1_try3_refused_on_0_5_23_with_the_new_spelling() -> None:
    with pytest.raises(CommandError) as info:
        parse_command(_incident1_try3_literal(), "0.5.23")
    err = info.value
    assert err.flag == "--mamba-scheduler-strategy"
    assert err.exit_like_sglang
    assert err.sglang_error is not None
    assert err.sglang_error.message == (
        "unrecognized arguments: --mamba-scheduler-strategy extra_buffer"
    )
    assert "--mamba-radix-cache-strategy" in (err.suggestion or "")
    assert "renamed in SGLang 0.5.14" in (err.suggestion or "")


INCIDENT1_BASE = (
    f"python3 -m sglang.launch_server --model-path {QWEN36} --tensor-parallel-size 2 "
    "--port 30000 --host 0.0.0.0 "
)


def test_incident1_try1() -> None:
    cmd = INCIDENT1_BASE + "--speculative-algorithm NEXTN --speculative-num-draft-tokens 1"
    p = parse_command(cmd, "0.5.11").profile
    assert p.speculative.algorithm == "NEXTN"
    assert p.speculative.num_draft_tokens == 1
    assert p.speculative.num_steps is None and p.speculative.eagle_topk is None
    assert p.hybrid.cache_strategy is None
    assert p.env == {}


def test_incident1_try2() -> None:
    cmd = (
        "SGLANG_ENABLE_SPEC_V2=1 "
        + INCIDENT1_BASE
        + "--speculative-algorithm NEXTN --speculative-num-draft-tokens 1 "
        "--mamba-scheduler-strategy extra_buffer"
    )
    p = parse_command(cmd, "0.5.11").profile
    assert p.hybrid.cache_strategy == "extra_buffer"
    assert p.speculative.num_draft_tokens == 1 and p.speculative.num_steps is None
    assert p.env == {"SGLANG_ENABLE_SPEC_V2": "1"}


@pytest.mark.parametrize("with_trio", [True, False], ids=["try1-2", "try3"])
def test_incident2_literal_seed_flags(with_trio: bool) -> None:
    flags = _incident2_try2_flags()
    assert flags.count("\\\n") == 3
    if not with_trio:  # try 3: drop topk and draft tokens, let SGLang choose
        flags = re.sub(r"--speculative-(num-draft-tokens|eagle-topk) \d+ \\\n", "", flags)
    cmd = (
        f"SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path {QWEN35} "
        f"--tp 8 \\\n{flags}"
    )
    p = parse_command(cmd, "0.5.11").profile
    assert p.model.path == QWEN35
    assert p.parallel.tp == 8
    assert p.speculative.algorithm == "NEXTN"
    assert p.hybrid.cache_strategy == "extra_buffer"
    assert p.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    if with_trio:
        assert (p.speculative.num_draft_tokens, p.speculative.eagle_topk) == (2, 1)
    else:
        assert (p.speculative.num_draft_tokens, p.speculative.eagle_topk) == (None, None)
    assert p.speculative.num_steps is None


def test_incident3_try1_wrong_flag_name_suggests_the_sglang_flag() -> None:
    cmd = (
        "python3 -m sglang.launch_server --model-path /root/models/Kimi-K2.5 "
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path /root/draft "
        "--num-speculative-tokens 16"
    )
    for version in ("0.5.11", "0.5.23"):
        with pytest.raises(CommandError) as info:
            parse_command(cmd, version)
        assert info.value.flag == "--num-speculative-tokens"
        assert "--speculative-num-draft-tokens" in (info.value.suggestion or "")
        assert info.value.exit_like_sglang


@pytest.mark.parametrize("steps", [None, 1])
def test_incident3_try2_and_try3(steps: int | None) -> None:
    cmd = (
        "python3 -m sglang.launch_server --model-path /root/models/Kimi-K2.5 "
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path DRAFT "
        "--speculative-num-draft-tokens 16 --speculative-eagle-topk 1"
    )
    if steps is not None:
        cmd += f" --speculative-num-steps {steps}"
    p = parse_command(cmd, "0.5.11").profile
    assert p.speculative.algorithm == "EAGLE3"
    assert p.speculative.draft_model_path == "DRAFT"
    assert p.speculative.num_draft_tokens == 16  # as typed; SGLang rewrites it later
    assert p.speculative.eagle_topk == 1
    assert p.speculative.num_steps == steps
