# Two commands do all set-up on a fresh machine: `make app` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: app test lint bench conformance snapshots

# editable_mode=compat: the venv gets a .pth holding this folder, not setuptools' import finder,
# which every start (a cold `check`, issue 13) would import first (a few ms); setuptools calls the
# mode transitional, so a setuptools without it gets the default editable install. compileall: the
# bytecode a wheel install has, even where PYTHONDONTWRITEBYTECODE keeps Python from writing it.
# The compat mode's deprecation notice (a dozen lines on every install) is filtered by its first
# words only: any other build warning still shows.
QUIET_COMPAT := PYTHONWARNINGS='ignore:Compat editable installs'
$(STAMP): pyproject.toml Makefile
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(QUIET_COMPAT) $(BIN)/pip install -q -e '.[test]' --config-settings editable_mode=compat \
		|| $(BIN)/pip install -q -e '.[test]'
	$(BIN)/python -m compileall -q wizard screens
	touch $(STAMP)

app: $(STAMP)
	$(BIN)/sglang-wizard

# Two pytest-xdist workers (-n 2): the suite alone keeps one core busy; the workers share one
# conformance seed and each live SGLang run (tests/conftest.py, tests/conformance/background.py).
# SGLang runs live for the newest release plus two picked by the day (SGLANG_WIZARD_LIVE_RELEASES
# overrides: a list, all, none); every release is replayed from recorded results. The last line
# prints what the cache holds (venvs, the shared torch base, uv's and pip's download caches).
test: $(STAMP)
	bash scripts/ensure-system-packages.sh
	$(BIN)/ruff check wizard screens tests bench
	$(BIN)/mypy
	$(BIN)/pytest -q -n 2
	@du -sh "$$($(BIN)/python -c 'from wizard.conformance.venvs import cache_dir; print(cache_dir())')" \
		2>/dev/null | sed 's/^/cache (du -sh): /' || true

lint: $(STAMP)
	$(BIN)/ruff check wizard screens tests bench
	$(BIN)/mypy

bench: $(STAMP)
	for b in bench/bench_*.py; do $(BIN)/python $$b || exit 1; done

snapshots: $(STAMP)
	$(BIN)/pytest tests/tui --snapshot-update

# The full matrix: every release, 2,000 generated cases each with a new seed, plus the named cases.
# (`SGLANG_WIZARD_LIVE_RELEASES=all make test` runs the suite's live gate on every release.)
conformance: $(STAMP)
	$(BIN)/sglang-wizard conformance run --cases 2000 --seed $$(date +%s) --report conformance-report.md
