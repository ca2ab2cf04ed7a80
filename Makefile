# trinom — two commands do everything: `make run` (price a sample portfolio) and `make test`.
# On a machine without network (the lent GPU machine) pass SETUP= PYTHON=python3 to skip set-up.
SHELL := /bin/bash
.DEFAULT_GOAL := help

APT_PACKAGES := patchelf pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo gcc make
TOOLCHAIN    := .toolchain
FUTHARK      := $(TOOLCHAIN)/bin/futhark
VENV         := .venv
PYTHON       ?= $(VENV)/bin/python
SETUP        ?= setup
BACKEND      ?= c
PYTEST_ARGS  ?=
export PATH := $(CURDIR)/$(TOOLCHAIN)/bin:$(PATH)
export PYTHONPATH := $(CURDIR)/python$(if $(PYTHONPATH),:$(PYTHONPATH))
# PoCL 3.1 miscompiles some of Futhark's reductions unless optimisation is off (README: Backends and targets).
export POCL_EXTRA_BUILD_FLAGS ?= -cl-opt-disable

.PHONY: help setup setup-apt setup-futhark setup-venv lib test test-fast test-full test-gpu run bench bench-gpu bench-peers \
        data futhark-test futhark-bench lint clean

help:
	@echo "make run         set up, build, price a sample portfolio on the best backend"
	@echo "make test        set up, build, make data, futhark test, pytest (what CI runs)"
	@echo "make setup       Debian packages, Futhark 0.25.27 in $(TOOLCHAIN)/, the $(VENV) virtual environment"
	@echo "make lib         compile fut/ and cuda/ into python/trinom/_lib (only what changed)"
	@echo "make data        unpack data/thesis, data/paper (shipped .xz); write data/*.in, data/*.out (Futhark inputs, reference prices)"
	@echo "make test-gpu    GPU tests (needs an NVIDIA GPU); make bench / bench-gpu: benchmarks"
	@echo "make bench-peers QuantLib and FinancePy against trinom (installs requirements-bench.txt)"
	@echo "make test-full   every full 65536-option dataset on the CPU (slow: about an hour)"
	@echo "make futhark-test, make futhark-bench BACKEND=cuda, make lint, make clean"

# --- set-up: idempotent, each step says when it has nothing to do -------------------------------------
setup: setup-apt setup-futhark setup-venv

setup-apt:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "apt: up to date ($(APT_PACKAGES))"; \
	else echo "apt: installing $$missing"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; fi

setup-futhark:
	@tools/install-futhark.sh $(TOOLCHAIN)

setup-venv: $(VENV)/.installed
$(VENV)/.installed: requirements.txt pyproject.toml
	@echo "venv: installing pinned requirements into $(VENV)"
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	@$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt 2>&1 | grep -v "^WARNING: Location" || true
	@$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps -e . 2>&1 | grep -v "^WARNING: Location" || true
	@$(VENV)/bin/python -c "import trinom, futhark_ffi, cffi" && touch $@ && echo "venv: ready ($(VENV)/bin/trinom)"

# --- build ---------------------------------------------------------------------------------------------
lib: $(SETUP)
	@echo "lib: compiling into python/trinom/_lib"
	@$(PYTHON) build.py

data: $(SETUP)
	@$(PYTHON) tools/make_data.py --out data

# --- tests -----------------------------------------------------------------------------------------------
test: $(SETUP) lib data futhark-test
	$(PYTHON) -m pytest -m "not slow" $(PYTEST_ARGS)

test-fast: $(SETUP)
	$(PYTHON) -m pytest -m "not gpu and not slow" -x -q $(PYTEST_ARGS)

test-full: $(SETUP) lib
	$(PYTHON) -m pytest -m "slow and not gpu" $(PYTEST_ARGS)

test-gpu: $(SETUP) lib
	$(PYTHON) -m pytest -m gpu -rs $(PYTEST_ARGS)

futhark-test: $(SETUP) data
	@if ls fut/trinom-*.fut >/dev/null 2>&1; then futhark test --backend=c fut/trinom-basic.fut fut/trinom-flat.fut fut/bonds.fut fut/fast.fut fut/fast-bonds.fut \
	    fut/calibrate.fut; \
	else echo "futhark-test: no fut/ programs yet"; fi

lint: $(SETUP)
	$(PYTHON) -m ruff check python tests benches build.py tools examples

# --- running and benchmarks ---------------------------------------------------------------------------
run: $(SETUP) lib
	$(PYTHON) -m trinom.cli demo

bench: $(SETUP) lib data
	$(PYTHON) -m pytest benches -m "not gpu" --benchmark-enable --benchmark-json=benches/cpu.json $(PYTEST_ARGS)

bench-gpu: $(SETUP) lib data
	$(PYTHON) -m pytest benches -m gpu --benchmark-enable --benchmark-json=benches/gpu.json $(PYTEST_ARGS)

bench-peers: $(SETUP)
	@$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements-bench.txt 2>&1 | grep -v "^WARNING: Location" || true
	$(PYTHON) benches/peers.py

# opencl on a GPU machine: BACKEND=opencl FUTHARK_BENCH_ARGS=--pass-option=--platform=NVIDIA (PoCL may be platform 0)
futhark-bench: $(SETUP) data
	futhark bench --backend=$(BACKEND) --runs=5 --json=benches/futhark-$(BACKEND).json $(FUTHARK_BENCH_ARGS) \
	    fut/bench-basic.fut fut/bench-flat.fut
	@{ nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep . || \
	   lscpu | sed -n 's/^Model name: *//p'; } | tr '\n' ' ' > benches/futhark-$(BACKEND).machine; \
	 echo "$$(nproc) cores, Futhark $$(futhark --version | head -1 | awk '{print $$2}')" >> benches/futhark-$(BACKEND).machine

clean:
	rm -rf build python/trinom/_lib data/*.in data/*.out data/thesis/*.in data/thesis/out*/*.out \
	       data/paper/*.in data/paper/out*/*.out .pytest_cache
	@echo "clean: removed build outputs (make distclean-style removal of $(VENV) and $(TOOLCHAIN) is manual)"
