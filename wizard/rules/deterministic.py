"""Deterministic inference (`--enable-deterministic-inference`, or `--rl-on-policy-target`, which
turns it on): SGLang's `_handle_deterministic_inference` picks a fallback attention backend, refuses
the backends it cannot make batch-invariant, and turns the radix cache off for the backends whose
prefix cache is not deterministic yet.

What it does differs by release, and each release's data says it (trait `deterministic_inference`,
read from the handler by `add-release`): whether the handler runs before the default attention
backend is chosen (it then sees an untyped backend as None and picks its fallback: triton for the
DeepSeek-style architectures on Blackwell, flashinfer for the others there, fa3 everywhere else) or
after (it then checks the default like a typed backend), the accepted backends, the
DeepSeek-style architectures and their backends, and the backends that keep the radix cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wizard.rules.model import Args, Ctx, Rule, raises
from wizard.rules.report import Fix

# The backend every release accepts for deterministic inference, keeps the radix cache with and
# runs on every GPU kind (the fix of both refusals).
_PORTABLE = "triton"


def settings(ctx: Ctx, a: Args) -> dict[str, Any] | None:
    """The release's deterministic-inference handling when the launch turns it on, else None."""
    det: dict[str, Any] = ctx.release.traits.get("deterministic_inference") or {}
    if not det:
        return None
    if not (a.get("enable_deterministic_inference") or a.get("rl_on_policy_target") is not None):
        return None
    return det


def _mla_model(ctx: Ctx, archs: Sequence[str]) -> bool:
    return ctx.arch is not None and ctx.arch in archs


def fallback_backend(ctx: Ctx, det: dict[str, Any]) -> str | None:
    """The backend the handler picks for an unset one (None where the release picks none)."""
    fallback = det.get("fallback")
    if not fallback:
        return None
    if ctx.gpu.is_sm100 or ctx.gpu.is_sm120:
        return str(fallback["blackwell_mla"] if _mla_model(ctx, det.get("fallback_archs") or ())
                   else fallback["blackwell"])
    return str(fallback["other"])


def _fill(ctx: Ctx, a: Args) -> None:
    det = settings(ctx, a)
    if det is None:
        return
    a.enable_deterministic_inference = True
    if a.get("attention_backend") is None:
        backend = fallback_backend(ctx, det)
        if backend is not None:
            a.attention_backend = backend


def _radix(ctx: Ctx, a: Args) -> None:
    det = settings(ctx, a)
    radix_backends = det.get("radix_backends") if det is not None else None
    if radix_backends is not None and a.get("attention_backend") not in radix_backends:
        a.disable_radix_cache = True


def position(release: Any) -> str | None:
    """Where the release's handler stands: ``before_default`` / ``after_default`` (None: none)."""
    det = release.traits.get("deterministic_inference") or {}
    return str(det.get("position", "after_default")) if det else None


def fill(ctx: Ctx, a: Args) -> None:
    """The handler's silent first part: on, and the fallback for an unset backend."""
    _fill(ctx, a)


def radix(ctx: Ctx, a: Args) -> None:
    """The handler's last step: the radix cache off for the backends that cannot keep it."""
    _radix(ctx, a)


def _fixes(ctx: Ctx, a: Args) -> Sequence[Fix]:
    return [Fix(f"Use the {_PORTABLE} attention backend", {"attention.backend": _PORTABLE})]


def _recover(ctx: Ctx, a: Args) -> None:
    a.attention_backend = _PORTABLE


def _backend_refused(ctx: Ctx, a: Args) -> bool:
    det = settings(ctx, a)
    return det is not None and a.get("attention_backend") not in det["choices"]


def _mla_refused(ctx: Ctx, a: Args) -> bool:
    det = settings(ctx, a)
    return (det is not None and _mla_model(ctx, det.get("mla_archs") or ())
            and a.get("attention_backend") in det["choices"]
            and a.get("attention_backend") not in (det.get("mla_backends") or ()))


def _backend_message(ctx: Ctx, a: Args) -> str:
    det: dict[str, Any] = ctx.release.traits.get("deterministic_inference") or {}
    site = ctx.release.site("R-DETERMINISTIC-BACKEND")
    head = (f"Currently only {det.get('choices')} attention backends are supported for "
            "deterministic inference")
    if site is not None and site.variant == 0:
        return head + "."
    return head + f", but you explicitly specified '{a.get('attention_backend')}'."


def _mla_message(ctx: Ctx, a: Args) -> str:
    det: dict[str, Any] = ctx.release.traits.get("deterministic_inference") or {}
    site = ctx.release.site("R-DETERMINISTIC-MLA")
    variant = site.variant if site is not None else 0
    models = "absorbed-MLA models" if variant == 1 else "DeepSeek models"
    # the located wording (anchor variant) prints the radix list, the backends in words
    # ("fa3 and triton") or the handler's own list
    backends = (" and ".join(det.get("mla_backends") or ()) if variant == 2
                else str(det.get("mla_backends")) if variant == 3
                else str(det.get("radix_backends")))
    return (f"Currently only {backends} attention backends are supported for deterministic "
            f"inference with {models}. But you're using {a.get('attention_backend')}.")


_WHY_BACKEND = (
    "Deterministic inference needs batch-invariant attention kernels; SGLang accepts only the "
    "backends it has them for (the list is read from the release) and refuses any other, typed or "
    "(in releases whose handler runs after the default is chosen) picked by default, e.g. "
    "trtllm_mha / trtllm_mla on Blackwell. Where the handler runs before the default, an unset "
    "backend becomes its fallback instead."
)
_WHY_MLA = (
    "For DeepSeek-style (MLA) models SGLang's deterministic path supports fewer backends (the list "
    "and the architectures are read from the release); flashinfer's MLA kernels are not "
    "batch-invariant."
)


BACKEND = Rule(
    id="R-DETERMINISTIC-BACKEND",
    title="Deterministic inference with an attention backend it does not support",
    severity="error",
    why=_WHY_BACKEND,
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend", "extra_args"),
    when=_backend_refused,
    message=_backend_message,
    fixes=_fixes,
    recover=_recover,
)
MLA = Rule(
    id="R-DETERMINISTIC-MLA",
    title="Deterministic inference on an MLA model with an unsupported attention backend",
    severity="error",
    why=_WHY_MLA,
    sglang=raises("resolve", "ValueError"),
    fields=("attention.backend", "extra_args"),
    when=_mla_refused,
    message=_mla_message,
    fixes=_fixes,
    recover=_recover,
)
RULES: tuple[Rule, ...] = (BACKEND, MLA)
