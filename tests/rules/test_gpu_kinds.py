"""The GPU catalog (wizard/data/gpus.json), custom kinds, and bad GPU input on every entry point.

Issue 21: every kind SGLang users run is accepted with its real memory, any other GPU is a custom
kind, and an unknown kind or a bad count is an exit-2 error naming what is known - never a
traceback (issue 25 items 18/20: `check --gpu zz`, `--gpus 0|-1`, `"gpu": 5` in `check --jsonl`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wizard import gpus
from wizard.api import check_argv
from wizard.cli import main
from wizard.gpus import (
    CATALOG,
    DATA_FILE,
    UnknownGpuError,
    lookup,
    parse_gpu_count,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# issue 21's list: (what users type, catalog name, compute capability or gfx arch)
ISSUE_KINDS = [
    ("A100 40GB", "A100-40GB", "sm80"), ("A100 80GB", "A100-80GB", "sm80"),
    ("A800", "A800", "sm80"), ("A10", "A10", "sm86"), ("A10G", "A10G", "sm86"),
    ("A30", "A30", "sm80"), ("A40", "A40", "sm86"), ("L4", "L4", "sm89"), ("L20", "L20", "sm89"),
    ("L40", "L40", "sm89"), ("L40S", "L40S", "sm89"), ("H100 SXM", "H100", "sm90"),
    ("H100 PCIe", "H100-PCIe", "sm90"), ("H100 NVL", "H100-NVL", "sm90"), ("H800", "H800", "sm90"),
    ("H20", "H20", "sm90"), ("H200", "H200", "sm90"), ("GH200", "GH200", "sm90"),
    ("B200", "B200", "sm100"), ("B300", "B300", "sm103"), ("GB200", "GB200", "sm100"),
    ("GB300", "GB300", "sm103"), ("RTX A6000", "RTX A6000", "sm86"),
    ("RTX 6000 Ada", "RTX 6000 Ada", "sm89"),
    ("RTX PRO 6000 Blackwell", "RTX PRO 6000 Blackwell", "sm120"),
    ("RTX 3090", "RTX 3090", "sm86"), ("RTX 4090", "RTX 4090", "sm89"),
    ("RTX 5090", "RTX 5090", "sm120"), ("MI300X", "MI300X", "gfx942"),
    ("MI325X", "MI325X", "gfx942"), ("MI355X", "MI355X", "gfx950"),
]

# Names and aliases of the catalog before it became data: profiles and tests use them.
OLD_NAMES = {
    "A6000": "RTX A6000", "RTXA6000": "RTX A6000", "A100-40": "A100-40GB",
    "A100-SXM4-40GB": "A100-40GB", "A100": "A100-80GB", "A100-PCIE-80GB": "A100-80GB",
    "L40S-48GB": "L40S", "L4-24GB": "L4", "4090": "RTX 4090", "GeForce RTX 4090": "RTX 4090",
    "H100-80GB": "H100", "H100 80GB HBM3": "H100", "H100-SXM": "H100", "H100 PCIe": "H100-PCIe",
    "H200-141GB": "H200", "H20-96GB": "H20", "B200-180GB": "B200", "B300-288GB": "B300",
    "RTX PRO 6000": "RTX PRO 6000 Blackwell", "PRO6000": "RTX PRO 6000 Blackwell",
    "RTX PRO 6000 Blackwell Server Edition": "RTX PRO 6000 Blackwell", "5090": "RTX 5090",
}


# ------------------------------------------------------------------ the catalog as data


@pytest.mark.parametrize(("typed", "name", "arch"), ISSUE_KINDS)
def test_every_kind_of_the_issue_is_known(typed: str, name: str, arch: str) -> None:
    kind = lookup(typed)
    assert kind.name == name and kind.arch_label == arch
    assert kind.smi_names, "the name nvidia-smi / amd-smi prints"
    assert 20_000 < kind.memory_mib < 300_000


def test_every_number_names_its_source() -> None:
    data = json.loads(DATA_FILE.read_text())
    references = data["references"]
    for entry in data["kinds"]:
        numbers = {"compute_capability", "memory_mib", "sm_count", "cu_count", "gfx_arch",
                   "nvlink", "xgmi"}
        for field in numbers & set(entry):
            if entry[field] is None:
                continue
            ref = entry["sources"].get(field)
            assert ref in references, f"{entry['name']}.{field} has no source"
        if not entry["memory_verified"]:
            assert "memory" in entry.get("note", ""), f"{entry['name']}: say how it is derived"


@pytest.mark.parametrize(("old", "name"), sorted(OLD_NAMES.items()))
def test_old_names_and_aliases_still_work(old: str, name: str) -> None:
    assert lookup(old).name == name
    assert lookup(old.lower()).name == name


def test_amd_kinds_are_rocm_not_cuda() -> None:
    mi300x = lookup("AMD Instinct MI300X")
    # torch reports (9, 4) on gfx942, which is not Hopper: SGLang's is_sm90_supported is False
    assert mi300x.compute_capability == (9, 4) and mi300x.gfx_arch == "gfx942"
    assert mi300x.is_hip and not mi300x.is_cuda and not mi300x.is_hopper
    assert lookup("mi355x").gfx_arch == "gfx950" and lookup("MI355X").memory_mib > 280 * 1024
    assert all(g.is_cuda for g in CATALOG if g.vendor == "nvidia")


def test_families_group_the_catalog_for_the_picker() -> None:
    groups = gpus.by_family()
    assert list(groups) == ["NVIDIA data center", "NVIDIA workstation", "NVIDIA consumer",
                            "AMD Instinct"]
    assert sum(len(v) for v in groups.values()) == len(CATALOG)
    assert [g.name for g in groups["AMD Instinct"]] == ["MI300X", "MI325X", "MI355X"]


def _fixture_names() -> list[tuple[str, int]]:
    out = []
    for path in sorted((FIXTURES / "nvidia-smi").glob("*.gpus.csv")):
        for row in path.read_text().splitlines():
            cells = [c.strip() for c in row.split(",")]
            out.append((cells[1], int(cells[3])))
    return out


@pytest.mark.parametrize(("smi_name", "total"), sorted(set(_fixture_names())))
def test_real_nvidia_smi_names_find_their_kind_with_that_memory(smi_name: str, total: int) -> None:
    kind = gpus.find(smi_name)
    if smi_name == "NVIDIA RTX A5000":  # not in the catalog: a custom kind from the host
        assert kind is None
        return
    assert kind is not None and kind.memory_mib == total


def test_unknown_kind_lists_the_catalog_and_suggests() -> None:
    with pytest.raises(UnknownGpuError) as error:
        lookup("H10")
    message = str(error.value)
    assert "did you mean" in message and "'H100'" in message
    assert all(name in message for name in ("MI300X", "RTX 3090", "A10G"))
    assert "custom:sm=8.9,mem=48GB" in message


# ------------------------------------------------------------------ custom kinds


@pytest.mark.parametrize(
    ("spec", "vendor", "arch", "memory_mib", "canonical"),
    [
        ("custom:sm=8.9,mem=48GB", "nvidia", "sm89", 49152, "custom:sm=8.9,mem=49152MiB"),
        ("CUSTOM:cc=86, memory=24564 MiB", "nvidia", "sm86", 24564, "custom:sm=8.6,mem=24564MiB"),
        ("custom:sm=sm_90a,mem=81559MiB,nvlink=yes,sms=132", "nvidia", "sm90", 81559,
         "custom:sm=9.0,mem=81559MiB,nvlink=yes,sms=132"),
        ("custom:arch=gfx942,mem=192GB,name=MI300A", "amd", "gfx942", 196608,
         "custom:arch=gfx942,mem=196608MiB,name=MI300A"),
        ("custom:arch=gfx1100,mem=24GiB", "amd", "gfx1100", 24576, "custom:arch=gfx1100,mem=24576MiB"),
    ],
)
def test_custom_kinds(spec: str, vendor: str, arch: str, memory_mib: int, canonical: str) -> None:
    kind = lookup(spec)
    assert (kind.vendor, kind.arch_label, kind.memory_mib, kind.spec) == (
        vendor, arch, memory_mib, canonical)
    assert lookup(kind.spec) == kind  # what a profile stores reads back the same


def test_a_custom_hopper_is_hopper_and_a_custom_cdna_is_not() -> None:
    assert lookup("custom:sm=9.0,mem=80GB").is_hopper
    assert lookup("custom:sm=10.0,mem=180GB").is_sm100
    assert not lookup("custom:arch=gfx950,mem=288GB").is_hopper


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("custom:sm=8.9", "needs mem="),
        ("custom:mem=48GB", "needs sm="),
        ("custom:sm=8.9,mem=48", "needs a unit"),
        ("custom:sm=8.9,mem=0GB", "out of range"),
        ("custom:sm=8.9,mem=1e9TB", "not a size"),
        ("custom:sm=x,mem=4GB", "compute capability 'x'"),
        ("custom:sm=8.9,arch=gfx942,mem=4GB", "not both"),
        ("custom:arch=gfx1,mem=4GB", "gfx arch 'gfx1'"),
        ("custom:sm=8.9,mem=4GB,color=red", "'color=red' is not key=value"),
        ("custom:sm=8.9,mem=4GB,sm=9.0", "given twice"),
        ("custom:sm=8.9,mem=4GB,nvlink=maybe", "yes or no"),
    ],
)
def test_bad_custom_kinds_say_what_is_wrong(spec: str, says: str) -> None:
    with pytest.raises(UnknownGpuError) as error:
        lookup(spec)
    assert says in str(error.value)


def test_host_gpus_become_catalog_or_custom_kinds() -> None:
    assert gpus.from_host("NVIDIA H100 80GB HBM3", 81559, "9.0") == lookup("H100")
    assert gpus.from_host("AMD Instinct MI300X", 196592, None, "gfx942") == lookup("MI300X")
    a5000 = gpus.from_host("NVIDIA RTX A5000", 24564, "8.6")
    assert a5000 is not None and a5000.spec == "custom:sm=8.6,mem=24564MiB,name=NVIDIA RTX A5000"
    # a known name with other memory (ECC on, another variant) keeps the host's memory
    ecc = gpus.from_host("NVIDIA RTX A6000", 46068, "8.6")
    assert ecc is not None and ecc.memory_mib == 46068 and ecc.compute_capability == (8, 6)
    assert gpus.from_host("NVIDIA Mystery", 24564, None) is None  # no capability: not guessed


# ------------------------------------------------------------------ GPU counts


@pytest.mark.parametrize("value", [0, -1, -3, 2.5, True, False, None, "x", "", float("nan"),
                                   float("inf"), 1e400, 10**13, [8], "1.5"])
def test_bad_gpu_counts(value: object) -> None:
    with pytest.raises(ValueError, match="--gpus"):
        parse_gpu_count(value)


@pytest.mark.parametrize(("value", "count"), [(1, 1), (8, 8), ("8", 8), (4.0, 4), (" 2 ", 2)])
def test_good_gpu_counts(value: object, count: int) -> None:
    assert parse_gpu_count(value) == count


# ------------------------------------------------------------------ every entry point: exit 2


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own errors
        return int(exc.code or 0)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--gpu", "zz"], "unknown GPU kind 'zz'"),
        (["--gpu", "H10"], "did you mean"),
        (["--gpu", "custom:sm=8.9"], "needs mem="),
        (["--gpus", "0"], "at least 1"),
        (["--gpus", "-3"], "at least 1"),
        (["--gpus", "2.5"], "whole number"),
        (["--gpus", "many"], "whole number"),
        (["--gpus", "99999999999"], "not a GPU count"),
    ],
)
@pytest.mark.parametrize("command", ["check", "inspect"])
def test_bad_gpu_options_exit_2_without_traceback(
    command: str, args: list[str], says: str, models: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    if command == "check":
        argv = ["check", *args, "--", "--model-path", models["llama"]]
    else:
        argv = ["inspect", models["llama"], *args]
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('kind = "zz"', "unknown GPU kind 'zz'"),
        ('kind = "H100"\ncount = 0', "gpu.count"),
        ('kind = "H100"\ncount = -1', "gpu.count"),
        ('kind = "H100"\ncount = 2.5', "gpu.count"),
        ('kind = "H100"\ncount = 1099511627776', "gpu.count"),
        ('kind = 5', "gpu.kind"),
        ('kind = "custom:sm=8.9"', "needs mem="),
        ('kind = "custom"\ncapability = "8.9"', "needs mem="),
        ('kind = "H100"\nmemory = "48GB"', "describes a custom kind"),
        ('kind = "custom"\nmemory = 48', "gpu.memory must be text"),
    ],
)
def test_bad_gpu_table_in_a_profile_exits_2(
    table: str, says: str, models: dict[str, str], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text(
        f'schema_version = 1\nsglang_version = "0.5.11"\n[model]\npath = "{models["llama"]}"\n'
        f"[gpu]\n{table}\n"
    )
    for argv in (["check", str(profile)], ["inspect", "--profile", str(profile)],
                 ["profiles", "validate", str(profile)]):
        assert _exit_code(argv) == 2, argv
        seen = capsys.readouterr()
        text = seen.out + seen.err  # `profiles validate` lists problems on stdout
        assert says in text and "Traceback" not in text, (argv, text)


def test_jsonl_bad_gpu_lines_are_errors_and_the_batch_goes_on(
    models: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--model-path", models["llama"]]
    lines = [
        {"id": "int-kind", "argv": argv, "gpu": 5},
        {"id": "list-kind", "argv": argv, "gpu": ["H100"]},
        {"id": "unknown", "argv": argv, "gpu": "zz"},
        {"id": "zero", "argv": argv, "gpus": 0},
        {"id": "negative", "argv": argv, "gpus": -1},
        {"id": "fraction", "argv": argv, "gpus": 2.5},
        {"id": "bool", "argv": argv, "gpus": True},
        {"id": "text", "argv": argv, "gpus": "x"},
        {"id": "amd", "argv": argv, "gpu": "MI355X", "gpus": 8},
        {"id": "custom", "argv": argv, "gpu": "custom:sm=8.6,mem=24GB"},
    ]
    batch = tmp_path / "cases.jsonl"
    batch.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert main(["check", "--jsonl", str(batch)]) == 2
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(out) == len(lines)
    assert [r["verdict"] for r in out[:8]] == ["input-error"] * 8
    assert "gpu" in out[0]["error"] and "unknown GPU kind 'zz'" in out[2]["error"]
    # the batch line names the field and its range (wizard.api.validate_case)
    assert "from 1 to" in out[3]["error"] and "from 1 to" in out[5]["error"]
    assert out[8]["gpu"] == "MI355X" and out[8]["verdict"] != "input-error"
    assert out[9]["gpu"] == "custom sm86 24 GiB"


def test_custom_kind_in_a_profile_table_and_as_a_string(
    models: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wizard.profile import load_profile

    table = tmp_path / "table.toml"
    table.write_text(
        f'schema_version = 1\nsglang_version = "0.5.11"\n[model]\npath = "{models["llama"]}"\n'
        '[gpu]\nkind = "custom"\ncapability = "8.6"\nmemory = "24564MiB"\nname = "RTX A5000"\n'
        "count = 2\n"
    )
    profile = load_profile(table)
    assert profile.gpu.kind == "custom:sm=8.6,mem=24564MiB,name=RTX A5000"
    assert main(["check", str(table)]) == 0
    assert "GPU RTX A5000:" in capsys.readouterr().out
    string = tmp_path / "string.toml"
    string.write_text(table.read_text().replace(
        'kind = "custom"\ncapability = "8.6"\nmemory = "24564MiB"\nname = "RTX A5000"',
        'kind = "custom:sm=8.6,mem=24564MiB,name=RTX A5000"'))
    assert load_profile(string).gpu == profile.gpu


# ------------------------------------------------------------------ counts SGLang cannot place


@pytest.mark.parametrize(
    ("flags", "gpus", "fires"),
    [
        (["--tp", "4"], 2, True),
        (["--tp", "4"], 4, False),
        (["--tp", "2", "--pp-size", "2"], 3, True),
        (["--tp", "2", "--dp", "4"], 4, True),  # each dp replica has its own tp GPUs
        (["--tp", "4", "--dp", "4", "--enable-dp-attention"], 4, False),  # dp inside tp
        (["--tp", "2", "--base-gpu-id", "3"], 4, True),  # GPUs 3 and 4
        (["--tp", "2", "--base-gpu-id", "2"], 4, False),
    ],
)
def test_more_workers_than_gpus_is_an_error(
    flags: list[str], gpus: int, fires: bool, models: dict[str, str]
) -> None:
    report = check_argv(["--model-path", models["llama"], *flags], sglang_version="0.5.11",
                        gpu="H100", gpus=gpus)
    found = [f for f in report.findings if f.rule == "R-GPUS-TOO-FEW"]
    assert bool(found) == fires
    if fires:
        assert found[0].severity == "error" and str(gpus) in found[0].message
