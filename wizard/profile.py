"""The launch profile: everything needed to reproduce an SGLang launch, as pydantic v2 models.

A profile is what the user typed: `None` means "not passed, let SGLang decide". TOML files carry a
`schema_version`; loading reports every problem with file, dotted key, line and what is allowed;
saving is atomic (temp file + fsync + rename), so a crash never leaves a half-written profile.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
import tomllib
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import tomli_w
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from wizard.files import PRIVATE_MODE, write_text
from wizard.gpus import CUSTOM_EXAMPLES, UnknownGpuError, lookup, names

# The path helpers live in wizard.profile_paths (no pydantic); callers may import them from here.
from wizard.limits import (
    MAX_BATCH,
    MAX_GPUS,
    MAX_NODES,
    MAX_PARALLEL,
    MAX_SPEC_COUNT,
    MAX_TOKENS,
)
from wizard.profile_paths import EXPORTS_DIR_ENV as EXPORTS_DIR_ENV
from wizard.profile_paths import PROFILES_DIR_ENV as PROFILES_DIR_ENV
from wizard.profile_paths import builtin_profiles_dir as builtin_profiles_dir
from wizard.profile_paths import exports_dir as exports_dir
from wizard.profile_paths import find_profile as find_profile
from wizard.profile_paths import list_profiles as list_profiles
from wizard.profile_paths import profile_path as profile_path
from wizard.profile_paths import profiles_dir as profiles_dir
from wizard.profile_paths import validate_profile_name as validate_profile_name
from wizard.secrets import (
    OptionOf,
    exact_secret_option,
    literal_secrets,
    protect_argv,
    protect_env,
)
from wizard.sglang.errors import FlagDataError
from wizard.sglang.fields import BY_DEST
from wizard.sglang.flags import load_table, secret_option_of
from wizard.sglang.releases import default_version
from wizard.sglang.versions import VersionError, parse_version

SCHEMA_VERSION = 1
# The version a new profile gets: the release data's default (`wizard/sglang/releases/data/index.json`).
DEFAULT_SGLANG_VERSION = default_version()

PositiveInt = Annotated[StrictInt, Field(ge=1)]
# Sane ranges (wizard.limits): far above any machine, low enough that no plan, loop or node list
# sized by them runs away (nnodes = 2**40 used to spin in the rules).
ParallelSize = Annotated[StrictInt, Field(ge=1, le=MAX_PARALLEL)]
NodeCount = Annotated[StrictInt, Field(ge=1, le=MAX_NODES)]
GpuCount = Annotated[StrictInt, Field(ge=1, le=MAX_GPUS)]
TokenCount = Annotated[StrictInt, Field(ge=1, le=MAX_TOKENS)]
BatchSize = Annotated[StrictInt, Field(ge=1, le=MAX_BATCH)]
TokenInt = Annotated[StrictInt, Field(ge=-1, le=MAX_TOKENS)]  # -1: "off" (chunked prefill)
Port = Annotated[StrictInt, Field(ge=1, le=65535)]
#: Steps, topk and draft tokens: SGLang sizes buffers by them; 0 or less is meaningless and more
#: than 1024 is a typo (the memory plan of 10**20 steps is not a plan).
SpecCount = Annotated[StrictInt, Field(ge=1, le=MAX_SPEC_COUNT)]
Fraction = Annotated[StrictFloat | StrictInt, Field(gt=0, le=1)]
NonEmptyStr = Annotated[StrictStr, Field(min_length=1)]

# Matched with `fullmatch`: `$` alone would let a trailing newline through.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?([.+-]?[A-Za-z0-9.+-]*)?", re.ASCII)


class _NotAllowed(ValueError):
    """A validator's refusal that also says what is allowed (shown as `allowed:` in errors)."""

    def __init__(self, message: str, allowed: str) -> None:
        super().__init__(message)
        self.allowed = allowed


def _env_name(name: str) -> str:
    if not _ENV_NAME.fullmatch(name):
        raise _NotAllowed(
            f"{name!r} is not a valid environment variable name",
            "letters, digits and '_', not starting with a digit (e.g. SGLANG_ENABLE_SPEC_V2)",
        )
    return name


EnvName = Annotated[StrictStr, AfterValidator(_env_name)]

# `user@host:port`, `host:port`, `[v6]:port`: the port part, as the SSH layer reads it.
_HOST_PORT = re.compile(r"^(?:[^@\s]+@)?(?:\[[^\]]+\]|[^:@\s\[\]]+):(?P<port>\d+)$")


def _host_spec(value: str) -> str:
    """An SSH host (`alias`, `user@host`, `host:port`): a port in it must be 1..65535, as
    `port = ...` must (the SSH layer refuses it only at launch)."""
    match = _HOST_PORT.match(value.strip())
    if match is not None and not 1 <= int(match["port"]) <= 65535:
        raise _NotAllowed(
            f"port {match['port']} in {value!r} is outside 1..65535",
            "HOST, USER@HOST or USER@HOST:PORT with a port from 1 to 65535",
        )
    return value


HostSpec = Annotated[StrictStr, Field(min_length=1), AfterValidator(_host_spec)]
FiniteNumber = Annotated[StrictFloat, Field(allow_inf_nan=False)] | StrictInt

_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return not value.isascii() and _SURROGATE.search(value) is not None
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def _readable_version(value: str) -> bool:
    try:
        parse_version(value)
    except VersionError:
        return False
    return True


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @field_validator("*")
    @classmethod
    def _saveable_text(cls, value: Any) -> Any:
        """Refuse lone surrogates (e.g. undecodable terminal input): UTF-8 files cannot hold them."""
        if _has_surrogate(value):
            raise _NotAllowed(
                "contains a character that cannot be saved as UTF-8 (a lone surrogate)",
                "text without undecodable characters",
            )
        return value


class ModelSection(_Section):
    """The target model and how it is loaded."""

    path: NonEmptyStr = Field(description="Model dir or HF repo id (--model-path)")
    served_model_name: NonEmptyStr | None = None
    tokenizer_path: NonEmptyStr | None = None
    revision: NonEmptyStr | None = None
    dtype: Literal["auto", "half", "float16", "bfloat16", "float", "float32"] | None = None
    trust_remote_code: StrictBool = False
    context_length: TokenCount | None = None
    quantization: NonEmptyStr | None = None
    kv_cache_dtype: NonEmptyStr | None = None
    load_format: NonEmptyStr | None = None


class ParallelSection(_Section):
    """Tensor / data / pipeline parallelism."""

    tp: ParallelSize = 1
    dp: ParallelSize = 1
    pp: ParallelSize = 1
    enable_dp_attention: StrictBool = False
    attn_dp_size: ParallelSize | None = Field(default=None, description="--attn-dp-size, in the releases that have it")
    ep: ParallelSize | None = None
    nnodes: NodeCount = 1


class SpeculativeSection(_Section):
    """Speculative decoding: algorithm, draft model and the steps/topk/draft-tokens trio."""

    algorithm: NonEmptyStr | None = Field(default=None, description="NEXTN, EAGLE, EAGLE3, ...")
    draft_model_path: NonEmptyStr | None = None
    draft_model_revision: NonEmptyStr | None = None
    num_steps: SpecCount | None = None
    eagle_topk: SpecCount | None = None
    num_draft_tokens: SpecCount | None = None
    accept_threshold_single: FiniteNumber | None = None
    accept_threshold_acc: FiniteNumber | None = None
    token_map: NonEmptyStr | None = None
    attention_mode: Literal["prefill", "decode"] | None = None
    draft_attention_backend: NonEmptyStr | None = None
    moe_runner_backend: NonEmptyStr | None = None
    moe_a2a_backend: NonEmptyStr | None = None
    draft_model_quantization: NonEmptyStr | None = None
    adaptive: StrictBool = False
    enable_multi_layer_eagle: StrictBool = False
    skip_dp_mlp_sync: StrictBool = False
    dflash_block_size: TokenInt | None = None
    draft_window_size: TokenInt | None = None
    ngram_min_bfs_breadth: TokenInt | None = None
    ngram_max_bfs_breadth: TokenInt | None = None
    ngram_external_corpus_path: NonEmptyStr | None = None
    ngram_external_sam_budget: TokenInt | None = None
    use_rejection_sampling: StrictBool = False


class HybridSection(_Section):
    """Hybrid linear-attention (mamba / Gated DeltaNet) models: radix-cache strategy and track interval."""

    cache_strategy: Literal["auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"] | None = (
        Field(
            default=None,
            description="--mamba-scheduler-strategy, or --mamba-radix-cache-strategy where renamed",
        )
    )
    track_interval: TokenInt | None = None


class AttentionSection(_Section):
    """Attention kernels and KV page size."""

    backend: NonEmptyStr | None = None
    prefill_backend: NonEmptyStr | None = None
    decode_backend: NonEmptyStr | None = None
    page_size: TokenCount | None = None


class MemorySection(_Section):
    """Memory pool, concurrency and CUDA graphs."""

    mem_fraction_static: Fraction | None = None
    max_running_requests: BatchSize | None = None
    chunked_prefill_size: TokenInt | None = None
    cuda_graph_max_bs: BatchSize | None = None
    cuda_graph_bs: list[BatchSize] | None = None
    disable_cuda_graph: StrictBool = False


class SchedulingSection(_Section):
    """Scheduler switches that the speculative rules read."""

    disable_overlap_schedule: StrictBool = False
    enable_mixed_chunk: StrictBool = False
    disable_radix_cache: StrictBool = False


class ServerSection(_Section):
    """Where the server listens and on which device kind it runs."""

    host: NonEmptyStr | None = None
    port: Port | None = None
    device: Literal["cuda", "xpu", "hpu", "npu", "cpu", "musa"] | None = None


class GpuSection(_Section):
    """The target GPUs (the rules and the memory plan depend on the GPU generation).

    `kind` is a catalog name (H100, MI300X, ... see README "GPU kinds") or a custom kind
    `custom:sm=8.9,mem=48GB` / `custom:arch=gfx942,mem=192GB`. The table form
    `kind = "custom"` with `capability = "8.9"` (or `arch = "gfx942"`), `memory = "48GB"` and an
    optional `name` is read into the same custom spec."""

    kind: NonEmptyStr | None = Field(
        default=None,
        description="H100, A6000, MI300X, ... or custom:sm=8.9,mem=48GB (see README, GPU kinds)",
    )
    count: GpuCount | None = None

    @model_validator(mode="before")
    @classmethod
    def _custom_table(cls, data: Any) -> Any:
        """`kind = "custom"` + capability/arch/memory/name -> `kind = "custom:sm=...,mem=..."`."""
        if not isinstance(data, Mapping):
            return data
        parts = {k: data[k] for k in ("capability", "arch", "memory", "name") if k in data}
        if not parts:
            return data
        rest = {k: v for k, v in data.items() if k not in parts}
        kind = rest.get("kind")
        if kind not in (None, "custom"):
            keys = ", ".join(f"gpu.{k}" for k in parts)
            raise _NotAllowed(
                f"{keys} {'describes' if len(parts) == 1 else 'describe'} a custom kind, "
                f"but kind is {kind!r}",
                'kind = "custom" with capability (or arch) and memory, or a catalog kind alone',
            )
        bad = [k for k, v in parts.items() if not isinstance(v, str) or not v.strip()]
        if bad:
            raise _NotAllowed(
                f"gpu.{bad[0]} must be text, got {parts[bad[0]]!r}",
                'e.g. capability = "8.9", arch = "gfx942", memory = "48GB", name = "RTX A5000"',
            )
        if "," in parts.get("name", "") or "=" in parts.get("name", ""):
            raise _NotAllowed(f"gpu.name {parts['name']!r} holds ',' or '='", "a name without , or =")
        spec_keys = {"capability": "sm", "arch": "arch", "memory": "mem", "name": "name"}
        rest["kind"] = "custom:" + ",".join(f"{spec_keys[k]}={v}" for k, v in parts.items())
        return rest

    @field_validator("kind")
    @classmethod
    def _known_gpu(cls, value: str | None) -> str | None:
        if value is None:
            return value

        try:
            return lookup(value).spec
        except UnknownGpuError as exc:
            message, _, known = str(exc).partition(" Known kinds: ")
            if value.strip().lower().startswith("custom:"):
                known = CUSTOM_EXAMPLES
            raise _NotAllowed(
                message, known or f"{', '.join(names())}; any other GPU: {CUSTOM_EXAMPLES}"
            ) from None


class SshSection(_Section):
    """Where to launch: an ~/.ssh/config alias or user@host:port, optional jump hosts."""

    host: HostSpec | None = None
    user: NonEmptyStr | None = None
    port: Port | None = None
    jump: list[HostSpec] = Field(default_factory=list)
    identity_file: NonEmptyStr | None = None
    python: NonEmptyStr = "python3"
    workdir: NonEmptyStr | None = None


class NodeEntry(_Section):
    """One node of a multi-node launch (its rank is its position in `nodes.hosts`)."""

    host: HostSpec = Field(description="~/.ssh/config alias, host or user@host:port")
    user: NonEmptyStr | None = None
    port: Port | None = None
    address: NonEmptyStr | None = Field(
        default=None, description="the address the other nodes reach this node by"
    )
    interface: NonEmptyStr | None = Field(
        default=None, description="NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME on this node"
    )
    gpu_kind: NonEmptyStr | None = None
    gpu_count: GpuCount | None = None
    python: NonEmptyStr | None = None
    workdir: NonEmptyStr | None = None
    env: dict[EnvName, StrictStr] = Field(default_factory=dict)

    @field_validator("gpu_kind")
    @classmethod
    def _known_gpu(cls, value: str | None) -> str | None:
        return GpuSection._known_gpu(value)


class NodesSection(_Section):
    """Several nodes: the hosts (rank 0 first), the rendezvous address and port, shared hints."""

    hosts: list[NodeEntry] = Field(default_factory=list, max_length=MAX_NODES)
    rendezvous_host: NonEmptyStr | None = Field(
        default=None,
        description="rank 0's address as every node reaches it (default: hosts[0].address or host)",
    )
    rendezvous_port: Port = 5000
    interface: NonEmptyStr | None = Field(
        default=None, description="NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME on every node"
    )


_SIZE = re.compile(r"[1-9][0-9]*(\.[0-9]+)?[bkmgBKMG]?")
_CONTAINER_PATH = re.compile(r"/[^:\x00]*")


def _shm_size(value: str) -> str:
    if not _SIZE.fullmatch(value):
        raise _NotAllowed(f"{value!r} is not a size", 'a size like "32g", "16384m" or "8G"')
    return value


def _mount(value: str) -> str:
    parts = value.split(":")
    options = parts[2] if len(parts) == 3 else None
    if len(parts) not in (2, 3) or not parts[0] or not _CONTAINER_PATH.fullmatch(parts[1]) or (
        options is not None and not set(options.split(",")) <= {"ro", "rw", "z", "Z"}
    ):
        raise _NotAllowed(
            f"{value!r} is not a mount",
            '"HOST_PATH:CONTAINER_PATH" or "HOST_PATH:CONTAINER_PATH:ro" (container path absolute)',
        )
    return value


MountSpec = Annotated[StrictStr, AfterValidator(_mount)]
ShmSize = Annotated[StrictStr, AfterValidator(_shm_size)]


class ContainerSection(_Section):
    """Run SGLang from a container image instead of a host python (docs/remote.md, Containers)."""

    runtime: Literal["docker", "podman", "apptainer", "enroot"] = Field(
        default="docker",
        description="docker or podman on an SSH host; apptainer or enroot (Pyxis) for Slurm",
    )
    image: NonEmptyStr = Field(description=f"e.g. lmsysorg/sglang:v{DEFAULT_SGLANG_VERSION}-cu129")
    python: NonEmptyStr = Field(default="python3", description="the python inside the image")
    gpus: Literal["auto", "nvidia", "amd", "none"] = Field(
        default="auto",
        description="auto: from [gpu] kind (AMD -> ROCm devices, else NVIDIA); none: no GPUs",
    )
    network: Literal["host", "bridge"] = Field(
        default="host", description="host (needed by multi-node), or bridge with the port published"
    )
    ipc_host: StrictBool | None = Field(
        default=None, description="--ipc=host (default: on unless shm_size is set)"
    )
    shm_size: ShmSize | None = Field(default=None, description="--shm-size, e.g. 32g")
    mount_model: StrictBool = Field(
        default=True, description="mount host model/draft folders at the same path inside"
    )
    hf_cache: StrictStr = Field(
        default="~/.cache/huggingface",
        description='host HF cache mounted at /root/.cache/huggingface ("": not mounted)',
    )
    mounts: list[MountSpec] = Field(default_factory=list)
    runtime_args: list[StrictStr] = Field(
        default_factory=list, description="extra words for `docker run` / `podman run`"
    )

    @field_validator("runtime_args")
    @classmethod
    def _no_env_words(cls, value: list[str]) -> list[str]:
        for word in value:
            if word in ("-e", "--env") or word.startswith(("--env=", "-e=")) or (
                word.startswith("-e") and not word.startswith("--")
            ):
                raise _NotAllowed(
                    f"{word!r} would put an environment value on the command line",
                    "environment variables go in [env] (passed as -e NAME; secrets by name)",
                )
        return value

    @model_validator(mode="after")
    def _ipc_or_shm(self) -> ContainerSection:
        if self.ipc_host and self.shm_size is not None:
            raise _NotAllowed(
                "ipc_host = true shares the host's /dev/shm: shm_size would be ignored",
                "either ipc_host = true or shm_size, not both",
            )
        return self

    @property
    def uses_host_ipc(self) -> bool:
        """`--ipc=host`: asked for, or by default when no shm size is given."""
        return self.ipc_host if self.ipc_host is not None else self.shm_size is None


class Profile(_Section):
    """A complete, reproducible SGLang launch."""

    schema_version: Literal[1] = 1
    description: StrictStr = ""
    sglang_version: StrictStr = DEFAULT_SGLANG_VERSION
    model: ModelSection
    parallel: ParallelSection = Field(default_factory=ParallelSection)
    speculative: SpeculativeSection = Field(default_factory=SpeculativeSection)
    hybrid: HybridSection = Field(default_factory=HybridSection)
    attention: AttentionSection = Field(default_factory=AttentionSection)
    memory: MemorySection = Field(default_factory=MemorySection)
    scheduling: SchedulingSection = Field(default_factory=SchedulingSection)
    server: ServerSection = Field(default_factory=ServerSection)
    gpu: GpuSection = Field(default_factory=GpuSection)
    ssh: SshSection = Field(default_factory=SshSection)
    nodes: NodesSection = Field(default_factory=NodesSection)
    container: ContainerSection | None = None
    env: dict[EnvName, StrictStr] = Field(default_factory=dict)
    extra_args: list[StrictStr] = Field(default_factory=list)

    @field_validator("sglang_version")
    @classmethod
    def _version_shape(cls, value: str) -> str:
        # the shape here, and whatever `resolve_version` (check, command, launch) can read
        if not _VERSION.fullmatch(value) or not _readable_version(value):
            raise _NotAllowed(
                f"{value!r} is not a version number", f'a version like "{DEFAULT_SGLANG_VERSION}"'
            )
        return value

    def get(self, dotted: str) -> Any:
        """Read a field by dotted path (`speculative.num_steps`)."""
        section, _, name = dotted.partition(".")
        obj = getattr(self, section)
        if name and obj is None:  # an optional table that is not there ([container])
            return None
        return getattr(obj, name) if name else obj

    def with_edits(self, edits: Mapping[str, Any]) -> Profile:
        """A new validated profile with dotted-path edits applied (`None` unsets a field)."""
        data = self.model_dump()
        for dotted, value in edits.items():
            section, _, name = dotted.partition(".")
            if name:
                if data.get(section) is None and section in _OPTIONAL_TABLES:
                    # an optional table: setting a key creates it, unsetting its required key
                    # (`container.image`) removes it
                    if value is None:
                        continue
                    data[section] = {
                        key: None if info.is_required() else info.get_default(
                            call_default_factory=True)
                        for key, info in _OPTIONAL_TABLES[section].model_fields.items()
                    }
                if section not in data or not isinstance(data[section], dict):
                    raise KeyError(dotted)
                if name not in data[section]:
                    raise KeyError(dotted)
                model = _OPTIONAL_TABLES.get(section)
                if value is None and model is not None and model.model_fields[name].is_required():
                    data[section] = None
                    continue
                data[section][name] = field_default(dotted) if value is None else value
            else:
                if section not in data:
                    raise KeyError(dotted)
                data[section] = value
        return Profile.model_validate(data)


#: Tables that may be left out entirely (the field is `Section | None`).
_OPTIONAL_TABLES: dict[str, type[BaseModel]] = {"container": ContainerSection}


def field_default(dotted: str) -> Any:
    """The default of a section field (`speculative.num_steps` -> None): what "unset" means."""
    section, _, name = dotted.partition(".")
    model = _OPTIONAL_TABLES.get(section) or Profile.model_fields[section].annotation
    assert isinstance(model, type) and issubclass(model, BaseModel), dotted
    return model.model_fields[name].get_default(call_default_factory=True)


# ---------------------------------------------------------------------------------------------
# TOML


@dataclass(frozen=True)
class Problem:
    """One located problem in a profile file."""

    key: str | None
    line: int | None
    message: str
    allowed: str | None = None

    def render(self, file: str) -> str:
        """`file:line: key: message (allowed: ...)`."""
        where = f"{file}:{self.line}" if self.line else file
        key = f" {self.key}:" if self.key else ""
        allowed = f" (allowed: {self.allowed})" if self.allowed else ""
        return f"{where}:{key} {self.message}{allowed}"


@dataclass
class ProfileError(Exception):
    """A profile that cannot be read or saved; lists every located problem."""

    file: str
    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(p.render(self.file) for p in self.problems) or self.file

    @property
    def first(self) -> Problem:
        """The first problem (files always report at least one)."""
        return self.problems[0]


# What a value of a given type looks like, in the user's words: (singular, plural).
_NOUNS: dict[type, tuple[str, str]] = {
    bool: ("true or false", "true/false values"),
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    str: ("a string", "strings"),
}

# pydantic error type -> what the value should have been (type errors).
_EXPECTED: dict[str, str] = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number (no decimal point)",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false (lower case, no quotes)",
    "bool_parsing": "true or false (lower case, no quotes)",
    "string_type": "a string in double quotes",
    "list_type": "a list in brackets [ ... ]",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}

# pydantic error type -> the broken bound (range and length errors); `{...}` come from the ctx.
_BOUNDS: dict[str, str] = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be greater than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "string_too_short": "must not be empty",
    "too_short": "must have at least {min_length} item(s)",
    "too_long": "must have at most {max_length} item(s)",
    "finite_number": "must be a finite number",
    "string_unicode": "contains a character that cannot be saved as UTF-8",
}

# tomllib message prefix -> (plain message, what to do).
_TOML_SYNTAX: tuple[tuple[str, str, str], ...] = (
    (
        "Cannot overwrite a value",
        "this key is set twice",
        "each key once per table; delete one of the two lines",
    ),
    (
        "Duplicate inline table key",
        "this key is set twice in the inline table",
        "each key once; delete one of them",
    ),
    (
        "Cannot declare",
        "this table is declared twice",
        "each [table] once; merge the two sections into one",
    ),
    (
        "Cannot mutate immutable namespace",
        "this table was already written as an inline table { ... }",
        "either `name = { ... }` or a [name] section, not both",
    ),
    (
        "Cannot redefine namespace",
        "this name is already a table",
        "each [table] once; merge the sections",
    ),
    (
        "Invalid value",
        "the value is not valid TOML",
        'a quoted string "...", a number, true or false (lower case), a list [...] or a '
        "table { ... }",
    ),
    (
        "Unterminated string",
        "a string is not closed",
        'close the quote on the same line, or use """...""" for text over several lines',
    ),
    ("Unclosed array", "a list [ ... ] is not closed", "close it with ']'"),
    (
        "Unclosed inline table",
        "an inline table { ... } is not closed",
        "close it with '}' on the same line",
    ),
    ("Expected '=' after a key", "expected '=' after the key", "key = value"),
    (
        "Expected ']' at the end of a table",
        "a [table] header is not closed",
        "[table] with its closing ']'",
    ),
    (
        "Expected ']]' at the end of an array",
        "an [[array]] header is not closed",
        "[[name]] with its closing ']]'",
    ),
    (
        "Invalid initial character for a key part",
        "a key starts with a character that keys cannot start with",
        "keys of letters, digits, '_' and '-' (or in double quotes)",
    ),
    (
        "Invalid statement",
        "this line is neither `key = value` nor a [table] header",
        "key = value or [table]",
    ),
    (
        "Expected newline or end of document",
        "unexpected text after the value",
        "one key = value per line; comments start with #",
    ),
    (
        "Unescaped '\\' in a string",
        "a backslash in a string is not escaped",
        "write \\\\ for a backslash, or use a 'literal string' in single quotes",
    ),
    ("Invalid hex value", "a \\u or \\U escape is not valid", "\\uXXXX or \\UXXXXXXXX"),
    (
        "Escaped character is not a Unicode scalar value",
        "a \\u or \\U escape is not a valid character",
        "a Unicode code point outside the surrogate range",
    ),
    (
        "Illegal character '\\n'",
        "a string is not closed before the end of the line",
        'close the quote on the same line, or use """...""" for text over several lines',
    ),
    (
        "Illegal character",
        "a control character is not allowed here",
        "printable text; write control characters as escapes like \\t",
    ),
    ("Invalid date or datetime", "not a valid date or time", "1979-05-27 or 07:32:00"),
    ("Found invalid character", "unexpected character", "see docs/profiles.md for the syntax"),
)


def _unwrap(annotation: Any) -> tuple[Any, dict[str, Any], bool]:
    """Strip `Annotated` and `| None`: (base type, bounds like {'ge': 1}, whether it may be left out)."""
    bounds: dict[str, Any] = {}
    optional = False
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            args = get_args(annotation)
            for meta in args[1:]:
                items = getattr(meta, "metadata", None)
                for item in [meta, *(items if isinstance(items, list) else [])]:
                    for name in ("ge", "gt", "le", "lt", "min_length"):
                        value = getattr(item, name, None)
                        if isinstance(value, int | float) and not isinstance(value, bool):
                            bounds.setdefault(name, value)
            annotation = args[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            optional = optional or len(members) < len(get_args(annotation))
            if len(members) != 1:
                return Union[tuple(members)], bounds, optional  # noqa: UP007
            annotation = members[0]
        else:
            return annotation, bounds, optional


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _bounds_text(bounds: Mapping[str, Any]) -> str:
    low = (
        ("at least", bounds["ge"])
        if "ge" in bounds
        else ("greater than", bounds["gt"])
        if "gt" in bounds
        else None
    )
    high = (
        ("at most", bounds["le"])
        if "le" in bounds
        else ("less than", bounds["lt"])
        if "lt" in bounds
        else None
    )
    if low and high and low[0] == "at least" and high[0] == "at most":
        return f" from {_number(low[1])} to {_number(high[1])}"
    parts = [f"{bound[0]} {_number(bound[1])}" for bound in (low, high) if bound is not None]
    if not parts:
        return ""
    return (" of " if parts[0].startswith("at ") else " ") + " and ".join(parts)


def _describe(annotation: Any, plural: bool = False) -> str:
    """Plain words for a field type: `an integer from 1 to 65535`, `a list of strings`, ..."""
    base, bounds, _ = _unwrap(annotation)
    origin = get_origin(base)
    if origin is Literal:
        values = ", ".join(json.dumps(v) for v in get_args(base))
        return f"{'values' if plural else 'one'} of {values}"
    if origin in (Union, types.UnionType):
        kinds = {_unwrap(a)[0] for a in get_args(base)}
        if kinds <= {int, float}:
            noun = _NOUNS[float][1 if plural else 0]
        else:
            noun = " or ".join(_describe(a, plural) for a in get_args(base))
        return noun + _bounds_text(bounds)
    if origin is list:
        (item,) = get_args(base) or (Any,)
        return ("lists" if plural else "a list") + " of " + _describe(item, plural=True)
    if origin is dict:
        _, value = get_args(base) or (Any, Any)
        return (
            ("tables" if plural else "a table")
            + " of NAME = value pairs, each value "
            + (_describe(value))
        )
    if isinstance(base, type) and issubclass(base, BaseModel):
        return f"{'tables' if plural else 'a table'} with keys {', '.join(base.model_fields)}"
    if base is str and bounds.get("min_length") == 1:
        return "non-empty strings" if plural else "a non-empty string"
    if isinstance(base, type) and base in _NOUNS:
        return _NOUNS[base][1 if plural else 0] + _bounds_text(bounds)
    return "values" if plural else "a value"


def _field_annotation(model: type[BaseModel], name: str) -> Any:
    """A model field's type with its constraints put back (pydantic moves them to `metadata`)."""
    info = model.model_fields[name]
    if info.metadata:
        return Annotated[(info.annotation, *info.metadata)]
    return info.annotation


@dataclass
class _Where:
    """An error location followed through the Profile's types."""

    loc: list[str | int]
    annotation: Any = None  # the leaf's type (None when the location leaves the schema)
    owner: type[BaseModel] | None = None  # the model whose field (or unknown key) the leaf is
    about_key: bool = False  # the problem is a table key itself (e.g. an env var name)
    description: str | None = None
    key_type: Any = None  # key type of the last dict passed (pydantic reports bad keys as `[key]`)


def _walk(loc: Iterable[Any]) -> _Where:
    """Follow a pydantic location through the schema, dropping union-member tags (`float`, `int`)."""
    where = _Where([], Profile)
    for part in loc:
        if part == "[key]":
            where.about_key = True
            where.annotation = where.key_type
            continue
        if where.annotation is None:
            where.loc.append(part)
            continue
        base, _, _ = _unwrap(where.annotation)
        origin = get_origin(base)
        if isinstance(base, type) and issubclass(base, BaseModel):
            where.loc.append(part)
            where.owner = base
            if isinstance(part, str) and part in base.model_fields:
                where.annotation = _field_annotation(base, part)
                where.description = base.model_fields[part].description
            else:
                where.annotation = None
        elif origin is list and isinstance(part, int):
            where.loc.append(part)
            where.annotation = get_args(base)[0]
        elif origin is dict:
            where.key_type, where.annotation = get_args(base)
            where.loc.append(part)
        elif origin in (Union, types.UnionType):
            continue  # pydantic names the union member it tried; the user wrote one value
        else:
            where.loc.append(part)
            where.annotation = None
    return where


def _dotted(loc: Iterable[Any]) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts[-1:] = [f"{parts[-1]}[{p}]"] if parts else [f"[{p}]"]
        else:
            parts.append(str(p))
    return ".".join(parts)


def _show(value: Any, limit: int = 60) -> str:
    """A value as the user wrote it in TOML (strings in double quotes, true/false, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table { ... }"
    if isinstance(value, dt.date | dt.time):
        return f"the date/time {value.isoformat()}"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, list):
        text = (
            "["
            + ", ".join(_show(v, limit) for v in value[:5])
            + (", ...]" if len(value) > 5 else "]")
        )
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _quoted_hint(value: Any, expected: str) -> str:
    """`(remove the quotes)` when a string holds exactly the number or boolean that was wanted."""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    try:
        parsed = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return ""
    wanted = {"integer": int, "whole number": int, "number": int | float, "true or false": bool}
    for word, kind in wanted.items():
        if expected.startswith(("an " + word, "a " + word, word)) and isinstance(parsed, kind):
            if kind is not bool and isinstance(parsed, bool):
                continue
            return " (a string: remove the quotes)"
    return ""


def _unknown_key_hint(name: str, owner: type[BaseModel] | None, section: str) -> str:
    """`did you mean ...?` for an unknown key: near names in the table, SGLang's own names, other tables."""
    known = list(owner.model_fields) if owner is not None else []
    lowered = name.lower().lstrip("-").replace("-", "_")
    if section and lowered in Profile.model_fields:
        return (
            f"; {lowered!r} is a top-level key, but every key below a [table] header belongs to "
            "that table: move it above the first [table]"
        )

    spec = BY_DEST.get(lowered) or BY_DEST.get(f"{section}_{lowered}" if section else lowered)
    if spec is not None:
        table, _, key = spec.path.partition(".")
        return f"; SGLang's --{spec.dest.replace('_', '-')} is {key!r} in [{table}]"
    close = difflib.get_close_matches(lowered, known, n=1)
    contains = [k for k in known if len(lowered) >= 3 and (lowered in k or k in lowered)]
    if close or contains:
        return f"; did you mean {(close or contains)[0]!r}?"
    elsewhere = _keys_by_table()
    close = difflib.get_close_matches(
        lowered, [k for k in elsewhere if elsewhere[k] != section], n=1
    )
    return f"; did you mean {close[0]!r} in [{elsewhere[close[0]]}]?" if close else ""


@lru_cache(maxsize=1)
def _keys_by_table() -> dict[str, str]:
    """Every section key and the table it belongs to (the first table, for shared names)."""
    out: dict[str, str] = {}
    for table, info in Profile.model_fields.items():
        model = _unwrap(info.annotation)[0]  # [container] is optional: `ContainerSection | None`
        if isinstance(model, type) and issubclass(model, BaseModel):
            for key in model.model_fields:
                out.setdefault(key, table)
    return out


def _toml_lines(text: str) -> list[str]:
    """Lines as TOML (and tomllib's line numbers) count them: only \\n ends a line."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _scan_keys(text: str) -> Iterable[tuple[int, str, bool]]:
    """(line, dotted key, is a [table] header) for each table header and `key =` line of TOML text."""
    table: list[str] = []
    header = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    keyline = re.compile(r"^\s*([A-Za-z0-9_\-\"'. ]+?)\s*=")
    in_multiline: str | None = None
    for number, raw in enumerate(_toml_lines(text), start=1):
        if in_multiline is not None:  # inside a """ or ''' string: no keys here
            if in_multiline in raw:
                in_multiline = None
            continue
        match = header.match(raw)
        if match:
            table = [p.strip().strip("\"'") for p in match.group(1).split(".")]
            yield number, ".".join(table), True
            continue
        match = keyline.match(raw)
        if match:
            key = [p.strip().strip("\"'") for p in match.group(1).split(".")]
            full = ".".join(table + key)
            yield number, full, False
            rest = raw[match.end() :]
            # inline table keys: `gpu = { kind = "H100" }`
            for inner in re.findall(r"([A-Za-z0-9_\-]+)\s*=", rest):
                yield number, f"{full}.{inner}", False
            value = rest.lstrip()
            for quotes in ('"""', "'''"):
                if value.startswith(quotes) and quotes not in value[3:]:
                    in_multiline = quotes
                    break


def locate_keys(text: str) -> dict[str, int]:
    """Map dotted keys to the 1-based line where they are defined in TOML text (tables and keys).

    Keys under an array of tables are also mapped with their index (`nodes.hosts[1].host`), so a
    problem in the second node points at the second node's line."""
    lines: dict[str, int] = {}
    raw = _toml_lines(text)
    counts: dict[str, int] = {}
    array: tuple[str, str] | None = None  # (table, table[index]) of the current [[table]]
    for number, key, is_header in _scan_keys(text):
        if is_header:
            array = None
            if raw[number - 1].lstrip().startswith("[["):
                index = counts.get(key, 0)
                counts[key] = index + 1
                array = (key, f"{key}[{index}]")
        lines.setdefault(key, number)
        if array is not None and (key == array[0] or key.startswith(array[0] + ".")):
            lines.setdefault(array[1] + key[len(array[0]):], number)
    return lines


def _key_at_line(text: str, line: int) -> str | None:
    """The dotted key defined (or table declared) on a line, for syntax errors.

    Lines too broken for `_scan_keys` (`tp 2`, `[speculative`) fall back to their first word.
    """
    table = ""
    for number, key, is_header in _scan_keys(text):
        if number == line:
            return key
        if number > line:
            break
        if is_header:
            table = key
    lines = _toml_lines(text)
    raw = lines[line - 1] if 0 < line <= len(lines) else ""
    header = re.match(r"^\s*\[+\s*([A-Za-z0-9_.\-]+)", raw)
    if header:
        return header.group(1)
    word = re.match(r"^\s*([A-Za-z0-9_\-]+)", raw)
    if word:
        return f"{table}.{word.group(1)}" if table else word.group(1)
    return None


def _line_for(key: str, located: Mapping[str, int]) -> int | None:
    if key in located:
        return located[key]
    probe = re.sub(r"\[\d+\]", "", key)
    while probe:
        if probe in located:
            return located[probe]
        probe = probe.rpartition(".")[0]
    return None


def _problem_for(err: Mapping[str, Any], where: _Where) -> tuple[str, str | None]:
    """(message, allowed) for one pydantic error, in plain words, driven by the error type."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    value = err.get("input")
    got = f", got {_show(value)}" if "input" in err else ""
    allowed = _describe(where.annotation) if where.annotation is not None else None
    if allowed is not None and where.annotation is not None and _unwrap(where.annotation)[2]:
        allowed += ", or leave the key out"
    if allowed is not None and where.description:
        allowed += f"; {where.description}"
    if kind == "extra_forbidden":
        name = str(where.loc[-1]) if where.loc else "?"
        section = str(where.loc[-2]) if len(where.loc) > 1 else ""
        hint = _unknown_key_hint(name, where.owner, section)
        known = list(where.owner.model_fields) if where.owner is not None else []
        return f"unknown key {name!r}{hint}", ("keys " + ", ".join(known)) if known else None
    if kind == "missing":
        return "required key is missing", allowed
    if kind == "literal_error":
        choices = (
            [str(c) for c in get_args(_unwrap(where.annotation)[0])] if where.annotation else []
        )
        close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.5)
        hint = f"; did you mean {json.dumps(close[0])}?" if close else ""
        return f"{_show(value)} is not an allowed value{hint}", allowed
    if kind in ("value_error", "assertion_error") and ctx.get("error") is not None:
        error = ctx["error"]
        return str(error), getattr(error, "allowed", None) or allowed
    if kind in _BOUNDS:
        try:
            message = _BOUNDS[kind].format(**{k: _number(v) for k, v in ctx.items()})
        except (KeyError, ValueError, TypeError):
            message = _BOUNDS[kind].split(" {")[0]
        return message + got, allowed
    if kind in _EXPECTED:
        expected = _EXPECTED[kind]
        return f"expected {expected}{got}{_quoted_hint(value, expected)}", allowed
    return str(err.get("msg", "invalid value")) + got, allowed


def problems_from_validation(exc: ValidationError, text: str | None = None) -> list[Problem]:
    """Turn pydantic errors into located, plain-language problems (one per key)."""
    located = locate_keys(text) if text is not None else {}
    grouped: dict[str, list[tuple[Mapping[str, Any], _Where]]] = {}
    for err in exc.errors():
        where = _walk(err["loc"])
        grouped.setdefault(_dotted(where.loc), []).append((err, where))
    problems: list[Problem] = []
    for key, errors in grouped.items():
        first, where = errors[0]
        message, allowed = _problem_for(first, where)
        type_errors = [e for e, _ in errors if e["type"] in _EXPECTED]
        if len(errors) > 1 and len(type_errors) == len(errors) and where.annotation is not None:
            # several union members refused the value: say once what the key takes
            expected = _describe(where.annotation)
            got = f", got {_show(first['input'])}" if "input" in first else ""
            message = f"expected {expected}{got}{_quoted_hint(first.get('input'), expected)}"
        problems.append(Problem(key or None, _line_for(key, located), message, allowed))
    return problems


def _syntax_problem(exc: tomllib.TOMLDecodeError, text: str) -> Problem:
    """A located problem for a TOML syntax error, with plain words and what to write instead."""
    raw = str(exc)
    match = re.search(r"\(at line (\d+), column (\d+)\)", raw)
    line: int | None = int(match.group(1)) if match else None
    if line is None and "end of document" in raw:
        line = max(1, len(_toml_lines(text.removesuffix("\n"))))  # the last line
    detail = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", raw)
    message, allowed = detail, "valid TOML; see docs/profiles.md"
    for prefix, plain, todo in _TOML_SYNTAX:
        if detail.startswith(prefix):
            message, allowed = plain, todo
            break
    lines = _toml_lines(text)
    raw_line = lines[line - 1] if line is not None and 0 < line <= len(lines) else ""
    if text.lstrip().startswith("{"):
        message = "this looks like JSON"
        allowed = "TOML: `key = value` lines and [table] headers (see docs/profiles.md)"
    elif raw_line.count("{") > raw_line.count("}"):
        # tomllib trips over the line break inside `{ ... }` with a message about keys
        message = "an inline table { ... } must be written on one line"
        allowed = "keep { ... } on one line, or use a [table] section"
    elif detail.startswith("Unclosed array") and line is not None:
        # reported where the parser gave up; point at the line that opened the list
        for number in range(line, 0, -1):
            candidate = lines[number - 1] if number <= len(lines) else ""
            if "=" in candidate and candidate.count("[") > candidate.count("]"):
                line, match = number, None
                break
    column = f" at column {match.group(2)}" if match else ""
    key = _key_at_line(text, line) if line is not None else None
    return Problem(key, line, f"not valid TOML: {message}{column}", allowed)


def profile_from_toml(text: str, file: str = "<profile>") -> Profile:
    """Parse and validate TOML text; raise `ProfileError` with located problems."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(file, [_syntax_problem(exc, text)]) from None
    except RecursionError:
        raise ProfileError(
            file, [Problem(None, None, "not valid TOML: lists or tables nested too deeply")]
        ) from None
    return profile_from_data(data, file, text)


def profile_from_data(
    data: Mapping[str, Any], file: str = "<profile>", text: str | None = None
) -> Profile:
    """Validate parsed TOML data; check `schema_version` first."""
    if not isinstance(data, Mapping):
        raise ProfileError(
            file, [Problem(None, None, f"expected a table of keys, got {_show(data)}")]
        )
    version = data.get("schema_version")
    if version is None:
        raise ProfileError(
            file,
            [
                Problem(
                    "schema_version",
                    None,
                    "required key is missing",
                    f"schema_version = {SCHEMA_VERSION} as the first line",
                )
            ],
        )
    if type(version) is not int or version != SCHEMA_VERSION:
        line = _line_for("schema_version", locate_keys(text)) if text else None
        newer = type(version) is int and version > SCHEMA_VERSION
        message = (
            f"unsupported schema version {version}"
            if type(version) is int
            else f"expected the integer {SCHEMA_VERSION}, got {_show(version)}"
        )
        allowed = f"schema_version = {SCHEMA_VERSION} (this sglang-wizard)"
        if newer:
            allowed += "; the file was written by a newer sglang-wizard: upgrade the tool"
        raise ProfileError(file, [Problem("schema_version", line, message, allowed)])
    try:
        return Profile.model_validate(dict(data))
    except ValidationError as exc:
        raise ProfileError(file, problems_from_validation(exc, text)) from None
    except RecursionError:
        raise ProfileError(file, [Problem(None, None, "values nested too deeply")]) from None


def protect_secrets(profile: Profile) -> tuple[Profile, list[str]]:
    """The profile with every literal secret turned into a reference (`wizard.secrets`), and
    what was moved: env vars (`HF_TOKEN`, also each node's env) and secret flag values in
    extra_args (`--api-key sk-...` -> `--api-key env:SGLANG_WIZARD_API_KEY`)."""
    env, moved = protect_env(profile.env)
    option_of = _secret_option_of(profile.sglang_version)
    argv, flags = protect_argv(profile.extra_args, option_of)
    moved += flags
    hosts = []
    for node in profile.nodes.hosts:
        node_env, node_moved = protect_env(node.env)
        moved += [m for m in node_moved if m not in moved]
        hosts.append(node.model_copy(update={"env": node_env}) if node_moved else node)
    if not moved:
        return profile, moved
    nodes = profile.nodes.model_copy(update={"hosts": hosts})
    return profile.model_copy(update={"env": env, "extra_args": argv, "nodes": nodes}), moved


def profile_literal_secrets(profile: Profile) -> list[str]:
    """The literal secret values the profile holds in memory (env, nodes' env, extra_args):
    what a screenshot of a form being typed in must mask (`wizard.secrets.mask_text`)."""
    option_of = _secret_option_of(profile.sglang_version)
    values = literal_secrets(profile.env, profile.extra_args, option_of)
    for node in profile.nodes.hosts:
        values += literal_secrets(node.env, [])
    return values


def _secret_option_of(version: str) -> OptionOf:
    """Which words name a secret flag in `version` (argparse prefixes included)."""
    try:
        return secret_option_of(load_table(version))
    except (VersionError, FlagDataError):
        return exact_secret_option


def profile_to_toml(profile: Profile) -> str:
    """Serialise a profile; only non-default values are written, so `load(save(p)) == p`.

    Secrets are never written: a literal secret (HF_TOKEN=hf_..., `--api-key sk-...`) is written
    as a reference to a variable (`env:HF_TOKEN`, read at launch; `protect_secrets`)."""
    profile = protect_secrets(profile)[0]
    data = profile.model_dump(mode="python", exclude_defaults=True)
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "sglang_version": profile.sglang_version,
    }
    if profile.description:
        out["description"] = profile.description
    for key, value in data.items():
        if key in out or value in ({}, []):
            continue
        out[key] = value
    return tomli_w.dumps(out)


def load_profile(path: str | Path) -> Profile:
    """Read a profile file; every failure is a `ProfileError` naming the file.

    A bare NAME that is not a file here (`qwen3.6-27b-mtp-a6000`, `.toml` optional) is the saved
    profile of that name, else the ready one: the names `sglang-wizard profiles` lists.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        named = find_profile(str(path)) if isinstance(path, str) else None
        if named is not None:
            return load_profile(named)
        raise ProfileError(
            str(p),
            [
                Problem(
                    None,
                    None,
                    "file not found",
                    "a path to a .toml profile; `sglang-wizard profiles` lists saved ones",
                )
            ],
        ) from None
    except IsADirectoryError:
        raise ProfileError(
            str(p),
            [Problem(None, None, "is a directory, not a profile file", "a profile file (.toml)")],
        ) from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ProfileError(_short_path(p), [Problem(None, None, f"cannot read: {reason}")]) from None
    except ValueError as exc:  # a NUL character in the path
        raise ProfileError(_short_path(p), [Problem(None, None, f"not a usable path ({exc})")]) from None
    try:
        text = raw.decode("utf-8-sig")  # a BOM (as some Windows editors write) is dropped
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ProfileError(
            str(p), [Problem(None, line, "not UTF-8 text", "TOML files must be UTF-8")]
        ) from None
    return profile_from_toml(text, str(p))


def _short_path(path: Path, limit: int = 120) -> str:
    """The path for a message, cut in the middle when longer than `limit` characters."""
    text = str(path)
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2:]}"


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write text so that readers see either the old file or the complete new one, never a part
    (`wizard.files.write_text`: only regular files are replaced; a symlink's target is written,
    a device or FIFO is written in place, a symlink loop refused)."""
    write_text(path, text, mode=PRIVATE_MODE if mode is None else mode)


def save_profile(profile: Profile, path: str | Path, *, overwrite: bool = False) -> Path:
    """Atomically save a profile; refuse to replace an existing file unless `overwrite`."""
    p = Path(path)
    if p.exists() and not overwrite:
        raise FileExistsError(f"{p} exists; pass overwrite=True (CLI: --force) to replace it")
    atomic_write_text(p, profile_to_toml(profile))
    return p


# ---------------------------------------------------------------------------------------------
# Where profiles live


# profiles_dir, list_profiles, ...: wizard.profile_paths (imported at the top).
