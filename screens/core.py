"""The one door from the screens to the core (`wizard/`), and errors turned into text.

Screens only render and dispatch; their calls into the core (engine, profile model, Hub reader,
command parser, renderer, GPU catalog, release list) go through here. Those core modules are
imported inside the function that calls them (the lazy imports `tests/test_architecture.py`
lists), so the first screen paints before pydantic and the rule engine load
(`tests/tui/test_startup.py`) and loads nothing it does not show.
Nothing here computes a rule, a default or a value SGLang would use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wizard.verdict import algorithm_choices as verdict_choices

if TYPE_CHECKING:
    from wizard.profile_schema import Profile
    from wizard.rules.report import Fix, Report


def check_profile(profile: Profile, facts: Any = None) -> Report:
    """The rule engine's report for a profile (`wizard.api.check_profile`); `facts` read on the host.

    A Hub id is only looked up in the HF cache here (the check runs on every keystroke); the
    Model screen fetches it from the Hub in a worker and posts `ModelFactsRead`.
    """
    from wizard.api import check_profile as check

    return check(profile, facts=facts, fetch=False)


def apply_fix(profile: Profile, fix: Fix) -> Profile:
    """A profile with one fix applied (`wizard.api.apply_fix`)."""
    from wizard.api import apply_fix as apply

    return apply(profile, fix)


def render_shell(profile: Profile) -> str:
    """The exact launch command (`wizard.sglang.render.render_shell`), or the container command
    of a profile with a [container] table (`wizard.container.render_profile_container`)."""
    from wizard.container import render_profile_container
    from wizard.sglang.render import render_shell as render

    if profile.container is not None:
        return render_profile_container(profile)
    return render(profile)


def render_yaml(profile: Profile) -> str:
    """SGLang `--config` YAML (`wizard.sglang.render.render_yaml`)."""
    from wizard.sglang.render import render_yaml as render

    return render(profile)


def parse_command(text: str, version: str | None = None) -> Any:
    """Import a `python -m sglang.launch_server ...` line; returns the parser's ImportResult."""
    from wizard.sglang.parse import parse_command as parse

    return parse(text, version)


def command_error_type() -> type[Exception]:
    """The import error class (`CommandError`)."""
    from wizard.sglang.parse import CommandError

    return CommandError


def supported_versions() -> tuple[str, ...]:
    """SGLang versions checked exactly: every release and its identical `.postN` aliases."""
    from wizard.sglang.versions import known_versions

    return tuple(str(v) for v in known_versions())


class ModelUnreadable(Exception):
    """The model folder could not be read (the core's reason is the message)."""


def model_facts(path: str, revision: str | None = None) -> Any:
    """`ModelFacts` of a local model folder or a Hub id (`wizard.api.load_facts`, cached by the
    core). A Hub id is fetched from the Hub: call from a worker thread."""
    from wizard.api import load_facts

    facts, why = load_facts(path, revision)
    if facts is None:
        raise ModelUnreadable(why or f"{path}: cannot read the model")
    return facts


def is_repo_id(path: str) -> bool:
    """Whether SGLang would download `path` from the Hub (`wizard.hub.is_repo_id`)."""
    from wizard.hub import is_repo_id as repo_id

    return bool(repo_id(path))


def cached_models() -> list[Any]:
    """Models in this machine's HF cache (`wizard.hub.cached_models`)."""
    from wizard.hub import cached_models as cached

    return list(cached())


def search_hub(query: str, limit: int = 30) -> list[str]:
    """Repo ids on the Hub containing `query` (`wizard.hub.search_models`); call from a worker."""
    from wizard.hub import search_models

    return list(search_models(query, limit))


def complete_model_path(text: str) -> list[str]:
    """Local folders / cached repo ids completing `text` (`wizard.hub.complete_model_path`)."""
    from wizard.hub import complete_model_path as complete

    return list(complete(text))


def draft_candidates(target_name: str, target: Any, algorithm: str) -> list[Any]:
    """Drafts for a target with their fit (`wizard.choices.draft_candidates`); call from a worker."""
    from wizard.choices import draft_candidates as candidates

    return list(candidates(target_name, target, algorithm))


def hub_settings() -> dict[str, Any]:
    """Endpoint, cache, offline flag and token source (never the token) (`wizard.hub`)."""
    from wizard.hub import describe_settings

    return dict(describe_settings())


def algorithm_options(target: Any, draft: Any, version: str) -> list[Any]:
    """Algorithms the version offers with availability and reason (`wizard.choices`)."""
    from wizard.choices import algorithm_options as options

    return list(options(target, draft, version))


def algorithm_choices(profile: Profile, target: Any, draft: Any) -> list[Any]:
    """Algorithms the version offers, available or not by the same findings F4 shows
    (`wizard.verdict.algorithm_choices`)."""
    return list(verdict_choices(profile, target, draft))


#: Launch-env variables that say where the host's HF cache is (sent to the host's agent; no token).
CACHE_ENV = ("HF_HOME", "HF_HUB_CACHE", "XDG_CACHE_HOME")


def cache_env(env: dict[str, str]) -> dict[str, str]:
    """The profile env entries that locate the HF cache on the host (never a token)."""
    return {k: v for k, v in env.items() if k in CACHE_ENV}


async def read_remote_facts(host: Any, path: str, env: dict[str, str] | None = None) -> Any:
    """`ModelFacts` of a model folder (or a Hub id in the host's HF cache) on a GPU host
    (`RemoteHost.model_files` + `facts_from_files`)."""
    from wizard.model_files import MODEL_FILES
    from wizard.model_info import facts_from_files

    files = await host.model_files(path, MODEL_FILES, cache_env(env or {}))
    return facts_from_files(files, f"{host.host_key}:{path}", "host")


def plan_memory(profile: Profile, target: Any, draft: Any) -> Any:
    """The memory plan for the profile's GPUs, exactly as `check` computes it (`Report.memory_plan`).

    `target` / `draft` are model facts the screen already has (read locally or over SSH); the plan
    uses the values SGLang will really run (48 requests, auto trio, hybrid strategy, ...).
    """
    if profile.gpu.kind is None:
        return None
    from wizard.api import check_profile as check

    return check(profile, facts=target, draft_facts=draft).memory_plan


def gpu_names() -> list[str]:
    """GPU kinds from the catalog."""
    from wizard.gpus import names

    return list(names())


GPU_FAMILY_PREFIX = "family:"  # option values of the family headers (not kinds)
GPU_CUSTOM_CHOICE = "custom:"  # the option that asks for a custom kind


def gpu_label(kind: str) -> str:
    """`H100  79.6 GiB sm90`: a kind (catalog name or custom spec) as the picker shows it."""
    from wizard.gpus import find

    gpu = find(kind)
    if gpu is None:
        return kind
    if gpu.custom and ",name=" not in gpu.custom:
        return gpu.name  # `custom sm86 24 GiB` says it already
    suffix = " (custom)" if gpu.custom else ""
    return f"{gpu.name}  {gpu.memory_gib:.1f} GiB {gpu.arch_label}{suffix}"


def gpu_choices() -> list[tuple[str, str]]:
    """The GPU picker's options: the catalog by family (a header per family, then its kinds with
    memory and architecture), and a last option for a custom kind."""
    from wizard.gpus import by_family

    out: list[tuple[str, str]] = []
    for family, kinds in by_family().items():
        out.append((f"── {family} ──", GPU_FAMILY_PREFIX + family))
        out.extend((gpu_label(g.name), g.name) for g in kinds)
    out.append(("Custom… (capability or gfx arch + memory)", GPU_CUSTOM_CHOICE))
    return out


def custom_gpu_kind(text: str) -> tuple[str | None, str | None]:
    """What the custom-kind dialog typed -> (the kind's spec, None) or (None, the problem).
    `sm=8.9,mem=48GB` is read as `custom:sm=8.9,mem=48GB`; a catalog name is taken as is."""
    from wizard.gpus import CUSTOM_PREFIX, UnknownGpuError, lookup

    text = text.strip()
    if not text:
        return None, "Type the capability (or gfx arch) and memory, e.g. sm=8.9,mem=48GB."
    if "=" in text and not text.lower().startswith(CUSTOM_PREFIX):
        text = CUSTOM_PREFIX + text
    try:
        return lookup(text).spec, None
    except UnknownGpuError as exc:
        return None, str(exc).split(" Known kinds: ")[0]
