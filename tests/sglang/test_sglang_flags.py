"""Flag lookup per version: exact, alias, unique prefix, ambiguity, renames, did-you-mean, and
SGLang's own argparse messages."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from wizard.sglang import flags as flags_module
from wizard.sglang.errors import CommandError, FlagDataError
from wizard.sglang.flags import (
    FLAG_INDEX_PATH,
    argparse_error,
    flag_index_data,
    load_table,
    rename_for,
    suggest_flag,
    table_from_data,
    unknown_flag_error,
)

BOTH = ("0.5.11", "0.5.23")
MODEL = ["--model-path", "/m"]


@pytest.mark.parametrize("version", BOTH)
def test_exact_alias_and_prefix_lookup(version: str) -> None:
    table = load_table(version)
    exact = table.lookup("--speculative-algorithm")
    assert (exact.option, exact.how, exact.action.dest) == (
        "--speculative-algorithm",
        "exact",
        "speculative_algorithm",
    )
    alias = table.lookup("--tensor-parallel-size")
    assert alias.action.server_field == "tp_size" and alias.how == "alias"
    assert table.lookup("--tp-size").how == "exact"
    assert table.lookup("--model").action.dest == "model_path"
    prefix = table.lookup("--speculative-algo")
    assert (prefix.option, prefix.how) == ("--speculative-algorithm", "prefix")
    with_value = table.lookup("--speculative-algo=EAGLE")
    assert with_value.explicit_value == "EAGLE" and with_value.typed == "--speculative-algo"


def test_renamed_flags_resolve_only_in_their_version() -> None:
    old, new = load_table("0.5.11"), load_table("0.5.23")
    assert old.lookup("--mamba-scheduler-strategy").action.dest == "mamba_scheduler_strategy"
    assert new.match("--mamba-scheduler-strategy") is None
    assert new.lookup("--mamba-radix-cache-strategy").action.dest == "mamba_radix_cache_strategy"
    assert old.match("--mamba-radix-cache-strategy") is None
    assert old.match("--speculative-skip-dp-mlp-sync") is not None
    assert new.match("--speculative-skip-dp-mlp-sync") is None


def test_ambiguous_prefix_is_sglangs_error() -> None:
    table = load_table("0.5.23")
    with pytest.raises(CommandError) as info:
        table.lookup("--cuda-graph-max-bs")
    err = info.value
    assert err.exit_like_sglang and err.sglang_error is not None
    assert err.sglang_error.message.startswith("ambiguous option: --cuda-graph-max-bs could match ")
    assert "--cuda-graph-max-bs-decode" in err.sglang_error.message
    assert "--cuda-graph-max-bs-prefill" in err.sglang_error.message
    assert "--cuda-graph-max-bs-decode" in (err.suggestion or "")
    assert err.sglang_error.line.startswith("sglang serve: error: ambiguous option")


def test_unknown_flag_of_the_other_version_names_it() -> None:
    err = unknown_flag_error("--mamba-radix-cache-strategy", load_table("0.5.11"))
    assert "0.5.14 spelling" in str(err) and "--mamba-scheduler-strategy" in (err.suggestion or "")
    err = unknown_flag_error("--mamba-scheduler-strategy", load_table("0.5.23"))
    assert "--mamba-radix-cache-strategy" in (err.suggestion or "")
    assert "renamed in SGLang 0.5.14 (the old name is gone from 0.5.20)" in (err.suggestion or "")
    err = unknown_flag_error("--speculative-skip-dp-mlp-sync", load_table("0.5.23"))
    assert "removed" in (err.suggestion or "")
    err = unknown_flag_error("--speculative-dflash-draft-window-size", load_table("0.5.23"))
    assert "--speculative-draft-window-size" in (err.suggestion or "")


def test_rename_for_is_version_aware() -> None:
    assert rename_for("--cuda-graph-bs", "0.5.11") is None
    assert "--cuda-graph-bs-decode" in (rename_for("--cuda-graph-bs", "0.5.23") or "")
    assert "--attn-dp-size" in (rename_for("--enable-dp-attention", "0.5.23") or "")
    assert rename_for("--enable-dp-attention", "0.5.11") is None
    assert "--mamba-scheduler-strategy" in (
        rename_for("--mamba-radix-cache-strategy", "0.5.11") or ""
    )


def test_renames_name_the_release_the_flag_tables_show() -> None:
    """The release of a rename is read from the flag tables, not written beside the flag."""
    assert rename_for("--mamba-radix-cache-strategy", "0.5.13") == (
        "--mamba-radix-cache-strategy is the SGLang 0.5.14 spelling; "
        "in 0.5.13 use --mamba-scheduler-strategy, or choose SGLang 0.5.14 or newer as the "
        "version if the host runs it"  # a 0.5.23 command pasted on 0.5.11: both ways out
    )
    assert "deprecated since SGLang 0.5.14" in (
        rename_for("--mamba-scheduler-strategy", "0.5.15") or "")
    assert "deprecated since SGLang 0.5.22" in (rename_for("--enable-dp-attention", "0.5.23") or "")
    assert rename_for("--speculative-skip-dp-mlp-sync", "0.5.5") is None  # not there yet
    assert "removed in SGLang 0.5.23" in (
        rename_for("--speculative-skip-dp-mlp-sync", "0.5.23") or "")
    assert "is the SGLang 0.5.12 spelling" in (
        rename_for("--speculative-draft-window-size", "0.5.11") or "")


@pytest.mark.parametrize("version", BOTH)
@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("--num-speculative-tokens", "--speculative-num-draft-tokens"),
        ("--speculative-model", "--speculative-draft-model-path"),
        ("--gpu-memory-utilization", "--mem-fraction-static"),
        ("--max-num-seqs", "--max-running-requests"),
        ("--max-model-len", "--context-length"),
        ("--speculative_num_steps", "--speculative-num-steps"),
        ("--speculative-num-daft-tokens", "--speculative-num-draft-tokens"),
        ("--trust-remote-cod", None),  # a unique prefix: valid, nothing to suggest
    ],
)
def test_did_you_mean(version: str, typed: str, expected: str | None) -> None:
    suggestion = suggest_flag(typed, load_table(version))
    if expected is None:
        assert suggestion is None
    else:
        assert suggestion is not None and f"did you mean {expected}?" in suggestion


def test_did_you_mean_follows_renames() -> None:
    # a synonym whose target was renamed in 0.5.23 points at the new spelling there
    assert "--mamba-scheduler-strategy" in (
        suggest_flag("--mamba-cache-strategy", load_table("0.5.11")) or ""
    )
    assert "--mamba-radix-cache-strategy" in (
        suggest_flag("--mamba-cache-strategy", load_table("0.5.23")) or ""
    )


@pytest.mark.parametrize("version", BOTH)
def test_argparse_error_texts(version: str) -> None:
    assert argparse_error([*MODEL, "--tp-size", "2"], version) is None
    err = argparse_error([*MODEL, "--tp-size", "two"], version)
    assert err is not None and err.message.endswith("invalid int value: 'two'")
    assert err.message.startswith("argument ") and "--tp-size" in err.message
    err = argparse_error([*MODEL, "--tp-size"], version)
    assert err is not None and err.message.endswith(": expected one argument")
    err = argparse_error(["--tp-size", "2"], version)
    assert err is not None and err.message.startswith("the following arguments are required: ")
    assert "--model-path" in err.message


def test_invalid_choice_is_case_sensitive_on_0_5_11_only() -> None:
    err = argparse_error([*MODEL, "--speculative-algorithm", "nextn"], "0.5.11")
    assert err is not None
    assert err.message.startswith(
        "argument --speculative-algorithm: invalid choice: 'nextn' (choose from "
    )
    for name in ("'EAGLE'", "'EAGLE3'", "'NEXTN'", "'STANDALONE'", "'NGRAM'", "'DFLASH'"):
        assert name in err.message
    assert argparse_error([*MODEL, "--speculative-algorithm", "nextn"], "0.5.23") is None


def test_unrecognized_arguments_are_collected_like_argparse() -> None:
    argv = [*MODEL, "--foo", "1", "--tp-size", "2", "--bar"]
    err = argparse_error(argv, "0.5.11")
    assert err is not None and err.message == "unrecognized arguments: --foo 1 --bar"


def test_type_errors_come_before_unrecognized_and_ambiguity_first() -> None:
    # argparse raises at the first bad value, before it reports unrecognized arguments
    err = argparse_error([*MODEL, "--foo", "--tp-size", "x"], "0.5.11")
    assert err is not None and "invalid int value: 'x'" in err.message
    # an ambiguous prefix is found while classifying the arguments, before any value is read
    err = argparse_error([*MODEL, "--tp-size", "x", "--cuda-graph-bs", "4"], "0.5.23")
    assert err is not None and err.message.startswith("ambiguous option: --cuda-graph-bs ")


def test_table_data_errors_are_typed() -> None:
    with pytest.raises(FlagDataError, match="not a flag table dump"):
        table_from_data({"actions": []}, "x.json")
    with pytest.raises(FlagDataError, match=r"x.json: actions\[0\]"):
        table_from_data({"sglang_version": "0.5.11", "actions": [{"dest": "a"}]}, "x.json")


def test_help_flag_is_not_a_launch_flag() -> None:
    from wizard.sglang.parse import parse_flags

    with pytest.raises(CommandError, match="prints SGLang's help"):
        parse_flags([*MODEL, "--help"], "0.5.11")


def test_run_argparse_namespace_uses_server_args_field_names() -> None:
    from wizard.sglang.flags import run_argparse

    old = run_argparse(load_table("0.5.11"), [*MODEL, "--tensor-parallel-size", "2", "--dp", "2"])
    assert vars(old) == {"model_path": "/m", "tp_size": 2, "dp_size": 2}
    new = run_argparse(load_table("0.5.23"), [*MODEL, "--tp", "2", "--enable-dp-attention"])
    # a deprecated action also records the option as typed (SGLang's warning names it)
    assert vars(new) == {"model_path": "/m", "tp_size": 2, "enable_dp_attention": True,
                         "_deprecated_options": ["--enable-dp-attention"]}


@pytest.mark.parametrize(
    ("argv", "version", "message"),
    [
        (
            ["--cuda-graph-backend-decode", "tc_piecewise"],
            "0.5.23",
            "argument --cuda-graph-backend-decode: tc_piecewise was removed; select breakable, full, or disabled",
        ),
        (
            ["--cuda-graph-config", "[1]"],
            "0.5.23",
            "argument --cuda-graph-config: --cuda-graph-config must be a JSON object, got list",
        ),
        (
            ["--cuda-graph-config", '{"decode": {"x": 1}}'],
            "0.5.23",
            "argument --cuda-graph-config: --cuda-graph-config['decode']: unknown key 'x', expected one of ('backend', 'max_bs', 'bs')",
        ),
    ],
)
def test_sglang_custom_types_are_reproduced(argv: list[str], version: str, message: str) -> None:
    err = argparse_error([*MODEL, *argv], version)
    assert err is not None and err.message == message


def test_human_readable_int_like_sglang() -> None:
    from wizard.sglang.flags import _human_readable_int

    assert _human_readable_int("25.6k") == 25600
    assert _human_readable_int("1Ki") == 1024
    assert _human_readable_int(" 7 ") == 7
    with pytest.raises(argparse.ArgumentTypeError, match="Decimals are not allowed"):
        _human_readable_int("1.5Ki")
    with pytest.raises(argparse.ArgumentTypeError, match="Invalid integer value: '1kb'"):
        _human_readable_int("1kb")


def test_every_synonym_target_exists_in_both_versions() -> None:
    from wizard.sglang.flags import SYNONYMS, _in_version

    for typed, (target, _engine) in SYNONYMS.items():
        for version in BOTH:
            assert _in_version(target, load_table(version)) is not None, (typed, version)


def test_allow_abbrev_and_ambiguity_come_from_the_table(hand_tables: object) -> None:
    """On a hand-written table: prefixes follow the dump's allow_abbrev, like argparse."""
    from sglang_hand_tables import table_0_5_11

    data = table_0_5_11()
    table = table_from_data(data)
    assert table.lookup("--speculative-algo").option == "--speculative-algorithm"
    no_abbrev = table_from_data({**data, "allow_abbrev": False})
    assert no_abbrev.match("--speculative-algo") is None
    err = argparse_error(["--model-path", "/m", "--speculative-algo", "EAGLE"], "0.5.11")
    assert err is None  # the hand table (loaded through the fixture) allows abbreviations
    with pytest.raises(CommandError, match="ambiguous option: --speculative-num"):
        table.lookup("--speculative-num")


def test_deprecated_actions_keep_their_dumped_nargs() -> None:
    # 0.5.23 DeprecatedStoreConstAction with nargs=None and choices ['amd'] takes a value
    assert argparse_error([*MODEL, "--monokernel-backend", "amd"], "0.5.23") is None
    err = argparse_error([*MODEL, "--monokernel-backend", "x"], "0.5.23")
    assert err is not None and "invalid choice: 'x'" in err.message
    # 0.5.11 DeprecatedAction (nargs=0) is a switch that only warns
    assert argparse_error([*MODEL, "--collect-tokens-histogram"], "0.5.11") is None


def test_run_argparse_can_check_a_part_of_an_argv() -> None:
    from wizard.sglang.flags import run_argparse

    table = load_table("0.5.11")
    with pytest.raises(CommandError, match="the following arguments are required"):
        run_argparse(table, ["--enable-metrics"])
    assert vars(run_argparse(table, ["--enable-metrics"], require=False)) == {
        "enable_metrics": True
    }
    with pytest.raises(CommandError, match="unrecognized arguments: --nope") as info:
        run_argparse(table, ["--nope"], require=False)
    assert info.value.flag == "--nope"


# ---------------------------------------------------------------------------------------------
# The flag index: which releases have a flag, without reading every release's table


def test_committed_flag_index_matches_the_flag_tables() -> None:
    """`flag-releases.json` is what the tables say (re-run `write_flag_index()` after a dump)."""
    committed = json.loads(FLAG_INDEX_PATH.read_text(encoding="utf-8"))
    assert committed == flag_index_data()
    assert flags_module._flag_index() is not None  # and it is the one used


def _without_index(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    monkeypatch.setattr(flags_module, "FLAG_INDEX_PATH", path)
    flags_module._flag_index.cache_clear()


@pytest.mark.parametrize(
    ("option", "version"),
    [
        ("--speculative-skip-dp-mlp-sync", "0.5.5"),  # newer releases only
        ("--speculative-dflash-draft-window-size", "0.5.11"),
        ("--custom-sigquit-handler", "0.5.23"),  # 0.5.7-0.5.13 only
        ("--speculative-algoritm", "0.5.11"),  # a typo: in no release
        ("--mamba-radix-cache-strategy", "0.5.11"),  # a rename
    ],
)
def test_unknown_flag_error_is_the_same_with_and_without_the_index(
    option: str, version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = load_table(version)
    flags_module._flag_index.cache_clear()
    with_index = unknown_flag_error(option, table)
    _without_index(monkeypatch, tmp_path / "missing.json")
    assert flags_module._flag_index() is None
    read_all = unknown_flag_error(option, table)
    assert (with_index.message, with_index.suggestion) == (read_all.message, read_all.suggestion)
    flags_module._flag_index.cache_clear()


def test_a_stale_flag_index_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = flag_index_data()
    data["sizes"]["0.5.11"] += 1  # the 0.5.11 table was dumped again since
    stale = tmp_path / "flag-releases.json"
    stale.write_text(json.dumps(data), encoding="utf-8")
    _without_index(monkeypatch, stale)
    assert flags_module._flag_index() is None
    del data["sizes"]["0.5.11"]  # or is new
    stale.write_text(json.dumps(data), encoding="utf-8")
    flags_module._flag_index.cache_clear()
    assert flags_module._flag_index() is None
    data["sizes"]["0.5.11"] = flag_index_data()["sizes"]["0.5.11"]
    stale.write_text(json.dumps(data), encoding="utf-8")
    flags_module._flag_index.cache_clear()
    assert flags_module._flag_index() == data["options"]
    flags_module._flag_index.cache_clear()


def _outcome(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[str, object]:
    try:
        return "ok", sorted(vars(parser.parse_args(argv)).items(), key=lambda kv: kv[0])
    except flags_module._ArgparseFailure as failure:
        return "error", failure.message
    except flags_module._HelpRequested as help_request:
        return "help", help_request.option


def _known(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[str, object]:
    """`parse_known_args`' leftovers (what an unrecognized-arguments message is explained from)."""
    try:
        return "ok", parser.parse_known_args(argv)[1]
    except flags_module._ArgparseFailure as failure:
        return "error", failure.message
    except flags_module._HelpRequested as help_request:
        return "help", help_request.option


@pytest.mark.parametrize("version", ["0.5.0", "0.5.11", "0.5.23"])
@pytest.mark.parametrize("require", [True, False])
def test_the_subset_parser_parses_like_the_full_parser(version: str, require: bool) -> None:
    """`_parse_args` parses with a parser of only the actions the argv names: on random argvs
    (exact, `=`, abbreviated, repeated and unknown options, values of every kind, negative
    numbers, `--`) it gives argparse's own namespace or message, and it is used for most."""
    import random

    table = load_table(version)
    parser = table.parser if require else table.lenient_parser
    options = sorted(table.by_option)
    rng = random.Random(f"subset-{version}-{require}")
    values = ["1", "0", "-1", "-0.5", "2.5", "abc", "fa3", "triton", "true", "", "-x", "a b",
              "--", "-", "EAGLE", "fp8_e4m3"]
    used_subset = parsed = 0
    for _ in range(1500):
        argv = list(MODEL) if rng.random() < 0.8 else []
        for _ in range(rng.randint(0, 6)):
            option = rng.choice(options)
            action = table.by_option[option]
            roll = rng.random()
            if roll < 0.08 and len(option) > 6:
                option = option[: rng.randint(4, len(option) - 1)]  # an abbreviation
            elif roll < 0.12:
                option = option + "-typo"
            elif roll < 0.14:
                option = rng.choice(["--zz-not-a-flag", "--mamba-scheduler-strategy",
                                     "--enable-dp-attention", "--a b", "--tp"])
            pick = [str(c) for c in action.choices or ()] + values
            if roll > 0.85:
                argv.append(f"{option}={rng.choice(pick)}")
            else:
                argv.append(option)
                argv.extend(rng.choice(pick) for _ in range(rng.choice([0, 1, 1, 1, 2])))
        full = _outcome(parser, argv)
        small = flags_module._subset_parser(parser, argv)
        if small is not None:
            used_subset += 1
            assert _outcome(small, argv) == full, argv
            assert _known(small, argv) == _known(parser, argv), argv
        try:
            fast: tuple[str, object] = (
                "ok", sorted(vars(flags_module._parse_args(parser, argv)).items(),
                             key=lambda kv: kv[0]))
        except flags_module._ArgparseFailure as failure:
            fast = ("error", failure.message)
        except flags_module._HelpRequested as help_request:
            fast = ("help", help_request.option)
        assert fast == full, argv
        parsed += fast[0] == "ok"
    assert used_subset > 600 and parsed > 100, (used_subset, parsed)
