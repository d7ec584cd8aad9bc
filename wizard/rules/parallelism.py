"""Parallelism: tp against the attention-DP size, pipeline parallelism with speculative decoding.
(The multi-node checks are in wizard.rules.multinode.)
"""

from __future__ import annotations

from wizard.rules.common import DP_ATTENTION_OFF, algo, attention_dp_size, dp_attention, variant
from wizard.rules.model import RUNTIME, Args, Ctx, Rule, raises
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
