"""Importing pasted launch commands: env prefixes, wrappers, quoting, flag forms, typed errors."""

from __future__ import annotations

import pytest

from wizard.sglang.errors import CommandError
from wizard.sglang.parse import parse_command, parse_flags, split_launch

M = "--model-path /m"


@pytest.mark.parametrize(
    "command",
    [
        f"A=1 B='two words' python -m sglang.launch_server {M}",
        f"env A=1 B='two words' python3 -m sglang.launch_server {M}",
        f"export A=1 B='two words' && python3 -m sglang.launch_server {M}",
        f"export A=1; export B='two words'\npython3 -m sglang.launch_server {M}",
        f"A=1 B=two\\ words nohup /opt/venv/bin/python3.11 -u -m sglang.launch_server {M} &",
        f'A=1 B="two words" sglang serve {M}',
    ],
)
def test_env_prefix_forms(command: str) -> None:
    result = parse_command(command)
    assert result.profile.env == {"A": "1", "B": "two words"}
    assert result.profile.model.path == "/m"


def test_cuda_visible_devices_is_kept_as_env() -> None:
    p = parse_command(f"CUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server {M}").profile
    assert p.env == {"CUDA_VISIBLE_DEVICES": "0,1"}


def test_interpreter_is_kept_as_ssh_python() -> None:
    p = parse_command(f"/root/venv/bin/python3 -m sglang.launch_server {M}").profile
    assert p.ssh.python == "/root/venv/bin/python3"
    assert parse_command(f"python3 -m sglang.launch_server {M}").profile.ssh.python == "python3"


def test_nohup_redirections_and_background_are_stripped_and_noted() -> None:
    result = parse_command(
        f"nohup python3 -m sglang.launch_server {M} --port 30001 > /tmp/log 2>&1 &"
    )
    assert result.argv == ["--model-path", "/m", "--port", "30001"]
    notes = " | ".join(result.notes)
    assert "nohup" in notes and "> /tmp/log" in notes and "2>&1" in notes and "trailing &" in notes


def test_pipe_to_tee_is_dropped_with_a_note() -> None:
    result = parse_command(f"python3 -m sglang.launch_server {M} 2>&1 | tee log.txt")
    assert result.argv == ["--model-path", "/m"]
    assert any("tee log.txt" in n for n in result.notes)


def test_backslash_continuations_comments_and_crlf() -> None:
    text = (
        "# launch the server\r\n"
        "python3 -m sglang.launch_server \\\r\n"
        "  --model-path /m \\\n"
        "  --tp-size 2 \\\n"
        "  --trust-remote-code  # needed for custom code\n"
    )
    p = parse_command(text).profile
    assert (p.parallel.tp, p.model.trust_remote_code) == (2, True)


def test_flag_equals_value_store_true_nargs_plus_and_aliases() -> None:
    p = parse_command(
        "sglang serve --model=/m --tensor-parallel-size=4 --trust-remote-code "
        "--cuda-graph-bs 1 2 4 --mem-fraction-static=0.8"
    ).profile
    assert p.model.path == "/m"
    assert p.parallel.tp == 4
    assert p.model.trust_remote_code is True
    assert p.memory.cuda_graph_bs == [1, 2, 4]
    assert p.memory.mem_fraction_static == 0.8


def test_values_are_kept_as_typed() -> None:
    p = parse_command(f"sglang serve {M} --speculative-algorithm nextn", "0.5.23").profile
    assert p.speculative.algorithm == "nextn"
    assert p.sglang_version == "0.5.23"


def test_prefix_abbreviation_is_expanded_and_noted() -> None:
    result = parse_command(f"python -m sglang.launch_server {M} --speculative-algo EAGLE")
    assert result.profile.speculative.algorithm == "EAGLE"
    assert any("--speculative-algo" in n and "--speculative-algorithm" in n for n in result.notes)


def test_valid_flags_without_a_profile_field_go_to_extra_args_as_typed() -> None:
    p = parse_command(
        f"python -m sglang.launch_server {M} --log-level=debug --enable-metrics "
        "--json-model-override-args '{\"rope_scaling\": null}' --tp-size 2"
    ).profile
    assert p.extra_args == [
        "--log-level=debug",
        "--enable-metrics",
        "--json-model-override-args",
        '{"rope_scaling": null}',
    ]
    assert p.parallel.tp == 2


def test_quoted_values_with_spaces_quotes_and_dollar() -> None:
    p = parse_command(
        'python -m sglang.launch_server --model-path "/models/my model\'s \\$HOME" '
        "--served-model-name $'tab\\there'"
    ).profile
    assert p.model.path == "/models/my model's $HOME"
    assert p.model.served_model_name == "tab\there"


def test_unresolvable_expansion_is_kept_literally_with_a_note() -> None:
    result = parse_command("python -m sglang.launch_server --model-path $MODEL")
    assert result.profile.model.path == "$MODEL"
    assert any("$MODEL" in n and "literal" in n for n in result.notes)


def test_ssh_wrapped_command_is_read_inside_the_quotes() -> None:
    result = parse_command(
        "ssh gpu1 'SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path /m'"
    )
    assert result.profile.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert result.profile.model.path == "/m"


def test_argv_list_input() -> None:
    result = parse_command(
        ["A=1", "python3", "-m", "sglang.launch_server", "--model-path", "/a b", "--tp", "2"]
    )
    assert result.profile.env == {"A": "1"}
    assert result.profile.model.path == "/a b"
    assert result.profile.parallel.tp == 2


def test_sglang_serve_model_type_is_dropped_with_a_note() -> None:
    result = parse_command(f"sglang serve --model-type llm {M}")
    assert result.argv == ["--model-path", "/m"]
    assert any("--model-type" in n for n in result.notes)


def test_spec_v2_on_0_5_23_is_noted_as_without_effect() -> None:
    result = parse_command(f"SGLANG_ENABLE_SPEC_V2=1 sglang serve {M}", "0.5.23")
    assert result.profile.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert any("SGLANG_ENABLE_SPEC_V2" in n and "no effect" in n for n in result.notes)


def test_unsupported_version_uses_the_nearest_and_says_so() -> None:
    result = parse_command(f"sglang serve {M}", "0.6.0")
    assert result.version_used == "0.5.23"
    assert result.profile.sglang_version == "0.6.0"
    assert "0.6.0" in result.notes[0] and "0.5.23" in result.notes[0]


@pytest.mark.parametrize(
    ("command", "flag", "fragment"),
    [
        ("echo hello", None, "no SGLang launch command"),
        ("python -m sglang.launch_server --model-path '/m", "'/m", "unclosed single quote"),
        ('python -m sglang.launch_server --model-path "/m', '"/m', "unclosed double quote"),
        ("python -m sglang.launch_server --tp-size 2", "--model-path", "--model-path"),
        (f"python -m sglang.launch_server {M} --tp-size 0", "--tp-size", "parallel.tp"),
        (f"python -m sglang.launch_server {M} --port 70000", "--port", "server.port"),
        (
            f"sglang serve {M} && sglang serve {M}",
            "sglang serve",
            "more than one SGLang launch",
        ),
        (f"sglang serve {M} --tp-size 2 3", "3", "unrecognized arguments: 3"),
        ("sglang serve --model-path", "--model-path", "expected one argument"),
        ("bad-version", None, None),
    ],
)
def test_typed_errors(command: str, flag: str | None, fragment: str | None) -> None:
    if command == "bad-version":
        with pytest.raises(CommandError, match="not an SGLang version"):
            parse_command(f"sglang serve {M}", "five")
        return
    with pytest.raises(CommandError) as info:
        parse_command(command)
    if flag is not None:
        assert info.value.flag is not None and info.value.flag.startswith(flag)
    assert fragment is not None and fragment in str(info.value)


def test_parse_flags_values_are_canonical_dests_only_for_flags_present() -> None:
    parsed = parse_flags(
        ["--model-path", "/m", "--mamba-radix-cache-strategy", "extra_buffer", "--enable-metrics"],
        "0.5.23",
    )
    assert parsed.values == {"model_path": "/m", "mamba_scheduler_strategy": "extra_buffer"}
    assert parsed.unknown_to_profile == ["--enable-metrics"]


def test_deprecated_flag_is_accepted_with_a_note_on_0_5_23() -> None:
    parsed = parse_flags(["--model-path", "/m", "--enable-dp-attention"], "0.5.23")
    assert parsed.values["enable_dp_attention"] is True
    assert any("deprecated" in n and "--attn-dp-size" in n for n in parsed.notes)


def test_split_launch_reports_wrappers() -> None:
    parts = split_launch(
        "cd /srv && source .venv/bin/activate && time python -m sglang.launch_server --model-path /m"
    )
    assert parts.argv == ["--model-path", "/m"]
    assert parts.launcher == "python -m sglang.launch_server"
    assert any("cd /srv" in n for n in parts.notes)
    assert any("time" in n for n in parts.notes)


def test_config_file_flag_is_kept_and_noted() -> None:
    result = parse_command(f"sglang serve {M} --config /srv/sglang.yaml")
    assert result.profile.extra_args == ["--config", "/srv/sglang.yaml"]
    assert any("--config" in n and "not imported" in n for n in result.notes)


def test_docker_style_env_options_become_env() -> None:
    result = parse_command(
        f"docker run --gpus all -e HF_TOKEN=x lmsysorg/sglang python3 -m sglang.launch_server {M}"
    )
    assert result.profile.env == {"HF_TOKEN": "x"}
    assert result.profile.model.path == "/m"


def test_flags_only_paste_is_read_as_launch_flags() -> None:
    result = parse_command("--model-path /m \\\n  --tp-size 2")
    assert result.profile.parallel.tp == 2
    assert any("no launcher" in n for n in result.notes)


def test_flags_only_paste_after_environment_assignments() -> None:
    """`SGLANG_X=1 --model-path ...` (the variables then the flags, no launcher) keeps both, as
    `check -- ...` documents ("env prefix allowed, or just its flags")."""
    result = parse_command("SGLANG_ENABLE_SPEC_V2=1 --model-path /m --tp-size 2")
    assert result.profile.parallel.tp == 2
    assert result.profile.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    result = parse_command(["SGLANG_ENABLE_SPEC_V2=1", "--model-path", "/m"])
    assert result.profile.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    with pytest.raises(CommandError):
        parse_command("SGLANG_ENABLE_SPEC_V2=1")  # variables alone are no launch


def test_version_with_a_v_prefix_is_stored_without_it() -> None:
    result = parse_command(f"sglang serve {M}", "v0.5.23")
    assert result.profile.sglang_version == "0.5.23" and result.version_used == "0.5.23"
