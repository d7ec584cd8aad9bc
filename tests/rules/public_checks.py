"""`check_case` on the public model configs (`public` fixture of conftest.py): an argv with
`{name}` placeholders for the model folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wizard.api import check_case


def check_public(version: str, gpu: str | None, argv: str, public: dict[str, Path],
                 gpus: int = 1) -> dict[str, Any]:
    """The wizard's report for `argv` on `version` and `gpus` x `gpu`."""
    case = {"id": "t", "sglang_version": version, "gpu": gpu, "gpus": gpus, "env": {},
            "argv": argv.format(**{k: str(v) for k, v in public.items()}).split()}
    return check_case(case)
