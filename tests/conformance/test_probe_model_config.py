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


# A hook pipeline that builds the model config lazily (0.5.20-0.5.23 `model_config_of`): the
# first hook that needs it builds it, and which one that is depends on the launch.
LAZY = """
    import json


    def model_config_of(server_args):
        if getattr(server_args, "_model_config", None) is not None:
            return server_args._model_config
        server_args._model_config = ModelConfig.from_server_args(server_args)
        BUILT.append(server_args.where)
        return server_args._model_config


    BUILT = []


    def handle_pack(server_args):
        if server_args.load_format != "pack":
            return
        errors = []
        try:
            extra = json.loads(server_args.extra)
        except ValueError:
            extra = {}
        for key in extra:
            errors.append(key)
        server_args.where = "pack"
        try:
            model_config_of(server_args)
        except Exception:
            pass


    def handle_graphs(server_args):
        if server_args.disable_graph or server_args.graph_backend is not None:
            return
        server_args.where = "graphs"
        model_config_of(server_args)


    def handle_memory(server_args):
        if server_args.mem_fraction_static is None:
            server_args.where = "memory"
            model_config_of(server_args)


    def handle_attention(server_args):
        server_args.where = "attention"
        model_config_of(server_args)


    def handle_late(server_args):
        server_args.where = "late"
        model_config_of(server_args)


    class ServerArgs:
        def __post_init__(self):
            handle_pack(self)
            handle_graphs(self)
            handle_memory(self)
            handle_attention(self)
            handle_late(self)
"""
LAZY_FLAGS = {"load_format": "auto", "extra": "{}", "disable_graph": False,
              "graph_backend": None, "mem_fraction_static": None}


def _built_first(tmp_path: Path, values: dict[str, object]) -> str:
    """Run the tiny source's launch path: the hook that built the model config."""
    scope: dict[str, object] = {}
    exec(compile(textwrap.dedent(LAZY), "server_args.py", "exec"), scope)
    scope["ModelConfig"] = type("ModelConfig", (), {"from_server_args": staticmethod(
        lambda server_args: object())})
    record = scope["ServerArgs"].__new__(scope["ServerArgs"])  # type: ignore[operator]
    record.__dict__.update({**LAZY_FLAGS, **values})
    record.__post_init__()
    built = scope["BUILT"]
    assert isinstance(built, list)
    return str(built[0])


def test_lazy_builds_are_read_in_order_with_the_path_that_reaches_each(tmp_path: Path) -> None:
    """Each build's condition holds exactly where the source builds there first (the early
    return stays part of a call's path inside a `try:`), and the list ends at the build every
    launch reaches."""
    from wizard.conformance.arg_sites import extract_sites
    from wizard.rules.arg_sites import compile_condition

    tree = _tree(tmp_path, LAZY)
    table = {"actions": [{"dest": k, "default": v} for k, v in LAZY_FLAGS.items()]}
    builds = extract_sites(tree, table, {}).builds
    assert [b["condition"] is None for b in builds] == [False, False, False, True]
    assert [b["seq"] for b in builds] == sorted(b["seq"] for b in builds)
    names = ["pack", "graphs", "memory", "attention"]
    tests = [compile_condition(b["condition"], b["defaults"]) if b["condition"] is not None
             else (lambda *_: True) for b in builds]
    launches: list[dict[str, object]] = [
        {}, {"load_format": "pack"}, {"disable_graph": True}, {"graph_backend": "full"},
        {"disable_graph": True, "mem_fraction_static": 0.8},
        {"load_format": "pack", "disable_graph": True, "mem_fraction_static": 0.8},
    ]
    for values in launches:
        first = next(name for name, test in zip(names, tests, strict=True)
                     if test(values, frozenset()))
        assert first == _built_first(tmp_path, values), values
