"""The add-release coverage report: reachable raise sites, rules, written reasons (a tiny source
tree shaped like SGLang's argument code)."""

from __future__ import annotations

from pathlib import Path

from wizard.conformance.coverage import coverage
from wizard.conformance.locate import SourceTree
from wizard.conformance.onboard import (
    _gpt_oss_mxfp4_runner,
    _hicache_decode_fallback,
    _spec_moe_runner_default,
)

SERVER_ARGS = '''
class ServerArgs:
    def __post_init__(self):
        self._handle_cache()
        self._handle_pd_disaggregation()
        if is_npu():
            raise ValueError("npu only")
        if self.speculative_moe_runner_backend is None:
            self.speculative_moe_runner_backend = self.moe_runner_backend

    def _handle_cache(self):
        if self.enable_hierarchical_cache and self.disable_radix_cache:
            raise ValueError("mutually exclusive")
        assert self.page_size != 3, "odd page"

    def _handle_pd_disaggregation(self):
        raise ValueError("pd")

    def never_called(self):
        raise ValueError("not on the launch path")
'''


def _tree(tmp_path: Path) -> SourceTree:
    folder = tmp_path / "sglang" / "srt"
    folder.mkdir(parents=True)
    (folder / "server_args.py").write_text(SERVER_ARGS, encoding="utf-8")
    return SourceTree(tmp_path)


def test_reachable_sites_rules_and_reasons(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    rule_site = {"R-HICACHE-NO-RADIX": {"where": "sglang/srt/server_args.py:13"}}
    report = coverage(tree, rule_site)
    # the npu-only raise and the uncalled function do not count
    assert report.reachable == 3 and report.rules == 1
    assert [where for where, _text, _why in report.reasoned] == ["sglang/srt/server_args.py:17"]
    assert "disaggregation" in report.reasoned[0][2]
    assert report.unreasoned == [("sglang/srt/server_args.py:14",
                                  "page_size != 3, 'odd page'")]
    assert report.lines()[0].startswith("coverage 3 raise sites reachable from the launch path: "
                                        "1 are rules, 1 not modelled with a reason, 1 without")


def test_probes_read_the_source(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    assert _spec_moe_runner_default(tree) == "copy"
    assert _hicache_decode_fallback(tree) == "none"
    assert _gpt_oss_mxfp4_runner(tree) == {}
