"""`check -- ... --tp 0` (or -2, --dp 0, --mem-fraction-static 0) said "SGLang would START this":
SGLang's argument code accepts these values, but no GPU worker or no memory pool can run them."""

from __future__ import annotations

import pytest

from wizard.api import check_argv


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--tp", "0"], "--tp-size 0"),
        (["--tp", "-2"], "--tp-size -2"),
        (["--dp", "0"], "--dp-size 0"),
        (["--pp-size", "0"], "--pp-size 0"),
        (["--mem-fraction-static", "0"], "--mem-fraction-static 0"),
    ],
)
@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_a_size_below_one_fails_at_run_time(
    models: dict[str, str], flags: list[str], said: str, version: str
) -> None:
    report = check_argv(["--model-path", models["qwen35"], *flags], sglang_version=version,
                        gpu="H100", gpus=8)
    finding = next((f for f in report.findings if f.rule == "R-SIZE-NOT-POSITIVE"), None)
    assert finding is not None and finding.severity == "error"
    assert said in finding.message
    assert report.verdict == "error"
    assert finding.fixes and all(v in (1, None) for v in finding.fixes[0].edits.values())


def test_sizes_of_one_and_more_are_fine(models: dict[str, str]) -> None:
    report = check_argv(["--model-path", models["qwen35"], "--tp", "2", "--mem-fraction-static",
                         "0.8"], sglang_version="0.5.11", gpu="H100", gpus=8)
    assert all(f.rule != "R-SIZE-NOT-POSITIVE" for f in report.findings)


@pytest.mark.parametrize("version", ["0.5.11", "0.5.17"])
def test_tp_0_with_dp_attention_passes_the_divisibility_assert(
    models: dict[str, str], version: str
) -> None:
    """`--tp 8 --dp 8 --enable-dp-attention --tp-size 0` (the last spelling wins): SGLang's
    `tp_size % dp_size == 0` holds for 0, so its argument code accepts it (real SGLang 0.5.17,
    wide case 0.5.17-w00085); the wizard named R-DPATTN-TP-DIVISIBLE with 'tp 1'. Only the run-time
    trap is left."""
    argv = ["--model-path", models["qwen35"], "--tp", "8", "--dp", "8", "--enable-dp-attention",
            "--tp-size", "0"]
    report = check_argv(argv, sglang_version=version, gpu="H100", gpus=8)
    rules = {f.rule for f in report.findings if f.severity == "error"}
    assert "R-DPATTN-TP-DIVISIBLE" not in rules and "R-SIZE-NOT-POSITIVE" in rules
