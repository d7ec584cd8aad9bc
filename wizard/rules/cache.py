"""The hierarchical cache and the radix cache it offloads (the mamba radix cache of hybrid models is
in wizard.rules.hybrid).
"""

from __future__ import annotations

from wizard.rules.model import Rule, raises
from wizard.rules.report import Fix

HICACHE_NO_RADIX = Rule(
    id="R-HICACHE-NO-RADIX",
    title="Hierarchical cache without the radix cache",
    severity="error",
    why=(
        "The hierarchical cache offloads the radix (prefix) cache's KV to host memory; with the "
        "radix cache disabled (typed, or by SGLang for models it cannot prefix-cache) there is "
        "nothing to offload, and SGLang refuses the pair."
    ),
    sglang=raises("resolve", "ValueError"),
    fields=("scheduling.disable_radix_cache", "extra_args"),
    when=lambda ctx, a: bool(a.get("enable_hierarchical_cache")) and bool(
        a.get("disable_radix_cache")),
    message=lambda ctx, a: (
        "The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive "
        "and cannot be used at the same time. Please use only one of them."
    ),
    fixes=lambda ctx, a: (
        [Fix("Keep the radix cache", {"scheduling.disable_radix_cache": False})]
        if ctx.typed_value("disable_radix_cache") else []
    ),
    recover=lambda ctx, a: a.__setitem__("enable_hierarchical_cache", False),
)
