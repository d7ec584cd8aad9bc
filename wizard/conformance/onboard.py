"""Onboard an SGLang release: derive its release data from its wheel and review what changed.

`sglang-wizard conformance add-release V` does, in order:

1. builds (or reuses) the release's venv (`venvs.ensure_venv`),
2. dumps its argparse flag table and its `SGLANG_*` environment table with the stdlib runner
   (`wizard/sglang/data/flags-V.json`, `env-V.json`),
3. locates every rule's raising statement in its source by the statement itself
   (`locate.SourceTree`, anchors in `anchors.json`), extracts its architecture lists (the string
   collections most like the known ones) and probes its behaviour switches (`TRAIT_PROBES`),
4. writes `wizard/sglang/releases/data/V.json` and the registry index; a `.postN` whose argument
   code is byte-identical to its base release becomes an alias of it instead,
5. prints a review list: rules not found, fuzzy matches, sites that moved file, traits that came
   from the resolution template instead of a probe, and `assert`/`raise` statements of the
   argument code that no rule covers.

Run the conformance sweep afterwards (`conformance run --version V`) to see agreement.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from wizard.conformance.arg_sites import extract_sites, rule_order
from wizard.conformance.coverage import coverage
from wizard.conformance.locate import ARGUMENT_CODE, HELPER_CODE, Anchor, SourceTree
from wizard.conformance.probes_attention import (
    attention_backend_writes,
    attention_page_rules,
    backend_prefill_defaults,
    constant_keywords,
    declaration,
    field_name,
)
from wizard.conformance.probes_wide import (
    config_read_first,
    deprecated_actions,
    deterministic_inference,
    extra_buffer_linear_backend,
    mis_disables_radix,
    mixed_chunk_off_algorithms,
    moe_runner_platform,
    moe_runner_sm100,
    quantization_methods,
    quantize_and_serve,
    radix_disables_overlap,
    spec_v2_runs_trees,
    trtllm_disables_radix,
)
from wizard.conformance.venvs import RUNNER_PATH, ensure_venv
from wizard.files import write_text
from wizard.sglang import releases
from wizard.sglang.fields import SERVER_ARGS_FIELDS
from wizard.sglang.flags import write_flag_index, write_secret_flags
from wizard.sglang.releases import parse_version, version_key

ANCHORS_PATH = Path(__file__).with_name("anchors.json")
RELEASES_DIR = Path(__file__).resolve().parents[1] / "sglang" / "releases" / "data"
FLAGS_DIR = Path(__file__).resolve().parents[1] / "sglang" / "data"
ARCH_MATCH_MIN = 0.5  # Jaccard similarity for a string collection to count as the named list

# Switches whose template value is the same in both resolution orders (a probe may set them).
_SAME_IN_BOTH_ORDERS: dict[str, Any] = {
    "quantization_compatible": {},
    "hicache_decode_fallback": "none",
    "hicache_decode_sinks": False,
    "fa4_page": {},
    "xpu_page": {},
    "trtllm_mha_gpu_any_backend": False,
    "trtllm_mla_gpu_sm100_only": False,
    "context_len_ci_escape": False,
    "fa3_fp8_e5m2_to_triton": False,
    "deterministic_inference": {},
    "trtllm_disables_radix": [],
    "deprecated_actions": {},
    "mis_disables_radix": False,
    "spec_v2_runs_trees": False,
    "extra_buffer_linear_backend": None,
    "gpt_oss_mxfp4_moe_runner": {},
    "deprecated_store_true": {},
    "quantization_requantize": [],
    "gpt_oss_attention_backends": [],
    "attention_default": "server_args",
    "spec_v2_switch": "env",
    "mla_sm100_default": True,
    "model_config_at_args": [],
}

# Switches with no resolution-order default: a probe of the release's source sets them, and a
# release whose source lacks the branch keeps these empty values (listed for review).
_FOUND_BY_PROBES_ONLY: dict[str, Any] = {
    "ngram_draft_tokens": None,
    "spec_v2_overlap_algorithms": [],
    "quantization_methods": {},
    "quantization_rocm": [],
    "moe_runner_sm100": [],
    "moe_runner_platform": [],
    "radix_disables_overlap": [],
    "hip_attention_default": {},
    "hip_hybrid_spec_disables_radix": False,
    "aiter_mem_fraction": {},
    "hip_gpt_oss_attention": None,
    "nobuf_spec_disables_radix": False,
    "nobuf_spec_disables_radix_archs": [],
    "quantize_and_serve": {},
    "config_read_first": False,
    "attention_page_rules": [],
    "backend_prefill_defaults": {},
    "attention_backend_writes": [],
}

# Behaviour switches whose value follows the resolution order a release uses, unless a probe
# below reads it from the release's own source. Named for what SGLang does.
TEMPLATE_TRAITS: dict[str, dict[str, Any]] = {
    "post_init": {
        "mamba_auto_resolves_no_buffer": True,
        "extra_buffer_check_skips_disabled_radix": False,
        "dflash_disables_overlap": True,
        "ngram_disables_overlap": True,
        "ngram_sets_steps": False,
        "spec_moe_runner_default": "trtllm_to_auto",
        "trtllm_mha_page_sizes": [16, 32, 64],
        "dflash_family_counts_as_topk_one": False,
        "qwen_hybrid_sm100_sets_page": False,
        "qwen_hybrid_sm100_trtllm": True,
        "qwen_hybrid_sm100_overrides_typed": False,
        "mixed_chunk_off_algorithms": ["EAGLE", "EAGLE3", "STANDALONE", "NGRAM", "DFLASH"],
        "trio_skipped_when_adaptive": False,
        "chunked_prefill_24gb": 2048,
        "chunked_prefill_split_by_dp": True,
        "adaptive_needs_explicit_topk_one": True,
        "spec_v1_fallback_for_trees": True,
        "upper_cases_algorithm": False,
        "unknown_algorithm_turns_off": False,
        "hybrid_lists": "split",
        "trtllm_mla_page_rule": True,
        "adaptive_unsupported_flags": [],
        "adaptive_candidate_steps": [],
        "adaptive_steps_check": "none",
        "transformers_sets_rope_scaling": False,
        "sm100_mha_default": "typed_topk",
        "topk_page_backends": ["flashinfer", "fa3"],
        "spec_v2_topk_algorithms": ["EAGLE", "EAGLE3", "STANDALONE"],
        **_SAME_IN_BOTH_ORDERS,
        "small_card_graph_max_bs": [24, 80],
        **_FOUND_BY_PROBES_ONLY,
    },
    "pipeline": {
        "mamba_auto_resolves_no_buffer": False,
        "extra_buffer_check_skips_disabled_radix": True,
        "dflash_disables_overlap": False,
        "ngram_disables_overlap": False,
        "ngram_sets_steps": True,
        "spec_moe_runner_default": "megamoe_to_trtllm",
        "trtllm_mha_page_sizes": [16, 32, 64, 128],
        "dflash_family_counts_as_topk_one": True,
        "qwen_hybrid_sm100_sets_page": True,
        "qwen_hybrid_sm100_trtllm": True,
        "qwen_hybrid_sm100_overrides_typed": False,
        "mixed_chunk_off_algorithms": ["STANDALONE", "NGRAM"],
        "trio_skipped_when_adaptive": True,
        "chunked_prefill_24gb": 4096,
        "chunked_prefill_split_by_dp": False,
        "adaptive_needs_explicit_topk_one": False,
        "spec_v1_fallback_for_trees": False,
        "upper_cases_algorithm": True,
        "unknown_algorithm_turns_off": True,
        "hybrid_lists": "radix",
        "trtllm_mla_page_rule": False,
        "adaptive_unsupported_flags": [],
        "adaptive_candidate_steps": [],
        "adaptive_steps_check": "init",
        "transformers_sets_rope_scaling": True,
        "sm100_mha_default": "typed_topk",
        "topk_page_backends": ["flashinfer", "fa3", "triton"],
        "spec_v2_topk_algorithms": ["EAGLE", "EAGLE3", "STANDALONE"],
        **_SAME_IN_BOTH_ORDERS,
        "small_card_graph_max_bs": [48, 160],
        **_FOUND_BY_PROBES_ONLY,
    },
}


# ------------------------------------------------------------------ probes


def _flag(flags: dict[str, Any], dest: str) -> dict[str, Any] | None:
    for action in flags.get("actions", []):
        if action.get("dest") == dest:
            return dict(action)
    return None


def _resolution(tree: SourceTree) -> str:
    pipeline = tree.files.get("sglang/srt/arg_groups/pipeline.py", "")
    server_args = tree.files.get("sglang/srt/server_args.py", "")
    hooks = ("def run_resolution_pipeline" in pipeline
             or "def _run_resolution_pipeline" in server_args  # its first form (0.5.18)
             or "run_post_process_pass" in server_args
             # the speculative step moved into its hook module (0.5.14)
             or "def _auto_choose_speculative_params"
             in tree.files.get("sglang/srt/arg_groups/speculative_hook.py", ""))
    return "pipeline" if hooks else "post_init"


def _enum_members(tree: SourceTree) -> list[str]:
    text = tree.files.get("sglang/srt/speculative/spec_info.py", "")
    match = re.search(r"class SpeculativeAlgorithm\(.*?\):\n(.*?)\n    (?:@|def )", text, re.S)
    if not match:
        return []
    return [m for m in re.findall(r"^    ([A-Z][A-Z0-9_]*) = ", match.group(1), re.M)
            if m != "NONE"]


def _algorithms(tree: SourceTree, flags: dict[str, Any]) -> tuple[list[str], bool]:
    action = _flag(flags, "speculative_algorithm") or {}
    choices = action.get("choices")
    if choices:
        return [str(c) for c in choices], True
    names = _enum_members(tree)
    if "NEXTN" not in names:
        names.append("NEXTN")  # reserved alias of EAGLE in every registry release
    return names, False


def _string_collections(tree: SourceTree) -> list[tuple[str, frozenset[str]]]:
    """Every list/set/tuple/frozenset literal of architecture-like strings, with its location."""
    found: list[tuple[str, frozenset[str]]] = []
    for rel, module in tree.trees.items():
        for node in ast.walk(module):
            if isinstance(node, ast.List | ast.Set | ast.Tuple):
                values = [e.value for e in node.elts
                          if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if values and len(values) == len(node.elts) and any(
                        re.search(r"For(CausalLM|ConditionalGeneration)", v) for v in values):
                    found.append((f"{rel}:{node.lineno}", frozenset(values)))
    return found


# Where a release names its list, the name decides (the seed similarity is the fallback).
ARCH_LIST_NAMES: dict[str, str] = {
    "mamba_extra_buffer": "_MAMBA_EXTRA_BUFFER_ARCHS",
    "mamba_radix": "_MAMBA_RADIX_CACHE_ARCHS",
}


def _named_collection(tree: SourceTree, name: str) -> tuple[frozenset[str], str] | None:
    """A module-level `NAME = frozenset({...})` / list / set / tuple of strings."""
    for rel, module in tree.trees.items():
        if name not in tree.files[rel]:
            continue
        for node in module.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets):
                values = [n.value for n in ast.walk(node.value)
                          if isinstance(n, ast.Constant) and isinstance(n.value, str)]
                if values:
                    return frozenset(values), f"{rel}:{node.lineno} ({name})"
    return None


def _arch_lists(tree: SourceTree, seeds: dict[str, list[str]]) -> tuple[dict[str, list[str]],
                                                                        dict[str, str]]:
    """For each seed list, the release's most similar architecture collection (Jaccard)."""
    collections = _string_collections(tree)
    archs: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for name, seed in seeds.items():
        named = _named_collection(tree, ARCH_LIST_NAMES[name]) if name in ARCH_LIST_NAMES else None
        if named is not None:
            archs[name], where[name] = sorted(named[0]), named[1]
            continue
        seed_set = set(seed)
        best: tuple[float, str, frozenset[str]] | None = None
        for loc, values in collections:
            score = len(seed_set & values) / len(seed_set | values)
            if best is None or score > best[0]:
                best = (score, loc, values)
        if best is not None and best[0] >= ARCH_MATCH_MIN:
            archs[name] = sorted(best[2])
            where[name] = f"{best[1]} (similarity {best[0]:.2f})"
        else:
            archs[name] = []
            where[name] = "not found"
    return archs, where


def _site_module(tree: SourceTree, site: dict[str, Any] | None,
                 ) -> tuple[str, int, ast.Module] | None:
    """A located site's file, line and parsed module (None: no site, or a file not parsed)."""
    if site is None:
        return None
    rel, _, line = str(site["where"]).rpartition(":")
    module = tree.trees.get(rel)
    if module is None or not line.isdigit():
        return None
    return rel, int(line), module


def _site_in_list(tree: SourceTree, site: dict[str, Any] | None) -> tuple[list[str], str] | None:
    """The list of a located `if model_arch in [...]` statement (the older form of a list that
    is guarded by membership; newer releases exclude with `not in`)."""
    located = _site_module(tree, site)
    if located is None:
        return None
    rel, line, module = located
    for node in ast.walk(module):
        if (isinstance(node, ast.If) and node.lineno == line
                and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1
                and isinstance(node.test.ops[0], ast.In)
                and isinstance(node.test.comparators[0], ast.List | ast.Tuple | ast.Set)):
            values = [e.value for e in node.test.comparators[0].elts
                      if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if values:
                return sorted(values), f"{rel}:{line} (the R-DRAFT-AUTO statement's list)"
    return None


def _enclosing_branch_archs(tree: SourceTree, site: dict[str, Any] | None,
                            ) -> tuple[list[str], str] | None:
    """The architectures of the innermost `if/elif model_arch in [...]` / `== "..."` branch that
    encloses a located statement (older releases inline their extra-buffer checks in the branch
    of the one architecture that supports it)."""
    located = _site_module(tree, site)
    if located is None:
        return None
    rel, line, module = located
    found = _branch_archs_at(module, line)
    if found is None:
        return None
    names, branch_line = found
    return (names, f"{rel}:{branch_line} (the branch of the R-MAMBA-TRACK-INTERVAL "
                   "statement)") if names else None


def _branch_archs_at(module: ast.Module, line: int) -> tuple[list[str], int] | None:
    """The architectures of the innermost `if/elif model_arch in [...]` / `== "..."` branch
    whose body holds `line`, with the branch's line (None: no such branch)."""
    best: tuple[int, ast.Compare] | None = None
    for node in ast.walk(module):
        if not (_is_arch_branch(node) and isinstance(node, ast.If) and node.body):
            continue
        assert isinstance(node.test, ast.Compare)
        first, last = node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno
        if first <= line <= last and (best is None or node.lineno > best[0]):
            best = (node.lineno, node.test)
    if best is None:
        return None
    names = [n.value for n in ast.walk(best[1].comparators[0])
             if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return sorted(names), best[0]


def _text_branch_archs(tree: SourceTree, text: str) -> list[str]:
    """The architectures of the `model_arch` branches holding a string constant that contains
    `text` ([] when one such constant stands outside any such branch: it applies to every
    architecture that reaches it)."""
    archs: set[str] = set()
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and text in node.value):
                continue
            found = _branch_archs_at(module, node.lineno)
            if found is None or not found[0]:
                return []
            archs.update(found[0])
    return sorted(archs)


def _is_arch_branch(node: ast.AST) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "model_arch")


def _own_nodes(statements: list[ast.stmt]) -> list[ast.AST]:
    """Every node under `statements`, except those of nested `model_arch` branches."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        if _is_arch_branch(node):
            continue
        out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def _mamba_branch_archs(tree: SourceTree) -> tuple[set[str], set[str]]:
    """(with, without the extra buffer): the architectures of the `model_arch` branches of
    server_args.py that call `_handle_mamba_radix_cache` with `support_mamba_cache_extra_buffer`
    (without: `=False`, or asserting `not self.enable_mamba_extra_buffer()` in the branch itself;
    branches that turn the mamba cache off count for neither). Calls without the keyword count
    only in releases where some call passes it (later releases decide in a function)."""
    module = tree.trees.get("sglang/srt/server_args.py")
    with_extra: set[str] = set()
    without: set[str] = set()
    keyword_form = False
    for node in ast.walk(module) if module is not None else ():
        if not _is_arch_branch(node):
            continue
        assert isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
        names = {n.value for n in ast.walk(node.test.comparators[0])
                 if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        for inner in _own_nodes(node.body):
            if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr == "_handle_mamba_radix_cache"):
                flags = {k.arg: k.value.value for k in inner.keywords
                         if isinstance(k.value, ast.Constant)}
                keyword_form = keyword_form or "support_mamba_cache_extra_buffer" in flags
                if flags.get("support_mamba_cache") is False:
                    continue
                target = (without if flags.get("support_mamba_cache_extra_buffer") is False
                          else with_extra)
                target.update(names)
            elif (isinstance(inner, ast.Assert) and isinstance(inner.test, ast.UnaryOp)
                  and isinstance(inner.test.op, ast.Not)
                  and "enable_mamba_extra_buffer" in ast.unparse(inner.test)):
                without.update(names)
    return (with_extra if keyword_form else set()), without


def _qwen_sm100_branch_archs(tree: SourceTree) -> tuple[list[str], str] | None:
    """Qwen hybrid architectures of a `model_arch in [...]` / `== "..."` branch that picks the
    attention backend on SM100 (the older, shorter form of the list)."""
    module = tree.trees.get("sglang/srt/server_args.py")
    archs: set[str] = set()
    where = ""
    for node in ast.walk(module) if module is not None else ():
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)):
            continue
        left = node.test.left
        if not (isinstance(left, ast.Name) and left.id == "model_arch"):
            continue
        body = "\n".join(ast.unparse(b) for b in node.body)
        if "is_sm100_supported" not in body or "attention_backend" not in body:
            continue
        names = [n.value for n in ast.walk(node.test.comparators[0])
                 if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        qwen = [n for n in names if n.startswith("Qwen3")]
        if qwen:
            archs.update(qwen)
            where = where or f"sglang/srt/server_args.py:{node.lineno} (SM100 branch)"
    return (sorted(archs), where) if archs else None


def _int_tuple(node: ast.AST) -> list[int] | None:
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
        values = [e.value for e in node.value.elts
                  if isinstance(e, ast.Constant) and isinstance(e.value, int)]
        if len(values) == len(node.value.elts):
            return values
    return None


def auto_params_table(tree: SourceTree) -> dict[str, Any] | None:
    """SGLang's `auto_choose_speculative_params` as data, read from its if/elif chain.

    `{"algorithms": {"STANDALONE": [3, 1, 4]}, "archs": [[[arch, ...], [5, 4, 8]], ...],
    "default": [3, 1, 4]}`: the first matching branch wins, as in the source.
    """
    for rel, module in tree.trees.items():
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") == (
                    "auto_choose_speculative_params"):
                table: dict[str, Any] = {"algorithms": {}, "archs": [], "default": None,
                                         "where": f"{rel}:{node.lineno}"}
                _read_branches(node.body, table)
                return table if table["default"] else None
    return None


def _read_branches(body: list[ast.stmt], table: dict[str, Any]) -> None:
    for stmt in body:
        if isinstance(stmt, ast.If):
            result = next((r for r in map(_int_tuple, stmt.body) if r), None)
            test = stmt.test
            if result and isinstance(test, ast.Compare) and len(test.comparators) == 1:
                right = test.comparators[0]
                if isinstance(test.ops[0], ast.Eq) and isinstance(right, ast.Constant):
                    table["algorithms"].setdefault(str(right.value), result)
                elif isinstance(test.ops[0], ast.In) and isinstance(right, ast.List | ast.Tuple):
                    archs = [e.value for e in right.elts if isinstance(e, ast.Constant)]
                    table["archs"].append([archs, result])
            _read_branches(stmt.orelse, table)
        elif (result := _int_tuple(stmt)) and table["default"] is None:
            table["default"] = result


def _trtllm_pages(tree: SourceTree, site: dict[str, Any] | None) -> list[int] | None:
    located = _site_module(tree, site)
    if located is None:
        return None
    _rel, line, module = located
    for node in ast.walk(module):
        # a located `if (` spanning lines stands at its test's first line
        if isinstance(node, ast.If) and line in (node.lineno, node.test.lineno):
            for inner in ast.walk(node):
                if not isinstance(inner, ast.List | ast.Tuple | ast.Set) or not inner.elts:
                    continue
                values = [e.value for e in inner.elts
                          if isinstance(e, ast.Constant) and isinstance(e.value, int)]
                if len(values) == len(inner.elts):
                    return sorted(values)
    return None


TraitProbe = Callable[[SourceTree, dict[str, Any]], Any]


def _probe_traits(tree: SourceTree, flags: dict[str, Any], sites: dict[str, dict[str, Any]],
                  resolution: str, algorithm_choices: bool) -> tuple[dict[str, Any], dict[str, str]]:
    traits = dict(TEMPLATE_TRAITS[resolution])
    origin = {name: "template" for name in traits}

    def probed(name: str, value: Any, how: str) -> None:
        if value is not None:
            traits[name] = value
            origin[name] = how

    probed("upper_cases_algorithm", not algorithm_choices, "flag table (choices)")
    probed("mamba_auto_resolves_no_buffer", "R-MAMBA-AUTO" in sites, "site of R-MAMBA-AUTO")
    probed("trtllm_mha_page_sizes", _trtllm_pages(tree, sites.get("R-TRTLLM-PAGE")),
           "list in R-TRTLLM-PAGE's statement")
    radix_list = any("_MAMBA_RADIX_CACHE_ARCHS" in text for text in tree.files.values())
    probed("hybrid_lists", "radix" if radix_list else "split", "_MAMBA_RADIX_CACHE_ARCHS")
    probed("trtllm_mla_page_rule", "R-TRTLLM-MLA-PAGE" in sites, "site of R-TRTLLM-MLA-PAGE")
    # Qwen hybrid models on SM100: trtllm_mha where SGLang's default allows it, or always triton.
    picks = any(re.search(r'sm100_default_attn_backend\s*=\s*"trtllm_mha"', text)
                or ("qwen3_5" in rel and "trtllm_mha" in text)
                for rel, text in tree.files.items())
    probed("qwen_hybrid_sm100_trtllm", picks, 'sm100_default_attn_backend = "trtllm_mha"')
    # The first form of the branch overrides even a typed backend with triton on SM100.
    server_args = tree.files.get("sglang/srt/server_args.py", "")
    probed("qwen_hybrid_sm100_overrides_typed",
           bool(re.search(r'if is_sm100_supported\(\):\n\s+self\.attention_backend = "triton"',
                          server_args)),
           "unconditional triton under is_sm100_supported()")
    probed("dflash_family_counts_as_topk_one",
           any("_forces_eagle_topk_one(" in text for text in tree.files.values()),
           "_forces_eagle_topk_one in the default attention backend")
    for name, (value, how) in _adaptive_traits(tree).items():
        probed(name, value, how)
    for name, (value, how) in graph_memory_traits(tree.root).items():
        probed(name, value, how)
    for name, (value, how) in memory_accounting_traits(tree.root).items():
        probed(name, value, how)
    reader, how = config_reader_trait(tree.root)
    probed("config_reader", reader, how)
    swa_rule, _archs, how = hybrid_swa(tree.root)
    probed("hybrid_swa_rule", swa_rule, how)
    # The default attention backend of MHA models on Blackwell: none (flashinfer), trtllm_mha under
    # `is_blackwell() and is_no_spec_infer_or_topk_one(self)`, or (later) only on SM100 with a
    # typed topk; the newer `_get_default_attn_backend` keeps the last form (template).
    block = re.search(r"# MHA architecture(.*?)# MLA architecture", server_args, re.S)
    if block is not None:
        mha = block.group(1)
        probed("sm100_mha_default",
               "never" if "trtllm_mha" not in mha
               else "blackwell_topk_none"
               if re.search(r"is_blackwell\(\)\s+and\s+is_no_spec_infer_or_topk_one\(self\)\s*:", mha)
               else "typed_topk", "the MHA branch of the default attention backend")
    # Who picks the attention backend when none is typed: the argument code (its MHA/MLA default
    # block, 0.5.4.post1+), or the model runner at load time (0.5.1-0.5.4: server_args leaves
    # it None outside a few model branches, and so do the checks that read it).
    probed("attention_default",
           "server_args" if any(re.search(r"# MHA architecture|def _?get_default_attn_backend\(",
                                          text) for text in tree.files.values())
           else "model_runner", "the default attention backend block of the argument code")
    # DeepSeek-style MLA models on SM100 default to trtllm_mla in the argument code (0.5.3.post2
    # on; releases that pick every default there always do), not before (the model runner picks).
    probed("mla_sm100_default",
           traits["attention_default"] == "server_args"
           or any(re.search(r'attention_backend\s*=\s*"trtllm_mla"', text)
                  for text in tree.files.values()),
           'an `attention_backend = "trtllm_mla"` default in the argument code')
    # ROCm (`is_hip()`): the backend the default-attention block picks there for MHA models and
    # for MLA models (aiter only for some per-rank KV head counts, else another backend).
    probed("hip_attention_default", _hip_attention_default(tree),
           "the is_hip() branches of the default attention backend block")
    # 0.5.11-0.5.13: speculative decoding on a hybrid model with radix cache and no_buffer
    # disables the radix cache on ROCm (extra_buffer is unsupported there) instead of refusing.
    probed("hip_hybrid_spec_disables_radix",
           any(re.search(r"if is_hip\(\):\s*\n\s*# On ROCm, extra_buffer is unsupported", text)
               or "with radix cache on ROCm devices" in text for text in tree.files.values()),
           "the is_hip() branch beside the no_buffer speculative ValueError")
    # 0.5.8-0.5.9: the no_buffer branch disables the radix cache for speculative decoding on
    # a hybrid model on every platform (later releases refuse it: R-MAMBA-NOBUF-SPEC).
    probed("nobuf_spec_disables_radix",
           any("is not supported with radix cache yet" in text for text in tree.files.values()),
           "the no_buffer branch's 'not supported with radix cache yet' rewrite")
    # ... only for the architectures of the `model_arch` branch holding it (0.5.8: NemotronH's);
    # [] where it stands in the shared hybrid path (every hybrid architecture).
    probed("nobuf_spec_disables_radix_archs",
           _text_branch_archs(tree, "is not supported with radix cache yet")
           if traits["nobuf_spec_disables_radix"] else [],
           "the model_arch branch around the 'not supported with radix cache yet' rewrite")
    probed("aiter_mem_fraction", _aiter_mem_fraction(tree),
           'the `attention_backend == "aiter"` scaling of mem_fraction_static')
    probed("ngram_draft_tokens", _ngram_draft_tokens(tree),
           "the draft-token count of SGLang's NGRAM handling")
    probed("hip_gpt_oss_attention", _hip_gpt_oss_attention(tree),
           "the is_hip() clause of GPT-OSS's attention backend default")
    probed("model_config_at_args", _model_config_at_args(tree),
           "the ModelConfig constructions of the argument code and the ifs around them")
    # How the EAGLE family gets the overlapped worker (spec v2): `SGLANG_ENABLE_SPEC_V2`
    # (0.5.4.post1-0.5.20), the `--enable-beta-spec` flag (0.5.3.post2-0.5.4), not at all (0.5.1-
    # 0.5.3.post1 disable the overlap scheduler unconditionally), or always (0.5.21+).
    code = "\n".join(tree.files.values())
    probed("spec_v2_switch",
           "flag" if "enable_beta_spec" in code
           else "env" if "SGLANG_ENABLE_SPEC_V2" in code
           else "none" if re.search(r'because of using\s*"\s*"eagle speculative decoding', code)
           else "always", "how the argument code selects spec v2")
    # No overlapped worker (none), or one behind --enable-beta-spec that takes any topk and
    # never falls back (flag): no spec v1 fallback for auto-chosen trees.
    if traits["spec_v2_switch"] in ("none", "flag"):
        probed("spec_v1_fallback_for_trees", False, f"spec_v2_switch {traits['spec_v2_switch']}")
    probed("topk_page_backends", _guarded_backends(tree, sites.get("R-TOPK-PAGE")),
           "the backends R-TOPK-PAGE's condition lets through")
    probed("spec_v2_topk_algorithms", _enclosing_algorithms(tree, sites.get("R-SPEC-V2-TOPK")),
           "the algorithm list of the if around R-SPEC-V2-TOPK's raise")
    probed("spec_v2_overlap_algorithms",
           _enclosing_algorithms(tree, sites.get("R-SPEC-V2-OVERLAP-ON")),
           "the algorithms of the SGLANG_ENABLE_SPEC_V2 if that sets disable_overlap_schedule "
           "= False over a typed --disable-overlap-schedule (R-SPEC-V2-OVERLAP-ON)")
    probed("quantization_compatible", _quantization_compatible(tree, sites.get("R-QUANT-MISMATCH")),
           "compatible_quantization_methods in R-QUANT-MISMATCH's function")
    probed("gpt_oss_mxfp4_moe_runner", _gpt_oss_mxfp4_runner(tree),
           "the MoE runner set beside 'Detected SM1x0 and MXFP4 ... GPT-OSS' logs")
    probed("hicache_decode_fallback", _hicache_decode_fallback(tree),
           "the FlashAttention3 / hierarchical-cache decode fix of the hicache step")
    probed("fa4_page", _fa4_page(tree),
           "the test before 'FA4 backend only supports page size 128'")
    probed("trtllm_mha_gpu_any_backend",
           _raise_tests_backends_around(tree, sites.get("R-TRTLLM-MHA-GPU"), "trtllm_mha"),
           "the if around R-TRTLLM-MHA-GPU's raise: a GPU test alone, under an if naming any "
           "of the three backend fields")
    probed("trtllm_mla_gpu_sm100_only",
           _raise_tests_sm100_only(tree, sites.get("R-TRTLLM-MLA-GPU")),
           "the if around R-TRTLLM-MLA-GPU's raise: is_sm100_supported() alone (SM120 refused)")
    probed("context_len_ci_escape", _else_raise_tests(tree, sites.get("R-CONTEXT-LEN"),
                                                      "is_in_ci()"),
           "the if whose else raises R-CONTEXT-LEN also lets is_in_ci() (SGLANG_IS_IN_CI) through")
    probed("fa3_fp8_e5m2_to_triton", _fa3_e5m2_fallback(tree),
           "`if attention_backend == 'fa3' and kv_cache_dtype == 'fp8_e5m2':` -> triton")
    probed("xpu_page", _xpu_page(tree),
           "the if around 'Intel XPU attention backend ... changing page_size ... to 128'")
    probed("hicache_decode_sinks", _hicache_decode_sinks(tree),
           "has_attention_sinks in the function of that decode fix")
    probed("spec_moe_runner_default", _spec_moe_runner_default(tree),
           "the `speculative_moe_runner_backend is None` branch")
    probed("hicache_before_attention", _calls_before(tree, "_handle_hicache",
                                                     "_handle_attention_backend_compatibility"),
           "the order of the two `self._handle_...()` calls in ServerArgs (False without them)")
    probed("moe_runner_aliases", _moe_runner_aliases(tree),
           "`if cfg.moe_runner_backend != X: return` then declare_resolution(...) (the MoE "
           "runner names that stand for an all-to-all backend, the pipeline's first hook)")
    probed("deprecated_store_true", _deprecated_store_true(tree, flags),
           "DeprecatedStoreTrueAction flags (new_flag from their add_argument)")
    requantize = _named_collection(tree, "REQUANTIZATION_METHODS")
    probed("quantization_requantize", sorted(requantize[0]) if requantize else None,
           "REQUANTIZATION_METHODS (online requantization accepts any checkpoint)")
    probed("gpt_oss_attention_backends",
           _assert_list(tree, sites.get("R-GPT-OSS-ATTENTION"), "supported_backends"),
           "supported_backends before R-GPT-OSS-ATTENTION's assert")
    probed("quantization_methods", quantization_methods(tree.root),
           "QUANTIZATION_METHODS per platform (srt/layers/quantization/__init__.py)")
    probed("quantization_rocm",
           _assert_list(tree, sites.get("R-QUANT-ROCM"), "rocm_supported_quantization"),
           "rocm_supported_quantization before R-QUANT-ROCM's raise")
    probed("moe_runner_platform", moe_runner_platform(tree),
           "`if moe_runner_backend == 'auto' and quantization == Q and <SM probe>:` runners")
    probed("moe_runner_sm100", moe_runner_sm100(tree),
           "the SM100 MoE runner branches of the model-specific step")
    probed("radix_disables_overlap", radix_disables_overlap(tree),
           "model branches that turn the overlap scheduler off while the radix cache is on")
    probed("deprecated_actions", deprecated_actions(tree, flags),
           "every flag of a Deprecated*Action class and the warning that class prints")
    probed("extra_buffer_linear_backend", extra_buffer_linear_backend(tree),
           "the linear_attn_backend supports_mamba_cache_extra_buffer requires")
    probed("spec_v2_runs_trees", spec_v2_runs_trees(tree),
           "_handle_eagle_family without a topk > 1 branch turning the overlap scheduler off")
    probed("trtllm_disables_radix", trtllm_disables_radix(tree),
           "model branches that turn the radix cache off for trtllm_mha on SM100")
    probed("quantize_and_serve", quantize_and_serve(tree),
           "ModelConfig._validate_quantize_and_serve_config: the methods it accepts and the "
           "words of its two refusals")
    probed("attention_page_rules", attention_page_rules(tree),
           "the page sizes each attention backend's block keeps and writes, in source order")
    probed("backend_prefill_defaults", backend_prefill_defaults(tree),
           "the prefill backend a backend's block (or step) sets when none is typed")
    probed("attention_backend_writes", attention_backend_writes(tree),
           "the constants a backend's block writes to fields the engine resolves")
    probed("config_read_first", config_read_first(tree),
           "a step of run_resolution_pipeline reads config.json (get_config) before any step "
           "builds the model config")
    probed("mis_disables_radix", mis_disables_radix(tree),
           "the multi-item scoring step (--enable-mis) turns the radix cache off")
    probed("mixed_chunk_off_algorithms", mixed_chunk_off_algorithms(tree),
           "the per-algorithm handlers of arg_groups/speculative_hook.py that turn mixed chunk "
           "off (all of their algorithms, or those supports_mixed_chunk() leaves out)")
    probed("deterministic_inference", deterministic_inference(tree),
           "_handle_deterministic_inference: where it runs, its fallback backend, the accepted "
           "and radix-keeping backends, the DeepSeek-style architectures")
    transformers = _installed_version(tree.root, "transformers")
    if transformers is not None:
        major = int(re.match(r"\d+", transformers).group(0))  # type: ignore[union-attr]
        probed("transformers_sets_rope_scaling", major >= 5,
               f"transformers {transformers} installed beside it (5+ always sets rope_scaling)")
    return traits, origin


_HIP_TEST = r"(?:is_hip\(\)|_is_hip|get_platform\(\)\.is_hip|current_platform\.is_hip)"
_BACKEND_SET = r'(?:return|(?:self|server_args)\.attention_backend\s*=)\s*"(\w+)"'


def _branch_body(text: str, test: str) -> str | None:
    """The lines of the first `if`/`elif <test>:` branch in `text` (those indented deeper)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s*(?:el)?if\s+" + test + r"\s*:", line):
            indent = len(line) - len(line.lstrip())
            body = []
            for inner in lines[i + 1:]:
                if inner.strip() and len(inner) - len(inner.lstrip()) <= indent:
                    break
                body.append(inner)
            return "\n".join(body)
    return None


def _hip_attention_default(tree: SourceTree) -> dict[str, Any]:
    """The default attention backend on ROCm, from the `is_hip()` branches of the block that
    picks it (between `# MHA architecture` and the end of the `# MLA architecture` branch):
    {"mha": backend, "mla": backend, "mla_heads": [per-rank KV head counts it needs],
    "mla_other": backend otherwise}; where the argument code has no such block (0.5.1-0.5.4), the
    model runner's (it picks the backend at load time; the argument code leaves it None, so the
    effective value stays None and only the memory plan reads it); {} where neither has one."""
    return _hip_backend_block(tree.files.values()) or _hip_backend_block(
        [_model_runner_text(tree.root)])


def _model_runner_text(root: Path) -> str:
    """The model runner's source (0.5.1-0.5.4 pick the default attention backend and apply
    aiter's mem-fraction step there, at load time, instead of in the argument code)."""
    path = root / "sglang" / "srt" / "model_executor" / "model_runner.py"
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def _hip_backend_block(texts: Any) -> dict[str, Any]:
    """`_hip_attention_default` over some sources: the first with the MHA/MLA default block."""
    for text in texts:
        start = text.find("# MHA architecture")
        middle = text.find("# MLA architecture", start)
        if start < 0 or middle < 0:
            continue
        mha_block = text[start:middle]
        # the MLA branch ends at the next function or at the logged choice
        end = min((i for i in (text.find("\n    def ", middle), text.find("\ndef ", middle),
                               text.find("Attention backend not explicitly specified", middle))
                   if i >= 0), default=len(text))
        mla_block = text[middle:end]
        found: dict[str, Any] = {}
        mha = re.search(_HIP_TEST + r"\s*:\s*\n\s*" + _BACKEND_SET, mha_block)
        if mha:
            found["mha"] = mha.group(1)
        body = _branch_body(mla_block, _HIP_TEST)
        if body is not None:
            heads = [int(n) for n in re.findall(r"head_num\s*==\s*(\d+)", body)]
            backends = re.findall(_BACKEND_SET, body)
            if heads and len(backends) >= 2:
                found.update(mla=backends[0], mla_heads=sorted(heads), mla_other=backends[1])
            elif backends:
                found.update(mla=backends[0], mla_heads=[], mla_other=backends[0])
        if found:
            return found
    return {}


def _aiter_mem_fraction(tree: SourceTree) -> dict[str, Any]:
    """How the aiter backend shrinks the static pool on ROCm: {"above": context length it
    applies beyond, "scale": the factor mem_fraction_static is multiplied by, "honor_env": the
    variable that keeps a typed fraction as it is (None: a typed one is scaled too)}, from the
    argument code or else the model runner (0.5.1-0.5.4 scale it there, at load time); {}
    where neither has the step."""
    for text in [*tree.files.values(), _model_runner_text(tree.root)]:
        for match in re.finditer(r'attention_backend\s*==\s*"aiter"\s*:', text):
            window = text[match.end():match.end() + 2000]
            above = re.match(r"\s*if\s+(?:self\.)?model_config\.context_len\s*>\s*(\d+)\s*:",
                             window)
            scale = re.search(r"mem_fraction_static\s*(?:\*=|=\s*[\w.]+\s*\*)\s*([0-9.]+)", window)
            if above is None or scale is None:
                continue
            honor = re.search(r"envs\.(SGLANG_\w*HONOR\w*)", window[:scale.start()])
            return {"above": int(above.group(1)), "scale": float(scale.group(1)),
                    "honor_env": honor.group(1) if honor else None}
    return {}


_HIP_BACKEND_SET = re.compile(
    r'(?:is_hip\(\)|\.is_hip)\s*:\s*\n\s*(?:self\.|overrides\[")?\w*(?:attention_backend|backend)"?\]?'
    r'\s*=\s*"(\w+)"')


def _hip_gpt_oss_attention(tree: SourceTree) -> str | None:
    """The attention backend GPT-OSS gets on ROCm when none is typed (the `is_hip()` clause of
    its model-specific default, 0.5.10 on: aiter); None where the default has no ROCm clause
    (ROCm then takes its `else`, triton)."""
    for text in tree.files.values():
        for match in re.finditer(r'model_arch in \["GptOssForCausalLM"\]|def _gpt_oss_overrides',
                                 text):
            found = _HIP_BACKEND_SET.search(text[match.end():match.end() + 1500])
            if found:
                return found.group(1)
    return None


_MODEL_CONFIG_BUILDS = ("ModelConfig.from_server_args", "self.get_model_config")
_UNSET_FRACTION = re.compile(r"self\.mem_fraction_static is None")


def _model_config_at_args(tree: SourceTree) -> list[str] | None:
    """Where the argument code first builds the model config (whose `__init__` checks the
    context length and the quantization) when the user typed --mem-fraction-static:
    ["runtime"] where every construction in `server_args.py` sits under `if
    self.mem_fraction_static is None` (a typed fraction skips it; the scheduler's model config
    then fails at start-up), else the steps of `__post_init__` from the first one that builds it
    outside that branch (directly or through the methods it calls) on, in their order: e.g.
    `_handle_hicache`, later than the memory step that builds it for an unset fraction. None
    where `__post_init__` calls no `_handle_*` steps or builds no model config (the hook
    pipeline: the template keeps the order)."""
    module = tree.trees.get("sglang/srt/server_args.py")
    if module is None:
        return None
    cls = next((n for n in module.body
                if isinstance(n, ast.ClassDef) and n.name == "ServerArgs"), None)
    if cls is None:
        return None
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    direct: dict[str, bool] = {}  # method -> builds outside the unset-fraction branch
    calls: dict[str, list[str]] = {}
    any_build = False

    def visit(node: ast.AST, owner: str, under_unset: bool) -> None:
        nonlocal any_build
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in _MODEL_CONFIG_BUILDS and owner != "get_model_config":
                any_build = True
                if not under_unset:
                    direct[owner] = True
            elif name.startswith("self.") and name[5:] in methods:
                calls.setdefault(owner, []).append(name[5:])
        for part, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    visit(child, owner, under_unset or (
                        isinstance(node, ast.If) and part == "body"
                        and _UNSET_FRACTION.fullmatch(ast.unparse(node.test)) is not None))

    for name, method in methods.items():
        visit(method, name, False)
    if not any_build:
        return None

    def builds(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if direct.get(name):
            return True
        return any(callee not in seen and builds(callee, seen | {name})
                   for callee in calls.get(name, ()))

    if not direct:
        return ["runtime"]
    steps = [c for c in calls.get("__post_init__", ()) if c.startswith("_handle_")]
    if not steps or direct.get("__post_init__"):
        return None
    first = next((i for i, step in enumerate(steps) if builds(step)), None)
    return ["runtime"] if first is None else steps[first:]


def _ngram_draft_tokens(tree: SourceTree) -> int | str | None:
    """The draft-token count NGRAM gets when none is typed: the integer SGLang sets as
    `speculative_num_draft_tokens` in its NGRAM handling (a branch testing "NGRAM", or
    `_handle_ngram`, by assignment or `declare_resolution(...=N)`), or the name of the flag it
    copies (`speculative_ngram_max_match_window_size`); None where the release has no NGRAM
    handling."""
    for module in tree.trees.values():
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef) and node.name == "_handle_ngram":
                scope: list[ast.AST] = [node]
            elif isinstance(node, ast.If) and '"NGRAM"' in ast.unparse(node.test).replace(
                    "'", '"'):
                scope = list(node.body)
            else:
                continue
            for part in scope:
                for inner in ast.walk(part):
                    if (isinstance(inner, ast.Assign)
                            and any(ast.unparse(t).endswith("speculative_num_draft_tokens")
                                    for t in inner.targets)):
                        if isinstance(inner.value, ast.Constant) and isinstance(
                                inner.value.value, int):
                            return int(inner.value.value)
                        if isinstance(inner.value, ast.Attribute) and inner.value.attr.startswith(
                                "speculative_ngram_"):
                            return inner.value.attr  # another flag's value (0.5.3-0.5.9)
                    if isinstance(inner, ast.keyword) and inner.arg == (
                            "speculative_num_draft_tokens") and isinstance(
                            inner.value, ast.Constant) and isinstance(inner.value.value, int):
                        return int(inner.value.value)
    return None


def _gpt_oss_mxfp4_runner(tree: SourceTree) -> dict[str, str]:
    """The MoE runner GPT-OSS's MXFP4 checkpoint gets on SM100 / SM120 ({"sm100": ...,
    "sm120": ...}): the string assigned to `moe_runner_backend` in each branch that tests the
    MXFP4 format and a GPU probe and logs about GPT-OSS; the probe says which GPUs
    (`is_sm100_supported()`, `is_sm120_supported()`, or `is_blackwell_supported()`: both)."""
    probes = {"is_sm100_supported": ("sm100",), "is_sm120_supported": ("sm120",),
              "is_blackwell_supported": ("sm100", "sm120"),
              "is_sm100": ("sm100",), "is_sm120": ("sm120",)}  # `get_platform().is_sm100`
    found: dict[str, str] = {}
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not isinstance(node, ast.If) or "mxfp4" not in ast.unparse(node.test).lower():
                continue
            if "GPT-OSS" not in "\n".join(ast.unparse(b) for b in node.body):
                continue
            called = [name for n in ast.walk(node.test)
                      if (name := n.id if isinstance(n, ast.Name) else
                          n.attr if isinstance(n, ast.Attribute) else None) in probes]
            for stmt in node.body:
                target = ast.unparse(stmt.targets[0]) if isinstance(stmt, ast.Assign) else ""
                if (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
                        and re.search(r"(^|[.'\"])moe_runner_backend\b", target)):
                    for probe in called:
                        for gpu in probes[probe]:
                            found.setdefault(gpu, str(stmt.value.value))
    return dict(sorted(found.items()))


def _hicache_decode_fallback(tree: SourceTree) -> str:
    """How the hicache step picks an unset decode backend with the kernel I/O backend: "always"
    (older: flashinfer/triton whatever the backend), "fa3_only" (only when the decode backend
    would be fa3, 0.5.8 on) or "none"."""
    texts = "\n".join(tree.files.values())
    if "FlashAttention3 decode backend is not compatible with hierarchical cache" not in texts:
        return "none"
    # `if effective_decode_backend != "fa3": return` (0.5.10 on) or `if effective_decode_backend
    # == "fa3":` around the fallback (0.5.8-0.5.9): only a decode backend that would be fa3
    return "fa3_only" if re.search(r'effective_decode_backend\s*[!=]=\s*"fa3"', texts) else "always"


def _fa4_page(tree: SourceTree) -> dict[str, Any]:
    """What the `if` before "FA4 backend only supports page size 128" tests: the backend fields
    it compares with "fa4" (0.5.8-0.5.14: only `prefill_attention_backend`; 0.5.15 on: any of
    the three), whether it needs SM100 (`is_sm100_supported()`, not on 0.5.5-0.5.6) and whether
    a draft tree (topk > 1) skips it. {} when the release has no such statement."""
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not isinstance(node, ast.If):
                continue
            if "FA4 backend only supports page size 128" not in "\n".join(
                    ast.unparse(b) for b in node.body):
                continue
            fields = sorted({n.left.attr for n in ast.walk(node.test)
                             if isinstance(n, ast.Compare) and isinstance(n.left, ast.Attribute)
                             and any(isinstance(c, ast.Constant) and c.value == "fa4"
                                     for c in n.comparators)})
            test = ast.unparse(node.test)
            return {"fields": fields, "sm100": bool(re.search(r"\bis_sm100(_supported)?\b", test)),
                    "topk": "speculative_eagle_topk" in test}
    return {}


def _xpu_page(tree: SourceTree) -> dict[str, Any]:
    """The intel_xpu page-size rewrite (page size 128 when the typed one is not supported):
    which backend the release tests ("attention": `attention_backend` as typed, 0.5.4-0.5.10;
    "decode": the decode backend, 0.5.11-0.5.19; "either": prefill or decode, 0.5.20 on), the
    page sizes it keeps, and those it keeps for MLA models. {} when the release has none."""
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not isinstance(node, ast.If):
                continue
            inner = "\n".join(ast.unparse(b) for b in node.body)
            test = ast.unparse(node.test)
            if ("Intel XPU attention backend" not in inner or "intel_xpu" not in test
                    or "128" not in inner or "page_size" not in inner):
                continue
            backends = ("either" if "prefill" in test else "decode" if "decode" in test
                        else "attention")
            mla_if = next((n for n in ast.walk(node) if isinstance(n, ast.If)
                           and "use_mla_backend" in ast.unparse(n.test)), None)
            in_mla = ({id(n) for stmt in mla_if.body for n in ast.walk(stmt)}
                      if mla_if is not None else set())
            sizes = next((lst for n in ast.walk(node) if id(n) not in in_mla
                          and (lst := _int_list(n)) is not None), None)
            if sizes is None:
                continue
            mla = sizes
            for stmt in mla_if.body if mla_if is not None else []:
                for n in ast.walk(stmt):
                    if (lst := _int_list(n)) is not None:
                        mla = [*sizes, *lst] if ".extend(" in ast.unparse(stmt) else lst
            return {"backends": backends, "sizes": sorted(sizes), "mla_sizes": sorted(mla)}
    return {}


def _fa3_e5m2_fallback(tree: SourceTree) -> bool:
    """Whether the release swaps fa3 for triton with an fp8_e5m2 KV cache (FA3 has no e5m2
    kernels; 0.5.5 on): an `if` testing both whose body sets the backend to triton."""
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not isinstance(node, ast.If):
                continue
            test = ast.unparse(node.test)
            if ("attention_backend == 'fa3'" in test and "kv_cache_dtype == 'fp8_e5m2'" in test
                    and "'triton'" in "\n".join(ast.unparse(b) for b in node.body)):
                return True
    return False


def _int_list(node: ast.AST) -> list[int] | None:
    """`node` as a literal list of ints (`[64, 128]`), else None."""
    if isinstance(node, ast.List) and node.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, int) for e in node.elts):
        return [int(e.value) for e in node.elts]  # type: ignore[attr-defined]
    return None


def _hicache_decode_sinks(tree: SourceTree) -> bool:
    """The hicache step's decode fallback keeps flashinfer off models with attention sinks
    (`... and not self.get_model_config().has_attention_sinks` beside it, 0.5.11 on)."""
    for module in tree.trees.values():
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                assigned = {t.id for n in ast.walk(node) if isinstance(n, ast.Assign)
                            for t in n.targets if isinstance(t, ast.Name)}
                if "effective_decode_backend" in assigned and "has_attention_sinks" in names:
                    return True
    return False


def _spec_moe_runner_default(tree: SourceTree) -> str | None:
    """How the release defaults an unset speculative MoE runner from `moe_runner_backend`:
    "none" (it stays None), "trtllm_to_auto" (flashinfer_trtllm -> auto), "megamoe_to_trtllm"
    (flashinfer_megamoe -> flashinfer_trtllm) or "copy"."""
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                    and ast.unparse(node.test).endswith("speculative_moe_runner_backend is None")):
                continue
            body = "\n".join(ast.unparse(b) for b in node.body)
            if "moe_runner_backend" not in body.replace("speculative_moe_runner_backend", ""):
                continue
            if "flashinfer_megamoe" in body:
                return "megamoe_to_trtllm"
            if "flashinfer_trtllm" in body:
                return "trtllm_to_auto"
            return "copy"
    return "none"


def _calls_before(tree: SourceTree, first: str, second: str) -> bool:
    """Whether one function of server_args.py calls `self.<first>()` before `self.<second>()`
    (both as plain statements)."""
    module = tree.trees.get("sglang/srt/server_args.py")
    if module is None:
        return False
    for fn in ast.walk(module):
        if not isinstance(fn, ast.FunctionDef):
            continue
        lines: dict[str, int] = {}
        for stmt in fn.body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
                    and call.func.attr in (first, second)):
                lines.setdefault(call.func.attr, stmt.lineno)
        if first in lines and second in lines:
            return lines[first] < lines[second]
    return False


def _moe_runner_aliases(tree: SourceTree) -> list[dict[str, Any]]:
    """MoE runner names SGLang rewrites at once into other settings (where the release has
    `handle_moe_runner_backend_alias`: `if cfg.moe_runner_backend != "megamoe": return`, then
    `declare_resolution(server_args, "...", moe_runner_backend="auto",
    moe_a2a_backend="megamoe")`): [{"alias", "writes", "where"}], empty when it has none."""
    found: list[dict[str, Any]] = []
    for rel, module in tree.trees.items():
        for fn in ast.walk(module):
            if not isinstance(fn, ast.FunctionDef):
                continue
            alias: str | None = None
            for stmt in fn.body:
                if (isinstance(stmt, ast.If) and len(stmt.body) == 1
                        and isinstance(stmt.body[0], ast.Return) and not stmt.orelse
                        and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1
                        and isinstance(stmt.test.ops[0], ast.NotEq)
                        and isinstance(stmt.test.left, ast.Attribute)
                        and stmt.test.left.attr == "moe_runner_backend"
                        and isinstance(stmt.test.comparators[0], ast.Constant)
                        and isinstance(stmt.test.comparators[0].value, str)):
                    alias = stmt.test.comparators[0].value
                    continue
                call = declaration(stmt) if alias is not None else None
                if call is not None:
                    writes = constant_keywords(call)
                    if "moe_runner_backend" in writes and len(writes) == len(call.keywords):
                        found.append({"alias": alias, "writes": writes,
                                      "where": f"{rel}:{stmt.lineno}"})
    return found


def _deprecated_store_true(tree: SourceTree, flags: dict[str, Any]) -> dict[str, Any] | None:
    """Fields only a `DeprecatedStoreTrueAction` flag sets (so a typed True means the deprecated
    spelling was typed): field -> {"option", "new_flag"} (`new_flag` read from the release's
    `add_argument` call; None when it names none)."""
    actions = flags.get("actions", [])
    if not actions:
        return None
    new_flags: dict[str, str | None] = {}
    for module in tree.trees.values():
        for node in ast.walk(module):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                continue
            words = {k.arg: k.value for k in node.keywords}
            action = words.get("action")
            if not (isinstance(action, ast.Name) and action.id == "DeprecatedStoreTrueAction"):
                continue
            new = words.get("new_flag")
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    new_flags[arg.value] = (str(new.value) if isinstance(new, ast.Constant)
                                            else None)
    out: dict[str, Any] = {}
    for action in actions:
        if action.get("action") != "DeprecatedStoreTrueAction":
            continue
        dest = action["dest"]
        if any(a.get("dest") == dest and a is not action for a in actions):
            continue  # another spelling sets the same field
        option = action["option_strings"][0]
        out[dest] = {"option": option, "new_flag": new_flags.get(option)}
    return dict(sorted(out.items()))


def _enclosing_function(tree: SourceTree, site: dict[str, Any] | None) -> ast.FunctionDef | None:
    """The innermost function that holds a located site's line."""
    located = _site_module(tree, site)
    if located is None:
        return None
    _rel, line, module = located
    best: ast.FunctionDef | None = None
    for node in ast.walk(module):
        if (isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or 0)
                and (best is None or node.lineno > best.lineno)):
            best = node
    return best


def _quantization_compatible(tree: SourceTree, site: dict[str, Any] | None,
                             ) -> dict[str, list[str]] | None:
    """`compatible_quantization_methods` (typed method -> checkpoint methods it accepts) of the
    function that raises the quantization mismatch; {} where the function has no such table."""
    function = _enclosing_function(tree, site)
    if function is None:
        return None
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "compatible_quantization_methods"
                for t in node.targets)):
            try:
                table = ast.literal_eval(node.value)
            except ValueError:
                return None
            return {str(k): sorted(map(str, v)) for k, v in sorted(table.items())}
    return {}


def _assert_list(tree: SourceTree, site: dict[str, Any] | None, name: str) -> list[str] | None:
    """The string list assigned to `name` last before a located assert, in its function."""
    function = _enclosing_function(tree, site)
    located = _site_module(tree, site)
    if function is None or located is None:
        return None
    line = located[1]
    found: tuple[int, list[str]] | None = None
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and node.lineno < line
                and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                and isinstance(node.value, ast.List | ast.Tuple)):
            values = [e.value for e in node.value.elts
                      if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if found is None or node.lineno > found[0]:
                found = (node.lineno, values)
    return found[1] if found is not None else None


def _fa3_default_archs(site: Path) -> tuple[list[str], str] | None:
    """`is_fa3_default_architecture`'s set (the MHA architectures that get fa3 on Hopper), read
    from the release's `utils/common.py` (outside the hashed argument code: a helper it calls)."""
    for rel in ("sglang/srt/utils/common.py", "sglang/srt/utils.py"):
        path = site / rel
        if not path.is_file():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name == "is_fa3_default_architecture":
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Set | ast.List | ast.Tuple) and len(inner.elts) > 2:
                        values = [e.value for e in inner.elts if isinstance(e, ast.Constant)]
                        return sorted(map(str, values)), f"{rel}:{inner.lineno}"
    return None


def _enclosing_algorithms(tree: SourceTree, site: dict[str, Any] | None) -> list[str] | None:
    """The `speculative_algorithm in [...]` list (or `== "..."` name) of the innermost `if` that
    holds a located statement."""
    located = _site_module(tree, site)
    if located is None:
        return None
    _rel, line, module = located
    best: tuple[int, list[str]] | None = None
    for node in ast.walk(module):
        if not isinstance(node, ast.If) or not (
                node.lineno <= line <= (node.end_lineno or node.lineno)):
            continue
        for compare in ast.walk(node.test):
            if not (isinstance(compare, ast.Compare) and isinstance(compare.left, ast.Attribute)
                    and compare.left.attr == "speculative_algorithm"):
                continue
            right = compare.comparators[0]
            if isinstance(compare.ops[0], ast.In) and isinstance(right, ast.List | ast.Tuple
                                                                   | ast.Set):
                names = [str(e.value) for e in right.elts if isinstance(e, ast.Constant)]
            elif isinstance(compare.ops[0], ast.Eq) and isinstance(right, ast.Constant):
                names = [str(right.value)]  # 0.5.3.post2-0.5.6.post2: `== "EAGLE"`
            else:
                continue
            if best is None or node.lineno > best[0]:
                best = (node.lineno, names)
    return best[1] if best is not None else None


def _raise_tests_backends_around(tree: SourceTree, site: dict[str, Any] | None,
                                 backend: str) -> bool:
    """Whether the `if` that raises at a located site tests the GPU alone (`if not
    is_sm100_supported(): raise`) inside an `if` that compares any of the attention backend
    fields with `backend` (0.5.2-0.5.10: `attention_backend == "trtllm_mha" or
    decode_attention_backend == ... or prefill_attention_backend == ...`); False where the raising
    test names the backend itself (the prefill backend only, 0.5.11 on)."""
    inner = _if_raising_at(tree, site, else_branch=False)
    located = _site_module(tree, site)
    if inner is None or located is None:
        return False
    for outer in ast.walk(located[2]):
        if (isinstance(outer, ast.If) and backend in ast.unparse(outer.test)
                and any(stmt is inner for stmt in outer.body)):
            fields = {n.attr for n in ast.walk(outer.test) if isinstance(n, ast.Attribute)}
            return (backend not in ast.unparse(inner.test) and {
                "attention_backend", "decode_attention_backend",
                "prefill_attention_backend"} <= fields)
    return False


def _raise_tests_sm100_only(tree: SourceTree, site: dict[str, Any] | None) -> bool | None:
    """Whether the `if` that raises at a located site tests `is_sm100_supported()` and no other
    Blackwell probe (0.5.1-0.5.4.post3: an RTX PRO 6000's SM120 is refused; later releases test
    `is_blackwell_supported()` / `is_blackwell`); None without the site."""
    guard = _if_raising_at(tree, site, else_branch=False)
    if guard is None:
        return None
    text = ast.unparse(guard.test)
    return "is_sm100_supported" in text and re.search("sm120|blackwell", text) is None


def _if_raising_at(tree: SourceTree, site: dict[str, Any] | None, *, else_branch: bool,
                   ) -> ast.If | None:
    """The `if` whose body (or `else:`) holds the raise of a located site; None without one."""
    located = _site_module(tree, site)
    if located is None:
        return None
    _rel, line, module = located
    for node in ast.walk(module):
        if isinstance(node, ast.If) and any(
                isinstance(b, ast.Raise) and b.lineno <= line <= (b.end_lineno or b.lineno)
                for b in (node.orelse if else_branch else node.body)):
            return node
    return None


def _else_raise_tests(tree: SourceTree, site: dict[str, Any] | None, text: str) -> bool | None:
    """Whether the `if` whose `else:` raises at a located site tests `text` (0.5.3-0.5.6.x's
    context-length check: `if envs.SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN.get() or
    is_in_ci(): warn else: raise`); None without the site."""
    guard = _if_raising_at(tree, site, else_branch=True)
    return None if guard is None else text in ast.unparse(guard.test)


def _guarded_backends(tree: SourceTree, site: dict[str, Any] | None) -> list[str] | None:
    """The attention backends the `if` around a raise lets through (`attention_backend not in
    [...]`, `!= "x"`, or a tuple named in the same function), read from the release's source."""
    located = _site_module(tree, site)
    if located is None:
        return None
    _rel, line, module = located
    for function in ast.walk(module):
        if not isinstance(function, ast.FunctionDef):
            continue
        named = {t.id: node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
                 for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(function):
            if not (isinstance(node, ast.If) and any(
                    isinstance(b, ast.Raise) and b.lineno == line for b in node.body)):
                continue
            for compare in ast.walk(node.test):
                if not (isinstance(compare, ast.Compare) and isinstance(compare.left, ast.Attribute)
                        and compare.left.attr == "attention_backend"):
                    continue
                right = compare.comparators[0]
                if isinstance(right, ast.Name) and right.id in named:
                    right = named[right.id]
                if isinstance(compare.ops[0], ast.NotEq) and isinstance(right, ast.Constant):
                    return [str(right.value)]
                if isinstance(compare.ops[0], ast.NotIn) and isinstance(right, ast.List | ast.Tuple):
                    return [str(e.value) for e in right.elts if isinstance(e, ast.Constant)]
    return None


def _installed_version(site: Path, distribution: str) -> str | None:
    """The version of a distribution installed in a site-packages folder (its dist-info name)."""
    for info in sorted(site.glob(f"{distribution}-*.dist-info")):
        version = info.name[len(distribution) + 1:-len(".dist-info")]
        if re.match(r"\d", version):
            return version
    return None


ADAPTIVE_PARAMS = "sglang/srt/speculative/adaptive_spec_params.py"
# Server-args switches `adaptive_unsupported_reason` may test (each turns adaptive off when true;
# `disable_overlap_schedule` when false).
_ADAPTIVE_SWITCHES = ("enable_dp_attention", "disable_overlap_schedule", "enable_multi_layer_eagle",
                      "enable_two_batch_overlap", "enable_pdmux")


# The conditions under which a release turns its prefill ("piecewise") CUDA graphs off, as the
# names the memory plan evaluates (`wizard.memory`), each with the source text that tests it.
_GRAPH_OFF_CONDITIONS: tuple[tuple[str, str], ...] = (
    ("speculative", r"speculative_algorithm is not None"),
    ("dp_attention", r"enable_dp_attention"),
    ("torch_compile", r"enable_torch_compile"),
    ("pp", r"pp_size\s*>\s*1"),
    ("moe_a2a", r'moe_a2a_backend\s*!=\s*"none"'),
    ("moe_a2a_unvalidated", r"moe_a2a_backend\s+not in"),
    ("multimodal", r"\bis_multimodal\b"),
    ("cpu_offload", r"cpu_offload_gb\s*>\s*0"),
    ("hierarchical_cache", r"enable_hierarchical_cache"),
    ("disaggregation", r'disaggregation_mode\s*!=\s*"null"'),
    ("mla", r"use_mla_backend\("),
    # the model's architecture is on `piecewise_cuda_graph_disabled_model_archs` (release data
    # `archs.prefill_graph_disabled`)
    ("disabled_model", r"is_piecewise_cuda_graph_disabled_model"),
)

# The function that turns the default prefill graph off, per kind of default.
_GRAPH_OFF_FUNCTIONS = {
    "on": "_handle_piecewise_cuda_graph",
    "opt_in": "_handle_piecewise_cuda_graph",
    "tc_piecewise": "_disable_tc_piecewise_cudagraph_if_incompatible",
    "breakable": "_disable_breakable_cudagraph_if_incompatible",
}


def _function_source(files: dict[str, str], name: str) -> tuple[str, str] | None:
    """(source, "file:line") of the first function called `name` (method or module level)."""
    for rel, text in sorted(files.items()):
        match = re.search(rf"^([ \t]*)def _?{name.lstrip('_')}\(", text, re.M)
        if match is None:
            continue
        indent = match.group(1)
        lines = text[match.start():].splitlines()
        body = [lines[0]]
        for line in lines[1:]:
            if line.strip() and not line.startswith(indent + " ") and not line.startswith(
                indent + "\t"
            ):
                break
            body.append(line)
        return "\n".join(body), f"{rel}:{text[:match.start()].count(chr(10)) + 1}"
    return None


def graph_memory_traits(root: Path) -> dict[str, tuple[Any, str]]:
    """How a release counts CUDA graphs in its mem-fraction heuristic (read from its source under
    `root`, the folder holding `sglang/`):

    * `prefill_graph_default`: "opt_in" (`--enable-piecewise-cuda-graph`, 0.5.5-0.5.9), "on"
      (on unless `_handle_piecewise_cuda_graph` turns it off), "tc_piecewise" / "breakable" (the
      default `cuda_graph_config.prefill.backend`), or "none";
    * `prefill_graph_off_when`: the conditions (names of `_GRAPH_OFF_CONDITIONS`) that turn the
      default prefill graph off; "mla_non_dsa" when only MLA without the DSA indexer does;
      "disaggregation_decode" when a decode server drops it (`_apply_cuda_graph_disaggregation_roles`);
    * `prefill_graph_mla_reserve_mib`: the heuristic's MLA term for the prefill graph (1.5 GiB) or 0
      when MLA models count like the others (`len(tokens) * 8`);
    * `graph_reserve_by_role`: the heuristic counts graphs per PD role (`reserve_for_graph_mb`: no
      decode graph on a prefill server, decode activations from the running requests) and adds
      2 GiB of DeepEP buffers where decode graphs run (`reserve_for_deepep_a2a_mb`);
    * `breakable_deepep_reserve_mib`: the extra 1 GiB a breakable prefill graph with DeepEP takes;
    * `vlm_adjust_skips_decode`: a PD decode server skips the VLM headroom;
    * `prefill_graph_off_on_hip`: the graph that runs on ROCm is turned off there (`is_hip()`).
    """
    sglang = root / "sglang" / "srt"
    files: dict[str, str] = {}
    for rel in ("server_args.py", "model_executor/cuda_graph_config.py"):
        path = sglang / rel
        if path.is_file():
            files[f"sglang/srt/{rel}"] = path.read_text(encoding="utf-8", errors="replace")
    groups = sglang / "arg_groups"
    if groups.is_dir():
        for path in sorted(groups.glob("*.py")):
            files[f"sglang/srt/arg_groups/{path.name}"] = path.read_text(
                encoding="utf-8", errors="replace")
    everything = "\n".join(files.values())
    server_args = files.get("sglang/srt/server_args.py", "")
    out: dict[str, tuple[Any, str]] = {}
    config = files.get("sglang/srt/model_executor/cuda_graph_config.py", "")
    if re.search(r"^\s+disable_piecewise_cuda_graph\s*:", server_args, re.M):
        default, how = "on", "ServerArgs.disable_piecewise_cuda_graph"
    elif re.search(r"^\s+enable_piecewise_cuda_graph\s*:", server_args, re.M):
        default, how = "opt_in", "ServerArgs.enable_piecewise_cuda_graph (no disable flag)"
    elif re.search(r"return Backend\.BREAKABLE if is_cuda\(\)", config):
        default, how = "breakable", "default_prefill_backend() in cuda_graph_config.py"
    elif re.search(r"prefill: PhaseConfig = field\(\s*default_factory=lambda: "
                   r"PhaseConfig\(backend=Backend\.TC_PIECEWISE\)", config):
        default, how = "tc_piecewise", "CudaGraphConfig.prefill default in cuda_graph_config.py"
    else:
        default, how = "none", "no piecewise/prefill CUDA graph found"
    out["prefill_graph_default"] = (default, how)
    off: list[str] = []
    where = "none"
    found = _function_source(files, _GRAPH_OFF_FUNCTIONS.get(default, "-"))
    if found is not None:
        source, where = found
        off = [name for name, pattern in _GRAPH_OFF_CONDITIONS if re.search(pattern, source)]
        if "mla" in off and "is_deepseek_dsa" in source:
            off[off.index("mla")] = "mla_non_dsa"
    if "multimodal" in off:
        # a multimodal model keeps the graph when its architecture is on the release's allowlist
        # of the backend (`is_multimodal_*_cuda_graph_supported`; release data
        # `archs.prefill_graph_multimodal_*`)
        for backend in ("breakable", "piecewise"):
            if f"is_multimodal_{backend}_cuda_graph_supported" in source:
                off[off.index("multimodal")] = f"multimodal_unlisted_{backend}"
                break
    if default == "breakable" and re.search(
            r"pp_size\s*>\s*1\s+and\s+cfg\.cuda_graph_config\.prefill\.backend\s*==\s*"
            r"Backend\.BREAKABLE", everything) and "pp" not in off:
        # "Disabling breakable prefill CUDA graph by default for pipeline parallelism"
        off.append("pp")
    if "disabled_model" in off:
        # `is_piecewise_cuda_graph_disabled_model = (...) or is_deepseek_nsa(...)`: DSA models too
        config_path = sglang / "configs" / "model_config.py"
        text = (config_path.read_text(encoding="utf-8", errors="replace")
                if config_path.is_file() else "")
        if re.search(r"is_piecewise_cuda_graph_disabled_model\s*=\s*\([\s\S]{0,200}?"
                     r"\bor\s+is_deepseek_nsa\(", text):
            off.append("disabled_model_dsa")
    roles = _function_source(files, "_apply_cuda_graph_disaggregation_roles")
    if roles is not None and re.search(r'== "decode"[\s\S]*?PREFILL', roles[0]):
        off.append("disaggregation_decode")
        where += f" + {roles[1]}"
    out["prefill_graph_off_when"] = (off, where)
    # A PD prefill server runs without CUDA graphs where the PD handling sets
    # `disable_cuda_graph = True` in its prefill branch (until `_apply_cuda_graph_disaggregation_roles`).
    prefill_off = re.search(
        r'disaggregation_mode == "prefill":(?:(?!\n    (?:el)?if |\n    def |\ndef )[\s\S])'
        r'{0,600}?disable_cuda_graph = True', everything)
    out["prefill_server_disables_graphs"] = (
        bool(prefill_off), "disable_cuda_graph = True in the prefill branch of the PD handling")
    mla = re.search(r"use_mla_backend\([^)]*\)[\s\S]{0,400}?reserved_mem \+= 1\.5 \* 1024",
                    everything)
    out["prefill_graph_mla_reserve_mib"] = (1536 if mla else 0, "the MLA branch of the graph reserve")
    graph_fn = _function_source(files, "reserve_for_graph_mb")
    # (0.5.15 has the per-role terms inline in `_handle_gpu_memory_settings`)
    inline_roles = re.search(r'moe_a2a_backend == "deepep"\s*\)\s*:\s*reserved_mem \+= 2 \* 1024',
                             everything)
    out["graph_reserve_by_role"] = (
        _function_source(files, "reserve_for_deepep_a2a_mb") is not None or bool(inline_roles),
        "reserve_for_deepep_a2a_mb / reserve_for_graph_mb, or the same terms inline",
    )
    bcg = bool(graph_fn and re.search(r"BREAKABLE[\s\S]{0,200}deepep[\s\S]{0,300}1 \* 1024",
                                      graph_fn[0]))
    out["breakable_deepep_reserve_mib"] = (1024 if bcg else 0, "reserve_for_graph_mb")
    # Non-CUDA hardware (ROCm): the auto-off list of the graph that runs there (`tc_piecewise`
    # where CUDA defaults to `breakable`) tests `is_hip()`.
    hip_default = "tc_piecewise" if default == "breakable" else default
    hip_fn = _function_source(files, _GRAPH_OFF_FUNCTIONS.get(hip_default, "-"))
    out["prefill_graph_off_on_hip"] = (
        bool(hip_fn and re.search(r"\bis_hip\(\)", hip_fn[0])),
        hip_fn[1] if hip_fn else "none",
    )
    # The VLM headroom (`adjust_mem_fraction_for_vlm`) is skipped on a PD decode server.
    skips = re.search(r'disaggregation_mode != "decode"[\s\S]{0,200}?adjust_mem_fraction_for_vlm',
                      everything) or re.search(
        r'is_vlm = \([^)]*disaggregation_mode != "decode"', everything)
    out["vlm_adjust_skips_decode"] = (bool(skips), "the condition before adjust_mem_fraction_for_vlm")
    out["prefill_graph_reserve"] = prefill_graph_reserve(root)
    out["fraction_tiers"] = fraction_tiers(root)
    return out


# The names a prefill-graph reserve term reads: the size list (`len(...) * N`) or the max tokens
# (`max_tokens // N`).
_GRAPH_SIZE_LISTS = ("piecewise_cuda_graph_tokens", "bs")
_GRAPH_MAX_TOKENS = ("piecewise_cuda_graph_max_tokens", "max_bs")
_GRAPH_SIZE_GENERATORS = re.compile(
    r"_?generate_(piecewise_cuda_graph_tokens|prefill_cuda_graph_batch_sizes)$")


def _const_int(node: ast.AST) -> int | None:
    """An int constant or constant arithmetic (`1024 + 1`, `10 * 1024`); None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(
            node.value, bool):
        return int(node.value)
    if isinstance(node, ast.BinOp):
        left, right = _const_int(node.left), _const_int(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Mult):
            return left * right
    return None


def _reserved_term(node: ast.AST) -> tuple[str, int] | None:
    """("sizes_times", N) for `reserved_mem += len(<size list>) * N`, ("max_tokens_div", N) for
    `reserved_mem += <max tokens> // N`; None for any other statement."""
    if not (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
            and field_name(node.target) == "reserved_mem" and isinstance(node.value, ast.BinOp)):
        return None
    value = node.value
    factor = _const_int(value.right)
    if factor is None:
        return None
    if isinstance(value.op, ast.FloorDiv) and field_name(value.left) in _GRAPH_MAX_TOKENS:
        return "max_tokens_div", factor
    left = value.left
    if (isinstance(value.op, ast.Mult) and isinstance(left, ast.Call)
            and field_name(left.func) == "len" and len(left.args) == 1
            and field_name(left.args[0]) in _GRAPH_SIZE_LISTS):
        return "sizes_times", factor
    return None


def _is_floor(node: ast.AST) -> bool:
    """`reserved_mem = max(reserved_mem, <constant>)` (the heuristic's 10 GiB floor)."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1
            and field_name(node.targets[0]) == "reserved_mem" and isinstance(node.value, ast.Call)
            and field_name(node.value.func) == "max" and len(node.value.args) == 2
            and field_name(node.value.args[0]) == "reserved_mem"
            and _const_int(node.value.args[1]) is not None)


def _functions(modules: dict[str, ast.Module]) -> Iterator[tuple[str, ast.FunctionDef]]:
    for rel, module in modules.items():
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef):
                yield rel, node


def _graph_sizes(modules: dict[str, ast.Module]) -> list[list[int | None]] | None:
    """The prefill graph's capture sizes as `range` triples ([start, stop, step]; stop None =
    the max tokens + 1), read from `capture_sizes = list(range(...)) + ...` of the generator."""
    for _rel, fn in _functions(modules):
        if not _GRAPH_SIZE_GENERATORS.search(fn.name):
            continue
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Assign) and field_name(node.targets[0]) == "capture_sizes"
                    and isinstance(node.value, ast.BinOp)):
                continue
            parts: list[ast.AST] = []
            stack: list[ast.AST] = [node.value]
            while stack:
                part = stack.pop()
                if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add) and _const_int(
                        part) is None:
                    stack.extend((part.right, part.left))
                else:
                    parts.append(part)
            ranges: list[list[int | None]] = []
            for part in parts:
                inner = part.args[0] if (isinstance(part, ast.Call) and field_name(part.func)
                                         == "list" and part.args) else None
                if not (isinstance(inner, ast.Call) and field_name(inner.func) == "range"
                        and len(inner.args) == 3):
                    return None
                start, stop, step = (_const_int(a) for a in inner.args)
                top = inner.args[1]
                if stop is None and not (isinstance(top, ast.BinOp) and isinstance(top.op, ast.Add)
                                         and field_name(top.left) in _GRAPH_MAX_TOKENS
                                         and _const_int(top.right) == 1):
                    return None
                if start is None or step is None:
                    return None
                ranges.append([start, stop, step])
            return ranges
    return None


def _max_tokens_rules(modules: dict[str, ast.Module]) -> dict[str, Any]:
    """How the prefill graph's max tokens default: "max_tokens" (the flag's class default, or
    "chunked" when SGLang sets it to the chunked prefill size), "mla_max_tokens" (["set", N] /
    ["min", N] with the chunked prefill size, where MLA models get their own), "caps" (what a
    later `min(max_tokens, X)` caps it by: "max_total_tokens", "context_length", "llama-2")."""
    out: dict[str, Any] = {"max_tokens": None, "mla_max_tokens": None, "caps": []}
    server_args = modules.get("sglang/srt/server_args.py")
    if server_args is not None:
        for node in ast.walk(server_args):
            if (isinstance(node, ast.ClassDef) and node.name == "ServerArgs"):
                for item in node.body:
                    if (isinstance(item, ast.AnnAssign) and field_name(item.target)
                            == "piecewise_cuda_graph_max_tokens" and item.value is not None):
                        out["max_tokens"] = _const_int(item.value)

    def sets_max(node: ast.AST) -> bool:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            return False
        target = node.targets[0]
        if not isinstance(target, ast.Attribute):
            return False
        if target.attr == "piecewise_cuda_graph_max_tokens":
            return True
        return target.attr == "max_bs" and "prefill" in (field_name(target.value) or "")

    caps: list[str] = []
    for _rel, fn in _functions(modules):
        for node in ast.walk(fn):
            if isinstance(node, ast.If) and "use_mla_backend" in ast.unparse(node.test):
                mla_branch = node.orelse if isinstance(node.test, ast.UnaryOp) else node.body
                plain_branch = node.body if isinstance(node.test, ast.UnaryOp) else node.orelse
                plain = [s for s in plain_branch if sets_max(s)]
                mla = [s for s in mla_branch if sets_max(s)]
                if not (plain and mla):
                    continue
                assert isinstance(mla[0], ast.Assign)
                value = mla[0].value
                if _const_int(value) is not None:
                    out["mla_max_tokens"] = ["set", _const_int(value)]
                elif isinstance(value, ast.Call) and field_name(value.func) == "min":
                    bound = [_const_int(a) for a in value.args if _const_int(a) is not None]
                    if bound:
                        out["mla_max_tokens"] = ["min", bound[0]]
            if not sets_max(node):
                continue
            assert isinstance(node, ast.Assign)
            value = node.value
            if field_name(value) == "chunked_prefill_size" and out["max_tokens"] is None:
                out["max_tokens"] = "chunked"
            if isinstance(value, ast.Call) and field_name(value.func) == "min":
                for arg in value.args[1:]:
                    name = field_name(arg)
                    if name in ("max_total_tokens", "context_length") and name not in caps:
                        caps.append(name)
                    elif _const_int(arg) is not None and "llama-2" not in caps:
                        caps.append("llama-2")
    out["caps"] = caps
    return out


def _linear_in(expr: ast.expr, name: str) -> tuple[float, float] | None:
    """(constant, slope) of an arithmetic expression over one variable `name` (numbers, + - * /,
    parentheses), or None when it is anything else."""
    allowed = (ast.Expression, ast.BinOp, ast.Constant, ast.Name, ast.Load, ast.Add, ast.Sub,
               ast.Mult, ast.Div, ast.UnaryOp, ast.USub)
    tree = ast.Expression(expr)
    if not all(isinstance(n, allowed) for n in ast.walk(tree)) or any(
            isinstance(n, ast.Name) and n.id != name for n in ast.walk(tree)):
        return None
    code = compile(tree, "<tier>", "eval")
    at0 = float(eval(code, {"__builtins__": {}}, {name: 0}))
    at1 = float(eval(code, {"__builtins__": {}}, {name: 1}))
    return round(at0, 6), round(at1 - at0, 6)


def fraction_tiers(root: Path) -> tuple[dict[str, Any], str]:
    """The older mem-fraction heuristic (0.5.1-0.5.2): `reserved_mem` from a table of GPU-memory
    tiers (`if gpu_mem < N * 1024: reserved_mem = (A + parallel_size / B) * 1024`), then a fixed
    amount for speculative decoding (STANDALONE apart where the release has it) and for DP
    attention. {} where the release sizes the reserve from the chunked prefill instead."""
    path = root / "sglang" / "srt" / "server_args.py"
    if not path.is_file():
        return {}, "no server_args.py"
    try:
        module = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return {}, "server_args.py does not parse"
    for node in ast.walk(module):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for index, stmt in enumerate(body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id == "parallel_size"):
                continue
            tiers: list[list[float | None]] = []
            chain = body[index + 1] if index + 1 < len(body) else None
            while isinstance(chain, ast.If):
                test = chain.test
                bound = (_linear_in(test.comparators[0], "_")
                         if isinstance(test, ast.Compare) and len(test.comparators) == 1
                         and isinstance(test.ops[0], ast.Lt) else None)
                value = _reserved_value(chain.body)
                if bound is None or value is None:
                    return {}, f"an unread tier at server_args.py:{chain.lineno}"
                tiers.append([bound[0], *value])
                rest = chain.orelse
                if len(rest) == 1 and isinstance(rest[0], ast.If):
                    chain = rest[0]
                    continue
                value = _reserved_value(rest)
                if value is None:
                    return {}, f"an unread last tier at server_args.py:{chain.lineno}"
                tiers.append([None, *value])
                chain = None
            if not tiers:
                continue
            out: dict[str, Any] = {"tiers": tiers, "spec_mib": 0, "spec_standalone_mib": None,
                                   "dp_attention_mib": 0,
                                   "site": f"sglang/srt/server_args.py:{stmt.lineno}"}
            for later in body[index + 2:]:
                if not isinstance(later, ast.If):
                    continue
                text = ast.unparse(later.test)
                if "speculative_algorithm is not None" in text:
                    inner = later.body[0] if len(later.body) == 1 else None
                    if isinstance(inner, ast.If) and "STANDALONE" in ast.unparse(inner.test):
                        out["spec_standalone_mib"] = _added(inner.body)
                        out["spec_mib"] = _added(inner.orelse) or 0
                    else:
                        out["spec_mib"] = _added(later.body) or 0
                elif text.endswith("enable_dp_attention"):
                    out["dp_attention_mib"] = _added(later.body) or 0
            return out, out["site"]
    return {}, "no GPU-memory tier table (the reserve is sized from the chunked prefill)"


def _reserved_value(body: list[ast.stmt]) -> tuple[float, float] | None:
    """(MiB, MiB per GPU of tp x pp) of a tier's `reserved_mem = ...` assignment."""
    for stmt in body:
        if (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == "reserved_mem"):
            return _linear_in(stmt.value, "parallel_size")
    return None


def _added(body: list[ast.stmt]) -> int | None:
    """MiB of a `reserved_mem += N * 1024` in `body` (None when there is none)."""
    for stmt in body:
        if (isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name)
                and stmt.target.id == "reserved_mem"):
            value = _linear_in(stmt.value, "_")
            return int(value[0]) if value is not None else None
    return None


def prefill_graph_reserve(root: Path) -> tuple[dict[str, Any], str]:
    """The prefill ("piecewise") CUDA-graph term of the mem-fraction heuristic (read by `ast`
    from `server_args.py` and `arg_groups/*.py` under `root`, the folder holding `sglang/`):

    * "form": "none" (no term), "max_tokens_div" (`reserved_mem += max_tokens // factor`,
      0.5.5.post1-0.5.7) or "sizes_times" (`reserved_mem += len(capture sizes) * factor`);
    * "floor": "before" / "after" the heuristic's `reserved_mem = max(reserved_mem, 10 * 1024)`
      (in the same function, or through the call of the function holding the term);
    * "max_tokens", "mla_max_tokens", "caps": how the max tokens default (`_max_tokens_rules`);
    * "sizes": the capture sizes as `range` triples (`_graph_sizes`), for "sizes_times";
    * "site" / "floor_site": the term's and the floor's file:line.
    """
    srt = root / "sglang" / "srt"
    paths = [srt / "server_args.py"]
    if (srt / "arg_groups").is_dir():
        paths.extend(sorted((srt / "arg_groups").glob("*.py")))
    modules: dict[str, ast.Module] = {}
    for path in paths:
        if path.is_file():
            rel = str(path.relative_to(root))
            modules[rel] = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    none: dict[str, Any] = {"form": "none", "factor": 0, "floor": None, "max_tokens": None,
                            "mla_max_tokens": None, "caps": [], "sizes": [], "site": None,
                            "floor_site": None}
    term: tuple[str, ast.FunctionDef, ast.AugAssign, tuple[str, int]] | None = None
    for rel, fn in _functions(modules):
        for node in ast.walk(fn):
            found = _reserved_term(node)
            if found is not None and isinstance(node, ast.AugAssign):
                term = (rel, fn, node, found)
                break
        if term is not None:
            break
    if term is None:
        return none, "no reserved_mem term for the prefill graph"
    rel, fn, node, (form, factor) = term
    floor: tuple[str, int, int] | None = None  # (file, floor line, line of the term or its call)
    for other_rel, other in _functions(modules):
        floors = [n for n in ast.walk(other) if isinstance(n, ast.Assign) and _is_floor(n)]
        if not floors:
            continue
        if other is fn:
            at = node.lineno
        else:
            calls = [n for n in ast.walk(other) if isinstance(n, ast.Call)
                     and field_name(n.func) == fn.name]
            if not calls:
                continue
            at = calls[0].lineno
        floor = (other_rel, floors[0].lineno, at)
        break
    value = dict(none)
    value.update(_max_tokens_rules(modules))
    value.update(form=form, factor=factor, site=f"{rel}:{node.lineno}",
                 sizes=_graph_sizes(modules) or [])
    how = f"reserved_mem += {ast.unparse(node.value)} ({rel}:{node.lineno}"
    if floor is not None:
        value["floor"] = "before" if floor[2] < floor[1] else "after"
        value["floor_site"] = f"{floor[0]}:{floor[1]}"
        how += f", {value['floor']} the floor at {floor[0]}:{floor[1]}"
    return value, how + ")"


_SMALL_CARD = r"gpu_mem < 35 \* 1024:[^\n]*\n"  # SGLang's 20-35 GiB bracket (A10, L40, 4090)


def memory_accounting_traits(root: Path) -> dict[str, tuple[Any, str]]:
    """How a release sizes memory, read from its source under `root` (the folder holding
    `sglang/`); `wizard.memory` plans with these:

    * `spec_reserve_mib`: the mem-fraction heuristic's speculative term for EAGLE-style drafts
      (`reserved_mem += N * 1024` beside STANDALONE's; 0 when the heuristic has none);
    * `draft_in_static_pool`: the draft weights are counted in the static pool (the KV-cache
      sizing's error says "draft weights are now counted");
    * `draft_head_shared_after_sizing`: the EAGLE / MTP draft's own embedding and head are
      replaced by the target's only after the KV cache is sized (`_draft_head_shared_after_sizing`);
    * `nsa_scaled_cell`: the pool's cell size uses `calculate_mla_kv_cache_dim` (the fp8 NSA
      layout) in `pool_configurator._compute_cell_size`;
    * `chunked_prefill_24gb` / `small_card_graph_max_bs`: the default chunked prefill and decode
      CUDA-graph batch (tp < 4, tp >= 4) of the 20-35 GiB bracket.
    """
    srt = root / "sglang" / "srt"
    paths = [srt / "server_args.py"]
    if (srt / "arg_groups").is_dir():
        paths.extend(sorted((srt / "arg_groups").glob("*.py")))
    args = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in paths if p.is_file())
    out: dict[str, tuple[Any, str]] = {}
    spec = re.search(
        r"reserved_mem \+= 6 \* 1024\s*\n\s*(?:elif self\.speculative_algorithm != \"NGRAM\"|else)"
        r":\s*\n(?:\s*#[^\n]*\n)*\s*reserved_mem \+= (\d+) \* 1024", args) or re.search(
        r"speculative_algorithm is not None:\s*\n(?:\s*#[^\n]*\n)*\s*reserved_mem \+= (\d+) \* 1024",
        args)
    out["spec_reserve_mib"] = (int(spec.group(1)) * 1024 if spec else 0,
                               "the speculative term of the mem-fraction heuristic")
    runner = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in (srt / "model_executor" / "model_runner_kv_cache_mixin.py",
                  srt / "model_executor" / "model_runner.py",
                  srt / "model_executor" / "pool_configurator.py",
                  srt / "mem_cache" / "kv_cache_configurator.py") if p.is_file())
    out["draft_in_static_pool"] = ("draft weights are now counted" in runner,
                                   "the KV-cache sizing's 'draft weights are now counted'")
    out["draft_head_shared_after_sizing"] = (
        _draft_head_shared_after_sizing(srt),
        "EagleDraftWorker.alloc_memory_pool calls init_lm_head (speculative/eagle_worker_v2.py)")
    cell = re.search(r"def _compute_cell_size\([\s\S]*?(?=\n    def |\nclass |\Z)", runner)
    out["nsa_scaled_cell"] = (bool(cell and "calculate_mla_kv_cache_dim" in cell.group(0)),
                              "calculate_mla_kv_cache_dim in _compute_cell_size")
    out["aiter_mha_workspace"] = (
        _aiter_mha_workspace(srt),
        "the MHA workspace_buffer of the aiter attention backend (aiter_backend.py)")
    cached = cached_parameter_archs(srt)  # every models/*.py read once for both traits
    out["aiter_moe_keeps_unshuffled"] = (
        _aiter_moe_keeps_unshuffled(srt, cached),
        "the unquantized MoE's aiter weight shuffle (new Parameter) and the models whose "
        "load_weights caches named_parameters()")
    out["online_fp8_keeps_unquantized"] = (
        online_fp8_keeps_unquantized(srt, cached),
        "new FP8 Parameters in fp8.py's online path and the models caching named_parameters()")
    out["pp_partition_checks"] = (
        pp_partition_checks(srt / "distributed" / "utils.py", root),
        "the raises of get_pp_indices (distributed/utils.py) on its environment variable")
    out["pp_layer_split"] = (
        pp_layer_split(srt / "distributed" / "utils.py"),
        "get_pp_indices (distributed/utils.py) without SGLANG_PP_LAYER_PARTITION")
    chunked = re.search(_SMALL_CARD + r"(?:[^\n]*\n){0,12}?[^\n]*chunked_prefill_size\s*=\s*(\d+)",
                        args)
    if chunked:
        out["chunked_prefill_24gb"] = (int(chunked.group(1)),
                                       "chunked_prefill_size of the gpu_mem < 35 GiB branch")
    graph = re.search(_SMALL_CARD + r"(?:[^\n]*\n){0,16}?[^\n]*max_bs\s*=\s*(\d+)\n"
                      r"[\s\S]{0,120}?max_bs\s*=\s*(\d+)", args)
    if graph:
        out["small_card_graph_max_bs"] = ([int(graph.group(1)), int(graph.group(2))],
                                          "cuda_graph_max_bs of the gpu_mem < 35 GiB branch")
    return out


def _get_pp_indices(path: Path) -> ast.FunctionDef | None:
    """SGLang's `get_pp_indices` in `distributed/utils.py` (`path`), parsed; None without it."""
    if not path.is_file():
        return None
    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    return next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                 and node.name == "get_pp_indices"), None)


def pp_layer_split(path: Path) -> str:
    """How `get_pp_indices` splits the decoder layers over pipeline stages when the layer count
    is not a multiple of the stages: "extra_on_last_stages" (`pp_rank >= pp_size - remainder`
    gets one more layer each), "rest_on_last_stage" (the last stage runs to `num_hidden_layers`,
    all of the remainder), "" where the function is not found."""
    function = _get_pp_indices(path)
    if function is None:
        return ""
    for node in ast.walk(function):
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)
                and node.left.id == "pp_rank" and isinstance(node.ops[0], ast.GtE)
                and isinstance(node.comparators[0], ast.BinOp)
                and isinstance(node.comparators[0].op, ast.Sub)):
            return "extra_on_last_stages"
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "end_layer"
                and isinstance(node.value, ast.Name) and node.value.id == "num_hidden_layers"):
            return "rest_on_last_stage"
    return ""


def pp_partition_checks(path: Path, root: Path) -> dict[str, Any]:
    """How `get_pp_indices` checks the layer partition a launch gives in its environment:
    {"env": the variable `os.getenv` reads, "parse" / "count" / "sum": {"message": the
    expression the `raise ValueError(...)` gives (source text, evaluated by the rule with the
    function's own names), "site": "path:line"}} for the raises under the `except` of the
    parse, `if len(partitions) != pp_size` and `if sum(partitions) != num_hidden_layers`;
    {} where the function or the variable is not found."""
    function = _get_pp_indices(path)
    if function is None:
        return {}
    where = str(path.relative_to(root))
    out: dict[str, Any] = {}
    for node in ast.walk(function):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "getenv" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out["env"] = node.args[0].value
        blocks: list[tuple[str, list[ast.stmt]]] = []
        if isinstance(node, ast.Try):
            blocks += [("parse", handler.body) for handler in node.handlers]
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            left = node.test.left
            if isinstance(left, ast.Call) and isinstance(left.func, ast.Name):
                kind = {"len": "count", "sum": "sum"}.get(left.func.id)
                if kind is not None:
                    blocks.append((kind, node.body))
        for kind, body in blocks:
            for stmt in body:
                if (isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call)
                        and isinstance(stmt.exc.func, ast.Name)
                        and stmt.exc.func.id == "ValueError" and stmt.exc.args):
                    out[kind] = {"message": ast.unparse(stmt.exc.args[0]),
                                 "site": f"{where}:{stmt.lineno}"}
    return out if "env" in out else {}


def _draft_head_shared_after_sizing(srt: Path) -> bool:
    """The EAGLE / MTP draft model builds its own vocabulary-sized `embed_tokens` and `lm_head`
    (unquantized) and gives them up for the target's in `init_lm_head` (`set_embed_and_head`,
    then `empty_cache`). True where that call sits in the draft worker's `alloc_memory_pool`,
    which the scheduler runs after `init_target_memory_pool` has sized the KV cache from the
    free memory (`Scheduler.init_memory_pools`): the two copies are resident while the pool is
    sized and freed only after it. False where `init_lm_head` runs in the worker's `__init__`
    (before the draft's pool is allocated) or the release has no such worker."""
    path = srt / "speculative" / "eagle_worker_v2.py"
    if not path.is_file():
        return False
    text = path.read_text(encoding="utf-8", errors="replace")
    for body in re.findall(r"\n    def alloc_memory_pool\([\s\S]*?(?=\n    def |\nclass |\Z)", text):
        if re.search(r"^\s*self\.init_lm_head\(\)", body, re.M):
            return True
    return False


def _aiter_mha_workspace(srt: Path) -> dict[str, Any]:
    """The aiter backend's paged-decode workspace for MHA models, allocated when the backend
    starts (after the KV pool): `max_bs * num_head * max_num_partitions * head_dim` fp32 values
    plus two fp32 values per (request, head, partition), with `max_num_partitions` = the context
    length in partitions of `_AITER_PARTITION_SIZE_ROCM` tokens: {"partition": that size}; {}
    where the backend has no such buffer."""
    path = srt / "layers" / "attention" / "aiter_backend.py"
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8", errors="replace")
    size = re.search(r"^_AITER_PARTITION_SIZE_ROCM\s*=\s*(\d+)", text, re.M)
    shape = re.search(r"max_bs \* self\.num_head \* self\.max_num_partitions \* self\.head_dim",
                      text)
    return {"partition": int(size.group(1))} if size and shape else {}


def _aiter_moe_keeps_unshuffled(srt: Path, cached: list[str]) -> dict[str, Any]:
    """ROCm with aiter: the unquantized MoE method's `process_weights_after_loading` replaces
    `w13_weight` / `w2_weight` with shuffled copies (`torch.nn.Parameter(shuffle_weight(...))`)
    when `_use_aiter` (its environment variable, e.g. SGLANG_USE_AITER); a model whose
    `load_weights` caches `dict(self.named_parameters())` on itself keeps the unshuffled
    tensors referenced, so the routed experts are held twice. {"env": variable, "archs": the
    EntryClass architectures of those models, `cached`: `cached_parameter_archs`}; {} where the
    shuffle keeps no second copy."""
    unquant = srt / "layers" / "quantization" / "unquant.py"
    if not unquant.is_file():
        return {}
    text = unquant.read_text(encoding="utf-8", errors="replace")
    env = re.search(r'_use_aiter\s*=\s*get_bool_env_var\(\s*"(\w+)"', text)
    shuffle = re.search(r"layer\.w13_weight\s*=\s*torch\.nn\.Parameter\(\s*shuffle_weight\(", text)
    if env is None or shuffle is None:
        return {}
    return {"env": env.group(1), "archs": cached} if cached else {}


def cached_parameter_archs(srt: Path) -> list[str]:
    """The EntryClass architectures whose `load_weights` caches `dict(self.named_parameters())`
    on the model: a parameter that loading replaces later (a new `Parameter`) stays referenced
    there, so its tensor is never freed."""
    archs: set[str] = set()
    for path in sorted((srt / "models").glob("*.py")):
        model = path.read_text(encoding="utf-8", errors="replace")
        if re.search(r"self\.\w+\s*=\s*dict\(self\.named_parameters\(\)\)", model):
            archs |= _entry_classes(model)
    return sorted(archs)


def online_fp8_keeps_unquantized(srt: Path, cached: list[str]) -> list[str]:
    """`--quantization fp8` on an unquantized checkpoint: the FP8 linear and MoE methods load
    the weights in the model's dtype and, in `process_weights_after_loading`, replace them with
    new FP8 `Parameter`s (`layer.weight = Parameter(qweight ...)`, `layer.w13_weight =
    torch.nn.Parameter(w13_weight ...)` under `not is_checkpoint_fp8_serialized`). For the
    architectures `cached` (`cached_parameter_archs`) the unquantized tensors stay held beside
    the FP8 ones: those architectures; [] where the methods quantize in place or none caches."""
    fp8 = srt / "layers" / "quantization" / "fp8.py"
    if not fp8.is_file():
        return []
    text = fp8.read_text(encoding="utf-8", errors="replace")
    online = r"if not self\.(?:quant_config\.)?is_checkpoint_fp8_serialized:[\s\S]{0,2500}?"
    linear = re.search(online + r"layer\.weight = (?:torch\.nn\.)?Parameter\(qweight", text)
    moe = re.search(online + r"layer\.w13_weight = torch\.nn\.Parameter\(w13_weight", text)
    return cached if linear and moe else []


def _entry_classes(model: str) -> set[str]:
    """The architectures a `models/*.py` file registers (`EntryClass = X` or `[X, Y]`)."""
    entry = re.search(r"^EntryClass\s*=\s*(\[[^\]]*\]|\w+)", model, re.M)
    return set(re.findall(r"\w+", entry.group(1))) if entry else set()


def config_reader_trait(root: Path) -> tuple[str, str]:
    """How the release's `--config` YAML reader maps keys to flags: "none" (no reader),
    "dest_keys" (only `store` flags by option and `store_true` flags by their dest's spelling)
    or "option_keys" (every option spelling of any single-value action, `_config_keys`)."""
    found = sorted((root / "sglang" / "srt").rglob("server_args_config_parser.py"))
    if not found:
        return "none", "no server_args_config_parser.py"
    text = found[0].read_text(encoding="utf-8", errors="replace")
    where = str(found[0].relative_to(root))
    if "def _config_keys(" in text:
        return "option_keys", f"_config_keys in {where}"
    return "dest_keys", f"store_true_actions by dest in {where}"


def _string_set(node: ast.AST, names: dict[str, set[str]]) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    if isinstance(node, ast.Name):
        return names.get(node.id, set())
    return set()


def _module_string_collections(root: Path) -> dict[str, set[str]]:
    """Module-level `NAME = [...]` string collections of SGLang's `srt` package, by name."""
    names: dict[str, set[str]] = {}
    for path in sorted((root / "sglang" / "srt").rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "_ARCHS" not in text and "ARCHITECTURES" not in text:
            continue
        try:
            module = ast.parse(text)
        except SyntaxError:
            continue
        for node in module.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)):
                values = _string_set(node.value, {})
                if values:
                    names.setdefault(node.targets[0].id, set()).update(values)
    return names


def _draft_model_branches(module: ast.Module) -> Iterator[tuple[ast.If, list[ast.expr]]]:
    """Every `if is_draft_model and ...:` of a module, with the conjuncts of its test."""
    for node in ast.walk(module):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp)
                and isinstance(node.test.op, ast.And)):
            continue
        values = node.test.values
        if any((isinstance(v, ast.Name) and v.id == "is_draft_model")
               or (isinstance(v, ast.Attribute) and v.attr == "is_draft_model") for v in values):
            yield node, values


def pp_kv_all_layers_archs(root: Path) -> tuple[list[str], str] | None:
    """The architectures (`EntryClass` names of `models/*.py`) whose model class has no
    `start_layer`, itself or from a base class: SGLang's model runner takes
    `getattr(model, "start_layer", 0)` .. `getattr(model, "end_layer", model_num_layers)`, so
    under pipeline parallelism their KV cache is sized for every layer on each stage."""
    folder = root / "sglang" / "srt" / "models"
    if not folder.is_dir():
        return None
    classes: dict[str, tuple[set[str], bool]] = {}
    entries: set[str] = set()
    for path in sorted(folder.glob("*.py")):
        text = path.read_text(encoding="utf-8-sig", errors="replace")
        try:
            module = ast.parse(text)
        except SyntaxError:
            continue  # (a model file this Python cannot parse: its classes are not listed)
        entries |= _entry_classes(text)
        for node in module.body:
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases
                         if isinstance(b, ast.Name | ast.Attribute)}
                has = any(
                    (isinstance(n, ast.FunctionDef) and n.name == "start_layer")
                    or (isinstance(n, ast.Attribute) and n.attr == "start_layer"
                        and isinstance(n.ctx, ast.Store)
                        and isinstance(n.value, ast.Name) and n.value.id == "self")
                    or (isinstance(n, ast.Name) and n.id == "start_layer"
                        and isinstance(n.ctx, ast.Store))
                    for n in ast.walk(node))
                old_bases, old_has = classes.get(node.name, (set(), False))
                classes[node.name] = (old_bases | bases, old_has or has)

    def has_range(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in seen or name not in classes:
            return False
        bases, has = classes[name]
        return has or any(has_range(base, seen | {name}) for base in bases)

    return (sorted(e for e in entries if e in classes and not has_range(e)),
            "EntryClass model classes without start_layer (models/*.py)")


#: Release-data arch lists -> the module-level list of `configs/model_config.py` they are read
#: from: models without a prefill ("piecewise") CUDA graph, and the multimodal models allowed to
#: keep one under the piecewise / the breakable backend.
PREFILL_GRAPH_ARCH_LISTS = {
    "prefill_graph_disabled": "piecewise_cuda_graph_disabled_model_archs",
    "prefill_graph_multimodal_piecewise": "multimodal_piecewise_cuda_graph_supported_model_archs",
    "prefill_graph_multimodal_breakable": "multimodal_breakable_cuda_graph_supported_model_archs",
}


def model_config_arch_list(root: Path, name: str) -> tuple[list[str], str] | None:
    """The architectures on one of SGLang's prefill-graph model lists (`name`, a module-level
    list of `configs/model_config.py`), or None when the release has no such list."""
    path = root / "sglang" / "srt" / "configs" / "model_config.py"
    if not path.is_file():
        return None
    try:
        module = ast.parse(path.read_text(encoding="utf-8-sig", errors="replace"))
    except SyntaxError:
        return None
    for node in module.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.List)
                and any(isinstance(t, ast.Name)
                        and t.id == name
                        for t in node.targets)):
            names = [e.value for e in node.value.elts
                     if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return names, f"sglang/srt/configs/model_config.py:{node.lineno}"
    return None


def offloader_v2_archs(root: Path) -> tuple[list[str], str] | None:
    """The architectures whose model builds its layers with `offloader_kwargs` (the submodule and
    parameter names `--offload-group-size`'s OffloaderV2 moves); other models do not pass them,
    and OffloaderV2's `wrap_modules` needs them. None where no model file passes them."""
    folder = root / "sglang" / "srt" / "models"
    if not folder.is_dir():
        return None
    names: set[str] = set()
    for path in sorted(folder.glob("*.py")):
        text = path.read_text(encoding="utf-8-sig", errors="replace")
        if re.search(r"\boffloader_kwargs\s*=", text):
            names |= _entry_classes(text)
    return (sorted(names), "EntryClass of models/*.py passing offloader_kwargs") if names else None


def mtp_draft_archs(root: Path) -> tuple[list[str], str] | None:
    """The target architectures the draft worker loads with an MTP / NextN class: every
    `if is_draft_model and ...architectures[0] == / in ...` of `configs/model_config.py`
    (`_config_draft_model`), collections named there resolved from SGLang's modules."""
    path = root / "sglang" / "srt" / "configs" / "model_config.py"
    if not path.is_file():
        return None
    module = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    names: dict[str, set[str]] | None = None
    found: set[str] = set()
    for _branch, values in _draft_model_branches(module):
        for value in values:
            if not (isinstance(value, ast.Compare) and len(value.ops) == 1
                    and isinstance(value.ops[0], ast.Eq | ast.In)
                    and isinstance(value.left, ast.Subscript)
                    and isinstance(value.left.value, ast.Attribute)
                    and value.left.value.attr == "architectures"):
                continue
            if names is None and isinstance(value.comparators[0], ast.Name):
                names = _module_string_collections(root)
            found |= _string_set(value.comparators[0], names or {})
    return sorted(found), "is_draft_model branches of configs/model_config.py"


def _draft_class_overrides(module: ast.Module, names: dict[str, set[str]]) -> dict[str, set[str]]:
    """Target architecture -> the draft classes `configs/model_config.py` swaps in for it
    (`if is_draft_model and ...architectures[0] == X: ...architectures[0] = "XNextN"`)."""
    out: dict[str, set[str]] = {}
    for node, values in _draft_model_branches(module):
        targets: set[str] = set()
        for value in values:
            if (isinstance(value, ast.Compare) and len(value.ops) == 1
                    and isinstance(value.left, ast.Subscript)
                    and isinstance(value.left.value, ast.Attribute)
                    and value.left.value.attr == "architectures"):
                targets |= _string_set(value.comparators[0], names)
        classes = {
            sub.value.value
            for statement in node.body for sub in ast.walk(statement)
            if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Constant)
            and isinstance(sub.value.value, str) and len(sub.targets) == 1
            and isinstance(sub.targets[0], ast.Subscript)
            and isinstance(sub.targets[0].value, ast.Attribute)
            and sub.targets[0].value.attr == "architectures"
        }
        for target in targets:
            out.setdefault(target, set()).update(classes)
    return out


def _model_classes(root: Path) -> dict[str, list[tuple[list[str], set[str]]]]:
    """Every class of `sglang/srt/models`: name -> [(base names, the attributes it defines:
    methods, class attributes and `self.X = ...` assignments)] (a name may repeat across files)."""
    classes: dict[str, list[tuple[list[str], set[str]]]] = {}
    for path in sorted((root / "sglang" / "srt" / "models").rglob("*.py")):
        try:
            module = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        for node in module.body:
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [b.id if isinstance(b, ast.Name) else b.attr
                     for b in node.bases if isinstance(b, ast.Name | ast.Attribute)]
            defined: set[str] = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    defined.add(item.name)
                elif isinstance(item, ast.Assign | ast.AnnAssign):
                    for target in (item.targets if isinstance(item, ast.Assign) else [item.target]):
                        if isinstance(target, ast.Name):
                            defined.add(target.id)
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign | ast.AnnAssign):
                    for target in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                                and target.value.id == "self"):
                            defined.add(target.attr)
            classes.setdefault(node.name, []).append((bases, defined))
    return classes


def _class_may_define(classes: dict[str, list[tuple[list[str], set[str]]]], name: str,
                      attribute: str, seen: frozenset[str] = frozenset()) -> bool:
    """`attribute` may exist on class `name` (itself or a base found in the models); an unknown
    class counts as defining it, so only a sure absence is reported."""
    if name in seen:
        return False
    if name not in classes:
        return name not in ("Module", "object")
    return any(attribute in defined
               or any(_class_may_define(classes, base, attribute, seen | {name}) for base in bases)
               for bases, defined in classes[name])


def eagle3_unusable_mtp_archs(root: Path) -> tuple[list[str], str] | None:
    """The targets whose own MTP / NextN draft class cannot serve EAGLE3: the EAGLE3 branch of the
    draft worker calls `model.set_embed(embed)` (unless `load_lm_head_from_target`) and reads
    `model.hot_token_id`, which an MTP class without them does not have (AttributeError after the
    weights load). None when the worker has no such branch."""
    srt = root / "sglang" / "srt"
    config = srt / "configs" / "model_config.py"
    workers = [p for p in sorted((srt / "speculative").glob("*.py"))
               if ".set_embed(" in (text := p.read_text(encoding="utf-8", errors="replace"))
               and "is_eagle3()" in text and ".hot_token_id" in text]
    if not config.is_file() or not workers:
        return None
    module = ast.parse(config.read_text(encoding="utf-8", errors="replace"))
    overrides = _draft_class_overrides(module, _module_string_collections(root))
    classes = _model_classes(root)
    unusable = []
    for target, drafts in overrides.items():
        def usable(cls: str) -> bool:
            embed = (_class_may_define(classes, cls, "set_embed")
                     or _class_may_define(classes, cls, "load_lm_head_from_target"))
            return embed and _class_may_define(classes, cls, "hot_token_id")
        if drafts and not any(usable(cls) for cls in drafts):
            unusable.append(target)
    where = ", ".join(str(p.relative_to(root)) for p in workers)
    return sorted(unusable), f"draft classes of configs/model_config.py without set_embed / hot_token_id ({where})"


def hybrid_swa(root: Path) -> tuple[str, list[str] | None, str]:
    """Which models SGLang runs with a hybrid sliding-window KV pool: ("list", the architectures,
    where) when `configs/model_config.py` lists them (`is_hybrid_swa_model`'s set, or the first
    architecture list of `is_hybrid_model` that returns a ratio of 1), ("sliding_window", None,
    where) when the model runner takes every sliding-window model but Llama 4, else ("none", ...).
    """
    srt = root / "sglang" / "srt"
    config = srt / "configs" / "model_config.py"
    text = config.read_text(encoding="utf-8", errors="replace") if config.is_file() else ""
    module = ast.parse(text) if text else None
    functions = {n.name: n for n in (module.body if module else [])
                 if isinstance(n, ast.FunctionDef)}
    swa = functions.get("is_hybrid_swa_model")
    if swa is not None:
        names: dict[str, set[str]] | None = None
        found: set[str] = set()
        for node in ast.walk(swa):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Set | ast.List | ast.Tuple):
                for element in node.value.elts:
                    if isinstance(element, ast.Constant) and isinstance(element.value, str):
                        found.add(element.value)
                    elif isinstance(element, ast.Starred) and isinstance(element.value, ast.Name):
                        if names is None:
                            names = _module_string_collections(root)
                        found |= names.get(element.value.id, set())
        return "list", sorted(found), "is_hybrid_swa_model in configs/model_config.py"
    ratio = functions.get("is_hybrid_model")
    if ratio is not None:
        for node in ratio.body:
            if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                    and isinstance(node.test.ops[0], ast.In)
                    and any(isinstance(r, ast.Return) and isinstance(r.value, ast.Constant)
                            and r.value.value == 1 for r in node.body)):
                return ("list", sorted(_string_set(node.test.comparators[0], {})),
                        "the ratio-1 architectures of is_hybrid_model in configs/model_config.py")
    runner = srt / "model_executor" / "model_runner.py"
    if runner.is_file() and 'not any("Llama4" in arch for arch in architectures)' in runner.read_text(
            encoding="utf-8", errors="replace"):
        return "sliding_window", None, "model_runner: any sliding window, not Llama 4"
    return "none", None, "no hybrid SWA pool found"


def _adaptive_traits(tree: SourceTree) -> dict[str, tuple[Any, str]]:
    """How the release's adaptive speculative decoding is gated, read from its source.

    `adaptive_needs_explicit_topk_one` / `adaptive_unsupported_flags` (spec v1 needed:
    `disable_overlap_schedule` among them)
    from `adaptive_unsupported_reason` (in source order), `adaptive_candidate_steps` from
    `DEFAULT_ADAPTIVE_CONFIG` (the union of its `candidate_steps`), and `adaptive_steps_check`:
    "init" (`_init_adaptive_speculative_params` fills steps/topk and raises), "validate"
    (`validate_adaptive_initial_steps` only raises) or "none"."""
    module = tree.trees.get(ADAPTIVE_PARAMS)
    if module is None:
        return {}
    found: dict[str, tuple[Any, str]] = {}
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "adaptive_unsupported_reason":
            body = ast.unparse(node)
            how = "adaptive_unsupported_reason"
            found["adaptive_needs_explicit_topk_one"] = (
                not re.search(r"speculative_eagle_topk is not None", body), how)
            spelled = {n: [n] for n in _ADAPTIVE_SWITCHES}
            spelled["enable_dp_attention"].append("attn_dp_enabled_of(")  # its later spelling
            order = sorted((min(body.index(w) for w in words if w in body), n)
                           for n, words in spelled.items() if any(w in body for w in words))
            found["adaptive_unsupported_flags"] = ([n for _, n in order], how)
        target = (node.targets[0] if isinstance(node, ast.Assign) and node.targets
                  else node.target if isinstance(node, ast.AnnAssign) else None)
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "DEFAULT_ADAPTIVE_CONFIG" and value:
            try:
                config = ast.literal_eval(value)
                steps = sorted({int(s) for entry in config.values()
                                for s in entry.get("candidate_steps", [])})
            except (ValueError, TypeError, AttributeError):
                continue
            found["adaptive_candidate_steps"] = (steps, "DEFAULT_ADAPTIVE_CONFIG")
    texts = tree.files.values()
    validate_call = re.compile(r"(?<!def )validate_adaptive_initial_steps\(\s*\n?\s*server_args")
    if any("def _init_adaptive_speculative_params" in text for text in texts):
        found["adaptive_steps_check"] = ("init", "_init_adaptive_speculative_params")
    elif any(validate_call.search(text) for text in texts):
        found["adaptive_steps_check"] = ("validate", "validate_adaptive_initial_steps call")
    else:
        found["adaptive_steps_check"] = ("none", "no adaptive steps check in the argument code")
    return found


# ------------------------------------------------------------------ onboarding


def load_anchors() -> dict[str, Any]:
    """The committed anchors: per rule the statements to look for, plus architecture seeds."""
    return json.loads(ANCHORS_PATH.read_text(encoding="utf-8"))


def argument_code_hash(root: Path) -> str:
    """A hash of a release's argument code and the helpers its checks call (decides whether a
    .postN is its base's alias)."""
    digest = hashlib.sha256()
    for entry in (*ARGUMENT_CODE, *HELPER_CODE):
        base = root / entry
        for path in sorted(base.rglob("*.py")) if base.is_dir() else [base]:
            if path.is_file():
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def derive_release(version: str, root: Path, flags: dict[str, Any],
                   env: dict[str, Any], model_types: dict[str, Any] | None = None,
                   ) -> tuple[dict[str, Any], list[str]]:
    """The release data of `version` from its source tree and dumps, and the review lines."""
    anchors = load_anchors()
    tree = SourceTree(root)
    review: list[str] = []
    sites: dict[str, dict[str, Any]] = {}
    for rule_id, entries in anchors["rules"].items():
        options = [Anchor(**e) for e in entries]
        located = tree.locate(options)
        if located is None:
            continue
        if located.platform is not None:  # the wizard checks CUDA launches
            review.append(f"{located.platform:<7} {rule_id}: only on {located.platform} at "
                          f"{located.where} (not a site here)")
            continue
        variant = next((i for i, a in enumerate(options) if a.text == _text_at(tree, located)),
                       _closest(options, _text_at(tree, located)))
        sites[rule_id] = {
            "where": located.where, "exception": located.exception, "bare": located.bare,
            "source": located.source, "variant": variant, "match": located.match,
        }
        if located.match != "exact":
            review.append(f"fuzzy   {rule_id}: {located.match} at {located.where}: {located.source}")
    missing = sorted(set(anchors["rules"]) - set(sites))
    for rule_id in missing:
        review.append(f"absent  {rule_id}: no matching statement (the rule does not hold here)")
    resolution = _resolution(tree)
    algorithms, choices = _algorithms(tree, flags)
    traits, origin = _probe_traits(tree, flags, sites, resolution, choices)
    for name, how in sorted(origin.items()):
        if how == "template":
            review.append(f"trait   {name} = {traits[name]!r} (from the {resolution} template)")
    archs, arch_where = _arch_lists(tree, anchors["arch_seeds"])
    if not archs.get("draft_auto"):
        guarded = _site_in_list(tree, sites.get("R-DRAFT-AUTO"))
        if guarded:
            archs["draft_auto"], arch_where["draft_auto"] = guarded
    if not archs.get("hybrid_extra_buffer"):
        branch = _enclosing_branch_archs(tree, sites.get("R-MAMBA-TRACK-INTERVAL"))
        if branch:
            archs["hybrid_extra_buffer"], arch_where["hybrid_extra_buffer"] = branch
    if traits["hybrid_lists"] == "split":
        with_extra, without = _mamba_branch_archs(tree)
        if with_extra - set(archs["hybrid_extra_buffer"]):
            archs["hybrid_extra_buffer"] = sorted(set(archs["hybrid_extra_buffer"]) | with_extra)
            arch_where["hybrid_extra_buffer"] += " + _handle_mamba_radix_cache branches"
        if without:
            archs["hybrid_no_extra_buffer"] = sorted(without - with_extra)
            arch_where["hybrid_no_extra_buffer"] = (
                "model_arch branches without the extra buffer (server_args.py)")
    if not archs.get("qwen_hybrid_sm100"):
        found = _qwen_sm100_branch_archs(tree)
        if found:
            archs["qwen_hybrid_sm100"], arch_where["qwen_hybrid_sm100"] = found
    pp_all = pp_kv_all_layers_archs(tree.root)
    if pp_all is not None:
        archs["pp_kv_all_layers"], arch_where["pp_kv_all_layers"] = pp_all
    for key, list_name in PREFILL_GRAPH_ARCH_LISTS.items():
        listed = model_config_arch_list(tree.root, list_name)
        if listed is not None:
            archs[key], arch_where[key] = listed
    offload_v2 = offloader_v2_archs(tree.root)
    if offload_v2 is not None:
        archs["offloader_v2"], arch_where["offloader_v2"] = offload_v2
    mtp = mtp_draft_archs(tree.root)
    if mtp is not None:
        archs["mtp_draft"], arch_where["mtp_draft"] = mtp
    eagle3 = eagle3_unusable_mtp_archs(tree.root)
    if eagle3 is not None:
        archs["eagle3_unusable_mtp"], arch_where["eagle3_unusable_mtp"] = eagle3
    _rule, swa_archs, swa_where = hybrid_swa(tree.root)
    if swa_archs is not None:
        archs["hybrid_swa"], arch_where["hybrid_swa"] = swa_archs, swa_where
    uses_fa3_list = any("is_fa3_default_architecture(" in text and "def is_fa3_default" not in text
                        for text in tree.files.values())
    fa3 = _fa3_default_archs(tree.root) if uses_fa3_list else None
    if fa3 is not None:
        archs["fa3_default"], arch_where["fa3_default"] = fa3
    for name, loc in sorted(arch_where.items()):
        review.append(f"archs   {name}: {len(archs[name])} from {loc}")

    generic = extract_sites(tree, flags, sites)
    review.append(f"generic {len(generic.sites)} sites of R-ARG-SITE (checks over flags as typed); "
                  f"{len(generic.skipped)} raise sites left out")
    review.extend(f"generic-skip {line}" for line in generic.skipped)
    review.append(f"deprecated {len(generic.deprecations)} logged rewrites of deprecated values "
                  f"(R-DEPRECATED-VALUE); {len(generic.deprecation_skipped)} left out or partial")
    review.extend(f"deprecated-skip {line}" for line in generic.deprecation_skipped)
    review.extend(coverage(tree, sites, {s["where"] for s in generic.sites}).lines())
    covered = {s["where"] for s in sites.values()}
    for where, text in tree.raise_sites():
        if where not in covered and _speculative(text):
            review.append(f"uncovered {where}: {text[:150]}")
    spec_v2 = next((v for v in env.get("variables", [])
                    if v.get("name") == "SGLANG_ENABLE_SPEC_V2"), None)
    data = {
        "name": version,
        "aliases": [],
        "argument_code_hash": argument_code_hash(root),
        "resolution": resolution,
        "algorithms": algorithms,
        "algorithm_choices": choices,
        "strategy_field": ("mamba_radix_cache_strategy"
                           if _flag(flags, "mamba_radix_cache_strategy")
                           else "mamba_scheduler_strategy"),
        "attn_dp_field": _flag(flags, "attn_dp_size") is not None,
        "reads_spec_v2_env": spec_v2 is not None,
        "spec_v2_default": bool(spec_v2 and spec_v2.get("default")),
        "archs": archs,
        "traits": traits,
        "trait_origin": origin,
        "sites": dict(sorted(sites.items())),
        "defaults": _defaults(flags),
        "dests": sorted({SERVER_ARGS_FIELDS.get(a["dest"], a["dest"])
                         for a in flags.get("actions", []) if a.get("dest") != "help"}),
        "auto_params": auto_params_table(tree),
        "model_types": sorted((model_types or {}).get("model_types", [])),
        "rule_seq": rule_order(generic, sites),
        "generic_sites": generic.sites,
        "generic_writes": generic.writes,
        "deprecated_values": generic.deprecations,
        "model_config_builds": generic.builds,
    }
    return data, review


_SPECULATIVE_WORDS = re.compile(r"specul|eagle|draft|mamba|topk|ngram|dflash|page_size|"
                                r"dp_attention|attn_dp|pp_size|nnodes|tp_size", re.I)


def _speculative(text: str) -> bool:
    return bool(_SPECULATIVE_WORDS.search(text))


def _text_at(tree: SourceTree, located: Any) -> str:
    anchor = tree.anchor_at(located.where)
    return anchor.text if anchor else ""


def _closest(options: list[Anchor], text: str) -> int:
    import difflib

    ratios = [difflib.SequenceMatcher(None, a.text, text, autojunk=False).ratio() for a in options]
    return ratios.index(max(ratios)) if ratios else 0


_DEFAULT_DESTS = ("mamba_track_interval", "speculative_ngram_max_bfs_breadth",
                  "speculative_ngram_min_bfs_breadth", "chunked_prefill_size", "page_size")


def _defaults(flags: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dest in _DEFAULT_DESTS:
        action = _flag(flags, dest)
        if action is not None and action.get("default") not in ("==SUPPRESS==",):
            out[dest] = action.get("default")
    return out


def write_release(data: dict[str, Any], directory: Path = RELEASES_DIR) -> Path:
    """Write one release file (atomic) and refresh the index, folding identical .postN releases."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{data['name']}.json"
    _atomic_write(path, json.dumps(data, indent=1, sort_keys=False) + "\n")
    rebuild_index(directory)
    if directory == RELEASES_DIR:  # this process reads the new release from now on
        write_traits_module(directory)
        releases._index.cache_clear()
        releases.release_names.cache_clear()
        releases.known_versions.cache_clear()
        releases.load_release.cache_clear()
    return path


def rebuild_index(directory: Path = RELEASES_DIR, default: str | None = None) -> dict[str, Any]:
    """index.json: every release and the .postN aliases whose argument code equals their base's.

    `default` (the version a new profile gets) is kept from the index when not given; a new
    index starts with the newest release."""
    index_file = directory / "index.json"
    if default is None and index_file.exists():
        default = json.loads(index_file.read_text(encoding="utf-8")).get("default")

    entries = {}
    for path in directory.glob("*.json"):
        if path.name in ("index.json", "aliases.json"):
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        entries[data["name"]] = data
    releases: dict[str, list[str]] = {}
    for name in sorted(entries, key=version_key):
        numbers, suffix = parse_version(name)
        base = ".".join(map(str, numbers))
        if suffix and base in entries and (entries[base]["argument_code_hash"]
                                           == entries[name]["argument_code_hash"]):
            releases.setdefault(base, []).append(name)
            continue
        releases.setdefault(name, [])
    aliases_file = directory / "aliases.json"
    if aliases_file.exists():
        for base, names in json.loads(aliases_file.read_text(encoding="utf-8")).items():
            if base in releases:
                releases[base] = sorted(set(releases[base]) | set(names), key=version_key)
    if default is None or default not in releases:
        default = max(releases, key=version_key) if releases else None
    index = {"default": default, "releases": releases}
    _atomic_write(index_file, json.dumps(index, indent=1) + "\n")
    return index


TRAITS_MODULE = RELEASES_DIR.parent / "traits.py"


def _type_of(values: list[Any]) -> str:
    """The Python annotation of a trait from its values in every release."""
    present = [v for v in values if v is not None]
    optional = " | None" if len(present) != len(values) else ""
    if not present:
        return "Any"
    if all(isinstance(v, bool) for v in present):
        kind = "bool"
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        kind = "int"
    elif all(isinstance(v, str) for v in present):
        kind = "str"
    elif all(isinstance(v, list) for v in present):
        kind = f"list[{_type_of([x for v in present for x in v])}]"
    elif all(isinstance(v, dict) for v in present):
        kind = f"dict[str, {_type_of([x for v in present for x in v.values()])}]"
    else:
        kind = "Any"
    return kind + optional


def traits_module_source(directory: Path = RELEASES_DIR) -> str:
    """`traits.py`: the typed `Traits` dataclass of every behaviour switch the release data holds
    (field types read from the values of every release), so mypy checks each use."""
    values: dict[str, list[Any]] = {}
    origins: dict[str, str] = {}
    files = sorted(p for p in directory.glob("*.json") if p.name not in ("index.json", "aliases.json"))
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        for name, value in data.get("traits", {}).items():
            values.setdefault(name, []).append(value)
            origins.setdefault(name, str(data.get("trait_origin", {}).get(name, "")))
    for name in values:  # a trait some release lacks is optional
        values[name].extend([None] * (len(files) - len(values[name])))
    lines = [
        '"""The behaviour switches of an SGLang release, typed (generated; do not edit).',
        "",
        "Written by `wizard.conformance.onboard.write_traits_module` from the release data",
        "(`data/*.json` `traits`, which `conformance add-release` derives from each wheel); the",
        "field types are read from every release's values. `Release.behaviour` holds one.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass",
        *(["from typing import Any"] if any("Any" in _type_of(v) for v in values.values()) else []),
        "",
        "",
        "@dataclass(frozen=True)",
        "class Traits:",
        '    """One release\'s behaviour switches (see each release\'s `trait_origin`)."""',
        "",
    ]
    for name in sorted(values):
        lines.append(f"    {name}: {_type_of(values[name])}")
    lines.append("")
    lines.append("")
    lines.append("NAMES: frozenset[str] = frozenset(Traits.__dataclass_fields__)")
    return "\n".join(lines) + "\n"


def write_traits_module(directory: Path = RELEASES_DIR) -> Path:
    """Write `wizard/sglang/releases/traits.py` (`add-release` does after each release)."""
    _atomic_write(TRAITS_MODULE, traits_module_source(directory))
    return TRAITS_MODULE


def _atomic_write(path: Path, text: str) -> None:
    write_text(path, text, mode=0o644)


def site_packages(python: Path) -> Path:
    """The site-packages folder of a venv's Python."""
    candidates = sorted(python.parent.parent.glob("lib/python*/site-packages"))
    if not candidates:
        raise FileNotFoundError(f"no site-packages beside {python}")
    return candidates[0]


def review_summary(review: list[str]) -> str:
    """The review list, grouped by kind, for the terminal."""
    order = ("coverage", "generic", "deprecated", "absent", "fuzzy", "unreasoned", "uncovered", "trait", "archs",
             "unmodelled")
    lines = sorted(review, key=lambda line: (next((i for i, k in enumerate(order)
                                                    if line.startswith(k)), 9), line))
    return "\n".join(lines)


__all__ = ["asdict", "derive_release", "load_anchors", "rebuild_index", "review_summary",
           "site_packages", "write_release"]


def dump_tables(version: str, python: Path, log: Callable[[str], None],
                ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The release's flag, env and model-type tables: the committed dumps, else dumped now."""
    import subprocess

    tables: list[dict[str, Any]] = []
    for kind in ("flags", "env", "model-types"):
        path = FLAGS_DIR / f"{kind}-{version}.json"
        if not path.exists():
            log(f"dumping the {kind} table of SGLang {version}")
            proc = subprocess.run([str(python), str(RUNNER_PATH), "--fake-gpu", "H100",
                                   f"--dump-{kind}"], capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise RuntimeError(f"--dump-{kind} failed: {proc.stderr.strip()[-500:]}")
            _atomic_write(path, proc.stdout)
            if kind == "flags":
                write_flag_index()
                write_secret_flags()
        tables.append(json.loads(path.read_text(encoding="utf-8")))
    return tables[0], tables[1], tables[2]


def onboard(version: str, log: Callable[[str], None]) -> tuple[Path, list[str]]:
    """Build the venv, dump the tables, derive and write the release data; the review lines."""
    python = ensure_venv(version, log=log)
    flags, env, model_types = dump_tables(version, python, log)
    data, review = derive_release(version, site_packages(python), flags, env, model_types)
    return write_release(data), review
