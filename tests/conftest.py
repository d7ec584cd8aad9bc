"""Suite-wide guard: no test reaches the real Hugging Face Hub or reads the user's HF cache or token.

Any model path that looks like a Hub id (`ORG/NAME`, e.g. from a fuzz strategy) is read through
`wizard.hub`; here the endpoint is a local port nobody listens on and HF_HOME a temporary folder.
Tests of the Hub code (tests/hub, tests/tui/test_model_hub.py) set their own stand-in endpoint.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator

import pytest

_HF_VARS = ("HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_TOKEN",
            "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH")


@pytest.fixture(scope="session", autouse=True)
def no_real_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """HF_ENDPOINT -> 127.0.0.1:9 (refused at once), HF_HOME -> tmp, no token, for the session."""
    saved = {name: os.environ.get(name) for name in _HF_VARS}
    for name in _HF_VARS:
        os.environ.pop(name, None)
    os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
    os.environ["HF_HOME"] = str(tmp_path_factory.mktemp("hf-home"))
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (`-n N`), the controller fixes what its workers must share before it
    starts them (they inherit its environment): one conformance seed, and a folder where one
    worker's live SGLang runs are read by the others (`tests/conformance/background.py`)."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    os.environ.setdefault("SGLANG_WIZARD_CONFORMANCE_SEED",
                          str(random.SystemRandom().randrange(10**6)))
    share = tempfile.mkdtemp(prefix="sglang-wizard-xdist-")
    os.environ["SGLANG_WIZARD_XDIST_SHARE"] = share
    config.add_cleanup(lambda: shutil.rmtree(share, ignore_errors=True))
