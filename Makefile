# The README's two commands: `make book` (set up, build the book and the student notebooks)
# and `make test` (the whole suite); and `make check` (lint, format, types and the package's
# unit tests, in under two minutes) before either. The virtual environment is created on
# first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(CURDIR)/$(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# nbgrader calls `alembic` from PATH; jupyter-book calls the venv's kernel.
export PATH := $(BIN):$(PATH)
PORT ?= 8000

.PHONY: all book check lint types unit test serve setup student vendor browser sandbox postgres \
        release grade bench clean test-extended hub bytecode

all: book

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[course]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	$(BIN)/python -m collectives_grader.sandbox install >/dev/null
	touch $(STAMP)

# The project's own modules compiled to __pycache__ once, before the many processes that import
# them (chapter kernels, collectives.dist's workers, pytest's workers): where
# PYTHONDONTWRITEBYTECODE is set (as on CI) Python never caches them itself and every process
# compiled the whole package again (about 0.5 s of CPU each). Stale files are recompiled.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q collectives collectives_grader scripts tests >/dev/null

# Offline assets (MathJax, require.js, widget manager) from the npm registry.
vendor: $(STAMP)
	$(BIN)/python scripts/vendor_assets.py

# Student notebooks: nbgrader strips solutions and hidden tests into exercises/release/.
student: $(STAMP)
	$(BIN)/python scripts/release_notebooks.py

# The execution cache is keyed on each chapter's code only, and Sphinx re-reads only the
# chapters whose source changed: drop both (the cache and Sphinx's environment) whenever the
# package the chapters import changes, so that no figure or number is left stale.
book: $(STAMP) bytecode vendor student
	@hash=$$(find collectives -name '*.py' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); \
	if [ "$$(cat _build/.collectives-hash 2>/dev/null)" != "$$hash" ]; then \
	  rm -rf _build/.jupyter_cache _build/.doctrees; mkdir -p _build; \
	  echo "$$hash" > _build/.collectives-hash; fi
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going

# Debian's Chromium for the browser tests (never a downloaded browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Debian's bubblewrap, the sandbox of the grading kernel: all that grading needs.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq bubblewrap >/dev/null; }

# Debian's PostgreSQL server, for the tests only (tests/course/test_grading_postgres.py starts a
# server of its own); a course's gradebook server is the instructor's (exercises/README.md).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq postgresql >/dev/null; }

# JupyterHub's proxy, configurable-http-proxy, from the npm registry at an exact version, into
# the venv (.venv/lib/node_modules, its command in .venv/bin, which is first on PATH): what
# tests/course/test_jupyterhub.py starts the hub with (jupyterhub itself comes with make setup).
CHP_VERSION := 5.3.0
hub: $(STAMP)
	@test "$$($(BIN)/configurable-http-proxy --version 2>/dev/null)" = "$(CHP_VERSION)" || \
	  npm install --global --prefix $(CURDIR)/$(VENV) --no-audit --no-fund --loglevel=error \
	    configurable-http-proxy@$(CHP_VERSION)

# What a change must pass first: lint (ruff), format (ruff format --check), types (mypy,
# strict on the core modules) and the package's unit tests on every core. No book build, no
# apt, no browser; the tests marked `slow` (end-to-end runs on real processes) are left to
# `make test`. Every step runs, and the target fails if any of them did.
check: $(STAMP)
	@failed=""; \
	$(MAKE) --no-print-directory lint  || failed="$$failed lint"; \
	$(MAKE) --no-print-directory types || failed="$$failed types"; \
	$(MAKE) --no-print-directory unit  || failed="$$failed unit"; \
	if [ -n "$$failed" ]; then echo "make check: failed:$$failed"; exit 1; fi; \
	echo "make check: lint, types and unit tests passed"

lint: $(STAMP)
	@status=0; $(BIN)/ruff check . || status=1; \
	$(BIN)/ruff format --check . || status=1; exit $$status

types: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) bytecode
	$(BIN)/python -m pytest tests/package -m "not slow" -n auto --dist loadfile -q \
	  --durations=10

# The whole suite on every core, in two runs. First, beside the book build (the chapters are
# executed one at a time: one core), every test that needs no built book: the package's unit
# tests and tests/package's and tests/course's slow ones (the student notebooks, which some of
# them read, are released before). A worker takes a whole test file at a time (its module
# fixtures are built once), or one half of the grading pipeline (each half has its own course:
# the two are graded at once); the files with the most slow tests start first
# (tests/work_units.py, the scheduler in tests/conftest.py that `--dist loadgroup` selects).
# Then, once the book is built, the tests of the built site (tests/site: pages, browser, a
# learner's install from the site's downloads). The slowest tests are listed at the end of each
# run; the book's log comes between the two. The target fails if either run or the book failed.
test: $(STAMP) bytecode browser sandbox postgres hub student
	@mkdir -p _build; \
	( $(MAKE) --no-print-directory book > _build/book.log 2>&1 ) & book=$$!; \
	$(BIN)/python -m pytest tests --ignore=tests/site -m "not extended" -n auto \
	  --dist loadgroup --durations=30; first=$$?; \
	wait $$book; built=$$?; cat _build/book.log; \
	if [ $$built -ne 0 ]; then echo "make test: the book build failed (its log above)"; exit 1; fi; \
	$(BIN)/python -m pytest tests/site -m "not extended" -n auto --dist loadgroup \
	  --durations=15; site=$$?; \
	if [ $$first -ne 0 ]; then echo "make test: the tests that need no book failed (the first run above)"; exit 1; fi; \
	exit $$site

# The end-to-end runs that do not fit make test's budget (marked `extended`): the book's browser
# tests again under a sub-path, and the like.
test-extended: book browser sandbox postgres hub
	$(BIN)/python -m pytest -n auto --dist loadgroup --durations=30 -m extended

# Release one assignment alone (exercises/README.md, section 1): its student notebooks in
# exercises/release/<assignment>/, and with RELEASE=exchange also into nbgrader's exchange.
release: $(STAMP)
	@test -n "$(ASSIGNMENT)" || { echo "usage: make release ASSIGNMENT=<assignment> [RELEASE=exchange]"; exit 2; }
	$(BIN)/python scripts/release_notebooks.py $(ASSIGNMENT)
	@if [ "$(RELEASE)" = exchange ]; then cd exercises && $(BIN)/nbgrader release_assignment $(ASSIGNMENT) --force; fi

# Grade every submission of one assignment: sandboxed, in parallel, resumable (exercises/README.md).
grade: $(STAMP) sandbox
	@test -n "$(ASSIGNMENT)" || { echo "usage: make grade ASSIGNMENT=<assignment>"; exit 2; }
	$(BIN)/python -m collectives_grader.classroom grade $(ASSIGNMENT) --course-dir exercises

serve: book
	@echo "Serving the book on http://127.0.0.1:$(PORT)/"
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory _build/html $(PORT)

bench: $(STAMP)
	$(BIN)/python bench/simulate.py
	$(BIN)/python bench/algorithms.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/book.py
	$(BIN)/python bench/fp8.py
	$(BIN)/python bench/fabric.py
	$(BIN)/python bench/dist.py
	$(BIN)/python bench/grading.py

clean:
	rm -rf _build exercises/release exercises/submitted exercises/autograded \
	       exercises/feedback exercises/downloaded exercises/gradebook.db _static/vendor
