# The two front-door commands; each sets itself up (a .venv in this folder) before it runs.
#   make benchmark   replay the shipped recordings offline (no key needed); ARGS="..." adds pytest options
#   make test        lint, type-check and run the project's own test suite (every tier)
# The test tiers on their own (no lint first): tests/unit (functions and objects, no process), and everything but
# the slow tier (tests/unit, tests/session: the session in-process, tests/contract: pytest's own contract):
#   make test-unit
#   make test-fast
# And the pull-request gate: every model of baselines/ replayed and compared with its committed baseline.
#   make gate
# And the project's test suite against the lowest versions pyproject.toml's ranges allow (constraints-lowest.txt),
# in a virtualenv of its own, .venv-lowest:
#   make test-lowest
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install --quiet --disable-pip-version-check
ARGS ?=
# llama-cpp-python (the local extra) compiles from source. GGML_NATIVE=OFF builds for portable AVX2:
# a native build on CPUs with Intel AMX crashes on the first inference (llama.cpp issue 20824).
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

LOWEST := .venv-lowest
.PHONY: benchmark gate test test-unit test-fast test-lowest lint setup setup-dev setup-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Each stamp is remade (packages reinstalled) whenever pyproject.toml or constraints.txt changes.
# pyproject.toml declares ranges; constraints.txt holds the exact versions that reproduce the shipped figures.
$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -c constraints.txt -e .
	touch $@

# llama-cpp-python's wheel, built once per version and CMAKE_ARGS and kept outside the checkout, so that a fresh
# clone on a machine that built it before installs it in seconds. pip's own wheel cache is not used for it: it
# ignores CMAKE_ARGS and could hand back a native build.
LLAMA_VERSION := $(shell sed -n 's/^llama_cpp_python==//p' constraints.txt)
LLAMA_WHEELS ?= $(HOME)/.cache/snap-bench/wheels/$(shell printf '%s' "$(CMAKE_ARGS)" | sha256sum | cut -c1-16)

$(VENV)/.installed-dev: pyproject.toml constraints.txt | $(BIN)/python
	mkdir -p $(LLAMA_WHEELS)
	ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
		$(BIN)/pip wheel --quiet --disable-pip-version-check --no-cache-dir --no-deps -w $(LLAMA_WHEELS) \
			llama_cpp_python==$(LLAMA_VERSION)
	$(PIP) --no-cache-dir --find-links $(LLAMA_WHEELS) -c constraints.txt -e '.[test,local,postgres]'
	touch $@ $(VENV)/.installed

# The tiers but the slow one need the test extras, not the local extra's compiled llama.cpp.
$(VENV)/.installed-test: pyproject.toml constraints.txt | $(BIN)/python
	$(PIP) -c constraints.txt -e '.[test,postgres]'
	touch $@ $(VENV)/.installed

setup: $(VENV)/.installed

setup-dev: $(VENV)/.installed-dev

setup-test: $(VENV)/.installed-test

# make turns any failing recipe into its own status 2, so pytest's status (README: Exit status) is printed
# and kept in reports/exit-status for scripts that need the difference between 1 and 6.
benchmark: setup
	@status=0; $(BIN)/pytest benchmarks $(ARGS) || status=$$?; \
		mkdir -p reports; echo $$status > reports/exit-status; \
		echo "pytest benchmarks exit status: $$status"; exit $$status

# Each baselines/MODEL.json was written by --snap-save-baseline from MODEL's shipped recordings; the exit
# status follows the comparison only (--snap-gate=baseline), so a change that moves a result past its
# margin fails, and the models' own threshold verdicts do not.
gate: setup
	@set -e; for file in baselines/*.json; do \
		model=$$(basename $$file .json); \
		echo "== $$model against $$file"; \
		$(BIN)/pytest benchmarks -q --model=$$model --baseline=$$file --snap-gate=baseline \
			--snap-out=reports/gate-$$model $(ARGS); \
	done

lint: setup-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

TEST_OPTIONS := -n 2 --durations=30

test: lint
	$(BIN)/pytest tests $(TEST_OPTIONS) $(ARGS)

test-unit: setup-test
	$(BIN)/pytest tests/unit $(TEST_OPTIONS) $(ARGS)

test-fast: setup-test
	$(BIN)/pytest tests/unit tests/session tests/contract -m "not slow" $(TEST_OPTIONS) $(ARGS)

$(LOWEST)/bin/python:
	$(PYTHON) -m venv $(LOWEST)

# constraints-lowest.txt pins each runtime dependency to the lower bound of its range in pyproject.toml.
$(LOWEST)/.installed: pyproject.toml constraints-lowest.txt | $(LOWEST)/bin/python
	# Without the local extra: the slow tests, which serve a model with llama.cpp, run in make test only (its
	# compile is 10-15 minutes, and llama-cpp-python is not one of the plugin's runtime dependencies).
	$(LOWEST)/bin/pip install --quiet --disable-pip-version-check -c constraints-lowest.txt -e '.[test,postgres]'
	touch $@

# What the lowest versions must still run: the unit tier (the statistics against their R references on the lowest
# numpy, scipy, pandas and pingouin; the client, recordings, report and the session's stage on the lowest httpx,
# vcrpy and pyyaml) and the contract tier (the plugin under pytest, plain and under xdist, on the lowest pytest and
# pytest-xdist), and the fail-closed sessions in-process. The rest of the session tier runs the same stage on the
# same versions and stays make test's, as does the slow tier (it needs the compiled local extra): CI time.
LOWEST_TESTS ?= tests/unit tests/contract tests/session/test_gate_fails_closed.py

test-lowest: $(LOWEST)/.installed
	$(LOWEST)/bin/pytest $(LOWEST_TESTS) -n 2 -m "not slow" $(ARGS)
