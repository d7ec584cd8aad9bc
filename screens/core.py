"""The one door from the screens to the core (`wizard/`): imports, and errors turned into text.

Screens only render and dispatch. Every call into the core goes through here so that
(a) a missing core piece becomes a readable `CoreUnavailable` the screen can show instead of a
traceback, and (b) the screens never import `wizard` internals directly in many places.
Nothing here computes a rule, a default or a value SGLang would use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wizard.profile import Profile
    from wizard.rules.report import Fix, Report


class CoreUnavailable(Exception):
    """A core module the screen needs is not installed in this build."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        super().__init__(f"{module}.{name} is not available in this build")


def _core(module: str, name: str) -> Any:
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:  # the module itself (not one of its imports) is missing
        if exc.name == module or (exc.name and module.startswith(exc.name + ".")):
            raise CoreUnavailable(module, name) from None
        raise
    try:
        return getattr(mod, name)
    except AttributeError:
        raise CoreUnavailable(module, name) from None


def check_profile(profile: Profile, facts: Any = None) -> Report:
    """The rule engine's report for a profile (`wizard.api.check_profile`); `facts` read on the host."""
    report: Report = _core("wizard.api", "check_profile")(profile, facts=facts)
    return report


def apply_fix(profile: Profile, fix: Fix) -> Profile:
    """A profile with one fix applied (`wizard.api.apply_fix`)."""
    fixed: Profile = _core("wizard.api", "apply_fix")(profile, fix)
    return fixed


def render_shell(profile: Profile) -> str:
    """The exact launch command (`wizard.sglang.render.render_shell`)."""
    return str(_core("wizard.sglang.render", "render_shell")(profile))


def render_yaml(profile: Profile) -> str:
    """SGLang `--config` YAML (`wizard.sglang.render.render_yaml`)."""
    return str(_core("wizard.sglang.render", "render_yaml")(profile))


def parse_command(text: str, version: str | None = None) -> Any:
    """Import a `python -m sglang.launch_server ...` line; returns the parser's ImportResult."""
    return _core("wizard.sglang.parse", "parse_command")(text, version)


def command_error_type() -> type[Exception]:
    """The import error class (`CommandError`), or a class nothing raises when it is missing."""
    try:
        cls: type[Exception] = _core("wizard.sglang.parse", "CommandError")
    except CoreUnavailable:
        return CoreUnavailable
    return cls


def supported_versions() -> tuple[str, ...]:
    """SGLang versions the rules know (the release registry, `wizard.sglang.releases`)."""
    try:
        supported = _core("wizard.sglang.versions", "supported_versions")()
    except CoreUnavailable:
        from wizard.profile import DEFAULT_SGLANG_VERSION

        return (DEFAULT_SGLANG_VERSION,)
    return tuple(str(v) for v in supported)


class ModelUnreadable(Exception):
    """The model folder could not be read (the core's reason is the message)."""


def model_facts(path: str) -> Any:
    """`ModelFacts` of a local model folder (`wizard.api.load_facts`, cached by the core)."""
    facts, why = _core("wizard.api", "load_facts")(path)
    if facts is None:
        raise ModelUnreadable(why or f"{path}: cannot read the model")
    return facts


def algorithm_choices(profile: Profile, target: Any, draft: Any) -> list[Any]:
    """Algorithms the version offers, available or not by the same findings F4 shows
    (`wizard.verdict.algorithm_choices`)."""
    return list(_core("wizard.verdict", "algorithm_choices")(profile, target, draft))


async def read_remote_facts(host: Any, path: str) -> Any:
    """`ModelFacts` of a model folder on a GPU host (`RemoteHost.model_files` + `facts_from_files`)."""
    model_files = _core("wizard.model_info", "MODEL_FILES")
    facts_from_files = _core("wizard.model_info", "facts_from_files")
    files = await host.model_files(path, model_files)
    return facts_from_files(files, f"{host.host_key}:{path}")


def plan_memory(profile: Profile, target: Any, draft: Any) -> Any:
    """The memory plan for the profile's GPUs, exactly as `check` computes it (`Report.memory_plan`).

    `target` / `draft` are model facts the screen already has (read locally or over SSH); the plan
    uses the values SGLang will really run (48 requests, auto trio, hybrid strategy, ...).
    """
    if profile.gpu.kind is None:
        return None
    report = _core("wizard.api", "check_profile")(profile, facts=target, draft_facts=draft)
    return report.memory_plan


def gpu_names() -> list[str]:
    """GPU kinds from the catalog."""
    from wizard.gpus import names

    return list(names())
