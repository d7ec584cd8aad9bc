"""Model inspection over tiny config folders of real families."""

from __future__ import annotations

import json
from pathlib import Path

import families as fam
import pytest

from wizard.model_files import MODEL_FILES, LocalReader, ModelReadError, resolve_model_dir
from wizard.model_info import facts_from_files, facts_from_reader, load_model_facts


@pytest.mark.parametrize("builder", fam.SIZE_FAMILIES, ids=lambda b: b.__name__)
def test_total_parameters_within_3_percent_of_published(builder, tmp_path: Path) -> None:
    family = builder()
    facts = load_model_facts(family.write(tmp_path / family.name))
    assert facts.params_total is not None
    assert facts.params_total == pytest.approx(family.params_total, rel=0.03), family.name


# Active counts published precisely enough to compare (Qwen3-Next's "A3B" is a name, see below).
ACTIVE = [fam.deepseek_v3, fam.kimi_k2, fam.glm45, fam.gpt_oss_120b, fam.qwen35_397b_nvfp4]


@pytest.mark.parametrize("builder", ACTIVE, ids=lambda b: b.__name__)
def test_active_parameters_within_3_percent_of_published(builder, tmp_path: Path) -> None:
    family = builder()
    facts = load_model_facts(family.write(tmp_path / family.name))
    assert facts.params_active == pytest.approx(family.params_active, rel=0.03), family.name


def test_qwen3_next_active_is_a_few_billion_not_eighty(tmp_path: Path) -> None:
    facts = load_model_facts(fam.qwen3_next_80b().write(tmp_path / "m"))
    # 10 of 512 experts + shared expert + attention + head: 3.56B by the config's arithmetic.
    assert facts.params_active is not None
    assert 3.0e9 <= facts.params_active <= 3.7e9


def test_dense_llama_facts(tmp_path: Path) -> None:
    facts = load_model_facts(fam.llama31_8b().write(tmp_path / "m"))
    assert facts.architecture == "LlamaForCausalLM"
    assert facts.family == "llama"
    assert facts.attention == "GQA"
    assert (facts.num_kv_heads, facts.head_dim, facts.num_layers) == (8, 128, 32)
    assert facts.moe is None and facts.hybrid is None and facts.mtp_layers == 0
    assert facts.quantization is None and facts.dtype == "bfloat16"
    assert facts.context_length == 131072 and facts.vocab_size == 128256
    assert facts.params_source == "estimate"


def test_deepseek_v3_is_mla_moe_fp8_with_one_nextn_layer(tmp_path: Path) -> None:
    facts = load_model_facts(fam.deepseek_v3().write(tmp_path / "m"))
    assert facts.attention == "MLA" and facts.kv_lora_rank == 512 and facts.qk_rope_head_dim == 64
    assert facts.mtp_layers == 1
    assert facts.moe is not None
    assert (facts.moe.experts, facts.moe.active_experts, facts.moe.shared_experts) == (256, 8, 1)
    assert facts.moe.moe_layers == 58  # 61 layers, the first 3 dense
    assert facts.quantization == "fp8"
    assert facts.quant is not None and facts.quant.scheme == "FP8 block 128x128"


def test_qwen36_27b_hybrid_layout_mtp_from_text_config(tmp_path: Path) -> None:
    facts = load_model_facts(fam.qwen36_27b().write(tmp_path / "m"))
    assert facts.architecture == "Qwen3_5ForConditionalGeneration"
    assert facts.family == "qwen3_5"
    assert facts.hybrid is not None
    assert (facts.hybrid.linear_layers, facts.hybrid.full_layers) == (48, 16)
    assert facts.hybrid.full_attention_interval == 4
    assert facts.mtp_layers == 1
    assert facts.moe is None
    assert facts.linear_attention is not None and facts.linear_attention.num_value_heads == 48
    assert facts.full_attention_layers == 16


def test_hybrid_from_interval_when_layer_types_absent(tmp_path: Path) -> None:
    facts = load_model_facts(fam.qwen3_next_80b().write(tmp_path / "m"))
    assert facts.hybrid is not None
    assert (facts.hybrid.linear_layers, facts.hybrid.full_layers) == (36, 12)
    assert facts.moe is not None and facts.moe.shared_experts == 1
    assert facts.mtp_layers == 1


def test_qwen35_397b_nvfp4_quantization_from_modelopt_file(tmp_path: Path) -> None:
    facts = load_model_facts(fam.qwen35_397b_nvfp4().write(tmp_path / "m"))
    assert facts.quantization == "modelopt_fp4"
    assert facts.quant is not None and facts.quant.scheme.startswith("NVFP4")
    assert facts.quant.quantizes("model.language_model.layers.3.mlp.experts.7.up_proj")
    assert not facts.quant.quantizes("model.language_model.layers.3.self_attn.q_proj")
    assert facts.moe is not None and (facts.moe.experts, facts.moe.active_experts) == (512, 10)
    assert facts.hybrid is not None and facts.hybrid.full_layers == 15


def test_kimi_k25_int4_and_gpt_oss_facts(tmp_path: Path) -> None:
    kimi = load_model_facts(fam.kimi_k25_int4().write(tmp_path / "k"))
    assert kimi.quantization == "compressed-tensors"
    assert kimi.quant is not None and kimi.quant.weight_bits == 4 and kimi.quant.group_size == 32
    assert kimi.attention == "MLA" and kimi.family == "kimi_k25" and kimi.mtp_layers == 0
    oss = load_model_facts(fam.gpt_oss_120b().write(tmp_path / "o"))
    assert oss.has_attention_sinks and oss.quantization == "mxfp4"
    assert oss.sliding_window == 128 and oss.sliding_window_layers == 18
    assert oss.hybrid is None


def test_eagle3_draft_facts(tmp_path: Path) -> None:
    draft = load_model_facts(fam.kimi_k25_eagle3_draft().write(tmp_path / "d"))
    assert draft.is_eagle3_draft and draft.is_eagle_draft
    assert draft.family == "eagle3_draft"
    assert draft.target_hidden_size == 7168 and draft.draft_vocab_size == 32000


def test_index_total_size_gives_the_count_for_unquantized_checkpoints(tmp_path: Path) -> None:
    family = fam.llama31_8b()
    family.extra_files["model.safetensors.index.json"] = {
        "metadata": {"total_size": 16_060_522_496},
        "weight_map": {},
    }
    facts = load_model_facts(family.write(tmp_path / "m"))
    assert facts.params_source == "index"
    assert facts.params_total == 8_030_261_248
    assert facts.checkpoint_bytes == 16_060_522_496


def test_index_of_quantized_checkpoint_keeps_estimate_and_bytes(tmp_path: Path) -> None:
    family = fam.deepseek_v3()
    family.extra_files["model.safetensors.index.json"] = {
        "metadata": {"total_size": 688_586_727_753}
    }
    facts = load_model_facts(family.write(tmp_path / "m"))
    assert facts.params_source == "estimate"
    assert facts.checkpoint_bytes == 688_586_727_753
    assert any("quantized checkpoint" in note for note in facts.notes)


def test_json_keys(tmp_path: Path) -> None:
    family = fam.qwen35_397b_nvfp4()
    family.extra_files["generation_config.json"] = {"temperature": 0.6, "top_p": 0.95, "x": 1}
    data = load_model_facts(family.write(tmp_path / "m")).to_json()
    assert data["generation_defaults"] == {"temperature": 0.6, "top_p": 0.95}
    for key in (
        "architecture",
        "mtp_layers",
        "hybrid",
        "moe",
        "attention",
        "quantization",
        "params_total",
        "params_active",
    ):
        assert key in data
    assert data["hybrid"] == {"linear": 45, "full": 15, "full_attention_interval": 4}
    assert data["moe"]["experts"] == 512 and data["moe"]["active"] == 10
    json.dumps(data)  # serialisable


# --- HF cache layout ---------------------------------------------------------------------------


def _hf_cache(tmp_path: Path) -> Path:
    repo = tmp_path / "hub" / "models--Qwen--Qwen3-32B"
    old = repo / "snapshots" / "aaa111"
    new = repo / "snapshots" / "bbb222"
    fam.llama31_8b().write(old)
    fam.qwen3_32b().write(new)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("bbb222\n", encoding="utf-8")
    return repo


def test_hf_cache_repo_folder_follows_refs_main(tmp_path: Path) -> None:
    repo = _hf_cache(tmp_path)
    assert resolve_model_dir(repo) == repo / "snapshots" / "bbb222"
    assert load_model_facts(repo).architecture == "Qwen3ForCausalLM"


def test_hf_cache_snapshots_folder_and_snapshot_itself(tmp_path: Path) -> None:
    repo = _hf_cache(tmp_path)
    assert resolve_model_dir(repo / "snapshots") == repo / "snapshots" / "bbb222"
    assert resolve_model_dir(repo / "snapshots" / "aaa111") == repo / "snapshots" / "aaa111"


def test_hf_cache_without_refs_uses_newest_snapshot(tmp_path: Path) -> None:
    import os

    repo = _hf_cache(tmp_path)
    (repo / "refs" / "main").unlink()
    older = repo / "snapshots" / "bbb222" / "config.json"
    os.utime(older, (1_000_000, 1_000_000))
    assert resolve_model_dir(repo) == repo / "snapshots" / "aaa111"


# --- errors ------------------------------------------------------------------------------------


def test_missing_folder_and_missing_config(tmp_path: Path) -> None:
    with pytest.raises(ModelReadError, match="does not exist"):
        load_model_facts(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelReadError) as info:
        load_model_facts(tmp_path / "empty")
    assert info.value.file == "config.json" and info.value.key is None
    assert "config.json: not found in" in str(info.value)


def test_an_unreadable_file_is_a_model_read_error(tmp_path: Path) -> None:
    fam.llama31_8b().write(tmp_path)
    (tmp_path / "model.safetensors.index.json").mkdir()  # or a file without read permission
    with pytest.raises(ModelReadError) as info:
        load_model_facts(tmp_path)
    assert info.value.file == "model.safetensors.index.json"
    assert "cannot be read" in str(info.value)


def test_broken_json_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{\n  "hidden_size": 4096,\n  oops\n}', encoding="utf-8")
    with pytest.raises(ModelReadError) as info:
        load_model_facts(tmp_path)
    assert str(info.value).startswith("config.json: is not valid JSON (line 3")


def test_wrong_type_names_dotted_key(tmp_path: Path) -> None:
    family = fam.qwen36_27b()
    family.config["text_config"]["layer_types"] = 7
    with pytest.raises(ModelReadError) as info:
        load_model_facts(family.write(tmp_path))
    err = info.value
    assert (err.file, err.key) == ("config.json", "text_config.layer_types")
    assert str(err).startswith(
        "config.json: key 'text_config.layer_types': expected a list of strings, got int"
    )
    assert "fix 'text_config.layer_types'" in str(err)


def test_missing_required_key(tmp_path: Path) -> None:
    family = fam.llama31_8b()
    del family.config["hidden_size"]
    with pytest.raises(ModelReadError) as info:
        load_model_facts(family.write(tmp_path))
    assert info.value.key == "hidden_size" and "is missing" in info.value.message


def test_layer_types_length_mismatch(tmp_path: Path) -> None:
    family = fam.qwen36_27b()
    family.config["text_config"]["layer_types"] = ["full_attention"] * 3
    with pytest.raises(ModelReadError, match="has 3 entries but num_hidden_layers is 64"):
        load_model_facts(family.write(tmp_path))


def test_broken_index_and_quant_file(tmp_path: Path) -> None:
    family = fam.llama31_8b()
    family.write(tmp_path)
    (tmp_path / "model.safetensors.index.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ModelReadError) as info:
        load_model_facts(tmp_path)
    assert info.value.file == "model.safetensors.index.json"
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": "big"}}), encoding="utf-8"
    )
    with pytest.raises(ModelReadError) as info:
        load_model_facts(tmp_path)
    assert info.value.key == "metadata.total_size"
    (tmp_path / "model.safetensors.index.json").unlink()
    (tmp_path / "hf_quant_config.json").write_text(json.dumps({"quantization": {}}), "utf-8")
    with pytest.raises(ModelReadError) as info:
        load_model_facts(tmp_path)
    assert (info.value.file, info.value.key) == ("hf_quant_config.json", "quantization.quant_algo")


def test_pure_core_matches_local_reader(tmp_path: Path) -> None:
    folder = fam.glm45().write(tmp_path / "m")
    files = {
        name: (folder / name).read_text(encoding="utf-8")
        for name in MODEL_FILES
        if (folder / name).exists()
    }
    remote_like = facts_from_files(files, "gpuhost:/models/glm")
    local = facts_from_reader(LocalReader(folder))
    assert remote_like.source == "gpuhost:/models/glm"
    assert remote_like.to_json() | {"source": None} == local.to_json() | {"source": None}
    with pytest.raises(ModelReadError, match=r"config\.json: not found in gpuhost:/x"):
        facts_from_files({}, "gpuhost:/x")


# --- facts per family ----------------------------------------------------------------------------

FACTS = [
    # builder, attention, kv heads, MTP layers, (experts, active, shared) or None,
    # (linear, full) or None, quantization
    (fam.llama31_70b, "GQA", 8, 0, None, None, None),
    (fam.qwen3_32b, "GQA", 8, 0, None, None, None),
    (fam.qwen3_next_80b, "GQA", 2, 1, (512, 10, 1), (36, 12), None),
    (fam.deepseek_v3, "MLA", 1, 1, (256, 8, 1), None, "fp8"),
    (fam.kimi_k2, "MLA", 1, 0, (384, 8, 1), None, "fp8"),
    (fam.glm45, "GQA", 8, 1, (160, 8, 1), None, None),
    (fam.gpt_oss_120b, "GQA", 8, 0, (128, 4, 0), None, "mxfp4"),
    (fam.qwen36_27b, "GQA", 4, 1, None, (48, 16), None),
    (fam.qwen35_397b_nvfp4, "GQA", 2, 1, (512, 10, 1), (45, 15), "modelopt_fp4"),
    (fam.kimi_k25_int4, "MLA", 1, 0, (384, 8, 1), None, "compressed-tensors"),
]


@pytest.mark.parametrize(
    ("builder", "attention", "kv_heads", "mtp", "moe", "hybrid", "quant"),
    FACTS,
    ids=[row[0].__name__ for row in FACTS],
)
def test_family_facts(
    builder, attention, kv_heads, mtp, moe, hybrid, quant, tmp_path: Path
) -> None:
    facts = load_model_facts(builder().write(tmp_path / "m"))
    assert facts.attention == attention
    assert facts.num_kv_heads == kv_heads
    assert facts.mtp_layers == mtp
    got_moe = (
        None
        if facts.moe is None
        else (
            facts.moe.experts,
            facts.moe.active_experts,
            facts.moe.shared_experts,
        )
    )
    assert got_moe == moe
    got_hybrid = (
        None
        if facts.hybrid is None
        else (
            facts.hybrid.linear_layers,
            facts.hybrid.full_layers,
        )
    )
    assert got_hybrid == hybrid
    assert facts.quantization == quant
    assert not facts.is_eagle_draft


class _DictReader:
    """A reader over in-memory files, standing in for the SSH reader of the launch area."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.reads: list[str] = []

    def read_text(self, relpath: str) -> str:
        self.reads.append(relpath)
        if relpath not in self.files:
            raise FileNotFoundError(relpath)
        return self.files[relpath]

    def exists(self, relpath: str) -> bool:
        return relpath in self.files

    def describe(self) -> str:
        return "gpu1:/models/x"


def test_any_reader_with_the_protocol_works() -> None:
    family = fam.deepseek_v3()
    reader = _DictReader({"config.json": json.dumps(family.config)})
    facts = facts_from_reader(reader)
    assert facts.source == "gpu1:/models/x" and facts.attention == "MLA"
    assert set(reader.reads) == set(MODEL_FILES)  # optional files were asked for, not required
    with pytest.raises(ModelReadError, match=r"not found in gpu1:/models/x"):
        facts_from_reader(_DictReader({}))


def test_text_config_of_wrong_shape(tmp_path: Path) -> None:
    family = fam.qwen36_27b()
    family.config["text_config"] = [1, 2]
    with pytest.raises(ModelReadError) as info:
        load_model_facts(family.write(tmp_path))
    assert str(info.value).startswith(
        "config.json: key 'text_config': expected an object, got list"
    )


def _big_index(metadata_first: bool, total: object = 688_586_727_753) -> str:
    weight_map = {
        f"model.layers.{i}.mlp.experts.{e}.up_proj.weight": "m.safetensors"
        for i in range(20)
        for e in range(256)
    }
    parts = [("metadata", {"total_size": total}), ("weight_map", weight_map)]
    return json.dumps(dict(parts if metadata_first else parts[::-1]))


def test_large_index_read_from_its_head() -> None:
    config = json.dumps(fam.deepseek_v3().config)
    text = _big_index(metadata_first=True)
    assert len(text) > 200_000
    head = text[:65536]  # what a remote reader may send: the JSON is cut off
    facts = facts_from_files({"config.json": config, "model.safetensors.index.json": head}, "r")
    assert facts.checkpoint_bytes == 688_586_727_753


def test_large_index_with_metadata_last_is_parsed_whole() -> None:
    config = json.dumps(fam.deepseek_v3().config)
    files = {"config.json": config, "model.safetensors.index.json": _big_index(False)}
    assert facts_from_files(files, "r").checkpoint_bytes == 688_586_727_753


def test_large_index_with_bad_total_size_names_the_key() -> None:
    config = json.dumps(fam.deepseek_v3().config)
    files = {"config.json": config, "model.safetensors.index.json": _big_index(True, "big")}
    with pytest.raises(ModelReadError) as info:
        facts_from_files(files, "r")
    assert (info.value.file, info.value.key) == (
        "model.safetensors.index.json",
        "metadata.total_size",
    )
