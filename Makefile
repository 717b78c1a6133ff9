# Arena — every target installs what it needs first, so each works on a fresh clone with only
# Python and the package registries.
SHELL := /bin/bash
PYTHON ?= python3
TOOLS := .tools
UV := $(TOOLS)/bin/uv
UV_VERSION := 0.13.9
RUN := $(UV) run --frozen

.PHONY: install run test bench proto lint up down clean

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

install: $(UV)
	$(UV) sync --frozen --python $(PYTHON)
	@if [ -f tools/package.json ]; then npm ci --prefix tools --no-audit --no-fund --silent; fi

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
	rm -rf $(TOOLS) .venv var
