"""Reading a model folder: the files the inspection reads, where they come from (a local folder in
the plain or Hugging Face cache layout, or any `ModelReader`), the error that names the file and the
key at fault, and typed access to their JSON (`Section`, `Layered`).

The shards' safetensors headers are read here too (`safetensors_header_counts`): their JSON only,
never a weight.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from wizard.limits import MAX_CHECKPOINT_BYTES, MAX_CONFIG_INT, MAX_JSON_DEPTH

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


def _shown(root: Path) -> str:
    """The folder for a message: as typed, and where that is when relative (`./model` reads as
    `model`, which alone looks like a word of the sentence)."""
    if root.is_absolute():
        return _short(str(root))
    return f"{_short(str(root))!r} ({_short(str(root.absolute()))})"


def _resolve_model_dir(root: Path) -> Path:
    if not root.exists():
        raise ModelReadError(
            CONFIG_FILE,
            None,
            f"model folder {_shown(root)} does not exist",
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


def parse_json(file: str, text: str) -> dict[str, Any]:
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


class Section:
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

    def opt_section(self, name: str) -> Section | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.error(name, f"expected an object, got {_kind(value)}")
        return Section(self.file, value, f"{self.key(name)}.")


class Layered:
    """The text-model config (`text_config` when nested) with fall-back to the top level."""

    def __init__(self, top: Section, text: Section | None) -> None:
        self.top = top
        self.text = text

    def pick(self, name: str) -> Section:
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

    def opt_section(self, name: str) -> Section | None:
        return self.pick(name).opt_section(name)

    def has(self, name: str) -> bool:
        return (self.text is not None and self.text.has(name)) or self.top.has(name)

    def missing(self, name: str) -> ModelReadError:
        where = self.text if self.text is not None else self.top
        return where.error(name, "is missing (needed to inspect the model)")
