"""Model inspection: what a checkpoint folder holds, read from its small JSON files.

The core is pure: `facts_from_files(files, source)` turns the text of `config.json` (and, when
present, `model.safetensors.index.json`, `generation_config.json`, `hf_quant_config.json`,
`quantize_config.json`) into `ModelFacts`. Reading the files goes through a `ModelReader` so the
same code serves a local folder (`LocalReader`) and, in the launch area, a folder on a GPU host
over SSH: a remote caller fetches `MODEL_FILES` itself and calls `facts_from_files`.

Nothing here downloads anything or imports the UI.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from wizard.limits import MAX_CHECKPOINT_BYTES, MAX_CONFIG_INT, MAX_JSON_DEPTH, MAX_LAYERS

CONFIG_FILE = "config.json"
INDEX_FILE = "model.safetensors.index.json"
GENERATION_CONFIG_FILE = "generation_config.json"
MODELOPT_QUANT_FILE = "hf_quant_config.json"
GPTQ_QUANT_FILE = "quantize_config.json"

#: `ORG/NAME` as the Hub spells repo ids (letters, digits, `-`, `_`, `.`).
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def is_repo_id(path: str) -> bool:
    """Whether SGLang would treat `path` as a Hub repo id: `ORG/NAME` that is not a local path.

    SGLang (and transformers) use a local folder when it exists, else download by repo id.
    """
    text = path.strip()
    if not _REPO_ID.match(text) or text.startswith((".", "~")) or ".." in text:
        return False
    return not Path(text).exists()


#: Every file the inspection reads (only `config.json` is required).
MODEL_FILES: tuple[str, ...] = (
    CONFIG_FILE,
    INDEX_FILE,
    GENERATION_CONFIG_FILE,
    MODELOPT_QUANT_FILE,
    GPTQ_QUANT_FILE,
)

AttentionKind = Literal["MHA", "GQA", "MLA"]
#: Where `params_total` comes from: the Hub's safetensors metadata (exact element counts per
#: dtype), the index's `total_size` with the dtype, or the estimate from config.json.
ParamsSource = Literal["safetensors", "index", "estimate"]
#: Where the files were read: a local folder, the Hub (or its cache), a GPU host over SSH.
Origin = Literal["local", "hub", "host", "example"]  # example: shipped config (wizard.example_models)

# Bytes of one element per checkpoint dtype name (config.json `torch_dtype` / `dtype`).
DTYPE_BYTES: dict[str, float] = {
    "float32": 4,
    "float": 4,
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}


# --------------------------------------------------------------------------------------------
# Errors and readers
# --------------------------------------------------------------------------------------------


class ModelReadError(Exception):
    """A model file is missing, is not JSON, or has a key of the wrong shape.

    `file` is the file name relative to the model folder, `key` the dotted key (or None when the
    whole file is at fault), `message` what is wrong; `hint` says what to do.
    """

    def __init__(self, file: str, key: str | None, message: str, hint: str | None = None) -> None:
        self.file = file
        self.key = key
        self.message = message
        self.hint = hint or _default_hint(file, key)
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.file}: key '{self.key}'" if self.key else self.file
        return f"{where}: {self.message}; {self.hint}"


def _default_hint(file: str, key: str | None) -> str:
    if key:
        return (
            f"fix '{key}' in {file} (compare with the model's published config.json) "
            "or point the wizard at the right model folder"
        )
    return f"re-download {file} from the model's repository or point the wizard at the right folder"


class ModelReader(Protocol):
    """Reads the small text files of one model folder (local or remote)."""

    def read_text(self, relpath: str) -> str:
        """Return the file's text; raise FileNotFoundError when it does not exist."""
        ...

    def exists(self, relpath: str) -> bool:
        """Whether the file exists."""
        ...

    def describe(self) -> str:
        """Where the folder is, for messages (a path, or `host:path`)."""
        ...


class LocalReader:
    """A `ModelReader` over a folder on this machine."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def read_text(self, relpath: str) -> str:
        """Return the text of `root/relpath` (UTF-8); FileNotFoundError when absent."""
        return (self.root / relpath).read_text(encoding="utf-8")

    def exists(self, relpath: str) -> bool:
        """Whether `root/relpath` is a file."""
        return (self.root / relpath).is_file()

    def describe(self) -> str:
        """The folder path."""
        return str(self.root)


def resolve_model_dir(path: str | Path) -> Path:
    """Return the folder that holds `config.json`, following the Hugging Face cache layout.

    Accepts a plain model folder, an HF cache repo folder `models--ORG--NAME` (uses the snapshot
    named by `refs/main`, else the newest snapshot) or its `snapshots` folder. Raises
    ModelReadError when no `config.json` can be found, or the path cannot be looked at (a name
    too long for the file system, a folder without permission).
    """
    root = Path(path).expanduser()
    try:
        return _resolve_model_dir(root)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ModelReadError(
            CONFIG_FILE, None, f"cannot read model folder {_short(str(root))} ({reason})",
            "check the path (a model folder, or an HF cache folder models--ORG--NAME)",
        ) from None
    except ValueError as exc:  # a NUL character in the path
        raise ModelReadError(
            CONFIG_FILE, None, f"model folder {_short(str(root))!r} is not a usable path ({exc})",
            "check the path",
        ) from None


def _short(text: str, limit: int = 120) -> str:
    """`text`, cut in the middle when longer than `limit` (a 300-character path in a message)."""
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2:]}"


def _resolve_model_dir(root: Path) -> Path:
    if not root.exists():
        raise ModelReadError(
            CONFIG_FILE,
            None,
            f"model folder {root} does not exist",
            "check the path (a model folder, or an HF cache folder models--ORG--NAME)",
        )
    if not root.is_dir():
        raise ModelReadError(
            CONFIG_FILE, None, f"{root} is a file, not a model folder", "give the folder path"
        )
    if (root / CONFIG_FILE).is_file():
        return root
    repo = root
    if root.name == "snapshots":
        repo = root.parent
    snapshots = repo / "snapshots"
    if snapshots.is_dir():
        ref = repo / "refs" / "main"
        if ref.is_file():
            revision = ref.read_text(encoding="utf-8").strip()
            candidate = snapshots / revision
            if (candidate / CONFIG_FILE).is_file():
                return candidate
        candidates = [d for d in snapshots.iterdir() if (d / CONFIG_FILE).is_file()]
        if candidates:
            return max(candidates, key=lambda d: (d / CONFIG_FILE).stat().st_mtime)
        raise ModelReadError(
            CONFIG_FILE,
            None,
            f"no snapshot under {snapshots} has a config.json",
            "finish the download (huggingface-cli download ORG/NAME) or point at another folder",
        )
    raise ModelReadError(
        CONFIG_FILE,
        None,
        f"not found in {root}",
        "point at the folder that holds config.json (or an HF cache folder models--ORG--NAME)",
    )


def read_model_files(reader: ModelReader) -> dict[str, str]:
    """Read every file of `MODEL_FILES` that exists; `config.json` is required."""
    files: dict[str, str] = {}
    for name in MODEL_FILES:
        try:
            files[name] = reader.read_text(name)
        except FileNotFoundError:
            if name == CONFIG_FILE:
                raise ModelReadError(
                    CONFIG_FILE,
                    None,
                    f"not found in {reader.describe()}",
                    "point at the folder that holds config.json",
                ) from None
        except UnicodeDecodeError as exc:
            raise ModelReadError(name, None, f"is not UTF-8 text ({exc.reason})") from None
        except OSError as exc:  # permission denied, a folder of that name, an I/O error
            reason = exc.strerror or str(exc)
            raise ModelReadError(name, None, f"cannot be read ({reason})") from None
    return files


# --------------------------------------------------------------------------------------------
# The facts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HybridLayout:
    """Linear-attention (Gated DeltaNet / mamba-style) layers vs full-attention layers."""

    linear_layers: int
    full_layers: int
    full_attention_interval: int | None = None


@dataclass(frozen=True)
class MoeInfo:
    """Mixture-of-experts shape: routed experts, experts per token, shared experts."""

    experts: int
    active_experts: int
    shared_experts: int
    moe_layers: int
    expert_intermediate_size: int


@dataclass(frozen=True)
class LinearAttentionDims:
    """Gated DeltaNet dimensions (what sizes the recurrent state per request)."""

    num_key_heads: int
    num_value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int


@dataclass(frozen=True)
class QuantInfo:
    """How the checkpoint's weights are quantized.

    `method` is SGLang's `--quantization` name (`fp8`, `modelopt_fp4`, `compressed-tensors`,
    `awq`, `gptq`, `mxfp4`, ...), `scheme` a readable label (`NVFP4`, `FP8 block 128x128`,
    `INT4 W4A16 g32`), `weight_bits` the bits of a quantized weight and `group_size` its scale
    group (None = per channel/tensor). `excluded` lists the module patterns left unquantized.
    """

    method: str
    scheme: str
    weight_bits: float
    group_size: int | None
    excluded: tuple[str, ...] = ()

    def bytes_per_param(self) -> float:
        """Average bytes per quantized weight element, scales included."""
        scale_bytes = 0.0
        if self.group_size:
            scale_bytes = (
                1.0 if self.method in ("modelopt_fp4", "mxfp4") else 2.0
            ) / self.group_size
        return self.weight_bits / 8 + scale_bytes

    def quantizes(self, module: str) -> bool:
        """Whether a module of this name is quantized (not matched by `excluded`)."""
        return not any(_module_matches(pattern, module) for pattern in self.excluded)


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameters by part, as estimated from the config (main model, MTP layers apart)."""

    embedding: int
    lm_head: int
    attention: int
    linear_attention: int
    dense_mlp: int
    routed_experts: int
    shared_experts: int
    router: int
    norms: int
    vision: int
    mtp: int

    @property
    def total(self) -> int:
        """Main-model parameters (MTP layers not counted, as published sizes do)."""
        return (
            self.embedding
            + self.lm_head
            + self.attention
            + self.linear_attention
            + self.dense_mlp
            + self.routed_experts
            + self.shared_experts
            + self.router
            + self.norms
            + self.vision
        )

    def to_json(self) -> dict[str, int]:
        """Plain dict of the parts."""
        return {
            "embedding": self.embedding,
            "lm_head": self.lm_head,
            "attention": self.attention,
            "linear_attention": self.linear_attention,
            "dense_mlp": self.dense_mlp,
            "routed_experts": self.routed_experts,
            "shared_experts": self.shared_experts,
            "router": self.router,
            "norms": self.norms,
            "vision": self.vision,
            "mtp": self.mtp,
        }


@dataclass(frozen=True)
class ModelFacts:
    """What the wizard knows about one checkpoint. See docs/inspect.md for the JSON keys."""

    source: str
    architectures: tuple[str, ...]
    architecture: str | None
    model_type: str | None
    family: str
    mtp_layers: int
    hybrid: HybridLayout | None
    moe: MoeInfo | None
    attention: AttentionKind
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    context_length: int | None
    dtype: str | None
    quantization: str | None
    params_total: int | None
    params_active: int | None
    params_source: ParamsSource
    is_eagle_draft: bool = False
    is_eagle3_draft: bool = False
    target_hidden_size: int | None = None
    has_attention_sinks: bool = False
    # Details for the memory plan and the screens.
    quant: QuantInfo | None = None
    checkpoint_bytes: int | None = None
    params_estimate: ParamBreakdown | None = None
    kv_lora_rank: int | None = None
    # config.json's KV head count as SGLang's `get_total_num_kv_heads` reads it (for MLA models
    # too, where `num_kv_heads` is the one latent head of the cache): its ROCm default backend
    # for MLA depends on it per rank
    config_kv_heads: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    index_head_dim: int | None = None  # DeepSeek sparse attention (NSA) indexer key size
    linear_attention: LinearAttentionDims | None = None
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    draft_vocab_size: int | None = None
    tie_word_embeddings: bool = False
    vision_layers: int | None = None
    vision_hidden_size: int | None = None
    generation_defaults: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    config_model_type: str | None = None  # config.json's top-level model_type (what AutoConfig reads)
    # config.json's rope_scaling (or rope_parameters) names a `factor` (YaRN and friends)
    rope_scaling_factor: bool = False
    origin: Origin = "local"
    revision: str | None = None  # the commit the Hub resolved to (origin "hub")
    # SGLang's `get_context_length` of the text config (its key order and rope factor rule)
    sglang_context_length: int | None = None
    # config.json's `quantization_config.quant_method`, lower-cased, as SGLang compares it
    checkpoint_quant_method: str | None = None

    @property
    def full_attention_layers(self) -> int:
        """Layers that keep a KV cache for every token (all but linear-attention layers)."""
        if self.hybrid is not None:
            return self.hybrid.full_layers
        return self.num_layers

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form (docs/inspect.md)."""
        return {
            "source": self.source,
            "origin": self.origin,
            "revision": self.revision,
            "architecture": self.architecture,
            "architectures": list(self.architectures),
            "model_type": self.model_type,
            "family": self.family,
            "mtp_layers": self.mtp_layers,
            "hybrid": None
            if self.hybrid is None
            else {
                "linear": self.hybrid.linear_layers,
                "full": self.hybrid.full_layers,
                "full_attention_interval": self.hybrid.full_attention_interval,
            },
            "moe": None
            if self.moe is None
            else {
                "experts": self.moe.experts,
                "active": self.moe.active_experts,
                "shared": self.moe.shared_experts,
                "moe_layers": self.moe.moe_layers,
                "expert_intermediate_size": self.moe.expert_intermediate_size,
            },
            "attention": self.attention,
            "num_layers": self.num_layers,
            "hidden_size": self.hidden_size,
            "num_attention_heads": self.num_attention_heads,
            "num_kv_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "kv_lora_rank": self.kv_lora_rank,
            "vocab_size": self.vocab_size,
            "context_length": self.context_length,
            "dtype": self.dtype,
            "quantization": self.quantization,
            "quantization_scheme": None if self.quant is None else self.quant.scheme,
            "params_total": self.params_total,
            "params_active": self.params_active,
            "params_source": self.params_source,
            "mtp_params": None if self.params_estimate is None else self.params_estimate.mtp,
            "checkpoint_bytes": self.checkpoint_bytes,
            "is_eagle_draft": self.is_eagle_draft,
            "is_eagle3_draft": self.is_eagle3_draft,
            "target_hidden_size": self.target_hidden_size,
            "draft_vocab_size": self.draft_vocab_size,
            "has_attention_sinks": self.has_attention_sinks,
            "vision_tower": self.vision_layers is not None
            or self.vision_hidden_size is not None
            or bool(self.params_estimate and self.params_estimate.vision),
            "sliding_window": self.sliding_window,
            "sliding_window_layers": self.sliding_window_layers,
            "generation_defaults": dict(self.generation_defaults),
            "notes": list(self.notes),
        }


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


SAFETENSORS_HEADER_MAX = 100 * 1024 * 1024  # the format's own limit on the JSON header


def safetensors_header_counts(root: Path) -> dict[str, int] | None:
    """Elements per dtype over the `*.safetensors` shards of a folder, from their headers only
    (8-byte length + JSON). None when there are no shards or one cannot be read."""
    counts: dict[str, int] = {}
    shards = sorted(root.glob("*.safetensors"))
    if not shards:
        return None
    for shard in shards:
        try:
            with shard.open("rb") as handle:
                size = int.from_bytes(handle.read(8), "little")
                if not 0 < size <= SAFETENSORS_HEADER_MAX:
                    return None
                header = json.loads(handle.read(size))
        except (OSError, ValueError, RecursionError):
            return None  # a shard being downloaded or not safetensors: keep the other sources
        if not isinstance(header, dict):
            return None
        for name, tensor in header.items():
            if name == "__metadata__" or not isinstance(tensor, dict):
                continue
            shape = tensor.get("shape")
            dtype = tensor.get("dtype")
            if not isinstance(dtype, str) or not isinstance(shape, list):
                return None
            elements = 1
            for dim in shape:
                if not isinstance(dim, int) or dim < 0:
                    return None
                elements *= dim
                if elements > MAX_CHECKPOINT_BYTES:  # not a real tensor: keep the other sources
                    return None
            counts[dtype] = counts.get(dtype, 0) + elements
    return counts


def facts_from_reader(reader: ModelReader) -> ModelFacts:
    """Inspect the folder behind any `ModelReader` (sync)."""
    return facts_from_files(read_model_files(reader), reader.describe())


# --------------------------------------------------------------------------------------------
# Typed access to JSON with located errors
# --------------------------------------------------------------------------------------------


def _parse_json(file: str, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelReadError(
            file, None, f"is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:  # nested deeper than the parser's stack
        too_deep = True
    else:
        too_deep = json_depth(data) > MAX_JSON_DEPTH
    if too_deep:
        raise ModelReadError(
            file, None, f"is nested more than {MAX_JSON_DEPTH} levels deep",
            "a model's JSON files nest a few levels; check that this is the model's real file",
        )
    if not isinstance(data, dict):
        raise ModelReadError(file, None, f"expected a JSON object, got {_kind(data)}")
    return data


def json_depth(data: Any) -> int:
    """How deeply objects and lists nest in parsed JSON (without recursion: any depth)."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class _Section:
    """A JSON object with typed getters whose errors name the file and the dotted key."""

    def __init__(self, file: str, data: Mapping[str, Any], prefix: str = "") -> None:
        self.file = file
        self.data = data
        self.prefix = prefix

    def key(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def error(self, name: str, message: str) -> ModelReadError:
        return ModelReadError(self.file, self.key(name), message)

    def opt_int(
        self, name: str, *, minimum: int = 0, maximum: int = MAX_CONFIG_INT
    ) -> int | None:
        value = self.data.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise self.error(name, f"expected an integer, got {_kind(value)} {value!r}")
        if value < minimum:
            raise self.error(name, f"expected an integer >= {minimum}, got {value}")
        if value > maximum:
            raise self.error(
                name, f"expected an integer from {minimum} to {maximum}, got {value}"
            )
        return int(value)

    def req_int(self, name: str, default: int | None = None, *, minimum: int = 0) -> int:
        value = self.opt_int(name, minimum=minimum)
        if value is None:
            if default is None:
                raise self.error(name, "is missing (needed to inspect the model)")
            return default
        return value

    def opt_str(self, name: str) -> str | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(name, f"expected a string, got {_kind(value)}")
        return value

    def opt_bool(self, name: str) -> bool | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self.error(name, f"expected true or false, got {_kind(value)}")
        return value

    def opt_str_list(self, name: str) -> list[str] | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(name, f"expected a list of strings, got {_kind(value)}")
        return list(value)

    def opt_int_list(self, name: str) -> list[int] | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise self.error(name, f"expected a list of integers, got {_kind(value)}")
        return list(value)

    def opt_section(self, name: str) -> _Section | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.error(name, f"expected an object, got {_kind(value)}")
        return _Section(self.file, value, f"{self.key(name)}.")


class _Layered:
    """The text-model config (`text_config` when nested) with fall-back to the top level."""

    def __init__(self, top: _Section, text: _Section | None) -> None:
        self.top = top
        self.text = text

    def pick(self, name: str) -> _Section:
        if self.text is not None and self.text.has(name):
            return self.text
        if self.top.has(name):
            return self.top
        return self.text if self.text is not None else self.top

    def opt_int(
        self, name: str, *, minimum: int = 0, maximum: int = MAX_CONFIG_INT
    ) -> int | None:
        return self.pick(name).opt_int(name, minimum=minimum, maximum=maximum)

    def req_int(self, name: str, default: int | None = None, *, minimum: int = 0) -> int:
        return self.pick(name).req_int(name, default, minimum=minimum)

    def first_int(
        self, *names: str, minimum: int = 0, maximum: int = MAX_CONFIG_INT
    ) -> int | None:
        for name in names:
            value = self.opt_int(name, minimum=minimum, maximum=maximum)
            if value is not None:
                return value
        return None

    def opt_str(self, name: str) -> str | None:
        return self.pick(name).opt_str(name)

    def opt_bool(self, name: str) -> bool | None:
        return self.pick(name).opt_bool(name)

    def opt_str_list(self, name: str) -> list[str] | None:
        return self.pick(name).opt_str_list(name)

    def opt_int_list(self, name: str) -> list[int] | None:
        return self.pick(name).opt_int_list(name)

    def opt_section(self, name: str) -> _Section | None:
        return self.pick(name).opt_section(name)

    def has(self, name: str) -> bool:
        return (self.text is not None and self.text.has(name)) or self.top.has(name)

    def missing(self, name: str) -> ModelReadError:
        where = self.text if self.text is not None else self.top
        return where.error(name, "is missing (needed to inspect the model)")


# --------------------------------------------------------------------------------------------
# The core
# --------------------------------------------------------------------------------------------

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
    top = _Section(CONFIG_FILE, _parse_json(CONFIG_FILE, files[CONFIG_FILE]))
    text = top.opt_section("text_config") or top.opt_section("llm_config")
    cfg = _Layered(top, text)

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
    config_kv_heads = kv_heads
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
    breakdown = _estimate_params(
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
    params_active: int | None = _active_params(breakdown, moe)
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
        config_kv_heads=config_kv_heads,
        qk_rope_head_dim=qk_rope,
        v_head_dim=v_head_dim,
        index_head_dim=index_head_dim,
        linear_attention=linear_dims,
        sliding_window=sliding_window if sliding_layers else None,
        sliding_window_layers=sliding_layers,
        draft_vocab_size=draft_vocab,
        tie_word_embeddings=tie,
        vision_layers=vision.opt_int("num_hidden_layers") if vision is not None else None,
        vision_hidden_size=vision.opt_int("hidden_size") if vision is not None else None,
        generation_defaults=_generation_defaults(files),
        notes=tuple(notes),
        origin=origin,
        sglang_context_length=sglang_context,
        checkpoint_quant_method=raw_method.lower() if raw_method else None,
    )


def checkpoint_params(
    counts: Mapping[str, int], quant: QuantInfo | None
) -> tuple[int, str] | None:
    """Parameters stored in a checkpoint from its element counts per safetensors dtype.

    `counts` is the Hub's `safetensors.parameters` (`{"BF16": n, "U8": m, ...}`: stored elements,
    not parameters). Packed formats are unpacked and scales / zero points left out:
    FP4 (ModelOpt, compressed-tensors NVFP4) = 2 per U8 element, F8 block scales dropped;
    MXFP4 = 2 per U8 element with its U8 scales (1 per 32) dropped; AWQ / GPTQ / pack-quantized
    INT-n = 32/n per I32 element, zero points (1 per group) and F16 scales (1 per group) dropped.
    Returns (parameters, how) or None for a layout this does not know.
    """
    c = {str(k).upper(): int(v) for k, v in counts.items()
         if 0 <= int(v) <= MAX_CHECKPOINT_BYTES}  # a count beyond 1 PiB is not a checkpoint
    floats = sum(c.get(k, 0) for k in ("BF16", "F16", "F32", "F64"))
    f8 = c.get("F8_E4M3", 0) + c.get("F8_E5M2", 0)
    u8 = c.get("U8", 0)
    i32 = c.get("I32", 0) + c.get("U32", 0)
    if quant is None:
        return sum(c.values()), "sum of the tensors' elements"
    method = quant.method
    fp4 = method == "modelopt_fp4" or (method == "compressed-tensors" and "NVFP4" in quant.scheme)
    if fp4 and u8:
        return 2 * u8 + floats, "packed FP4 (2 per U8 element) + unquantized tensors, scales left out"
    if method == "mxfp4" and u8:
        group = quant.group_size or 32
        # U8 blocks (2 values each) and, unless stored as F8_E8M0, U8 scales (1 per group)
        weights = 2 * u8 if c.get("F8_E8M0") else round(u8 * 2 * group / (group + 2))
        return weights + floats, "packed MXFP4 (2 per U8 element) + unquantized tensors, scales left out"
    if method in ("fp8", "modelopt_fp8") or (
        method == "compressed-tensors" and quant.scheme.startswith("FP8")
    ):
        if f8:
            return f8 + floats, "FP8 weights + unquantized tensors"
        return None
    packed = method in ("awq", "gptq") or (method == "compressed-tensors" and quant.weight_bits < 8)
    if packed and i32:
        pack = 32 // int(quant.weight_bits)
        size = quant.group_size or 0
        zeros = method in ("awq", "gptq")
        weights = i32 * pack
        if zeros and size:
            weights = round(weights * size / (size + 1))  # qzeros: 1 I32 per group and pack
        scales = weights // size if size else 0
        how = f"INT{int(quant.weight_bits)} packed {pack} per I32 element + unquantized tensors"
        return weights + max(floats - scales, 0) + c.get("I8", 0), how + ", scales left out"
    if method == "compressed-tensors" and c.get("I8"):
        return c["I8"] + floats, "INT8 weights + unquantized tensors"
    return None


_SAFETENSORS_BYTES = {
    "F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
    "U16": 2, "I8": 1, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
}


def checkpoint_size(counts: Mapping[str, int]) -> int | None:
    """Bytes the checkpoint stores, from its element counts per safetensors dtype (None when a
    dtype is unknown)."""
    total = 0
    for dtype, count in counts.items():
        size = _SAFETENSORS_BYTES.get(str(dtype).upper())
        if size is None:
            return None
        total += size * int(count)
    return total


def with_checkpoint_params(facts: ModelFacts, counts: Mapping[str, int]) -> ModelFacts:
    """`facts` with the exact parameter count of the checkpoint (Hub safetensors metadata).

    Published sizes leave MTP layers out, so the estimated MTP part is taken off as for the
    index; the active count of an MoE model is scaled by the same factor as the total.
    Unknown layouts keep the estimate, with a note saying so.
    """
    from dataclasses import replace

    if facts.checkpoint_bytes is None:
        stored_bytes = checkpoint_size(counts)
        if stored_bytes:
            facts = replace(facts, checkpoint_bytes=stored_bytes)
    got = checkpoint_params(counts, facts.quant)
    if got is None:
        note = (
            "parameters estimated from config.json: the safetensors metadata "
            f"({', '.join(sorted(counts))}) has a layout the wizard does not unpack"
        )
        return replace(facts, notes=(*facts.notes, note))
    stored, how = got
    estimate = facts.params_estimate
    mtp = estimate.mtp if estimate is not None else 0
    total = max(stored - mtp, 0)
    active = facts.params_active
    if facts.moe is not None and estimate is not None and estimate.total > 0 and active:
        active = int(active * total / estimate.total)
    elif facts.moe is None:
        active = total
    notes = tuple(n for n in facts.notes if "parameters estimated from config.json" not in n)
    note = f"parameters: exact count from the safetensors metadata ({how})"
    return replace(
        facts,
        params_total=total,
        params_active=active,
        params_source="safetensors",
        notes=(*notes, note),
    )


def is_float_dtype(dtype: str | None) -> bool:
    """Whether a checkpoint dtype is an unquantized float type (bf16, fp16, fp32)."""
    return (dtype or "bfloat16") in ("bfloat16", "float16", "half", "float32", "float")


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


def _hybrid_layout(cfg: _Layered, num_layers: int) -> tuple[HybridLayout | None, int]:
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


def _moe_info(cfg: _Layered, num_layers: int) -> MoeInfo | None:
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


def _dtype(cfg: _Layered) -> str | None:
    for name in ("torch_dtype", "dtype"):
        value = cfg.opt_str(name)
        if value:
            return value.removeprefix("torch.")
    return None


def _generation_defaults(files: Mapping[str, str]) -> dict[str, Any]:
    text = files.get(GENERATION_CONFIG_FILE)
    if text is None:
        return {}
    data = _parse_json(GENERATION_CONFIG_FILE, text)
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
                metadata = _Section(INDEX_FILE, metadata_data, "metadata.")
                return metadata.opt_int("total_size", minimum=1, maximum=MAX_CHECKPOINT_BYTES)
    index = _Section(INDEX_FILE, _parse_json(INDEX_FILE, text))
    section = index.opt_section("metadata")
    if section is None:
        return None
    return section.opt_int("total_size", minimum=1, maximum=MAX_CHECKPOINT_BYTES)


def _module_matches(pattern: str, module: str) -> bool:
    """compressed-tensors `re:` patterns, ModelOpt / HF globs, or plain names.

    A glob or plain name matches the module or any enclosing module (`model.layers.*.self_attn`
    matches `model.layers.3.self_attn.q_proj`); a plain name also matches as a path part.
    """
    if pattern.startswith("re:"):
        return re.match(pattern[3:], module) is not None
    parts = module.split(".")
    prefixes = [".".join(parts[: i + 1]) for i in range(len(parts))]
    if any(ch in pattern for ch in "*?["):
        return any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes)
    return pattern in prefixes or module.endswith("." + pattern) or f".{pattern}." in f".{module}."


# SGLang's `CONTEXT_LENGTH_KEYS` (utils/hf_transformers*): the first one set wins.
SGLANG_CONTEXT_LENGTH_KEYS = (
    "max_sequence_length", "seq_length", "max_seq_len", "model_max_length",
    "max_position_embeddings",
)


def _sglang_context_length(cfg: _Layered) -> int:
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


def _quantization(cfg: _Layered, files: Mapping[str, str]) -> QuantInfo | None:
    """Read `quantization_config` (config.json), `hf_quant_config.json` or `quantize_config.json`."""
    if MODELOPT_QUANT_FILE in files:
        modelopt = _Section(
            MODELOPT_QUANT_FILE, _parse_json(MODELOPT_QUANT_FILE, files[MODELOPT_QUANT_FILE])
        )
        section = modelopt.opt_section("quantization") or modelopt
        return _modelopt(section)
    qc = cfg.opt_section("quantization_config")
    if qc is None and GPTQ_QUANT_FILE in files:
        qc = _Section(GPTQ_QUANT_FILE, _parse_json(GPTQ_QUANT_FILE, files[GPTQ_QUANT_FILE]))
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


def _modelopt(section: _Section) -> QuantInfo:
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


def _compressed_tensors(qc: _Section, excluded: tuple[str, ...]) -> QuantInfo:
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


# --------------------------------------------------------------------------------------------
# Parameter estimate
# --------------------------------------------------------------------------------------------


def _estimate_params(
    cfg: _Layered,
    top: _Section,
    *,
    hidden: int,
    num_layers: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    vocab: int,
    attention: AttentionKind,
    hybrid: HybridLayout | None,
    linear_dims: LinearAttentionDims | None,
    moe: MoeInfo | None,
    mtp_layers: int,
    tie: bool,
    is_eagle3: bool,
    draft_vocab: int | None,
    target_hidden: int | None,
) -> ParamBreakdown:
    """Count the weights from the config, part by part (biases and norms included roughly)."""
    embedding = vocab * hidden
    lm_head = 0 if tie else (draft_vocab or vocab) * hidden
    intermediate = cfg.opt_int("intermediate_size") or 4 * hidden
    bias = bool(cfg.opt_bool("attention_bias")) or bool(cfg.opt_bool("qkv_bias"))

    # One full-attention layer.
    if attention == "MLA":
        q_lora = cfg.opt_int("q_lora_rank")
        qk_nope = cfg.req_int("qk_nope_head_dim", 128)
        qk_rope = cfg.req_int("qk_rope_head_dim", 64)
        v_dim = cfg.req_int("v_head_dim", 128)
        kv_lora = cfg.req_int("kv_lora_rank")
        qk = qk_nope + qk_rope
        q_part = hidden * q_lora + q_lora * heads * qk + q_lora if q_lora else hidden * heads * qk
        kv_part = hidden * (kv_lora + qk_rope) + kv_lora * heads * (qk_nope + v_dim) + kv_lora
        attn_layer = q_part + kv_part + heads * v_dim * hidden
    else:
        gated = bool(cfg.opt_bool("attn_output_gate")) or (
            hybrid is not None and linear_dims is not None
        )
        q_out = heads * head_dim * (2 if gated else 1)
        kv_out = 2 * kv_heads * head_dim
        attn_layer = hidden * (q_out + kv_out) + heads * head_dim * hidden
        if bias:
            attn_layer += q_out + kv_out + hidden
        attn_layer += 2 * head_dim  # q/k norms where present (tiny)
        if top.opt_str("model_type") == "gpt_oss":
            attn_layer += heads  # attention sinks

    full_layers = hybrid.full_layers if hybrid is not None else num_layers
    linear_layers = hybrid.linear_layers if hybrid is not None else 0

    linear_layer = 0
    if linear_dims is not None:
        key_dim = linear_dims.num_key_heads * linear_dims.key_head_dim
        value_dim = linear_dims.num_value_heads * linear_dims.value_head_dim
        linear_layer = (
            hidden * (2 * key_dim + 2 * value_dim)  # in_proj q, k, v, z
            + hidden * 2 * linear_dims.num_value_heads  # in_proj b, a
            + (2 * key_dim + value_dim) * linear_dims.conv_kernel  # conv1d
            + value_dim * hidden  # out_proj
            + 2 * linear_dims.num_value_heads
            + linear_dims.value_head_dim
        )
    elif linear_layers:
        # A mamba-style layer without Gated DeltaNet dims: count it like an attention layer.
        linear_layer = attn_layer

    mlp_bias = top.opt_str("model_type") == "gpt_oss"
    dense_layer = 3 * hidden * intermediate
    routed = shared = router = 0
    dense_layers = num_layers
    routed_layer = shared_layer = router_layer = 0
    if moe is not None:
        dense_layers = num_layers - moe.moe_layers
        per_expert = 3 * hidden * moe.expert_intermediate_size
        if mlp_bias:
            per_expert += 2 * moe.expert_intermediate_size + hidden
        routed_layer = moe.experts * per_expert
        shared_size = cfg.opt_int("shared_expert_intermediate_size")
        if shared_size:
            shared_layer = 3 * hidden * shared_size + hidden  # + shared-expert gate
        elif moe.shared_experts:
            shared_layer = moe.shared_experts * 3 * hidden * moe.expert_intermediate_size
        router_layer = moe.experts * hidden + (moe.experts if mlp_bias else 0)
        routed = routed_layer * moe.moe_layers
        shared = shared_layer * moe.moe_layers
        router = router_layer * moe.moe_layers

    norms = (2 * num_layers + 1) * hidden
    if is_eagle3:
        # EAGLE-3 draft: fc over three target hidden states; its single layer reads 2 x hidden.
        fc_in = 3 * (target_hidden or hidden)
        embedding += fc_in * hidden + hidden * heads * head_dim  # fc + wider qkv input
    mtp = 0
    if mtp_layers:
        last_is_moe = moe is not None and moe.moe_layers > 0
        mtp_layer = (
            (attn_layer if full_layers else linear_layer)
            + (routed_layer + shared_layer + router_layer if last_is_moe else dense_layer)
            + 2 * hidden * hidden  # eh_proj / fc over [embedding, hidden]
            + 4 * hidden
        )
        mtp = mtp_layers * mtp_layer
    return ParamBreakdown(
        embedding=embedding,
        lm_head=lm_head,
        attention=attn_layer * full_layers,
        linear_attention=linear_layer * linear_layers,
        dense_mlp=dense_layer * dense_layers,
        routed_experts=routed,
        shared_experts=shared,
        router=router,
        norms=norms,
        vision=_vision_params(top),
        mtp=mtp,
    )


def _vision_params(top: _Section) -> int:
    """Rough size of a vision tower from `vision_config` (ViT blocks + merger)."""
    vision = top.opt_section("vision_config")
    if vision is None:
        return 0
    width = (
        vision.opt_int("hidden_size")
        or vision.opt_int("embed_dim")
        or vision.opt_int("vt_hidden_size")
    )
    depth = (
        vision.opt_int("depth")
        or vision.opt_int("num_hidden_layers")
        or vision.opt_int("vt_num_hidden_layers")
    )
    if not width or not depth:
        return 0
    inner = (
        vision.opt_int("intermediate_size") or vision.opt_int("vt_intermediate_size") or 4 * width
    )
    out = vision.opt_int("out_hidden_size") or width
    merge = (vision.opt_int("spatial_merge_size") or 2) ** 2
    blocks = depth * (4 * width * width + 2 * width * inner + 4 * width)
    merger = width * merge * width * merge + width * merge * out
    return blocks + merger


def _active_params(breakdown: ParamBreakdown, moe: MoeInfo | None) -> int | None:
    """Parameters used per token, counted like the gpt-oss model card: the input embedding is a
    lookup and does not count, the output head does. Dense models: the total."""
    if moe is None:
        return breakdown.total
    routed_active = breakdown.routed_experts * moe.active_experts // moe.experts
    return breakdown.total - breakdown.routed_experts + routed_active - breakdown.embedding
