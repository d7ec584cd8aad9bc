"""Environment reads in SGLang's argument code (`wizard/conformance/env_reads.py`, the `["env",
...]` / `["envset", ...]` nodes of R-ARG-SITE's trees).

The parsing derived by `ast` from a release's own `environ.py` and `utils/common.py` is checked
against that very code running: every field of the release's `Envs` (and `get_bool_env_var` /
`get_int_env_var`) read by SGLang's `EnvField.get()` under a set of values users type, and by
the compiled node; kinds and defaults against the runner's dump of the same release (made by
importing it). A synthetic argument code checks the extractor's env handling (a site guarded
by an env read holds exactly when Python running that code raises, a variable the code sets
before the read is not read), and the real 0.5.14 data a site that holds only with the
variable set, its message and its fix.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import logging
import os
import sys
import textwrap
import traceback
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

from wizard.api import check_argv
from wizard.conformance.arg_sites import extract_sites
from wizard.conformance.env_reads import ENVIRON_FILE, env_table, env_written
from wizard.conformance.locate import SourceTree
from wizard.rules.arg_sites import compile_condition, parse_env

from .environ_source import ENVIRON
from .test_arg_sites import _real

ROOT = Path(__file__).resolve().parents[2]
# what users set variables to: SGLang's words for true and false in any case, numbers with and
# without blanks, an empty value and words no parsing takes
VALUES = (None, "", "1", "0", "true", "TRUE", "False", "yes", "Y", "n", "on", "maybe", "12",
          " 7 ", "-3", "0.5", "1e3", "x")
KINDS = {"EnvBool": "bool", "EnvInt": "int", "EnvFloat": "float", "EnvStr": "str",
         "EnvBoolWithAlias": "bool", "EnvIntWithAlias": "int", "EnvStrWithAlias": "str"}


def _environ_module(root: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The release's own environ.py, imported from its file (stdlib only; the debug module some
    releases import at its end stands empty)."""
    spec = importlib.util.spec_from_file_location(f"_environ_{id(root)}", root / ENVIRON_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with monkeypatch.context() as patch:
        for name in ("sglang", "sglang.srt", "sglang.srt.debug_utils",
                     "sglang.srt.debug_utils.cuda_coredump"):
            if name not in sys.modules:
                patch.setitem(sys.modules, name, types.ModuleType(name))
        spec.loader.exec_module(module)
    return module


def _node_value(node: list[Any], env: dict[str, str]) -> Any:
    return compile_condition(node, {}, value=True)({}, frozenset(), None, env)


@pytest.mark.parametrize("version", ["0.5.4", "0.5.14", "0.5.23"])
def test_envs_fields_parse_as_sglang_reads_them(version: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = _real(version)
    table = env_table(root)
    dumped = {e["name"]: e for e in json.loads(
        (ROOT / "wizard" / "sglang" / "data" / f"env-{version}.json").read_text())["variables"]}
    assert set(table.fields) == set(dumped)  # every field, read by ast as the import saw them
    readable = {name: spec for name, spec in table.fields.items() if not isinstance(spec, str)}
    assert len(readable) > 0.95 * len(table.fields)
    for name, (parse, default, _alias) in readable.items():
        assert KINDS.get(dumped[name]["kind"]) == parse[0], name
        assert default == dumped[name]["default"], name
    environ = _environ_module(root, monkeypatch)
    compared = 0
    for name in sorted(readable):
        node = table.field_read(name)
        for value in VALUES:
            with monkeypatch.context() as patch:
                if value is None:
                    patch.delenv(name, raising=False)
                else:
                    patch.setenv(name, value)
                if node[4] is not None:
                    patch.delenv(node[4], raising=False)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    expected = getattr(environ.envs, name).get()
                got = _node_value(node, {} if value is None else {name: value})
                assert got == expected and type(got) is type(expected), (name, value)
                compared += 1
    assert compared > 1000
    # a deprecated alias is read when the variable itself is unset
    aliased = sorted(name for name, spec in readable.items() if spec[2] is not None)
    assert bool(aliased) == ("deprecated_name" in (root / ENVIRON_FILE).read_text())
    for name in aliased:
        node = table.field_read(name)
        with monkeypatch.context() as patch:
            patch.delenv(name, raising=False)
            patch.setenv(node[4], "1")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = getattr(environ.envs, name).get()
            assert _node_value(node, {node[4]: "1"}) == expected
            os.environ.pop(name, None)  # (its get() copies the alias over)


@pytest.mark.parametrize("version", ["0.5.4", "0.5.23"])
def test_env_helper_functions_parse_as_sglang_reads_them(version: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    root = _real(version)
    table = env_table(root)
    module = ast.parse((root / "sglang/srt/utils/common.py").read_text())
    scope: dict[str, Any] = {"os": os, "logger": logging.getLogger("test"),
                             "_warned_bool_env_var_keys": set()}
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("get_bool_env_var",
                                                                "get_int_env_var"):
            exec(compile(ast.Module([node], []), "common.py", "exec"), scope)
    calls = [("get_bool_env_var", ()), ("get_bool_env_var", ("true",)),
             ("get_bool_env_var", ("0",)), ("get_int_env_var", ()),
             ("get_int_env_var", (5,)), ("get_int_env_var", (-1,))]
    for function, extra in calls:
        default = ast.parse(repr(extra[0]), mode="eval").body if extra else None
        node = table.function_read(function, "SGLANG_T", default)
        for value in VALUES:
            with monkeypatch.context() as patch:
                if value is None:
                    patch.delenv("SGLANG_T", raising=False)
                else:
                    patch.setenv("SGLANG_T", value)
                expected = scope[function]("SGLANG_T", *extra)
            assert _node_value(node, {} if value is None else {"SGLANG_T": value}) == expected, (
                function, extra, value)


def test_parse_env_kinds() -> None:
    words = ["bool", ["true", "1"], ["false", "0"], "default"]
    assert parse_env(words, "TRUE", False) is True and parse_env(words, "0", True) is False
    assert parse_env(words, "maybe", True) is True  # refused: the default, as SGLang warns
    assert parse_env(["bool", ["true", "1"], None, "default"], "maybe", True) is False
    assert parse_env(["int", "default"], " 7 ", 0) == 7 and parse_env(["int", "default"], "x", 3) == 3
    with pytest.raises(ValueError):
        parse_env(["int", "raise"], "x", 3)
    assert parse_env(["float", "default"], "1e3", 0.0) == 1000.0
    assert parse_env(["str"], "", "d") == ""
    unset = compile_condition(["env", "A", ["int", "default"], 4096, None], {}, value=True)
    assert unset({}, frozenset(), None, {}) == 4096 and unset({}, frozenset()) == 4096
    is_set = compile_condition(["envset", "A"], {})
    assert is_set({}, frozenset(), None, {"A": ""}) and not is_set({}, frozenset(), None, {})


# ------------------------------------------------------------------ the extractor, synthetic

SOURCE = '''
import os

from sglang.srt.environ import envs


class ServerArgs:
    def __post_init__(self):
        if envs.SGLANG_FAST.get() and self.size > 1:
            raise ValueError("SGLANG_FAST needs size 1")
        if self.size > envs.SGLANG_LIMIT.get():
            raise ValueError(f"size above SGLANG_LIMIT={envs.SGLANG_LIMIT.get()}")
        if "SGLANG_MARK" in os.environ and self.mode == "a":
            raise ValueError("marked")
        if os.getenv("SGLANG_NAME", "x") == "y" and self.mode == "b":
            raise ValueError("named y")
        if self.mode == "c":
            envs.SGLANG_LATER.set(True)
        if envs.SGLANG_LATER.get() and self.size == 3:
            raise ValueError("later")
'''
FLAGS = {"size": 1, "mode": "a"}
ENVS = {"SGLANG_FAST": [None, "1", "no", "bogus"], "SGLANG_LIMIT": [None, "2", "x"],
        "SGLANG_MARK": [None, ""], "SGLANG_NAME": [None, "y"]}


def _tree(tmp_path: Path) -> SourceTree:
    srt = tmp_path / "sglang" / "srt"
    srt.mkdir(parents=True)
    (srt / "environ.py").write_text(textwrap.dedent(ENVIRON))
    (srt / "server_args.py").write_text(textwrap.dedent(SOURCE))
    return SourceTree(tmp_path)


def _first_raise(tmp_path: Path, values: dict[str, Any], env: dict[str, str],
                 monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Run the synthetic release with `env` as the process environment: the raising line."""
    srt = tmp_path / "sglang" / "srt"
    scope: dict[str, Any] = {}
    exec(compile((srt / "environ.py").read_text(), "environ.py", "exec"), scope)
    source = (srt / "server_args.py").read_text().replace(
        "from sglang.srt.environ import envs", "")
    code: dict[str, Any] = {"envs": scope["envs"]}
    exec(compile(source, "server_args.py", "exec"), code)
    record = code["ServerArgs"].__new__(code["ServerArgs"])
    record.__dict__.update(values)
    with monkeypatch.context() as patch:
        for name in ENVS:
            patch.delenv(name, raising=False)
        for name, value in env.items():
            patch.setenv(name, value)
        patch.delenv("SGLANG_LATER", raising=False)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                record.__post_init__()
        except ValueError as exc:
            return f"sglang/srt/server_args.py:{traceback.extract_tb(exc.__traceback__)[-1].lineno}"
    return None


def test_extracted_env_sites_raise_exactly_when_sglang_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import itertools

    extraction = extract_sites(_tree(tmp_path), {"actions": [
        {"dest": k, "default": v} for k, v in FLAGS.items()]}, {})
    sites = {s["message"][0]: s for s in extraction.sites}
    assert sorted(sites) == ["SGLANG_FAST needs size 1", "marked", "named y",
                             "size above SGLANG_LIMIT="]
    # the variable the code sets before the read is not read (SGLang's own value, not the user's)
    assert any("SGLANG_LATER (set by the argument code before)" in line
               for line in extraction.skipped)
    assert sites["size above SGLANG_LIMIT="]["message"][1]["env"][:2] == ["env", "SGLANG_LIMIT"]
    tests = {s["where"]: compile_condition(s["condition"], s["defaults"])
             for s in extraction.sites}
    order = sorted(extraction.sites, key=lambda s: s["seq"])
    checked = 0
    for size, mode in itertools.product((1, 2, 3, 5000), ("a", "b", "c")):
        for combo in itertools.product(*ENVS.values()):
            env = {name: value for name, value in zip(ENVS, combo, strict=True)
                   if value is not None}
            values = {"size": size, "mode": mode}
            raised = _first_raise(tmp_path, values, env, monkeypatch)
            predicted = next((s["where"] for s in order
                              if tests[s["where"]](values, frozenset(), None, env)), None)
            if raised is not None and raised not in tests:
                continue  # the site left out (SGLANG_LATER)
            assert predicted == raised, (values, env)
            checked += 1
    assert checked > 300


def test_env_writes_are_named() -> None:
    statement = ast.parse(textwrap.dedent('''
        def f(cfg):
            defaults = {"A_ONE": "1", "A_TWO": "2"}
            for key, value in defaults.items():
                if key not in os.environ:
                    os.environ[key] = value
            envs.SGLANG_X.set(1)
            os.environ.setdefault("B", "1")
            os.environ[cfg.name] = "1"
    ''')).body[0]
    assert env_written(statement, statement) == {"A_ONE", "A_TWO", "SGLANG_X", "B", "*"}


# ------------------------------------------------------------------ the real 0.5.14 data

def test_a_site_that_holds_only_with_the_variable_set(tmp_path: Path) -> None:
    """0.5.14's `handle_pd_disaggregation`: SGLANG_DISAGG_STAGING_BUFFER with a transfer backend
    other than mooncake / nixl. Without the variable SGLang passes this check."""
    argv = ["--model-path", "/models/none", "--disaggregation-mode", "prefill",
            "--disaggregation-transfer-backend", "fake"]
    where = "sglang/srt/arg_groups/pd_disaggregation_hook.py:84"
    plain = check_argv(argv, sglang_version="0.5.14", env={}, gpu=None)
    assert where not in {f.sglang.where for f in plain.findings if f.sglang}
    for value in ("1", "TRUE", "yes"):
        report = check_argv(argv, sglang_version="0.5.14",
                            env={"SGLANG_DISAGG_STAGING_BUFFER": value}, gpu=None)
        found = [f for f in report.findings if f.sglang and f.sglang.where == where]
        assert len(found) == 1, value
        finding = found[0]
        assert finding.rule == "R-ARG-SITE" and finding.sglang.exception == "ValueError"
        assert finding.sglang.message == (
            "SGLANG_DISAGG_STAGING_BUFFER requires disaggregation_transfer_backend='mooncake' "
            "or 'nixl', got 'fake'.")
        assert f"the environment sets SGLANG_DISAGG_STAGING_BUFFER={value}" in finding.message
        assert "the environment variable SGLANG_DISAGG_STAGING_BUFFER" in finding.explanation
        fix = next(f for f in finding.fixes if f.env)
        assert fix.env == {"SGLANG_DISAGG_STAGING_BUFFER": None}
        fixed = {k: v for k, v in {"SGLANG_DISAGG_STAGING_BUFFER": value}.items()
                 if fix.env.get(k, v) is not None}  # (what `apply_fix` does to the env)
        again = check_argv(argv, sglang_version="0.5.14", env=fixed, gpu=None)
        assert where not in {f.sglang.where for f in again.findings if f.sglang}
    for value in ("0", "no", "bogus"):  # false, or refused (the default, false)
        report = check_argv(argv, sglang_version="0.5.14",
                            env={"SGLANG_DISAGG_STAGING_BUFFER": value}, gpu=None)
        assert where not in {f.sglang.where for f in report.findings if f.sglang}, value


# ------------------------------------------------------------------ the wide cases' variables


class _Models(dict):  # type: ignore[type-arg]
    """A model folder for every kind the generator asks for."""

    def __missing__(self, kind: str) -> Path:
        return Path("/models") / kind


def test_wide_cases_set_the_variables_the_release_reads() -> None:
    import random

    from wizard.conformance.cases import generate_wide, make_wide_case, release_env_reads

    reads = release_env_reads("0.5.23")
    assert "SGLANG_RUST_SERVER" in reads and "--enable-watermark" in reads["SGLANG_RUST_SERVER"][1]
    own = "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"  # (the context-length dimension's)
    cases = generate_wide("0.5.23", 200, 7, _Models())
    with_env = [c for c in cases if set(c["env"]) - {own}]
    assert 5 <= len(with_env) <= 40  # some, most launches set none
    assert all(set(c["env"]) - {own} <= set(reads) for c in cases)
    # the flags of a seed are what they were before variables were drawn (their own stream)
    rng = random.Random("wide:0.5.23:7")
    plain = [make_wide_case(i, "0.5.23", rng, _Models()) for i in range(200)]
    assert [c["argv"] for c in cases] == [c["argv"] for c in plain]
    # a focused sweep sets the variables its flag's sites read more often
    focused = generate_wide("0.5.23", 200, 7, _Models(), focus=("--enable-watermark",))
    rust = [c for c in focused if "SGLANG_RUST_SERVER" in c["env"]]
    assert len(rust) > 40 and all(c["env"]["SGLANG_RUST_SERVER"] in ("true", "false")
                                  for c in rust)


def test_a_variable_behind_a_replayed_write_is_named() -> None:
    """0.5.23 sets `grpc_port` from SGLANG_GRPC_PORT before `handle_deprecated_args` checks its
    range: the variable takes SGLang down that path (found by checking again without it)."""
    argv = ["--model-path", "/models/none"]
    where = "sglang/srt/arg_groups/serving_hook.py:383"
    report = check_argv(argv, sglang_version="0.5.23", env={"SGLANG_GRPC_PORT": "0"}, gpu=None)
    finding = next(f for f in report.findings if f.sglang and f.sglang.where == where)
    assert finding.sglang is not None and finding.sglang.message == (
        "--grpc-port / SGLANG_GRPC_PORT (0) must be between 1 and 65535")
    assert finding.message.endswith(
        "[SGLang takes this path because the environment sets SGLANG_GRPC_PORT=0]")
    assert [f.env for f in finding.fixes] == [{"SGLANG_GRPC_PORT": None}]
    for env in ({}, {"SGLANG_GRPC_PORT": "8000"}):
        again = check_argv(argv, sglang_version="0.5.23", env=env, gpu=None)
        assert where not in {f.sglang.where for f in again.findings if f.sglang}
