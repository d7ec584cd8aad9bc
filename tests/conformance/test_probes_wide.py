"""The wide launches' release-data probes (`wizard/conformance/probes_wide.py`) on tiny source
trees shaped like SGLang's."""

from __future__ import annotations

import textwrap
from pathlib import Path

from wizard.conformance.locate import SourceTree
from wizard.conformance.probes_wide import (
    moe_runner_sm100,
    quantization_methods,
    radix_disables_overlap,
)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


QUANT = """
    from sglang.srt.utils import is_cuda, is_hip, is_npu, mxfp_supported
    _is_mxfp_supported = mxfp_supported()
    BASE_QUANTIZATION_METHODS: Dict[str, Type[QuantizationConfig]] = {
        "fp8": Fp8Config,
        "gptq": GPTQConfig,
    }
    if is_cuda() or (_is_mxfp_supported and is_hip()):
        BASE_QUANTIZATION_METHODS.update({"mxfp4": Mxfp4Config})
    if is_npu():
        BASE_QUANTIZATION_METHODS.update({"w4a4": W4A4Config})
    QUANTIZATION_METHODS = {**BASE_QUANTIZATION_METHODS}
"""


def test_quantization_methods_per_platform(tmp_path: Path) -> None:
    _write(tmp_path, "sglang/srt/layers/quantization/__init__.py", QUANT)
    assert quantization_methods(tmp_path) == {
        "cuda": ["fp8", "gptq", "mxfp4"], "hip": ["fp8", "gptq"],
        "hip_gfx95": ["fp8", "gptq", "mxfp4"]}
    # a block that reads something else than the platform: no table (the rule abstains)
    _write(tmp_path, "sglang/srt/layers/quantization/__init__.py",
           QUANT.replace("if is_npu():", "if envs.SOMETHING:"))
    assert quantization_methods(tmp_path) is None


SERVER_ARGS = """
    class ServerArgs:
        def _handle_model_specific_adjustments(self):
            if model_arch in ["Qwen3MoeForCausalLM", "Qwen3NextForCausalLM"]:
                if is_sm100_supported():
                    if (
                        (self.quantization in ("fp8", "modelopt_fp4") or self.quantization is None)
                        and self.moe_a2a_backend == "none"
                        and self.moe_runner_backend == "auto"
                    ):
                        self.moe_runner_backend = "flashinfer_trtllm"
            elif model_arch in ["Qwen3NextForCausalLM"]:
                if not self.disable_radix_cache:
                    logger.warning("MambaRadixCache is not compatible with overlap schedule")
                    self.disable_overlap_schedule = True
            elif model_arch in ["GptOssForCausalLM"]:
                if is_sm100_supported():
                    self.attention_backend = "trtllm_mha"
                elif is_hip():
                    self.attention_backend = "aiter"
            if use_mla:
                head_num = model_config.get_num_kv_heads(self.tp_size)
                if head_num == 128 or head_num == 16:
                    self.attention_backend = "aiter"
"""


def test_model_branch_probes(tmp_path: Path) -> None:
    _write(tmp_path, "sglang/srt/server_args.py", SERVER_ARGS)
    tree = SourceTree(tmp_path)
    [entry] = moe_runner_sm100(tree)
    assert entry["archs"] == ["Qwen3MoeForCausalLM", "Qwen3NextForCausalLM"]
    assert entry["quantizations"] == ["fp8", "modelopt_fp4"] and entry["unquantized"] is True
    assert entry["runner"] == "flashinfer_trtllm"
    assert radix_disables_overlap(tree) == ["Qwen3NextForCausalLM"]
