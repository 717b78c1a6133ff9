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
# The web client (docs/client.md): built into services/gateway/web/dist, which the gateway serves.
WEB := services/gateway/web
WEB_MODULES := $(WEB)/node_modules/.package-lock.json
WEB_BUILD := $(WEB)/dist/index.html
WEB_SOURCES := $(shell find $(WEB)/src $(WEB)/scripts services/gateway/src -type f \
  -not -path '*/gen/*' -not -name '*.pyc' 2>/dev/null) $(WEB)/index.html $(WEB)/vite.config.ts \
  $(WEB)/tsconfig.json docs/asyncapi.yaml $(wildcard docs/schemas/*.json)

.DEFAULT_GOAL := help
.PHONY: help install web chromium run test bench proto asyncapi lint up down clean

help:
	@echo "make run      install, then run every service in one process on http://127.0.0.1:8000"
	@echo "make test     install, then run the whole test suite"
	@echo "make install  bootstrap uv into $(TOOLS)/, sync the locked dependencies, npm tools,"
	@echo "              build the web client, install chromium (Debian, as root) where missing"
	@echo "make bench    benchmarks (python -m bench)"
	@echo "make proto    regenerate the Python code of proto/ (runtime and games)"
	@echo "make asyncapi write the games' pushes into docs/asyncapi.yaml from their models"
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

# Bytecode is compiled at install: where PYTHONDONTWRITEBYTECODE is set (as on our machines and
# CI) Python never caches it, and every process would compile its imports again (seconds each).
install: $(UV) $(NODE_TOOLS)
	$(UV) sync --frozen --compile-bytecode --python $(PYTHON)
	@.venv/bin/python -m compileall -q -j 0 libs/*/src services/*/src
	@$(MAKE) --no-print-directory web chromium

$(WEB_MODULES): $(WEB)/package.json $(WEB)/package-lock.json
	@if command -v npm > /dev/null; then \
	  npm ci --prefix $(WEB) --no-audit --no-fund --silent; \
	fi

# The wire types are generated from docs/asyncapi.yaml and the gateway's OpenAPI document.
$(WEB_BUILD): $(WEB_MODULES) $(WEB_SOURCES)
	@if command -v npm > /dev/null; then \
	  $(RUN) python $(WEB)/scripts/openapi.py && npm run --prefix $(WEB) --silent build; \
	else \
	  echo "make: npm not found; the web client is not built (its tests fail under CI)" >&2; \
	fi

web: $(WEB_BUILD)

# The browser tests drive Debian's chromium (never a downloaded build).
chromium:
	@if ! command -v chromium > /dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else \
	    echo "make: chromium is missing and installing it needs root: the browser tests" \
	         "skip (and fail under CI)" >&2; \
	  fi; \
	fi

run: install
	$(RUN) arena serve

test: install
	$(RUN) pytest tests

bench: install
	$(RUN) python -m bench

proto: install
	$(RUN) python -m arena_runtime.proto_build
	$(RUN) python -m arena_games.proto_build

# The games' pushes in docs/asyncapi.yaml come from their models (client.push_models); the
# suite fails while the file is stale (tests/services/gateway/test_asyncapi.py).
asyncapi: install
	$(RUN) python -m arena_gateway.asyncapi

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
	rm -rf $(TOOLS) .venv var tools/node_modules $(WEB)/node_modules $(WEB)/dist $(WEB)/src/gen
