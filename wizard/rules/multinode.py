"""Multi-node rules: SGLang's own checks of `--nnodes` and the checks SGLang does not make.

SGLang's argument code checks two things about several nodes, both in `check_server_args`:
`(tp * pp) % nnodes == 0` (the first statement of the function, so it hides every later check)
and that data parallelism across nodes only runs as attention DP. Their raise sites come from the
release data (anchors `R-MULTINODE-TP` and `R-MULTINODE-DP`).

What SGLang accepts and then hangs on at start (every node waits for ranks that never come) is
checked here as `runtime` errors: a node rank outside `0..nnodes-1`, no or a malformed
`--dist-init-addr`, and a GPU count per node that does not match `tp * pp / nnodes`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from wizard.limits import MAX_PARALLEL
from wizard.rendezvous import RendezvousError, parse_rendezvous
from wizard.rules.model import RUNTIME, Args, Ctx, Rule, raises
from wizard.rules.report import Fix


def nnodes(a: Args) -> int:
    """`--nnodes` as SGLang holds it (1 when unset)."""
    value = a.get("nnodes")
    return value if isinstance(value, int) else 1


def _variant(ctx: Ctx, rule_id: str) -> int:
    site = ctx.release.site(rule_id)
    return site.variant if site is not None else 0


def gpus_per_node(a: Args) -> int | None:
    """GPUs each node runs (`tp * pp / nnodes`), None when they do not divide."""
    total = int(a.get("tp_size") or 1) * int(a.get("pp_size") or 1)
    n = nnodes(a)
    return total // n if n > 0 and total % n == 0 else None


def _next_tp(a: Args) -> int:
    """The smallest tp >= the current one with `(tp * pp) % nnodes == 0` (computed, not searched:
    tp must be a multiple of nnodes / gcd(nnodes, pp))."""
    tp, pp, n = int(a.get("tp_size") or 1), max(int(a.get("pp_size") or 1), 1), max(nnodes(a), 1)
    step = n // math.gcd(n, pp)
    return max(-(-tp // step) * step, step)


def _tp_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    tp = _next_tp(a)
    fixes = [Fix("One node (nnodes 1)", {"parallel.nnodes": 1})]
    if tp <= MAX_PARALLEL:  # no fix to a tp no machine has
        fixes.insert(
            0, Fix(f"tp {tp} (tp * pp a multiple of {nnodes(a)} nodes)", {"parallel.tp": tp})
        )
    return fixes


MULTINODE_TP = Rule(
    id="R-MULTINODE-TP",
    title="tp * pp must be a multiple of the number of nodes",
    severity="error",
    why=(
        "Every node runs the same number of GPU workers: tp * pp / nnodes. SGLang checks that this "
        "divides as the very first statement of check_server_args, so this error hides every later "
        "argument check (e.g. pipeline parallelism with speculative decoding)."
    ),
    sglang=raises("check", "AssertionError"),
    fields=("parallel.tp", "parallel.pp", "parallel.nnodes"),
    when=lambda ctx, a: (
        a.get("ep_join_mode") != "scale"
        and nnodes(a) > 0
        and (int(a.get("tp_size") or 1) * int(a.get("pp_size") or 1)) % nnodes(a) != 0
    ),
    message=lambda ctx, a: (
        f"tp_size must be divisible by number of nodes (tp {a.get('tp_size') or 1} * pp "
        f"{a.get('pp_size') or 1} is not a multiple of nnodes {nnodes(a)})"
    ),
    fixes=_tp_fixes,
)


def _dp_across_nodes(ctx: Ctx, a: Args) -> bool:
    if int(a.get("dp_size") or 1) <= 1 or nnodes(a) == 1:
        return False
    if _variant(ctx, "R-MULTINODE-DP") == 0:
        return not a.get("enable_dp_attention")
    return True


def _dp_fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    dp = int(a.get("dp_size") or 1)
    fixes = []
    if ctx.release.attn_dp_field:
        fixes.append(Fix(f"Attention DP across the nodes (--attn-dp-size {dp}, dp 1)",
                         {"parallel.attn_dp_size": dp, "parallel.dp": 1,
                          "parallel.enable_dp_attention": False}))
    else:
        fixes.append(Fix("Use DP attention across the nodes (--enable-dp-attention)",
                         {"parallel.enable_dp_attention": True}))
    fixes.append(Fix("dp 1 (one replica spread over the nodes)", {"parallel.dp": 1}))
    return fixes


MULTINODE_DP = Rule(
    id="R-MULTINODE-DP",
    title="Data parallelism across nodes only as attention DP",
    severity="error",
    why=(
        "SGLang's data-parallel controller starts its replicas on one node; across nodes it only "
        "supports DP attention (one tensor-parallel group whose attention is split). Older releases "
        "accept --dp with --enable-dp-attention; releases with --attn-dp-size refuse any --dp > 1 "
        "on several nodes."
    ),
    sglang=raises("check", "AssertionError"),
    fields=("parallel.dp", "parallel.enable_dp_attention", "parallel.nnodes"),
    when=_dp_across_nodes,
    message=lambda ctx, a: (
        "multi-node data parallel is not supported unless dp attention!"
        if _variant(ctx, "R-MULTINODE-DP") == 0
        else "multi-node data-parallel replicas are not supported; use attention DP "
        "(--attn-dp-size) across nodes"
    ),
    fixes=_dp_fixes,
)


def _attn_dp(a: Args) -> int:
    return int(a.get("attn_dp_size") or 1)


ATTN_DP_WITH_DP = Rule(
    id="R-ATTN-DP-WITH-DP",
    title="Data-parallel replicas and attention DP together",
    severity="error",
    why=(
        "Releases with --attn-dp-size split attention data parallelism from data-parallel "
        "replicas and refuse both at once in their data-parallelism step: either replicas "
        "(--dp-size, one node) or attention DP inside one tensor-parallel group (--attn-dp-size, "
        "also across nodes)."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("parallel.dp", "parallel.attn_dp_size"),
    when=lambda ctx, a: ctx.release.attn_dp_field and _attn_dp(a) > 1
    and int(a.get("dp_size") or 1) > 1,
    message=lambda ctx, a: (
        f"--dp-size {a.get('dp_size')} with --attn-dp-size {_attn_dp(a)}: data-parallel "
        "replicas combined with attention data parallelism are not supported."
    ),
    fixes=lambda ctx, a: [
        Fix("Attention DP only (dp 1)", {"parallel.dp": 1}),
        Fix("Replicas only (no --attn-dp-size)", {"parallel.attn_dp_size": None}),
    ],
)


# ----------------------------------------------------------------- what SGLang does not check


def _rank(a: Args) -> int:
    value = a.get("node_rank")
    return value if isinstance(value, int) else 0


NODE_RANK_RANGE = Rule(
    id="R-NODE-RANK",
    title="Node rank outside 0..nnodes-1",
    severity="error",
    why=(
        "SGLang does not check --node-rank against --nnodes: a rank of nnodes or more starts "
        "workers whose global ranks do not exist, and every node then waits in the distributed "
        "rendezvous until it times out."
    ),
    sglang=RUNTIME,
    fields=("parallel.nnodes",),
    when=lambda ctx, a: not 0 <= _rank(a) < max(nnodes(a), 1),
    message=lambda ctx, a: (
        f"--node-rank {_rank(a)} with --nnodes {nnodes(a)}: ranks run from 0 to "
        f"{max(nnodes(a), 1) - 1}; the launch hangs in the rendezvous"
    ),
    fixes=lambda ctx, a: [Fix(f"nnodes {_rank(a) + 1}", {"parallel.nnodes": _rank(a) + 1})]
    if _rank(a) >= 0 else [],
)

DIST_INIT_MISSING = Rule(
    id="R-DIST-INIT-ADDR",
    title="Several nodes need --dist-init-addr",
    severity="error",
    why=(
        "Without --dist-init-addr every node rendezvouses with itself on 127.0.0.1 and waits "
        "forever for the other nodes. Pass the address of node rank 0 that every node can reach, "
        "with a free port: --dist-init-addr 10.0.0.1:5000 (the same on every node)."
    ),
    sglang=RUNTIME,
    fields=("parallel.nnodes",),
    when=lambda ctx, a: nnodes(a) > 1 and not a.get("dist_init_addr"),
    message=lambda ctx, a: (
        f"--nnodes {nnodes(a)} without --dist-init-addr: the nodes cannot find each other"
    ),
)


def _addr_problem(a: Args) -> str | None:
    value = a.get("dist_init_addr")
    if not value:
        return None
    try:
        parse_rendezvous(str(value))
    except RendezvousError as exc:
        return str(exc)
    return None


DIST_INIT_FORMAT = Rule(
    id="R-DIST-INIT-FORMAT",
    title="--dist-init-addr must be host:port",
    severity="error",
    why=(
        "SGLang parses --dist-init-addr only when the workers start (NetworkAddress.parse): a "
        "missing port or an unbracketed IPv6 address fails on every node after the arguments "
        "were accepted."
    ),
    sglang=RUNTIME,
    fields=("parallel.nnodes",),
    when=lambda ctx, a: _addr_problem(a) is not None,
    message=lambda ctx, a: f"--dist-init-addr {a.get('dist_init_addr')!r}: {_addr_problem(a)}",
)


def _gpu_mismatch(ctx: Ctx, a: Args) -> bool:
    per_node = gpus_per_node(a)
    return nnodes(a) > 1 and ctx.gpus is not None and per_node is not None and per_node > ctx.gpus


NODE_GPUS = Rule(
    id="R-NODE-GPUS",
    title="GPUs per node: tp * pp / nnodes",
    severity="error",
    why=(
        "Each node starts tp * pp / nnodes GPU workers on its own GPUs (from --base-gpu-id). A node "
        "with fewer GPUs fails to place its workers; SGLang does not compare the count up front."
    ),
    sglang=RUNTIME,
    fields=("parallel.tp", "parallel.pp", "parallel.nnodes", "gpu.count"),
    when=_gpu_mismatch,
    message=lambda ctx, a: (
        f"each node runs tp {a.get('tp_size') or 1} * pp {a.get('pp_size') or 1} / "
        f"{nnodes(a)} nodes = {gpus_per_node(a)} GPU workers but has {ctx.gpus} GPUs"
    ),
    fixes=lambda ctx, a: [
        Fix(f"nnodes {n}", {"parallel.nnodes": n})
        for n in (nnodes(a) * 2,)
        if ctx.gpus and (int(a.get("tp_size") or 1) * int(a.get("pp_size") or 1)) % n == 0
        and (int(a.get("tp_size") or 1) * int(a.get("pp_size") or 1)) // n <= ctx.gpus
    ],
)

def gpu_workers(a: Args) -> int:
    """GPU worker processes SGLang starts on one node: tp * pp, times dp unless DP attention
    runs inside the TP group (DataParallelController gives each dp rank its own tp * pp GPUs)."""
    tp, pp = int(a.get("tp_size") or 1), int(a.get("pp_size") or 1)
    dp = 1 if a.get("enable_dp_attention") else int(a.get("dp_size") or 1)
    return tp * pp * max(dp, 1)


def gpus_needed(a: Args) -> int:
    """The highest GPU index a single-node launch uses, plus one: `--base-gpu-id` and
    `--gpu-id-step` place worker i on GPU base + i * step."""
    base = a.get("base_gpu_id")
    step = a.get("gpu_id_step")
    base = base if isinstance(base, int) and base > 0 else 0
    step = step if isinstance(step, int) and step > 0 else 1
    return base + (gpu_workers(a) - 1) * step + 1


def _too_few_gpus(ctx: Ctx, a: Args) -> bool:
    return nnodes(a) <= 1 and ctx.gpus is not None and gpus_needed(a) > ctx.gpus


def _too_few_fixes(ctx: Ctx, a: Args) -> list[Fix]:
    pp = int(a.get("pp_size") or 1)
    dp = 1 if a.get("enable_dp_attention") else max(int(a.get("dp_size") or 1), 1)
    gpus = ctx.gpus or 1
    fixes = []
    if a.get("base_gpu_id") in (None, 0) and a.get("gpu_id_step") in (None, 1):
        tp = gpus // (pp * dp)
        if tp >= 1 and tp != int(a.get("tp_size") or 1):
            fixes.append(Fix(f"tp {tp} (fits {gpus} GPUs)", {"parallel.tp": tp}))
    return fixes


LOCAL_GPUS = Rule(
    id="R-GPUS-TOO-FEW",
    title="More GPU workers than GPUs",
    severity="error",
    why=(
        "SGLang starts tp * pp GPU workers (times dp without DP attention) on GPUs base-gpu-id, "
        "base-gpu-id + gpu-id-step, ...; it does not compare that with the GPUs the host has, so a "
        "worker placed on a GPU that does not exist fails in torch.cuda.set_device "
        "('invalid device ordinal') after the arguments were accepted."
    ),
    sglang=RUNTIME,
    fields=("parallel.tp", "parallel.pp", "parallel.dp", "gpu.count"),
    when=_too_few_gpus,
    message=lambda ctx, a: (
        f"tp {a.get('tp_size') or 1} x pp {a.get('pp_size') or 1}"
        + ("" if a.get("enable_dp_attention") else f" x dp {a.get('dp_size') or 1}")
        + f" needs {gpus_needed(a)} GPUs but {ctx.gpus} "
        + ("is" if ctx.gpus == 1 else "are")
        + " given (gpu.count / --gpus)"
    ),
    fixes=_too_few_fixes,
)

# Evaluated in the release's resolution order (pipeline.py places them).
CHECK_RULES: tuple[Rule, ...] = (MULTINODE_TP, MULTINODE_DP, ATTN_DP_WITH_DP)
# Evaluated after resolution, with the runtime traps.
RUNTIME_RULES: tuple[Rule, ...] = (
    NODE_RANK_RANGE, DIST_INIT_MISSING, DIST_INIT_FORMAT, NODE_GPUS, LOCAL_GPUS
)
