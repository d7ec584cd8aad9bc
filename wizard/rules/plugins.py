"""Flags served by an out-of-tree kernel plugin (`sglang/srt/kernel_plugins/<vendor>/binding.py`):
SGLang's resolution hook for each refuses the launch unless a plugin installed beside SGLang
registers a kernel spec for the model on the GPU; a plain `pip install sglang` has none (the NVIDIA
one looks up its `importlib.metadata` entry point, the AMD one a registry only plugins fill), so on
such an install the hook always raises. The wizard cannot see the host's packages: the finding
says which install it describes and what changes it.
"""

from __future__ import annotations

from wizard.rules.model import Rule, raises


def _plugin_rule(rule_id: str, field: str, vendor: str) -> Rule:
    option = "--" + field.replace("_", "-")
    return Rule(
        id=rule_id,
        title=f"{option} needs its kernel plugin",
        severity="error",
        why=(
            f"{option} swaps the model's forward for the kernels of an out-of-tree {vendor} "
            "plugin; SGLang's resolution hook refuses the launch, listing every reason, unless "
            "a plugin installed beside SGLang registers a spec for this model on this GPU. A "
            "plain `pip install sglang` installs none, so there it always refuses; on a host "
            "with the plugin installed this check may pass (the wizard cannot see the host's "
            "packages, nor which models the plugin covers)."
        ),
        sglang=raises("resolve", "ValueError"),
        fields=("extra_args",),
        when=lambda ctx, a: bool(a.get(field)),
        message=lambda ctx, a: (
            f"{option} cannot run this setup: no {vendor} kernel plugin is installed with a plain "
            f"`pip install sglang=={ctx.requested_version}` (SGLang's own message names the "
            "plugin to install)."
        ),
        drops=(field,),  # typed in the extra args: `wizard.api` offers dropping it
        recover=lambda ctx, a: a.__setitem__(field, False),
    )


NVIDIA_MEGAKERNEL = _plugin_rule("R-NVIDIA-MEGAKERNEL", "enable_nvidia_megakernel", "NVIDIA")
AMD_MONOKERNEL = _plugin_rule("R-AMD-MONOKERNEL", "enable_amd_monokernel", "AMD")
RULES: tuple[Rule, ...] = (NVIDIA_MEGAKERNEL, AMD_MONOKERNEL)
