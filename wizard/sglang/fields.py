"""How profile fields map to SGLang's `ServerArgs` field names (dests) and flags, per version.

The rule engine works on SGLang's own field names. Canonical names are the older spellings; the
few fields SGLang renamed carry their later names here, so output (effective values, rendered
commands) always uses the chosen release's spelling: which one a release has is read from its
dumped flag table (`Release.dests`), never from version numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from wizard.sglang.releases import Release, release_for


@dataclass(frozen=True)
class FieldSpec:
    """One profile field and the SGLang field it sets.

    `dest` is the canonical (older) spelling; `renamed` lists later spellings, oldest first. Which
    spelling a release uses, and whether it has the field at all, is read from that release's
    dumped flag table (`Release.dests`), not from version ranges.
    """

    path: str
    dest: str
    renamed: tuple[str, ...] = ()  # later spellings, oldest first

    def spellings(self) -> tuple[str, ...]:
        """Every known spelling, newest first."""
        return (*reversed(self.renamed), self.dest)

    def dest_for(self, version: str) -> str | None:
        """The SGLang field name in `version` (None when that release has no such flag)."""
        return self.dest_in(release_for(version).dests)

    def dest_in(self, dests: frozenset[str]) -> str | None:
        """The spelling present in a release's set of field names (None: not there)."""
        for name in self.spellings():
            if name in dests:
                return name
        return None

    def flag_for(self, version: str) -> str | None:
        """The primary CLI flag in `version`."""
        dest = self.dest_for(version)
        return None if dest is None else "--" + dest.replace("_", "-")


# argparse dests that `ServerArgs.from_cli_args` copies to another field name
# (older releases' server_args.py `from_cli_args`; newer ones use the field names as dests).
SERVER_ARGS_FIELDS: dict[str, str] = {
    "tensor_parallel_size": "tp_size",
    "pipeline_parallel_size": "pp_size",
    "attention_context_parallel_size": "attn_cp_size",
    "moe_data_parallel_size": "moe_dp_size",
    "data_parallel_size": "dp_size",
    "expert_parallel_size": "ep_size",
}

FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("model.path", "model_path"),
    FieldSpec("model.served_model_name", "served_model_name"),
    FieldSpec("model.tokenizer_path", "tokenizer_path"),
    FieldSpec("model.revision", "revision"),
    FieldSpec("model.dtype", "dtype"),
    FieldSpec("model.trust_remote_code", "trust_remote_code"),
    FieldSpec("model.context_length", "context_length"),
    FieldSpec("model.quantization", "quantization"),
    FieldSpec("model.kv_cache_dtype", "kv_cache_dtype"),
    FieldSpec("model.load_format", "load_format"),
    FieldSpec("parallel.tp", "tp_size"),
    FieldSpec("parallel.dp", "dp_size"),
    FieldSpec("parallel.pp", "pp_size"),
    FieldSpec("parallel.enable_dp_attention", "enable_dp_attention"),
    FieldSpec("parallel.attn_dp_size", "attn_dp_size"),
    FieldSpec("parallel.ep", "ep_size"),
    FieldSpec("parallel.nnodes", "nnodes"),
    FieldSpec("speculative.algorithm", "speculative_algorithm"),
    FieldSpec("speculative.draft_model_path", "speculative_draft_model_path"),
    FieldSpec("speculative.draft_model_revision", "speculative_draft_model_revision"),
    FieldSpec("speculative.num_steps", "speculative_num_steps"),
    FieldSpec("speculative.eagle_topk", "speculative_eagle_topk"),
    FieldSpec("speculative.num_draft_tokens", "speculative_num_draft_tokens"),
    FieldSpec("speculative.accept_threshold_single", "speculative_accept_threshold_single"),
    FieldSpec("speculative.accept_threshold_acc", "speculative_accept_threshold_acc"),
    FieldSpec("speculative.token_map", "speculative_token_map"),
    FieldSpec("speculative.attention_mode", "speculative_attention_mode"),
    FieldSpec("speculative.draft_attention_backend", "speculative_draft_attention_backend"),
    FieldSpec("speculative.moe_runner_backend", "speculative_moe_runner_backend"),
    FieldSpec("speculative.moe_a2a_backend", "speculative_moe_a2a_backend"),
    FieldSpec("speculative.draft_model_quantization", "speculative_draft_model_quantization"),
    FieldSpec("speculative.adaptive", "speculative_adaptive"),
    FieldSpec("speculative.enable_multi_layer_eagle", "enable_multi_layer_eagle"),
    FieldSpec("speculative.skip_dp_mlp_sync", "speculative_skip_dp_mlp_sync"),
    FieldSpec("speculative.dflash_block_size", "speculative_dflash_block_size"),
    FieldSpec(
        "speculative.draft_window_size",
        "speculative_dflash_draft_window_size",
        renamed=("speculative_draft_window_size",),
    ),
    FieldSpec("speculative.ngram_min_bfs_breadth", "speculative_ngram_min_bfs_breadth"),
    FieldSpec("speculative.ngram_max_bfs_breadth", "speculative_ngram_max_bfs_breadth"),
    FieldSpec("speculative.ngram_external_corpus_path", "speculative_ngram_external_corpus_path"),
    FieldSpec("speculative.ngram_external_sam_budget", "speculative_ngram_external_sam_budget"),
    FieldSpec("speculative.use_rejection_sampling", "speculative_use_rejection_sampling"),
    FieldSpec(
        "hybrid.cache_strategy",
        "mamba_scheduler_strategy",
        renamed=("mamba_radix_cache_strategy",),
    ),
    FieldSpec("hybrid.track_interval", "mamba_track_interval"),
    FieldSpec("attention.backend", "attention_backend"),
    FieldSpec("attention.prefill_backend", "prefill_attention_backend"),
    FieldSpec("attention.decode_backend", "decode_attention_backend"),
    FieldSpec("attention.page_size", "page_size"),
    FieldSpec("memory.mem_fraction_static", "mem_fraction_static"),
    FieldSpec("memory.max_running_requests", "max_running_requests"),
    FieldSpec("memory.chunked_prefill_size", "chunked_prefill_size"),
    FieldSpec(
        "memory.cuda_graph_max_bs",
        "cuda_graph_max_bs",
        renamed=("cuda_graph_max_bs_decode",),
    ),
    FieldSpec(
        "memory.cuda_graph_bs", "cuda_graph_bs", renamed=("cuda_graph_bs_decode",)
    ),
    FieldSpec("memory.disable_cuda_graph", "disable_cuda_graph"),
    FieldSpec("scheduling.disable_overlap_schedule", "disable_overlap_schedule"),
    FieldSpec("scheduling.enable_mixed_chunk", "enable_mixed_chunk"),
    FieldSpec("scheduling.disable_radix_cache", "disable_radix_cache"),
    FieldSpec("server.host", "host"),
    FieldSpec("server.port", "port"),
    FieldSpec("server.device", "device"),
)

BY_PATH: dict[str, FieldSpec] = {f.path: f for f in FIELDS}
BY_DEST: dict[str, FieldSpec] = {f.dest: f for f in FIELDS}
for _f in FIELDS:
    for _name in _f.renamed:
        BY_DEST.setdefault(_name, _f)


_FIELD_OF_ARGPARSE_DEST = SERVER_ARGS_FIELDS


def canonical_dest(version_dest: str) -> str:
    """Canonical ServerArgs field name (the older spelling) of a release's field or argparse dest."""
    version_dest = _FIELD_OF_ARGPARSE_DEST.get(version_dest, version_dest)
    spec = BY_DEST.get(version_dest)
    return spec.dest if spec is not None else version_dest


@lru_cache(maxsize=4096)
def version_dest(canonical: str, version: str) -> str:
    """The chosen version's spelling of a canonical field name."""
    spec = BY_DEST.get(canonical)
    if spec is None:
        return canonical
    return spec.dest_for(version) or canonical


def release_dest(canonical: str, release: Release) -> str:
    """A release's spelling of a canonical field name (the canonical name when it has none)."""
    return _dest_in(canonical, release.dests)


@lru_cache(maxsize=16384)
def _dest_in(canonical: str, dests: frozenset[str]) -> str:
    spec = BY_DEST.get(canonical)
    if spec is None:
        return canonical
    return spec.dest_in(dests) or canonical
