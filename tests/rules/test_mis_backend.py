"""R-MIS-BACKEND: `--enable-mis` asserts that the prefill and decode attention backends, as
resolved by SGLang's scoring step (the GPU's default included), are both flashinfer."""

from __future__ import annotations

import pytest

from wizard.api import check_argv
from wizard.sglang.releases import load_release


def _finding(models: dict[str, str], version: str, gpu: str, *flags: str):  # type: ignore[no-untyped-def]
    report = check_argv(["--model-path", models["llama"], "--enable-mis", *flags],
                        sglang_version=version, gpu=gpu, gpus=1)
    return report, next((f for f in report.findings if f.rule == "R-MIS-BACKEND"), None)


@pytest.mark.parametrize("version", ["0.5.11", "0.5.20", "0.5.23"])
def test_the_hopper_default_backend_is_refused_in_sglangs_words(
    models: dict[str, str], version: str
) -> None:
    report, finding = _finding(models, version, "H100")
    assert finding is not None and report.verdict == "error"
    assert finding.sglang is not None and finding.sglang.exception == "AssertionError"
    assert finding.sglang.where == load_release(version).site("R-MIS-BACKEND").where
    assert "Current backends: prefill=fa3, decode=fa3" in finding.message
    assert report.findings[0].rule == "R-MIS-BACKEND"


def test_a_split_backend_is_read_as_sglang_reads_it(models: dict[str, str]) -> None:
    _, finding = _finding(models, "0.5.20", "H100", "--attention-backend", "flashinfer",
                          "--decode-attention-backend", "triton")
    assert finding is not None
    assert "prefill=flashinfer, decode=triton" in finding.message


@pytest.mark.parametrize("version", ["0.5.11", "0.5.23"])
def test_flashinfer_starts_and_the_fix_gets_there(models: dict[str, str], version: str) -> None:
    report, finding = _finding(models, version, "H100", "--attention-backend", "flashinfer")
    assert finding is None
    assert report.effective["disable_radix_cache"] is True  # the scoring step's rewrite


def test_releases_without_the_scoring_step_have_no_such_check() -> None:
    assert load_release("0.5.9").site("R-MIS-BACKEND") is None
    assert load_release("0.5.11").site("R-MIS-BACKEND") is not None
