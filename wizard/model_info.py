"""Model inspection: what a checkpoint folder holds, read from its small JSON files.

The core is pure: `facts_from_files(files, source)` turns the text of `config.json` (and, when
present, `model.safetensors.index.json`, `generation_config.json`, `hf_quant_config.json`,
`quantize_config.json`) into `ModelFacts`. Reading the files goes through a `ModelReader` so the
same code serves a local folder (`LocalReader`) and, in the launch area, a folder on a GPU host
over SSH: a remote caller fetches `MODEL_FILES` itself and calls `facts_from_files`.

Around it: `wizard.model_files` (the files, readers, errors and typed JSON access),
`wizard.model_facts` (the dataclasses), `wizard.model_params` (parameter counts).

Nothing here downloads anything or imports the UI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wizard.limits import MAX_CHECKPOINT_BYTES, MAX_LAYERS
from wizard.model_facts import (
    DTYPE_BYTES,
    AttentionKind,
    HybridLayout,
    LinearAttentionDims,
    ModelFacts,
    MoeInfo,
    Origin,
    ParamsSource,
    QuantInfo,
    is_float_dtype,
)
from wizard.model_files import (
    CONFIG_FILE,
    GENERATION_CONFIG_FILE,
    GPTQ_QUANT_FILE,
    INDEX_FILE,
    MODELOPT_QUANT_FILE,
    Layered,
    LocalReader,
    ModelReader,
    ModelReadError,
    Section,
    parse_json,
    read_model_files,
    resolve_model_dir,
    safetensors_header_counts,
)
from wizard.model_params import active_params, estimate_params, with_checkpoint_params


def load_model_facts(path: str | Path) -> ModelFacts:
    """Inspect a local model folder (plain or HF cache layout).

    A quantized checkpoint whose shards are in the folder gets its exact parameter count from the
    shards' safetensors headers (the JSON before the tensors; no weight is read), as the Hub's
    metadata gives it for a repo id.
    """
    root = resolve_model_dir(path)
    facts = facts_from_reader(LocalReader(root))
    if facts.quant is not None:
        counts = safetensors_header_counts(root)
        if counts:
            facts = with_checkpoint_params(facts, counts)
    return facts


def facts_from_reader(reader: ModelReader) -> ModelFacts:
    """Inspect the folder behind any `ModelReader` (sync)."""
    return facts_from_files(read_model_files(reader), reader.describe())


_FAMILY_BY_ARCH: dict[str, str] = {
    "Qwen3_5ForConditionalGeneration": "qwen3_5",
    "Qwen3_5MoeForConditionalGeneration": "qwen3_5_moe",
    "Qwen3_5ForCausalLM": "qwen3_5",
    "Qwen3_5MoeForCausalLM": "qwen3_5_moe",
    "Qwen3NextForCausalLM": "qwen3_next",
    "KimiK25ForConditionalGeneration": "kimi_k25",
}


_LINEAR_LAYER_NAMES = frozenset(
    {"linear_attention", "mamba", "gated_deltanet", "deltanet", "linear", "kda"}
)


_FULL_LAYER_NAMES = frozenset({"full_attention", "attention", "global", "full"})


_SLIDING_LAYER_NAMES = frozenset({"sliding_attention", "sliding_window", "local"})


def facts_from_files(
    files: Mapping[str, str], source: str, origin: Origin = "local"
) -> ModelFacts:
    """Turn the text of a model folder's JSON files into ModelFacts (pure, no I/O).

    `files` maps a file name of `MODEL_FILES` to its text; absent optional files are simply left
    out. Raises ModelReadError naming the file and key when something is missing or malformed.
    """
    if CONFIG_FILE not in files:
        raise ModelReadError(
            CONFIG_FILE,
            None,
            f"not found in {source}",
            "point at the folder that holds config.json",
        )
    top = Section(CONFIG_FILE, parse_json(CONFIG_FILE, files[CONFIG_FILE]))
    text = top.opt_section("text_config") or top.opt_section("llm_config")
    cfg = Layered(top, text)

    architectures = tuple(top.opt_str_list("architectures") or ())
    if not architectures and text is not None:
        architectures = tuple(text.opt_str_list("architectures") or ())
    architecture = architectures[0] if architectures else None
    top_model_type = top.opt_str("model_type")
    text_model_type = text.opt_str("model_type") if text is not None else None
    model_type = top_model_type or text_model_type

    is_eagle3 = any("eagle3" in a.lower() for a in architectures)
    is_eagle = is_eagle3 or any("eagle" in a.lower() for a in architectures)

    hidden = cfg.first_int("hidden_size", "d_model", "n_embd", minimum=1)
    if hidden is None:
        raise cfg.missing("hidden_size")
    num_layers = cfg.first_int(
        "num_hidden_layers", "n_layer", "num_layers", minimum=1, maximum=MAX_LAYERS
    )
    if num_layers is None:
        raise cfg.missing("num_hidden_layers")
    heads = cfg.first_int("num_attention_heads", "n_head", minimum=1)
    if heads is None:
        raise cfg.missing("num_attention_heads")
    kv_heads = cfg.first_int("num_key_value_heads", "num_kv_heads", minimum=1) or heads
    vocab = cfg.req_int("vocab_size", minimum=1)

    kv_lora_rank = cfg.opt_int("kv_lora_rank", minimum=1)
    qk_rope = cfg.opt_int("qk_rope_head_dim")
    qk_nope = cfg.opt_int("qk_nope_head_dim")
    v_head_dim = cfg.opt_int("v_head_dim")
    index_head_dim = cfg.opt_int("index_head_dim") if kv_lora_rank else None
    rope = (cfg.pick("rope_scaling").data.get("rope_scaling")
            or cfg.pick("rope_parameters").data.get("rope_parameters"))
    rope_factor = isinstance(rope, Mapping) and rope.get("factor") is not None
    attention: AttentionKind
    if kv_lora_rank is not None:
        attention = "MLA"
        head_dim = (qk_nope or 0) + (qk_rope or 0) or cfg.req_int("head_dim", hidden // heads)
        kv_heads = 1
    else:
        head_dim = cfg.opt_int("head_dim", minimum=1) or hidden // heads
        attention = "MHA" if kv_heads == heads else "GQA"
        if heads % kv_heads:
            raise cfg.pick("num_key_value_heads").error(
                "num_key_value_heads",
                f"{kv_heads} does not divide num_attention_heads {heads}",
            )

    rotary_dim = _rotary_dim(cfg, head_dim, qk_rope if attention == "MLA" else None)
    hybrid, sliding_layers = _hybrid_layout(cfg, num_layers)
    linear_dims = None
    if hybrid is not None and cfg.has("linear_num_value_heads"):
        linear_dims = LinearAttentionDims(
            num_key_heads=cfg.req_int("linear_num_key_heads", minimum=1),
            num_value_heads=cfg.req_int("linear_num_value_heads", minimum=1),
            key_head_dim=cfg.req_int("linear_key_head_dim", minimum=1),
            value_head_dim=cfg.req_int("linear_value_head_dim", minimum=1),
            conv_kernel=cfg.req_int("linear_conv_kernel_dim", 4, minimum=1),
        )

    moe = _moe_info(cfg, num_layers)
    mtp_layers = max(
        cfg.opt_int("num_nextn_predict_layers", maximum=MAX_LAYERS) or 0,
        cfg.opt_int("mtp_num_hidden_layers", maximum=MAX_LAYERS) or 0,
    )

    dtype = _dtype(cfg)
    quant = _quantization(cfg, files)
    index_bytes = _index_total_size(files)

    context_length = cfg.first_int(
        "max_position_embeddings", "max_sequence_length", "seq_length", "n_positions"
    )
    sglang_context = _sglang_context_length(cfg)
    quant_section = cfg.opt_section("quantization_config")
    raw_method = quant_section.opt_str("quant_method") if quant_section is not None else None
    sliding_window = cfg.opt_int("sliding_window")
    if sliding_window is not None and sliding_layers == 0 and cfg.opt_bool("use_sliding_window"):
        sliding_layers = num_layers
    has_sinks = model_type == "gpt_oss" or bool(cfg.opt_bool("attention_sinks"))

    tie = bool(cfg.opt_bool("tie_word_embeddings"))
    draft_vocab = cfg.opt_int("draft_vocab_size", minimum=1)
    target_hidden = cfg.opt_int("target_hidden_size", minimum=1)
    if is_eagle3 and target_hidden is None:
        eagle_config = cfg.opt_section("eagle_config")
        if eagle_config is not None:
            target_hidden = eagle_config.opt_int("target_hidden_size", minimum=1)

    vision = top.opt_section("vision_config")
    notes: list[str] = []
    breakdown = estimate_params(
        cfg,
        top,
        hidden=hidden,
        num_layers=num_layers,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        vocab=vocab,
        attention=attention,
        hybrid=hybrid,
        linear_dims=linear_dims,
        moe=moe,
        mtp_layers=mtp_layers,
        tie=tie,
        is_eagle3=is_eagle3,
        draft_vocab=draft_vocab,
        target_hidden=target_hidden,
    )
    params_total: int | None = breakdown.total
    params_active: int | None = active_params(breakdown, moe)
    params_source: ParamsSource = "estimate"
    unquantized_bytes = DTYPE_BYTES.get(dtype or "bfloat16", 2)
    if index_bytes is not None and quant is None and is_float_dtype(dtype):
        # The index holds bytes; an unquantized checkpoint stores every parameter at `dtype`.
        index_params = int(index_bytes / unquantized_bytes)
        # Published sizes leave MTP layers out; the index holds them.
        index_main = max(index_params - breakdown.mtp, 0)
        params_source = "index"
        if moe is not None and breakdown.total > 0:
            params_active = (
                int(params_active * index_main / breakdown.total) if params_active else None
            )
        params_total = index_main
    elif index_bytes is not None and quant is not None:
        notes.append(
            f"quantized checkpoint ({quant.scheme}): parameters estimated from config.json; "
            f"the safetensors index gives the stored size ({index_bytes / 2**30:.1f} GiB)"
        )

    return ModelFacts(
        source=source,
        architectures=architectures,
        architecture=architecture,
        model_type=model_type,
        config_model_type=top_model_type,
        rope_scaling_factor=rope_factor,
        family=_family(architecture, top_model_type, text_model_type, is_eagle, is_eagle3),
        mtp_layers=mtp_layers,
        hybrid=hybrid,
        moe=moe,
        attention=attention,
        num_layers=num_layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        config_kv_heads=cfg.first_int("n_head_kv", "num_kv_heads", "num_key_value_heads",
                                      "multi_query_group_num", "num_attention_groups",
                                      minimum=1) or heads,
        head_dim=head_dim,
        vocab_size=vocab,
        context_length=context_length,
        dtype=dtype,
        quantization=None if quant is None else quant.method,
        params_total=params_total,
        params_active=params_active,
        params_source=params_source,
        is_eagle_draft=is_eagle,
        is_eagle3_draft=is_eagle3,
        target_hidden_size=target_hidden,
        has_attention_sinks=has_sinks,
        quant=quant,
        checkpoint_bytes=index_bytes,
        params_estimate=breakdown,
        kv_lora_rank=kv_lora_rank,
        qk_rope_head_dim=qk_rope,
        v_head_dim=v_head_dim,
        index_head_dim=index_head_dim,
        rotary_dim=rotary_dim,
        linear_attention=linear_dims,
        sliding_window=sliding_window if sliding_layers else None,
        sliding_window_layers=sliding_layers,
        draft_vocab_size=draft_vocab,
        tie_word_embeddings=tie,
        # Kimi-K2.5 names its tower `vt_num_hidden_layers` / `vt_hidden_size`; SGLang's own
        # `KimiK25VisionConfig` takes `num_hidden_layers=27, hidden_size=1152` (its __init__
        # defaults in configs/kimi_k25.py), the same numbers, and `adjust_mem_fraction_for_vlm`
        # reads those attributes (an 8x MI355X log's 0.8260405859375 = 0.908 x 0.95 x 0.9576).
        vision_layers=(
            (vision.opt_int("num_hidden_layers") or vision.opt_int("vt_num_hidden_layers"))
            if vision is not None else None
        ),
        vision_hidden_size=(
            (vision.opt_int("hidden_size") or vision.opt_int("vt_hidden_size"))
            if vision is not None else None
        ),
        generation_defaults=_generation_defaults(files),
        notes=tuple(notes),
        origin=origin,
        sglang_context_length=sglang_context,
        checkpoint_quant_method=raw_method.lower() if raw_method else None,
        nvfp4_moe_hybrid=_nvfp4_moe_hybrid(quant_section),
        config_keys=frozenset(k for k, v in top.data.items() if v is not None),
    )


def _family(
    architecture: str | None,
    top_model_type: str | None,
    text_model_type: str | None,
    is_eagle: bool,
    is_eagle3: bool,
) -> str:
    if is_eagle3:
        return "eagle3_draft"
    if is_eagle:
        return "eagle_draft"
    if architecture in _FAMILY_BY_ARCH:
        return _FAMILY_BY_ARCH[architecture]
    if top_model_type:
        return top_model_type
    if text_model_type:
        return text_model_type.removesuffix("_text")
    if architecture:
        return re.sub(r"For(CausalLM|ConditionalGeneration)$", "", architecture).lower()
    return "unknown"


def _hybrid_layout(cfg: Layered, num_layers: int) -> tuple[HybridLayout | None, int]:
    """(hybrid layout or None, number of sliding-window layers)."""
    interval = cfg.opt_int("full_attention_interval", minimum=1)
    layer_types = cfg.opt_str_list("layer_types")
    if layer_types is not None:
        if len(layer_types) != num_layers:
            raise cfg.pick("layer_types").error(
                "layer_types",
                f"has {len(layer_types)} entries but num_hidden_layers is {num_layers}",
            )
        kinds = [t.lower() for t in layer_types]
        linear = sum(k in _LINEAR_LAYER_NAMES for k in kinds)
        sliding = sum(k in _SLIDING_LAYER_NAMES for k in kinds)
        unknown = sorted(
            {k for k in kinds} - _LINEAR_LAYER_NAMES - _FULL_LAYER_NAMES - _SLIDING_LAYER_NAMES
        )
        if unknown:
            raise cfg.pick("layer_types").error(
                "layer_types",
                f"unknown layer type {unknown[0]!r} (known: linear_attention, full_attention, "
                "sliding_attention)",
            )
        if linear:
            return HybridLayout(linear, num_layers - linear, interval), sliding
        return None, sliding
    pattern = cfg.opt_str("hybrid_override_pattern")
    if pattern is not None:  # Nemotron-H: M = mamba, * = attention, - = MLP only
        mamba = pattern.count("M")
        full = pattern.count("*")
        if mamba:
            return HybridLayout(mamba, full, None), 0
    if interval is not None and (
        cfg.has("linear_num_value_heads") or cfg.has("linear_key_head_dim")
    ):
        full = num_layers // interval
        return HybridLayout(num_layers - full, full, interval), 0
    return None, 0


def _moe_info(cfg: Layered, num_layers: int) -> MoeInfo | None:
    experts = cfg.first_int(
        "n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts"
    )
    if not experts or experts <= 1:
        return None
    active = cfg.first_int(
        "num_experts_per_tok", "experts_per_token", "moe_topk", "num_experts_per_token"
    )
    if active is None:
        raise cfg.missing("num_experts_per_tok")
    shared = cfg.opt_int("n_shared_experts")
    if shared is None:
        shared_size = cfg.opt_int("shared_expert_intermediate_size")
        shared = 1 if shared_size else 0
    expert_size = cfg.first_int(
        "moe_intermediate_size", "expert_intermediate_size", "intermediate_size"
    )
    if expert_size is None:
        raise cfg.missing("moe_intermediate_size")
    dense_first = cfg.opt_int("first_k_dense_replace") or 0
    step = (
        cfg.opt_int("decoder_sparse_step", minimum=1)
        or cfg.opt_int("moe_layer_freq", minimum=1)
        or 1
    )
    mlp_only = set(cfg.opt_int_list("mlp_only_layers") or [])
    moe_layers = sum(
        1
        for i in range(num_layers)
        if i >= dense_first and i not in mlp_only and (i + 1) % step == 0
    )
    return MoeInfo(experts, active, shared, moe_layers, expert_size)


def _dtype(cfg: Layered) -> str | None:
    for name in ("torch_dtype", "dtype"):
        value = cfg.opt_str(name)
        if value:
            return value.removeprefix("torch.")
    return None


def _generation_defaults(files: Mapping[str, str]) -> dict[str, Any]:
    text = files.get(GENERATION_CONFIG_FILE)
    if text is None:
        return {}
    data = parse_json(GENERATION_CONFIG_FILE, text)
    keys = ("temperature", "top_p", "top_k", "max_new_tokens", "max_length", "eos_token_id")
    return {k: data[k] for k in keys if k in data}


INDEX_HEAD_BYTES = 64 * 1024


_INDEX_METADATA = re.compile(r'"metadata"\s*:\s*(\{[^{}]*\})')


def _index_total_size(files: Mapping[str, str]) -> int | None:
    """`metadata.total_size` of the safetensors index.

    Only the `metadata` object is used, so a large index (DeepSeek-size: ~9 MB of `weight_map`) is
    not parsed whole: the object is cut out of the text, which also works on the first
    `INDEX_HEAD_BYTES` of the file (what a remote reader may send). Small files are parsed fully.
    """
    text = files.get(INDEX_FILE)
    if text is None:
        return None
    if len(text) > 4096:
        match = _INDEX_METADATA.search(text, 0, INDEX_HEAD_BYTES)
        if match is not None:
            try:
                metadata_data = json.loads(match.group(1))
            except json.JSONDecodeError:
                metadata_data = None
            if isinstance(metadata_data, dict):
                metadata = Section(INDEX_FILE, metadata_data, "metadata.")
                return metadata.opt_int("total_size", minimum=1, maximum=MAX_CHECKPOINT_BYTES)
    index = Section(INDEX_FILE, parse_json(INDEX_FILE, text))
    section = index.opt_section("metadata")
    if section is None:
        return None
    return section.opt_int("total_size", minimum=1, maximum=MAX_CHECKPOINT_BYTES)


# SGLang's `CONTEXT_LENGTH_KEYS` (utils/hf_transformers*): the first one set wins.
SGLANG_CONTEXT_LENGTH_KEYS = (
    "max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
    "max_position_embeddings",
)


def _rotary_dim(cfg: Layered, head_dim: int, mla_rope: int | None) -> int:
    """The width SGLang's rotary embedding turns (its cos/sin cache is max positions x this):
    MLA's qk_rope_head_dim, a config's `rotary_dim`, else the head dim times the config's
    `partial_rotary_factor` (top level, text config or rope parameters; `rotary_pct` in GPT-NeoX
    configs), as `get_rope` takes `int(rotary_dim * partial_rotary_factor)`."""
    if mla_rope:
        return mla_rope
    explicit = cfg.opt_int("rotary_dim", minimum=1)
    if explicit is not None:
        return explicit
    ropes = [cfg.pick(key).data.get(key) for key in ("rope_parameters", "rope_scaling")]
    for name in ("partial_rotary_factor", "rotary_pct"):
        section = cfg.pick(name)
        value = section.data.get(name)
        for rope in ropes:
            if value is None and isinstance(rope, Mapping):
                value = rope.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise section.error(name, f"expected a number above 0 and at most 1, got {value!r}")
        return max(int(head_dim * value), 1)
    return head_dim


def _sglang_context_length(cfg: Layered) -> int:
    """SGLang's `get_context_length(hf_text_config)`: the first context key times the rope
    scaling factor (1 when the scaling names `original_max_position_embeddings` or is llama3)."""
    rope = (cfg.pick("rope_scaling").data.get("rope_scaling")
            or cfg.pick("rope_parameters").data.get("rope_parameters"))
    factor: float = 1
    if isinstance(rope, Mapping) and rope:
        raw = rope.get("factor", 1)
        factor = raw if isinstance(raw, int | float) and not isinstance(raw, bool) else 1
        if "original_max_position_embeddings" in rope or rope.get("rope_type") == "llama3":
            factor = 1
    for key in SGLANG_CONTEXT_LENGTH_KEYS:
        value = cfg.opt_int(key)
        if value is not None:
            return int(factor * value)
    return 2048


def _quantization(cfg: Layered, files: Mapping[str, str]) -> QuantInfo | None:
    """Read `quantization_config` (config.json), `hf_quant_config.json` or `quantize_config.json`."""
    if MODELOPT_QUANT_FILE in files:
        modelopt = Section(
            MODELOPT_QUANT_FILE, parse_json(MODELOPT_QUANT_FILE, files[MODELOPT_QUANT_FILE])
        )
        section = modelopt.opt_section("quantization") or modelopt
        return _modelopt(section)
    qc = cfg.opt_section("quantization_config")
    if qc is None and GPTQ_QUANT_FILE in files:
        qc = Section(GPTQ_QUANT_FILE, parse_json(GPTQ_QUANT_FILE, files[GPTQ_QUANT_FILE]))
        if not qc.has("quant_method"):
            bits = qc.req_int("bits", 4, minimum=1)
            return QuantInfo("gptq", f"GPTQ {bits}-bit", bits, qc.opt_int("group_size") or None)
    if qc is None:
        return None
    method = (qc.opt_str("quant_method") or "").lower()
    if not method:
        raise qc.error("quant_method", "is missing (cannot tell how the weights are quantized)")
    excluded = tuple(
        qc.opt_str_list("ignore")
        or qc.opt_str_list("modules_to_not_convert")
        or qc.opt_str_list("ignored_layers")
        or qc.opt_str_list("exclude_modules")
        or ()
    )
    if method == "modelopt":
        return _modelopt(qc)
    if method == "fp8":
        block = qc.opt_int_list("weight_block_size")
        scheme = f"FP8 block {block[0]}x{block[1]}" if block and len(block) == 2 else "FP8"
        return QuantInfo("fp8", scheme, 8, None, excluded)
    if method == "mxfp4":
        return QuantInfo("mxfp4", "MXFP4", 4, 32, excluded)
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        bits = qc.req_int("bits", qc.req_int("w_bit", 4), minimum=1)
        group = qc.opt_int("group_size") or qc.opt_int("q_group_size")
        base = method.split("_")[0]
        return QuantInfo(
            base,
            f"{base.upper()} {bits}-bit",
            bits,
            group if group and group > 0 else None,
            excluded,
        )
    if method == "compressed-tensors":
        return _compressed_tensors(qc, excluded)
    if method in ("bitsandbytes",):
        bits = 4 if qc.opt_bool("load_in_4bit") else 8
        return QuantInfo(
            "bitsandbytes", f"bitsandbytes {bits}-bit", bits, 64 if bits == 4 else None, excluded
        )
    # Unknown method: keep the name SGLang would see, assume 8-bit weights.
    return QuantInfo(method, method, 8, None, excluded)


def _modelopt(section: Section) -> QuantInfo:
    algo = (section.opt_str("quant_algo") or "").upper()
    excluded = tuple(section.opt_str_list("exclude_modules") or ())
    group = section.opt_int("group_size")
    if "NVFP4" in algo or "FP4" in algo:
        return QuantInfo("modelopt_fp4", "NVFP4 (ModelOpt)", 4, group or 16, excluded)
    if "FP8" in algo:
        return QuantInfo("modelopt_fp8", "FP8 (ModelOpt)", 8, None, excluded)
    if not algo:
        raise section.error("quant_algo", "is missing (expected NVFP4 or FP8)")
    return QuantInfo("modelopt", f"{algo} (ModelOpt)", 8, group, excluded)


def _compressed_tensors(qc: Section, excluded: tuple[str, ...]) -> QuantInfo:
    groups = qc.opt_section("config_groups")
    bits = 8
    group_size: int | None = None
    kind = "int"
    fmt = qc.opt_str("format") or ""
    if groups is not None:
        for name in groups.data:
            group = groups.opt_section(name)
            weights = group.opt_section("weights") if group is not None else None
            if weights is None:
                continue
            bits = weights.req_int("num_bits", 8, minimum=1)
            group_size = weights.opt_int("group_size") or None
            kind = weights.opt_str("type") or "int"
            break
    if kind == "float" and bits == 4:
        scheme = "NVFP4 (compressed-tensors)"
    elif kind == "float":
        scheme = f"FP{bits} (compressed-tensors)"
    else:
        scheme = f"INT{bits} W{bits}A16" + (f" g{group_size}" if group_size else "")
        if "pack" in fmt or fmt:
            scheme += f" ({fmt})"
    return QuantInfo("compressed-tensors", scheme, bits, group_size, excluded)


def _nvfp4_moe_hybrid(quant_section: Section | None) -> bool:
    """A hybrid FP8 + NVFP4-MoE checkpoint (`ModelFacts.nvfp4_moe_hybrid`)."""
    if quant_section is None:
        return False
    algo = (quant_section.opt_str("quant_algo") or "").upper()
    moe = (quant_section.opt_str("moe_quant_algo") or "").upper()
    return (algo == "MIXED_PRECISION" and moe == "NVFP4"
            and quant_section.opt_int("group_size") is not None)
