"""Findings the product emits outside the engine's run of SGLang's resolution order.

Each is registered here once (id, severity, title, why) and listed in `RULES_BY_ID` beside the
engine's rules; the code that detects it builds the finding with `Check.finding`:

* `wizard.api`: SGLang's argparse on the profile and its extra args, flags of another release,
  extra args that set a field's flag, unset secret references;
* `wizard.multinode`: the multi-node profile checks SGLang does not make;
* `wizard.rules.engine`: a step the engine could not evaluate (a value SGLang would crash on).
"""

from __future__ import annotations

from wizard.rules.model import WIZARD, Check, Raises

ARGPARSE_EXIT = Raises("argparse", "SystemExit")

ARGPARSE = Check(
    id="R-ARGPARSE",
    title="SGLang's parser refuses the command",
    severity="error",
    why="SGLang's argparse parser exits with code 2 before anything else runs.",
    sglang=ARGPARSE_EXIT,
    fields=("extra_args",),
)

ARGPARSE_CHOICE = Check(
    id="R-ARGPARSE-CHOICE",
    title="A flag takes one of SGLang's choices",
    severity="error",
    why="SGLang's argparse parser only accepts the listed values and exits with code 2.",
    sglang=ARGPARSE_EXIT,
    fields=(),
)

CLI_RENAMES = Check(
    id="R-CLI-RENAMES",
    title="Flag not available in this SGLang version",
    severity="error",
    why=(
        "SGLang's argparse parser rejects flags it does not declare; this flag was added, "
        "renamed or removed between releases (read from each release's flag table)."
    ),
    sglang=ARGPARSE_EXIT,
    fields=(),
)

EXTRA_ARGS_FIELD = Check(
    id="R-EXTRA-ARGS-FIELD",
    title="Extra args set a flag that has its own field",
    severity="error",
    why=(
        "A flag given twice is ambiguous (argparse keeps the last one), so the wizard "
        "writes each field's flag once, from the field."
    ),
    sglang=WIZARD,
    fields=("extra_args",),
)

ENV_SECRET_UNSET = Check(
    id="R-ENV-SECRET-UNSET",
    title="A secret reference is not set here",
    severity="warning",
    why=(
        "Profiles never hold a secret's value; the launch reads it from the environment "
        "of the wizard at launch time."
    ),
    sglang=WIZARD,
    fields=("env",),
)

UNEVALUABLE = Check(
    id="R-UNEVALUABLE",
    title="A value SGLang cannot handle",
    severity="error",
    why=(
        "The arguments contain a value SGLang's own code would crash on at this step "
        "(e.g. page size 0); the remaining checks assume it is fixed."
    ),
    sglang=Raises("resolve"),
    fields=(),
)

# ------------------------------------------------------------- multi-node profile checks

NODES_COUNT = Check(
    id="R-NODES-COUNT",
    title="The node list and --nnodes differ",
    severity="error",
    why="Each listed host runs one node rank; SGLang waits until all nnodes ranks joined.",
    sglang=WIZARD,
    fields=("parallel.nnodes", "nodes.hosts"),
)

NODES_EXTRA_ARGS = Check(
    id="R-NODES-EXTRA-ARGS",
    title="Per-node flags in extra_args",
    severity="error",
    why="The same extra_args go to every node, so a fixed node rank would start two rank-0s.",
    sglang=WIZARD,
    fields=("extra_args",),
)

NODES_DUPLICATE = Check(
    id="R-NODES-DUPLICATE",
    title="The same host twice",
    severity="error",
    why="Two ranks on one host would share its GPUs from GPU 0.",
    sglang=WIZARD,
    fields=("nodes.hosts",),
)

NODES_GPU_KIND = Check(
    id="R-NODES-GPU-KIND",
    title="Different GPU kinds on the nodes",
    severity="warning",
    why="One tensor-parallel group needs the same kernels on every GPU.",
    sglang=WIZARD,
    fields=("nodes.hosts",),
)

NODE_GPUS_SPARE = Check(
    id="R-NODE-GPUS-SPARE",
    title="GPUs per node: more than tp * pp / nnodes",
    severity="info",
    why=(
        "Each node starts tp * pp / nnodes workers on its own GPUs; the GPUs beyond them stay "
        "idle. (A node with fewer GPUs than its workers is R-NODE-GPUS, an error.)"
    ),
    sglang=WIZARD,
    fields=("nodes.hosts", "parallel.tp"),
)

NODES_IFNAME = Check(
    id="R-NODES-IFNAME",
    title="Network interface for NCCL and Gloo",
    severity="info",
    why=(
        "NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME pin the interface of the rendezvous and "
        "the collectives; nodes.interface sets both on every node."
    ),
    sglang=WIZARD,
    fields=("nodes.interface",),
)

CHECKS: tuple[Check, ...] = (
    ARGPARSE,
    ARGPARSE_CHOICE,
    CLI_RENAMES,
    EXTRA_ARGS_FIELD,
    ENV_SECRET_UNSET,
    UNEVALUABLE,
    NODES_COUNT,
    NODES_EXTRA_ARGS,
    NODES_DUPLICATE,
    NODES_GPU_KIND,
    NODE_GPUS_SPARE,
    NODES_IFNAME,
)
