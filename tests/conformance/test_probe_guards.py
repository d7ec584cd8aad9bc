"""Release differences read from the `if` around a located raise (`onboard._raise_tests_sm100_only`,
`onboard._else_raise_tests`), on tiny source trees shaped like SGLang's releases."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from wizard.conformance.arg_sites import _predicate_archs
from wizard.conformance.locate import SourceTree
from wizard.conformance.onboard import _else_raise_tests, _raise_tests_sm100_only

TRTLLM_MLA = """
class ServerArgs:
    def _handle_attention_backend_compatibility(self):
        if self.attention_backend == "trtllm_mla":
            if not {probe}:
                raise ValueError(
                    "TRTLLM MLA backend is only supported on Blackwell GPUs. Please use a "
                    "different backend."
                )
"""
CONTEXT = """
class ModelConfig:
    def __init__(self, context_length):
        if context_length > self.derived:
            if {test}:
                logger.warning("longer context")
            else:
                raise ValueError("context_length is greater than the derived context_length")
"""


def _tree(root: Path, rel: str, text: str) -> SourceTree:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return SourceTree(root)


def _raise_line(tree: SourceTree, rel: str) -> dict[str, str]:
    line = next(n for n, text in enumerate(tree.files[rel].splitlines(), 1) if "raise " in text)
    return {"where": f"{rel}:{line}"}


def test_trtllm_mla_refuses_sm120_only_where_the_raise_tests_sm100_alone(tmp_path: Path) -> None:
    rel = "sglang/srt/server_args.py"
    for number, (probe, sm100_only) in enumerate([
            ("is_sm100_supported()", True),  # 0.5.1-0.5.4.post3
            ("is_blackwell_supported()", False),  # 0.5.5 on
            ("is_sm100_supported() or is_sm120_supported()", False),
            ("get_platform().is_blackwell", False)]):  # 0.5.23
        tree = _tree(tmp_path / str(number), rel, TRTLLM_MLA.format(probe=probe))
        assert _raise_tests_sm100_only(tree, _raise_line(tree, rel)) is sm100_only, probe
    assert _raise_tests_sm100_only(tree, None) is None


def test_the_context_length_check_lets_sglang_s_ci_marker_through_where_it_tests_it(
        tmp_path: Path) -> None:
    rel = "sglang/srt/configs/model_config.py"
    for number, (test, ci) in enumerate([
            ("envs.SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN.get() or is_in_ci()", True),
            ("envs.SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN.get()", False)]):
        tree = _tree(tmp_path / str(number), rel, CONTEXT.format(test=test))
        assert _else_raise_tests(tree, _raise_line(tree, rel), "is_in_ci()") is ci, test


def test_an_override_registered_by_predicate_names_its_architectures() -> None:
    """0.5.15 on register some model overrides by a predicate over the architecture's name:
    its literal names are the override's architectures (so its writes are scoped to them)."""

    def archs(text: str) -> set[str] | None:
        node = ast.parse(text, mode="eval").body
        assert isinstance(node, ast.Lambda)
        return _predicate_archs(node)

    assert archs('lambda arch: "Step3p5ForCausalLM" in arch or "Step3p7X" in arch') == {
        "Step3p5ForCausalLM", "Step3p7X"}
    assert archs('lambda arch: arch == "A"') == {"A"}
    assert archs('lambda arch: arch in ("A", "B")') == {"A", "B"}
    assert archs('lambda arch: arch.startswith("Qwen")') is None
    assert archs('lambda arch, other: arch == "A"') is None
