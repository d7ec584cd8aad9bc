"""docs/profiles.md stays in step with the schema: every key is documented, the example loads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from pydantic import BaseModel

from wizard.profile import profile_from_toml
from wizard.profile_schema import Profile
from wizard.sglang.fields import BY_PATH

DOC = (Path(__file__).resolve().parents[2] / "docs" / "profiles.md").read_text("utf-8")


def _section(table: str) -> str:
    """The text of `### [table]` up to the next heading."""
    match = re.search(rf"^### \[{re.escape(table)}\]\n(.*?)(?=^#)", DOC, re.S | re.M)
    assert match, f"docs/profiles.md has no ### [{table}] section"
    return match.group(1)


def test_every_key_is_documented_in_its_table() -> None:
    top = re.search(r"^### Top level\n(.*?)(?=^#)", DOC, re.S | re.M)
    assert top
    for name, info in Profile.model_fields.items():
        # an optional table ([container]) is `Section | None`
        model = next((a for a in get_args(info.annotation) if a is not type(None)), info.annotation)
        if isinstance(model, type) and issubclass(model, BaseModel):
            rows = _section(name)
            for key in model.model_fields:
                assert f"| `{key}` |" in rows, f"[{name}] {key} is not documented"
                spec = BY_PATH.get(f"{name}.{key}")
                if spec is not None:
                    for version in ("0.5.11", "0.5.23"):
                        flag = spec.flag_for(version)
                        row = next(r for r in rows.splitlines() if r.startswith(f"| `{key}` |"))
                        assert flag is None or f"`{flag}`" in row, (key, version, flag)
        else:
            assert f"| `{name}` |" in top.group(1), f"top-level {name} is not documented"


def test_the_example_is_a_valid_profile() -> None:
    block = re.search(r"```toml\n(.*?)```", DOC, re.S)
    assert block
    profile = profile_from_toml(block.group(1), "docs/profiles.md")
    assert profile.speculative.algorithm == "NEXTN"
    assert profile.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
