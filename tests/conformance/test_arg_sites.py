"""The generic sites' extractor (`wizard/conformance/arg_sites.py`): on a small ServerArgs-shaped
source, every extracted condition is checked against Python running that same source (the site
raises exactly when its compiled condition holds); on the real release source of the per-release
venvs, the sites the wide sweeps missed are found with SGLang's own words and lines."""

from __future__ import annotations

import functools
import itertools
import json
import os
import textwrap
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from wizard.conformance.arg_sites import extract_sites
from wizard.conformance.locate import SourceTree
from wizard.conformance.venvs import venv_dir
from wizard.rules.arg_sites import compile_condition

from .environ_source import ENVIRON

ROOT = Path(__file__).resolve().parents[2]

SOURCE = '''
def run_post_process_pass(sa, fn):
    sa.__dict__.update(fn(sa))


def _tweak(view):
    return view.__dict__.get("tweak", False)


def _register_for(*architectures):
    def decorator(fn):
        for architecture in architectures:
            _OVERRIDES.setdefault(architecture, []).append(fn)
        return fn
    return decorator


_OVERRIDES = {}


@_register_for("KimiK2ForCausalLM")
def _kimi_overrides(server_args, hf_config):
    overrides = {}
    if server_args.count > 1 and server_args.mode == "null":
        overrides["size"] = 2
    return overrides


def _mode_pass(view):
    mode = view.mode
    if view.count > 1 and mode == "null":
        mode = "decode"
    if mode != view.mode:
        return {"mode": mode}
    return {}


class ServerArgs:
    LOG_ARCHS = ("KimiK2ForCausalLM",)

    def __post_init__(self):
        self._handle_legacy()
        self._handle_a()
        if self.enable_b:
            self._handle_b()
        self._handle_loop()
        self._handle_written()

    def _handle_a(self):
        if self.model_path.lower() in ["none", "dummy"]:
            return
        if self.enable_x and not (self.cert and self.key):
            raise ValueError("--enable-x requires --cert and --key.")
        if self.mode != "decode":
            if self.offload:
                raise ValueError(f"offload needs decode, got {self.mode!r}")
        assert self.size in (1, 2) or self.size is None, "size must be 1 or 2"
        width, _rest = widths(total=self.count, part=2)
        if self.enable_c and width < 1:
            raise ValueError("c needs a width")
        if self.enable_c and self._opaque():
            allowed = {"none", "null"}
        else:
            allowed = {"none", "null", "decode"}
        kinds = {self.kind, self.mode, self.size}
        kinds.discard(None)
        if self.offload and not kinds <= allowed:
            raise ValueError("kinds not allowed")

    def _opaque(self):
        return self.__dict__.get("opaque", False)

    def _handle_legacy(self):
        if self.legacy:
            self.enable_n = True

    def _handle_b(self):
        if self.count > 0 and self.kind == "none":
            raise ValueError("count needs kind")
        if self.size is not None:
            doubled = int(self.size) * 2
            if doubled > 4:
                raise ValueError("size doubled too big")

    def _handle_loop(self):
        for item in self.items or []:
            if self.enable_x:
                raise ValueError("inside a loop")

    def _handle_written(self):
        self.page = 16
        if self.page > 8 and self.enable_x:
            raise ValueError("page was rewritten")
        if self.offload and self.mode == "decode":
            self.kind = "offload"
        model_arch = self.get_model_config().hf_config.architectures[0]
        if model_arch in ("DeepseekV3ForCausalLM", "KimiK2ForCausalLM") and self.count > 1:
            self.kind = "log"
        if model_arch == "KimiK2ForCausalLM" and _tweak(self):
            self.kind = "log"
        if self.kind == "none" and self.enable_c:
            raise ValueError("c needs a kind")
        for override in _OVERRIDES.get(model_arch, ()):
            self.__dict__.update(override(self, None))
        if self.mode == "decode" and not self.enable_x:
            self.legacy = True
        self._handle_legacy()
        if self.enable_n and self.kind == "log":
            raise ValueError("n cannot log")
        self._check_twice()
        run_post_process_pass(self, _mode_pass)
        if self.count > 1 and self.offload:
            self.items = [str(n) for n in range(self.count)]
        if self.items and self.enable_b and self.kind == "log":
            raise ValueError("b cannot take items")
        if self.mode == "decode" and self.enable_b and self.size is None:
            raise ValueError("b cannot decode")

    def get_model_config(self):
        return self._model_config

    def _check_twice(self):
        if self.size == 3 and self.kind == "offload":
            raise ValueError("size 3 cannot offload")

    def check_server_args(self):
        if self.enable_c and self.mode == "null":
            raise RuntimeError("c needs a mode")
        architectures = self.get_model_config().hf_config.architectures
        if self.kind == "log" and not any(a in self.LOG_ARCHS for a in architectures):
            raise ValueError("log needs a listed model")
        hf_config = self.get_model_config().hf_config
        if getattr(hf_config, "model_type", None) != "kimi_k2" and self.enable_n:
            raise ValueError("n needs a kimi model type")
        self._check_twice()
'''
HELPERS = '''
def widths(*, total, part):
    """A pure helper outside the argument code (`HELPER_CODE`)."""
    each = total // part
    return each, total % part
'''
FLAGS = {"model_path": "m", "enable_x": False, "cert": None, "key": None, "mode": "null",
         "offload": False, "size": None, "enable_b": False, "count": 0, "kind": "none",
         "items": None, "page": 1, "enable_c": False, "legacy": False, "enable_n": False}
CHOICES = {"enable_x": [False, True], "cert": [None, "c.pem"], "key": [None, "k.pem"],
           "mode": ["null", "decode"], "offload": [False, True], "size": [None, 1, 3],
           "enable_b": [False, True], "count": [0, 2], "kind": ["none", "log"],
           "enable_c": [False, True], "model_path": ["m", "dummy"], "legacy": [False, True]}
ARCHS = ("LlamaForCausalLM", "KimiK2ForCausalLM")
MODEL_TYPES = {"LlamaForCausalLM": "llama", "KimiK2ForCausalLM": "kimi_k2"}


def _tree(tmp_path: Path) -> SourceTree:
    path = tmp_path / "sglang" / "srt" / "server_args.py"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(SOURCE))
    (path.parent / "runtime_context.py").write_text(textwrap.dedent(HELPERS))
    return SourceTree(tmp_path)


def _table() -> dict[str, Any]:
    return {"actions": [{"dest": k, "default": v} for k, v in FLAGS.items()]}


def _first_raise(tmp_path: Path, values: dict[str, Any], arch: str = ARCHS[0]) -> str | None:
    """Run the source's launch path (post_init, then check) on `values`: the raising line."""
    path = tmp_path / "sglang" / "srt" / "server_args.py"
    scope: dict[str, Any] = {}
    exec(compile(textwrap.dedent(HELPERS), "runtime_context.py", "exec"), scope)
    exec(compile(path.read_text(), str(path), "exec"), scope)
    record = scope["ServerArgs"].__new__(scope["ServerArgs"])
    record.__dict__.update(values)
    record._model_config = SimpleNamespace(hf_config=SimpleNamespace(
        architectures=[arch], model_type=MODEL_TYPES[arch]))
    try:
        record.__post_init__()
        record.check_server_args()
    except (ValueError, AssertionError, RuntimeError) as exc:
        return f"sglang/srt/server_args.py:{traceback.extract_tb(exc.__traceback__)[-1].lineno}"
    return None


def _predict(sites: list[dict[str, Any]], writes: list[dict[str, Any]],
             values: dict[str, Any], arch: str, quant_method: str | None = None,
             mla: bool = False) -> tuple[str | None, set[str]]:
    """What the engine does with the extraction: the replayed writes and the sites in launch-path
    order on the values as they are then; the first holding site, and the sites it abstains on
    (a field an override of this architecture may rewrite)."""
    key = (id(sites), id(writes))
    if key not in _COMPILED:
        _COMPILED[key] = sorted(
            [(s["seq"], 0, s, compile_condition(s["condition"], s["defaults"]), None)
             for s in sites]
            + [(w["seq"], 1, w, compile_condition(w["condition"], w["defaults"]),
                None if w["value"] is None
                else compile_condition(w["value"], w["defaults"], value=True)) for w in writes],
            key=lambda t: (t[0], t[1]))
    now = dict(values)
    model = {"architecture": arch, "architectures": [arch], "model_type": MODEL_TYPES.get(arch),
             "quant_method": quant_method, "mla": mla}
    abstained: set[str] = set()
    for _seq, kind, entry, test, value in _COMPILED[key]:
        if kind == 1:
            if any(now.get(n) is _UNKNOWN for n in entry["defaults"]):
                now[entry["field"]] = _UNKNOWN
            elif test(now, frozenset(), model):
                now[entry["field"]] = (_UNKNOWN if value is None
                                       else value(now, frozenset(), model))
            continue
        rewritten = any(arch in scope["archs"] and (_scope_test(scope)(values, frozenset(), model)
                                                    or _scope_test(scope)(now, frozenset(), model))
                        for scope in entry.get("unknown_if", ()))
        if arch in entry.get("unknown_archs", ()) or rewritten or any(
                now.get(n) is _UNKNOWN for n in entry["defaults"]):
            abstained.add(entry["where"])
            continue
        if test(now, frozenset(), model):
            return entry["where"], abstained
    return None, abstained


def _scope_test(scope: dict[str, Any]) -> Any:
    """The compiled condition of an override's conditional scope (`unknown_if`)."""
    key = id(scope)
    if key not in _SCOPES:
        _SCOPES[key] = compile_condition(scope["condition"], scope["defaults"])
    return _SCOPES[key]


_SCOPES: dict[int, Any] = {}
_COMPILED: dict[tuple[int, int], list[Any]] = {}
_UNKNOWN = object()


def test_extracted_sites_raise_exactly_when_their_condition_holds(tmp_path: Path) -> None:
    extraction = extract_sites(_tree(tmp_path), _table(), {})
    sites = extraction.sites
    messages = {s["where"]: "".join(p if isinstance(p, str) else "{" + p["flag"] + "}"
                                    for p in s["message"]) for s in sites}
    assert sorted(messages.values()) == sorted([
        "--enable-x requires --cert and --key.", "offload needs decode, got {mode}",
        "size must be 1 or 2", "count needs kind", "c needs a mode", "page was rewritten",
        "c needs a kind", "size 3 cannot offload", "b cannot decode", "b cannot take items",
        "c needs a width", "n cannot log", "kinds not allowed", "log needs a listed model",
        "n needs a kimi model type", "size doubled too big"])
    by_message = {messages[s["where"]]: s for s in sites}
    # the rewritten page and kind are replayed (kind's override for two architectures reads the
    # model's architecture, a model fact); a write for one architecture under a test the walk
    # cannot read makes the sites after it abstain for that architecture
    assert by_message["page was rewritten"]["resolved"] == ["page"]
    assert any(w["field"] == "kind" and '"model"' in json.dumps(w["condition"])
               for w in extraction.writes)
    assert by_message["c needs a kind"]["unknown_archs"] == ["KimiK2ForCausalLM"]
    assert {w["field"] for w in extraction.writes} == {"page", "kind", "mode", "items", "legacy",
                                                       "enable_n", "size"}
    # a function called twice writes again at its second call, on the values there (`legacy`
    # set in between): both writes are replayed, each at its place
    assert sorted(w["seq"] for w in extraction.writes if w["field"] == "enable_n")[0] < min(
        w["seq"] for w in extraction.writes if w["field"] == "legacy") < max(
        w["seq"] for w in extraction.writes if w["field"] == "enable_n")
    # a registered override writing `size` only when count > 1 and mode is null, its whole
    # write readable: replayed where the registry runs (`for override in _OVERRIDES.get(...)`),
    # for its architecture only, and the sites after it read the replayed size
    size = [w for w in extraction.writes if w["field"] == "size"]
    assert [(w["condition"], w["value"]) for w in size] == [(
        ["and", ["cmp", "in", ["model", "architecture"], ["const", ["KimiK2ForCausalLM"]]],
         ["cmp", ">", ["flag", "count"], ["const", 1]],
         ["cmp", "==", ["flag", "mode"], ["const", "null"]]], ["const", 2])]
    assert size[0]["seq"] < by_message["b cannot decode"]["seq"]
    assert "unknown_if" not in by_message["b cannot decode"]
    assert "unknown_archs" not in by_message["b cannot decode"]
    # a local chosen by a test the walk cannot read: the site holds only when it holds for
    # both values; the set built from flags minus the discarded None
    kinds = by_message["kinds not allowed"]["condition"]
    assert kinds[0] == "and" and json.dumps(kinds).count('"<="') == 2
    assert '["op", "-", ["set", ["tuple", ["flag", "kind"]' in json.dumps(kinds)
    # a pure helper of runtime_context.py, inlined with the call's arguments (a tuple item)
    assert by_message["c needs a width"]["condition"][-1] == ["and", ["flag", "enable_c"], [
        "cmp", "<", ["op", "//", ["flag", "count"], ["const", 2]], ["const", 1]]]
    assert [w["value"] for w in extraction.writes if w["field"] == "items"] == [None]
    # the post-process pass's local: `mode` as typed, "decode" when count > 1 and it was null
    assert by_message["b cannot decode"]["resolved"] == ["mode", "size"]
    assert by_message["c needs a mode"]["resolved"] == ["mode"]
    # a local assigned once inside the `if` body that reads it, through `int()`
    assert by_message["size doubled too big"]["condition"][-1] == ["cmp", ">", [
        "op", "*", ["conv", "int", ["flag", "size"]], ["const", 2]], ["const", 4]]
    # `any(...)` over the model's architectures and a class constant of ServerArgs
    assert by_message["log needs a listed model"]["condition"][-1] == ["not", [
        "any", ["model", "architectures"],
        ["cmp", "in", ["each"], ["const", ["KimiK2ForCausalLM"]]]]]
    skipped = "\n".join(extraction.skipped)
    assert "guard for" in skipped.lower()
    names = sorted(CHOICES)
    checked = abstained_cases = 0
    for arch in ARCHS:
        for combo in itertools.product(*(CHOICES[n] for n in names)):
            values = {**FLAGS, **dict(zip(names, combo, strict=True))}
            raised = _first_raise(tmp_path, values, arch)
            predicted, abstained = _predict(sites, extraction.writes, values, arch)
            if raised is not None and (raised not in messages or raised in abstained):
                # a site left out (the loop's) or abstained on for this model raised first:
                # the engine names a later one, or none
                abstained_cases += raised in abstained
                continue
            assert predicted == raised, (arch, values)
            checked += 1
    assert checked > 2000 and abstained_cases > 0
    # the override's scope holds only when count > 1: below that its architecture is checked
    kimi = {**FLAGS, "mode": "decode", "enable_b": True}
    line = by_message["b cannot decode"]["where"]
    assert _first_raise(tmp_path, kimi, "KimiK2ForCausalLM") == line
    assert _predict(sites, extraction.writes, kimi, "KimiK2ForCausalLM")[0] == line
    # the chosen set: refused for a kind neither value allows, not for the discarded None
    line = by_message["kinds not allowed"]["where"]
    refused = {**FLAGS, "offload": True, "mode": "decode", "kind": "log"}
    assert _first_raise(tmp_path, refused) == line == _predict(
        sites, extraction.writes, refused, ARCHS[0])[0]
    kept = {**refused, "kind": "none"}
    assert line not in (_first_raise(tmp_path, kept),
                        _predict(sites, extraction.writes, kept, ARCHS[0])[0])
    # `enable_n` set only by the second call of _handle_legacy (legacy set in between)
    late = {**FLAGS, "mode": "decode", "kind": "log", "model_path": "dummy"}
    line = by_message["n cannot log"]["where"]
    assert _first_raise(tmp_path, late) == line == _predict(sites, extraction.writes, late,
                                                              ARCHS[0])[0]
    stages = {messages[s["where"]]: s["stage"] for s in sites}
    assert stages["c needs a mode"] == "check" and stages["count needs kind"] == "resolve"


def _real(version: str) -> Path:
    """The release's installed source; a release the session runs live waits for its venv (the
    background runs own every venv build of a session), any other needs one built before."""
    root = venv_dir(version) / "lib" / "python3.11" / "site-packages"
    if not (root / "sglang" / "srt" / "server_args.py").is_file():
        from .test_conformance import LIVE, RELEASE_TIMEOUT, background

        if version in LIVE.releases and os.environ.get("SGLANG_WIZARD_CONFORMANCE", "1") != "0":
            background().result(version, timeout=RELEASE_TIMEOUT)
    if not (root / "sglang" / "srt" / "server_args.py").is_file():
        pytest.skip(f"no SGLang {version} venv here (sglang-wizard conformance build)")
    return root


def _data(version: str) -> dict[str, Any]:
    path = ROOT / "wizard" / "sglang" / "releases" / "data" / f"{version}.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


@functools.cache
def _extraction(version: str, root: Path) -> Any:
    """The release's extraction from its installed source (one per release: a walk of the
    newest releases takes seconds, and several cases read the same one)."""
    return extract_sites(SourceTree(root), json.loads(
        (ROOT / "wizard" / "sglang" / "data" / f"flags-{version}.json").read_text()),
        _data(version)["sites"])


@pytest.mark.conformance  # after the background runs had time to build the live venvs
@pytest.mark.parametrize(("version", "flag", "text"), [
    ("0.5.15", "kv_canary_sweep_interval",
     "--kv-canary-sweep-interval requires --kv-canary in {log, raise}"),
    ("0.5.15", "enable_ssl_refresh",
     "--enable-ssl-refresh requires --ssl-certfile and --ssl-keyfile to be specified."),
    ("0.5.6.post1", "disaggregation_decode_enable_offload_kvcache",
     "The argument disaggregation-decode-enable-offload-kvcache is only supported for decode side."),
    ("0.5.23", "kv_canary_sweep_interval",
     "--kv-canary-sweep-interval requires --kv-canary in {log, raise}"),
    # after `_handle_legacy_cp_arguments`' second call (its writes replayed there)
    ("0.5.17", "cp_strategy", "--cp-strategy must be set when --enable-prefill-cp is enabled."),
    # the attention-TP width of runtime_context.derive_attn_tp_size, inlined
    ("0.5.23", "attn_dp_size", "--shared-experts-tp-size ("),
    # a validator's keyword parameters and the architectures imported from layers/
    ("0.5.23", "enable_layernorm_sp", "--enable-layernorm-sp is only supported for "),
    ("0.5.23", "enable_cp_decode_attn_tp",
     "--enable-cp-decode-attn-tp is only supported for models whose attention linears are "
     "replicated across CP ranks (attn_tp_size=1). Got "),
    # `try: import granian except ImportError: raise`: granian is only in the http2 extra
    ("0.5.23", "enable_http2",
     "--enable-http2 requires the 'granian' package. Install it with: pip install "
     "\"sglang[http2]\""),
    ("0.5.11", "enable_http2",
     "--enable-http2 requires the 'granian' package. Install it with: pip install "
     "\"sglang[http2]\""),
])
def test_real_release_sites(version: str, flag: str, text: str) -> None:
    root = _real(version)
    data = _data(version)
    extraction = _extraction(version, root)
    site = next(s for s in extraction.sites if s["message"] and s["message"][0] == text)
    assert flag in site["defaults"]
    path, _, line = site["where"].rpartition(":")
    source_line = (root / path).read_text().splitlines()[int(line) - 1]
    assert "raise ValueError(" in source_line
    # the committed release data holds what add-release derives from that source
    assert site in data["generic_sites"]
    assert not {s["where"] for s in extraction.sites} & {s["where"] for s in data["sites"].values()}


HOOKS = {
    "sglang/srt/server_args.py": '''
from sglang.srt.arg_groups.sp_hook import handle_http, handle_sp


class ServerArgs:
    def __post_init__(self):
        self._handle_pd()
        handle_sp(self)
        handle_http(self)
        self._check_cache()

    def _handle_pd(self):
        if self.mode == "decode":
            self.disable_radix_cache = True

    def _check_cache(self):
        if self.hicache and self.disable_radix_cache:
            raise ValueError("hicache needs the radix cache")
''',
    "sglang/srt/arg_groups/sp_hook.py": '''
def handle_sp(server_args):
    cfg = server_args
    if not cfg.enable_sp:
        return
    architectures = server_args.get_model_config().hf_config.architectures
    validate_sp(architecture=architectures[0] if architectures else None, tp_size=cfg.tp_size)


def validate_sp(*, architecture, tp_size):
    from sglang.srt.layers.sp import SUPPORTED, is_special

    if architecture not in SUPPORTED:
        raise ValueError(f"sp supports {sorted(SUPPORTED)}; got {architecture}.")
    if is_special(architecture) and tp_size not in (4, 8):
        raise ValueError(f"special needs tp 4 or 8, got {tp_size}")


def handle_http(server_args):
    if server_args.enable_http2:
        try:
            import granian  # noqa: F401
        except ImportError:
            raise ValueError("http2 needs granian")
        try:
            import json  # noqa: F401
        except ImportError:
            raise ValueError("never: a base requirement")
''',
    "sglang/srt/layers/sp.py": '''
SPECIAL = frozenset({"SpecialForCausalLM"})
SUPPORTED = SPECIAL | frozenset({"Qwen3ForCausalLM"})


def is_special(architecture):
    return architecture in SPECIAL
''',
    "sglang-9.9.9.dist-info/METADATA": (
        'Name: sglang\nRequires-Dist: json\nRequires-Dist: granian>=2.6.0; extra == "http2"\n'),
}
HOOK_FLAGS = {"model_path": "m", "mode": "null", "disable_radix_cache": False, "hicache": False,
              "enable_sp": False, "tp_size": 1, "enable_http2": False}
HOOK_CHOICES = {"mode": ["null", "decode"], "hicache": [False, True], "enable_sp": [False, True],
                "tp_size": [1, 4], "enable_http2": [False, True],
                "disable_radix_cache": [False, True]}
HOOK_ARCHS = ("LlamaForCausalLM", "Qwen3ForCausalLM", "SpecialForCausalLM")


def test_hooks_bind_parameters_import_constants_probe_packages_and_replay_resolved_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shapes of 0.5.23's layernorm-SP hook (keyword parameters, a constant union and a
    helper imported from `sglang.srt.layers`), of `--enable-http2`'s `import granian` probe and
    of the PD decode server's `disable_radix_cache = True`: every site the extraction reports
    raises exactly when Python running the same source raises there."""
    import importlib
    import sys

    for rel, text in HOOKS.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for package in ("sglang", "sglang/srt", "sglang/srt/arg_groups", "sglang/srt/layers"):
        (tmp_path / package / "__init__.py").touch()
    table = {"actions": [{"dest": k, "default": v} for k, v in HOOK_FLAGS.items()]}
    extraction = extract_sites(SourceTree(tmp_path), table, {})
    by_where = {s["where"]: s for s in extraction.sites}
    sp = "sglang/srt/arg_groups/sp_hook.py"
    assert by_where[f"{sp}:14"]["message"] == [
        "sp supports ", "['Qwen3ForCausalLM', 'SpecialForCausalLM']", "; got ",
        {"model": "architecture", "conv": None, "spec": None}, "."]
    assert by_where[f"{sp}:16"]["defaults"] == {"enable_sp": False, "tp_size": 1}
    assert by_where[f"{sp}:24"]["optional"] == {"granian": "http2"}
    assert f"{sp}:29" not in by_where  # `import json`: a base requirement, never missing
    assert [(w["field"], w["value"]) for w in extraction.writes] == [
        ("disable_radix_cache", ["const", True])]
    assert by_where["sglang/srt/server_args.py:18"]["resolved"] == ["disable_radix_cache"]

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "granian", None)  # not installed: `import` fails
    for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
        monkeypatch.delitem(sys.modules, name)
    server_args = importlib.import_module("sglang.srt.server_args")
    names = sorted(HOOK_CHOICES)
    checked = 0
    for arch in HOOK_ARCHS:
        for combo in itertools.product(*(HOOK_CHOICES[n] for n in names)):
            values = {**HOOK_FLAGS, **dict(zip(names, combo, strict=True))}
            record = server_args.ServerArgs.__new__(server_args.ServerArgs)
            record.__dict__.update(values)
            record.get_model_config = lambda arch=arch: SimpleNamespace(
                hf_config=SimpleNamespace(architectures=[arch]))
            try:
                record.__post_init__()
                raised = None
            except ValueError as exc:
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                raised = f"{Path(frame.filename).relative_to(tmp_path).as_posix()}:{frame.lineno}"
            predicted, _ = _predict(extraction.sites, extraction.writes, values, arch)
            assert predicted == raised, (arch, values)
            checked += 1
    for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
        del sys.modules[name]
    assert checked == 3 * 2 ** 6


SCOPED_WRITES = {
    "sglang/srt/server_args.py": '''
from sglang.srt.configs.model_config import ModelConfig


class ServerArgs:
    def __post_init__(self):
        self.model_config = ModelConfig(self.quantization)
        if self.cutlass and self.quantization not in ("fp8",):
            raise ValueError("cutlass needs fp8")
        if self.replicate and self.dcp_size <= 1:
            raise ValueError("replicate needs dcp > 1")
''',
    "sglang/srt/configs/model_config.py": '''
class ModelConfig:
    def __init__(self, quantization):
        self.quantization = quantization
        if self.quantization is None:
            self.quantization = "from-the-checkpoint"
        self.overrides = {"quantization": self.quantization}
''',
    "sglang/srt/arg_groups/model_overrides/deepseek.py": '''
def _dcp_overrides(cfg):
    if cfg.dcp_size <= 1:
        return {}
    overrides = {}
    if cfg.replicate is None:
        overrides["replicate"] = True
    return overrides


@_register_for("DeepseekV3ForCausalLM")
def _deepseek_overrides(server_args, hf_config):
    overrides = {}
    overrides.update(_dcp_overrides(server_args))
    return overrides
''',
}


def test_another_class_s_self_and_an_override_helper_s_writes_are_scoped(tmp_path: Path) -> None:
    """`ModelConfig.__init__`'s `self.quantization = ...` (and its dicts) set the model config's
    own attributes, not the ServerArgs field, so a later site over `--quantization` is read; a
    helper only a registered model override calls writes for that override's architectures only,
    under its own `if ...: return` path (0.5.23's `_dsa_dcp_overrides`)."""
    for rel, text in SCOPED_WRITES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    table = {"actions": [{"dest": k, "default": v} for k, v in {
        "model_path": "m", "quantization": None, "cutlass": False, "replicate": None,
        "dcp_size": 1}.items()]}
    extraction = extract_sites(SourceTree(tmp_path), table, {})
    by_where = {s["where"]: s for s in extraction.sites}
    assert not extraction.skipped, extraction.skipped
    cutlass = by_where["sglang/srt/server_args.py:9"]
    assert cutlass["resolved"] == [] and "unknown_if" not in cutlass
    replicate = by_where["sglang/srt/server_args.py:11"]
    assert [scope["archs"] for scope in replicate["unknown_if"]] == [["DeepseekV3ForCausalLM"]]
    # (its test of the field it writes itself reads the value it was handed: the registry
    # applies the override's writes after it returns)
    assert replicate["unknown_if"][0]["condition"] == ["and", [
        "not", ["cmp", "<=", ["flag", "dcp_size"], ["const", 1]]],
        ["cmp", "is", ["flag", "replicate"], ["const", None]]]


# the model-override registry of SOURCE, shared by the toy trees below
REGISTRY = SOURCE[SOURCE.index("def _register_for"):SOURCE.index("_OVERRIDES = {}") + 15]
OWN_READS = REGISTRY + '''

def probe(hf_config):
    return getattr(hf_config, "quant_method", None)


@_register_for("Qwen3MoeForCausalLM")
def _qwen3_overrides(server_args, hf_config):
    overrides = {}
    if server_args.count > 0:
        quant_method = probe(hf_config)
        quantization = server_args.quantization
        if quantization is None and quant_method is not None:
            overrides["quantization"] = quant_method
            quantization = quant_method
        if quantization in ("fp8", None):
            overrides["runner"] = "trtllm"
    return overrides


@_register_for("Glm4MoeForCausalLM")
def _glm4_overrides(server_args, hf_config):
    overrides = {}
    if probe(hf_config) is not None:
        overrides["quantization"] = probe(hf_config)
    return overrides


class ServerArgs:
    def __post_init__(self):
        hf_config = self.get_model_config().hf_config
        for override in _OVERRIDES.get(hf_config.architectures[0], ()):
            self.__dict__.update(override(self, hf_config))
        if self.cutlass and self.quantization not in ("fp8", "mxfp8"):
            raise ValueError("cutlass needs fp8")
'''


def test_an_override_s_scope_reads_what_it_reads_before_its_own_writes(tmp_path: Path) -> None:
    """0.5.16's `_qwen3_moe_family_overrides`: `quantization = server_args.quantization` in an
    `if` body, reassigned after the test that reads it; the override's scope is that test (its
    own write, applied after it returns, and the writes of other models' overrides do not make
    it unreadable), so a typed `--quantization w8a8_fp8` is checked on that model."""
    path = tmp_path / "sglang" / "srt" / "server_args.py"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(OWN_READS))
    table = {"actions": [{"dest": k, "default": v} for k, v in {
        "model_path": "m", "quantization": None, "count": 0, "cutlass": False,
        "runner": "auto"}.items()]}
    extraction = extract_sites(SourceTree(tmp_path), table, {})
    (site,) = extraction.sites
    scopes = {scope["archs"][0]: scope for scope in site["unknown_if"]}
    assert scopes["Qwen3MoeForCausalLM"]["condition"] == [
        "and", ["cmp", ">", ["flag", "count"], ["const", 0]],
        ["cmp", "is", ["flag", "quantization"], ["const", None]]]
    assert site.get("unknown_archs") == ["Glm4MoeForCausalLM"]
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    checked = abstained = 0
    for arch in ("Qwen3MoeForCausalLM", "Glm4MoeForCausalLM", "LlamaForCausalLM"):
        for quant_method, quantization, count, cutlass in itertools.product(
                (None, "fp8", "awq"), (None, "fp8", "w8a8_fp8"), (0, 2), (False, True)):
            values = {"model_path": "m", "quantization": quantization, "count": count,
                      "cutlass": cutlass, "runner": "auto"}
            record = scope["ServerArgs"].__new__(scope["ServerArgs"])
            record.__dict__.update(values)
            record.get_model_config = lambda arch=arch, q=quant_method: SimpleNamespace(
                hf_config=SimpleNamespace(architectures=[arch], quant_method=q))
            try:
                record.__post_init__()
                raised = None
            except ValueError as exc:
                raised = f"sglang/srt/server_args.py:{traceback.extract_tb(exc.__traceback__)[-1].lineno}"
            predicted, skipped = _predict(extraction.sites, extraction.writes, values, arch)
            if skipped:
                abstained += 1
                continue
            assert predicted == raised, (arch, values, quant_method)
            checked += 1
    # the typed w8a8_fp8 on Qwen3 with count > 0 is no longer abstained on
    assert checked >= 3 * 2 * 2 * 2 * 2 and abstained > 0
    typed = {"model_path": "m", "quantization": "w8a8_fp8", "count": 2, "cutlass": True,
             "runner": "auto"}
    assert _predict(extraction.sites, extraction.writes, typed,
                    "Qwen3MoeForCausalLM")[0] == site["where"]


SPEC_INFO_SOURCE = '''
from enum import Enum, auto

_RESERVED_ALIASES = frozenset({"NEXTN"})


class SpeculativeAlgorithm(Enum):
    EAGLE = auto()
    EAGLE3 = auto()
    NGRAM = auto()
    NONE = auto()

    @classmethod
    def from_string(cls, name):
        if name is None:
            return cls.NONE
        upper = name.upper()
        try:
            return cls[upper]
        except KeyError:
            pass
        if upper in _RESERVED_ALIASES:
            return cls.EAGLE
        raise ValueError(f"Unknown speculative algorithm name: {name}")

    def is_speculative(self):
        return self != SpeculativeAlgorithm.NONE

    def is_eagle(self):
        return self in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)

    def is_ngram(self):
        return self == SpeculativeAlgorithm.NGRAM

    def supports_mixed_chunk(self):
        return self in (SpeculativeAlgorithm.EAGLE3, SpeculativeAlgorithm.NONE)

    def handle_server_args(self, server_args):
        if self.is_eagle():
            _handle_eagle(server_args)
        elif self.is_ngram():
            _handle_ngram(server_args)
'''
SPEC_ARGS_SOURCE = '''
class CustomSpecAlgo:
    pass


def _handle_eagle(server_args):
    if server_args.topk > 1 and server_args.page > 1:
        raise ValueError("eagle trees need page 1")


def _handle_ngram(server_args):
    if server_args.page > 1:
        raise ValueError("ngram needs page 1")


class ServerArgs:
    def __post_init__(self):
        mixing = SpeculativeAlgorithm.from_string(self.algorithm)
        if self.mixed and not mixing.supports_mixed_chunk():
            raise ValueError("mixed chunk needs EAGLE3")
        if self.lmcache and SpeculativeAlgorithm.from_string(self.algorithm).is_speculative():
            raise NotImplementedError("lmcache does not support speculative decoding")
        algo = None
        if self.algorithm is not None:
            algo = SpeculativeAlgorithm.from_string(self.algorithm)
        if algo is not None:
            if isinstance(algo, CustomSpecAlgo):
                return
            algo.handle_server_args(self)
'''


def test_speculative_algorithm_members_and_methods_are_read_from_spec_info(
        tmp_path: Path) -> None:
    """`SpeculativeAlgorithm.from_string(x)` is the name of its member (NEXTN an alias of EAGLE),
    its methods (`is_*()`, `supports_mixed_chunk()`) read from their return, `isinstance(algo, CustomSpecAlgo)` False and the handler
    `algo.handle_server_args(self)` dispatches to walked with `self` bound: every site is a
    condition over the typed flags that raises exactly when the code does."""
    spec = tmp_path / "sglang" / "srt" / "speculative" / "spec_info.py"
    spec.parent.mkdir(parents=True)
    spec.write_text(textwrap.dedent(SPEC_INFO_SOURCE))
    args = tmp_path / "sglang" / "srt" / "server_args.py"
    args.write_text(textwrap.dedent(SPEC_ARGS_SOURCE))
    table = {"actions": [{"dest": k, "default": v} for k, v in {
        "model_path": "m", "algorithm": None, "lmcache": False, "topk": 1, "page": 1,
        "mixed": False}.items()]}
    extraction = extract_sites(SourceTree(tmp_path), table, {})
    messages = sorted(str(s["message"][0]) for s in extraction.sites)
    assert messages == ["eagle trees need page 1", "lmcache does not support speculative decoding",
                        "mixed chunk needs EAGLE3", "ngram needs page 1"], extraction.skipped
    scope: dict[str, Any] = {}
    exec(compile(spec.read_text(), str(spec), "exec"), scope)
    exec(compile(args.read_text(), str(args), "exec"), scope)
    checked = 0
    for algorithm, lmcache, topk, page, mixed in itertools.product(
            (None, "EAGLE", "eagle3", "NEXTN", "NGRAM"), (False, True), (1, 4), (1, 16),
            (False, True)):
        values = {"model_path": "m", "algorithm": algorithm, "lmcache": lmcache, "topk": topk,
                  "page": page, "mixed": mixed}
        record = scope["ServerArgs"].__new__(scope["ServerArgs"])
        record.__dict__.update(values)
        try:
            record.__post_init__()
            raised = None
        except (ValueError, NotImplementedError) as exc:
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            raised = f"{Path(frame.filename).relative_to(tmp_path).as_posix()}:{frame.lineno}"
        predicted, abstained = _predict(extraction.sites, extraction.writes, values,
                                        "LlamaForCausalLM")
        assert not abstained
        assert predicted == raised, values
        checked += 1
    assert checked == 5 * 2 * 2 * 2 * 2


APPENDED_LIST = '''
class ServerArgs:
    def __post_init__(self):
        if self.policy == "complete":
            self._validate_complete()

    def _validate_complete(self):
        unsupported = []
        if self.mode not in ("prefill", "decode"):
            unsupported.append("aggregated serving")
        if self.tp_size != 1:
            unsupported.append("tensor parallelism")
        if unsupported:
            raise ValueError("complete does not support " + ", ".join(unsupported))
'''


def test_a_list_built_by_guarded_appends_raises_when_any_test_holds(tmp_path: Path) -> None:
    """0.5.22's `_validate_prefill_complete`: `unsupported = []`, `if <test>:
    unsupported.append("...")` at the function's top level, then `if unsupported: raise`."""
    path = tmp_path / "sglang" / "srt" / "server_args.py"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(APPENDED_LIST))
    table = {"actions": [{"dest": k, "default": v} for k, v in {
        "model_path": "m", "policy": "none", "mode": "null", "tp_size": 1}.items()]}
    extraction = extract_sites(SourceTree(tmp_path), table, {})
    assert len(extraction.sites) == 1, extraction.skipped
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    for policy, mode, tp_size in itertools.product(("none", "complete"), ("null", "decode"),
                                                   (1, 2)):
        values = {"model_path": "m", "policy": policy, "mode": mode, "tp_size": tp_size}
        record = scope["ServerArgs"].__new__(scope["ServerArgs"])
        record.__dict__.update(values)
        try:
            record.__post_init__()
            raised = None
        except ValueError as exc:
            raised = f"sglang/srt/server_args.py:{traceback.extract_tb(exc.__traceback__)[-1].lineno}"
        assert _predict(extraction.sites, extraction.writes, values,
                        "LlamaForCausalLM")[0] == raised, values


# 0.5.6.post1's shape: a model branch adopts the checkpoint's quantization method for an unset
# --quantization, and a later check reads the field
CHECKPOINT_QUANT = """
class ServerArgs:
    def __post_init__(self):
        self._handle_model_specific_adjustments()
        self._handle_moe()

    def get_hf_config(self):
        return self._model_config.hf_config

    def _handle_model_specific_adjustments(self):
        hf_config = self.get_hf_config()
        model_arch = hf_config.architectures[0]
        if model_arch in ["Qwen3NextForCausalLM"]:
            quantization_config = getattr(hf_config, "quantization_config", None)
            quant_method = (
                quantization_config.get("quant_method")
                if quantization_config is not None
                else None
            )
            if self.quantization is None and quant_method is not None:
                self.quantization = quant_method

    def _handle_moe(self):
        if self.cutlass:
            assert self.quantization == "fp8", "cutlass MoE is only supported with fp8"
"""


def test_the_checkpoint_s_quant_method_is_a_model_fact(tmp_path: Path) -> None:
    """`quantization_config.get("quant_method")` of the model's config is read as the model
    fact `quant_method` (None without a quantization_config), so a write of `--quantization`
    from it is replayed and the check after it is read on the checkpoint (0.5.6.post1 w00019:
    `SGLANG_CUTLASS_MOE` on an unquantized Qwen3-Next)."""
    path = tmp_path / "sglang" / "srt" / "server_args.py"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(CHECKPOINT_QUANT))
    table = {"actions": [{"dest": "quantization", "default": None},
                         {"dest": "cutlass", "default": False}]}
    extraction = extract_sites(SourceTree(tmp_path), table, {})
    assert [w["value"] for w in extraction.writes] == [["model", "quant_method"]]
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    for arch, method, quantization, cutlass in itertools.product(
            ("Qwen3NextForCausalLM", "LlamaForCausalLM"), (None, "fp8", "awq"),
            (None, "fp8", "awq"), (False, True)):
        record = scope["ServerArgs"].__new__(scope["ServerArgs"])
        record.__dict__.update(quantization=quantization, cutlass=cutlass)
        config = SimpleNamespace(architectures=[arch])
        if method is not None:
            config.quantization_config = {"quant_method": method}
        record._model_config = SimpleNamespace(hf_config=config)
        try:
            record.__post_init__()
            raised = None
        except AssertionError as exc:
            raised = f"sglang/srt/server_args.py:{traceback.extract_tb(exc.__traceback__)[-1].lineno}"
        values = {"quantization": quantization, "cutlass": cutlass}
        predicted, abstained = _predict(extraction.sites, extraction.writes, values, arch, method)
        assert (predicted, abstained) == (raised, set()), (arch, method, quantization, cutlass)


# 0.5.23's `use_mla_backend(server_args)` (a helper) and 0.5.5-0.5.17's `self.use_mla_backend()`
# (a method): the model config's attention architecture
MLA_TESTS = """
class AttentionArch:
    MLA = "mla"
    MHA = "mha"


def model_config_of(server_args):
    return server_args._model_config


def use_mla_backend(server_args):
    model_config = model_config_of(server_args)
    return model_config.attention_arch == AttentionArch.MLA


class ServerArgs:
    def __post_init__(self):
        if self.kv_cache_dtype == "fp4_e2m1":
            if use_mla_backend(self):
                assert self.attention_backend in ["flashinfer", "trtllm_mla"], "KV4 MLA"
            else:
                assert self.attention_backend in ["triton", "trtllm_mha"], "KV4 MHA"
        self._handle_dcp()

    def use_mla_backend(self):
        model_config = model_config_of(self)
        return model_config.attention_arch == AttentionArch.MLA

    def _handle_dcp(self):
        if self.dcp_size > 1 and self.use_mla_backend():
            raise ValueError("--dcp-size > 1 is not supported for MLA models")
"""


def test_the_model_config_s_mla_attention_is_a_model_fact(tmp_path: Path) -> None:
    """`use_mla_backend` (a helper or a method returning `<model config>.attention_arch ==
    AttentionArch.MLA`) and that test itself read as the model fact `mla`: the sites under it
    are extracted and hold exactly where SGLang's code raises."""
    path = tmp_path / "sglang" / "srt" / "server_args.py"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(MLA_TESTS))
    table = {"actions": [{"dest": "kv_cache_dtype", "default": "auto"},
                         {"dest": "attention_backend", "default": None},
                         {"dest": "dcp_size", "default": 1}]}
    extraction = extract_sites(SourceTree(tmp_path), table, {})
    assert not extraction.skipped, extraction.skipped
    assert len(extraction.sites) == 3
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    for mla, kv, backend, dcp in itertools.product(
            (False, True), ("auto", "fp4_e2m1"), (None, "triton", "flashinfer"), (1, 2)):
        record = scope["ServerArgs"].__new__(scope["ServerArgs"])
        values = {"kv_cache_dtype": kv, "attention_backend": backend, "dcp_size": dcp}
        record.__dict__.update(values)
        record._model_config = SimpleNamespace(attention_arch="mla" if mla else "mha")
        try:
            record.__post_init__()
            raised = None
        except (AssertionError, ValueError) as exc:
            raised = f"sglang/srt/server_args.py:{traceback.extract_tb(exc.__traceback__)[-1].lineno}"
        predicted, abstained = _predict(extraction.sites, extraction.writes, values,
                                        "LlamaForCausalLM", mla=mla)
        assert (predicted, abstained) == (raised, set()), (mla, kv, backend, dcp)


IS_IN_CI_ENVS = {  # 0.5.5.post2 on: `sglang.utils.is_in_ci` reads the environ registry itself
    "sglang/utils.py": """
        from sglang.srt.environ import envs


        def is_in_ci() -> bool:
            return envs.SGLANG_IS_IN_CI.get()
    """,
    # the registry of test_env_reads with the variable read here
    "sglang/srt/environ.py": ENVIRON.replace(
        "class Envs:\n", "class Envs:\n    SGLANG_IS_IN_CI = EnvBool(False)\n"),
}


@pytest.mark.parametrize("variant", ["test_utils", "envs"])
def test_a_helper_s_own_import_shadows_its_module_s_function(tmp_path: Path, variant: str,
                                                             ) -> None:
    """0.5.5's `sglang.utils.is_in_ci` imports `is_in_ci` from `sglang.test.test_utils` inside
    its body and returns its call: the call reaches the imported function (an environment read),
    not the module's own `is_in_ci` again, so `assert ... not is_in_ci()` is a site; 0.5.5.post2's
    returns `envs.SGLANG_IS_IN_CI.get()` of the module's `envs` import."""
    files = {
        "sglang/srt/server_args.py": """
            from sglang.utils import is_in_ci


            class ServerArgs:
                def __post_init__(self):
                    if self.dp_size > 1 and not is_in_ci():
                        assert self.balance, "Prefill round robin balance is required"
        """,
        "sglang/utils.py": """
            def is_in_ci():
                from sglang.test.test_utils import is_in_ci

                return is_in_ci()
        """,
        "sglang/test/test_utils.py": """
            from sglang.srt.utils import get_bool_env_var


            def is_in_ci():
                return get_bool_env_var("SGLANG_IS_IN_CI")
        """,
        "sglang/srt/utils/common.py": """
            import os


            def get_bool_env_var(name: str, default: str = "false") -> bool:
                value = os.getenv(name, default)
                value = value.lower()
                truthy_values = ("true", "1")
                return value in truthy_values
        """,
    }
    if variant == "envs":
        files.update(IS_IN_CI_ENVS)
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    table = {"actions": [{"dest": "dp_size", "default": 1}, {"dest": "balance", "default": False}]}
    extraction = extract_sites(SourceTree(tmp_path), table, {})
    assert not extraction.skipped, extraction.skipped
    (site,) = extraction.sites
    test = compile_condition(site["condition"], site["defaults"])
    assert test({"dp_size": 2}, frozenset())
    assert not test({"dp_size": 2}, frozenset(), None, {"SGLANG_IS_IN_CI": "true"})
    assert not test({"dp_size": 2, "balance": True}, frozenset())
    assert not test({"dp_size": 1}, frozenset())
