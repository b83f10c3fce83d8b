# The two front-door commands; each sets itself up (a .venv in this folder) before it runs.
#   make benchmark   replay the shipped recordings offline (no key needed); ARGS="..." adds pytest options
#   make test        lint, type-check and run the project's own test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
ARGS ?=

.PHONY: benchmark test lint setup

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstalled whenever pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

setup: $(VENV)/.installed

benchmark: setup
	$(BIN)/pytest benchmarks $(ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest tests -n 2 $(ARGS)
