"""The launch profile's schema: everything needed to reproduce an SGLang launch, as pydantic v2
models.

A profile is what the user typed: `None` means "not passed, let SGLang decide". Each table is a
section model (`ModelSection`, `ParallelSection`, ...); `Profile` holds them, reads and edits them
by dotted path (`get`, `with_edits`), and `field_default` says what "unset" means. A validator
that refuses a value also says what is allowed (`_NotAllowed`); `wizard.profile_problems` words
the refusals for the user.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from wizard.gpus import CUSTOM_EXAMPLES, UnknownGpuError, lookup, names
from wizard.limits import MAX_BATCH, MAX_GPUS, MAX_NODES, MAX_PARALLEL, MAX_SPEC_COUNT, MAX_TOKENS
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


# A named volume (`hf-cache:/root/.cache/huggingface`), as docker and podman name them.
_VOLUME_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _host_path_problem(host: str) -> str | None:
    """Why `host` is neither a path docker and podman read as a folder (absolute, `~/` of the
    launching shell, or `./` `../` from the launch directory) nor a volume name: they read
    `models/x` as a volume name and refuse it at launch ("names must match ...")."""
    if host.startswith(("/", "~", "./", "../")) or host in (".", "..") or _VOLUME_NAME.fullmatch(host):
        return None
    return (
        f"{host!r} is neither a folder path nor a volume name: docker and podman refuse it "
        "at launch (write /abs/path, ~/path or ./path)"
    )


def _mount(value: str) -> str:
    parts = value.split(":")
    options = parts[2] if len(parts) == 3 else None
    allowed = '"HOST_PATH:CONTAINER_PATH" or "HOST_PATH:CONTAINER_PATH:ro" (container path absolute)'
    if len(parts) not in (2, 3) or not parts[0] or not _CONTAINER_PATH.fullmatch(parts[1]) or (
        options is not None and not set(options.split(",")) <= {"ro", "rw", "z", "Z"}
    ):
        raise _NotAllowed(f"{value!r} is not a mount", allowed)
    problem = _host_path_problem(parts[0])
    if problem is not None:
        raise _NotAllowed(f"{value!r}: {problem}", allowed + " or VOLUME_NAME:CONTAINER_PATH")
    return value


def _hf_cache(value: str) -> str:
    problem = _host_path_problem(value) if value else None
    if problem is not None:
        raise _NotAllowed(problem, 'a folder: /abs/path, ~/path or ./path; "" to mount none')
    return value


def _image(value: str) -> str:
    if value.startswith("-") or any(c.isspace() for c in value):
        raise _NotAllowed(
            f"{value!r} is not an image reference",
            "an image name without spaces, not starting with '-', e.g. "
            f"lmsysorg/sglang:v{DEFAULT_SGLANG_VERSION}-cu129",
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
    image: Annotated[NonEmptyStr, AfterValidator(_image)] = Field(
        description=f"e.g. lmsysorg/sglang:v{DEFAULT_SGLANG_VERSION}-cu129"
    )
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
    hf_cache: Annotated[StrictStr, AfterValidator(_hf_cache)] = Field(
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
