"""Exact parameter counts from the Hub's per-dtype element counts, for each storage layout.

Each checkpoint below is laid out tensor by tensor as its quantizer writes it (packed weights,
scales, zero points), the elements are summed per dtype as the Hub reports them, and the decoded
count must match the true number of parameters.
"""

from __future__ import annotations

from collections import Counter

import pytest

from wizard.model_facts import QuantInfo
from wizard.model_params import checkpoint_params

# (in, out) of the linear layers of a small model, and its unquantized tensors (embedding, head,
# norms), in parameters.
LINEARS = [(4096, 4096)] * 4 + [(4096, 14336)] * 2 + [(14336, 4096)] * 2
PLAIN = 2 * 32000 * 4096 + 3 * 4096
TRUE_TOTAL = sum(i * o for i, o in LINEARS) + PLAIN


def _awq(bits: int, group: int) -> Counter[str]:
    pack = 32 // bits
    c: Counter[str] = Counter(F16=PLAIN)
    for i, o in LINEARS:
        c["I32"] += i * (o // pack)  # qweight
        c["I32"] += (i // group) * (o // pack)  # qzeros
        c["F16"] += (i // group) * o  # scales
    return c


def _gptq(bits: int, group: int) -> Counter[str]:
    pack = 32 // bits
    c: Counter[str] = Counter(F16=PLAIN)
    for i, o in LINEARS:
        c["I32"] += (i // pack) * o + (i // group) * (o // pack) + i  # qweight, qzeros, g_idx
        c["F16"] += (i // group) * o
    return c


def _nvfp4() -> Counter[str]:
    c: Counter[str] = Counter(BF16=PLAIN)
    for i, o in LINEARS:
        c["U8"] += i * o // 2  # two FP4 values per byte
        c["F8_E4M3"] += i * o // 16  # block scales
        c["F32"] += 2  # global scales
    return c


def _mxfp4() -> Counter[str]:
    c: Counter[str] = Counter(BF16=PLAIN)
    for i, o in LINEARS:
        c["U8"] += i * o // 2 + i * o // 32  # blocks and E8M0 scales stored as U8 (gpt-oss)
    return c


def _pack_quantized(group: int) -> Counter[str]:
    c: Counter[str] = Counter(BF16=PLAIN)
    for i, o in LINEARS:
        c["I32"] += i * o // 8 + 2  # weight_packed, weight_shape
        c["BF16"] += i * o // group  # weight_scale
    return c


def _fp8_block() -> Counter[str]:
    c: Counter[str] = Counter(BF16=PLAIN)
    for i, o in LINEARS:
        c["F8_E4M3"] += i * o
        c["F32"] += (i // 128 + 1) * (o // 128 + 1)  # weight_scale_inv
    return c


@pytest.mark.parametrize(
    ("counts", "quant"),
    [
        (_awq(4, 128), QuantInfo("awq", "AWQ 4-bit", 4, 128)),
        (_awq(4, 32), QuantInfo("awq", "AWQ 4-bit", 4, 32)),
        (_gptq(4, 128), QuantInfo("gptq", "GPTQ 4-bit", 4, 128)),
        (_gptq(8, 128), QuantInfo("gptq", "GPTQ 8-bit", 8, 128)),
        (_nvfp4(), QuantInfo("modelopt_fp4", "NVFP4 (ModelOpt)", 4, 16)),
        (_mxfp4(), QuantInfo("mxfp4", "MXFP4", 4, 32)),
        (_pack_quantized(32), QuantInfo("compressed-tensors", "INT4 W4A16 g32", 4, 32)),
        (_fp8_block(), QuantInfo("fp8", "FP8 block 128x128", 8, None)),
        (Counter(BF16=TRUE_TOTAL), None),
    ],
    ids=["awq-g128", "awq-g32", "gptq-g128", "gptq-8bit", "nvfp4", "mxfp4", "pack-int4", "fp8",
         "bf16"],
)
def test_decoded_count_is_the_true_count(counts: Counter[str], quant: QuantInfo | None) -> None:
    got = checkpoint_params(dict(counts), quant)
    assert got is not None
    total, how = got
    assert abs(total / TRUE_TOTAL - 1) < 0.002, (total, TRUE_TOTAL, how)
    # The Hub's own total (stored elements) is far off for packed layouts: the decode matters.
    if quant is not None and quant.weight_bits < 8:
        assert abs(sum(counts.values()) / TRUE_TOTAL - 1) > 0.1


def test_unknown_layout_keeps_the_estimate() -> None:
    assert checkpoint_params({"I32": 100}, QuantInfo("bitsandbytes", "bnb 4-bit", 4, 64)) is None


def _write_shard(path, tensors: dict[str, tuple[str, list[int]]]) -> None:  # type: ignore[no-untyped-def]
    """A safetensors file's header (the tensor bytes are not needed: only the header is read)."""
    import json

    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset]}
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw)


def test_local_quantized_folder_counts_from_shard_headers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An AWQ folder: the count comes from its shards' headers, not the config estimate."""
    import json

    from wizard.model_info import load_model_facts

    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": 2, "num_attention_heads": 32,
        "num_key_value_heads": 32, "vocab_size": 32000, "torch_dtype": "float16",
        "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128},
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    shards: list[dict[str, tuple[str, list[int]]]] = [{}, {}]
    true_total = 2 * 32000 * 4096 + (2 * 2 + 1) * 4096
    shards[0]["model.embed_tokens.weight"] = ("F16", [32000, 4096])
    shards[1]["lm_head.weight"] = ("F16", [32000, 4096])
    shards[1]["model.norm.weight"] = ("F16", [4096])
    for layer in range(2):
        for norm in ("input_layernorm", "post_attention_layernorm"):
            shards[layer][f"model.layers.{layer}.{norm}.weight"] = ("F16", [4096])
        for proj, (i, o) in {"q": (4096, 4096), "k": (4096, 4096), "v": (4096, 4096),
                             "o": (4096, 4096), "gate": (4096, 14336), "up": (4096, 14336),
                             "down": (14336, 4096)}.items():
            base = f"model.layers.{layer}.{proj}_proj"
            shards[layer][f"{base}.qweight"] = ("I32", [i, o // 8])
            shards[layer][f"{base}.qzeros"] = ("I32", [i // 128, o // 8])
            shards[layer][f"{base}.scales"] = ("F16", [i // 128, o])
            true_total += i * o
    for index, tensors in enumerate(shards):
        _write_shard(tmp_path / f"model-0000{index + 1}-of-00002.safetensors", tensors)
    facts = load_model_facts(tmp_path)
    assert facts.params_source == "safetensors"
    assert facts.params_total is not None
    assert abs(facts.params_total / true_total - 1) < 0.002
    (tmp_path / "model-00002-of-00002.safetensors").write_bytes(b"\x00")  # a broken shard
    assert load_model_facts(tmp_path).params_source == "estimate"
