# Every target sets itself up: a fresh clone needs only python3 (>= 3.11) and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo score test test-all bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, so that nothing that depends on it pulls a CUDA build
	$(BIN)/python -m pip install --quiet 'torch==2.13.0'
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

## The main job: a tiny model built locally learns the grant rules by GRPO against the embedded rule kernel
## (offline, CPU only), then held-out accuracy per rule branch, before -> after.
demo: setup
	$(BIN)/proofgym demo

## Score the shipped sample completions of both domains and show each reward's breakdown.
score: setup
	$(BIN)/proofgym score --config configs/grant_eligibility.yaml --completions examples/grant_eligibility/completions.jsonl
	$(BIN)/proofgym score --config configs/loan.yaml --completions examples/loan/completions.jsonl

## The test suite (slow tests excluded; `make test-all` runs them too).
test: setup
	$(BIN)/python -m pytest -q

test-all: setup
	$(BIN)/python -m pytest -q -m ""

bench: setup
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python benchmarks/verification_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info src/*.egg-info
