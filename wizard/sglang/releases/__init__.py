"""The SGLang release registry: one generated, reviewable data file per release.

Every fact the rules need that differs between SGLang releases lives in `data/<release>.json`,
written by `sglang-wizard conformance add-release V` from that release's wheel (see
`wizard/conformance/onboard.py`): where each rule's raising statement stands (`sites`), which
resolution order the release follows (`resolution`), its algorithm list, architecture lists,
the spelling of renamed fields, and the behaviour switches (`traits`). The rules in `wizard/rules/`
read a `Release`; they never compare version strings.

Loading is lazy and per release: a check loads only the release it was asked for.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from wizard.codecache import load_cached, store_cached
from wizard.sglang.releases.traits import Traits

DATA_DIR = Path(__file__).resolve().parent / "data"
INDEX_PATH = DATA_DIR / "index.json"

_VERSION_RE = re.compile(
    r"^\s*v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?"
    r"(?P<suffix>(?:[.-]?(?:post|dev|rc|a|b)\d*)*(?:\+[A-Za-z0-9.]+)?)\s*$"
)


class VersionError(ValueError):
    """A version string that is not a version at all (`--sglang-version banana`)."""


@dataclass(frozen=True)
class Site:
    """Where one rule's statement stands in one release (located by `wizard.conformance.locate`)."""

    where: str  # "sglang/srt/server_args.py:3521"
    exception: str | None  # "AssertionError", "ValueError", ... (None: not a raising statement)
    bare: bool  # an `assert` without a message
    source: str  # the statement's first source line (what a bare assert shows)
    variant: int  # which anchor matched (0: the older wording, 1: the newer one)
    match: str  # "exact" or "fuzzy 0.91" (fuzzy matches are listed for review)


@dataclass(frozen=True)
class Release:
    """Everything the rules know about one SGLang release."""

    name: str
    aliases: tuple[str, ...]  # .postN releases whose argument code is byte-identical
    resolution: str  # "post_init" (ServerArgs.__post_init__) or "pipeline" (run_resolution_pipeline)
    algorithms: tuple[str, ...]
    algorithm_choices: bool  # argparse checks the algorithm name (case-sensitive) before resolution
    strategy_field: str  # "mamba_scheduler_strategy" or "mamba_radix_cache_strategy"
    attn_dp_field: bool  # the release has `attn_dp_size` (attention DP as its own size)
    reads_spec_v2_env: bool  # SGLANG_ENABLE_SPEC_V2 is declared in its environ.py
    spec_v2_default: bool
    archs: Mapping[str, frozenset[str]]
    traits: Mapping[str, Any]
    sites: Mapping[str, Site]
    dests: frozenset[str]  # every ServerArgs field its argparse parser sets
    # The same switches as `traits`, typed (`traits.py`, generated from the release data): read
    # `release.behaviour.NAME` (mypy checks the name and type) rather than `trait("NAME")`.
    behaviour: Traits
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # Config `model_type`s its pinned transformers (plus SGLang's own registered configs) can
    # load; empty when not dumped (then nothing is concluded from it).
    model_types: frozenset[str] = frozenset()
    # `auto_choose_speculative_params` as read from the source: per algorithm, per architecture
    # list (first match wins), default.
    auto_params: Mapping[str, Any] = field(default_factory=dict)
    # The generic rule family's sites (`wizard.rules.arg_sites`): SGLang's checks over flags no
    # resolution step rewrites, in launch-path order; `rule_seq`: the launch-path order of the
    # hand-written rules' located statements (where the generic findings go between them).
    generic_sites: tuple[Mapping[str, Any], ...] = ()
    # the plain writes of fields the engine does not resolve, replayed for the sites after them
    generic_writes: tuple[Mapping[str, Any], ...] = ()
    # SGLang's logged rewrites of deprecated values (rule R-DEPRECATED-VALUE,
    # `wizard.rules.deprecated_values`): where it warns, when, what it writes, its words
    deprecated_values: tuple[Mapping[str, Any], ...] = ()
    rule_seq: Mapping[str, int] = field(default_factory=dict)
    # where the launch path may build the model config (whose `__init__` checks the context
    # length and the quantization), in order: `{seq, condition (None: always), defaults}`; the
    # first that holds for a launch is where those checks run (`arg_sites.model_config_build`)
    model_config_builds: tuple[Mapping[str, Any], ...] = ()
    digest: str = ""  # of the release file's text (keys code generated from it between runs)

    def site(self, rule_id: str) -> Site | None:
        """The located statement of a rule in this release (None: the rule is not here)."""
        return self.sites.get(rule_id)

    def auto_choose(self, algorithm: str | None, arch: str | None) -> tuple[int, int, int]:
        """SGLang's `auto_choose_speculative_params` as read from this release: (steps, topk,
        draft tokens) for the algorithm, else the first architecture list holding `arch`, else
        the default."""
        table = self.auto_params
        chosen = table.get("algorithms", {}).get(str(algorithm))
        if not chosen:
            chosen = next((params for archs, params in table.get("archs", ()) if arch in archs),
                          table.get("default") or (3, 1, 4))
        steps, topk, draft_tokens = chosen
        return int(steps), int(topk), int(draft_tokens)

    def arch_set(self, name: str) -> frozenset[str]:
        """A named architecture list (empty when this release has no such list)."""
        return self.archs.get(name, frozenset())

    def trait(self, name: str) -> Any:
        """A behaviour switch of this release (KeyError names the missing trait)."""
        try:
            return self.traits[name]
        except KeyError:
            raise KeyError(f"release {self.name} has no trait {name!r}; re-run add-release") from None

    @property
    def pipeline(self) -> bool:
        """The release resolves arguments with the hook pipeline (`run_resolution_pipeline`)."""
        return self.resolution == "pipeline"


def parse_version(version: str) -> tuple[tuple[int, int, int], str]:
    """`"0.5.11.post1"` -> ((0, 5, 11), ".post1"); raise `VersionError` when unparseable."""
    match = _VERSION_RE.match(version) if isinstance(version, str) else None
    if match is None:
        raise VersionError(
            f"{version!r} is not an SGLang version; use the form 0.5.11 "
            f"(exact: {release_range()})"
        )
    numbers = (int(match["major"]), int(match["minor"]), int(match["patch"] or 0))
    return numbers, match["suffix"] or ""


@cache
def version_key(version: str) -> tuple[int, ...]:
    """A sort key: 0.5.5 < 0.5.5.post2 < 0.5.6 < 0.5.11."""
    numbers, suffix = parse_version(version)
    post = re.search(r"post(\d+)", suffix)
    return (*numbers, int(post.group(1)) if post else 0)


@cache
def _index() -> dict[str, Any]:
    return json.loads(INDEX_PATH.read_text(encoding="utf-8"))


@cache
def release_names() -> tuple[str, ...]:
    """Every release with its own data file, oldest first."""
    return tuple(sorted(_index()["releases"], key=version_key))


@cache
def known_versions() -> tuple[str, ...]:
    """Every version checked exactly: the releases and their identical .postN aliases."""
    names: list[str] = []
    for name, aliases in _index()["releases"].items():
        names.extend([name, *aliases])
    return tuple(sorted(names, key=version_key))


def previous_release(name: str) -> str | None:
    """The newest held release older than `name` (None: `name` is the oldest)."""
    older = [n for n in release_names() if version_key(n) < version_key(name)]
    return max(older, key=version_key) if older else None


def default_version() -> str:
    """The version a new profile gets (the incidents' release)."""
    return str(_index()["default"])


def release_range() -> str:
    """`0.5.5-0.5.23` for messages."""
    names = release_names()
    return f"{names[0]}-{names[-1]}" if names else "none"


@cache
def load_release(name: str) -> Release:
    """The release data of `name` (one of `release_names()`), read from its JSON file."""
    text = (DATA_DIR / f"{name}.json").read_text(encoding="utf-8")
    digest = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    # the parsed file, kept between processes under its digest (marshal loads a large release
    # in about half json's time; a miss or a damaged cache only costs the parse)
    key = f"<release data>\0{name}\0{digest}"
    data = load_cached(key)
    if not (isinstance(data, dict) and data.get("name") == name):
        data = json.loads(text)
        store_cached(key, data)
    return Release(
        name=data["name"],
        aliases=tuple(data.get("aliases", ())),
        resolution=data["resolution"],
        algorithms=tuple(data["algorithms"]),
        algorithm_choices=bool(data["algorithm_choices"]),
        strategy_field=data["strategy_field"],
        attn_dp_field=bool(data["attn_dp_field"]),
        reads_spec_v2_env=bool(data["reads_spec_v2_env"]),
        spec_v2_default=bool(data.get("spec_v2_default", False)),
        archs={k: frozenset(v) for k, v in data["archs"].items()},
        traits=dict(data["traits"]),
        sites={k: Site(**v) for k, v in data["sites"].items()},
        dests=frozenset(data["dests"]),
        defaults=dict(data.get("defaults", {})),
        model_types=frozenset(data.get("model_types", ())),
        auto_params=dict(data.get("auto_params") or {}),
        behaviour=_behaviour(data),
        generic_sites=tuple(data.get("generic_sites", ())),
        generic_writes=tuple(data.get("generic_writes", ())),
        deprecated_values=tuple(data.get("deprecated_values", ())),
        rule_seq=dict(data.get("rule_seq", {})),
        model_config_builds=tuple(data.get("model_config_builds", ())),
        digest=digest,
    )


def _behaviour(data: dict[str, Any]) -> Traits:
    """The typed switches of a release file (TypeError naming the release when they do not match
    `traits.py`: re-run add-release, which writes both)."""
    try:
        return Traits(**data["traits"])
    except TypeError as exc:
        raise TypeError(f"release {data.get('name')}: {exc}; re-run add-release") from None


def resolve_version(version: str) -> tuple[str, str | None]:
    """The release whose data checks `version`, and a warning when that is not exact.

    A release or one of its identical `.postN` aliases -> itself, no warning. Outside the range:
    the nearest release (older -> the oldest, newer -> the newest) and a warning. Another suffix
    (`0.5.11rc0`, a `.postN` with changed argument code we do not hold) -> its base release with a
    warning. Unparseable text raises `VersionError`.
    """
    numbers, suffix = parse_version(version)
    clean = version.strip().lstrip("v")
    index = _index()["releases"]
    for name, aliases in index.items():
        if clean == name or clean in aliases:
            return name, None
    names = release_names()
    asked = version_key(clean)
    same_base = [n for n in names if parse_version(n)[0] == numbers]
    if same_base:
        # The newest held release of this base not newer than the one asked (0.5.5.post4 ->
        # 0.5.5.post3's data; 0.5.6rc0 -> 0.5.6).
        older = [n for n in same_base if version_key(n) <= asked]
        chosen = max(older, key=version_key) if older else min(same_base, key=version_key)
        return chosen, (
            f"SGLang {clean} is checked with the {chosen} release data (same base release; "
            f"{suffix!r} is not held separately). The remote dry-run stays the authority."
        )
    oldest, newest = parse_version(names[0])[0], parse_version(names[-1])[0]
    if numbers < oldest:
        chosen, why = names[0], "it is older than every release the wizard holds"
    elif numbers > newest:
        chosen, why = names[-1], "it is newer than every release the wizard holds"
    else:
        # Between two held releases: the newest one older than the one asked (its code is what
        # the asked one grew from).
        chosen = max((n for n in names if version_key(n) <= asked), key=version_key)
        why = "it is the nearest older release the wizard holds"
    return chosen, (
        f"SGLang {clean} is not held exactly; using the {chosen} release data because {why} "
        f"(exact: {release_range()}). Flags and rules may differ; the remote dry-run is the authority."
    )


def release_for(version: str) -> Release:
    """The `Release` that checks `version` (see `resolve_version`)."""
    return load_release(resolve_version(version)[0])
