"""Models by Hugging Face repo id: the small JSON files SGLang reads, fetched through `huggingface_hub`.

`--model-path Qwen/Qwen3.5-27B` makes SGLang download `config.json` and decide from it; this module
reads the same files (config, safetensors index, quantization configs, generation config; never a
weight file) so the facts are the ones SGLang will see. It honours what users of `huggingface_hub`
already configure, read at call time (not import time): `HF_ENDPOINT` (mirrors), `HF_TOKEN` /
`HF_TOKEN_PATH` / the stored login, `HF_HUB_CACHE` / `HF_HOME` (the shared cache) and
`HF_HUB_OFFLINE=1`. What was read stays in the HF cache (and the Hub's safetensors parameter counts
in the wizard's cache), so the next read needs at most one API request, or none offline.

Failures are `HubError` (a `ModelReadError`): gated repo, unknown repo or revision, offline without
a cache, unreachable endpoint, each with what to do. Calls are synchronous; screens run them in
workers. Nothing here imports the UI.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from wizard.files import write_text
from wizard.model_facts import ModelFacts
from wizard.model_files import CONFIG_FILE, MODEL_FILES, ModelReadError
from wizard.model_files import (
    is_repo_id as is_repo_id,  # re-exported (lives there: no Hub code for a local path)
)
from wizard.model_info import facts_from_files
from wizard.model_params import with_checkpoint_params

DEFAULT_ENDPOINT = "https://huggingface.co"

HubErrorKind = Literal["gated", "not_found", "revision", "offline", "network", "auth", "hub"]


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class HubSettings:
    """Where and how to reach the Hub, read from the environment when asked (never cached)."""

    endpoint: str
    cache_dir: Path
    token: str | None = field(repr=False)
    token_source: str | None
    offline: bool

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HubSettings:
        """The settings `huggingface_hub` users set: HF_ENDPOINT, HF_HOME, HF_HUB_CACHE, HF_TOKEN, ..."""
        e = os.environ if env is None else env
        home = Path(e.get("HF_HOME") or Path(e.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface")
        home = home.expanduser()
        cache = e.get("HF_HUB_CACHE") or e.get("HUGGINGFACE_HUB_CACHE")
        token, source = _find_token(e, home)
        return cls(
            endpoint=(e.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
            cache_dir=Path(cache).expanduser() if cache else home / "hub",
            token=token,
            token_source=source,
            offline=_truthy(e.get("HF_HUB_OFFLINE")) or _truthy(e.get("TRANSFORMERS_OFFLINE")),
        )


def _find_token(env: Mapping[str, str], home: Path) -> tuple[str | None, str | None]:
    """HF_TOKEN, else the stored login (`hf auth login` writes HF_HOME/token). Never logged."""
    if env.get("HF_TOKEN", "").strip():
        return env["HF_TOKEN"].strip(), "HF_TOKEN"
    if env.get("HUGGING_FACE_HUB_TOKEN", "").strip():
        return env["HUGGING_FACE_HUB_TOKEN"].strip(), "HUGGING_FACE_HUB_TOKEN"
    path = Path(env.get("HF_TOKEN_PATH") or home / "token").expanduser()
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None, None
    return (text, "stored login") if text else (None, None)


class HubError(ModelReadError):
    """A repo id could not be read: `kind` says why, the hint what to do."""

    def __init__(self, repo: str, kind: HubErrorKind, message: str, hint: str) -> None:
        self.repo = repo
        self.kind = kind
        super().__init__(repo, None, message, hint)

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}"


def _label(repo: str, revision: str | None) -> str:
    return f"{repo}@{revision}" if revision else repo


def _fill_hint(repo: str, revision: str | None, settings: HubSettings) -> str:
    rev = f" --revision {revision}" if revision else ""
    return (
        f"fill the cache while online: `hf download {repo}{rev} --include '*.json'` "
        "(the JSON files only, no weights) "
        f"(the cache is {settings.cache_dir}; set HF_HOME / HF_HUB_CACHE if it lives elsewhere), "
        "or give a local model folder"
    )


def _map_error(
    exc: BaseException, repo: str, revision: str | None, settings: HubSettings
) -> HubError:
    """huggingface_hub / HTTP exceptions -> a HubError that says what to do."""
    from huggingface_hub import errors

    where = _label(repo, revision)
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, errors.GatedRepoError) or (
        isinstance(exc, errors.HfHubHTTPError) and status in (401, 403) and settings.token is None
        and not isinstance(exc, errors.RepositoryNotFoundError)
    ):
        if settings.token is None:
            return HubError(
                repo,
                "gated",
                f"{where} is a gated repository and no Hugging Face token is set",
                "accept the model's terms on its Hub page, then set HF_TOKEN=hf_... or run "
                "`hf auth login` (the token is read, never stored by the wizard)",
            )
        return HubError(
            repo,
            "gated",
            f"{where} is a gated repository and the token ({settings.token_source}) has no access",
            "accept the model's terms on its Hub page with the account of that token, "
            "or set HF_TOKEN to a token that has access",
        )
    if isinstance(exc, errors.RevisionNotFoundError):
        return HubError(
            repo,
            "revision",
            f"revision {revision!r} not found in {repo}",
            "give a branch, tag or commit of the repository (--revision / model.revision)",
        )
    if isinstance(exc, errors.RepositoryNotFoundError) or status == 404:
        auth = "" if settings.token else " (or private: set HF_TOKEN / `hf auth login`)"
        return HubError(
            repo,
            "not_found",
            f"no model repository {repo} on {settings.endpoint}{auth}",
            "check the spelling ORG/NAME (search with the Model screen), or give a local folder",
        )
    if isinstance(exc, errors.HfHubHTTPError) and status in (401, 403):
        return HubError(
            repo,
            "auth",
            f"{settings.endpoint} refused the token ({settings.token_source}) for {where}"
            f" (HTTP {status})",
            "renew the token (`hf auth login`) or unset HF_TOKEN",
        )
    if isinstance(exc, errors.HfHubHTTPError):
        return HubError(
            repo,
            "hub",
            f"{settings.endpoint} answered HTTP {status} for {where}",
            "try again later, or set HF_ENDPOINT to a mirror",
        )
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return HubError(
        repo,
        "network",
        f"cannot reach {settings.endpoint} ({reason}) and {where} is not in the HF cache",
        "check the network or HF_ENDPOINT; or " + _fill_hint(repo, revision, settings),
    )


# --------------------------------------------------------------------------------------------
# Reading the files
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HubFiles:
    """The small files of one repo revision and where they came from."""

    repo_id: str
    revision: str | None
    commit: str | None
    files: dict[str, str]
    from_cache: bool
    safetensors_params: dict[str, int] | None = None

    @property
    def source(self) -> str:
        """`ORG/NAME @ commit` (short), with `(HF cache)` when read without the network."""
        at = f" @ {self.commit[:12]}" if self.commit else ""
        rev = f" (revision {self.revision})" if self.revision and self.revision != self.commit else ""
        return f"{self.repo_id}{at}{rev}" + (" (HF cache)" if self.from_cache else "")


def _wizard_cache() -> Path:
    override = os.environ.get("SGLANG_WIZARD_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return platformdirs.user_cache_path("sglang-wizard")


def _meta_path(repo: str, commit: str) -> Path:
    return _wizard_cache() / "hub" / ("models--" + repo.replace("/", "--")) / f"{commit}.json"


def _save_meta(repo: str, commit: str, params: Mapping[str, int]) -> None:
    path = _meta_path(repo, commit)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps({"safetensors_parameters": dict(params)}), mode=0o644)
    except OSError:
        pass  # a read-only cache only costs one API request next time


def _load_meta(repo: str, commit: str) -> dict[str, int] | None:
    try:
        data = json.loads(_meta_path(repo, commit).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    params = data.get("safetensors_parameters") if isinstance(data, dict) else None
    if isinstance(params, dict) and all(isinstance(v, int) for v in params.values()):
        return {str(k): int(v) for k, v in params.items()}
    return None


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ModelReadError(Path(path).name, None, f"is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:  # a cache file that cannot be read (permissions, broken symlink)
        raise ModelReadError(
            Path(path).name,
            None,
            f"cannot be read from the HF cache ({exc.strerror or exc})",
            f"check the permissions of {path} or delete that cache entry and read it again",
        ) from None


def _commit_of(path: str) -> str | None:
    """The snapshot folder name of a cached file (`.../snapshots/<commit>/config.json`)."""
    parent = Path(path).parent
    return parent.name if parent.parent.name == "snapshots" else None


def fetch_model_files(
    repo_id: str,
    revision: str | None = None,
    *,
    network: bool = True,
    settings: HubSettings | None = None,
) -> HubFiles:
    """Read `MODEL_FILES` of a repo revision: from the Hub (and into the HF cache) or the cache.

    With `network=False` or `HF_HUB_OFFLINE=1` only the cache is read. An unreachable endpoint
    falls back to the cache too. Raises HubError when config.json cannot be had.
    """
    s = settings or HubSettings.from_env()
    if revision is not None and (
        not revision.strip() or ".." in revision or revision.startswith("/") or "\\" in revision
    ):
        raise HubError(
            repo_id,
            "revision",
            f"revision {revision!r} is not a branch, tag or commit",
            "give a branch, tag or commit of the repository (--revision / model.revision)",
        )
    if s.offline or not network:  # the cache alone: no huggingface_hub (as in search_models)
        return _from_cache(repo_id, revision, s, offline_reason="offline" if s.offline else None)
    _quiet_library(s)
    from huggingface_hub import HfApi, errors, hf_hub_download

    api = HfApi(endpoint=s.endpoint, token=s.token or False)
    try:
        info = api.model_info(repo_id, revision=revision, expand=["sha", "siblings", "safetensors"])
    except (errors.HfHubHTTPError, errors.GatedRepoError) as exc:
        raise _map_error(exc, repo_id, revision, s) from None
    except _network_errors() as exc:  # connection refused, DNS, timeouts, bad JSON
        try:
            return _from_cache(repo_id, revision, s, offline_reason=None)
        except HubError:
            raise _map_error(exc, repo_id, revision, s) from None
    commit = info.sha
    listed = {sib.rfilename for sib in (info.siblings or [])}
    params = dict(info.safetensors.parameters) if info.safetensors is not None else None
    if commit and params:
        _save_meta(repo_id, commit, params)
    files: dict[str, str] = {}
    for name in MODEL_FILES:
        if listed and name not in listed:
            continue
        try:
            path = _cached_file(repo_id, name, commit, s) or hf_hub_download(
                repo_id,
                name,
                revision=commit or revision or "main",
                cache_dir=s.cache_dir,
                endpoint=s.endpoint,
                token=s.token or False,
            )
        except errors.EntryNotFoundError:
            if name == CONFIG_FILE:
                raise ModelReadError(
                    CONFIG_FILE,
                    None,
                    f"not found in {_label(repo_id, revision)}",
                    "this repository is not a transformers checkpoint SGLang can load",
                ) from None
            continue
        except (errors.HfHubHTTPError, errors.GatedRepoError) as exc:
            raise _map_error(exc, repo_id, revision, s) from None
        except _network_errors() as exc:
            raise _map_error(exc, repo_id, revision, s) from None
        if name == CONFIG_FILE and commit is None:
            commit = _commit_of(path)
        files[name] = _read(path)
    if commit:
        _record_ref(repo_id, revision or "main", commit, s)
    if CONFIG_FILE not in files:
        raise ModelReadError(
            CONFIG_FILE,
            None,
            f"not found in {_label(repo_id, revision)}",
            "this repository is not a transformers checkpoint SGLang can load",
        )
    return HubFiles(repo_id, revision, commit, files, False, params)


def _quiet_library(s: HubSettings) -> None:
    """No progress bars or cache warnings on the terminal; the offline flag as set right now.

    huggingface_hub reads HF_HUB_OFFLINE once at import; the wizard reads it at each call, so the
    library's flag is brought in line before it is used.
    """
    import logging

    from huggingface_hub import constants
    from huggingface_hub.utils import disable_progress_bars

    constants.HF_HUB_OFFLINE = s.offline
    disable_progress_bars()
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


def _network_errors() -> tuple[type[BaseException], ...]:
    """Exceptions of an unreachable or misbehaving endpoint (the HTTP client's own and OS ones)."""
    found: list[type[BaseException]] = [OSError, ValueError, RuntimeError]
    for module in ("httpx2", "httpx", "requests"):  # huggingface_hub 2.x / 1.x / older
        try:
            mod = __import__(module)
        except ImportError:
            continue
        base = getattr(mod, "HTTPError", None) or getattr(mod, "RequestException", None)
        if isinstance(base, type) and issubclass(base, BaseException):
            found.append(base)
    return tuple(found)


def _storage(repo: str, s: HubSettings) -> Path:
    return s.cache_dir / ("models--" + repo.replace("/", "--"))


def _cached_file(repo: str, name: str, commit: str | None, s: HubSettings) -> str | None:
    """The cached file of a known commit: no request needed (a commit never changes)."""
    if commit is None:
        return None
    path = _storage(repo, s) / "snapshots" / commit / name
    return str(path) if path.is_file() else None


def _record_ref(repo: str, revision: str, commit: str, s: HubSettings) -> None:
    """Write `refs/<revision>` as huggingface_hub does, so offline reads find this commit."""
    if revision == commit or ".." in revision:
        return
    ref = _storage(repo, s) / "refs" / revision
    try:
        if ref.is_file() and ref.read_text(encoding="utf-8").strip() == commit:
            return
        ref.parent.mkdir(parents=True, exist_ok=True)
        write_text(ref, commit, mode=0o644)
    except OSError:
        pass


def _resolve_cached_commit(repo: str, revision: str | None, s: HubSettings) -> str | None:
    storage = _storage(repo, s)
    rev = revision or "main"
    if re.fullmatch(r"[0-9a-f]{40}", rev):
        return rev if (storage / "snapshots" / rev).is_dir() else None
    ref = storage / "refs" / rev
    try:
        return ref.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _from_cache(
    repo: str, revision: str | None, s: HubSettings, *, offline_reason: str | None
) -> HubFiles:
    commit = _resolve_cached_commit(repo, revision, s)
    snapshot = _storage(repo, s) / "snapshots" / commit if commit else None
    if snapshot is None or not (snapshot / CONFIG_FILE).is_file():
        where = _label(repo, revision)
        if offline_reason == "offline":
            raise HubError(
                repo,
                "offline",
                f"HF_HUB_OFFLINE=1 and {where} is not in the HF cache",
                _fill_hint(repo, revision, s) + " (or unset HF_HUB_OFFLINE)",
            )
        raise HubError(
            repo,
            "offline",
            f"{where} is not in the HF cache yet",
            "read it from the Hub first (`sglang-wizard inspect " + repo + "`), or "
            + _fill_hint(repo, revision, s),
        )
    files = {
        name: _read(str(snapshot / name)) for name in MODEL_FILES if (snapshot / name).is_file()
    }
    return HubFiles(repo, revision, commit, files, True, _load_meta(repo, commit) if commit else None)


def load_hub_facts(
    repo_id: str,
    revision: str | None = None,
    *,
    network: bool = True,
    settings: HubSettings | None = None,
) -> ModelFacts:
    """`ModelFacts` of a Hub repo revision, with exact parameter counts when the Hub has them."""
    got = fetch_model_files(repo_id, revision, network=network, settings=settings)
    facts = replace(facts_from_files(got.files, got.source, "hub"), revision=got.commit)
    if got.safetensors_params:
        facts = with_checkpoint_params(facts, got.safetensors_params)
    return facts


# --------------------------------------------------------------------------------------------
# Finding models: the HF cache, Hub search, draft candidates
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CachedModel:
    """One model in an HF cache: repo id, the snapshot folder and whether it has a config."""

    repo_id: str
    snapshot: str | None
    has_config: bool


def cached_models(settings: HubSettings | None = None) -> list[CachedModel]:
    """Models in this machine's HF cache (`models--ORG--NAME` folders), sorted by repo id."""
    s = settings or HubSettings.from_env()
    out: list[CachedModel] = []
    try:
        entries = sorted(s.cache_dir.iterdir())
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith("models--") or not entry.is_dir():
            continue
        repo = entry.name.removeprefix("models--").replace("--", "/", 1)
        commit = _resolve_cached_commit(repo, None, s)
        snapshot = entry / "snapshots" / commit if commit else None
        if snapshot is None or not snapshot.is_dir():
            snaps = sorted((entry / "snapshots").glob("*/" + CONFIG_FILE))
            snapshot = snaps[-1].parent if snaps else None
        has = snapshot is not None and (snapshot / CONFIG_FILE).is_file()
        out.append(CachedModel(repo, str(snapshot) if snapshot else None, has))
    return out


def complete_model_path(text: str, settings: HubSettings | None = None, limit: int = 20) -> list[str]:
    """Completions for a model path as typed: local folders for a path (`/`, `.`, `~`), repo ids
    of this machine's HF cache for anything else (case-insensitive prefix)."""
    t = text.strip()
    if not t:
        return []
    if t.startswith(("/", ".", "~")):
        head, part = os.path.split(t)
        folder = Path(os.path.expanduser(head or "."))
        try:
            names = sorted(
                e.name for e in folder.iterdir() if e.is_dir() and e.name.startswith(part)
            )
        except OSError:
            return []
        prefix = t[: len(t) - len(part)]
        return [prefix + name for name in names if not name.startswith(".") or part][:limit]
    low = t.lower()
    return [m.repo_id for m in cached_models(settings) if m.repo_id.lower().startswith(low)][:limit]


def search_models(query: str, limit: int = 20, settings: HubSettings | None = None) -> list[str]:
    """Repo ids on the Hub whose name contains `query` (most downloaded first)."""
    s = settings or HubSettings.from_env()
    text = query.strip()
    if not text:
        return []
    if s.offline:
        return [m.repo_id for m in cached_models(s) if text.lower() in m.repo_id.lower()][:limit]
    _quiet_library(s)
    from huggingface_hub import errors, get_session
    from huggingface_hub.utils import build_hf_headers, hf_raise_for_status

    failures: tuple[type[BaseException], ...] = (errors.HfHubHTTPError, *_network_errors())
    try:
        # One page, no retries: `HfApi.list_models` backs off for ~20 s on a dead network.
        response = get_session().get(
            f"{s.endpoint}/api/models",
            params={"search": text, "limit": limit, "sort": "downloads", "direction": -1},
            headers=build_hf_headers(token=s.token or False),
            timeout=10,
        )
        hf_raise_for_status(response)
        data = response.json()
        return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m][:limit]
    except failures as exc:
        raise _search_error(exc, text, s) from None


def _search_error(exc: BaseException, query: str, settings: HubSettings) -> HubError:
    """Why a Hub search failed and what to do: a search term is not a repo id, so the hints of
    reading one (`hf download TERM`, "not in the HF cache") do not apply."""
    status = getattr(getattr(exc, "response", None), "status_code", None)
    where = f"search the Hub ({settings.endpoint}) for {query!r}"
    cached = (
        "models already in the HF cache are listed without the network; or type a repo id "
        "ORG/NAME or a local model folder"
    )
    if status in (401, 403):
        return HubError(
            query, "auth", f"cannot {where}: HTTP {status} for the token ({settings.token_source})",
            "renew the token (`hf auth login`) or unset HF_TOKEN; " + cached,
        )
    if status is not None:
        return HubError(
            query, "hub", f"cannot {where}: HTTP {status}",
            "try again later, or set HF_ENDPOINT to a mirror; " + cached,
        )
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return HubError(
        query, "network", f"cannot {where} ({reason})",
        "check the network or HF_ENDPOINT (HF_HUB_OFFLINE=1 searches the HF cache only); " + cached,
    )


@dataclass(frozen=True)
class DraftCandidate:
    """A possible draft model for a target, with the fit checks (`fits` when none failed)."""

    repo_id: str
    where: Literal["hub", "cache"]
    kind: str | None
    fits: bool
    problems: tuple[str, ...]
    facts: ModelFacts | None = None

    def line(self) -> str:
        """One line for a list: mark, repo id, kind and why it does not fit."""
        mark = "fits" if self.fits else "no  "
        kind = f" [{self.kind}]" if self.kind else ""
        why = f": {'; '.join(self.problems)}" if self.problems else ""
        return f"{mark} {self.repo_id}{kind} ({self.where}){why}"


def describe_settings(settings: HubSettings | None = None) -> dict[str, Any]:
    """Endpoint, cache, offline and where the token comes from (never the token itself)."""
    s = settings or HubSettings.from_env()
    return {
        "endpoint": s.endpoint,
        "cache_dir": str(s.cache_dir),
        "offline": s.offline,
        "token": s.token_source,
    }
