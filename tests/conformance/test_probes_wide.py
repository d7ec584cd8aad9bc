"""The wide launches' release-data probes (`wizard/conformance/probes_wide.py`) on tiny source
trees shaped like SGLang's."""

from __future__ import annotations

import textwrap
from pathlib import Path

from wizard.conformance.locate import SourceTree
from wizard.conformance.probes_wide import (
    deprecated_actions,
    deterministic_inference,
    extra_buffer_linear_backend,
    mis_disables_radix,
    mixed_chunk_off_algorithms,
    moe_runner_platform,
    moe_runner_sm100,
    quantization_methods,
    radix_disables_overlap,
    spec_v2_runs_trees,
    trtllm_disables_radix,
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


DETERMINISTIC = """
    DETERMINISTIC_ATTENTION_BACKEND_CHOICES = ["flashinfer", "fa3", "triton"]
    RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND = ["fa3", "triton"]

    class ServerArgs:
        def __post_init__(self):
            self._handle_sampling_backend()
            self._handle_deterministic_inference()
            self._handle_attention_backend_compatibility()

        def _handle_deterministic_inference(self):
            if self.enable_deterministic_inference:
                is_deepseek_model = False
                try:
                    model_arch = hf_config.architectures[0]
                    is_deepseek_model = model_arch in ["DeepseekV3ForCausalLM"]
                except Exception:
                    pass
                if self.attention_backend is None:
                    if is_sm100_supported() or is_sm120_supported():
                        if is_deepseek_model:
                            self.attention_backend = "triton"
                        else:
                            self.attention_backend = "flashinfer"
                    else:
                        self.attention_backend = "fa3"
                    logger.warning(
                        f"Attention backend not specified. Falling back to '{self.attention_backend}' for deterministic inference."
                    )
                elif self.attention_backend not in DETERMINISTIC_ATTENTION_BACKEND_CHOICES:
                    raise ValueError("...")
                if is_deepseek_model:
                    if self.attention_backend not in ["fa3", "triton"]:
                        raise ValueError("... with DeepSeek models ...")
                if self.attention_backend not in RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND:
                    self.disable_radix_cache = True
"""


def test_deterministic_inference_probe(tmp_path: Path) -> None:
    _write(tmp_path, "sglang/srt/server_args.py", DETERMINISTIC)
    assert deterministic_inference(SourceTree(tmp_path)) == {
        "choices": ["flashinfer", "fa3", "triton"], "radix_backends": ["fa3", "triton"],
        "position": "before_default",
        "fallback": {"blackwell_mla": "triton", "blackwell": "flashinfer", "other": "fa3"},
        "mla_archs": ["DeepseekV3ForCausalLM"], "mla_backends": ["fa3", "triton"],
        "fallback_archs": ["DeepseekV3ForCausalLM"]}
    # the handler after the default: it checks the default like a typed backend
    _write(tmp_path, "sglang/srt/server_args.py", DETERMINISTIC.replace(
        "self._handle_deterministic_inference()\n            self._handle_attention_backend_"
        "compatibility()", "self._handle_attention_backend_compatibility()\n"
        "            self._handle_deterministic_inference()"))
    assert deterministic_inference(SourceTree(tmp_path))["position"] == "after_default"
    # no handler: nothing
    _write(tmp_path, "sglang/srt/server_args.py", "class ServerArgs:\n    pass\n")
    assert deterministic_inference(SourceTree(tmp_path)) == {}


SPEC_HOOK = """
    def _handle_eagle_family(server_args):
        if server_args.enable_mixed_chunk:
            server_args.enable_mixed_chunk = False

    def _handle_ngram(server_args):
        server_args.enable_mixed_chunk = False

    def _handle_dflash(server_args):
        if server_args.speculative_use_rejection_sampling and server_args.enable_mixed_chunk:
            server_args.enable_mixed_chunk = False
"""
SUPPORTS = """
    class SpeculativeAlgorithm:
        def supports_mixed_chunk(self):
            return self in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)
"""


def test_mixed_chunk_and_radix_probes(tmp_path: Path) -> None:
    assert mixed_chunk_off_algorithms(SourceTree(tmp_path)) is None  # no hook: the template
    _write(tmp_path, "sglang/srt/arg_groups/speculative_hook.py", SPEC_HOOK)
    assert mixed_chunk_off_algorithms(SourceTree(tmp_path)) == [
        "EAGLE", "EAGLE3", "NGRAM", "STANDALONE"]
    _write(tmp_path, "sglang/srt/speculative/spec_info.py", SUPPORTS)
    _write(tmp_path, "sglang/srt/arg_groups/speculative_hook.py", SPEC_HOOK.replace(
        "if server_args.enable_mixed_chunk:",
        "if server_args.enable_mixed_chunk and not algo.supports_mixed_chunk():", 1))
    assert mixed_chunk_off_algorithms(SourceTree(tmp_path)) == ["NGRAM", "STANDALONE"]
    # the EAGLE-family handler takes trees on spec v2, unless a topk branch turns overlap off
    assert spec_v2_runs_trees(SourceTree(tmp_path))
    _write(tmp_path, "sglang/srt/arg_groups/speculative_hook.py", SPEC_HOOK.replace(
        "def _handle_eagle_family(server_args):",
        "def _handle_eagle_family(server_args):\n"
        "        if server_args.speculative_eagle_topk > 1:\n"
        "            server_args.disable_overlap_schedule = True"))
    assert not spec_v2_runs_trees(SourceTree(tmp_path))
    _write(tmp_path, "sglang/srt/server_args.py", """
        class ServerArgs:
            def _handle_multi_item_scoring(self):
                if not self.disable_radix_cache:
                    self.disable_radix_cache = True

            def _handle_model_specific_adjustments(self):
                if model_arch in ["Qwen3NextForCausalLM"]:
                    if is_sm100_supported():
                        if not self.disable_radix_cache and self.attention_backend == "trtllm_mha":
                            self.disable_radix_cache = True
                            self.disable_overlap_schedule = False
    """)
    assert mis_disables_radix(SourceTree(tmp_path))
    assert trtllm_disables_radix(SourceTree(tmp_path)) == ["Qwen3NextForCausalLM"]


ACTIONS = '''
    class DeprecatedAction(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            print_deprecated_warning(
                f"The command line argument '{option_string}' is deprecated and will be removed in future versions."
            )

    class DeprecatedAliasStoreAction(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            replacement = f" Use '{self.new_flag}' instead." if self.new_flag else ""
            print_deprecated_warning(
                f"'{option_string}' is deprecated and will be removed in a future release.{replacement}"
            )
            setattr(namespace, self.dest, values)

    def add_cli_args(parser):
        parser.add_argument("--old-ratio", action=DeprecatedAction)
        parser.add_argument("--cuda-graph-max-bs", action=DeprecatedAliasStoreAction,
                            new_flag="--cuda-graph-max-bs-decode")
'''


def test_deprecated_actions_probe(tmp_path: Path) -> None:
    _write(tmp_path, "sglang/srt/server_args.py", ACTIONS)
    flags = {"actions": [
        {"option_strings": ["--old-ratio"], "action": "DeprecatedAction"},
        {"option_strings": ["--cuda-graph-max-bs"], "action": "DeprecatedAliasStoreAction"},
        {"option_strings": ["--cuda-graph-max-bs-decode"], "action": "_StoreAction"}]}
    found = deprecated_actions(SourceTree(tmp_path), flags)
    assert found["options"] == {
        "--cuda-graph-max-bs": {"action": "DeprecatedAliasStoreAction",
                                "new_flag": "--cuda-graph-max-bs-decode", "refused": False},
        "--old-ratio": {"action": "DeprecatedAction", "new_flag": None, "refused": False}}
    words = found["messages"]["DeprecatedAliasStoreAction"]
    assert words["message"].format(option="--x", replacement=words["replacement"].format(
        new_flag="--y")) == "'--x' is deprecated and will be removed in a future release. Use '--y' instead."
    # an older class that raises instead of warning: the flag is a refusal, not a warning
    _write(tmp_path, "sglang/srt/server_args.py", ACTIONS.replace(
        '''print_deprecated_warning(
                f"The command line argument '{option_string}' is deprecated and will be removed in future versions."
            )''', "raise ValueError(self.help)"))
    assert deprecated_actions(SourceTree(tmp_path), flags)["options"]["--old-ratio"]["refused"]


def test_extra_buffer_linear_backend_probe(tmp_path: Path) -> None:
    _write(tmp_path, "sglang/srt/arg_groups/overrides.py", """
        def supports_mamba_cache_extra_buffer(view, model_arch):
            if model_arch in _MAMBA_EXTRA_BUFFER_ARCHS:
                return view.linear_attn_backend == "triton"
            return False
    """)
    assert extra_buffer_linear_backend(SourceTree(tmp_path)) == "triton"
    _write(tmp_path, "sglang/srt/arg_groups/overrides.py", """
        def supports_mamba_cache_extra_buffer(view, model_arch):
            return model_arch in _MAMBA_EXTRA_BUFFER_ARCHS
    """)
    assert extra_buffer_linear_backend(SourceTree(tmp_path)) is None


def test_moe_runner_platform_and_a_family_set_of_architectures(tmp_path: Path) -> None:
    """0.5.13 on: modelopt_fp4 on SM120 takes flashinfer_cutlass for any model (0.5.22: SM110 or
    SM120); 0.5.2x's DeepSeek resolution names its architectures by a module-level set it
    returns early outside of, and leaves LongCat out of its runner test."""
    _write(tmp_path, "sglang/srt/arg_groups/overrides.py", """
        _FAMILY = frozenset({"DeepseekV3ForCausalLM", "LongcatFlashForCausalLM"})

        def _runner(view):
            moe_runner_backend = view.moe_runner_backend
            if (
                moe_runner_backend == "auto"
                and view.quantization == "modelopt_fp4"
                and (get_platform().is_sm120 or get_platform().is_sm110)
            ):
                moe_runner_backend = "flashinfer_cutlass"
            if moe_runner_backend == "auto" and model_arch == "X" and is_sm120_supported():
                moe_runner_backend = "triton"
            return {"moe_runner_backend": moe_runner_backend}

        def _deepseek(view):
            model_arch = view.arch
            if model_arch not in _FAMILY:
                return {}
            overrides = {}
            if get_platform().is_sm100:
                quantization = view.quantization
                if (
                    view.moe_a2a_backend == "none"
                    and view.moe_runner_backend == "auto"
                    and not model_arch.startswith("LongcatFlash")
                    and (quantization in ["fp8", "modelopt_fp4"] or quantization is None)
                ):
                    overrides["moe_runner_backend"] = "flashinfer_trtllm"
            return overrides
    """)
    tree = SourceTree(tmp_path)
    assert moe_runner_platform(tree) == [{"quantization": "modelopt_fp4",
                                          "probes": ["is_sm110", "is_sm120"],
                                          "runner": "flashinfer_cutlass"}]
    (entry,) = moe_runner_sm100(tree)
    assert entry["archs"] == ["DeepseekV3ForCausalLM"]
    assert entry["quantizations"] == ["fp8", "modelopt_fp4"] and entry["unquantized"]
    assert entry["runner"] == "flashinfer_trtllm" and entry["typed_only"]
