# The README's verbs. `make reproduce` and `make test` work on a fresh Debian/Ubuntu machine
# with Python 3.11+ and make: they build the virtualenv from requirements.lock and install
# TeX Live from the system's packages when it is missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
ifdef NUMA_LB_NIX_PYTHON
# Inside `nix develop` (flake.nix): Python and every package from nixpkgs, no virtualenv.
BIN := $(NUMA_LB_NIX_PYTHON)/bin
SIMCORE := simcore
UV := uv
RUFF := ruff
else
BIN := $(VENV)/bin
SIMCORE := $(BIN)/simcore
UV := $(BIN)/uv
RUFF := $(BIN)/ruff
endif
SCALE ?= full
CORES ?= all
ID ?=
EVAL_SCALE ?= smoke
EVAL_DIR ?= build/evaluation
EVAL_ARGS ?=
PART ?=
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | cksum | cut -d' ' -f1)
export PATH := $(abspath $(BIN)):$(PATH)
SNAKEMAKE := $(BIN)/snakemake --cores $(CORES) --config scale=$(SCALE)

# Bad arguments stop make before anything runs or is built: one sentence on stderr, exit code 2,
# in make's form (`Makefile:N: *** SCALE=huge is not a scale: give smoke, quick or full.  Stop.`).
# $(call one-of,VALUE,ALLOWED): VALUE if it is one word of ALLOWED, else nothing
one-of = $(if $(filter 1,$(words $1)),$(filter $2,$1))
# $(call quoted,TEXT): TEXT as one single-quoted shell word
quoted = '$(subst ','\'',$1)'
ifneq ($(filter reproduce unlock figure dag,$(MAKECMDGOALS)),)
$(if $(call one-of,$(SCALE),smoke quick full),,$(error SCALE=$(SCALE) is not a scale: give smoke, quick or full))
$(if $(call one-of,$(CORES),all)$(shell [[ $(call quoted,$(CORES)) =~ ^[1-9][0-9]*$$ ]] && echo y),,\
  $(error CORES=$(CORES) is not a number of cores: give a positive integer, or all))
endif
ifneq ($(filter evaluate,$(MAKECMDGOALS)),)
$(if $(call one-of,$(EVAL_SCALE),smoke quick),,$(error EVAL_SCALE=$(EVAL_SCALE) is not a scale of make evaluate: give smoke or quick))
endif
ifneq ($(filter figure,$(MAKECMDGOALS)),)
$(if $(strip $(ID)),,$(error make figure: give ID=<experiment id>, e.g. ID=amir-table2 (see: $(SIMCORE) list)))
endif
ifneq ($(filter calibrate,$(MAKECMDGOALS)),)
$(if $(wildcard config/calibration/$(ID).yaml),,$(error make calibrate: give ID=<calibration id>, one of: $(basename $(notdir $(wildcard config/calibration/*.yaml)))))
$(if $(call one-of,$(CORES),all)$(shell [[ $(call quoted,$(CORES)) =~ ^[1-9][0-9]*$$ ]] && echo y),,\
  $(error CORES=$(CORES) is not a number of cores: give a positive integer, or all))
endif
# $(call targets-of,ID): the workflow targets of ID (`simcore targets`); an unknown ID stops make
# with simcore's sentence (expanded in a recipe, once the virtualenv is there)
targets-of = $(eval targets-out := $(shell $(SIMCORE) targets $(call quoted,$1) 2>&1))$\
  $(if $(filter 0,$(.SHELLSTATUS)),$(targets-out),$(error $(patsubst %.,%,$(targets-out))))

.PHONY: help env tex lock reproduce unlock reference report-from-reference evaluate test calibrate figure dag lint bench mutation clean distclean

help:  ## list the verbs
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

ifdef NUMA_LB_NIX_PYTHON
env:
	@echo "env: Python from nixpkgs ($(BIN)/python), no virtualenv"
else
$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.lock
	@$(BIN)/python -m pip check --disable-pip-version-check || { echo 'requirements.lock is not closed under its requirements: run make lock'; exit 2; }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@rm -f $(VENV)/.installed-* && touch $@

env: $(STAMP)  ## create the virtualenv from the lock file
endif

# uv (pinned in the lock's `lock` group) resolves pyproject.toml's pins, extras and groups for
# Python 3.11 on this platform and keeps every other pin already in the lock; UPGRADE=1 lets
# the unpinned part of the closure move to the newest versions the index has.
lock: env  ## regenerate requirements.lock from pyproject.toml with uv (UPGRADE=1 to refresh the closure), and the conda env file from it
	$(UV) pip compile pyproject.toml --extra workflow --extra test --group build --group lock \
	    --python-version 3.11 --quiet $(if $(UPGRADE),--upgrade) -o requirements.lock
	$(BIN)/python scripts/conda_env.py

tex:  ## make sure latexmk and pdflatex are present (apt-get, or a pointer to `nix develop`)
	@scripts/ensure-tex.sh

reproduce: env tex  ## run the whole workflow at SCALE (smoke|quick|full) -> paper/build/report.pdf
	$(SNAKEMAKE) --profile workflow/profiles/default
	@echo "report: paper/build/report.pdf"

unlock: env  ## after a run was killed (kill -9, power loss, session end): clear Snakemake's stale lock; make reproduce then resumes where it stopped
	$(SNAKEMAKE) --profile workflow/profiles/default --unlock

reference: env  ## keep a full run's results (make reproduce) as the committed reference, results/reference/
	$(SIMCORE) save-reference --out results/reference

report-from-reference: env tex  ## the full-scale report from results/reference/ alone, no simulation -> build/reference/paper/build/report.pdf
	@mkdir -p build/reference/paper && rm -rf build/reference/paper/sections
	cp -rp paper/report.tex paper/sections build/reference/paper/
	@echo "make report-from-reference: 1/2 every table, figure and macro from results/reference (a minute)" >&2
	$(SIMCORE) report-from-results --results results/reference --paper build/reference/paper
	@echo "make report-from-reference: 2/2 latexmk (its log: build/reference/latexmk.log)" >&2
	cd build/reference/paper && latexmk -pdf -interaction=nonstopmode -halt-on-error -outdir=build report.tex \
	    > ../latexmk.log 2>&1 || { tail -30 ../latexmk.log; exit 1; }
	$(SIMCORE) check-layout build/reference/paper/build/report.log
	@echo "report: build/reference/paper/build/report.pdf"

# The evaluation runs in a copy of the workflow's sources (build/evaluation/), so it never
# touches results/ of another scale; it resumes there when interrupted.
evaluate: env tex  ## artifact evaluation: the whole DAG at EVAL_SCALE (smoke|quick) checked against results/reference -> results/evaluation.md
	@mkdir -p $(EVAL_DIR)/paper && rm -rf $(EVAL_DIR)/workflow $(EVAL_DIR)/config $(EVAL_DIR)/paper/sections
	cp -rp Snakefile workflow config $(EVAL_DIR)/ && cp -rp paper/report.tex paper/sections $(EVAL_DIR)/paper/
	cd $(EVAL_DIR) && $(abspath $(BIN))/snakemake --profile workflow/profiles/ci --config scale=$(EVAL_SCALE)
	cd $(EVAL_DIR) && $(abspath $(BIN))/snakemake --profile workflow/profiles/ci --config scale=$(EVAL_SCALE) --report report.html
	$(SIMCORE) evaluate --results $(EVAL_DIR)/results --reference results/reference --out results/evaluation.md $(EVAL_ARGS)

test: env tex  ## the whole test suite, including the smoke-scale workflow
	$(BIN)/python -m pytest

calibrate: env  ## fit a paper's control on its published baseline points and record it: make calibrate ID=corr05-control (about 45 min on 2 cores)
	$(SIMCORE) calibrate $(call quoted,$(ID)) --scale full --jobs $(if $(filter all,$(CORES)),$(shell nproc),$(CORES)) \
	    --record config/calibration/fits/$(ID).yaml --out results/calibration/$(ID)

figure: env  ## rebuild one figure or table at SCALE, full unless given: make figure ID=amir-table2 takes about 7 job-minutes (SCALE=quick: 30 s; also ID=corr05-fig8, ID=san-example)
	$(eval FIGURE_TARGETS := $(call targets-of,$(ID)))
	@echo "make figure: building $(FIGURE_TARGETS) at scale $(SCALE)"
	@$(SNAKEMAKE) --profile workflow/profiles/default $(FIGURE_TARGETS) || exit $$?; \
	echo "rebuilt: $(FIGURE_TARGETS)"; \
	for t in $(FIGURE_TARGETS); do \
	  if [ -e paper/build/report.pdf ] && [ paper/build/report.pdf -ot "$$t" ]; then \
	    echo "paper/build/report.pdf is older than $$t; rebuild it with: make reproduce SCALE=$(SCALE)"; break; fi; \
	done

dag: env  ## dry-run the full DAG
	$(SNAKEMAKE) -n --quiet rules

lint: env  ## ruff over the Python and the notebooks (pyproject.toml's [tool.ruff]), then snakemake --lint
	$(RUFF) check .
	$(BIN)/snakemake --lint

bench: env  ## performance benchmarks (events/s against bare SimPy, the full scale's CPU time projected)
	$(BIN)/python bench/bench_floor.py
	$(BIN)/python bench/bench_cluster.py
	$(BIN)/python bench/bench_numa.py
	$(BIN)/python bench/bench_pools.py
	$(BIN)/python bench/bench_resources.py
	$(BIN)/python bench/bench_cosched.py
	$(BIN)/python bench/bench_pvm.py
	$(BIN)/python bench/bench_san.py
	$(BIN)/python bench/bench_topology.py
	$(BIN)/python bench/bench_san.py --corr05 corr05-4x2
	$(BIN)/python bench/bench_san_sim.py
	$(BIN)/python bench/bench_full.py

mutation: env  ## mutation score of simcore/models, simcore/stats and simcore/vocabulary (mutmut, fast tests; hours; PART=simcore/models/numa for one part)
	$(BIN)/python scripts/mutation.py --record $(if $(PART),--part '$(PART)')

# what the workflow writes in results/: all of it but the committed reference, which only
# `make reference` replaces
RESULTS_MADE = $(filter-out results/reference,$(wildcard results/*))

clean:  ## remove workflow outputs (keeps results/reference/ and the virtualenv)
	rm -rf $(RESULTS_MADE) paper/build paper/figures paper/tables paper/generated logs .snakemake mutants

distclean: clean  ## also remove the virtualenv
	rm -rf $(VENV)
