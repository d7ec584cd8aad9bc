"""The ready profiles' models ship as config.json files (wizard/data/example_models): the
examples are checked with model facts on a machine that does not hold the models."""

from __future__ import annotations

import json
import tomllib

import families as fam
import pytest

from wizard.api import check_profile, load_facts
from wizard.example_models import DATA_DIR, example_facts, example_index
from wizard.profile import builtin_profiles_dir, load_profile

BUILDERS = {
    "Qwen3.6-27B": fam.qwen36_27b,
    "Qwen3.5-397B-A17B-NVFP4": fam.qwen35_397b_nvfp4,
    "Kimi-K2.5": fam.kimi_k25_int4,
    "Kimi-K2.5-EAGLE3": fam.kimi_k25_eagle3_draft,
    "DeepSeek-V3": fam.deepseek_v3,
}


def test_shipped_configs_are_the_reconstructed_checkpoints() -> None:
    """scripts/example_models.py wrote them from tests/model/families.py; they stay identical."""
    assert sorted(example_index().values()) == sorted(BUILDERS)
    for name, build in BUILDERS.items():
        family = build()
        for file, data in {"config.json": family.config, **family.extra_files}.items():
            shipped = json.loads((DATA_DIR / name / file).read_text(encoding="utf-8"))
            assert shipped == data, (name, file)


@pytest.mark.parametrize("path", sorted(builtin_profiles_dir().glob("*.toml")), ids=lambda p: p.stem)
def test_every_ready_profile_is_checked_with_model_facts(path) -> None:  # type: ignore[no-untyped-def]
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    profile = load_profile(path)
    assert profile.model.path == raw["model"]["path"]  # the user's path is kept as written
    report = check_profile(profile)
    assert report.model_source is not None and "example config" in report.model_source
    assert all(f.rule != "R-FACTS-MISSING" for f in report.findings)
    draft = profile.speculative.draft_model_path
    if draft:
        facts, why = load_facts(draft)
        assert facts is not None and facts.origin == "example", why


def test_only_the_exact_example_paths_get_shipped_facts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert example_facts("/root/models/Qwen3.6-27B-other") is None
    assert example_facts("/elsewhere/Qwen3.6-27B") is None  # same name, another folder: no facts
    folder = fam.llama31_8b().write(tmp_path / "m")
    facts, _ = load_facts(str(folder))
    assert facts is not None and facts.origin == "local"
