"""The speculative algorithms with a worker of their own: DFLASH (a block-diffusion draft),
STANDALONE (a separate small model), NGRAM (no draft model).
"""

from __future__ import annotations

from wizard.rules.common import DP_ATTENTION_OFF, algo, dp_attention, variant
from wizard.rules.model import SILENT, Rule, gt, raises
from wizard.rules.report import Fix

DFLASH_DPATTN = Rule(
    id="R-DFLASH-DPATTN",
    title="DFLASH and DP attention",
    severity="error",
    why=(
        "The DFLASH worker does not synchronise drafts across attention-DP ranks (some releases: "
        "only on NPU; later ones: only with a DP LM head)."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.algorithm", "parallel.enable_dp_attention"),
    # Variants: 0 refuses dp attention, 1 asks for a DP LM head, 2 refuses it off NPU.
    when=lambda ctx, a: (
        algo(a) == "DFLASH"
        and dp_attention(ctx, a)
        and {
            0: True,
            1: not a.get("enable_dp_lm_head"),
            2: a.get("device") != "npu",
        }[variant(ctx, "R-DFLASH-DPATTN")]
    ),
    message=lambda ctx, a: (
        "Currently DFLASH speculative decoding does not support dp attention.",
        "DFLASH with dp attention requires --enable-dp-lm-head.",
        "Currently DFLASH speculative decoding does not support dp attention on non-NPU devices.",
    )[variant(ctx, "R-DFLASH-DPATTN")],
    fixes=lambda ctx, a: [DP_ATTENTION_OFF],
)


DFLASH_PP = Rule(
    id="R-DFLASH-PP",
    title="DFLASH needs pp 1",
    severity="error",
    why="DFLASH does not support pipeline parallelism.",
    sglang=raises("resolve", "ValueError"),
    fields=("parallel.pp",),
    when=lambda ctx, a: algo(a) == "DFLASH" and a.get("pp_size", 1) != 1,
    message=lambda ctx, a: "Currently DFLASH speculative decoding only supports pp_size == 1.",
    fixes=lambda ctx, a: [Fix("pp 1", {"parallel.pp": 1})],
)


DFLASH_DRAFT = Rule(
    id="R-DFLASH-DRAFT",
    title="DFLASH needs a draft model",
    severity="error",
    why="DFLASH drafts with a separate block-diffusion draft model; there is no default.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.draft_model_path",),
    when=lambda ctx, a: algo(a) == "DFLASH" and a.get("speculative_draft_model_path") is None,
    message=lambda ctx, a: (
        "DFLASH speculative decoding requires setting --speculative-draft-model-path."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Set the DFLASH draft model path",
            {"speculative.draft_model_path": "/path/to/dflash-draft"},
        )
    ],
)


DFLASH_BLOCK_MISMATCH = Rule(
    id="R-DFLASH-BLOCK",
    title="DFLASH block size and draft tokens differ",
    severity="error",
    why="For DFLASH the verify window is the block size; the two flags name the same value.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.num_draft_tokens", "speculative.dflash_block_size"),
    when=lambda ctx, a: (
        algo(a) == "DFLASH"
        and gt(a.get("speculative_dflash_block_size"), 0)
        and a.get("speculative_num_draft_tokens") is not None
        and a.speculative_num_draft_tokens != a.speculative_dflash_block_size
    ),
    message=lambda ctx, a: (
        "Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they "
        f"differ. For DFLASH they must match. speculative_num_draft_tokens={a.speculative_num_draft_tokens}, "
        f"speculative_dflash_block_size={a.speculative_dflash_block_size}."
    ),
    fixes=lambda ctx, a: [
        Fix("Drop --speculative-num-draft-tokens", {"speculative.num_draft_tokens": None})
    ],
)


STANDALONE_DPATTN = Rule(
    id="R-STANDALONE-DPATTN",
    title="STANDALONE does not support DP attention",
    severity="error",
    why="The standalone draft worker has no DP-attention support.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.algorithm", "parallel.enable_dp_attention"),
    when=lambda ctx, a: algo(a) == "STANDALONE" and dp_attention(ctx, a),
    message=lambda ctx, a: (
        "Currently standalone speculative decoding does not support dp attention."
    ),
    fixes=lambda ctx, a: [DP_ATTENTION_OFF],
)


NGRAM_DEVICE = Rule(
    id="R-NGRAM-DEVICE",
    title="NGRAM device support",
    severity="error",
    why="The n-gram cache kernels run on CUDA only in the releases that hold this (later: CUDA, CPU, XPU).",
    sglang=raises("resolve", "ValueError"),
    fields=("server.device", "speculative.algorithm"),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and (
            not str(a.get("device")).startswith("cuda")
            if variant(ctx, "R-NGRAM-DEVICE") == 0
            else a.get("device") not in ("cuda", "cpu", "xpu")
        )
    ),
    message=lambda ctx, a: (
        "Ngram speculative decoding only supports CUDA device."
        if variant(ctx, "R-NGRAM-DEVICE") == 0
        else "Ngram speculative decoding only supports CUDA, CPU, or XPU devices."
    ),
    fixes=lambda ctx, a: [Fix("Run on CUDA", {"server.device": None})],
)


NGRAM_TOPK = Rule(
    id="R-NGRAM-DEFAULTS",
    title="NGRAM overwrites topk with the max BFS breadth",
    severity="adjusted",
    why="For NGRAM, topk is the tree breadth and always comes from --speculative-ngram-max-bfs-breadth (default 10); a typed topk is ignored.",
    sglang=SILENT,
    fields=("speculative.eagle_topk",),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and ctx.typed_value("speculative_eagle_topk") is not None
        and ctx.typed_value("speculative_eagle_topk") != a.speculative_ngram_max_bfs_breadth
    ),
    message=lambda ctx, a: (
        f"speculative_eagle_topk {ctx.typed_value('speculative_eagle_topk')} -> "
        f"{a.speculative_ngram_max_bfs_breadth} (--speculative-ngram-max-bfs-breadth)."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Set the breadth instead",
            {
                "speculative.eagle_topk": None,
                "speculative.ngram_max_bfs_breadth": ctx.typed_value("speculative_eagle_topk"),
            },
        )
    ],
)


NGRAM_CORPUS_BUDGET = Rule(
    id="R-NGRAM-CORPUS",
    title="NGRAM external corpus needs a SAM budget",
    severity="error",
    why="Draft nodes for the external corpus come out of --speculative-ngram-external-sam-budget, which defaults to 0.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.ngram_external_sam_budget", "speculative.ngram_external_corpus_path"),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and a.get("speculative_ngram_external_corpus_path") is not None
        and (a.get("speculative_ngram_external_sam_budget") or 0) <= 0
    ),
    message=lambda ctx, a: (
        "--speculative-ngram-external-sam-budget must be positive when --speculative-ngram-external-corpus-path is set."
    ),
    fixes=lambda ctx, a: [Fix("SAM budget 4", {"speculative.ngram_external_sam_budget": 4})],
)


NGRAM_CORPUS_LIMIT = Rule(
    id="R-NGRAM-CORPUS-LIMIT",
    title="SAM budget larger than the draft tokens allow",
    severity="error",
    why="The external-corpus draft nodes share the tree with the n-gram drafts: at most draft tokens - 1.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.ngram_external_sam_budget",),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and a.get("speculative_ngram_external_corpus_path") is not None
        and gt(a.get("speculative_ngram_external_sam_budget"), 0)
        and a.speculative_ngram_external_sam_budget
        > (a.get("speculative_num_draft_tokens") or 12) - 1
    ),
    message=lambda ctx, a: (
        "speculative_ngram_external_sam_budget must be less than or equal to speculative_num_draft_tokens - 1 "
        f"({(a.get('speculative_num_draft_tokens') or 12) - 1})."
    ),
    fixes=lambda ctx, a: [
        Fix(
            "Budget = draft tokens - 1",
            {
                "speculative.ngram_external_sam_budget": (
                    a.get("speculative_num_draft_tokens") or 12
                )
                - 1
            },
        )
    ],
)


NGRAM_PAGE = Rule(
    id="R-NGRAM-PAGE",
    title="NGRAM tree with paged KV needs flashinfer",
    severity="error",
    why=(
        "NGRAM's breadth (default 10) makes a tree; with pages larger than one token only flashinfer verifies it "
        "correctly. On Hopper the default backend was already fixed as fa3 before NGRAM set topk, so "
        "--page-size alone fails."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("attention.page_size", "attention.backend", "speculative.ngram_max_bfs_breadth"),
    when=lambda ctx, a: (
        algo(a) == "NGRAM"
        and gt(a.get("speculative_eagle_topk"), 1)
        and gt(a.get("page_size"), 1)
        and a.get("attention_backend") != "flashinfer"
    ),
    message=lambda ctx, a: (
        f"speculative_eagle_topk({a.speculative_eagle_topk}) > 1 with page_size({a.page_size}) > 1 is unstable "
        "and produces incorrect results for paged attention backends. This combination is only supported "
        "for the 'flashinfer' backend."
    ),
    fixes=lambda ctx, a: [
        Fix("Use flashinfer", {"attention.backend": "flashinfer"}),
        Fix("Page size 1", {"attention.page_size": 1}),
        Fix("Breadth 1", {"speculative.ngram_max_bfs_breadth": 1}),
    ],
)


NGRAM_DPATTN = Rule(
    id="R-NGRAM-DPATTN",
    title="NGRAM does not support DP attention",
    severity="error",
    why="The n-gram worker has no DP-attention support.",
    sglang=raises("resolve", "ValueError"),
    fields=("speculative.algorithm", "parallel.enable_dp_attention"),
    when=lambda ctx, a: algo(a) == "NGRAM" and dp_attention(ctx, a),
    message=lambda ctx, a: "Currently ngram speculative decoding does not support dp attention.",
    fixes=lambda ctx, a: [DP_ATTENTION_OFF],
)
