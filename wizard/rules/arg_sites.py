"""The generic rule family R-ARG-SITE: SGLang's `if <flags>: raise` / `assert <flags>` sites over
flags no resolution step rewrites, read from each release's source by `add-release`
(`wizard.conformance.arg_sites`) and stored in the release data (`generic_sites`).

Each site's condition is a small JSON expression tree over flags (no Python source is stored).
For a release, all its sites are compiled once into one function that returns the sites holding
for a launch's values (plain dict reads and comparisons, a few microseconds), evaluated on the
arguments as typed (the flags they read are the ones nothing rewrites before the site). The
engine emits a holding site's finding at its place on the launch path: before the first
hand-written rule whose located statement comes later in SGLang's call order (`rule_seq`).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, cached_property, lru_cache, partial
from pathlib import Path
from types import CodeType, MappingProxyType
from typing import TYPE_CHECKING, Any

from wizard.codecache import compile_cached, load_cached, store_cached
from wizard.rules.attention import chunked_prefill
from wizard.rules.model import Args, Ctx, Raises, Rule
from wizard.rules.report import Finding, Fix, SglangRaise
from wizard.sglang import fields as fields_module
from wizard.sglang.fields import BY_DEST

if TYPE_CHECKING:
    from wizard.gpus import GpuKind
    from wizard.model_facts import ModelFacts
    from wizard.sglang.releases import Release

PLATFORM_PROBES: frozenset[str] = frozenset({
    "is_cuda", "is_hip", "is_cuda_alike", "is_npu", "is_xpu", "is_hpu", "is_musa", "is_mps",
    "is_sm90_supported", "is_sm100_supported", "is_sm120_supported",
    "is_sm90", "is_sm100", "is_sm120",  # `get_platform().is_sm100`
    # capability major 10 or 12 (utils/common.py; with CUDA >= 12.8, which Blackwell needs),
    # and `get_platform().is_blackwell`, which runtime_context.py maps to that function
    "is_blackwell_supported", "is_blackwell",
    # FlashInfer's presence: `is_flashinfer_available()` is `find_spec("flashinfer") is not None
    # and is_cuda()` (utils/common.py), `get_platform().has_flashinfer` its later name
    # (runtime_context.py maps it to that function): FlashInfer is installed with SGLang on CUDA
    # hosts, never on ROCm (what the runner's stub of it answers too)
    "is_flashinfer_available", "has_flashinfer",
    # the AMD arch probes (utils/common.py): `gfx95` / `gfx942` / `gfx1250` in the device's
    # gcnArchName, False on every non-HIP build
    "is_gfx95_supported", "is_gfx942_supported", "is_gfx1250_supported",
})
# Fields the engine resolves in SGLang's order (its effective table, plus the MoE runner): a
# site may read them after SGLang rewrote them; it is then evaluated where it stands, on the
# values the engine has resolved by that step.
RESOLVED_FIELDS: frozenset[str] = frozenset({
    "attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
    "device", "disable_overlap_schedule", "disable_radix_cache", "enable_dp_attention",
    "tp_size", "dp_size", "pp_size", "attn_dp_size", "speculative_algorithm",
    "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
    "moe_runner_backend", "speculative_moe_runner_backend", "mamba_scheduler_strategy",
    "chunked_prefill_size",  # the engine computes it where read (`attention.chunked_prefill`)
})  # not enable_mixed_chunk: the releases that turn it off for EAGLE are not all read yet
_OPS = frozenset({"==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"})
# Facts of the launch's model a site may read (`["model", name]`), from `ModelFacts`: the
# architecture is `hf_config.architectures[0]`, architectures the whole list, `has:<key>` whether
# config.json sets the key (`getattr(hf_config, key, None) is not None`). Without model facts
# such a site does not hold.
# `quant_method`: config.json's `quantization_config.quant_method` (None without one); `mla`:
# the model config's attention is MLA (SGLang's `use_mla_backend`)
# `nvfp4_moe_meta`: a hybrid FP8 + NVFP4-MoE checkpoint (`ModelFacts.nvfp4_moe_hybrid`; SGLang's
# ModelConfig attribute is a dict then, else None)
MODEL_FACTS: frozenset[str] = frozenset({"architecture", "architectures", "model_type",
                                         "quant_method", "mla", "nvfp4_moe_meta"})
HAS_KEY = "has:"


def model_fact_known(name: str) -> bool:
    """A model fact the engine supplies (`MODEL_FACTS` or `has:<config key>`)."""
    return name in MODEL_FACTS or (name.startswith(HAS_KEY) and name[len(HAS_KEY):].isidentifier())
_STR_METHODS = frozenset({"lower", "upper", "strip"})
_STR_TESTS = frozenset({"startswith", "endswith"})
_ARITH = frozenset({"+", "-", "*", "//", "%"})
_CAUGHT = (TypeError, ValueError, AttributeError, KeyError, ArithmeticError)
_ENV_KINDS = frozenset({"str", "int", "float", "bool"})
NO_ENV: Mapping[str, str] = MappingProxyType({})  # a launch without environment variables


def parse_env(parse: Sequence[Any], raw: str, default: Any) -> Any:
    """SGLang's value of an environment variable set to `raw`, by the release's parsing read
    from its source (`wizard.conformance.env_reads`): `("str",)` the text; `("int", INVALID)` /
    `("float", INVALID)` `int(raw)` / `float(raw)`; `("bool", TRUE, FALSE, INVALID)` true for a
    word of TRUE after `.lower()`, false for one of FALSE (for any other when FALSE is None).
    INVALID "default": a value the parsing refuses gives `default` (SGLang warns and uses its
    default), "raise": ValueError (SGLang raises)."""
    kind = parse[0]
    if kind == "str":
        return raw
    if kind == "bool":
        word = raw.lower()
        if word in parse[1]:
            return True
        if parse[2] is None or word in parse[2]:
            return False
    else:
        try:
            return int(raw) if kind == "int" else float(raw)
        except ValueError:
            pass
    if parse[-1] == "default":
        return default
    raise ValueError(f"{raw!r} is not a valid {kind} value")


def _env(env: Mapping[str, Any], name: str, parse: Sequence[Any], default: Any,
         alias: str | None) -> Any:
    """An `["env", ...]` node on the launch's environment (None or absent: unset; a deprecated
    alias is read when the variable itself is unset)."""
    raw = env.get(name)
    if raw is None and alias is not None:
        raw = env.get(alias)
    if raw is None:
        return default
    return parse_env(parse, str(raw), default)


def env_names(tree: Any) -> list[str]:
    """The environment variables a condition tree reads, in order."""
    out: list[str] = []
    if not isinstance(tree, list) or not tree:
        return out
    if tree[0] in ("env", "envset") and isinstance(tree[1], str):
        out.append(tree[1])
        if tree[0] == "env" and len(tree) > 4 and isinstance(tree[4], str):
            out.append(tree[4])
        return out
    for part in tree[1:]:
        out += [n for n in env_names(part) if n not in out]
    return out


_CONNECTOR_URL = re.compile(r"(.+)://(.*)")


def _connector(path: Any) -> bool:
    """`parse_connector_type(path) == ConnectorType.<X>`: False for a path without a
    `<type>://` scheme (a folder or a Hub id: the type is ""); a connector URL is not
    modelled (KeyError: the site does not hold)."""
    if isinstance(path, str) and _CONNECTOR_URL.match(path) is None:
        return False
    raise KeyError("connector")


_PLATFORMS: dict[str, frozenset[str]] = {}
CC_MAJOR = "cc_major="  # the platform set's entry that carries the capability major


def _get(mapping: Any, key: str, default: Any) -> Any:
    """`mapping.get(key, default)` on a dictionary (a parsed JSON flag); TypeError otherwise."""
    if not isinstance(mapping, dict):
        raise TypeError(f"not a dictionary: {mapping!r}")
    return mapping.get(key, default)


def _cc_major(platforms: frozenset[str]) -> int:
    """The compute-capability major a platform set carries (`platforms_for`)."""
    for entry in platforms:
        if entry.startswith(CC_MAJOR):
            return int(entry[len(CC_MAJOR):])
    raise TypeError("no GPU capability")  # (a condition reading it then does not hold)


def platforms_of(ctx: Ctx) -> frozenset[str]:
    """The platform probes that answer True on the launch's GPU kind."""
    return platforms_for(ctx.gpu)


def platforms_for(gpu: GpuKind) -> frozenset[str]:
    """The platform probes that answer True on a GPU kind."""
    cached = _PLATFORMS.get(gpu.name)
    if cached is not None:
        return cached
    out = set()
    if gpu.is_cuda:
        out |= {"is_cuda", "is_cuda_alike", "is_flashinfer_available", "has_flashinfer"}
    if gpu.is_hip:
        out |= {"is_hip", "is_cuda_alike"}
        arch = gpu.gfx_arch or ""
        out |= {probe for probe, part in (("is_gfx95_supported", "gfx95"),
                                          ("is_gfx942_supported", "gfx942"),
                                          ("is_gfx1250_supported", "gfx1250")) if part in arch}
    if gpu.is_hopper:
        out |= {"is_sm90_supported", "is_sm90"}
    if gpu.is_sm100:
        out |= {"is_sm100_supported", "is_sm100", "is_blackwell_supported", "is_blackwell"}
    if gpu.is_sm120:
        out |= {"is_sm120_supported", "is_sm120", "is_blackwell_supported", "is_blackwell"}
    # `torch.cuda.get_device_capability()[0]` (`cc_major` nodes): ROCm's torch answers the gfx
    # version there (9 for gfx942 / gfx950), which the catalog holds as the capability
    out.add(f"{CC_MAJOR}{gpu.compute_capability[0]}")
    _PLATFORMS[gpu.name] = frozenset(out)
    return _PLATFORMS[gpu.name]


def _const(value: Any) -> str:
    if isinstance(value, list):
        return "(" + "".join(_const(v) + ", " for v in value) + ")"
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    raise ValueError(f"not a literal: {value!r}")


Reader = Callable[[str, int], str]  # (canonical key, default slot) -> expression text
# An override scope: (architectures, condition, defaults, release dest -> canonical name)
Scope = tuple[frozenset[str], Any, Mapping[str, Any], Mapping[str, str]]


def _plain_read(key: str, slot: int) -> str:
    return f"_g({key!r}, _D[{slot}])"


def _source(tree: Sequence[Any], keys: Mapping[str, str], slots: dict[str, int],
            read: Reader = _plain_read) -> str:
    """Python expression text of a validated condition tree (whitelisted nodes only); `read`
    spells a flag's read."""
    kind = tree[0]
    if kind == "flag":
        name = str(tree[1])
        slot = slots.setdefault(name, len(slots))
        return read(keys.get(name, name), slot)
    if kind == "typed":  # a flag as typed, not as a replayed write since left it
        name = str(tree[1])
        slot = slots.setdefault(name, len(slots))
        return getattr(read, "typed", read)(keys.get(name, name), slot)
    if kind == "const":
        return _const(tree[1])
    if kind == "not":
        return f"(not {_source(tree[1], keys, slots, read)})"
    if kind in ("and", "or"):
        return "(" + f" {kind} ".join(_source(t, keys, slots, read) for t in tree[1:]) + ")"
    if kind == "cmp" and tree[1] in _OPS:
        return f"({_source(tree[2], keys, slots, read)} {tree[1]} {_source(tree[3], keys, slots, read)})"
    if kind == "tuple":
        return "(" + "".join(_source(t, keys, slots, read) + ", " for t in tree[1:]) + ")"
    if kind == "op" and tree[1] in _ARITH:
        return f"({_source(tree[2], keys, slots, read)} {tree[1]} {_source(tree[3], keys, slots, read)})"
    if kind == "str" and tree[1] in _STR_METHODS:
        return f"{_source(tree[2], keys, slots, read)}.{tree[1]}()"
    if kind == "strtest" and tree[1] in _STR_TESTS:  # `x.startswith("lora")` (a tuple: any)
        return f"{_source(tree[2], keys, slots, read)}.{tree[1]}(_tuple({_source(tree[3], keys, slots, read)}))"
    if kind == "platform" and tree[1] in PLATFORM_PROBES:
        return f"({tree[1]!r} in _P)"
    if kind == "cc_major":  # `torch.cuda.get_device_capability()[0]`
        return "_cc_major(_P)"
    if kind == "model" and isinstance(tree[1], str) and model_fact_known(tree[1]):
        return f"_M[{tree[1]!r}]"  # no facts (None) or no such fact: TypeError / KeyError
    if kind == "len":
        return f"_len({_source(tree[1], keys, slots, read)})"
    if kind == "conv" and tree[1] in ("int", "float"):  # `int(x)`: ValueError when it is not
        return f"_{tree[1]}({_source(tree[2], keys, slots, read)})"
    if kind == "set":  # `set(x)`, `{"a", "b"}`
        return f"_set({_source(tree[1], keys, slots, read)})"
    if kind == "connector":  # `parse_connector_type(path) == ConnectorType.X`
        return f"_connector({_source(tree[1], keys, slots, read)})"
    if kind == "if":  # `body if test else orelse`
        return (f"({_source(tree[2], keys, slots, read)} if {_source(tree[1], keys, slots, read)} "
                f"else {_source(tree[3], keys, slots, read)})")
    if kind == "index" and isinstance(tree[2], int) and not isinstance(tree[2], bool):
        return f"{_source(tree[1], keys, slots, read)}[{tree[2]}]"
    if kind in ("any", "all"):  # `any(<elt> for <each> in <iterable>)`, not nested
        return (f"{kind}({_source(tree[2], keys, slots, read)} "
                f"for _each in {_source(tree[1], keys, slots, read)})")
    if kind == "each":  # the loop variable of `any(...)`
        return "_each"
    if (kind == "env" and len(tree) == 5 and isinstance(tree[1], str) and isinstance(tree[2], list)
            and tree[2] and tree[2][0] in _ENV_KINDS and (tree[4] is None
                                                          or isinstance(tree[4], str))):
        # the launch's environment `_V` (`_env`: the release's parsing, its default when unset)
        return f"_env(_V, {tree[1]!r}, {_const(tree[2])}, {_const(tree[3])}, {tree[4]!r})"
    if kind == "envset" and isinstance(tree[1], str):
        return f"({tree[1]!r} in _V)"
    if kind == "get" and isinstance(tree[2], str):  # `config.get("key", default)`
        return (f"_get({_source(tree[1], keys, slots, read)}, {tree[2]!r}, "
                f"{_source(tree[3], keys, slots, read)})")
    if kind == "dict":  # `{"qwen25": "qwen"}`: [key, value] pairs of trees
        return "{" + "".join(f"{_source(k, keys, slots, read)}: {_source(v, keys, slots, read)}, "
                             for k, v in tree[1:]) + "}"
    if kind == "item":  # `aliases[cfg.flag]` (a missing key: KeyError, caught as not holding)
        return f"{_source(tree[1], keys, slots, read)}[{_source(tree[2], keys, slots, read)}]"
    raise ValueError(f"not a condition node: {tree!r}")


def _cost(tree: Any) -> int:
    """2 for a subtree with a method call, 1 with a platform probe, else 0."""
    if not isinstance(tree, list) or not tree:
        return 0
    if tree[0] in ("str", "strtest", "len", "connector", "set", "env", "any", "all", "conv",
                   "get"):
        return 2
    if tree[0] in ("platform", "model", "if", "index", "envset", "cc_major"):
        return 1
    return max((_cost(t) for t in tree[1:]), default=0)


def _cheap_first(tree: Sequence[Any]) -> Sequence[Any]:
    """A top-level conjunction flattened, its plain flag tests first: whether it holds does not
    depend on the order (a conjunct that raises counts as not holding either way), and most
    sites then stop at their first, falsy, flag."""
    if tree[0] != "and":
        return tree
    parts: list[Any] = []
    for part in tree[1:]:
        parts.extend(_cheap_first(part)[1:] if part[0] == "and" else [part])
    return ["and", *sorted(parts, key=_cost)]


ConditionSpec = tuple[Sequence[Any], Mapping[str, Any], Mapping[str, str] | None, bool]


def compile_conditions(specs: Sequence[ConditionSpec], *, cached: bool = True,
                       ) -> list[Callable[..., Any]]:
    """Many conditions (tree, defaults, keys, value) compiled in one go, each a function of
    (values by name, platform probes that hold[, model facts[, the launch's environment]]): a
    flag missing from the values takes its default. (`value`: the expression's value, not its truth: a replayed write's right-hand
    side.) One `compile` for a release's hundreds of tests, kept between processes
    (`codecache`), keeps a cold `check` fast."""
    if not specs:
        return []
    scope: dict[str, Any] = {"_len": len, "_connector": _connector, "_set": frozenset,
                             "_tuple": _tuple,
                             "_cc_major": _cc_major, "_get": _get,
                             "_int": int, "_float": float,
                             "_env": _env, "_NOENV": NO_ENV,
                             "__builtins__": {"bool": bool, "any": any, "all": all}}
    lines = []
    for number, (tree, defaults, keys, value) in enumerate(specs):
        slots: dict[str, int] = {}
        text = _source(tree, keys or {}, slots)
        scope[f"_D{number}"] = tuple(defaults.get(name) for name in slots)
        text = text if value else f"bool({text})"
        lines += [f"def _t{number}(a, _P, _M=None, _V=_NOENV):", f"    _D = _D{number}",
                  "    _g = a.get",
                  f"    return {text}"]
    text = "\n".join(lines) + "\n"
    exec(compile_cached(text, "<R-ARG-SITE>") if cached else compile(text, "<R-ARG-SITE>", "exec"),
         scope)
    return [scope[f"_t{number}"] for number in range(len(specs))]


def compile_condition(tree: Sequence[Any], defaults: Mapping[str, Any],
                      keys: Mapping[str, str] | None = None, *, value: bool = False,
                      ) -> Callable[..., Any]:
    """One condition as a function of (values by name, platform probes that hold, the model's
    facts or None) (see `compile_conditions`)."""
    return compile_conditions([(tree, defaults, keys, value)], cached=False)[0]


@dataclass(frozen=True)
class GenericSite:
    """One site of the release data, ready to report."""

    index: int
    where: str
    function: str
    stage: str
    seq: int
    exception: str
    bare: bool
    flags: tuple[str, ...]  # canonical names of the flags it reads
    dests: tuple[str, ...]  # the same flags as the release spells them
    condition: Any
    defaults: Mapping[str, Any]
    message: tuple[Any, ...] | None
    source: str
    resolved: bool  # reads a field SGLang rewrites before it (evaluated at its step)
    # architectures whose model overrides may rewrite a field it reads: not reported for those
    # models, nor when the model's architecture is unknown
    unknown_archs: frozenset[str] = frozenset()
    # the same for overrides that rewrite it only when a condition holds: (architectures, the
    # condition tree, its flags' defaults, their canonical names); not reported when it holds
    # on the values as typed or as they stand at the site (or cannot be evaluated)
    unknown_if: tuple[Scope, ...] = ()
    # packages it assumes missing (`try: import m except ImportError: raise`), module -> the
    # extra of the wheel that installs it: the site holds on a plain install only
    optional: Mapping[str, str] | None = None
    # the environment variables its condition reads (`["env", ...]`, `["envset", ...]`)
    env: tuple[str, ...] = ()
    # those the replayed writes before it read to set a field it reads (`place`)
    fed_env: tuple[str, ...] = ()

    @cached_property
    def test(self) -> Test:
        """Its condition alone as a function (`culprits` tries the flags one by one)."""
        return compile_condition(self.condition, self.defaults,
                                 dict(zip(self.dests, self.flags, strict=True)))


@dataclass(frozen=True)
class GenericWrite:
    """A write `x.field = value` under a readable path, replayed where it stands. Of a field
    the engine does not resolve: for the sites after it (a value the data does not hold makes
    the field unknown, and the sites reading it are not reported). Of a field it resolves
    (`resolved`; the extractor keeps only those over fields it does not resolve, so the write
    holds the same on either side of the engine's steps): into the engine's values."""

    field: str  # canonical name
    seq: int
    flags: tuple[str, ...]  # canonical names of the fields it reads
    condition: Any  # when SGLang writes it
    value_tree: Any  # what it writes (None: a value the data does not hold)
    defaults: Mapping[str, Any]
    keys: Mapping[str, str]  # release dest -> canonical name
    # a field the engine resolves (`RESOLVED_FIELDS`): the write goes into the engine's own
    # values, which its later steps, the sites and the effective table read
    resolved: bool = False
    # (resolved writes) architectures whose model overrides may rewrite a field its condition
    # reads (always, or under a scope's condition, as `GenericSite.unknown_archs` /
    # `unknown_if`): for those, and for a model of unknown architecture, the engine keeps its
    # own value
    skip_archs: frozenset[str] = frozenset()
    skip_if: tuple[Scope, ...] = ()

    def test(self, a: Mapping[str, Any], platforms: frozenset[str],
             model: Mapping[str, Any] | None = None, env: Mapping[str, Any] = NO_ENV) -> bool:
        """Whether SGLang writes the field on these values (compiled on first use)."""
        return bool(self._compiled[0](a, platforms, model, env))

    def value(self, a: Mapping[str, Any], platforms: frozenset[str],
              model: Mapping[str, Any] | None = None, env: Mapping[str, Any] = NO_ENV) -> Any:
        """The value SGLang writes (`_UNKNOWN` when the data does not hold it)."""
        return self._compiled[1](a, platforms, model, env)

    @cached_property
    def _compiled(self) -> tuple[Callable[..., Any], Callable[..., Any]]:
        # kept on the instance (a frozen dataclass without slots), not in a dict by id()
        test = compile_condition(self.condition, self.defaults, self.keys)
        value = (compile_condition(self.value_tree, self.defaults, self.keys, value=True)
                 if self.value_tree is not None else _unknown_value)
        return test, value


Test = Callable[..., bool]  # (values, platforms[, model facts[, environment]]) -> holds


class _LateTests(Mapping[int, Test]):
    """The own test of each site over resolved fields, by site index, compiled on first use
    (the engine runs them through the generated code of `place`; these serve callers that
    test one site)."""

    def __init__(self, sites: Sequence[GenericSite]) -> None:
        self._sites = {site.index: site for site in sites if site.resolved}
        self._tests: dict[int, Test] | None = None

    def __getitem__(self, index: int) -> Test:
        if self._tests is None:
            specs: list[ConditionSpec] = [
                (s.condition, s.defaults, dict(zip(s.dests, s.flags, strict=True)), False)
                for s in self._sites.values()]
            self._tests = dict(zip(self._sites, compile_conditions(specs), strict=True))
        return self._tests[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self._sites)

    def __len__(self) -> int:
        return len(self._sites)


@dataclass(frozen=True)
class CompiledSites:
    """A release's sites; one function says which of the sites over typed flags hold, and each
    site over resolved fields has its own test (run at its step)."""

    sites: tuple[GenericSite, ...]
    # (values, platforms[, model facts[, the launch's environment]]) -> indices
    holding: Callable[..., list[int]]
    late: Mapping[int, Test]
    writes: tuple[GenericWrite, ...] = ()


def _site_of(index: int, entry: Mapping[str, Any], canonical: Callable[[str], str],
             env: tuple[str, ...] | None = None) -> GenericSite:
    keys = {name: canonical(name) for name in entry["defaults"]}
    return GenericSite(index, entry["where"], entry["function"], entry["stage"],
                       int(entry["seq"]), entry["exception"], bool(entry["bare"]),
                       tuple(keys[n] for n in entry["defaults"]), tuple(entry["defaults"]),
                       entry["condition"], dict(entry["defaults"]),
                       tuple(entry["message"]) if entry["message"] is not None else None,
                       entry["source"], bool(entry.get("resolved")),
                       frozenset(entry.get("unknown_archs", ())),
                       _scopes_of(entry, "unknown_if", canonical),
                       entry.get("optional"),
                       env if env is not None else tuple(env_names(entry["condition"])))


def _scopes_of(entry: Mapping[str, Any], key: str, canonical: Callable[[str], str],
               ) -> tuple[Scope, ...]:
    """An entry's override scopes (`unknown_if` / `skip_if`) as the engine keeps them."""
    return tuple((frozenset(scope["archs"]), scope["condition"], dict(scope["defaults"]),
                  {name: canonical(name) for name in scope["defaults"]})
                 for scope in entry.get(key, ()))


def _write_of(entry: Mapping[str, Any], canonical: Callable[[str], str]) -> GenericWrite:
    keys = {name: canonical(name) for name in entry["defaults"]}
    name = canonical(entry["field"])
    return GenericWrite(name, int(entry["seq"]), tuple(keys.values()), entry["condition"],
                        entry["value"], dict(entry["defaults"]), keys, name in RESOLVED_FIELDS,
                        frozenset(entry.get("skip_archs", ())), _scopes_of(entry, "skip_if",
                                                                          canonical))


def _fed(site: GenericSite, writes: Sequence[tuple[GenericWrite, tuple[str, ...]]],
         ) -> GenericSite:
    """The site with the environment variables read by the replayed writes before it of the
    fields it reads (and of the fields those writes read, and so on). `writes`: each write
    with the variables it reads, latest first."""
    if not site.resolved:
        return site
    fields = set(site.flags)
    found: list[str] = []
    for write, names in writes:  # (a write reads what came before it)
        if write.seq < site.seq and write.field in fields:
            fields.update(write.flags)
            for name in names:
                if name not in found and name not in site.env:
                    found.append(name)
    return replace(site, fed_env=tuple(found)) if found else site


def _holding_source(sites: Sequence[GenericSite], consts: dict[str, Any]) -> list[str]:
    """The sites over flags as typed in one function returning the indices that hold (a site
    whose values SGLang itself would crash on is not reported)."""
    slots: dict[str, int] = {}
    defaults: dict[str, Any] = {}
    lines = ["def _holding(a, _P, _M=None, _V=_NOENV):", "    _g = a.get", "    out = []"]
    for site in sites:
        if site.resolved:
            continue
        for name, value in site.defaults.items():
            defaults.setdefault(name, value)
        text = _source(_cheap_first(site.condition), dict(zip(site.dests, site.flags,
                                                              strict=True)), slots)
        lines += ["    try:", f"        if {text}: out.append({site.index})",
                  "    except _E:", "        pass"]
    lines.append("    return out")
    consts["_D"] = tuple(defaults.get(name) for name in slots)
    return lines


def _scope(consts: Mapping[str, Any]) -> dict[str, Any]:
    return {**consts, "_E": _CAUGHT, "_U": _UNKNOWN, "_S": _SKIPPED, "_len": len,
            "_int": int, "_float": float,
            "_connector": _connector, "_set": frozenset, "_may": _may, "_env": _env,
            "_tuple": _tuple,
            "_cc_major": _cc_major, "_get": _get, "_NOENV": NO_ENV, "__builtins__": {"any": any, "all": all}}


def _tuple(value: Any) -> Any:
    """A prefix list of a `strtest` node as the tuple `str.startswith` takes."""
    return tuple(value) if isinstance(value, list) else value


def _may(test: Callable[[], Any]) -> bool:
    """An override's scope condition (`GenericSite.unknown_if`): holds, or cannot be
    evaluated (then the override may have run)."""
    try:
        return bool(test())
    except _CAUGHT:
        return True


def _unknown_value(a: Mapping[str, Any], platforms: frozenset[str],
                   model: Mapping[str, Any] | None = None, env: Mapping[str, Any] = NO_ENV,
                   ) -> Any:
    """The value of a write SGLang computes in a way the data does not hold: unknown."""
    return _UNKNOWN


@lru_cache(maxsize=256)
def _message_expr(tree_json: str, defaults_json: str,
                  canonical: Callable[[str], str]) -> Callable[..., Any]:
    """A message placeholder's expression compiled (`{"expr": tree}`; cached by its text: the
    same few placeholders come back on every keystroke a site holds on)."""
    defaults = json.loads(defaults_json)
    return compile_condition(json.loads(tree_json), defaults,
                             {name: canonical(name) for name in defaults}, value=True)


def _fill(part: Any, a: Mapping[str, Any], site: GenericSite, canonical: Callable[[str], str],
          model: Mapping[str, Any] | None = None, env: Mapping[str, Any] = NO_ENV,
          platforms: frozenset[str] = frozenset()) -> str:
    if isinstance(part, str):
        return part
    if "expr" in part:  # a value SGLang computes from flags, as the reader could read it
        try:
            compiled = _message_expr(json.dumps(part["expr"]),
                                     json.dumps(part.get("defaults") or {}, sort_keys=True),
                                     canonical)
            value = compiled(a, platforms, model, env)
        except _CAUGHT:
            return str(part.get("text") or "")  # SGLang's own placeholder, as written
        return format_part(value, part)
    if "env" in part:  # `{envs.X.get()}`: the value SGLang reads from the launch's environment
        node = part["env"]
        try:
            value = _env(env, node[1], node[2], node[3], node[4])
        except ValueError:
            value = env.get(node[1])
    elif "model" in part:
        value = (model or {}).get(part["model"])
    else:
        value = a.get(canonical(part["flag"]))
    return format_part(value, part)


def format_part(value: Any, part: Mapping[str, Any]) -> str:
    """A message placeholder's value as SGLang's f-string shows it (`!r` / `!a`, its spec)."""
    conv = part.get("conv")
    shown: Any = repr(value) if conv == "r" else ascii(value) if conv == "a" else value
    try:
        return format(shown, part.get("spec") or "")
    except (TypeError, ValueError):
        return str(shown)


def site_message(site: GenericSite, a: Mapping[str, Any], canonical: Callable[[str], str],
                 model: Mapping[str, Any] | None = None, env: Mapping[str, Any] = NO_ENV,
                 platforms: frozenset[str] = frozenset()) -> str:
    """SGLang's message with the flags' (model facts', environment variables', values computed
    from them) filled in (the statement when not a literal)."""
    if site.message is None:
        return site.source
    return "".join(_fill(part, a, site, canonical, model, env, platforms)
                   for part in site.message)


def _reads_model(tree: Any) -> bool:
    if not isinstance(tree, list) or not tree:
        return False
    return tree[0] == "model" or any(_reads_model(t) for t in tree[1:])


class _ModelView(Mapping[str, Any]):
    """The model facts a site reads; a fact the wizard does not know raises KeyError (the
    site then does not hold)."""

    def __init__(self, facts: ModelFacts) -> None:
        self.facts = facts

    def __getitem__(self, name: str) -> Any:
        facts = self.facts
        if name == "architecture" and facts.architecture is not None:
            return facts.architecture
        if name == "architectures" and facts.architectures:
            return list(facts.architectures)
        if name == "model_type" and facts.config_model_type is not None:
            return facts.config_model_type  # the top-level config's, as `hf_config` has it
        if name.startswith(HAS_KEY) and facts.config_keys is not None:
            return name[len(HAS_KEY):] in facts.config_keys
        if name == "quant_method" and facts.config_keys is not None:
            return facts.checkpoint_quant_method
        if name == "mla" and facts.attention is not None:
            return facts.attention == "MLA"
        if name == "nvfp4_moe_meta" and facts.config_keys is not None:
            return {"hybrid": True} if facts.nvfp4_moe_hybrid else None
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(MODEL_FACTS)

    def __len__(self) -> int:
        return len(MODEL_FACTS)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


def model_values(ctx: Ctx) -> Mapping[str, Any] | None:
    """The model facts sites may read (`MODEL_FACTS`, `has:<key>`), None without facts."""
    return _ModelView(ctx.facts) if ctx.facts is not None else None


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def env_culprits(site: GenericSite, a: Mapping[str, Any], platforms: frozenset[str],
                 model: Mapping[str, Any] | None = None,
                 env: Mapping[str, Any] = NO_ENV) -> list[str]:
    """The environment variables set for the launch that make SGLang take the site's path:
    those whose removal makes it not hold (a fix can unset them)."""
    out = []
    for name in site.env:
        if env.get(name) is None:
            continue
        try:
            holds = site.test(a, platforms, model,
                                     {k: v for k, v in env.items() if k != name})
        except _CAUGHT:
            holds = False
        if not holds:
            out.append(name)
    return out


def culprits(site: GenericSite, a: Mapping[str, Any], platforms: frozenset[str],
             model: Mapping[str, Any] | None = None,
             env: Mapping[str, Any] = NO_ENV) -> list[str]:
    """The site's flags (canonical) whose value set back to the default makes it not hold:
    the flags a fix can drop. The model path is never one (a launch needs it)."""
    test = site.test
    out = []
    for dest, name in zip(site.dests, site.flags, strict=True):
        default = site.defaults.get(dest)
        if name == "model_path" or a.get(name, default) == default:
            continue
        try:
            holds = test({**a, name: default}, platforms, model, env)
        except _CAUGHT:
            holds = False
        if not holds:
            out.append(name)
    return out


def _fixes(site: GenericSite, ctx: Ctx, a: Mapping[str, Any],
           sink: dict[str, tuple[str, ...]] | None = None) -> list[Fix]:
    """Unset each culprit flag that has a profile field (flags typed in extra args get their
    drop fix in `wizard.api`, which knows the extra args; `sink` gets the culprits for it)."""
    out = []
    found = culprits(site, a, platforms_of(ctx), model_values(ctx), ctx.env)
    if sink is not None:
        sink[site.where] = tuple(found)
    for name in found:
        spec = BY_DEST.get(name)
        if spec is not None and ctx.typed.get(name) is not None:
            out.append(Fix(f"Unset {_option(name)}", {spec.path: None}))
    return out


GENERIC = Rule(
    id="R-ARG-SITE",
    title="SGLang refuses this combination of flags",
    severity="error",
    why=(
        "A check in SGLang's argument code over flags as typed (no resolution step rewrites "
        "them first), read from the release's source: the condition, exception and message "
        "are SGLang's own at that file and line."
    ),
    sglang=Raises("resolve"),
    fields=("extra_args",),
    when=lambda ctx, a: False,  # the engine evaluates the release's sites (`holding_findings`)
    message=lambda ctx, a: "",
)


def site_finding(site: GenericSite, ctx: Ctx, a: Args, order: int,
                 canonical: Callable[[str], str],
                 sink: dict[str, tuple[str, ...]] | None = None) -> Finding:
    """The finding of a holding site: SGLang's exception, words and `file:line` (`sink`: its
    culprit flags by `file:line`)."""
    message = site_message(site, a, canonical, model_values(ctx), ctx.env, platforms_of(ctx))
    flags = ", ".join(_option(n) for n in site.flags)
    if site.env:
        flags += (" and " if flags else "") + "the environment variable" + (
            "s " if len(site.env) > 1 else " ") + ", ".join(site.env)
    if _reads_model(site.condition):
        flags += " and the model's config.json"
    stage: Any = site.stage
    finding = Finding(
        rule=GENERIC.id,
        severity=GENERIC.severity,
        title=GENERIC.title,
        message=message or site.source,
        explanation=(f"{GENERIC.why} Here: {site.function} in {site.where} reads {flags}."
                     + _optional_note(site, ctx)),
        fields=GENERIC.fields,
        sglang=SglangRaise(stage, site.exception, site.where, site.bare,
                           site.source if site.bare else message),
        fixes=tuple(_fixes(site, ctx, a, sink)),
        order=order,
    )
    triggers = (env_culprits(site, a, platforms_of(ctx), model_values(ctx), ctx.env)
                if site.env else [])
    return with_env_triggers(finding, triggers, ctx.env)


def with_env_triggers(finding: Finding, names: Sequence[str],
                      env: Mapping[str, Any]) -> Finding:
    """A site's finding whose path the launch's environment takes: the variables (and their
    values) said after SGLang's words, and a fix unsetting each (`names`: variables whose
    removal makes the finding go, `env_culprits` or the engine's re-check)."""
    if not names:
        return finding
    note = (" [SGLang takes this path because the environment sets "
            + ", ".join(f"{name}={env.get(name)}" for name in names) + "]")
    fixes = [Fix(f"Unset the environment variable {name}", {}, env={name: None})
             for name in names]
    return replace(finding, message=finding.message + note, fixes=(*finding.fixes, *fixes))


def _optional_note(site: GenericSite, ctx: Ctx) -> str:
    """What an import probe's site assumes: the package is missing, as on a plain install of
    the release, whose wheel declares it only in an extra. The wizard cannot see the host's
    packages, so it says which install this is and what changes it."""
    if not site.optional:
        return ""
    parts = [f"'{module}' (`pip install \"sglang[{extra}]=={ctx.requested_version}\"`)"
             for module, extra in site.optional.items()]
    return (" SGLang raises this when the package is not installed: a plain `pip install "
            f"sglang=={ctx.requested_version}` does not install {', '.join(parts)}, so this is "
            "what SGLang does there. On a host where it is installed SGLang passes this check; "
            "the wizard cannot see the host's packages.")


@dataclass(frozen=True)
class Placed:
    """A release's compiled sites and, per site, the index of the engine step it goes before;
    `late[i]`: the sites over resolved fields tested before step i and the replayed writes
    applied there, in launch-path order (`(seq, site index, None)` / `(seq, -1, write)`), and
    `runs[i]` the generated function that evaluates them (`_late_source`)."""

    compiled: CompiledSites
    before: tuple[int, ...]
    late: tuple[tuple[tuple[int, int, GenericWrite | None], ...], ...]
    reads_chunked: tuple[bool, ...]
    runs: tuple[Callable[..., list[int]] | None, ...] = ()
    # where the model config may be built, in launch-path order: (seq, the index of the step it
    # goes before, its test; None: always)
    builds: tuple[tuple[int, int, Callable[..., Any] | None], ...] = ()

    def model_config_build(self, a: Mapping[str, Any], platforms: frozenset[str],
                           model: Mapping[str, Any] | None, env: Mapping[str, Any],
                           ) -> tuple[int, int] | None:
        """Where SGLang first builds the model config for these values (its checks run there):
        (the step it goes before, its launch-path position) of the first build whose test
        holds or cannot be evaluated; None where the release holds no builds or none is
        reached."""
        for seq, position, test in self.builds:
            if test is None or _may(partial(test, a, platforms, model, env)):
                return position, seq
        return None

    def late_holding(self, position: int, ctx: Ctx, a: Args, platforms: frozenset[str],
                     replayed: dict[str, Any] | None = None,
                     model: Mapping[str, Any] | None = None) -> list[int]:
        """The sites over resolved fields standing before step `position` that hold now.
        `replayed`: the values of the replayed writes so far (updated here; `_UNKNOWN` for a
        write whose test could not be evaluated, and a site reading such a field is not
        reported). A replayed write of a field the engine resolves goes into `a` itself.
        `model`: `model_values(ctx)` when the caller has it already."""
        run = self.runs[position]
        if run is None:
            return []
        if replayed is None:
            replayed = {}
        unknown = {k for k, v in replayed.items() if v is _UNKNOWN} if replayed else set()
        chunked = chunked_prefill(ctx, a) if self.reads_chunked[position] else None
        if model is None:
            model = model_values(ctx)
        out: list[int] = run(a, replayed, platforms, model, unknown, ctx.arch, chunked, ctx.env)
        return out


def _override_guards(name: str, archs: frozenset[str], scopes: tuple[Scope, ...],
                     reader: Callable[[str], Reader], consts: dict[str, Any]) -> list[str]:
    """The tests under which a model override may have rewritten what an item reads: its
    architecture is one of `archs` (or unknown), or one of `scopes` (architectures, condition on
    the values as typed or as they stand) may hold. Their constants are added to `consts`."""
    guards = []
    if archs:
        consts[f"_A{name}"] = archs
        guards.append(f"(arch is None or arch in _A{name})")
    for number_if, (scope_archs, condition, defaults, keys) in enumerate(scopes):
        scoped = f"{name}_{number_if}"
        scope_slots: dict[str, int] = {}
        merged = _source(condition, keys, scope_slots, reader(scoped))
        typed = _source(condition, keys, scope_slots, _typed_reader(scoped))
        consts[scoped] = tuple(defaults.get(n) for n in scope_slots)
        consts[f"_A{scoped}"] = scope_archs
        guards.append(f"((arch is None or arch in _A{scoped}) and "
                      f"_may(lambda: ({typed}) or ({merged})))")
    return guards


def _typed_reader(name: str) -> Reader:
    """Reads of the engine's values only (a flag as typed, or its default in `name`)."""
    def read(key: str, slot: int) -> str:
        return f"_g({key!r}, {name}[{slot}])"
    return read


def _late_source(number: int, items: Sequence[tuple[int, int, GenericWrite | None]],
                 sites: Sequence[GenericSite], written: frozenset[str], chunked: bool,
                 consts: dict[str, Any]) -> list[str]:
    """One position's sites and writes as straight-line code (a Python loop calling a test
    function per item cost about 1 µs an item, a third of a check on the newest releases).

    `_r(a, t, _P, _M, unk, arch, _C, _V)`: `t` the replayed writes (updated), `unk` the replayed
    fields whose value is unknown, `_C` SGLang's chunked prefill size, `_V` the launch's
    environment. A field some write may
    have replayed is read from `t` first; the engine's values are read with `a.get` as the
    release's default stands for a flag not typed. The defaults and flag sets it reads are added
    to `consts`."""
    lines = [f"def _r{number}(a, t, _P, _M, unk, arch, _C, _V):", "    _g = a.get",
             "    out = []"]

    def reader(name: str) -> Reader:
        def read(key: str, slot: int) -> str:
            plain = ("_C" if chunked and key == "chunked_prefill_size"
                     else f"_g({key!r}, {name}[{slot}])")
            return f"(t[{key!r}] if {key!r} in t else {plain})" if key in written else plain
        read.typed = _typed_reader(name)  # type: ignore[attr-defined]  # (`["typed", flag]`)
        return read

    for item_number, (_seq, index, write) in enumerate(items):
        name = f"_D{number}_{item_number}"
        if write is not None and write.resolved:
            # SGLang's write of a field the engine resolves (over flags it does not): into the
            # engine's values; one it cannot evaluate leaves the engine's own
            if write.value_tree is None:
                continue
            slots: dict[str, int] = {}
            test = _source(write.condition, write.keys, slots, reader(name))
            value = _source(write.value_tree, write.keys, slots, reader(name))
            consts[name] = tuple(write.defaults.get(n) for n in slots)
            consts[f"_F{name}"] = frozenset(write.flags)
            skip = "".join(f"{guard} or " for guard in _override_guards(
                name, write.skip_archs, write.skip_if, reader, consts))
            lines += [f"    if not ({skip}unk and not unk.isdisjoint(_F{name})):", "        try:",
                      f"            _n = ({value}) if ({test}) else _S",
                      "        except _E:", "            _n = _S",
                      "        if _n is not _S:", f"            a[{write.field!r}] = _n"]
            if chunked and write.field == "chunked_prefill_size":
                lines.append("            _C = _n")
            continue
        if write is not None:
            slots = {}
            test = _source(write.condition, write.keys, slots, reader(name))
            value = (_source(write.value_tree, write.keys, slots, reader(name))
                     if write.value_tree is not None else "_U")
            consts[name] = tuple(write.defaults.get(n) for n in slots)
            consts[f"_F{name}"] = frozenset(write.flags)
            lines += [f"    if unk and not unk.isdisjoint(_F{name}):", "        _n = _U",
                      "    else:", "        try:",
                      f"            _n = ({value}) if ({test}) else _S",
                      "        except _E:", "            _n = _U",
                      "    if _n is not _S:", f"        t[{write.field!r}] = _n",
                      "        if _n is _U:", f"            unk.add({write.field!r})",
                      "        else:", f"            unk.discard({write.field!r})"]
            continue
        site = sites[index]
        slots = {}
        text = _source(_cheap_first(site.condition), dict(zip(site.dests, site.flags,
                                                              strict=True)),
                       slots, reader(name))
        consts[name] = tuple(site.defaults.get(n) for n in slots)
        guards = _override_guards(name, site.unknown_archs, site.unknown_if, reader, consts)
        if written.intersection(site.flags):
            consts[f"_F{name}"] = frozenset(site.flags)
            guards.append(f"(unk and not unk.isdisjoint(_F{name}))")
        indent = "    "
        if guards:
            lines.append(f"    if not ({' or '.join(guards)}):")
            indent = "        "
        lines += [f"{indent}try:", f"{indent}    if {text}: out.append({index})",
                  f"{indent}except _E:", f"{indent}    pass"]
    lines.append("    return out")
    return lines


_UNKNOWN = object()  # a replayed field whose value could not be computed
_SKIPPED = object()  # a replayed write whose test does not hold


def with_replayed(a: Args, replayed: Mapping[str, Any]) -> Args:
    """The engine's values with the replayed writes over them (a site's message and fixes read
    the values SGLang has at the site)."""
    if not replayed:
        return a
    out = Args(a)
    out.update({k: v for k, v in replayed.items() if v is not _UNKNOWN})
    return out


def _positions(seqs: Sequence[int | None], targets: Sequence[int]) -> list[int]:
    """For each launch-path position in `targets`: right after the step whose located statement
    is the last before it on SGLang's launch path (the engine's order is SGLang's only where
    witnessed, so the nearest neighbour is the safest anchor); before the first located step
    when none comes earlier. `seqs` are `_anchors`: they rise with the step index, so the last
    anchor below a position is found by bisection."""
    anchors = [(s, i) for i, s in enumerate(seqs) if s is not None]
    keys = [s for s, _i in anchors]
    first = anchors[0][1] if anchors else len(seqs)
    out = []
    for seq in targets:
        k = bisect.bisect_left(keys, seq)
        out.append(anchors[k - 1][1] + 1 if k else first)
    return out


def _anchors(seqs: Sequence[int | None]) -> list[int | None]:
    """The steps' launch-path positions kept as anchors: the longest run of them that rises
    along the engine's order (the order is SGLang's where they agree). A step whose located
    statement stands elsewhere on the path (a shared helper first reached for another purpose:
    the newest releases locate R-DRAFT-CONFIG-READ at the `cached_file(` that reads the target's config
    early, the engine checks the draft among the speculative steps) would pull every site after
    that statement behind it; without it, a site sits between its true neighbours."""
    known = [(i, s) for i, s in enumerate(seqs) if s is not None]
    best: list[int] = []  # best[k]: index into `known` ending the best run of length k+1
    parent: dict[int, int | None] = {}
    for k, (_i, seq) in enumerate(known):
        lo, hi = 0, len(best)
        while lo < hi:
            mid = (lo + hi) // 2
            if known[best[mid]][1] < seq:
                lo = mid + 1
            else:
                hi = mid
        parent[k] = best[lo - 1] if lo else None
        if lo == len(best):
            best.append(k)
        else:
            best[lo] = k
    keep: set[int] = set()
    at = best[-1] if best else None
    while at is not None:
        keep.add(known[at][0])
        at = parent[at]
    return [s if i in keep else None for i, s in enumerate(seqs)]


def place(release: Release, steps: Sequence[object], canonical: Callable[[str], str]) -> Placed:
    """Compile the release's sites and give each the index of the step it is reported before.

    The generated code (the sites over typed flags, and per step the late sites and replayed
    writes) is kept between processes under the release file's digest, this module's and the
    field names' source, and the steps' places: a cold `check` then builds no source text."""
    writes = tuple(_write_of(entry, canonical) for entry in release.generic_writes)
    seqs = _anchors([release.rule_seq.get(step.id) if isinstance(step, Rule) else None
                     for step in steps])
    key = (f"<R-ARG-SITE placed>\0{release.name}\0{release.digest}\0{_generator_digest()}"
           f"\0{seqs!r}")
    cached = load_cached(key) if release.digest else None
    if not (isinstance(cached, tuple) and len(cached) == 3 and isinstance(cached[0], CodeType)
            and isinstance(cached[1], dict) and isinstance(cached[2], list)
            and len(cached[2]) == len(release.generic_sites)):
        cached = None
    if cached is not None:  # the environment variables each site reads, kept with its code
        sites = tuple(
            replace(site, fed_env=fed) if fed else site
            for site, fed in ((_site_of(index, entry, canonical, env), fed)
                              for index, (entry, (env, fed))
                              in enumerate(zip(release.generic_sites, cached[2], strict=True))))
    else:
        latest_first = [(write, tuple(dict.fromkeys(
            (*env_names(write.condition), *env_names(write.value_tree)))))
            for write in sorted(writes, key=lambda w: -w.seq)]
        sites = tuple(_fed(_site_of(index, entry, canonical), latest_first)
                      for index, entry in enumerate(release.generic_sites))
    before = tuple(_positions(seqs, [site.seq for site in sites]))
    late: list[list[tuple[int, int, GenericWrite | None]]] = [[] for _ in range(len(steps) + 1)]
    chunked = [False] * (len(steps) + 1)
    for site in sites:
        if site.resolved:
            late[before[site.index]].append((site.seq, site.index, None))
            chunked[before[site.index]] |= "chunked_prefill_size" in site.flags
    for write, position in zip(writes, _positions(seqs, [w.seq for w in writes]), strict=True):
        late[position].append((write.seq, -1, write))
        chunked[position] |= "chunked_prefill_size" in write.flags
    ordered = tuple(tuple(sorted(x, key=lambda t: (t[0], t[1]))) for x in late)
    if cached is not None:
        code, consts = cached[0], cached[1]
    else:
        consts = {}
        lines = _holding_source(sites, consts)
        written = frozenset(write.field for write in writes if not write.resolved)
        for number, items in enumerate(ordered):
            if items:
                lines += _late_source(number, items, sites, written, chunked[number], consts)
        code = compile("\n".join(lines) + "\n", "<R-ARG-SITE>", "exec")
        if release.digest:
            store_cached(key, (code, consts, [(site.env, site.fed_env) for site in sites]))
    scope = _scope(consts)
    exec(code, scope)
    compiled = CompiledSites(sites, scope["_holding"], _LateTests(sites), writes)
    runs = tuple(scope.get(f"_r{number}") for number in range(len(ordered)))
    return Placed(compiled, before, ordered, tuple(chunked), runs,
                  _builds(release, canonical, seqs))


def _builds(release: Release, canonical: Callable[[str], str], seqs: Sequence[int | None],
            ) -> tuple[tuple[int, int, Callable[..., Any] | None], ...]:
    """The release's model-config builds placed among the steps (`seqs`: their `_anchors`),
    their tests compiled (`Placed.model_config_build`)."""
    entries = release.model_config_builds
    specs = [(entry["condition"], dict(entry["defaults"]),
              {name: canonical(name) for name in entry["defaults"]}, False)
             for entry in entries if entry["condition"] is not None]
    tests = iter(compile_conditions(specs))
    at = [int(entry["seq"]) for entry in entries]
    return tuple((seq, position, next(tests) if entry["condition"] is not None else None)
                 for entry, seq, position in zip(entries, at, _positions(seqs, at), strict=True))


@cache
def _generator_digest() -> str:
    """Of the source that generates the code (this module) and names the fields (`fields`)."""
    digest = hashlib.blake2b(digest_size=16)
    for path in (Path(__file__), Path(fields_module.__file__)):
        digest.update(path.read_bytes())
    return digest.hexdigest()
