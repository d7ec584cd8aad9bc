"""The probe of where the argument code builds the model config when --mem-fraction-static is
typed (trait `model_config_at_args`), on tiny source trees shaped like SGLang's."""

from __future__ import annotations

import textwrap
from pathlib import Path

from wizard.conformance.locate import SourceTree
from wizard.conformance.onboard import _model_config_at_args


def _tree(root: Path, server_args: str) -> SourceTree:
    path = root / "sglang/srt/server_args.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(server_args))
    return SourceTree(root)


def test_a_construction_only_for_an_unset_fraction_defers_to_start_up(tmp_path: Path) -> None:
    # 0.5.1-0.5.4: inline in __post_init__, inside `if self.mem_fraction_static is None:`
    tree = _tree(tmp_path, """
        class ServerArgs:
            def __post_init__(self):
                if self.mem_fraction_static is None:
                    self.mem_fraction_static = 0.88
                    from sglang.srt.configs.model_config import ModelConfig
                    model_config = ModelConfig.from_server_args(self)
                self.model_specific_adjustments()

            def model_specific_adjustments(self):
                hf_config = self.get_hf_config()
    """)
    assert _model_config_at_args(tree) == ["runtime"]


def test_the_first_step_that_builds_it_through_a_helper(tmp_path: Path) -> None:
    # 0.5.4.post1-0.5.6: the memory step builds it for an unset fraction; with a typed one the
    # hicache step (through use_mla_backend -> get_model_config) is the first.
    tree = _tree(tmp_path, """
        class ServerArgs:
            def __post_init__(self):
                self._handle_gpu_memory_settings()
                self._handle_model_specific_adjustments()
                self._handle_hicache()
                self._handle_attention_backend_compatibility()

            def _handle_gpu_memory_settings(self):
                if self.mem_fraction_static is None:
                    model_config = self.get_model_config()

            def _handle_model_specific_adjustments(self):
                pass

            def _handle_hicache(self):
                if self.use_mla_backend():
                    pass

            def use_mla_backend(self):
                return self.get_model_config().attention_arch == "MLA"

            def _handle_attention_backend_compatibility(self):
                model_config = self.get_model_config()

            def get_model_config(self):
                self.model_config = ModelConfig.from_server_args(self)
                return self.model_config
    """)
    assert _model_config_at_args(tree) == ["_handle_hicache",
                                           "_handle_attention_backend_compatibility"]


def test_no_construction_keeps_the_template(tmp_path: Path) -> None:
    tree = _tree(tmp_path, """
        class ServerArgs:
            def __post_init__(self):
                self._handle_page_size()

            def _handle_page_size(self):
                pass
    """)
    assert _model_config_at_args(tree) is None
