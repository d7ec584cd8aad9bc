"""`--api-key` and the other secret-valued flags (issue 25 item 2): a reference in the profile,
`"$VAR"` / `***` on every display, the value only in the server's argv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from wizard.profile import load_profile, profile_to_toml
from wizard.profile_schema import Profile
from wizard.remote import records
from wizard.secrets import (
    mask_argv,
    protect_argv,
    reference_var,
    secret_flags,
)
from wizard.sglang.errors import RenderError
from wizard.sglang.flags import secret_flag_data
from wizard.sglang.render import (
    launch_argv,
    render_argv_json,
    render_shell,
    render_yaml_form,
)

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-live-0123456789abcdef"
ADMIN = "adm-9876543210"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wizard.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, check=False, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def _profile(*extra: str, version: str = "0.5.23") -> Profile:
    return Profile.model_validate({"sglang_version": version, "model": {"path": "/m"},
                                   "extra_args": list(extra)})


def test_the_secret_flag_list_is_derived_from_the_flag_tables() -> None:
    committed = json.loads((ROOT / "wizard/sglang/data/secret-flags.json").read_text())
    assert committed == secret_flag_data()  # re-run write_secret_flags() after a table dump
    assert set(secret_flags()) == {"--api-key", "--admin-api-key", "--ssl-keyfile-password"}
    # the run records mask the same flags (one list, not a copy)
    assert records.mask_argv(["--ssl-keyfile-password", "pw-secret"]) == [
        "--ssl-keyfile-password", "***"]
    assert records.is_secret_name is not None and records.mask_argv is mask_argv


def test_reference_variables_are_not_variables_sglang_reads() -> None:
    read_by_sglang = set()
    for path in (ROOT / "wizard/sglang/data").glob("env-*.json"):
        read_by_sglang |= {v["name"] for v in json.loads(path.read_text())["variables"]}
    for option in secret_flags():
        assert reference_var(option) not in read_by_sglang


def test_import_stores_a_reference_and_never_the_key(tmp_path: Path) -> None:
    out = tmp_path / "p.toml"
    done = _cli("import", "-o", str(out), "--", "python", "-m", "sglang.launch_server",
                "--model-path", "/m", "--api-key", KEY, f"--admin-api-key={ADMIN}")
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert KEY not in text and ADMIN not in text
    assert "SGLANG_WIZARD_API_KEY" in done.stderr  # says what to export
    profile = load_profile(out)
    assert profile.extra_args == ["--api-key", "env:SGLANG_WIZARD_API_KEY",
                                  "--admin-api-key=env:SGLANG_WIZARD_ADMIN_API_KEY"]
    stdout = _cli("import", "--", "python", "-m", "sglang.launch_server", "--model-path", "/m",
                  "--api-k", KEY)  # an argparse prefix of --api-key is the same flag
    assert stdout.returncode == 0 and KEY not in stdout.stdout and KEY not in stdout.stderr


def test_saving_a_profile_with_a_literal_key_writes_the_reference() -> None:
    text = profile_to_toml(_profile("--api-key", KEY, "--enable-metrics"))
    assert KEY not in text and '"env:SGLANG_WIZARD_API_KEY"' in text and "--enable-metrics" in text
    # each node's own env too
    node = Profile.model_validate({
        "model": {"path": "/m"}, "parallel": {"nnodes": 2},
        "nodes": {"hosts": [{"host": "a", "env": {"HF_TOKEN": "hf_nodesecret"}}, {"host": "b"}]}})
    assert "hf_nodesecret" not in profile_to_toml(node)


def test_every_display_shows_a_reference_or_stars() -> None:
    literal = _profile("--api-key", KEY)
    reference = _profile("--api-key", "env:SGLANG_WIZARD_API_KEY")
    for profile in (literal, reference):
        shell = render_shell(profile)
        form = render_yaml_form(profile)
        argv_json = render_argv_json(profile)
        for text in (shell, form.text, argv_json, " ".join(form.command_line_only)):
            assert KEY not in text
        assert "api-key" not in (yaml.safe_load(form.text) or {})  # on the command line only
    assert "--api-key '***'" in render_shell(literal)
    assert '--api-key "$SGLANG_WIZARD_API_KEY"' in render_shell(reference)
    assert '--api-key "$SGLANG_WIZARD_API_KEY"' in render_yaml_form(reference).text
    assert KEY in render_shell(literal, show_secrets=True)  # command --show-secrets


def test_command_cli_masks_the_key(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('schema_version = 1\nsglang_version = "0.5.23"\n'
                    f'extra_args = ["--api-key", "{KEY}"]\n[model]\npath = "/m"\n')
    for fmt in ("shell", "yaml", "argv-json"):
        done = _cli("command", str(path), "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert KEY not in done.stdout


def test_the_launch_reads_the_key_from_the_environment_only() -> None:
    profile = _profile("--api-key", "env:SGLANG_WIZARD_API_KEY")
    argv = launch_argv(profile, environ={"SGLANG_WIZARD_API_KEY": KEY})
    assert argv[argv.index("--api-key") + 1] == KEY
    with pytest.raises(RenderError, match="SGLANG_WIZARD_API_KEY"):
        launch_argv(profile, environ={})  # never start a server without the key it asks for
    inline = _profile("--api-key=env:MY_KEY")
    assert "--api-key=" + KEY in launch_argv(inline, environ={"MY_KEY": KEY})


def test_the_check_warns_when_the_variable_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    from wizard.api import check_profile

    monkeypatch.delenv("SGLANG_WIZARD_API_KEY", raising=False)
    profile = _profile("--api-key", "env:SGLANG_WIZARD_API_KEY")
    report = check_profile(profile, verify_fixes=False)
    unset = [f for f in report.findings if f.rule == "R-ENV-SECRET-UNSET"]
    assert unset and "SGLANG_WIZARD_API_KEY" in unset[0].message
    monkeypatch.setenv("SGLANG_WIZARD_API_KEY", KEY)
    report = check_profile(profile, verify_fixes=False)
    assert not [f for f in report.findings if f.rule == "R-ENV-SECRET-UNSET"]


def test_protect_and_mask_leave_other_flags_alone() -> None:
    argv = ["--ssl-keyfile", "/k.pem", "--api-key", KEY, "--port", "1"]
    protected, moved = protect_argv(argv)
    assert protected == ["--ssl-keyfile", "/k.pem", "--api-key", "env:SGLANG_WIZARD_API_KEY",
                         "--port", "1"]
    assert moved == ["--api-key"]
    assert mask_argv(argv) == ["--ssl-keyfile", "/k.pem", "--api-key", "***", "--port", "1"]
    assert protect_argv(["--api-key"]) == (["--api-key"], [])  # no value: nothing to hide
