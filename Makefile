# Trainable: build the book from its sources.
#
#   make           environment, executed chapters, claim artifacts, figures, site
#   make test      lint, unit tests, a full rebuild from clean, checks of the built site
#   make rebuild   the full re-execution from clean that CI runs
#   make verify    recompute every claim without running notebooks
#   make repin     re-pin every chapter to the current harness and report changed claims
#   make serve     preview the built site on http://127.0.0.1:8000
#
# Every step is a file target, so an unchanged tree does no work: a chapter re-executes when its
# source, the harness, the claim registry or the table of contents changes.
SHELL := bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Keep the pip configuration of the machine, but not its chatter about missing local indexes.
PIP := $(BIN)/python -m pip --quiet --disable-pip-version-check

CHAPTER_SOURCES := $(wildcard chapters/*.md)
EXECUTED := $(CHAPTER_SOURCES:.md=.ipynb)
HARNESS_SOURCES := $(shell find harness/trainable_harness -name '*.py' -o -name '*.json')
CLAIM_FILES := $(wildcard claims/*.yaml)
BOOK_SOURCES := _config.yml _toc.yml intro.md references.bib $(wildcard _ext/*.py _static/*)
MATHJAX := _build/site-extra/_vendor/mathjax/tex-chtml.js
SITE := _build/html/index.html

.PHONY: all venv site test lint unit site-check rebuild clean verify repin serve browser lock

all: $(SITE)
	@echo "The book is built: $(abspath $(SITE))"

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -r requirements.txt 2> >(grep -v "is ignored: it is neither" >&2)
	$(PIP) install --no-deps -e . 2> >(grep -v "is ignored: it is neither" >&2)
	touch $@

# The ids of the claims a chapter source verifies.
verified_claims = $(shell grep -oE 'verify_claim."[^"]+"' $(1) | cut -d'"' -f2)

# A chapter: MyST source -> plain notebook (jupytext) -> executed notebook (papermill).
# The claims the chapter verifies are removed first, so a failed run can never leave an
# earlier run's artifact behind as if this run had verified it.
chapters/%.ipynb: chapters/%.md $(HARNESS_SOURCES) $(CLAIM_FILES) _toc.yml _config.yml | $(STAMP)
	@mkdir -p _build/notebooks
	rm -f $(foreach id,$(call verified_claims,$<),artifacts/claims/$(id).json)
	$(BIN)/jupytext --quiet --to ipynb --output _build/notebooks/$*.ipynb $<
	@echo "papermill: executing $<"
	@$(BIN)/papermill --cwd chapters --log-level WARNING --no-progress-bar \
	    _build/notebooks/$*.ipynb _build/notebooks/$*.executed.ipynb \
	    || { echo "make: chapter $< failed; papermill names the cell and exception above" >&2; exit 1; }
	mv _build/notebooks/$*.executed.ipynb $@

$(MATHJAX): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	rm -rf _build/site-extra/_vendor/mathjax && mkdir -p _build/site-extra/_vendor
	cp -r node_modules/mathjax/es5 _build/site-extra/_vendor/mathjax
	touch $@

$(SITE): $(EXECUTED) $(BOOK_SOURCES) $(MATHJAX) $(HARNESS_SOURCES) $(CLAIM_FILES) | $(STAMP)
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going
	touch $@

site: $(SITE)

lint: | $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: | $(STAMP)
	$(BIN)/pytest -m "not site"

# The built-site checks, including a real browser: Debian's chromium, installed here if absent.
browser:
	@command -v chromium >/dev/null || { \
	    echo "installing Debian's chromium for the browser check"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	        --no-install-recommends chromium fonts-dejavu-core >/dev/null; }

site-check: $(SITE) browser
	$(BIN)/pytest -m site

rebuild: clean
	$(MAKE) all

# After the rebuild: the site as a reader sees it, the artifacts on disk equal to a fresh
# recomputation (the build is deterministic), and an unchanged tree with nothing left to do.
test: lint unit rebuild
	$(MAKE) site-check
	$(BIN)/python -m trainable_harness claims verify --check-artifacts
	$(MAKE) --question $(SITE) || { echo "make test: an unchanged tree would rebuild" >&2; exit 1; }

verify: | $(STAMP)
	$(BIN)/python -m trainable_harness claims verify

repin: | $(STAMP)
	$(BIN)/python -m trainable_harness repin

serve: $(SITE)
	$(BIN)/python -m http.server --directory _build/html --bind 127.0.0.1 8000

lock: | $(STAMP)
	$(PIP) install -r requirements.in
	{ sed -n '1,2p' requirements.txt; $(BIN)/python -m pip freeze --exclude-editable; } > requirements.lock.tmp
	mv requirements.lock.tmp requirements.txt

# Build products only; sources, the environment and node_modules stay.
clean:
	rm -rf _build $(EXECUTED)
	find artifacts -type f ! -name .gitignore ! -name README.md -delete

# The book as one PDF, printed from the built site by headless Chromium: _build/pdf/book.pdf.
.PHONY: pdf binder-check
pdf: $(SITE) browser
	$(BIN)/python tools/book_pdf.py _build/html _build/pdf/book.pdf

# What Binder does (runtime.txt, requirements.txt, postBuild, notebooks run in their folder,
# claims re-verified), in a fresh environment in a temporary directory.
binder-check: | $(STAMP)
	$(BIN)/python tools/binder_check.py
