"""Multi-node: SGLang's own multi-node checks per release (replayed against committed real-SGLang
results), the checks SGLang does not make, the profile's node list and per-node commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wizard.api import check_argv, check_case, check_profile, report_json
from wizard.conformance.cases import multinode_named_cases
from wizard.conformance.models import write_model_folders
from wizard.conformance.score import normalise_where
from wizard.multinode import (
    RendezvousError,
    node_findings,
    node_launch,
    node_launches,
    parse_rendezvous,
    render_all_nodes,
)
from wizard.profile import load_profile, profile_from_toml, profile_to_toml
from wizard.profile_schema import Profile
from wizard.rules.catalog import rule_for_location
from wizard.sglang.errors import RenderError
from wizard.sglang.releases import load_release, release_names

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "multinode-sglang.json"
RESULTS: dict[str, dict[str, Any]] = json.loads(FIXTURE.read_text())["releases"]
# Known disagreements that are not multi-node rules: before 0.5.11 the pipeline assert
# `disable_overlap_schedule and speculative_algorithm is None and ...` spans several lines and
# Python reports the operand that was false; where R-PP-SPEC's site (release data) names another
# line, the case is an expected failure (strict: it turns into a failure once the data agrees).
def _known(version: str, name: str) -> str | None:
    sglang = RESULTS[version][name]
    if sglang["where"] and rule_for_location(version, str(sglang["where"])) is None:
        return f"no rule of the {version} release data is located at {sglang['where']}"
    site = load_release(version).site("R-PP-SPEC")
    if "Pipeline parallelism" not in str(sglang["message"]) or site is None:
        return None
    if normalise_where(site.where) == normalise_where(sglang["where"]):
        return None
    return f"R-PP-SPEC site {site.where}, SGLang reports the false operand at {sglang['where']}"


REPLAYED = [
    pytest.param(v, name, id=f"{v}-{name}", marks=[pytest.mark.xfail(
        reason=str(_known(v, name)), strict=True)] if _known(v, name) else [])
    for v in RESULTS for name in RESULTS[v]
]


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_model_folders(tmp_path_factory.mktemp("models"))


def _first_sglang_error(report: dict[str, Any]) -> dict[str, Any] | None:
    wanted = report["first_sglang_error"]
    return next((f["sglang"] for f in report["findings"] if f["rule"] == wanted), None)


def test_the_fixture_holds_real_results_for_several_releases() -> None:
    assert len(RESULTS) >= 4
    for version, cases in RESULTS.items():
        assert version in release_names()
        assert not any(r["runner_error"] for r in cases.values()), version
        assert "/root/" not in json.dumps(cases) and "/tmp/" not in json.dumps(cases)
        # the cases really exercise both asserts in every release
        messages = " ".join(str(r["message"]) for r in cases.values())
        assert "divisible by number of nodes" in messages and "multi-node data" in messages


@pytest.mark.parametrize(("version", "name"), REPLAYED)
def test_wizard_agrees_with_sglang_on_multinode_cases(
    version: str, name: str, model_dirs: dict[str, Path]
) -> None:
    case = next(c for c in multinode_named_cases(version, model_dirs) if c["name"] == name)
    sglang = RESULTS[version][name]
    report = check_case(case)
    assert report["sglang_verdict"] == sglang["verdict"], report["findings"]
    if sglang["verdict"] == "error":
        first = _first_sglang_error(report)
        assert first is not None
        assert (first["stage"], first["exception"]) == (sglang["stage"], sglang["exception"])
        assert normalise_where(first["where"]) == normalise_where(sglang["where"])


def test_the_divisibility_assert_comes_before_pipeline_and_speculative() -> None:
    """First statement of check_server_args: it hides the pp + speculative assert."""
    argv = ["--model-path", "/m", "--tp-size", "3", "--pp-size", "3", "--nnodes", "2",
            "--speculative-algorithm", "NGRAM"]
    for version in release_names():
        if "NGRAM" not in load_release(version).algorithms:
            continue  # 0.5.1-0.5.2: argparse refuses NGRAM (their R-PP-SPEC witness covers pp)
        report = check_argv(argv, sglang_version=version, gpu="H100", gpus=8)
        rules = [f.rule for f in report.errors]
        assert rules[0] == "R-MULTINODE-TP", (version, rules)
        assert "R-PP-SPEC" in rules or "R-PP-SPEC-ALGO" in rules, (version, rules)
        fixes = report.errors[0].fixes
        assert fixes[0].edits == {"parallel.tp": 4}  # 4 * 3 = 12, a multiple of 2 nodes


def test_dp_across_nodes_without_dp_attention_per_release_wording() -> None:
    argv = ["--model-path", "/m", "--tp-size", "8", "--dp-size", "2", "--nnodes", "2",
            "--dist-init-addr", "10.0.0.1:5000"]
    for version in ("0.5.11", "0.5.23"):
        report = check_argv(argv, sglang_version=version, gpu="H100", gpus=8)
        assert report.errors[0].rule == "R-MULTINODE-DP"
    old = check_argv(argv, sglang_version="0.5.11", gpu="H100", gpus=8).errors[0]
    new = check_argv(argv, sglang_version="0.5.23", gpu="H100", gpus=8).errors[0]
    assert old.message == "multi-node data parallel is not supported unless dp attention!"
    assert "--attn-dp-size" in new.message
    assert old.fixes[0].edits == {"parallel.enable_dp_attention": True}
    assert new.fixes[0].edits["parallel.attn_dp_size"] == 2


@pytest.mark.parametrize(
    ("extra", "rule"),
    [
        (["--node-rank", "2"], "R-NODE-RANK"),
        ([], "R-DIST-INIT-ADDR"),
        (["--dist-init-addr", "10.0.0.1"], "R-DIST-INIT-FORMAT"),
        (["--dist-init-addr", "fe80::1:5000"], "R-DIST-INIT-FORMAT"),
    ],
)
def test_what_sglang_accepts_and_then_hangs_on(extra: list[str], rule: str) -> None:
    argv = ["--model-path", "/m", "--tp-size", "16", "--nnodes", "2", *extra]
    if rule != "R-DIST-INIT-ADDR" and "--dist-init-addr" not in extra:
        argv += ["--dist-init-addr", "10.0.0.1:5000"]
    report = report_json(check_argv(argv, sglang_version="0.5.11", gpu="H100", gpus=8))
    assert report["sglang_verdict"] == "ok"  # SGLang's argument code accepts it ...
    assert report["verdict"] == "error"  # ... and the launch hangs or fails at start
    finding = next(f for f in report["findings"] if f["rule"] == rule)
    assert finding["sglang"]["stage"] == "runtime"


def test_gpus_per_node_must_hold_tp_times_pp_over_nnodes() -> None:
    argv = ["--model-path", "/m", "--tp-size", "16", "--nnodes", "2",
            "--dist-init-addr", "10.0.0.1:5000"]
    short = check_argv(argv, sglang_version="0.5.11", gpu="H100", gpus=4)
    assert [f.rule for f in short.errors] == ["R-NODE-GPUS"]
    assert "8 GPU workers but has 4 GPUs" in short.errors[0].message
    assert short.errors[0].fixes[0].edits == {"parallel.nnodes": 4}
    assert check_argv(argv, sglang_version="0.5.11", gpu="H100", gpus=8).errors == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("10.0.0.1:5000", ("10.0.0.1", 5000)), ("gpu-a:20000", ("gpu-a", 20000)),
     ("[fe80::1]:5000", ("fe80::1", 5000))],
)
def test_rendezvous_addresses_sglang_reads(text: str, expected: tuple[str, int]) -> None:
    assert parse_rendezvous(text) == expected


@pytest.mark.parametrize("text", ["", "10.0.0.1", "fe80::1:5000", "[fe80::1]", "host:0",
                                  "host:70000", ":5000", "[host]:5000"])
def test_rendezvous_addresses_sglang_refuses(text: str) -> None:
    with pytest.raises(RendezvousError):
        parse_rendezvous(text)


# ------------------------------------------------------------------------------ profile and nodes

READY = ROOT / "profiles" / "deepseek-v3-fp8-2x8-h100.toml"


def _two_nodes(**edits: Any) -> Profile:
    profile = load_profile(READY)
    return profile.with_edits(edits) if edits else profile


def test_every_node_gets_the_same_command_but_its_rank() -> None:
    profile = _two_nodes()
    launches = node_launches(profile)
    assert [(n.rank, n.host) for n in launches] == [(0, "gpu-a"), (1, "gpu-b")]
    for launch in launches:
        argv = launch.argv
        assert argv[argv.index("--node-rank") + 1] == str(launch.rank)
        assert argv[argv.index("--dist-init-addr") + 1] == "10.0.0.1:5000"
        assert argv[argv.index("--nnodes") + 1] == "2"
        assert launch.env == {"NCCL_SOCKET_IFNAME": "eth0", "GLOO_SOCKET_IFNAME": "eth0"}
    strip = [a for a in launches[0].argv if a not in ("0", "1")]
    assert strip == [a for a in launches[1].argv if a not in ("0", "1")]
    text = render_all_nodes(profile)
    assert text.index("# node 0 (gpu-a)") < text.index("# node 1 (gpu-b)")


def test_node_overrides_and_round_trip() -> None:
    text = READY.read_text("utf-8").replace(
        'host = "gpu-b"', 'host = "gpu-b"\ninterface = "ib0"\ngpu_count = 8\n'
        'env = {NCCL_DEBUG = "INFO"}', 1)
    profile = profile_from_toml(text)
    assert profile_from_toml(profile_to_toml(profile)) == profile
    node1 = node_launch(profile, 1)
    assert node1.env == {"NCCL_SOCKET_IFNAME": "ib0", "GLOO_SOCKET_IFNAME": "ib0",
                         "NCCL_DEBUG": "INFO"}
    assert node_launch(profile, 0).env["NCCL_SOCKET_IFNAME"] == "eth0"


def test_node_list_problems_are_refused_with_the_key_to_fix() -> None:
    with pytest.raises(RenderError, match=r"parallel\.nnodes = 2"):
        node_launch(_two_nodes(**{"parallel.nnodes": 3}), 0)
    with pytest.raises(RenderError, match=r"ranks 0\.\.1"):
        node_launch(_two_nodes(), 2)
    with pytest.raises(RenderError, match="--node-rank"):
        node_launch(_two_nodes(extra_args=["--node-rank", "1"]), 0)
    no_hosts = _two_nodes(**{"nodes.hosts": []})
    with pytest.raises(RenderError, match="rendezvous"):
        node_launch(no_hosts, 0)
    named = no_hosts.with_edits({"nodes.rendezvous_host": "head.cluster"})
    assert "head.cluster:5000" in node_launch(named, 1).argv


def test_the_profile_check_knows_the_nodes() -> None:
    report = check_profile(_two_nodes(), verify_fixes=False)
    rules = {f.rule for f in report.findings}
    assert report.verdict == "ok" and "R-DIST-INIT-ADDR" not in rules
    assert report.typed["dist_init_addr"] == "10.0.0.1:5000"
    wrong = check_profile(_two_nodes(**{"parallel.nnodes": 3}), verify_fixes=False)
    errors = [f.rule for f in wrong.errors]
    assert errors[0] == "R-MULTINODE-TP" and "R-NODES-COUNT" in errors  # 16 % 3
    findings = {f.rule: f for f in node_findings(_two_nodes(**{"nodes.interface": None}))}
    assert findings["R-NODES-IFNAME"].severity == "info"
    dup = _two_nodes(**{"nodes.hosts": [{"host": "gpu-a", "gpu_count": 4},
                                        {"host": "gpu-a", "gpu_kind": "A100-80GB"}]})
    found = {f.rule: f for f in node_findings(dup)}
    assert {"R-NODES-DUPLICATE", "R-NODE-GPUS", "R-NODES-GPU-KIND"} <= set(found)
    assert found["R-NODE-GPUS"].severity == "error"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, check=False)


def test_command_prints_one_node_or_all_nodes() -> None:
    one = _cli("command", str(READY), "--node", "1", "--single-line")
    assert one.returncode == 0, one.stderr
    assert one.stdout.strip().endswith("--node-rank 1 --dist-init-addr 10.0.0.1:5000")
    every = _cli("command", str(READY), "--all-nodes")
    assert every.returncode == 0 and every.stdout.count("--node-rank") == 2
    bad = _cli("command", str(READY), "--node", "7")
    assert bad.returncode == 2 and "ranks 0..1" in bad.stderr
    as_json = json.loads(_cli("command", str(READY), "--node", "0", "--format", "argv-json").stdout)
    assert as_json["host"] == "gpu-a" and as_json["argv"][:3] == ["python3", "-m",
                                                                  "sglang.launch_server"]


def test_importing_one_nodes_command_keeps_the_rendezvous_not_the_rank() -> None:
    from wizard.sglang.parse import parse_command

    result = parse_command("python -m sglang.launch_server --model-path /m --tp-size 16 "
                           "--nnodes 2 --node-rank 1 --dist-init-addr=10.0.0.1:20000", "0.5.11")
    profile = result.profile
    assert (profile.nodes.rendezvous_host, profile.nodes.rendezvous_port) == ("10.0.0.1", 20000)
    assert profile.extra_args == [] and profile.parallel.nnodes == 2
    assert any("--node-rank 1 is dropped" in note for note in result.notes)
    assert node_launch(profile, 1).argv[-4:] == ["--node-rank", "1", "--dist-init-addr",
                                                 "10.0.0.1:20000"]
    kept = parse_command("python -m sglang.launch_server --model-path /m --nnodes 2 "
                         "--dist-init-addr 10.0.0.1", "0.5.11")
    assert kept.profile.extra_args == ["--dist-init-addr", "10.0.0.1"]  # refused, kept as typed
