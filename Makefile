# IHMT — the two commands a newcomer runs: `make demo` and `make test`.
# Needs only python3 (3.10+) and make: uv is installed through pip when missing.

PYTHON ?= python3
UV := $(PYTHON) -m uv
RUN := $(UV) run --locked --no-sync
PACKAGES := $(wildcard packages/*)
SRC_DIRS := $(wildcard packages/*/src)
JOBS ?= 2

.PHONY: help uv sync lint format test test-unit test-workspace test-isolated bench demo dist clean

help:
	@echo "make demo   - set everything up and run the walkthrough"
	@echo "make test   - set everything up, lint, type-check and run every test"
	@echo "make lint   - ruff, mypy --strict and the layering check"
	@echo "make bench  - run the benchmarks (tables printed, JSON in tools/bench/results/)"
	@echo "make dist   - build every wheel and sdist into dist/, check them, install each alone"

uv:
	@$(UV) --version >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet --disable-pip-version-check uv
	@$(UV) --version

sync: uv
	$(UV) sync --locked --all-packages

lint: sync
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) mypy --strict $(SRC_DIRS)
	$(RUN) python tools/check_layers.py

format: sync
	$(RUN) ruff format .
	$(RUN) ruff check --fix .

# The integration tests first: their long ones (kill loops, three-machine syncs) then start
# early instead of ending the run on one worker; an idle worker steals queued tests.
# Every test, in the workspace: the quickest whole check while working.
test-unit: sync
	bash tools/browser/install.sh
	bash tools/agents/install.sh
	$(RUN) pytest -n $(JOBS) --dist worksteal -q tests-integration packages tools/bench tools/dist_test.py

# make test runs each test once where it proves most. These packages' venvs in
# test-isolated hold every module their code and tests import (their declared dependencies
# and test group; the layers forbid siblings above them), and ihmt-cli's tests run their
# child `ihmt` words only (IHMT_SEMANTIC=off) unless they need the encoder and say so: in
# the workspace they would prove the same again. So make test runs them against their
# wheels alone, property tests included, and reruns here whatever their venvs skip (the
# tests needing the [semantic] extra). ihmt-mcp's tests stay in both: in the workspace
# its default (semantic auto) runs the sentence encoder, in its slim venv words only.
# The slowest tests are listed at the end of each run, to see where CI's time goes.
SOLE_ISOLATED := ihmt-store,ihmt-chunkers,ihmt-facts,ihmt-navigator,ihmt-cli
test-workspace: sync
	bash tools/browser/install.sh
	bash tools/agents/install.sh
	$(RUN) pytest -n $(JOBS) --dist worksteal -q --durations=25 tests-integration packages/ihmt-mcp tools/bench tools/dist_test.py

# Each package's tests in a venv holding only that package's wheel and its declared
# dependencies: the proof that the split between packages is real. The venvs are made
# while the tests run; each package's tests run on $(JOBS) workers, as above.
test-isolated: sync
	$(RUN) python tools/isolated_tests.py --jobs $(JOBS)

test: lint test-workspace
	$(RUN) python tools/isolated_tests.py --jobs $(JOBS) --durations 10 --sole $(SOLE_ISOLATED)

bench: sync
	$(RUN) python tools/bench/store.py
	$(RUN) python tools/bench/chunkers.py
	$(RUN) python tools/bench/facts.py
	$(RUN) python tools/bench/scale.py
	$(RUN) python tools/bench/realistic.py
	$(RUN) python tools/bench/ingest.py
	$(RUN) python tools/bench/secret_formats.py

demo: sync
	$(RUN) ihmt demo

# Every wheel and sdist into dist/: contents, long descriptions, `twine check`, and each
# wheel installed alone in a fresh venv and used (tools/dist.py).
dist: sync
	$(RUN) python tools/dist.py

clean:
	rm -rf .venv dist build .pytest_cache .mypy_cache .ruff_cache tools/bench/results
