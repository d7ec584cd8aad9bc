"""The engine never raises, whatever a profile holds, and its answers stay self-consistent."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wizard.api import apply_fix, check_profile
from wizard.gpus import names
from wizard.profile_schema import Profile
from wizard.rules.catalog import ALL_RULES, rule_for_location
from wizard.rules.engine import first_sglang_error

ALGOS = [
    None,
    "NEXTN",
    "EAGLE",
    "EAGLE3",
    "STANDALONE",
    "NGRAM",
    "DFLASH",
    "nextn",
    "eagle",
    "MEDUSA",
    "DSPARK",
]
BACKENDS = [
    None,
    "fa3",
    "flashinfer",
    "triton",
    "trtllm_mha",
    "flex_attention",
    "trtllm_mla",
    "fa4",
    "torch_native",
]
# The profile refuses steps / topk / draft tokens outside 1..1024 (tests/profile); argv checks
# (check_argv) still see any integer.
small = st.one_of(st.none(), st.integers(min_value=1, max_value=20))


@st.composite
def profiles(draw: st.DrawFn, model_paths: list[str]) -> Profile:
    data: dict[str, Any] = {
        "sglang_version": draw(st.sampled_from(["0.5.11", "0.5.23", "0.5.9", "0.5.15", "0.6.0"])),
        "model": {"path": draw(st.sampled_from(model_paths))},
        "speculative": {
            "algorithm": draw(st.sampled_from(ALGOS)),
            "num_steps": draw(small),
            "eagle_topk": draw(small),
            "num_draft_tokens": draw(small),
            "draft_model_path": draw(st.sampled_from([None, *model_paths])),
            "adaptive": draw(st.booleans()),
            "dflash_block_size": draw(small),
            "moe_runner_backend": draw(
                st.sampled_from([None, "auto", "triton", "flashinfer_trtllm"])
            ),
        },
        "hybrid": {
            "cache_strategy": draw(st.sampled_from([None, "auto", "no_buffer", "extra_buffer"])),
            "track_interval": draw(st.one_of(st.none(), st.integers(1, 512))),
        },
        "attention": {
            "backend": draw(st.sampled_from(BACKENDS)),
            "page_size": draw(st.one_of(st.none(), st.sampled_from([1, 16, 48, 64, 128]))),
        },
        "parallel": {
            "tp": draw(st.integers(1, 8)),
            "dp": draw(st.integers(1, 4)),
            "pp": draw(st.integers(1, 2)),
            "enable_dp_attention": draw(st.booleans()),
        },
        "scheduling": {
            "disable_overlap_schedule": draw(st.booleans()),
            "enable_mixed_chunk": draw(st.booleans()),
            "disable_radix_cache": draw(st.booleans()),
        },
        "server": {"device": draw(st.sampled_from([None, "cuda", "cpu"]))},
        "memory": {"max_running_requests": draw(st.one_of(st.none(), st.integers(1, 512)))},
        "gpu": {"kind": draw(st.sampled_from([None, *names()]))},
        "env": draw(
            st.sampled_from(
                [
                    {},
                    {"SGLANG_ENABLE_SPEC_V2": "0"},
                    {"SGLANG_ENABLE_SPEC_V2": "1"},
                    {"SGLANG_ENABLE_SPEC_V2": "maybe"},
                ]
            )
        ),
    }
    return Profile.model_validate(data)


def test_engine_never_raises_and_fixes_are_applicable(models: dict[str, str]) -> None:
    paths = [*models.values(), "/does/not/exist"]

    @settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
    @given(profiles(paths))
    def run(profile: Profile) -> None:
        report = check_profile(profile)
        assert report.verdict in ("ok", "error")
        assert all(f.rule != "R-UNEVALUABLE" for f in report.findings), [
            f.message for f in report.findings
        ]
        first = first_sglang_error(report)
        if (
            first is not None
            and first.sglang is not None
            and first.sglang.where
            and first.sglang.where[-1].isdigit()
        ):
            assert rule_for_location(report.rules_version, first.sglang.where) is not None
        for finding in report.findings:
            for fix in finding.fixes:
                fixed = apply_fix(profile, fix)  # every offered fix yields a valid profile
                if finding.severity != "error":
                    continue
                after = check_profile(fixed)
                assert not [f for f in after.findings if f.rule == finding.rule
                            and f.message == finding.message], (
                    f"fix {fix.label!r} of {finding.rule} leaves the finding: {finding.message}")

    run()


def test_every_rule_has_a_kind_why_and_unique_id() -> None:
    from wizard.sglang.releases import load_release, release_names

    ids = [r.id for r in ALL_RULES]
    assert len(ids) == len(set(ids))
    for rule in ALL_RULES:
        assert rule.sglang.stage in ("argparse", "resolve", "check", "runtime", "wizard"), rule.id
        assert len(rule.why) > 30, rule.id
    for name in release_names():
        release = load_release(name)
        for rule_id, site in release.sites.items():
            assert rule_id in ids, (name, rule_id)
            assert site.where.startswith("sglang/") and site.where.rsplit(":", 1)[1].isdigit()


def test_rule_for_location_maps_traceback_lines() -> None:
    rule = rule_for_location(
        "0.5.11", "/usr/lib/python3/site-packages/sglang/srt/server_args.py:3521"
    )
    assert rule is not None and rule.id == "R-SPEC-STEPS-TRIO"
    rule = rule_for_location("0.5.23", "sglang/srt/arg_groups/speculative_hook.py:1162")
    assert rule is not None and rule.id == "R-SPEC-STEPS-TRIO"
    assert rule_for_location("0.5.11", "sglang/srt/server_args.py:1") is None
    assert rule_for_location("0.5.11", "not a location") is None
