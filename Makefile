# Arena. Every target installs what it needs first, so each works on a fresh clone with only
# Python 3.11+ and the package registries: uv is bootstrapped into .tools/ with pip, the locked
# dependencies go into .venv/, and the npm tools (buf, for the proto lint) into tools/node_modules.
SHELL := /bin/bash
PYTHON ?= python3
TOOLS := .tools
UV := $(TOOLS)/bin/uv
UV_VERSION := 0.13.9
RUN := $(UV) run --frozen
NODE_TOOLS := tools/node_modules/.package-lock.json

.DEFAULT_GOAL := help
.PHONY: help install run test bench proto lint up down clean

help:
	@echo "make run      install, then run every service in one process on http://127.0.0.1:8000"
	@echo "make test     install, then run the whole test suite"
	@echo "make install  bootstrap uv into $(TOOLS)/, sync the locked dependencies, npm tools"
	@echo "make bench    benchmarks (python -m bench)"
	@echo "make proto    regenerate the Python code of proto/"
	@echo "make lint     ruff, mypy, import-linter"
	@echo "make up|down  the distributed stack with Docker Compose"

$(UV):
	@$(PYTHON) -m venv $(TOOLS) || { \
	  echo "make: '$(PYTHON) -m venv' failed: install Python's venv module" \
	       "(Debian: apt-get install python3-venv) or set PYTHON=" >&2; exit 1; }
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# npm ci writes node_modules/.package-lock.json: a stamp newer than the lock means up to date.
$(NODE_TOOLS): tools/package.json tools/package-lock.json
	@if command -v npm > /dev/null; then \
	  npm ci --prefix tools --no-audit --no-fund --silent; \
	else \
	  echo "make: npm not found; skipping the npm tools (only the proto lint test needs them)" >&2; \
	fi

install: $(UV) $(NODE_TOOLS)
	$(UV) sync --frozen --python $(PYTHON)

run: install
	$(RUN) arena serve

test: install
	$(RUN) pytest tests

bench: install
	$(RUN) python -m bench

proto: install
	$(RUN) python -m arena_runtime.proto_build

lint: install
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) mypy
	$(RUN) lint-imports

up:
	docker compose up -d --build

down:
	docker compose down -v

clean:
	rm -rf $(TOOLS) .venv var tools/node_modules
