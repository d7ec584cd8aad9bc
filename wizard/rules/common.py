"""What the rules of several topics read from the resolved arguments and the release: the
speculative algorithm, the attention backends, attention data parallelism, which wording of a
statement a release has; and the fix shared by every rule that refuses DP attention.
"""

from __future__ import annotations

from wizard.rules.model import Args, Ctx
from wizard.rules.report import Fix

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")


def algo(a: Args) -> str | None:
    """The algorithm as SGLang holds it at this point (None when speculative decoding is off)."""
    value = a.get("speculative_algorithm")
    return value if value else None


def eagle_family(a: Args) -> bool:
    """EAGLE, EAGLE3 or STANDALONE (after NEXTN was aliased to EAGLE)."""
    return algo(a) in EAGLE_FAMILY


def attention_backends(a: Args) -> set[str]:
    """Every attention backend named (common, prefill, decode)."""
    return {
        b
        for b in (
            a.get("attention_backend"),
            a.get("prefill_attention_backend"),
            a.get("decode_attention_backend"),
        )
        if b
    }


def dp_attention(ctx: Ctx, a: Args) -> bool:
    """Attention data parallelism is on (the flag with dp > 1, or `attn_dp_size` > 1 where it exists)."""
    if not ctx.release.attn_dp_field:
        return bool(a.get("enable_dp_attention"))
    return (a.get("attn_dp_size") or 1) > 1


def attention_dp_size(ctx: Ctx, a: Args) -> int:
    """The attention-DP size SGLang divides tp by (`dp_size`, or `attn_dp_size` where it exists)."""
    return int((a.get("attn_dp_size") if ctx.release.attn_dp_field else a.get("dp_size")) or 1)


def variant(ctx: Ctx, rule_id: str) -> int:
    """Which wording of a rule's statement this release has (0: older, 1: newer)."""
    site = ctx.release.site(rule_id)
    return site.variant if site is not None else 0


# The fix shared by every rule that refuses attention data parallelism.
DP_ATTENTION_OFF = Fix(
    "Turn DP attention off", {"parallel.enable_dp_attention": False, "parallel.attn_dp_size": None}
)


def _set(**edits: object) -> dict[str, object]:
    return {k.replace("__", "."): v for k, v in edits.items()}


def hip_default_backend(hip: dict[str, object], is_mla: bool, config_kv_heads: int | None,
                        tp: int) -> str:
    """The `is_hip()` branches of SGLang's default backend, as the release data has them: one
    backend for MHA models; for MLA models one backend when the KV heads per TP rank
    (`get_num_kv_heads(tp_size)`: the config's KV heads // tp, at least 1) are in the release's
    list, another otherwise."""
    if not is_mla:
        return str(hip.get("mha") or "triton")
    heads_needed = list(hip.get("mla_heads") or [])  # type: ignore[call-overload]
    if not heads_needed or config_kv_heads is None:
        return str(hip.get("mla") or "triton")
    per_rank = max(1, config_kv_heads // max(tp, 1))
    return str(hip.get("mla") if per_rank in heads_needed else hip.get("mla_other"))


def hip_attention_backend(ctx: Ctx, a: Args, hip: dict[str, object]) -> str:
    """`hip_default_backend` for the launch being checked."""
    return hip_default_backend(hip, ctx.is_mla,
                               ctx.facts.config_kv_heads if ctx.facts is not None else None,
                               int(a.get("tp_size") or 1))
