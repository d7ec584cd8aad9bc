"""SGLang knowledge lives in the release data: no version literal in the code outside it.

An SGLang release is data (`wizard/sglang/releases`, `wizard/sglang/data`, and the onboarding code
in `wizard/conformance` that derives it); the rest of `wizard/`, the screens and the benchmarks
read it. Docstrings and comments may cite the release a piece of SGLang source was read from;
strings the program uses and version tuples may not name a release.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

from wizard.profile_schema import DEFAULT_SGLANG_VERSION, Profile
from wizard.sglang.releases import default_version, release_names

ROOT = Path(__file__).resolve().parents[2]
RELEASE_DATA = re.compile(r"^wizard/(sglang/releases|sglang/data|conformance)/")
VERSION = re.compile(r"(?<![\d.])0\.[1-9]\d*\.\d+(?:\.post\d+)?(?![\d.]*\d)")
VERSION_TUPLE = re.compile(r"\(\s*0\s*,\s*[1-9]\d*\s*,\s*\d+\s*\)")
# Not SGLang: the wizard's own version.
ALLOWED = {("wizard/__init__.py", '"0.1.0"')}


def _docstring_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def version_literals() -> list[str]:
    """`file:line: literal` for every SGLang version in a string or tuple of the code."""
    files = subprocess.run(["git", "ls-files", "wizard/*.py", "screens/*.py", "bench/*.py"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found: list[str] = []
    for name in files:
        if RELEASE_DATA.match(name):
            continue
        source = (ROOT / name).read_text(encoding="utf-8")
        docs = _docstring_lines(ast.parse(source))
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.STRING and token.start[0] not in docs:
                if (name, token.string) in ALLOWED:
                    continue
                found.extend(f"{name}:{token.start[0]}: {m.group()}"
                             for m in VERSION.finditer(token.string))
            elif token.type == tokenize.OP and token.string == "(":
                line = token.line[token.start[1]:]
                match = VERSION_TUPLE.match(line)
                if match:
                    found.append(f"{name}:{token.start[0]}: {match.group()}")
    return found


def test_no_sglang_version_literal_outside_the_release_data() -> None:
    assert version_literals() == []


def test_the_default_version_is_the_release_datas() -> None:
    assert DEFAULT_SGLANG_VERSION == default_version() in release_names()
    assert Profile.model_fields["sglang_version"].default == default_version()


def test_typed_traits_module_is_generated_from_the_release_data() -> None:
    """`traits.py` is what the release data says (re-run `write_traits_module()` after a change);
    every release's switches load into it."""
    from wizard.conformance.onboard import TRAITS_MODULE, traits_module_source
    from wizard.sglang.releases import load_release

    assert TRAITS_MODULE.read_text(encoding="utf-8") == traits_module_source()
    for name in release_names():
        release = load_release(name)
        assert release.behaviour.spec_reserve_mib == release.trait("spec_reserve_mib")


def test_architecture_lists_and_accounting_come_from_each_release() -> None:
    """What add-release derived from each wheel, as the code reads it."""
    from wizard.applicability import mtp_capable
    from wizard.memory import accounting, hybrid_swa_model

    assert hybrid_swa_model("GptOssForCausalLM", "0.5.11")
    assert not hybrid_swa_model("GptOssForCausalLM", "0.5.7")  # its list is MiMo-V2 only
    assert hybrid_swa_model("GptOssForCausalLM", "0.5.5")  # any sliding window but Llama 4
    assert not hybrid_swa_model("Llama4ForConditionalGeneration", "0.5.5")
    assert mtp_capable("GlmMoeDsaForCausalLM", "0.5.11")  # in 0.5.11's model_config
    assert accounting("0.5.1").small_card_graph_bs == (8, 80)
    assert accounting("0.5.13").spec_reserve_mib == 4096
    assert accounting("0.5.14").spec_reserve_mib == 0 and accounting("0.5.14").draft_in_static_pool
