# Two commands do all the set-up on a fresh machine with Python 3.11 and pip:
#   make check   installs torchdoctor into .venv and runs `torchdoctor check`
#   make test    installs it with the test dependencies into .venv and runs the test suite
#   make test-fast  only the tests that start no process (the `processes` mark of tests/conftest.py)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: check test test-fast lint bench clean

# Let Python keep compiled modules (__pycache__, git-ignored) where the environment says not to: the suite starts
# hundreds of processes that import torchdoctor, and every pytest worker rewrites the asserts of every test
# module; without the cache each one compiles them again (7 s of CPU per worker for the rewrite alone).
unexport PYTHONDONTWRITEBYTECODE

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) install -q -c constraints.txt -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) install -q -c constraints.txt -e '.[test]'
	touch $@

check: $(VENV)/.installed
	$(BIN)/torchdoctor check

test: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check -q src tests benchmarks
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup --durations=20  # a worker a core: with 3, the suite's own load made its live timing tests flaky (session 31); loadgroup: see SHARED_JOB_MODULES in tests/conftest.py

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n 2 -m "not processes"  # CPU-bound: one worker per core

# The side-by-side benchmarks, each printing its ratio against the tool it replaces. Not here: the sweeps and
# corpus runs (hang_corpus, issue_cases, find_bad_sweep, straggler_sweep, explain_corpus FOLDER, straggler_replay FOLDER),
# catalog_coverage, compat.py --torch VERSION, and intervals.py (a module the others import); the README says
# how to run each. A glob over benchmarks/*.py stopped at compat.py, which needs --torch.
RATIO_BENCHMARKS := batch_size_finder check_time debug_mode_overhead debug_mode_scaling explain_throughput \
	net_bandwidth overflow_overhead straggler_overhead watchdog_overhead

bench: $(VENV)/.installed-test
	for b in $(RATIO_BENCHMARKS); do $(BIN)/python benchmarks/$$b.py || exit 1; done

clean:
	rm -rf $(VENV) build src/*.egg-info
