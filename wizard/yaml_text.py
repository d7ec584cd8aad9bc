"""The one YAML writer of the wizard (PyYAML): SGLang `--config` files and Kubernetes manifests.

`dump` writes block YAML with short scalar lists inline (`key: [1, 2]`), keys in the order given,
strings quoted only where YAML would read them as something else (`'102400'` as a string, `0.8`
as a number). `argv_value` picks, for a command-line text, the YAML value SGLang turns back into
that same text (its config reader does `str(value)`), so numbers are written as numbers.
"""

from __future__ import annotations

from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    """Block mappings; a list of scalars inline (`cuda-graph-bs: [1, 2, 4]`), other lists as
    blocks; an object used twice is written twice (no `&id001` anchors)."""

    inline_lists = True

    def ignore_aliases(self, data: Any) -> bool:
        return True


class _BlockDumper(_Dumper):
    """Every list as a block (one item a line: Kubernetes manifests, long args)."""

    inline_lists = False


def _represent_list(dumper: _Dumper, items: list[Any]) -> Any:
    inline = dumper.inline_lists and all(not isinstance(item, dict | list) for item in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=inline)


_Dumper.add_representer(list, _represent_list)


def dump(data: Any, *, inline_lists: bool = True) -> str:
    """`data` (dicts, lists, str, int, float, bool, None) as YAML text ending in a newline;
    lists of scalars inline unless `inline_lists` is False."""
    dumper = _Dumper if inline_lists else _BlockDumper
    text: str = yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False,
                          allow_unicode=False, width=2**16)
    return text


def load(text: str) -> Any:
    """What a YAML reader (SGLang, kubectl) gets back from `text` (for checks and tests)."""
    return yaml.safe_load(text)


def argv_value(text: str) -> str | int | float:
    """The YAML value whose `str()` is `text`: `102400` -> 102400, `0.8` -> 0.8, anything a
    YAML reader would turn into another text (`007`, `1_000`, `.inf`, `true`, `null`) a string."""
    if not text or len(text) > 64 or not (text[0].isdigit() or text[0] in "+-."):
        return text
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if isinstance(loaded, bool) or not isinstance(loaded, int | float):
        return text
    return loaded if str(loaded) == text else text
