"""EAGLE3 with the target's own MTP layer as the draft (no draft path on a DeepSeek-style
checkpoint, where SGLang fills the draft path with the model path): the draft worker's EAGLE3
branch calls `set_embed` and reads `hot_token_id` on the MTP class, which has neither, so the
server fails with an AttributeError after the weights load. The list of such targets is read from
each release's source (`onboard.eagle3_unusable_mtp_archs`)."""

from __future__ import annotations

from pathlib import Path

import families as fam

from wizard.api import check_typed
from wizard.choices import algorithm_options
from wizard.conformance.onboard import eagle3_unusable_mtp_archs
from wizard.model_facts import ModelFacts
from wizard.model_info import load_model_facts
from wizard.sglang.releases import release_for


def _facts(builder, tmp_path: Path) -> ModelFacts:  # type: ignore[no-untyped-def]
    family = builder()
    return load_model_facts(family.write(tmp_path / family.name))


def _rules(report) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {f.rule: f for f in report.findings}


def test_eagle3_on_deepseek_without_a_draft_fails_at_start(tmp_path: Path) -> None:
    facts = _facts(fam.deepseek_v3, tmp_path)
    for version in ("0.5.11", "0.5.23"):
        assert facts.architecture in release_for(version).arch_set("eagle3_unusable_mtp")
        typed = {"model_path": facts.source, "speculative_algorithm": "EAGLE3", "tp_size": 8}
        report = check_typed(typed, sglang_version=version, gpu="H200", gpus=8, facts=facts,
                             paths_local=False, fetch=False)
        finding = _rules(report).get("R-EAGLE3-OWN-MTP")
        assert finding is not None, version
        assert finding.severity == "error"  # type: ignore[attr-defined]
        assert "own MTP layer has no EAGLE-3 head" in finding.message  # type: ignore[attr-defined]
        fixed = dict(typed, speculative_algorithm="EAGLE")
        again = check_typed(fixed, sglang_version=version, gpu="H200", gpus=8, facts=facts,
                            paths_local=False, fetch=False)
        assert "R-EAGLE3-OWN-MTP" not in _rules(again)
        assert "R-DRAFT-AUTO" in _rules(again)


def test_eagle3_with_a_real_eagle3_draft_is_not_flagged(tmp_path: Path) -> None:
    kimi = _facts(fam.kimi_k25_int4, tmp_path)
    draft = _facts(fam.kimi_k25_eagle3_draft, tmp_path)
    typed = {"model_path": kimi.source, "speculative_algorithm": "EAGLE3",
             "speculative_draft_model_path": draft.source, "tp_size": 8}
    report = check_typed(typed, sglang_version="0.5.23", gpu="H200", gpus=8, facts=kimi,
                         draft_facts=draft, paths_local=False, fetch=False)
    assert "R-EAGLE3-OWN-MTP" not in _rules(report)


def test_algorithm_screen_offers_eagle_not_eagle3_for_the_built_in_mtp(tmp_path: Path) -> None:
    facts = _facts(fam.deepseek_v3, tmp_path)
    options = {o.name: o for o in algorithm_options(facts, None, "0.5.11")}
    assert options["EAGLE"].available
    assert options["EAGLE"].reason == "SGLang uses the checkpoint's MTP layers as the draft"
    assert not options["EAGLE3"].available
    assert "no EAGLE-3 head" in options["EAGLE3"].reason


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_probe_reads_the_draft_classes_and_their_bases(tmp_path: Path) -> None:
    """A draft class that inherits set_embed and sets hot_token_id serves EAGLE3; one without
    does not; a worker without the EAGLE3 branch gives no list at all."""
    _write(tmp_path, "sglang/srt/configs/model_config.py", (
        "class ModelConfig:\n"
        "    def __init__(self, is_draft_model):\n"
        "        if is_draft_model and self.hf_config.architectures[0] == 'A':\n"
        "            self.hf_config.architectures[0] = 'ANextN'\n"
        "        if is_draft_model and self.hf_config.architectures[0] in ['B', 'C']:\n"
        "            self.hf_config.architectures[0] = 'BMTP'\n"))
    _write(tmp_path, "sglang/srt/models/a.py", (
        "from torch import nn\n"
        "class AForCausalLM(nn.Module):\n"
        "    def set_embed_and_head(self, e, h): pass\n"
        "class ANextN(AForCausalLM):\n"
        "    pass\n"))
    _write(tmp_path, "sglang/srt/models/b.py", (
        "from torch import nn\n"
        "class BBase(nn.Module):\n"
        "    def set_embed(self, e): pass\n"
        "class BMTP(BBase):\n"
        "    def __init__(self):\n"
        "        self.hot_token_id = None\n"))
    worker = ("class W:\n"
              "    def init(self):\n"
              "        if self.speculative_algorithm.is_eagle3():\n"
              "            self.model.set_embed(e)\n"
              "            if self.model.hot_token_id is not None: pass\n")
    _write(tmp_path, "sglang/srt/speculative/eagle_worker.py", worker)
    found = eagle3_unusable_mtp_archs(tmp_path)
    assert found is not None and found[0] == ["A"]
    _write(tmp_path, "sglang/srt/speculative/eagle_worker.py", "class W: pass\n")
    assert eagle3_unusable_mtp_archs(tmp_path) is None
