"""Export: argv, env, shell command (quoting round trip), argv JSON and SGLang's --config YAML."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sglang_strategies import NASTY, profiles

from wizard.profile import builtin_profiles_dir, load_profile
from wizard.profile_schema import Profile
from wizard.secrets import mask_argv, secret_argv_values
from wizard.sglang.errors import RenderError
from wizard.sglang.flags import load_table, secret_option_of
from wizard.sglang.parse import parse_command, parse_flags
from wizard.sglang.render import (
    config_args_like_sglang,
    render_argv,
    render_argv_json,
    render_env,
    render_shell,
    render_yaml_form,
)


def _profile(version: str = "0.5.11", **sections: object) -> Profile:
    data: dict[str, object] = {"sglang_version": version, "model": {"path": "/m"}}
    data.update(sections)
    return Profile.model_validate(data)


def test_render_argv_order_defaults_and_version_spelling() -> None:
    p = _profile(
        parallel={"tp": 2, "dp": 1},
        speculative={"algorithm": "NEXTN", "num_steps": 1, "eagle_topk": 1},
        hybrid={"cache_strategy": "extra_buffer"},
        memory={"cuda_graph_bs": [1, 2, 4], "cuda_graph_max_bs": 8},
        extra_args=["--log-level", "debug"],
    )
    assert render_argv(p) == [
        "--model-path",
        "/m",
        "--tp-size",
        "2",
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-num-steps",
        "1",
        "--speculative-eagle-topk",
        "1",
        "--mamba-scheduler-strategy",
        "extra_buffer",
        "--cuda-graph-max-bs",
        "8",
        "--cuda-graph-bs",
        "1",
        "2",
        "4",
        "--log-level",
        "debug",
    ]
    new = render_argv(p, "0.5.23")
    assert "--mamba-radix-cache-strategy" in new and "--mamba-scheduler-strategy" not in new
    assert "--cuda-graph-max-bs-decode" in new and "--cuda-graph-bs-decode" in new
    assert "--cuda-graph-bs" not in new


def test_flags_missing_in_the_version_are_render_errors() -> None:
    p = _profile(speculative={"skip_dp_mlp_sync": True})
    assert "--speculative-skip-dp-mlp-sync" in render_argv(p)
    with pytest.raises(RenderError) as info:
        render_argv(p, "0.5.23")
    assert info.value.field == "speculative.skip_dp_mlp_sync" and "0.5.23" in info.value.message
    with pytest.raises(RenderError, match=r"flag table has none of attn_dp_size"):
        render_argv(_profile(parallel={"attn_dp_size": 2}), "0.5.11")


def test_extra_args_may_not_shadow_a_profile_field() -> None:
    with pytest.raises(RenderError, match=r"parallel\.tp"):
        render_argv(_profile(extra_args=["--tp-size", "4"]))


def test_negative_and_dash_values_use_equals() -> None:
    p = _profile(
        speculative={"accept_threshold_single": -1e-05, "algorithm": "-x"}, version="0.5.23"
    )
    argv = render_argv(p)
    assert "--speculative-accept-threshold-single=-1e-05" in argv
    assert "--speculative-algorithm=-x" in argv
    assert parse_command(render_shell(p), "0.5.23").profile == p


def test_render_env_and_shell_quoting() -> None:
    p = _profile(
        model={"path": "/models/my model's $(x)\nnext"},
        env={"SGLANG_ENABLE_SPEC_V2": "1", "X": "a b"},
    )
    assert render_env(p) == {"SGLANG_ENABLE_SPEC_V2": "1", "X": "a b"}
    shell = render_shell(p)
    assert shell.startswith("SGLANG_ENABLE_SPEC_V2=1 X='a b' python3 -m sglang.launch_server \\\n")
    one_line = render_shell(p, multiline=False)
    assert "\\\n" not in one_line.replace("\nnext", "")
    assert parse_command(shell).profile == p
    assert parse_command(one_line).profile == p


def test_shell_output_is_byte_exact_in_a_real_shell() -> None:
    """`sh` itself must see exactly the profile's strings (env and argv)."""
    p = _profile(model={"path": '/a b/it\'s "q" $(echo no) `id` \\ \n*'}, env={"V": "$HOME ';'"})
    script = render_shell(p).replace(
        "python3 -m sglang.launch_server",
        f"{shlex.quote(sys.executable)} -c "
        + shlex.quote("import json,os,sys; print(json.dumps([os.environ['V'], sys.argv[1:]]))"),
        1,
    )
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [p.env["V"], render_argv(p)]


def test_argv_json() -> None:
    p = _profile(env={"A": "1"}, parallel={"tp": 2}, ssh={"python": "/venv/bin/python3"})
    data = json.loads(render_argv_json(p))
    assert data == {
        "env": {"A": "1"},
        "argv": [
            "/venv/bin/python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "/m",
            "--tp-size",
            "2",
        ],
    }


def test_yaml_form_keys_booleans_lists_and_command_line_leftovers() -> None:
    p = _profile(
        model={"path": "/m x", "trust_remote_code": True},
        parallel={"tp": 2},
        memory={"cuda_graph_bs": [1, 2], "mem_fraction_static": 0.85},
        env={"SGLANG_ENABLE_SPEC_V2": "1"},
        extra_args=["--enable-metrics", "--log-level=debug"],
    )
    form = render_yaml_form(p)
    data = yaml.safe_load(form.text)
    assert data == {
        "model-path": "/m x",
        "trust-remote-code": True,
        "tp-size": 2,
        "mem-fraction-static": 0.85,
        "cuda-graph-bs": [1, 2],
        "enable-metrics": True,
        "log-level": "debug",
    }
    assert form.command_line_only == []
    assert "SGLANG_ENABLE_SPEC_V2=1" in form.text.splitlines()[2]
    assert form.text.startswith("# SGLang 0.5.11 --config file")


def test_yaml_deprecated_store_true_stays_on_the_command_line_on_0_5_23() -> None:
    # 0.5.23's config reader refuses DeprecatedStoreTrueAction keys ("Unsupported config option")
    p = _profile(version="0.5.23", parallel={"enable_dp_attention": True})
    form = render_yaml_form(p)
    assert form.command_line_only == ["--enable-dp-attention"]
    assert "enable-dp-attention" not in yaml.safe_load(form.text)
    assert "--config THIS_FILE.yaml --enable-dp-attention" in form.text


@pytest.mark.parametrize(
    "path", sorted(builtin_profiles_dir().glob("*.toml")), ids=lambda p: p.name
)
def test_ready_profiles_round_trip(path: object) -> None:
    p = load_profile(str(path))
    launch = p.model_copy(
        update={
            "description": "",
            "gpu": Profile.model_fields["gpu"].get_default(call_default_factory=True),
            "ssh": p.ssh.model_copy(update={"host": None}),
            # the node list is not part of one command (`command --node R` adds the rank)
            "nodes": Profile.model_fields["nodes"].get_default(call_default_factory=True),
        }
    )
    back = parse_command(render_shell(p), p.sglang_version).profile
    assert back == launch.model_copy(update={"ssh": back.ssh}) and back.ssh.python == p.ssh.python


ROUND_TRIP_EXAMPLES = 150  # per version
YAML_EXAMPLES = 100  # per version


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
@settings(
    max_examples=ROUND_TRIP_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=st.data(), multiline=st.booleans())
def test_shell_round_trip_property(version: str, data: st.DataObject, multiline: bool) -> None:
    table = load_table(version)
    p = data.draw(profiles(table, version))
    text = render_shell(p, multiline=multiline, show_secrets=True)
    assert parse_command(text, version).profile == p
    shown = render_shell(p, multiline=multiline)  # what screens show: secret values masked
    option_of = secret_option_of(table)
    masked = parse_command(shown, version).profile.extra_args
    for value in secret_argv_values(masked, option_of).values():
        assert value in ("", "***") or value.startswith("$"), value


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
@settings(max_examples=YAML_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_yaml_form_means_the_same_argv_property(version: str, data: st.DataObject) -> None:
    table = load_table(version)
    p = data.draw(profiles(table, version))
    form = render_yaml_form(p)
    yaml_argv = config_args_like_sglang(yaml.safe_load(form.text) or {}, table)
    from_yaml = parse_flags(yaml_argv + form.command_line_only, version)
    # secret flag values stay on the command line, masked (`***`): compare with the masked argv
    direct = parse_flags(mask_argv(render_argv(p), secret_option_of(table)), version)
    assert from_yaml.values == direct.values
    assert sorted(from_yaml.unknown_to_profile) == sorted(direct.unknown_to_profile) or (
        form.command_line_only
    )


def test_nasty_strings_are_all_covered_by_the_round_trip() -> None:
    for text in NASTY:
        p = _profile(model={"path": text}, env={"V": text})
        assert parse_command(render_shell(p)).profile == p
