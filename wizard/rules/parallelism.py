"""Parallelism: tp against the attention-DP size, pipeline parallelism with speculative decoding,
the layer partition of the pipeline stages.
(The multi-node checks are in wizard.rules.multinode.)
"""

from __future__ import annotations

import ast

from wizard.rules.common import DP_ATTENTION_OFF, algo, attention_dp_size, dp_attention, variant
from wizard.rules.model import RUNTIME, Args, Ctx, Raises, Rule, raises
from wizard.rules.report import Fix


def _typed_tp(a: Args) -> int:
    """tp as SGLang holds it (1 when not given; a typed 0 stays 0: its modulo passes, and
    R-SIZE-NOT-POSITIVE says what it does at run time)."""
    tp = a.get("tp_size")
    return 1 if tp is None else int(tp)


DPATTN_TP_DIVISIBLE = Rule(
    id="R-DPATTN-TP-DIVISIBLE",
    title="tp must be a multiple of the attention-DP size",
    severity="error",
    why=(
        "DP attention splits the tensor-parallel group into dp attention groups, so tp must be divisible by "
        "dp (releases with --attn-dp-size: by it). SGLang checks it with a bare assert in its data-parallel step, "
        "before any speculative rule, so it hides them."
    ),
    sglang=raises("resolve", "AssertionError"),
    fields=("parallel.tp", "parallel.dp", "parallel.attn_dp_size"),
    when=lambda ctx, a: (
        dp_attention(ctx, a)
        and _typed_tp(a) % attention_dp_size(ctx, a) != 0  # tp 0 passes (0 % dp == 0)
    ),
    message=lambda ctx, a: (
        f"tp {_typed_tp(a)} is not a multiple of the attention-DP size "
        f"{attention_dp_size(ctx, a)}: SGLang raises a bare AssertionError."
    ),
    fixes=lambda ctx, a: [
        Fix("DP size = tp", {"parallel.dp": a.get("tp_size") or 1}),
        DP_ATTENTION_OFF,
    ],
)


PP_SPEC_ALGO_23 = Rule(
    id="R-PP-SPEC-ALGO",
    title="Pipeline parallelism supports only EAGLE speculative decoding",
    severity="error",
    why="The releases that hold this relay draft state between pipeline stages only for the single-layer EAGLE worker (and DSPARK on PD prefill).",
    sglang=raises("check", "AssertionError"),
    fields=("parallel.pp", "speculative.algorithm"),
    when=lambda ctx, a: (
        a.get("pp_size", 1) > 1
        and algo(a) not in (None, "DSPARK")
        and (algo(a) != "EAGLE" or bool(a.get("enable_multi_layer_eagle")))
    ),
    message=lambda ctx, a: (
        "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"
    ),
    fixes=lambda ctx, a: [Fix("pp 1 (use tp instead)", {"parallel.pp": 1})],
)


PP_SPEC = Rule(
    id="R-PP-SPEC",
    title="Pipeline parallelism with speculative decoding",
    severity="error",
    why=(
        "Older releases refuse any speculative algorithm with pp > 1 in check_server_args (after a "
        "successful resolution); newer ones allow EAGLE only on PD-prefill nodes or with "
        "SGLANG_ENABLE_PP_SPEC=1."
    ),
    sglang=raises("check", "AssertionError"),
    fields=("parallel.pp", "speculative.algorithm"),
    when=lambda ctx, a: (
        a.get("pp_size", 1) > 1
        and (
            (
                algo(a) is not None
                and (
                    variant(ctx, "R-PP-SPEC") != 1
                    or (
                        algo(a) == "EAGLE"
                        and not a.get("enable_multi_layer_eagle")
                        and ctx.env.get("SGLANG_ENABLE_PP_SPEC", "").lower()
                        not in ("1", "true", "yes", "y")
                        and a.get("disaggregation_mode") != "prefill"
                    )
                )
            )
            # the wording that names mixed chunked prefill asserts it off too
            or (variant(ctx, "R-PP-SPEC") == 2 and bool(a.get("enable_mixed_chunk")))
        )
    ),
    message=lambda ctx, a: {
        0: "Pipeline parallelism is not compatible with overlap schedule, speculative decoding",
        2: "Pipeline parallelism is not compatible with overlap schedule, speculative decoding, "
        "mixed chunked prefill.",
    }.get(variant(ctx, "R-PP-SPEC"),
          "PP + speculative decoding (MTP) is only supported on prefill nodes "
          "(disaggregation-mode=prefill)"),
    fixes=lambda ctx, a: [Fix("pp 1 (use tp instead)", {"parallel.pp": 1})],
)


_SIZES = (
    ("tp_size", "--tp-size", "parallel.tp"),
    ("pp_size", "--pp-size", "parallel.pp"),
    ("dp_size", "--dp-size", "parallel.dp"),
)


def _not_positive(ctx: Ctx) -> list[str]:
    """The sizes typed below 1 and a static fraction of 0 or less, as `--flag value`."""
    out = [f"{option} {ctx.typed_value(name)}" for name, option, _field in _SIZES
           if isinstance(ctx.typed_value(name), int) and ctx.typed_value(name) < 1]
    fraction = ctx.typed_value("mem_fraction_static")
    if isinstance(fraction, int | float) and fraction <= 0:
        out.append(f"--mem-fraction-static {fraction}")
    return out


def _not_positive_fixes(ctx: Ctx, a: Args) -> list[Fix]:
    edits: dict[str, object] = {field: 1 for name, _option, field in _SIZES
                                if isinstance(ctx.typed_value(name), int)
                                and ctx.typed_value(name) < 1}
    fraction = ctx.typed_value("mem_fraction_static")
    if isinstance(fraction, int | float) and fraction <= 0:
        edits["memory.mem_fraction_static"] = None
    return [Fix("Use 1 for the sizes and let SGLang choose the memory fraction", edits)]


SIZE_NOT_POSITIVE = Rule(
    id="R-SIZE-NOT-POSITIVE",
    title="A size of 0 or less",
    severity="error",
    why=(
        "SGLang's argument code does not check that tp, pp and dp are at least 1 or that "
        "--mem-fraction-static is above 0 (0 % n == 0 passes its divisibility asserts): it "
        "starts no GPU worker for a size of 0 and waits or fails after start, and with no static "
        "pool it stops with \"Not enough memory\"."
    ),
    sglang=RUNTIME,
    fields=("parallel.tp", "parallel.pp", "parallel.dp", "memory.mem_fraction_static"),
    when=lambda ctx, a: bool(_not_positive(ctx)),
    message=lambda ctx, a: (
        ", ".join(_not_positive(ctx)) + ": SGLang accepts the arguments and cannot run them "
        "(no GPU worker, or no memory for the KV cache)."
    ),
    fixes=_not_positive_fixes,
)


def pp_partition_env(ctx: Ctx) -> str | None:
    """The environment variable the release's `get_pp_indices` reads for a layer partition."""
    checks = ctx.release.traits.get("pp_partition_checks") or {}
    return checks.get("env")


def pp_partition(ctx: Ctx) -> tuple[int, ...] | None:
    """The layer partition the launch sets, parsed as `get_pp_indices` parses it (`int(x) for
    x in value.split(",")`); None when unset or not such a list."""
    name = pp_partition_env(ctx)
    if not name or name not in ctx.env:
        return None
    try:
        return tuple(int(layer) for layer in str(ctx.env[name]).split(","))
    except ValueError:
        return None


def _partition_error(ctx: Ctx, a: Args) -> tuple[str, str] | None:
    """(message, site) of the ValueError the release's `get_pp_indices` raises for the layer
    partition the launch sets (trait `pp_partition_checks`, in the function's order: parse,
    count, sum); None when it is accepted, unset, or the sum cannot be told (no model facts)."""
    name = pp_partition_env(ctx)
    if not name or name not in ctx.env:
        return None
    pp = int(a.get("pp_size") or 1)
    layers = ctx.facts.num_layers if ctx.facts is not None else None
    names: dict[str, object] = {"partition_list_str": str(ctx.env[name]), "pp_size": pp,
                                "num_hidden_layers": layers}
    partitions = pp_partition(ctx)
    if partitions is None:
        kind = "parse"
    else:
        names["partitions"] = list(partitions)
        if len(partitions) != pp:
            kind = "count"
        elif layers is not None and sum(partitions) != layers:
            kind = "sum"
        else:
            return None
    check = (ctx.release.traits.get("pp_partition_checks") or {}).get(kind)
    if not check:
        return None
    return _sglang_text(check["message"], names), check["site"]


def _sglang_text(expression: str, names: dict[str, object]) -> str:
    """SGLang's own message expression, read from the release (an f-string or a literal's
    `.format(...)`), rendered with the values of the names it reads; the expression itself when
    it uses anything else (names, `len(...)` and `sum(...)` of them are understood)."""
    def value(node: ast.expr) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("len", "sum") and len(node.args) == 1):
            inner = value(node.args[0])
            if isinstance(inner, list):
                return len(inner) if node.func.id == "len" else sum(inner)
        raise ValueError(ast.unparse(node))

    def render(node: ast.expr) -> str:
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    item = value(part.value)
                    parts.append(repr(item) if part.conversion == ord("r") else str(item))
                else:
                    parts.append(str(value(part)))
            return "".join(parts)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format" and isinstance(node.func.value, ast.Constant)):
            return str(node.func.value.value).format(*(value(arg) for arg in node.args))
        return str(value(node))

    try:
        return render(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ValueError, IndexError, KeyError):
        return expression


def _partition_fixes(ctx: Ctx, a: Args) -> list[Fix]:
    name = pp_partition_env(ctx)
    if not name:
        return []
    fixes = [Fix(f"Remove {name} (SGLang splits the layers itself)", {}, {name: None})]
    if ctx.facts is not None:
        from wizard.memory import pp_stage_layers

        pp = int(a.get("pp_size") or 1)
        split = pp_stage_layers(ctx.facts.num_layers, pp, ctx.release.behaviour.pp_layer_split)
        value = ",".join(map(str, split))
        fixes.append(Fix(f"{name}={value} ({ctx.facts.num_layers} layers over {pp} stages)", {},
                         {name: value}))
    return fixes


PP_PARTITION = Rule(
    id="R-PP-PARTITION",
    title="Layer partition of the pipeline stages",
    severity="error",
    why=(
        "SGLANG_PP_LAYER_PARTITION gives each pipeline stage its number of decoder layers; SGLang "
        "reads it only when it builds the model (`get_pp_indices`, after the arguments pass and "
        "the processes start) and stops with a ValueError unless it is a comma-separated list "
        "of integers, one per stage (--pp-size), adding up to the model's layers."
    ),
    sglang=Raises("runtime", "ValueError"),
    fields=("env", "parallel.pp"),
    when=lambda ctx, a: _partition_error(ctx, a) is not None,
    message=lambda ctx, a: "{} (get_pp_indices at {}, when the model is built)".format(
        *(_partition_error(ctx, a) or ("", ""))),
    fixes=_partition_fixes,
)
