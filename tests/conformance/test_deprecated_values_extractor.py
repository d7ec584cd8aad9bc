"""The extractor of SGLang's logged deprecated-value rewrites (`deprecated_values`, rule
R-DEPRECATED-VALUE) on a small ServerArgs-shaped source: for every combination of values, each
extracted entry holds exactly when running that source logs its warning, its words are the
logged words, and its value is what the source writes."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path
from typing import Any

from wizard.conformance.arg_sites import extract_sites
from wizard.conformance.locate import SourceTree
from wizard.rules.deprecated_values import _of

SOURCE = '''
def declare_resolution(record, source, **fields):
    record.__dict__.update(fields)


class ServerArgs:
    def __post_init__(self):
        self._handle_deprecated_args()

    def _handle_deprecated_args(self):
        deprecated_parsers = {"qwen25": "qwen", "glm45": "glm"}
        if self.parser in deprecated_parsers:
            logger.warning(
                f"The parser '{self.parser}' is deprecated. Please use "
                f"'{deprecated_parsers[self.parser]}' instead."
            )
            self.parser = deprecated_parsers[self.parser]
        if self.old_switch and not self.new_switch:
            logger.warning("--old-switch is deprecated; use --new-switch.")
            declare_resolution(self, "_handle_deprecated_args", new_switch=True)
        if self.legacy:
            logger.warning("--legacy is deprecated.")
            self.modern = True
        if self.quiet:
            logger.warning("--quiet turns logging down")
            self.level = "error"
        aliases = {"compressed": "dsv4", "speedy": "fast"}
        renamed = {}
        for attr in ("a_backend", "b_backend"):
            old = getattr(self, attr, None)
            if old in aliases:
                logger.warning(
                    "--%s=%s is deprecated; use '%s' instead.",
                    attr.replace("_", "-"),
                    old,
                    aliases[old],
                )
                renamed[attr] = aliases[old]
        if renamed.get("b_backend") == "fast":
            renamed["b_backend"] = "slow"
        if renamed:
            declare_resolution(self, "_handle_deprecated_args", **renamed)
'''

FLAGS: dict[str, list[Any]] = {
    "parser": [None, "qwen25", "glm45", "qwen"], "old_switch": [False, True],
    "new_switch": [False, True], "legacy": [False, True], "quiet": [False, True],
    "a_backend": [None, "compressed", "speedy", "fa3"], "b_backend": [None, "compressed", "speedy"],
}
EXTRA = {"modern": False, "level": "info", "model_path": "m"}


def _run(values: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The warnings the source logs on `values` and the record after it."""
    logged: list[str] = []

    class Logger:
        def warning(self, message: str, *args: Any) -> None:
            logged.append(message % args if args else message)

    scope: dict[str, Any] = {"logger": Logger()}
    exec(compile(textwrap.dedent(SOURCE), "server_args.py", "exec"), scope)
    record = scope["ServerArgs"].__new__(scope["ServerArgs"])
    record.__dict__.update(values)
    record.__post_init__()
    return logged, dict(record.__dict__)


def test_entries_hold_exactly_when_the_source_logs_its_words(tmp_path: Path) -> None:
    path = tmp_path / "sglang" / "srt" / "server_args.py"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(SOURCE))
    actions = [{"dest": k, "default": v[0]} for k, v in FLAGS.items()]
    actions += [{"dest": k, "default": v} for k, v in EXTRA.items()]
    # --legacy is a Deprecated*Action flag: R-DEPRECATED-FLAG's, not an entry
    actions = [{**a, "action": "DeprecatedStoreTrueAction"} if a["dest"] == "legacy" else a
               for a in actions]
    extraction = extract_sites(SourceTree(tmp_path), {"actions": actions}, {})
    entries = [_of(e) for e in extraction.deprecations]
    written = sorted(field for e in entries for field, _tree in e.writes)
    # no entry for --legacy (a deprecated action) nor --quiet (its words say no "deprecated")
    assert written == ["a_backend", "b_backend", "new_switch", "parser"]
    # b_backend's value changes after the warning ("speedy" -> "fast" -> "slow"): read as
    # `"slow" if value == "fast" else value`
    [b_tree] = [tree for e in entries for field, tree in e.writes if field == "b_backend"]
    assert b_tree is not None and b_tree[0] == "if"
    assert [line.split(": ", 1)[1] for line in extraction.deprecation_skipped] == [
        "a Deprecated*Action flag (legacy): R-DEPRECATED-FLAG"]
    seen = 0
    for combination in itertools.product(*FLAGS.values()):
        values = {**EXTRA, **dict(zip(FLAGS, combination, strict=True))}
        logged, after = _run(values)
        expected = [m for m in logged if "deprecated" in m and "--legacy" not in m]
        holding = [e for e in entries if e.holds(values, frozenset())]
        assert sorted(e.words(values, frozenset()) for e in holding) == sorted(expected), values
        for entry in holding:
            for field, value in entry.written(values, frozenset()).items():
                assert after[field] == value, (values, field)
            seen += 1
    assert seen > 100


def test_a_key_changed_otherwise_after_the_warning_is_not_read() -> None:
    import ast

    from wizard.conformance.arg_sites import _key_rewrites

    function = ast.parse(textwrap.dedent("""
        def f(renamed, x):
            renamed["a"] = x
            if renamed.get("a") == "fast":
                renamed["a"] = "slow"
    """)).body[0]
    rewrites = _key_rewrites(function, "renamed", "a", after=3)
    assert [(t.value, v.value) for t, v in rewrites or ()] == [("fast", "slow")]  # type: ignore[attr-defined]
    # any other change after the warning (here a method that changes the dict): not read
    changed = ast.parse(textwrap.dedent("""
        def f(renamed, x):
            renamed["a"] = x
            if x:
                renamed.pop("a")
    """)).body[0]
    assert _key_rewrites(changed, "renamed", "a", after=3) is None
