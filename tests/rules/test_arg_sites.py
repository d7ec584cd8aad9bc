"""R-ARG-SITE (`wizard/rules/arg_sites.py`): SGLang's checks of flags as typed, read from each
release's data, reported with SGLang's exception, words and `file:line`, in launch-path order."""

from __future__ import annotations

from pathlib import Path

import pytest

from wizard.api import apply_fix, check_argv, check_profile
from wizard.profile import load_profile
from wizard.rules.arg_sites import GENERIC, compile_condition
from wizard.rules.engine import first_sglang_error
from wizard.sglang.parse import parse_command
from wizard.sglang.releases import load_release, release_names

ROOT = Path(__file__).resolve().parents[2]
M = ["--model-path", "/models/none"]


def _site(version: str, text: str) -> dict[str, object]:
    return next(dict(s) for s in load_release(version).generic_sites
                if s["message"] and str(s["message"][0]).startswith(text))


@pytest.mark.parametrize(("version", "argv", "text", "stage", "near_miss"), [
    ("0.5.15", ["--kv-canary-sweep-interval", "5"],
     "--kv-canary-sweep-interval requires --kv-canary in {log, raise}", "check",
     ["--kv-canary", "log"]),
    ("0.5.23", ["--kv-canary-sweep-interval", "5"],
     "--kv-canary-sweep-interval requires --kv-canary in {log, raise}", "check",
     ["--kv-canary", "raise"]),
    ("0.5.15", ["--enable-ssl-refresh"],
     "--enable-ssl-refresh requires --ssl-certfile and --ssl-keyfile to be specified.", "resolve",
     ["--ssl-certfile", "c.pem", "--ssl-keyfile", "k.pem"]),
    ("0.5.6.post1", ["--disaggregation-mode", "prefill",
                     "--disaggregation-decode-enable-offload-kvcache"],
     "The argument disaggregation-decode-enable-offload-kvcache is only supported for decode "
     "side.", "resolve", ["--disaggregation-mode", "decode", "--hicache-storage-backend", "file"]),
])
def test_site_fires_with_sglangs_words_and_line(version: str, argv: list[str], text: str,
                                                stage: str, near_miss: list[str]) -> None:
    report = check_argv([*M, *argv], sglang_version=version, gpu="H100", gpus=1)
    first = first_sglang_error(report)
    assert first is not None and first.rule == GENERIC.id
    assert first.message == text
    site = _site(version, text)
    assert first.sglang is not None
    assert (first.sglang.stage, first.sglang.exception, first.sglang.where) == (
        stage, "ValueError", site["where"])
    assert first.sglang.message == text
    missed = check_argv([*M, *argv, *near_miss], sglang_version=version, gpu="H100", gpus=1)
    assert not [f for f in missed.findings if f.rule == GENERIC.id]


def test_placeholders_take_the_typed_value() -> None:
    report = check_argv([*M, "--enable-mamba-cache-stochastic-rounding", "--mamba-ssm-dtype",
                         "float32"], sglang_version="0.5.15", gpu="B200", gpus=1)
    first = first_sglang_error(report)
    assert first is not None and first.rule == GENERIC.id
    assert first.message.startswith(
        "Stochastic rounding for the Mamba SSM cache requires --mamba-ssm-dtype float16, "
        "got 'float32'.")


def test_platform_probes_follow_the_gpu_kind() -> None:
    """0.5.15 refuses the DeepSeek-V4 FP4 indexer off SM100 (`is_sm100_supported()`)."""
    argv = [*M, "--enable-deepseek-v4-fp4-indexer"]
    on_h100 = check_argv(argv, sglang_version="0.5.15", gpu="H100", gpus=1)
    on_b200 = check_argv(argv, sglang_version="0.5.15", gpu="B200", gpus=1)
    assert [f.message for f in on_h100.findings if f.rule == GENERIC.id] == [
        "--enable-deepseek-v4-fp4-indexer requires SM100 GPUs with DeepGEMM FP4 indexer support."]
    assert not [f for f in on_b200.findings if f.rule == GENERIC.id]


@pytest.mark.parametrize(("version", "where", "words"), [
    ("0.5.14", "sglang/srt/server_args.py:4858", "please check flashinfer installation."),
    ("0.5.23", "sglang/srt/arg_groups/mamba_hook.py:72", "please check the FlashInfer "
                                                          "installation."),
])
def test_flashinfer_presence_is_a_platform_probe(version: str, where: str, words: str) -> None:
    """`--mamba-backend flashinfer` on ROCm: SGLang's `is_flashinfer_available()` (0.5.14) /
    `get_platform().has_flashinfer` (0.5.23) is False there (FlashInfer is CUDA-only), so the
    launch is refused; on H100 it passes (0.5.14-w00023 on MI300X, 0.5.23-w00019 on MI355X,
    seeds 41503 / 41529, and their H100 twins)."""
    argv = [*M, "--mamba-backend", "flashinfer"]
    on_rocm = first_sglang_error(check_argv(argv, sglang_version=version, gpu="MI300X", gpus=1))
    assert on_rocm is not None and on_rocm.rule == GENERIC.id
    assert on_rocm.message == f"FlashInfer mamba module not available, {words}"
    assert on_rocm.sglang is not None
    assert (on_rocm.sglang.exception, on_rocm.sglang.where) == ("ValueError", where)
    on_h100 = check_argv(argv, sglang_version=version, gpu="H100", gpus=1)
    assert not [f for f in on_h100.findings if f.rule == GENERIC.id]


def test_the_amd_arch_probes_follow_the_gfx_arch() -> None:
    """0.5.23 allows the DeepSeek-V4 FP4 indexer on SM100, SM120 or gfx95
    (`is_gfx95_supported()`, serving_hook.py:467): refused on MI300X (gfx942) and H100, accepted
    on MI355X (gfx950) and B200 (0.5.23-w00073 on MI300X, seed 41503, and its H100 twin)."""
    argv = [*M, "--enable-deepseek-v4-fp4-indexer"]
    for gpu, refused in (("MI300X", True), ("H100", True), ("MI355X", False), ("B200", False)):
        report = check_argv(argv, sglang_version="0.5.23", gpu=gpu, gpus=1)
        generic = [f for f in report.findings if f.rule == GENERIC.id]
        assert bool(generic) == refused, gpu
        if refused:
            assert generic[0].sglang is not None
            assert generic[0].sglang.where == "sglang/srt/arg_groups/serving_hook.py:467"


def test_first_error_follows_the_launch_path() -> None:
    """0.5.15's _handle_cache_compatibility raises R-HICACHE-NO-RADIX before its offload check;
    the offload check comes before check_server_args' kv-canary check."""
    both = check_argv([*M, "--enable-hierarchical-cache", "--disable-radix-cache",
                       "--disaggregation-decode-enable-offload-kvcache",
                       "--kv-canary-sweep-interval", "5"],
                      sglang_version="0.5.15", gpu="H100", gpus=1)
    errors = [(f.rule, f.message[:40]) for f in both.errors]
    assert errors[0][0] == "R-HICACHE-NO-RADIX"
    generic = [m for rule, m in errors if rule == GENERIC.id]
    assert generic == ["The argument disaggregation-decode-enabl",  # outside decode mode
                       "The argument disaggregation-decode-enabl",  # without a storage backend
                       "--kv-canary-sweep-interval requires --kv"]


def test_no_site_is_also_a_hand_written_rule() -> None:
    for version in release_names():
        release = load_release(version)
        located = {s.where for s in release.sites.values()}
        assert not located & {s["where"] for s in release.generic_sites}, version


def test_conditions_are_data_not_code() -> None:
    with pytest.raises(ValueError, match="not a condition node"):
        compile_condition(["call", "__import__", "os"], {})
    with pytest.raises(ValueError, match="not a literal"):
        compile_condition(["const", {"x": 1}], {})
    holds = compile_condition(["and", ["flag", "a"], ["cmp", "in", ["flag", "b"],
                                                      ["const", ["x", "y"]]]], {"a": False})
    assert holds({"a": True, "b": "y"}, frozenset()) and not holds({"b": "y"}, frozenset())


def test_the_fix_drops_the_flag_from_extra_args() -> None:
    ready = load_profile(ROOT / "profiles" / "deepseek-v3-fp8-2x8-h100.toml")
    profile = ready.with_edits({"sglang_version": "0.5.15", "extra_args": [
        "--kv-canary-sweep-interval", "5", "--enable-ssl-refresh"]})
    report = check_profile(profile)
    generic = [f for f in report.findings if f.rule == GENERIC.id]
    assert [[fix.label for fix in f.fixes] for f in generic] == [
        ["Drop --enable-ssl-refresh from extra args"],
        ["Drop --kv-canary-sweep-interval from extra args"]]
    fixed = profile.with_edits(generic[0].fixes[0].edits)
    assert fixed.extra_args == ["--kv-canary-sweep-interval", "5"]


def test_the_fix_drops_the_flag_from_a_command() -> None:
    """`check -- COMMAND`: a site's flag that no profile field holds gets a drop fix too; its edit
    is the `extra_args` of the profile `import` makes of the command, and applying it (to that
    profile, or as the command without the flag) removes the finding and only that one."""
    argv = [*M, "--tp", "2", "--kv-canary-sweep-interval", "5", "--enable-ssl-refresh"]
    report = check_argv(argv, sglang_version="0.5.15", gpu="H100")
    generic = [f for f in report.findings if f.rule == GENERIC.id]
    assert [[fix.label for fix in f.fixes] for f in generic] == [
        ["Drop --enable-ssl-refresh from the command"],
        ["Drop --kv-canary-sweep-interval from the command"]]
    imported = parse_command(argv, "0.5.15").profile
    assert imported.extra_args == argv[4:]
    for finding in generic:
        fixed = apply_fix(imported, finding.fixes[0])
        after = check_profile(fixed, gpu="H100")
        messages = {f.message for f in after.findings if f.rule == GENERIC.id}
        assert finding.message not in messages and len(messages) == 1
        rest = check_argv([*argv[:4], *fixed.extra_args], sglang_version="0.5.15", gpu="H100")
        assert finding.message not in {f.message for f in rest.findings}


def test_a_command_drop_is_offered_only_when_it_removes_the_finding() -> None:
    """A flag of the site whose default still makes it hold is not offered: 0.5.15's
    `--enable-ssl-refresh` check reads the certificate flags too, and dropping a typed
    `--ssl-keyfile` leaves that refusal (it does remove the keyfile's own, earlier one)."""
    argv = [*M, "--enable-ssl-refresh", "--ssl-keyfile", "k.pem"]
    report = check_argv(argv, sglang_version="0.5.15", gpu="H100")
    generic = [f for f in report.findings if f.rule == GENERIC.id]
    assert [(f.message[:30], [fix.label for fix in f.fixes]) for f in generic] == [
        ("--ssl-keyfile requires --ssl-c", ["Drop --ssl-keyfile from the command"]),
        ("--enable-ssl-refresh requires ", ["Drop --enable-ssl-refresh from the command"])]


def test_a_resolved_field_is_read_as_sglang_resolves_it() -> None:
    """0.5.4.post3's PD-multiplexing asserts run in check_server_args, after SGLang set the
    chunked prefill size from GPU memory: untyped, it is not -1, so the chunked-prefill assert
    fires first (real 0.5.4.post3 on H800, seed 7120351 case w00045); typed -1 passes it, and
    then the overlap assert reads the resolved overlap switch."""
    base = [*M, "--enable-pdmux"]
    first = first_sglang_error(check_argv(base, sglang_version="0.5.4.post3", gpu="H100",
                                          gpus=1))
    assert first is not None and first.rule == GENERIC.id
    assert first.message == "PD-Multiplexing is not compatible with chunked prefill."
    assert first.sglang is not None and first.sglang.exception == "AssertionError"
    no_chunk = first_sglang_error(check_argv([*base, "--chunked-prefill-size", "-1"],
                                             sglang_version="0.5.4.post3", gpu="H100", gpus=1))
    assert no_chunk is not None
    assert no_chunk.message == "PD-Multiplexing is not compatible with overlap schedule."
    clean = check_argv([*base, "--chunked-prefill-size", "-1", "--disable-overlap-schedule"],
                       sglang_version="0.5.4.post3", gpu="H100", gpus=1)
    assert not [f for f in clean.findings if f.rule == GENERIC.id]


@pytest.mark.parametrize(("version", "argv", "where"), [
    # the attention CP size as typed (only DeepSeek's overrides rewrite it): 0.5.23 refuses it
    # at parallel_hook.py:159 (real 0.5.23, L4 x4, seed 31203 case w00069)
    ("0.5.23", ["--tp", "4", "--attn-cp-size", "1024"], "arg_groups/parallel_hook.py:159"),
    # the same check in 0.5.11's monolith (real 0.5.11, A100-40GB, seed 5120612 case w00000)
    ("0.5.11", ["--attention-context-parallel-size", "1024"], "server_args.py:2894"),
    # the lp dispatch needs an a2a backend: moe_a2a_backend replayed (none) on 0.5.23 (real
    # 0.5.23, L40S x2, seed 5120601 case w00134)
    ("0.5.23", ["--tp-size", "2", "--ep-dispatch-algorithm", "lp", "--enable-eplb"],
     "arg_groups/parallel_hook.py:783"),
    # a function called from two places, read at its first call (real 0.5.23, A10G x8, seed
    # 5120601 case w00066)
    ("0.5.23", ["--tp", "8", "--prefill-only-disable-kv-cache"],
     "arg_groups/kv_cache_hook.py:880"),
])
def test_sites_after_rewrites_fire_and_their_drops_remove_them(
        models: dict[str, str], version: str, argv: list[str], where: str) -> None:
    """Sites reading a field SGLang rewrites first are read on the replayed values; a command's
    drop fixes each remove their finding (the command without the flag checked again)."""
    command = ["--model-path", models["llama"], *argv]
    report = check_argv(command, sglang_version=version, gpu="H100", gpus=8)
    first = first_sglang_error(report)
    assert first is not None and first.rule == GENERIC.id
    assert first.sglang is not None and first.sglang.where == f"sglang/srt/{where}"
    for finding in (f for f in report.findings if f.rule == GENERIC.id):
        for fix in finding.fixes:
            assert fix.label.startswith("Drop ") and fix.label.endswith(" from the command")
            at = command.index(fix.label.split()[1])
            width = 1 if at + 1 == len(command) or command[at + 1].startswith("--") else 2
            rest = command[:at] + command[at + width:]
            after = check_argv(rest, sglang_version=version, gpu="H100", gpus=8)
            assert finding.message not in {f.message for f in after.findings}, (fix.label, rest)


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The public checkpoints' config.json folders the wide sweeps run on."""
    from wizard.conformance.models import public_model_configs, write_model_folders

    return write_model_folders(tmp_path_factory.mktemp("public"), public_model_configs())


def _first(version: str, gpu: str, gpus: int, argv: list[str]) -> tuple[str, str] | None:
    from wizard.api import check_case

    report = check_case({"id": 1, "sglang_version": version, "gpu": gpu, "gpus": gpus,
                         "argv": argv, "env": {}})
    error = report["first_sglang_error"]
    if error is None:
        return None
    finding = next(f for f in report["findings"] if f["rule"] == error)
    return error, f'{finding["sglang"]["exception"]} {finding["sglang"]["where"]}'


@pytest.mark.parametrize(("version", "gpu", "gpus", "argv", "expected"), [
    # DeepSeek's registered override rewrites attn_cp_size only under --enable-prefill-cp
    # (overrides.py `_deepseek_family_overrides`): without it the typed size is checked (real
    # 0.5.17, RTX 4090, seed 24120901 case w00026) ...
    ("0.5.17", "RTX 4090", 1, ["--kv-cache-dtype=fp8_e5m2", "--attn-cp-size=2"],
     "AssertionError sglang/srt/server_args.py:6341"),
    # ... with it SGLang refuses the missing --cp-strategy first: the check after
    # `_handle_legacy_cp_arguments`' second call (real 0.5.17, RTX 4090 x8, seed 24120902 w00026)
    ("0.5.17", "RTX 4090", 8, ["--tp=8", "--context-length=40960", "--quantization", "fp8",
                               "--disable-radix-cache", "--enable-prefill-cp"],
     "ValueError sglang/srt/server_args.py:6320"),
    # the attention-TP width SGLang derives in a helper outside the argument code
    # (runtime_context.derive_attn_tp_size), checked before the Kimi-K3-only check (real 0.5.23,
    # MI355X x4, notes-rocm3 seed 41529 case w00070)
    ("0.5.23", "MI355X", 4, ["--tp", "4", "--disable-radix-cache", "--enable-mixed-chunk",
                             "--shared-experts-tp-size", "1024",
                             "--speculative-attention-mode", "decode"],
     "ValueError sglang/srt/arg_groups/parallel_hook.py:216"),
])
def test_checks_behind_overrides_second_calls_and_helpers(
        public: dict[str, Path], version: str, gpu: str, gpus: int, argv: list[str],
        expected: str) -> None:
    command = ["--model-path", str(public["deepseek_v3"]), *argv]
    assert _first(version, gpu, gpus, command) == ("R-ARG-SITE", expected)


def test_a_second_call_of_a_normalising_function_is_replayed(public: dict[str, Path]) -> None:
    """0.5.17 calls `_handle_legacy_cp_arguments` twice; --enable-prefill-cp without
    --cp-strategy is refused after the second call (real 0.5.17, H100 x2, seed 24120902 w00011),
    and a strategy removes the finding."""
    base = ["--model-path", str(public["llama31_8b"]), "--dp-size", "2", "--sampling-backend",
            "pytorch", "--enable-prefill-cp"]
    assert _first("0.5.17", "H100", 2, base) == (
        "R-ARG-SITE", "ValueError sglang/srt/server_args.py:6320")
    assert _first("0.5.17", "H100", 2, [*base, "--cp-strategy", "zigzag"]) != (
        "R-ARG-SITE", "ValueError sglang/srt/server_args.py:6320")


def test_an_overrides_condition_scopes_its_abstention() -> None:
    """The 0.5.17 data: the `tp_size % attn_cp_size` assert abstains for the DeepSeek family
    only when --enable-prefill-cp may hold (the condition of the override's write)."""
    site = next(s for s in load_release("0.5.17").generic_sites
                if s["where"] == "sglang/srt/server_args.py:6341")
    assert "DeepseekV3ForCausalLM" not in site.get("unknown_archs", ())
    scopes = [s for s in site["unknown_if"] if "DeepseekV3ForCausalLM" in s["archs"]]
    assert scopes and all("enable_prefill_cp" in s["defaults"] for s in scopes)


def test_a_platform_object_bound_to_a_local_is_probed(public: dict[str, Path]) -> None:
    """0.5.21 `validate_prefill_cp_platform`: `platform = get_platform()`, then
    `platform.is_hip` refuses prefill CP on ROCm before the missing --cp-strategy (real 0.5.21,
    MI300X x2, seed 24121011 case w00000); on H100 the --cp-strategy check is first."""
    argv = ["--model-path", str(public["llama31_8b"]), "--tp=2", "--page-size", "64",
            "--disable-overlap-schedule", "--enable-prefill-cp"]
    assert _first("0.5.21", "MI300X", 2, argv) == (
        "R-ARG-SITE", "ValueError sglang/srt/arg_groups/parallel_hook.py:692")
    on_cuda = _first("0.5.21", "H100", 2, argv)
    assert on_cuda is not None and on_cuda[1] != (
        "ValueError sglang/srt/arg_groups/parallel_hook.py:692")


@pytest.mark.parametrize(("version", "gpu", "gpus", "argv", "where"), [
    # --enable-unified-memory implies the page-major KV layout, whose allow-list is chosen by
    # use_mla_backend() / has_asymmetric_kv (not read): the site holds when no list allows the
    # resolved backend, here ROCm's aiter (real 0.5.23, MI300X x8, seed 41503 case w00008) ...
    ("0.5.23", "MI300X", 8, ["--tp-size", "8", "--enable-unified-memory"],
     "sglang/srt/arg_groups/kv_cache_hook.py:822"),
    # ... and torch_native in 0.5.17's monolith (real 0.5.17, GB300 x8, seed 24121008 w00052)
    ("0.5.17", "GB300", 8, ["--tensor-parallel-size", "8", "--attention-backend", "torch_native",
                            "--kv-cache-dtype", "auto", "--quantization=compressed-tensors",
                            "--disable-overlap-schedule", "--cuda-graph-max-bs", "32",
                            "--enable-unified-memory"],
     "sglang/srt/server_args.py:7957"),
])
def test_a_list_chosen_by_an_unread_test_holds_for_every_choice(
        public: dict[str, Path], version: str, gpu: str, gpus: int, argv: list[str],
        where: str) -> None:
    command = ["--model-path", str(public["qwen3_next_80b"]), *argv]
    assert _first(version, gpu, gpus, command) == ("R-ARG-SITE", f"AssertionError {where}")
    # triton is on every list: whichever SGLang chose, the assert passes
    triton = [a for a in command if a not in ("torch_native",)]
    if "--attention-backend" in triton:
        triton.insert(triton.index("--attention-backend") + 1, "triton")
    else:
        triton += ["--attention-backend", "triton"]
    assert _first(version, gpu, gpus, triton) != ("R-ARG-SITE", f"AssertionError {where}")


def test_the_capability_major_follows_the_gpu_kind() -> None:
    """`torch.cuda.get_device_capability()[0] >= 10` (0.5.15 server_args.py:4704): the FlashInfer
    linear-attention decode backend needs --mamba-ssm-dtype bfloat16 on SM100+ only: refused on
    an RTX 5090 (12.0) and a B200 (10.0), accepted on an H100 (9.0) and with the dtype typed
    (real 0.5.15, RTX 5090, seed 44401 case w00058)."""
    argv = [*M, "--linear-attn-backend", "flashinfer"]
    for gpu, refused in (("RTX 5090", True), ("B200", True), ("H100", False)):
        first = first_sglang_error(check_argv(argv, sglang_version="0.5.15", gpu=gpu, gpus=1))
        assert (first is not None and first.rule == GENERIC.id) == refused, gpu
        if refused:
            assert first is not None and first.sglang is not None
            assert first.sglang.where == "sglang/srt/server_args.py:4704"
            assert first.message == ("--linear-attn-decode-backend flashinfer on SM100+ requires "
                                     "--mamba-ssm-dtype bfloat16, got None")
    typed = check_argv([*argv, "--mamba-ssm-dtype", "bfloat16"], sglang_version="0.5.15",
                       gpu="B200", gpus=1)
    assert first_sglang_error(typed) is None


@pytest.mark.parametrize(("version", "where"), [
    ("0.5.7", "sglang/srt/server_args.py:1781"), ("0.5.14", "sglang/srt/server_args.py:4798")])
def test_a_record_attribute_bound_in_the_function_is_read(public: dict[str, Path], version: str,
                                                           where: str) -> None:
    """0.5.7-0.5.14 `_handle_kv4_compatibility`: `self.prefill_attention_backend_str,
    self.decode_attention_backend_str = self.get_attention_backends()`, then an FP4 KV cache
    on an MHA model asserts the backend is one SGLang lists: the H100's default fa3 is not
    (real 0.5.14, H100-NVL x8, seed 44201 case w00044); triton is."""
    argv = ["--model-path", str(public["llama31_8b"]), "--kv-cache-dtype", "fp4_e2m1"]
    assert _first(version, "H100", 1, argv) == ("R-ARG-SITE", f"AssertionError {where}")
    assert _first(version, "H100", 1, [*argv, "--attention-backend", "triton"]) is None


def test_a_tuple_bound_in_a_nested_block_is_read(public: dict[str, Path]) -> None:
    """0.5.14's DeepSeek branch binds `major, _ = torch.cuda.get_device_capability()` inside its
    DSA `if` and passes `major` to `_set_default_dsa_kv_cache_dtype`: that write is replayed now
    (bf16 below SM100, fp8_e4m3 from it), so the KV4 MLA assert is not "unknown" for DeepSeek-V3
    any more: fa3 with an FP4 KV cache is refused (real 0.5.14, H20 x8 with DP attention, seed
    44301 case w00015), flashinfer is accepted."""
    site = next(s for s in load_release("0.5.14").generic_sites
                if str(s["source"]).startswith("assert self.attention_backend in KV4_ATTENTION_MLA"))
    assert "unknown_if" not in site and "unknown_archs" not in site
    argv = ["--model-path", str(public["deepseek_v3"]), "--tp-size", "8", "--kv-cache-dtype",
            "fp4_e2m1"]
    assert _first("0.5.14", "H20", 8, [*argv, "--attention-backend", "fa3"]) == (
        "R-ARG-SITE", f"AssertionError {site['where']}")
    assert _first("0.5.14", "H20", 8, [*argv, "--attention-backend", "flashinfer"]) is None


@pytest.mark.parametrize(("config", "refused"), [
    (None, True),  # no config: threshold 0 <= next_prompt_estimate 0
    ('{"threshold": 4096, "next_prompt_estimate": 512}', False),
    ('{"threshold": 512, "next_prompt_estimate": 4096}', True),
    ('{"threshold": -1}', True),  # negative
])
def test_a_json_flag_read_with_get(config: str | None, refused: bool) -> None:
    """0.5.21 `kv_cache_hook.py`: `tlru_config = cfg.radix_eviction_policy_config or {}`, then
    `tlru_config.get("threshold", 0)` / `.get("next_prompt_estimate", 0)` checked (real 0.5.21
    refused `--radix-eviction-policy tlru` without a config: seed 44201 case w00010)."""
    argv = [*M, "--radix-eviction-policy", "tlru",
            *(["--radix-eviction-policy-config", config] if config else [])]
    report = check_argv(argv, sglang_version="0.5.21", gpu="H100", gpus=1)
    generic = [f for f in report.findings if f.rule == GENERIC.id]
    assert bool(generic) is refused
    if refused:
        assert generic[0].sglang is not None
        assert generic[0].sglang.where.startswith("sglang/srt/arg_groups/kv_cache_hook.py:3")
        assert "--radix-eviction-policy tlru" in generic[0].message


def _first_with_env(version: str, gpu: str, argv: list[str],
                    env: dict[str, str]) -> tuple[str, str] | None:
    from wizard.api import check_case

    report = check_case({"id": 1, "sglang_version": version, "gpu": gpu, "gpus": 1,
                         "argv": argv, "env": env})
    error = report["first_sglang_error"]
    if error is None:
        return None
    finding = next(f for f in report["findings"] if f["rule"] == error)
    return error, f'{finding["sglang"]["exception"]} {finding["sglang"]["where"]}'


def test_the_checkpoint_quant_method_a_model_branch_defaults_to_is_read(
        public: dict[str, Path], tmp_path: Path) -> None:
    """0.5.9's Qwen3-Next branch on SM100 sets `self.quantization = quant_method` with
    `quant_method = get_quantization_config(hf_config)` (utils/common.py: config.json's
    quantization_config.quant_method): the reader takes the helper for that model fact, so the
    SGLANG_CUTLASS_MOE assert after it is no longer "unknown" for those architectures. A bf16
    Qwen3-Next with the variable is refused (real 0.5.9, B300 x1, seed 45102 case w00019); the
    same model with an FP8 quantization_config passes it."""
    site = next(s for s in load_release("0.5.9").generic_sites
                if s["message"] and str(s["message"][0]).startswith("cutlass MoE is only"))
    for scope in site.get("unknown_if", ()):
        assert "Qwen3NextForCausalLM" not in scope["archs"]
    env = {"SGLANG_CUTLASS_MOE": "true"}
    bf16 = ["--model-path", str(public["qwen3_next_80b"]), "--page-size", "16"]
    assert _first_with_env("0.5.9", "B300", bf16, env) == (
        "R-ARG-SITE", f"AssertionError {site['where']}")
    import json

    config = json.loads((public["qwen3_next_80b"] / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "fp8", "fmt": "e4m3",
                                     "activation_scheme": "dynamic",
                                     "weight_block_size": [128, 128]}
    fp8 = tmp_path / "qwen3_next_fp8"
    fp8.mkdir()
    (fp8 / "config.json").write_text(json.dumps(config))
    assert _first_with_env("0.5.9", "B300", ["--model-path", str(fp8), "--page-size", "16"],
                           env) is None


def test_a_message_placeholder_computed_from_flags_is_filled() -> None:
    """0.5.21's tlru check words its message with locals (`got {threshold} <=
    {next_prompt_estimate}`), read from the config flag the way the condition reads it: the
    finding shows SGLang's values, not the placeholders."""
    config = '{"threshold": 512, "next_prompt_estimate": 4096}'
    report = check_argv([*M, "--radix-eviction-policy", "tlru",
                         "--radix-eviction-policy-config", config],
                        sglang_version="0.5.21", gpu="H100", gpus=1)
    generic = [f for f in report.findings if f.rule == GENERIC.id]
    assert generic and "got 512 <= 4096;" in generic[0].message
    assert "{threshold}" not in generic[0].message


@pytest.mark.parametrize(("gpu", "extra", "refused"), [
    ("B200", [], True),
    ("B200", ["--mamba-ssm-dtype", "bfloat16"], False),
    ("H100", [], False),  # capability 9: SGLang's test stops at `>= 10`
])
def test_torch_cuda_is_available_is_a_gpu_probe(public: dict[str, Path], gpu: str,
                                                extra: list[str], refused: bool) -> None:
    """0.5.11 refuses `--linear-attn-decode-backend flashinfer` on SM100+ without a bf16 SSM
    state, behind `torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 10`
    (real 0.5.11, B200 x4, seed 45301 case w00020): `torch.cuda.is_available()` is read as a
    CUDA-or-ROCm GPU (`is_cuda_alike`), so the site is no longer skipped."""
    argv = ["--model-path", str(public["qwen35_27b"]), "--tp", "4",
            "--linear-attn-decode-backend", "flashinfer", *extra]
    first = _first("0.5.11", gpu, 4, argv)
    assert (first is not None and first[0] == "R-ARG-SITE"
            and first[1].startswith("ValueError sglang/srt/server_args.py:")) is refused


@pytest.mark.parametrize(("version", "page"), [("0.5.14", 64), ("0.5.16", 64), ("0.5.17", 128), ("0.5.23", 128)])
def test_trtllm_mha_page_sizes_are_read_from_the_release(public: dict[str, Path], version: str,
                                                         page: int) -> None:
    """The pages trtllm_mha keeps are the list in the release's own `if` (16, 32, 64 up to
    0.5.16; 128 joins in 0.5.17): 0.5.14 turns a typed 128 into 64 on a B200 (real 0.5.14, B200
    x8, seed 45301 case w00112), 0.5.17 on keep it. (The probe missed the `if (` spanning lines
    before, and every release took its template's list.)"""
    assert load_release(version).traits["trtllm_mha_page_sizes"] == (
        [16, 32, 64] if page == 64 else [16, 32, 64, 128])
    report = check_argv(["--model-path", str(public["qwen3_32b"]), "--tp", "8",
                         "--page-size", "128"], sglang_version=version, gpu="B200", gpus=8)
    assert report.effective["attention_backend"] == "trtllm_mha"
    assert report.effective["page_size"] == page


def test_the_megamoe_runner_alias_is_resolved_first(public: dict[str, Path]) -> None:
    """0.5.19+ `handle_moe_runner_backend_alias` (the pipeline's first hook): `--moe-runner-backend
    megamoe` becomes `auto` with `--moe-a2a-backend megamoe`, so the speculative runner SGLang
    defaults from it is `auto` (real 0.5.20, B200 x2, seed 45301 case w00154)."""
    assert load_release("0.5.20").traits["moe_runner_aliases"][0]["alias"] == "megamoe"
    argv = ["--model-path", str(public["llama31_8b"]), "--tp", "2"]
    report = check_argv([*argv, "--moe-runner-backend", "megamoe"],
                        sglang_version="0.5.20", gpu="B200", gpus=2)
    assert report.effective["speculative_moe_runner_backend"] == "auto"
    # another runner is copied as typed; 0.5.18 has no alias
    report = check_argv([*argv, "--moe-runner-backend", "triton"],
                        sglang_version="0.5.20", gpu="B200", gpus=2)
    assert report.effective["speculative_moe_runner_backend"] == "triton"
    assert load_release("0.5.18").traits["moe_runner_aliases"] == []


def test_the_deprecated_dp_spelling_leaves_a_typed_attention_dp_size() -> None:
    """0.5.22+ `_handle_deprecated_dp_attention` turns `--dp-size N --enable-dp-attention` into
    `--attn-dp-size N` only while `--attn-dp-size` is 1; beside a typed one both stand and the
    next check refuses replicas with attention DP (real 0.5.22, MI355X, seed 45402 w00121)."""
    both = [*M, "--dp-size", "2", "--enable-dp-attention", "--attn-dp-size", "8"]
    report = check_argv(both, sglang_version="0.5.22", gpu="MI355X", gpus=8)
    first = first_sglang_error(report)
    assert first is not None and first.rule == "R-ATTN-DP-WITH-DP"
    old = [*M, "--tp", "2", "--dp-size", "2", "--enable-dp-attention"]
    report = check_argv(old, sglang_version="0.5.22", gpu="MI355X", gpus=2)
    assert first_sglang_error(report) is None
    assert report.effective["attn_dp_size"] == 2 and report.effective["dp_size"] == 1


def test_hicache_runs_before_the_attention_step_where_the_release_calls_it_first(
        public: dict[str, Path]) -> None:
    """0.5.4.post1-0.5.7 call `_handle_hicache` before `_handle_attention_backend_compatibility`
    (trait `hicache_before_attention`, from the order of the calls): HiCache's kernel I/O sets
    the decode backend to flashinfer first, so the KV4 check sees prefill fa3 and decode
    flashinfer and only warns (real 0.5.7, H20 x8, seed 45603 case w00157). Without HiCache the
    KV4 MHA assert holds."""
    assert load_release("0.5.7").traits["hicache_before_attention"] is True
    assert load_release("0.5.9").traits["hicache_before_attention"] is False
    argv = ["--model-path", str(public["qwen3_30b_a3b"]), "--tp", "8", "--kv-cache-dtype",
            "fp4_e2m1"]
    assert _first("0.5.7", "H20", 8, [*argv, "--enable-hierarchical-cache"]) is None
    first = _first("0.5.7", "H20", 8, argv)
    assert first is not None and first[0] == "R-ARG-SITE"


@pytest.mark.parametrize(("gpu", "refused"), [("H20", True), ("B200", False),
                                              ("RTX PRO 6000 Blackwell", False)])
def test_the_platforms_is_blackwell_is_a_gpu_probe(public: dict[str, Path], gpu: str,
                                                   refused: bool) -> None:
    """0.5.19+ `get_platform().is_blackwell` (runtime_context.py maps it to
    `is_blackwell_supported`, capability 10-12): `--kv-cache-dtype mxfp8` off Blackwell is
    refused (real 0.5.22, H20, seed 45702 case w00085)."""
    argv = ["--model-path", str(public["qwen3_32b"]), "--kv-cache-dtype", "mxfp8"]
    report = check_argv(argv, sglang_version="0.5.22", gpu=gpu, gpus=1)
    generic = [f for f in report.findings if f.rule == GENERIC.id
               and f.message.startswith("--kv-cache-dtype mxfp8 requires")]
    assert bool(generic) is refused


def test_a_literal_prefix_test_is_read() -> None:
    """`backend.startswith("lora")` (and a tuple of prefixes) is a condition node the engine
    evaluates like Python."""
    holds = compile_condition(["strtest", "startswith", ["flag", "b"], ["const", "lora"]],
                              {"b": "auto"})
    assert holds({"b": "lora_marlin"}, frozenset()) and not holds({}, frozenset())
    either = compile_condition(["strtest", "endswith", ["flag", "b"], ["const", ["_x", "_y"]]],
                               {"b": "auto"})
    assert either({"b": "a_y"}, frozenset()) and not either({"b": "a_z"}, frozenset())


@pytest.mark.parametrize("version", ["0.5.23"])
def test_a_lora_moe_runner_needs_lora(public: dict[str, Path], version: str) -> None:
    """0.5.23 refuses a LoRA MoE runner without LoRA behind `if not backend.startswith("lora"):
    return` (real 0.5.23 refused `--moe-runner-backend lora_marlin` on Qwen3-Next, RTX 6000 Ada
    x8: w00085, seed 46101; a focused sweep, seed 46301, agreed on all 40 cases); the guard was
    skipped as unreadable before. (0.5.21's argparse has no lora_marlin choice.)"""
    argv = ["--model-path", str(public["qwen3_next_80b"]), "--tp-size", "8",
            "--moe-runner-backend", "lora_marlin"]
    first = _first(version, "RTX 6000 Ada", 8, argv)
    assert first is not None and first[0] == "R-ARG-SITE"
    assert first[1].startswith("ValueError sglang/srt/arg_groups/lora_hook.py:")
    assert _first(version, "RTX 6000 Ada", 8, argv[:-2]) is None


@pytest.mark.parametrize(("version", "argv_tail", "expected"), [
    # 0.5.4.post3: DeepSeek on SM100 gets flashinfer_trtllm and quantization fp8 in the
    # model-specific step; a typed fraction moved the model config's checks and shifted every
    # step index the release data places SGLang's statements by, so the quantization write was
    # not seen by the flashinfer_trtllm assert (real 0.5.4.post3 accepted it on a GB200: w00268,
    # seed 46104)
    ("0.5.4.post3", ["--mem-fraction-static", "0.85"], None),
    # 0.5.17 builds the model config in _handle_cuda_graph_config (no engine step of that name),
    # so its quantization check comes before the model-specific step's statements (real 0.5.17
    # on an L20: model_config.py's mismatch first, w00039, seed 46101)
    ("0.5.17", ["--quantization", "modelopt_fp4", "--mem-fraction-static", "0.8",
                "--enable-dsa-cache-layer-split"], "R-QUANT-MISMATCH"),
])
def test_a_typed_fraction_moves_the_model_config_checks_not_the_steps(
        public: dict[str, Path], version: str, argv_tail: list[str], expected: str | None) -> None:
    model = "deepseek_v3" if expected is None else "gpt_oss_120b"
    gpu, gpus = ("GB200", 8) if expected is None else ("L20", 2)
    tp = "8" if expected is None else "2"
    first = _first(version, gpu, gpus, ["--model-path", str(public[model]), "--tp", tp,
                                        *argv_tail])
    assert (first[0] if first else None) == expected


@pytest.mark.parametrize("version", ["0.5.22", "0.5.23"])
def test_deepep_v2_needs_a_registered_architecture(public: dict[str, Path], version: str) -> None:
    """`--moe-a2a-backend deepep_v2` is refused for an architecture outside the release's
    `_DEEPEP_V2_MODELS` (configs/moe_model_registry.py), read through `model_supports_deepep_v2`
    -> `_policy_of` (an empty-list guard, then `.get(architectures[0])`): real 0.5.22 refused
    Qwen3-Next on 8x L20 (w00008, seed 49201). DeepSeek-V3 is registered."""
    argv = ["--model-path", str(public["qwen3_next_80b"]), "--tp-size", "8",
            "--moe-a2a-backend", "deepep_v2"]
    first = _first(version, "L20", 8, argv)
    assert first is not None and first[0] == "R-ARG-SITE"
    assert first[1].startswith("ValueError sglang/srt/arg_groups/moe_hook.py:")
    deepseek = ["--model-path", str(public["deepseek_v3"]), *argv[2:]]
    registered = _first(version, "L20", 8, deepseek)
    assert registered is None or "moe_hook.py" not in registered[1]
