"""Run the hand-written multi-node cases through real SGLang (every release with a built venv) and
write tests/rules/fixtures/multinode-sglang.json, with model paths as {llama}/{dsv3}.

    .venv/bin/python scripts/multinode_fixture.py [VERSION ...]

Releases not given keep their committed results. The runner is started as an H100 host and the
cases carry no per-case GPU switch (every case is H100).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from wizard.conformance.cases import multinode_named_cases
from wizard.conformance.models import write_model_folders
from wizard.conformance.run import RUNNER_CASE_KEYS, models_root, runner_command
from wizard.conformance.venvs import venv_python
from wizard.sglang.releases import release_names

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "rules" / "fixtures" / "multinode-sglang.json"


def main(versions: list[str]) -> int:
    models = write_model_folders(models_root())
    data = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {"releases": {}}
    for version in versions or list(release_names()):
        python = venv_python(version)
        if not python.exists():
            print(f"{version}: no venv, kept as it was", file=sys.stderr)
            continue
        cases = multinode_named_cases(version, models)
        payload = "".join(json.dumps({k: c[k] for k in RUNNER_CASE_KEYS}) + "\n" for c in cases)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_"))}
        proc = subprocess.run(runner_command(python, "H100", jobs=1), input=payload,
                              capture_output=True, text=True, env=env, check=True)
        results = {}
        for line in proc.stdout.splitlines():
            if line.strip():
                result = json.loads(line)
                results[result["id"]] = {k: result.get(k) for k in
                                         ("verdict", "stage", "exception", "where", "message",
                                          "runner_error")}
        text = json.dumps({c["name"]: results[c["id"]] for c in cases})
        for kind, path in models.items():
            text = text.replace(str(path), "{" + kind + "}")
        data["releases"][version] = json.loads(text)
        print(f"{version}: {len(cases)} cases", file=sys.stderr)
    data["releases"] = dict(sorted(data["releases"].items(),
                                   key=lambda kv: tuple(int(x) for x in kv[0].split("."))))
    FIXTURE.write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
