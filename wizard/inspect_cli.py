"""`sglang-wizard inspect MODEL`: model facts, algorithm choices and the GPU memory plan.

MODEL is a local folder, an HF cache folder or a Hub repo id `ORG/NAME` (read through
`wizard.hub`: config and small JSON files only). Exit codes: 0 = inspected (and, with a plan, it
fits or is tight), 1 = the plan says it will not fit, 2 = bad input (missing folder, broken
config.json, gated / unknown repo, offline without cache, unknown GPU, ...).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from wizard import limits
from wizard.api import check_argv, check_typed, draft_findings
from wizard.choices import algorithm_options
from wizard.errors import ToolInputError
from wizard.gpus import GpuKind, UnknownGpuError, gpu_count_arg, gpu_kind_arg, lookup
from wizard.hub import HubError, is_repo_id, load_hub_facts
from wizard.memory import MemoryInputs, MemoryPlan, count, plan_memory
from wizard.model_facts import ModelFacts
from wizard.model_files import ModelReadError
from wizard.model_info import load_model_facts
from wizard.multinode import node_count
from wizard.profile import load_profile
from wizard.profile_problems import ProfileError
from wizard.rules.common import hip_default_backend
from wizard.rules.report import Finding
from wizard.sglang.errors import CommandError
from wizard.sglang.parse import split_launch
from wizard.sglang.releases import default_version, release_for
from wizard.sglang.versions import VersionError, resolve_version

DEFAULT_VERSION = default_version()


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `inspect` subcommand."""
    parser = subparsers.add_parser(
        "inspect",
        help="show what a model (folder or Hub id) holds and whether it fits the GPUs",
        description=(
            "Read config.json (and the safetensors index, quantization files) of a model folder, "
            "HF cache folder or Hub repo id ORG/NAME (never the weights) and print architecture, "
            "MTP layers, hybrid layout, MoE, attention, quantization and parameter counts, and "
            "where they came from. With --gpu/--gpus/--tp or a profile, also print the per-GPU "
            "memory plan."
        ),
        epilog=(
            "Hub ids honour HF_ENDPOINT (mirrors), HF_TOKEN or the stored `hf auth login`, "
            "HF_HOME / HF_HUB_CACHE (the shared cache) and HF_HUB_OFFLINE=1 (cache only)."
        ),
    )
    parser.add_argument(
        "model_dir",
        nargs="?",
        metavar="MODEL",
        help="model folder, HF cache folder or Hub repo id ORG/NAME",
    )
    parser.add_argument(
        "launch",
        nargs="*",
        metavar="-- FLAGS",
        help=(
            "after `--`: SGLang launch flags, as `check` takes them (`-- --tp 8 --pp-size 4 "
            "--mem-fraction-static 0.85`); the plan is then exactly the one `check` makes"
        ),
    )
    parser.add_argument(
        "--revision", metavar="REV", help="Hub branch, tag or commit (as SGLang's --revision)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON (keys in docs/inspect.md)")
    parser.add_argument(
        "--profile", metavar="P.toml", help="take GPUs, tp and flags from a profile"
    )
    parser.add_argument(
        "--gpu", metavar="KIND", type=gpu_kind_arg,
        help="GPU kind, e.g. 'RTX A6000', H100, B200, MI300X, or custom:sm=8.9,mem=48GB",
    )
    parser.add_argument("--gpus", type=gpu_count_arg, metavar="N", help="number of GPUs (1 or more)")
    parser.add_argument("--tp", type=int, metavar="N", help="tensor parallel size")
    parser.add_argument(
        "--nnodes", type=int, metavar="N",
        help="nodes the launch spans (--gpus is then GPUs per node; a TP group wider than one "
             "node holds less NCCL memory)",
    )
    parser.add_argument(
        "--draft", metavar="MODEL", help="draft model folder or Hub id (EAGLE/EAGLE3/...)"
    )
    parser.add_argument("--algorithm", metavar="ALGO", help="speculative algorithm, e.g. NEXTN")
    parser.add_argument("--num-draft-tokens", type=int, metavar="N")
    parser.add_argument("--num-steps", type=int, metavar="N")
    parser.add_argument("--topk", type=int, metavar="N")
    parser.add_argument("--mem-fraction", type=float, metavar="F", help="--mem-fraction-static")
    parser.add_argument("--max-running-requests", type=int, metavar="N")
    parser.add_argument("--context-length", type=int, metavar="N")
    parser.add_argument("--kv-cache-dtype", metavar="DTYPE")
    parser.add_argument("--sglang-version", metavar="V", help=f"default {DEFAULT_VERSION}")
    parser.set_defaults(func=run_inspect)


def _load(path: str, what: str, revision: str | None = None) -> ModelFacts:
    """A local folder, or a Hub repo id (ORG/NAME that is not a local path, as SGLang decides)."""
    try:
        if is_repo_id(path):
            return load_hub_facts(path, revision)
        return load_model_facts(Path(path).expanduser())
    except HubError as exc:  # its message starts with the repo id
        raise ToolInputError(f"{what}: {exc}") from None
    except ModelReadError as exc:
        shown = path if len(path) <= 120 else f"{path[:60]}…{path[-60:]}"
        raise ToolInputError(f"{what} {shown}: {exc}") from None


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """Merge the profile (if any) with the command-line flags (flags win)."""
    s: dict[str, Any] = {
        "model_dir": None,
        "revision": None,
        "draft_revision": None,
        "gpu": None,
        "gpus": None,
        "tp": None,
        "nnodes": None,
        "draft": None,
        "algorithm": None,
        "num_draft_tokens": None,
        "num_steps": None,
        "topk": None,
        "mem_fraction": None,
        "max_running_requests": None,
        "context_length": None,
        "kv_cache_dtype": None,
        "dtype": None,
        "quantization": None,
        "cuda_graph_max_bs": None,
        "chunked_prefill_size": None,
        "disable_radix_cache": False,
        "mamba_extra_buffer": None,
        "sglang_version": DEFAULT_VERSION,
    }
    if args.profile:
        try:
            p = load_profile(args.profile)
        except ProfileError as exc:
            raise ToolInputError(str(exc)) from None
        except OSError as exc:
            raise ToolInputError(f"cannot read profile {args.profile}: {exc}") from None
        strategy = p.hybrid.cache_strategy
        s.update(
            model_dir=p.model.path,
            revision=p.model.revision,
            draft_revision=p.speculative.draft_model_revision,
            gpu=p.gpu.kind,
            gpus=p.gpu.count,
            tp=p.parallel.tp,
            nnodes=node_count(p),
            draft=p.speculative.draft_model_path,
            algorithm=p.speculative.algorithm,
            num_draft_tokens=p.speculative.num_draft_tokens,
            num_steps=p.speculative.num_steps,
            topk=p.speculative.eagle_topk,
            mem_fraction=p.memory.mem_fraction_static,
            max_running_requests=p.memory.max_running_requests,
            context_length=p.model.context_length,
            kv_cache_dtype=p.model.kv_cache_dtype,
            dtype=p.model.dtype,
            quantization=p.model.quantization,
            cuda_graph_max_bs=p.memory.cuda_graph_max_bs,
            chunked_prefill_size=p.memory.chunked_prefill_size,
            disable_radix_cache=p.scheduling.disable_radix_cache,
            mamba_extra_buffer=None if strategy in (None, "auto") else strategy != "no_buffer",
            sglang_version=p.sglang_version,
        )
    for name in ("model_dir", "revision", "gpu", "gpus", *_INSPECT_ONLY, "sglang_version"):
        value = getattr(args, name, None)
        if value is not None:
            s[name] = value
    return s


def _gpu_setup(s: dict[str, Any]) -> tuple[GpuKind, int, int] | None:
    given = [s["gpu"] is not None, s["gpus"] is not None]
    if not any(given):
        if s["tp"] not in (None, 1) and s["gpu"] is None:
            raise ToolInputError("--tp needs --gpu KIND (and --gpus N) for a memory plan")
        return None
    if s["gpu"] is None:
        raise ToolInputError("a memory plan needs --gpu KIND (e.g. --gpu 'RTX A6000')")
    try:
        gpu = lookup(s["gpu"])
    except UnknownGpuError as exc:
        raise ToolInputError(str(exc)) from None
    tp = s["tp"] or 1
    nodes = s["nnodes"] if s["nnodes"] is not None else 1
    gpus = s["gpus"] * nodes if s["gpus"] else tp
    for name, value in (("--nnodes", nodes), ("--gpus", gpus), ("--tp", tp)):
        if value < 1:
            raise ToolInputError(f"{name} must be at least 1, got {value}")
    if tp > gpus:
        across = (f" x {nodes} nodes" if nodes > 1
                  else " (on several nodes: --nnodes N, --gpus per node)")
        raise ToolInputError(f"--tp {tp} needs {tp} GPUs but --gpus is {s['gpus']}{across}")
    return gpu, gpus, tp


_INSPECT_ONLY = (
    "tp",
    "nnodes",
    "draft",
    "algorithm",
    "num_draft_tokens",
    "num_steps",
    "topk",
    "mem_fraction",
    "max_running_requests",
    "context_length",
    "kv_cache_dtype",
)


def _plan_from_launch(
    model_path: str | Path, launch: list[str], s: dict[str, Any], args: argparse.Namespace
) -> tuple[MemoryPlan | None, list[str]]:
    """The plan `check` makes for MODEL_DIR with these SGLang flags (and what SGLang would refuse)."""
    given = [f"--{n.replace('_', '-')}" for n in _INSPECT_ONLY if getattr(args, n, None) is not None]
    if given:
        raise ToolInputError(
            f"{', '.join(given)} and SGLang flags after `--` both set the plan; give them as "
            "SGLang flags after `--` (e.g. --tp-size, --mem-fraction-static)"
        )
    if s["gpu"] is None:
        raise ToolInputError("a memory plan needs --gpu KIND (e.g. --gpu H100)")
    try:
        gpu = lookup(s["gpu"])
        resolve_version(s["sglang_version"])
        parts = split_launch(launch if len(launch) > 1 else launch[0])
    except (UnknownGpuError, VersionError, CommandError) as exc:
        raise ToolInputError(str(exc)) from None
    argv = list(parts.argv)
    if any(a in ("--model-path", "--model") or a.startswith(("--model-path=", "--model="))
           for a in argv):
        raise ToolInputError("give the model as MODEL_DIR, not as --model-path after `--`")
    report = check_argv(
        ["--model-path", str(model_path), *argv],
        sglang_version=s["sglang_version"],
        env=parts.env,
        gpu=gpu.spec,
        gpus=s["gpus"],
    )
    errors = [f"{f.rule}: {f.message}" for f in report.errors]
    if any(f.rule == "R-ARGPARSE" for f in report.errors):
        raise ToolInputError(f"SGLang's parser refuses the flags after `--`: {errors[0]}")
    if report.memory_plan is None:
        raise ToolInputError("no memory plan for these flags (tp x pp larger than --gpus?)")
    return report.memory_plan, errors


def _rocm_attention_backend(
    target: ModelFacts, gpu: GpuKind, tp: int, draft: ModelFacts | None, s: dict[str, Any]
) -> str | None:
    """The attention backend SGLang picks by default on an AMD GPU (aiter for most models; it
    scales the static pool above 8K context), as `check` resolves it; None on NVIDIA, where the
    plan does not depend on it. Without it `inspect` planned a larger pool than `check`."""
    if not gpu.is_hip:
        return None
    typed = {
        "model_path": s["model_dir"],
        "tp_size": tp,
        "speculative_algorithm": s["algorithm"],
        "speculative_eagle_topk": s["topk"],
        "speculative_num_steps": s["num_steps"],
        "speculative_num_draft_tokens": s["num_draft_tokens"],
        "context_length": s["context_length"],
        "kv_cache_dtype": s["kv_cache_dtype"],
    }
    report = check_typed(
        {k: v for k, v in typed.items() if v is not None},
        sglang_version=s["sglang_version"], gpu=gpu.spec, gpus=s["gpus"] or tp, facts=target,
        draft_facts=draft, fetch=False,
    )
    backend = report.effective.get("attention_backend")
    if backend:
        return str(backend)
    # Releases whose model runner picks the backend at load time (the argument code leaves it
    # None): its ROCm branches, as `check`'s memory plan reads them.
    traits = release_for(s["sglang_version"]).traits
    hip = traits.get("hip_attention_default") or {}
    if traits.get("attention_default", "server_args") == "server_args" or not hip:
        return None
    return hip_default_backend(hip, target.attention == "MLA", target.config_kv_heads, tp)


def _draft_checks(
    target: ModelFacts, draft: ModelFacts | None, s: dict[str, Any]
) -> list[Finding]:
    """The rule engine's findings about the algorithm and its draft (`api.draft_findings`)."""
    algo = (s["algorithm"] or "").upper() or None
    if algo is None:
        return []
    return draft_findings(
        target, draft, algorithm=algo, sglang_version=s["sglang_version"], draft_path=s["draft"],
        num_steps=s["num_steps"], topk=s["topk"], num_draft_tokens=s["num_draft_tokens"],
    )


def _check_json(finding: Finding) -> dict[str, Any]:
    """A draft finding in `inspect --json` (`check_id` is the rule's id)."""
    return {"check_id": finding.rule, "ok": False, "severity": finding.severity,
            "message": finding.message,
            "fix": finding.fixes[0].label if finding.fixes else None}


# Integer options and their sane range (wizard.limits): outside it, exit 2 naming the option.
_INT_RANGES = {
    "tp": (1, limits.MAX_PARALLEL),
    "num_draft_tokens": (1, limits.MAX_SPEC_COUNT),
    "num_steps": (1, limits.MAX_SPEC_COUNT),
    "topk": (1, limits.MAX_SPEC_COUNT),
    "max_running_requests": (1, limits.MAX_BATCH),
    "context_length": (1, limits.MAX_TOKENS),
}


def _check_options(args: argparse.Namespace) -> None:
    """Refuse option values outside their sane range before anything is read (exit 2)."""
    for name, (low, high) in _INT_RANGES.items():
        value = getattr(args, name, None)
        if value is not None and not limits.int_in_range(value, low, high):
            raise ToolInputError(
                f"--{name.replace('_', '-')} must be an integer from {low} to {high}, got {value}"
            )
    if args.mem_fraction is not None and not limits.fraction_ok(args.mem_fraction):
        raise ToolInputError(
            "--mem-fraction must be a number greater than 0 and at most 1 (e.g. 0.85), "
            f"got {args.mem_fraction}"
        )
    if args.sglang_version is not None:
        try:
            resolve_version(args.sglang_version)
        except VersionError as exc:
            raise ToolInputError(f"--sglang-version: {exc}") from None


def run_inspect(args: argparse.Namespace) -> int:
    """Print facts (and a plan); return 1 when the plan says it will not fit."""
    _check_options(args)
    s = _settings(args)
    if not s["model_dir"]:
        raise ToolInputError("give MODEL (a folder or Hub id ORG/NAME, or a --profile with model.path)")
    target = _load(s["model_dir"], "model", s["revision"])
    draft = _load(s["draft"], "draft", s["draft_revision"]) if s["draft"] else None
    model_path = s["model_dir"]
    launch = list(getattr(args, "launch", None) or [])
    setup = None if launch else _gpu_setup(s)
    plan: MemoryPlan | None = None
    launch_errors: list[str] = []
    if launch:
        plan, launch_errors = _plan_from_launch(model_path, launch, s, args)
    if setup is not None:
        gpu, gpus, tp = setup
        try:
            plan = plan_memory(MemoryInputs(
                target,
                gpu,
                gpus,
                tp,
                mem_fraction=s["mem_fraction"],
                draft=draft,
                algorithm=s["algorithm"],
                num_draft_tokens=s["num_draft_tokens"],
                num_steps=s["num_steps"],
                topk=s["topk"],
                max_running_requests=s["max_running_requests"],
                context_length=s["context_length"],
                kv_cache_dtype=s["kv_cache_dtype"],
                dtype=s["dtype"],
                quantization=s["quantization"],
                cuda_graph_max_bs=s["cuda_graph_max_bs"],
                sglang_version=s["sglang_version"],
                chunked_prefill_size=s["chunked_prefill_size"],
                disable_radix_cache=s["disable_radix_cache"],
                mamba_extra_buffer=s["mamba_extra_buffer"],
                attention_backend=_rocm_attention_backend(target, gpu, tp, draft, s),
                nnodes=s["nnodes"] if s["nnodes"] is not None else 1,
            ))
        except ValueError as exc:
            raise ToolInputError(str(exc)) from None
    options = algorithm_options(target, draft, s["sglang_version"])
    checks = _draft_checks(target, draft, s)
    if args.json:
        print(
            json.dumps(
                {
                    "model": target.to_json(),
                    "draft": None if draft is None else draft.to_json(),
                    "sglang_version": s["sglang_version"],
                    "algorithms": [o.__dict__ for o in options],
                    "draft_checks": [_check_json(c) for c in checks],
                    "memory": None if plan is None else plan.to_json(),
                    "launch_errors": launch_errors,
                },
                indent=2,
            )
        )
    else:
        print(render_facts(target))
        if draft is not None:
            print()
            print(render_facts(draft, title="Draft"))
        print()
        print(f"Speculative algorithms (SGLang {s['sglang_version']}):")
        for o in options:
            mark = "yes" if o.available else "no "
            print(f"  {mark} {o.name:<10} {o.reason}")
        for c in checks:
            fix = c.fixes[0].label if c.fixes else None
            print(f"  {c.severity}: {c.rule}: {c.message}" + (f" (fix: {fix})" if fix else ""))
        if plan is not None:
            print()
            print(render_plan(plan))
        for e in launch_errors:
            print(f"  SGLang would refuse the launch: {e}")
    return 1 if plan is not None and plan.verdict == "will_not_fit" else 0


PARAMS_SOURCE_TEXT = {
    "safetensors": "exact: safetensors metadata",
    "index": "safetensors index total_size / dtype",
    "estimate": "estimated from config",
}


def _billions(n: int | None) -> str:
    if n is None:
        return "unknown"
    return f"{n / 1e12:.2f}T" if n >= 1e12 else f"{n / 1e9:.2f}B"


def render_facts(f: ModelFacts, title: str = "Model") -> str:
    """Human-readable facts block."""
    where = {"local": "local folder", "hub": "Hugging Face Hub", "host": "GPU host"}[f.origin]
    lines = [f"{title}: {f.source} ({where})"]
    lines.append(f"  architecture   {f.architecture or 'unknown'} (family {f.family})")
    attn = f"{f.attention}, {f.num_attention_heads} heads"
    if f.attention == "MLA":
        attn += f", latent {f.kv_lora_rank} + rope {f.qk_rope_head_dim}"
    else:
        attn += f", {f.num_kv_heads} KV heads x {f.head_dim}"
    if f.sliding_window_layers:
        attn += f", {f.sliding_window_layers} sliding-window layers ({f.sliding_window})"
    if f.has_attention_sinks:
        attn += ", attention sinks"
    lines.append(f"  attention      {attn}")
    layers = f"{f.num_layers}, hidden {f.hidden_size}"
    if f.hybrid is not None:
        layers += (
            f"; hybrid: {f.hybrid.linear_layers} linear-attention + {f.hybrid.full_layers} full"
        )
    lines.append(f"  layers         {layers}")
    lines.append(f"  MTP layers     {f.mtp_layers}")
    if f.moe is not None:
        lines.append(
            f"  MoE            {f.moe.experts} experts, {f.moe.active_experts} active, "
            f"{f.moe.shared_experts} shared, {f.moe.moe_layers} MoE layers"
        )
    quant = "none" if f.quant is None else f"{f.quant.method} ({f.quant.scheme})"
    lines.append(f"  dtype / quant  {f.dtype or 'unknown'} / {quant}")
    lines.append(f"  context        {f.context_length or 'unknown'}, vocab {f.vocab_size}")
    params = f"{_billions(f.params_total)} total"
    if f.moe is not None:
        params += f", {_billions(f.params_active)} active"
    params += " (" + PARAMS_SOURCE_TEXT[f.params_source] + ")"
    lines.append(f"  parameters     {params}")
    if f.is_eagle_draft:
        kind = "EAGLE-3" if f.is_eagle3_draft else "EAGLE"
        lines.append(
            f"  draft          {kind} head, target hidden {f.target_hidden_size or f.hidden_size}"
            + (f", draft vocab {f.draft_vocab_size}" if f.draft_vocab_size else "")
        )
    lines.extend(f"  note: {n}" for n in f.notes)
    return "\n".join(lines)


def _bar(plan: MemoryPlan, width: int = 50) -> str:
    total = plan.gpu_total_gib
    parts = [
        ("W", plan.weights_gib),
        ("S", plan.mamba_pool_gib + plan.spec_mamba_buffer_gib),
        ("K", max(plan.kv_budget_gib, 0)),
        ("D", plan.draft_weights_gib + plan.draft_kv_gib),
        ("A", plan.activation_estimate_gib + plan.cuda_graph_estimate_gib),
    ]
    out = ""
    for mark, gib in parts:
        share = gib / total if total > 0 else 0.0
        if not math.isfinite(share):  # inf / nan from absurd sizes: a full bar, not a crash
            share = 1.0 if share > 0 else 0.0
        out += mark * round(min(max(share, 0.0), 1.0) * width)
        if len(out) >= width:
            break
    out = out[:width]
    return "[" + out.ljust(width, ".") + "]"


def render_plan(p: MemoryPlan) -> str:
    """Human-readable memory plan with a bar per GPU."""
    word = {"fits": "FITS", "tight": "TIGHT", "will_not_fit": "WILL NOT FIT"}[p.verdict]
    layout = f"tp {p.tp}"
    if p.pp > 1:
        layout += f", pp {p.pp} ({p.layers_per_gpu} layers per GPU)"
    if p.attention_dp:
        layout += f", dp {p.dp} DP attention (attention TP {p.attention_tp})"
    if p.ep > 1:
        layout += f", ep {p.ep}"
    lines = [f"Memory plan per GPU: {p.gpus} x {p.gpu}, {layout} (SGLang {p.sglang_version}): {word}"]
    lines.append(f"  {_bar(p)}  W weights S state K KV D draft A activations/graphs")
    hip = p.context_label.startswith("HIP")
    if p.free_memory_source == "nvidia-smi":
        source = "amd-smi/rocm-smi" if hip else "nvidia-smi"
    else:
        source = f"card {p.gpu_total_gib:.1f}"
        if p.driver_reserve_gib:
            source += f" - {p.driver_reserve_gib:.2f} amdgpu driver"
    lines.append(
        f"  free before loading {p.free_before_load_gib:.1f} GiB ({source} - "
        f"{p.context_reserve_gib:.2f} {p.context_label}) x mem-fraction-static "
        f"{p.mem_fraction_static:.3f} ({p.mem_fraction_source}) = static pool "
        f"{p.static_pool_gib:.1f} GiB"
    )
    lines.append(
        f"  weights        {p.weights_gib:.2f} GiB ({p.weights_source}; incl. "
        f"{p.load_overhead_gib:.2f} rotary cache/kernels)"
        + (f" + draft {p.draft_weights_gib:.2f} in the pool" if p.draft_in_static_pool else "")
    )
    if p.mamba_state_per_request_mib:
        lines.append(
            f"  hybrid state   {p.mamba_state_per_request_mib:.1f} MiB per request; pool "
            f"{p.mamba_pool_gib:.2f} GiB (holds "
            f"{count(p.max_running_requests_limit or 0, 'running request')})"
            + (
                f"; speculative buffer {p.spec_mamba_buffer_gib:.2f} GiB"
                if p.spec_mamba_buffer_gib
                else ""
            )
        )
    lines.append(
        f"  KV cache       {p.kv_budget_gib:.2f} GiB / {p.kv_cell_bytes:,} B per token = "
        f"{p.kv_tokens:,} tokens (context length {p.context_length or 'unknown'}); {p.kv_layout}"
        + (f"; allocated {p.kv_bytes_per_token:,} B per token" if p.kv_cell_bytes != p.kv_bytes_per_token else "")
        + (f"; sliding-window pool {p.swa_kv_tokens:,} tokens" if p.swa_kv_tokens else "")
    )
    if p.draft_kind:
        where = "in the static pool" if p.draft_in_static_pool else "outside the static pool"
        lines.append(
            f"  draft          {p.draft_kind}: {p.draft_weights_gib:.2f} GiB weights ({where}) + "
            f"{p.draft_kv_gib:.2f} GiB KV"
        )
    lines.append(
        f"  outside pool   {p.reserve_gib:.1f} GiB for workspace {p.workspace_gib:.1f} + "
        f"req-to-token {p.req_to_token_gib:.2f} ({p.req_to_token_rows:,} requests) + prefill "
        f"activations "
        f"~{p.activation_estimate_gib:.2f} + CUDA graphs ~{p.cuda_graph_estimate_gib:.2f}"
        + (" + draft" if p.draft_kind else "")
        + (f" + DeepEP buffers {p.deepep_buffer_gib:.2f}" if p.deepep_buffer_gib else "")
        + f": headroom {p.headroom_gib:+.1f} GiB"
        + (f" (incl. {p.kv_cap_free_gib:.1f} GiB of the static pool --max-total-tokens leaves "
           "free)" if p.kv_cap_free_gib >= 0.05 else "")
    )
    if p.hicache_host_gib:
        lines.append(
            f"  host memory    hierarchical KV cache {p.hicache_host_gib:.1f} GiB per GPU process, "
            f"{p.hicache_host_total_gib:.1f} GiB over {p.gpus} GPUs (pinned RAM)"
        )
    if p.disaggregation_mode != "null":
        lines.append(f"  PD role        {p.disaggregation_mode} server")
    lines.extend(f"  why: {r}" for r in p.reasons)
    lines.extend(f"  try: {s}" for s in p.suggestions)
    lines.extend(f"  assumed: {a}" for a in p.assumptions)
    return "\n".join(lines)
