"""The core's public entry points for the CLI, the screens and the conformance scorer.

profile / argv -> typed SGLang arguments + model facts + GPU -> rule engine -> Report.
Model facts are read from local `config.json` files once and cached by path and mtime, so a
check on every keystroke stays pure CPU work.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wizard.example_models import example_facts
from wizard.gpus import GpuKind, lookup
from wizard.limits import MAX_GPUS
from wizard.model_files import ModelReadError, is_repo_id, resolve_model_dir
from wizard.model_info import load_model_facts
from wizard.rules import deprecated_values as dv
from wizard.rules.arg_sites import GENERIC, platforms_for
from wizard.rules.catalog import RULES_BY_ID
from wizard.rules.checks import (
    ARGPARSE,
    ARGPARSE_CHOICE,
    CLI_RENAMES,
    ENV_SECRET_UNSET,
    EXTRA_ARGS_FIELD,
)
from wizard.rules.engine import evaluate, first_sglang_error, sglang_verdict
from wizard.rules.model import Ctx, Rule
from wizard.rules.report import Finding, Fix, Report, SglangRaise
from wizard.secrets import argv_references, unset_references
from wizard.sglang.errors import CommandError
from wizard.sglang.fields import BY_DEST, FIELDS, canonical_dest, release_dest
from wizard.sglang.flags import group_pieces, load_table, run_argparse
from wizard.sglang.releases import default_version, load_release, release_names
from wizard.sglang.versions import resolve_version as _resolve_version_uncached

if TYPE_CHECKING:
    from wizard.model_facts import ModelFacts
    from wizard.profile_schema import Profile

DEFAULT_GPU = "H100"


@lru_cache(maxsize=64)
def resolve_version(version: str) -> tuple[str, str | None]:
    """Cached `wizard.sglang.versions.resolve_version` (the check runs on every keystroke)."""
    return _resolve_version_uncached(version)


_FACTS_CACHE: dict[tuple[str, float], tuple[ModelFacts | None, str | None]] = {}
_MISSING: dict[
    str, tuple[float, str]
] = {}  # path -> (when, why): unreadable paths, rechecked after 2 s
_MISSING_TTL_S = 2.0


_HUB_FACTS: dict[tuple[Any, ...], ModelFacts] = {}
_HUB_MISSES: dict[tuple[Any, ...], tuple[float, str]] = {}


def load_facts(
    path: str | None, revision: str | None = None, *, fetch: bool = True
) -> tuple[ModelFacts | None, str | None]:
    """Model facts for a local model dir or a Hub repo id, or (None, why not).

    A local folder is cached by path + config mtime. A repo id (`ORG/NAME`, not a local path, as
    SGLang decides) is read through `wizard.hub` at `revision` and kept for this process; with
    `fetch=False` only the HF cache is read (the screens check on every keystroke and fetch from
    the Hub in a worker).
    """
    if not path:
        return None, "no path"

    if is_repo_id(path):
        return _hub_facts(path, revision, fetch)

    missing = _MISSING.get(path)
    if missing is not None and time.monotonic() - missing[0] < _MISSING_TTL_S:
        return None, missing[1]
    direct = os.path.join(os.path.expanduser(path), "config.json")
    root: Path | None = None  # built only on a cache miss (the check runs on every keystroke)
    try:
        mtime = os.stat(direct).st_mtime
    except OSError:
        try:
            root = resolve_model_dir(Path(path).expanduser())
            config = root / "config.json"
            mtime = config.stat().st_mtime
        except (ModelReadError, OSError, ValueError) as exc:
            example = example_facts(path)  # a ready profile's model: its shipped config
            if example is not None:
                return example, None
            why = (
                str(exc)
                if isinstance(exc, ModelReadError)
                else f"{path}/config.json: not found on this machine"
            )
            if len(_MISSING) > 256:
                _MISSING.clear()
            _MISSING[path] = (time.monotonic(), why)
            return None, why
    key = (direct, mtime)
    cached = _FACTS_CACHE.get(key)
    if cached is not None:
        return cached
    if root is None:
        config = Path(direct)
        root = config.parent
    try:
        result: tuple[ModelFacts | None, str | None] = (load_model_facts(root), None)
    except ModelReadError as exc:
        result = (None, str(exc))
    except (OSError, ValueError) as exc:
        result = (None, f"{config}: {exc}")
    if len(_FACTS_CACHE) > 256:
        _FACTS_CACHE.clear()
    _FACTS_CACHE[key] = result
    return result


def _hub_facts(
    repo: str, revision: str | None, fetch: bool
) -> tuple[ModelFacts | None, str | None]:
    from wizard.hub import HubSettings, load_hub_facts

    settings = HubSettings.from_env()
    key = (repo, revision, settings.endpoint, str(settings.cache_dir), settings.token is not None)
    facts = _HUB_FACTS.get(key)
    if facts is not None:
        return facts, None
    miss = _HUB_MISSES.get((*key, fetch, settings.offline))
    if miss is not None and time.monotonic() - miss[0] < _MISSING_TTL_S:
        return None, miss[1]
    fetched = _HUB_MISSES.get((*key, True, settings.offline))
    if not fetch and fetched is not None:
        return None, fetched[1]  # why the last fetch failed (gated, unknown) says more than the cache
    try:
        facts = load_hub_facts(repo, revision, network=fetch, settings=settings)
    except ModelReadError as exc:
        if len(_HUB_MISSES) > 256:
            _HUB_MISSES.clear()
        _HUB_MISSES[(*key, fetch, settings.offline)] = (time.monotonic(), str(exc))
        return None, str(exc)
    if len(_HUB_FACTS) > 64:
        _HUB_FACTS.clear()
    _HUB_FACTS[key] = facts
    return facts, None


@lru_cache(maxsize=1)
def _field_defaults() -> tuple[tuple[str, str, str, Any], ...]:
    """(section, name, SGLang field, profile default) for every mapped field, computed once."""
    from wizard.profile_schema import field_default  # pydantic: only when a profile is checked

    return tuple((*spec.path.split(".", 1), spec.dest, field_default(spec.path)) for spec in FIELDS)




def typed_from_profile(profile: Profile) -> dict[str, Any]:
    """Canonical SGLang field -> value for every profile field that differs from its default."""
    typed: dict[str, Any] = {}
    for section, name, dest, default in _field_defaults():
        value = getattr(getattr(profile, section), name)
        if value != default or dest == "model_path":
            typed[dest] = value
    return typed


def _unavailable_fields(typed: Mapping[str, Any], version: str) -> list[Finding]:
    """Profile fields whose flag does not exist in `version`: SGLang's argparse refuses them."""
    out: list[Finding] = []
    for spec in FIELDS:
        if spec.dest in typed and spec.dest_for(version) is None:
            others = [r for r in reversed(release_names()) if spec.dest_for(r) is not None]
            other = others[0] if others else "another release"
            flag = (spec.flag_for(other) if others else None) or "--" + spec.dest.replace("_", "-")
            out.append(
                CLI_RENAMES.finding(
                    f"unrecognized arguments: {flag} (only in SGLang {other})",
                    fields=(spec.path,),
                    sglang=SglangRaise(
                        "argparse",
                        "SystemExit",
                        None,
                        False,
                        f"error: unrecognized arguments: {flag}",
                    ),
                    fixes=(Fix(f"Remove {flag}", {spec.path: None}),),
                    order=-1,
                )
            )
    return out


def _extra_typed(extra_args: Sequence[str], version: str) -> tuple[dict[str, Any], Finding | None]:
    """Parse `extra_args` with the version's real flag table: their typed values, or SGLang's argparse error."""
    if not extra_args:
        return {}, None
    try:
        namespace = run_argparse(load_table(version), list(extra_args), require=False)
    except CommandError as exc:
        return {}, _argparse_finding(exc)

    return {canonical_dest(k): v for k, v in vars(namespace).items()}, None


def _argparse_finding(exc: Any) -> Finding:
    sglang_error = getattr(exc, "sglang_error", None)
    message = sglang_error.message if sglang_error is not None else str(exc)
    suggestion = getattr(exc, "suggestion", None)
    return ARGPARSE.finding(
        message + (f" ({suggestion})" if suggestion else ""),
        sglang=SglangRaise("argparse", "SystemExit", None, False, f"error: {message}"),
        order=-1,
    )


def _extra_field_findings(
    profile: Profile, version: str, extra: Mapping[str, Any]
) -> list[Finding]:
    """Extra args that set a flag a profile field owns: the command cannot say both (R-EXTRA-ARGS-FIELD).

    The fix moves the value into the field (or drops the flag), so F4 shows it before Review
    tries to write the command."""
    if not profile.extra_args:
        return []

    groups = group_pieces(load_table(version), profile.extra_args)
    out: list[Finding] = []
    for index, (match, pieces) in enumerate(groups):
        if match is None:
            continue
        spec = BY_DEST.get(canonical_dest(match.action.server_field))
        if spec is None or spec.dest_for(version) != match.action.server_field:
            continue
        rest = [p for i, (_, ps) in enumerate(groups) if i != index for p in ps]
        fixes = [Fix(f"Drop {match.option} from extra args", {"extra_args": rest})]
        value = extra.get(spec.dest)
        if value is not None:
            try:
                profile.with_edits({spec.path: value, "extra_args": rest})
            except ValueError:
                pass
            else:
                fixes.insert(
                    0, Fix(f"Move {' '.join(pieces)} into its field", {spec.path: value, "extra_args": rest})
                )
        out.append(
            EXTRA_ARGS_FIELD.finding(
                f"extra args set {match.option}, which the profile field {spec.path} holds; "
                "the command cannot carry both: set the field instead",
                title=f"Extra args set {match.option}, which has its own field",
                fields=("extra_args", spec.path),
                sglang=SglangRaise("wizard", None, None, False, ""),
                fixes=fixes,
                order=-1,
            )
        )
    return out


def _unset_secret_findings(profile: Profile) -> list[Finding]:
    """Secret references (`env:HF_TOKEN`, `--api-key env:SGLANG_WIZARD_API_KEY`) whose variable
    is not set here (R-ENV-SECRET-UNSET): the launch reads them from this environment."""
    from wizard.sglang.render import profile_secret_option_of

    unset = SglangRaise("wizard", None, None, False, "")
    out = [
        ENV_SECRET_UNSET.finding(
            f"the launch reads ${name} from this environment, and it is not set here: the "
            f"server would start without it (export {name} before launching)",
            title=f"${name} is not set here",
            sglang=unset,
            order=10**6,
        )
        for name in unset_references(profile.env)
    ]
    refs = argv_references(profile.extra_args, profile_secret_option_of(profile))
    for option, name in refs:
        if name in os.environ:
            continue
        out.append(ENV_SECRET_UNSET.finding(
            f"{option} reads ${name} from this environment, and it is not set here: the "
            f"launch refuses to start the server without it (export {name}=... first)",
            title=f"${name} is not set here",
            explanation=ENV_SECRET_UNSET.why + f" SGLang reads {option} only from its command line.",
            fields=("extra_args",),
            sglang=unset,
            order=10**6,
        ))
    return out


@lru_cache(maxsize=32)
def _choice_fields(version: str) -> tuple[tuple[str, Any, Any], ...]:
    """(profile path, its default, argparse action) of the fields whose flag has `choices`."""
    from wizard.profile_schema import field_default

    table = load_table(version)
    out = []
    for spec in FIELDS:
        dest = spec.dest_for(version)
        action = table.by_dest.get(dest) if dest is not None else None
        if action is not None and action.choices:
            out.append((spec.path, field_default(spec.path), action))
    return tuple(out)


def _choice_findings(profile: Profile, version: str) -> list[Finding]:
    """Profile fields whose value is not one of SGLang's argparse `choices` (R-ARGPARSE-CHOICE)."""
    out: list[Finding] = []
    for path, default, action in _choice_fields(version):
        value = profile.get(path)
        if value is None or value == default or isinstance(value, bool):
            continue
        if value in action.choices or str(value) in {str(c) for c in action.choices}:
            continue
        flag = action.option_strings[-1] if action.option_strings else "--" + action.dest
        choices = ", ".join(repr(str(c)) for c in action.choices)
        message = f"argument {flag}: invalid choice: {str(value)!r} (choose from {choices})"
        same = [c for c in action.choices if str(c).lower() == str(value).lower()]
        fixes = [Fix(f"Use {same[0]}", {path: same[0]})] if same else []
        fixes.append(Fix("Let SGLang choose", {path: None}))
        out.append(
            ARGPARSE_CHOICE.finding(
                message,
                title=f"{flag} takes one of SGLang's choices",
                fields=(path,),
                sglang=SglangRaise("argparse", "SystemExit", None, False, f"error: {message}"),
                fixes=fixes,
                order=-1,
            )
        )
    return out


def _gpu_for(name: str | None) -> tuple[GpuKind, bool]:
    if name:
        return lookup(name), False
    return lookup(DEFAULT_GPU), True


def check_typed(
    typed: Mapping[str, Any],
    *,
    sglang_version: str,
    env: Mapping[str, str] | None = None,
    gpu: str | None = None,
    gpus: int | None = None,
    paths_local: bool = True,
    facts: ModelFacts | None = None,
    draft_facts: ModelFacts | None = None,
    gpu_free_gib: float | None = None,
    fetch: bool = True,
) -> Report:
    """Check canonical typed arguments (as SGLang would get them) for one version.

    Model facts are read from the local `config.json` files (or the Hub / HF cache for a repo
    id; only the cache with `fetch=False`) unless given (e.g. read over SSH).
    `gpu_free_gib`: free memory of one GPU read on the host (`nvidia-smi`) for the memory plan.
    """
    version, warning = resolve_version(sglang_version)
    gpu_kind, assumed = _gpu_for(gpu)
    facts_error: str | None = None
    draft_error: str | None = None
    if facts is None:
        facts, facts_error = load_facts(
            typed.get("model_path"), typed.get("revision"), fetch=fetch
        )
    draft_path = typed.get("speculative_draft_model_path")
    if draft_facts is None and draft_path:
        draft_facts, draft_error = load_facts(
            draft_path, typed.get("speculative_draft_model_revision"), fetch=fetch
        )
    ctx = Ctx(
        release=load_release(version),
        requested_version=sglang_version,
        typed=dict(typed),
        env=dict(env or {}),
        gpu=gpu_kind,
        gpu_assumed=assumed,
        gpus=gpus,
        facts=facts,
        facts_error=facts_error,
        draft_facts=draft_facts,
        draft_error=draft_error,
        paths_local=paths_local,
        release_note=warning,
        gpu_free_gib=gpu_free_gib,
    )
    return evaluate(ctx)


#: The engine's rules about a speculative algorithm and its draft: what `inspect` and the Hub's
#: draft search show beside the model facts.
DRAFT_RULES = frozenset({
    "R-NEXTN-NO-MTP",
    "R-DRAFT-MISSING",
    "R-EAGLE3-DRAFT-WITH-EAGLE",
    "R-EAGLE3-OWN-MTP",
    "R-DRAFT-HIDDEN-SIZE",
    "R-DRAFT-VOCAB",
    "R-TREE-CAPACITY",
})


def draft_findings(
    target: ModelFacts,
    draft: ModelFacts | None,
    *,
    algorithm: str,
    sglang_version: str,
    draft_path: str | None = None,
    num_steps: int | None = None,
    topk: int | None = None,
    num_draft_tokens: int | None = None,
) -> list[Finding]:
    """The rule engine's findings about `algorithm` with this target and draft (`DRAFT_RULES`),
    from the same check a profile gets (the facts are given, no path is read)."""
    typed: dict[str, Any] = {"model_path": target.source, "speculative_algorithm": algorithm}
    if draft is not None:
        typed["speculative_draft_model_path"] = draft_path or draft.source
    for name, value in (("speculative_num_steps", num_steps), ("speculative_eagle_topk", topk),
                        ("speculative_num_draft_tokens", num_draft_tokens)):
        if value is not None:
            typed[name] = value
    report = check_typed(typed, sglang_version=sglang_version, paths_local=False, facts=target,
                         draft_facts=draft, fetch=False)
    return [f for f in report.findings if f.rule in DRAFT_RULES]


def check_profile(
    profile: Profile,
    *,
    gpu: str | None = None,
    gpus: int | None = None,
    paths_local: bool | None = None,
    facts: ModelFacts | None = None,
    draft_facts: ModelFacts | None = None,
    verify_fixes: bool = True,
    gpu_free_gib: float | None = None,
    fetch: bool = True,
) -> Report:
    """Check a profile: what SGLang will do with it, in SGLang's order, and the values it will run.

    `facts` / `draft_facts` replace reading the local `config.json` (the screens pass facts read
    from the GPU host over SSH). With `verify_fixes` an error's fixes are kept only when applying
    one really removes that error (a fix SGLang would undo, e.g. a page size the backend forces,
    is not offered)."""
    version, _ = resolve_version(profile.sglang_version)
    typed = typed_from_profile(profile)
    extra, argparse_problem = _extra_typed(profile.extra_args, version)
    typed.update({k: v for k, v in extra.items() if k not in typed})
    from wizard.multinode import dist_init_addr, is_multinode, node_findings

    if is_multinode(profile) and "dist_init_addr" not in typed:
        addr = dist_init_addr(profile)  # every node's command gets it (rank 0 is checked)
        if addr is not None:
            typed["dist_init_addr"] = addr
    local = paths_local if paths_local is not None else profile.ssh.host is None
    report = check_typed(
        typed,
        sglang_version=profile.sglang_version,
        env=profile.env,
        gpu=gpu or profile.gpu.kind,
        gpus=gpus or profile.gpu.count,
        paths_local=local,
        facts=facts,
        draft_facts=draft_facts,
        gpu_free_gib=gpu_free_gib,
        fetch=fetch,
    )
    early = _unavailable_fields(typed, version)
    if argparse_problem is not None:
        early.append(argparse_problem)
    else:
        early += _extra_field_findings(profile, version, extra)
        report = _with_extra_args_drops(report, profile, version)
        report = _with_deprecated_value_fixes(report, profile.extra_args, version, typed)
    covered = {
        path
        for f in report.findings
        if f.sglang is not None and f.sglang.stage == "argparse"
        for path in f.fields
    }
    early += [f for f in _choice_findings(profile, version) if f.fields[0] not in covered]
    nodes = node_findings(profile)
    late = _unset_secret_findings(profile)
    if early or nodes or late:
        report = Report(
            report.sglang_version,
            report.rules_version,
            report.gpu,
            (*early, *report.findings, *nodes, *late),
            report.effective,
            report.typed,
            report.memory_plan,
            report.model_source,
            report.depends_on,
        )
    if verify_fixes:
        report = _with_verified_fixes(
            report, profile, gpu, gpus, paths_local, facts, draft_facts, fetch
        )
    return report


def _with_extra_args_drops(report: Report, profile: Profile, version: str) -> Report:
    """R-ARG-SITE findings get a fix per flag of their site typed in extra args: drop it (the
    verification keeps the drops after which the finding is gone)."""
    from dataclasses import replace

    droppable = _droppable
    if not profile.extra_args or not any(f.rule == GENERIC.id or droppable(f.rule)
                                         for f in report.findings):
        return report
    release = load_release(version)
    groups = group_pieces(load_table(version), profile.extra_args)
    findings = []
    for finding in report.findings:
        site = next((s for s in release.generic_sites if finding.rule == GENERIC.id
                     and finding.sglang is not None and s["where"] == finding.sglang.where), None)
        fields = site["defaults"] if site is not None else droppable(finding.rule)
        if fields:
            drops = _drop_fixes(groups, range(len(groups)), fields.__contains__, "extra args")
            finding = replace(finding, fixes=(*finding.fixes, *drops))
        findings.append(finding)
    return replace(report, findings=tuple(findings))


def _with_deprecated_value_fixes(report: Report, extra_args: Sequence[str], version: str,
                                 typed: Mapping[str, Any]) -> Report:
    """R-DEPRECATED-VALUE findings without a fix (a flag only extra args hold, e.g.
    `--tool-call-parser`) get one: the extra args (of a profile, or the flags of a command no
    profile field holds) with that flag typed as the value SGLang runs with
    (`deprecated_values.replacement`)."""
    from dataclasses import replace

    if not any(f.rule == dv.DEPRECATED_VALUE.id and not f.fixes for f in report.findings):
        return report
    release = load_release(version)
    table = load_table(version)
    platforms = platforms_for(lookup(report.gpu)) if report.gpu else frozenset()
    findings = []
    for finding in report.findings:
        if finding.rule != dv.DEPRECATED_VALUE.id or finding.fixes or finding.sglang is None:
            findings.append(finding)
            continue
        entry = next((e for e in dv.deprecations(release) if e.where == finding.sglang.where
                      and e.holds(typed, platforms)
                      and e.words(typed, platforms) == finding.message), None)
        edits = dv.replacement(entry, typed, platforms) if entry is not None else None
        if edits is not None:
            fix = _typed_instead(edits, extra_args, table, release)
            if fix is not None:
                finding = replace(finding, fixes=(Fix(dv.fix_label(edits), fix),))
        findings.append(finding)
    return replace(report, findings=tuple(findings))


def _typed_instead(edits: Mapping[str, Any], extra_args: Sequence[str], table: Any,
                   release: Any) -> dict[str, Any] | None:
    """The profile edits that type `edits` (canonical field -> value, None: drop the flag):
    a profile field directly, another flag in the extra args (its pieces replaced where it is
    typed, else added). None when a flag is not in the release's table."""
    out: dict[str, Any] = {}
    groups = [(m, list(p)) for m, p in group_pieces(table, list(extra_args))]
    for name, value in edits.items():
        spec = BY_DEST.get(name)
        if spec is not None:
            out[spec.path] = value
            continue
        action = table.by_dest.get(release_dest(name, release))
        if action is None:
            return None
        switch = action.kind in ("store_true", "store_false")
        pieces = ([] if value is None or (switch and value is not True)
                  else [action.primary] if switch else [action.primary, str(value)])
        at = next((i for i, (m, _p) in enumerate(groups) if m is not None
                   and m.action.server_field == action.server_field), None)
        if at is None:
            groups.append((None, pieces))
        else:
            groups[at] = (groups[at][0], pieces)
    if any(spec is None for spec in (BY_DEST.get(n) for n in edits)):
        out["extra_args"] = [p for _m, pieces in groups for p in pieces]
    return out


def _droppable(rule: str) -> tuple[str, ...]:
    """The fields whose typed flag a rule's fix drops (`Rule.drops`)."""
    found = RULES_BY_ID.get(rule)
    return found.drops if isinstance(found, Rule) else ()


def _is_culprit(culprits: frozenset[str], field: str) -> bool:
    return canonical_dest(field) in culprits


def _drop_fixes(groups: Sequence[tuple[Any, list[str]]], indices: Sequence[int],
                dropped: Callable[[str], bool], place: str) -> list[Fix]:
    """A fix per flag among `groups[indices]` whose field (the release's spelling) `dropped`
    accepts: the other flags of `indices`, as typed, become the `extra_args`."""
    out = []
    for index in indices:
        match = groups[index][0]
        if match is None or not dropped(match.action.server_field):
            continue
        rest = [p for i in indices if i != index for p in groups[i][1]]
        out.append(Fix(f"Drop {match.option} from {place}", {"extra_args": rest}))
    return out


def _with_verified_fixes(report: Report, profile: Profile, gpu: str | None, gpus: int | None,
                         paths_local: bool | None, facts: ModelFacts | None,
                         draft_facts: ModelFacts | None, fetch: bool = True) -> Report:
    """`report` whose errors keep only the fixes after which the same error is gone."""
    from dataclasses import replace

    changed = False
    findings = []
    for finding in report.findings:
        if finding.severity == "error" and finding.fixes:
            kept = []
            for fix in finding.fixes:
                try:
                    after = check_profile(apply_fix(profile, fix), gpu=gpu, gpus=gpus,
                                          paths_local=paths_local, facts=facts,
                                          draft_facts=draft_facts, verify_fixes=False,
                                          fetch=fetch)
                except ValueError:  # the edit itself is invalid for this profile
                    continue
                if not any(f.rule == finding.rule and f.message == finding.message
                           for f in after.findings):
                    kept.append(fix)
            if len(kept) != len(finding.fixes):
                finding = replace(finding, fixes=tuple(kept))
                changed = True
        findings.append(finding)
    if not changed:
        return report
    return replace(report, findings=tuple(findings))


def check_argv(
    argv: Sequence[str],
    *,
    sglang_version: str,
    env: Mapping[str, str] | None = None,
    gpu: str | None = None,
    gpus: int | None = None,
    paths_local: bool = True,
    command_fixes: bool = True,
) -> Report:
    """Check the flags after `python -m sglang.launch_server`, exactly as typed for that version.
    (`command_fixes`: R-ARG-SITE findings get their drop-the-flag fixes, each verified.)"""
    version, _ = resolve_version(sglang_version)
    gpu_kind, _assumed = _gpu_for(gpu)
    try:
        namespace = run_argparse(load_table(version), list(argv))
    except CommandError as exc:
        finding = _argparse_finding(exc)
        return Report(sglang_version, version, gpu_kind.name, (finding,), {}, {})
    typed = {canonical_dest(k): v for k, v in vars(namespace).items()}
    report = check_typed(
        typed, sglang_version=sglang_version, env=env, gpu=gpu, gpus=gpus, paths_local=paths_local
    )
    if command_fixes and any(f.rule == GENERIC.id or _droppable(f.rule)
                             for f in report.findings):
        report = _with_command_drops(report, list(argv), version)
    if command_fixes and any(f.rule == dv.DEPRECATED_VALUE.id for f in report.findings):
        groups = group_pieces(load_table(version), list(argv))
        extra = [p for index in _extra_groups(groups, version) for p in groups[index][1]]
        report = _with_deprecated_value_fixes(report, extra, version, typed)
    return report


def _extra_groups(groups: Sequence[tuple[Any, list[str]]], version: str) -> list[int]:
    """The groups of a command's flags that no profile field holds (a profile imported from
    the command keeps them in `extra_args`, in order, as typed)."""
    return [index for index, (match, _) in enumerate(groups) if match is not None and not (
        (spec := BY_DEST.get(canonical_dest(match.action.server_field))) is not None
        and spec.dest_for(version) == match.action.server_field)]


def _with_command_drops(report: Report, argv: list[str], version: str) -> Report:
    """R-ARG-SITE findings (and rules with `drops`) of a command get a fix per flag of their site typed on it that no
    profile field holds (a field's flag has its `Unset` fix already): drop it. The edit is the
    one a profile imported from the command takes (`import`: such flags go to `extra_args`, in
    order, as typed). Offered for the site's culprits (`Report.site_culprits`): the flags whose
    default makes its condition fail on the values SGLang has at the site, so the command
    without the flag no longer has the finding."""
    from dataclasses import replace

    groups = group_pieces(load_table(version), argv)
    extra = _extra_groups(groups, version)
    findings = []
    for finding in report.findings:
        where = finding.sglang.where if finding.sglang is not None else None
        culprits: frozenset[str] = frozenset(
            report.site_culprits.get(where or "", ()) if finding.rule == GENERIC.id
            else _droppable(finding.rule))  # a rule's own `drops` (a flag it is about)
        if culprits:
            drops = _drop_fixes(groups, extra, partial(_is_culprit, culprits), "the command")
            finding = replace(finding, fixes=(*finding.fixes, *drops))
        findings.append(finding)
    return replace(report, findings=tuple(findings))


def report_json(report: Report, case_id: Any = None) -> dict[str, Any]:
    """The stable JSON report, plus `sglang_verdict` (argument-time errors only)."""
    out = report.to_json(case_id)
    out["sglang_verdict"] = sglang_verdict(report)
    first = first_sglang_error(report)
    out["first_sglang_error"] = first.rule if first else None
    return out


class CaseError(ValueError):
    """A batch case whose fields do not have the documented types or ranges (names the field)."""


@dataclass(frozen=True)
class Case:
    """A validated batch case."""

    argv: list[str]
    env: dict[str, str]
    sglang_version: str
    gpu: str | None
    gpus: int | None


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}" + ("..." if len(value) > 40 else "")
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def validate_case(case: Any) -> Case:
    """Check a batch case's fields; `CaseError` names the first bad field and what it takes.

    `argv`: a list of strings (numbers allowed), `env`: an object of NAME -> string, `sglang_version`
    and `gpu`: strings (a known version / GPU kind), `gpus`: an integer from 1 to MAX_GPUS; absent
    or null fields take their defaults. Other keys are ignored.
    """
    if not isinstance(case, Mapping):
        raise CaseError(f"each line must be a JSON object, got {_json_kind(case)}")
    argv_in = case.get("argv")
    if argv_in is None:
        argv_in = []
    if not isinstance(argv_in, list):
        raise CaseError(
            f'"argv": expected a list of strings (["--model-path", "M", "--tp", "2"]), '
            f"got {_json_kind(argv_in)}"
        )
    argv: list[str] = []
    for index, word in enumerate(argv_in):
        if isinstance(word, str):
            argv.append(word)
        elif isinstance(word, int) and not isinstance(word, bool):
            argv.append(str(word))
        else:
            raise CaseError(f'"argv"[{index}]: expected a string, got {_json_kind(word)}')
    env_in = case.get("env")
    if env_in is None:
        env_in = {}
    if not isinstance(env_in, Mapping):
        raise CaseError(
            f'"env": expected an object of NAME -> value ({{"SGLANG_ENABLE_SPEC_V2": "1"}}), '
            f"got {_json_kind(env_in)}"
        )
    env: dict[str, str] = {}
    for name, value in env_in.items():
        if not _ENV_NAME_RE.fullmatch(str(name)):
            raise CaseError(f'"env": {str(name)[:60]!r} is not an environment variable name')
        if isinstance(value, str):
            env[str(name)] = value
        elif isinstance(value, int) and not isinstance(value, bool):
            env[str(name)] = str(value)
        else:
            raise CaseError(f'"env"."{name}": expected a string, got {_json_kind(value)}')
    version = case.get("sglang_version")
    if version is None:
        version = default_version()
    if not isinstance(version, str):
        raise CaseError(
            f'"sglang_version": expected a string like "{default_version()}", got {_json_kind(version)}'
        )
    try:
        resolve_version(version)
    except ValueError as exc:
        raise CaseError(f'"sglang_version": {exc}') from None
    gpu = case.get("gpu")
    if gpu is not None:
        if not isinstance(gpu, str):
            raise CaseError(f'"gpu": expected a GPU kind like "H100", got {_json_kind(gpu)}')
        try:
            gpu = lookup(gpu).spec
        except ValueError as exc:
            raise CaseError(f'"gpu": {exc}') from None
    gpus = case.get("gpus")
    if gpus is not None and (
        isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= MAX_GPUS
    ):
        raise CaseError(
            f'"gpus": expected an integer from 1 to {MAX_GPUS}, got {_json_kind(gpus)}'
        )
    return Case(argv, env, version, gpu, gpus)


def check_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """One batch case (`check --jsonl` / conformance): `{"id", "argv", "env", "sglang_version", "gpu", "gpus"}`.

    Raises `CaseError` (a ValueError naming the field) when a field is malformed."""
    valid = validate_case(case)
    report = check_argv(
        valid.argv,
        sglang_version=valid.sglang_version,
        env=valid.env,
        gpu=valid.gpu,
        gpus=valid.gpus,
        paths_local=True,
    )
    return report_json(report, case.get("id"))


def apply_fix(profile: Profile, fix: Fix) -> Profile:
    """A new profile with a fix's edits (and env changes) applied."""
    edited = profile.with_edits(fix.edits) if fix.edits else profile
    if fix.env:
        env = dict(edited.env)
        for name, value in fix.env.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        edited = edited.with_edits({"env": env})
    return edited
