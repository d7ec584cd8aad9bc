"""Generated command lines and profiles never raise anything but the tool's own typed errors.

Budget: 10,000 generated inputs in total across the hypothesis tests of tests/sglang (this file's
batches plus the round-trip tests of test_sglang_render.py), under about a minute on 2 cores.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sglang_strategies import command_lines, fast_command_lines, profiles

from wizard.sglang.errors import CommandError, RenderError
from wizard.sglang.flags import argparse_error, load_table
from wizard.sglang.parse import parse_command
from wizard.sglang.render import render_shell, render_yaml_form

BATCH = 5  # byte-built command lines per example, plus one from the composite strategy
COMMAND_EXAMPLES = 800  # per version: 2 x 800 x 6 = 9,600 command lines
PROFILE_EXAMPLES = 100  # profiles here, + 2 x (150 + 100) in test_sglang_render.py
# total: 9,600 + 100 + 500 = 10,200 generated inputs


def _check_command(text: str | list[str], version: str) -> None:
    try:
        result = parse_command(text, version)
    except CommandError as exc:
        assert exc.message
        if exc.exit_like_sglang and exc.sglang_error is not None:
            assert exc.sglang_error.line.startswith("sglang serve: error: ")
        return
    profile = result.profile
    # whatever was imported can be exported and reads back the same (secrets shown: a masked
    # command reads back `***`, see test_sglang_render)
    try:
        shell = render_shell(profile, show_secrets=True)
    except RenderError:
        return
    assert parse_command(shell, version).profile == profile
    render_yaml_form(profile)


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
@settings(
    max_examples=COMMAND_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_command_lines_raise_only_typed_errors(version: str, data: st.DataObject) -> None:
    table = load_table(version)
    texts = data.draw(st.lists(fast_command_lines(table), min_size=BATCH, max_size=BATCH))
    texts.append(data.draw(command_lines(table)))
    for text in texts:
        _check_command(text, version)
        if isinstance(text, list):
            error = argparse_error(text, version)
            assert error is None or error.message


@settings(
    max_examples=PROFILE_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    data=st.data(),
    version=st.sampled_from(["0.5.11", "0.5.23"]),
    target=st.sampled_from(["0.5.11", "0.5.23", "0.5.9", "0.6.0", "x.y"]),
)
def test_profiles_render_for_any_version_with_typed_errors_only(
    data: st.DataObject, version: str, target: str
) -> None:
    profile = data.draw(profiles(load_table(version), version))
    for render in (
        lambda: render_shell(profile, version=target),
        lambda: render_yaml_form(profile, target),
    ):
        try:
            render()
        except RenderError as exc:
            assert exc.message
