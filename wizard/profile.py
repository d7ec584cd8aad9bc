"""The launch profile: everything needed to reproduce an SGLang launch, as pydantic v2 models.

A profile is what the user typed: `None` means "not passed, let SGLang decide". TOML files carry a
`schema_version`; loading reports every problem with file, dotted key, line and what is allowed;
saving is atomic (temp file + fsync + rename), so a crash never leaves a half-written profile.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import tempfile
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import tomli_w
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)

SCHEMA_VERSION = 1
PROFILES_DIR_ENV = "SGLANG_WIZARD_PROFILES_DIR"
DEFAULT_SGLANG_VERSION = "0.5.11"

PositiveInt = Annotated[StrictInt, Field(ge=1)]
Port = Annotated[StrictInt, Field(ge=1, le=65535)]
Fraction = Annotated[StrictFloat | StrictInt, Field(gt=0, le=1)]
NonEmptyStr = Annotated[StrictStr, Field(min_length=1)]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?([.+-]?[A-Za-z0-9.+-]*)?$")
_PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelSection(_Section):
    """The target model and how it is loaded."""

    path: NonEmptyStr = Field(description="Model dir or HF repo id (--model-path)")
    served_model_name: NonEmptyStr | None = None
    tokenizer_path: NonEmptyStr | None = None
    revision: NonEmptyStr | None = None
    dtype: Literal["auto", "half", "float16", "bfloat16", "float", "float32"] | None = None
    trust_remote_code: StrictBool = False
    context_length: PositiveInt | None = None
    quantization: NonEmptyStr | None = None
    kv_cache_dtype: NonEmptyStr | None = None
    load_format: NonEmptyStr | None = None


class ParallelSection(_Section):
    """Tensor / data / pipeline parallelism."""

    tp: PositiveInt = 1
    dp: PositiveInt = 1
    pp: PositiveInt = 1
    enable_dp_attention: StrictBool = False
    attn_dp_size: PositiveInt | None = Field(default=None, description="0.5.23: --attn-dp-size")
    ep: PositiveInt | None = None
    nnodes: PositiveInt = 1


class SpeculativeSection(_Section):
    """Speculative decoding: algorithm, draft model and the steps/topk/draft-tokens trio."""

    algorithm: NonEmptyStr | None = Field(default=None, description="NEXTN, EAGLE, EAGLE3, ...")
    draft_model_path: NonEmptyStr | None = None
    draft_model_revision: NonEmptyStr | None = None
    num_steps: StrictInt | None = None
    eagle_topk: StrictInt | None = None
    num_draft_tokens: StrictInt | None = None
    accept_threshold_single: StrictFloat | StrictInt | None = None
    accept_threshold_acc: StrictFloat | StrictInt | None = None
    token_map: NonEmptyStr | None = None
    attention_mode: Literal["prefill", "decode"] | None = None
    draft_attention_backend: NonEmptyStr | None = None
    moe_runner_backend: NonEmptyStr | None = None
    moe_a2a_backend: NonEmptyStr | None = None
    draft_model_quantization: NonEmptyStr | None = None
    adaptive: StrictBool = False
    enable_multi_layer_eagle: StrictBool = False
    skip_dp_mlp_sync: StrictBool = False
    dflash_block_size: StrictInt | None = None
    draft_window_size: StrictInt | None = None
    ngram_min_bfs_breadth: StrictInt | None = None
    ngram_max_bfs_breadth: StrictInt | None = None
    ngram_external_corpus_path: NonEmptyStr | None = None
    ngram_external_sam_budget: StrictInt | None = None
    use_rejection_sampling: StrictBool = False


class HybridSection(_Section):
    """Hybrid linear-attention (mamba / Gated DeltaNet) models: radix-cache strategy and track interval."""

    cache_strategy: Literal["auto", "no_buffer", "extra_buffer", "extra_buffer_lazy"] | None = (
        Field(
            default=None,
            description="0.5.11 --mamba-scheduler-strategy, 0.5.23 --mamba-radix-cache-strategy",
        )
    )
    track_interval: StrictInt | None = None


class AttentionSection(_Section):
    """Attention kernels and KV page size."""

    backend: NonEmptyStr | None = None
    prefill_backend: NonEmptyStr | None = None
    decode_backend: NonEmptyStr | None = None
    page_size: PositiveInt | None = None


class MemorySection(_Section):
    """Memory pool, concurrency and CUDA graphs."""

    mem_fraction_static: Fraction | None = None
    max_running_requests: PositiveInt | None = None
    chunked_prefill_size: StrictInt | None = None
    cuda_graph_max_bs: PositiveInt | None = None
    cuda_graph_bs: list[PositiveInt] | None = None
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
    """The target GPUs (the rules and the memory plan depend on the GPU generation)."""

    kind: NonEmptyStr | None = Field(
        default=None, description="A6000, H100, B200, ... (see `gpus`)"
    )
    count: PositiveInt | None = None

    @field_validator("kind")
    @classmethod
    def _known_gpu(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from wizard.gpus import lookup

        return lookup(value).name


class SshSection(_Section):
    """Where to launch: an ~/.ssh/config alias or user@host:port, optional jump hosts."""

    host: NonEmptyStr | None = None
    user: NonEmptyStr | None = None
    port: Port | None = None
    jump: list[NonEmptyStr] = Field(default_factory=list)
    identity_file: NonEmptyStr | None = None
    python: NonEmptyStr = "python3"
    workdir: NonEmptyStr | None = None


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
    env: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    extra_args: list[StrictStr] = Field(default_factory=list)

    @field_validator("sglang_version")
    @classmethod
    def _version_shape(cls, value: str) -> str:
        if not _VERSION.match(value):
            raise ValueError("expected a version like '0.5.11'")
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not a valid environment variable name")
        return value

    def get(self, dotted: str) -> Any:
        """Read a field by dotted path (`speculative.num_steps`)."""
        section, _, name = dotted.partition(".")
        obj = getattr(self, section)
        return getattr(obj, name) if name else obj

    def with_edits(self, edits: Mapping[str, Any]) -> Profile:
        """A new validated profile with dotted-path edits applied (`None` unsets a field)."""
        data = self.model_dump()
        for dotted, value in edits.items():
            section, _, name = dotted.partition(".")
            if name:
                if section not in data or not isinstance(data[section], dict):
                    raise KeyError(dotted)
                if name not in data[section]:
                    raise KeyError(dotted)
                if value is None:
                    default = (
                        type(getattr(self, section))
                        .model_fields[name]
                        .get_default(call_default_factory=True)
                    )
                    data[section][name] = default
                else:
                    data[section][name] = value
            else:
                if section not in data:
                    raise KeyError(dotted)
                data[section] = value
        return Profile.model_validate(data)


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


def _model_for(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = Profile
    for part in loc[:-1]:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        model = (
            annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel)
            else None
        )
    return model


def _allowed_for(loc: tuple[Any, ...]) -> str | None:
    model = _model_for(loc)
    if model is None or not loc or not isinstance(loc[-1], str):
        return None
    info = model.model_fields.get(loc[-1])
    if info is None:
        return None
    text = _describe_annotation(info.annotation)
    if info.description:
        text += f"; {info.description}"
    return text


def _describe_annotation(annotation: Any) -> str:
    text = repr(annotation)
    if "Literal" in text:
        found = re.findall(r"'([^']*)'", text)
        return "one of " + ", ".join(found) + (" or leave it out" if "None" in text else "")
    kinds = []
    for word, name in (
        ("int", "an integer"),
        ("float", "a number"),
        ("bool", "true or false"),
        ("str", "a string"),
        ("list", "a list"),
    ):
        if re.search(rf"\b{word}\b", text):
            kinds.append(name)
    if "dict" in text:
        kinds = ["a table of string values"]
    out = " or ".join(dict.fromkeys(kinds)) or text
    if "None" in text:
        out += " (or leave it out to use SGLang's default)"
    return out


def _dotted(loc: Iterable[Any]) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts[-1:] = [f"{parts[-1]}[{p}]"] if parts else [f"[{p}]"]
        else:
            parts.append(str(p))
    return ".".join(parts)


def locate_keys(text: str) -> dict[str, int]:
    """Map dotted keys to the 1-based line where they are defined in TOML text (tables and keys)."""
    lines: dict[str, int] = {}
    table: list[str] = []
    header = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    keyline = re.compile(r"^\s*([A-Za-z0-9_\-\"'. ]+?)\s*=")
    for number, raw in enumerate(text.splitlines(), start=1):
        match = header.match(raw)
        if match:
            table = [p.strip().strip("\"'") for p in match.group(1).split(".")]
            lines.setdefault(".".join(table), number)
            continue
        match = keyline.match(raw)
        if match:
            key = [p.strip().strip("\"'") for p in match.group(1).split(".")]
            full = ".".join(table + key)
            lines.setdefault(full, number)
            # inline table keys: `gpu = { kind = "H100" }`
            for inner in re.findall(r"([A-Za-z0-9_\-]+)\s*=", raw[match.end() :]):
                lines.setdefault(f"{full}.{inner}", number)
    return lines


def _line_for(key: str, located: Mapping[str, int]) -> int | None:
    probe = re.sub(r"\[\d+\]", "", key)
    while probe:
        if probe in located:
            return located[probe]
        probe = probe.rpartition(".")[0]
    return None


def problems_from_validation(exc: ValidationError, text: str | None = None) -> list[Problem]:
    """Turn pydantic errors into located, plain-language problems."""
    located = locate_keys(text) if text is not None else {}
    problems: list[Problem] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        key = _dotted(loc)
        kind = err["type"]
        allowed = _allowed_for(loc)
        if kind == "extra_forbidden":
            model = _model_for(loc)
            known = list(model.model_fields) if model is not None else []
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            message = f"unknown key {loc[-1]!r}{hint}"
            allowed = "keys " + ", ".join(known) if known else None
        elif kind == "missing":
            message = "required key is missing"
        else:
            message = err["msg"]
            if "input" in err and kind != "model_type" and not isinstance(err["input"], dict):
                message += f", got {err['input']!r}"
            if err.get("ctx", {}).get("error") is not None:
                message = str(err["ctx"]["error"]) + (
                    f", got {err['input']!r}" if "input" in err else ""
                )
        problems.append(Problem(key or None, _line_for(key, located), message, allowed))
    return problems


def profile_from_toml(text: str, file: str = "<profile>") -> Profile:
    """Parse and validate TOML text; raise `ProfileError` with located problems."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line = int(match.group(1)) if match else None
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        if match:
            message += f" (column {match.group(2)})"
        raise ProfileError(
            file,
            [
                Problem(
                    None, line, f"not valid TOML: {message}", "fix the syntax; see docs/profiles.md"
                )
            ],
        ) from None
    return profile_from_data(data, file, text)


def profile_from_data(
    data: Mapping[str, Any], file: str = "<profile>", text: str | None = None
) -> Profile:
    """Validate parsed TOML data; check `schema_version` first."""
    version = data.get("schema_version")
    if version is None:
        raise ProfileError(
            file,
            [
                Problem(
                    "schema_version",
                    None,
                    "required key is missing",
                    f"schema_version = {SCHEMA_VERSION}",
                )
            ],
        )
    if version != SCHEMA_VERSION:
        line = _line_for("schema_version", locate_keys(text)) if text else None
        raise ProfileError(
            file,
            [
                Problem(
                    "schema_version",
                    line,
                    f"unsupported schema version {version!r}",
                    f"{SCHEMA_VERSION} (this sglang-wizard); upgrade the tool for newer files",
                )
            ],
        )
    try:
        return Profile.model_validate(dict(data))
    except ValidationError as exc:
        raise ProfileError(file, problems_from_validation(exc, text)) from None


def profile_to_toml(profile: Profile) -> str:
    """Serialise a profile; only non-default values are written, so `load(save(p)) == p`."""
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
    """Read a profile file; every failure is a `ProfileError` naming the file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
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
            str(p), [Problem(None, None, "is a directory, not a profile file")]
        ) from None
    except OSError as exc:
        raise ProfileError(str(p), [Problem(None, None, f"cannot read: {exc.strerror}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ProfileError(
            str(p), [Problem(None, line, "not UTF-8 text", "TOML files must be UTF-8")]
        ) from None
    return profile_from_toml(text, str(p))


def atomic_write_text(path: Path, text: str) -> None:
    """Write text so that readers see either the old file or the complete new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def save_profile(profile: Profile, path: str | Path, *, overwrite: bool = False) -> Path:
    """Atomically save a profile; refuse to replace an existing file unless `overwrite`."""
    p = Path(path)
    if p.exists() and not overwrite:
        raise FileExistsError(f"{p} exists; pass overwrite=True (CLI: --force) to replace it")
    atomic_write_text(p, profile_to_toml(profile))
    return p


# ---------------------------------------------------------------------------------------------
# Where profiles live


def profiles_dir() -> Path:
    """The user's profile directory (XDG config dir via platformdirs; `SGLANG_WIZARD_PROFILES_DIR` overrides)."""
    override = os.environ.get(PROFILES_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_config_path

    return user_config_path("sglang-wizard") / "profiles"


def builtin_profiles_dir() -> Path:
    """The ready profiles shipped with the project (`profiles/`)."""
    return Path(__file__).resolve().parent.parent / "profiles"


def validate_profile_name(name: str) -> str:
    """A profile name usable as a file name: letters, digits, `.`, `_`, `-`; at most 64 characters."""
    stem = name[:-5] if name.endswith(".toml") else name
    if not _PROFILE_NAME.match(stem) or stem in {".", ".."}:
        raise ValueError(
            f"invalid profile name {name!r}: use letters, digits, '.', '_' or '-' "
            "(start with a letter or digit, at most 64 characters)"
        )
    return stem


def profile_path(name: str, directory: Path | None = None) -> Path:
    """Path of a named profile in the profiles dir."""
    return (directory or profiles_dir()) / f"{validate_profile_name(name)}.toml"


def list_profiles(directory: Path | None = None) -> list[Path]:
    """Saved profiles, newest first."""
    d = directory or profiles_dir()
    if not d.is_dir():
        return []
    return sorted(d.glob("*.toml"), key=lambda p: p.stat().st_mtime, reverse=True)
