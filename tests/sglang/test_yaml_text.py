"""The one YAML writer (`wizard/yaml_text.py`): what it writes, PyYAML (SGLang's and kubectl's
reader) reads back; a command-line text comes back as the same text after SGLang's `str()`."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wizard.yaml_text import argv_value, dump

TRICKY = ["102400", "0.8", "1e-05", "1.0e-05", "007", "0x1f", "1_000", ".inf", "-.inf", "nan",
          ".nan", "true", "True", "yes", "off", "null", "~", "", "-1", "+1", "1.", "1:30",
          "2026-12-03", "a: b", "- x", "#c", "'q'", '"d"', "é", "\t", " lead", "trail ",
          "--flag", "$(VAR)", "*", "&a", "!tag", "%x", "@x", "`x`", "{a}", "[1]"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.sampled_from(TRICKY), st.text(max_size=24),
                 st.from_regex(r"[-+]?[0-9._eE]{1,10}", fullmatch=True)))
def test_a_command_line_text_reads_back_as_the_same_text(text: str) -> None:
    value = argv_value(text)
    loaded = yaml.safe_load(dump({"key": value, "list": [value, value]}))
    assert str(loaded["key"]) == text
    assert [str(v) for v in loaded["list"]] == [text, text]


def test_numbers_stay_numbers_and_look_alikes_stay_text() -> None:
    assert dump({"context-length": argv_value("102400")}) == "context-length: 102400\n"
    assert dump({"mem-fraction-static": argv_value("0.8")}) == "mem-fraction-static: 0.8\n"
    assert dump({"name": argv_value("007")}) == "name: '007'\n"
    assert dump({"bs": [1, 2, 4]}) == "bs: [1, 2, 4]\n"
    manifest = {"args": ["--tp", "16"], "env": [{"name": "A", "value": "1"}]}
    text = dump({"a": manifest, "b": manifest}, inline_lists=False)
    assert "&" not in text and "*" not in text  # no anchors for a shared object
    assert yaml.safe_load(text) == {"a": manifest, "b": manifest}
