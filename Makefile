# Trainable: build the book from its sources.
#
#   make           environment, executed chapters, claim artifacts, figures, site
#   make test      lint, the unit, claims and book test tiers, a full rebuild from clean and
#                  the built site in a browser (about 5 minutes); each step prints its time
#   make slow-checks  what recomputes the whole science again (every claim under its mistakes,
#                  in Binder's environment, against PyTorch) and the printed book; CI runs it
#                  after make test
#   make unit      the unit tier alone (about 30 s; run it before every commit)
#   make rebuild   the full re-execution from clean that CI runs
#   make verify    recompute every claim without running notebooks
#   make repin     re-pin every chapter to the current harness and report changed claims
#   make pytorch-check  the science package against PyTorch, in an environment of its own
#   make mutate    each claim under the mistakes it names; writes claims/mistakes/record.json
#   make bench     time a cold build against Jupyter Book's own execution (_build/bench.json)
#   make bench-growth  the same on generated books of 20, 50 and 100 chapters (_build/bench.svg)
#   make uptodate  exit 0 only if `make` would do nothing and the last build was clean
#   make serve     preview the built site on http://127.0.0.1:8000
#   make matrix-check  the CI workflow's per-chapter jobs, locally, against one build
#   make binder-check  what Binder does, in a fresh environment (part of make slow-checks)
#
# The environment and MathJax are file targets; the chapters and the site are the build
# driver's (python -m claimbook build), which keys them on their content. The checks of the
# built book beside the engine are python -m checks (checks/), the benchmark python -m bench.
SHELL := bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

# The interpreter the environment is made with: CPython 3.11.5 or later, up to 3.13 (the lock
# resolves for each; CI builds on all three). By default the first of python3.11, python3.12
# and python3.13 on PATH (3.11 first: Binder's binder/runtime.txt and the published book use it).
PYTHON ?= $(or $(firstword $(shell command -v python3.11 python3.12 python3.13 2>/dev/null)),python3.11)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Keep the pip configuration of the machine, but not its chatter about missing local indexes.
PIP := $(BIN)/python -m pip --quiet --disable-pip-version-check
UV := uv==0.13.9
SETUP_LOCK := flock $(CURDIR)/.setup.lock

# One BLAS thread per process: chapters run in parallel (one kernel per core), and a fixed
# thread count keeps every reduction in the same order, so artifacts are byte-identical
# between `make`, `make verify` and `claims verify --check-artifacts`.
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1

EXECUTED := $(patsubst %.md,%.ipynb,$(wildcard chapters/*.md))
MATHJAX := _build/site-extra/_vendor/mathjax/tex-chtml.js
# MathJax's other combined entry points (SVG output, MathML input, the bundles with every
# extension or with speech, the node and CDN loaders): the pages load tex-chtml.js and the
# components it asks for (menu, accessibility, speech, fonts), never these. They are 14 of
# MathJax's 24 MB, which every render copies, compares and hashes.
MATHJAX_UNUSED := mml-chtml.js mml-svg.js tex-chtml-full.js tex-chtml-full-speech.js \
	tex-mml-chtml.js tex-mml-svg.js tex-svg-full.js tex-svg.js node-main.js latest.js

.PHONY: all venv site mathjax sandbox test slow-checks built-site-check pdf-check chapter-code-check lint unit claims-check mutate mutate-check book-check site-check check-artifacts rebuild clean verify repin serve browser lock uptodate bench bench-growth matrix-check screenshots pytorch-check

venv: $(STAMP)

# An environment belongs to the checkout it was made in: its editable installs of harness/ and
# engine/ and its scripts' #! lines name that directory. A copy of a checkout (cp -a) carries
# the original's .venv, so the copy would build the original; the directory is recorded in
# .venv/.checkout when the environment is made (an older one names it in bin/activate), and
# an environment made elsewhere is made again here. The engine refuses such a build too
# (claimbook.pipeline.checkout).
VENV_RECORD := $(VENV)/.checkout
VENV_MADE_IN := $(shell cat $(VENV_RECORD) 2>/dev/null || \
    sed -n 's|^VIRTUAL_ENV="\(.*\)/$(VENV)"$$|\1|p' $(BIN)/activate 2>/dev/null)
ifneq ($(wildcard $(BIN)/python),)
ifneq ($(VENV_MADE_IN),$(CURDIR))
FOREIGN_VENV := yes
.PHONY: venv-made-elsewhere
$(STAMP): venv-made-elsewhere
endif
endif

# The lock is installed by uv (pinned, itself installed by pip from the registry): the same
# exact versions pip would install, without a resolver, in a third of the time. Only the lock:
# `--no-deps`, then `uv pip check` fails naming any dependency the lock lacks (sphinx-togglebutton
# requires setuptools and wheel, which pip freeze leaves out; a resolver then installed their
# newest releases, or took the setuptools the interpreter's venv carried). The
# environment has no pip of its own (`venv --without-pip`, 0.2 s against 4 s): the
# interpreter's pip installs uv into it (`pip --python`, pip 22.3 or later), or, where that
# pip is missing or older, a pip that ensurepip puts in the environment does.
# Bytecode: uv compiles every installed module as it installs it (`--compile-bytecode`, what
# pip does by default; about 10 s of a first make), so no process compiles Sphinx, Jupyter or
# numpy from source: the test processes and kernels run with PYTHONDONTWRITEBYTECODE wherever
# the machine sets it and would otherwise compile them again in each process (a fresh clone's
# book tier took a quarter more CPU time). Python checks such bytecode against its source's
# modification time (in seconds) and size, so a same-size edit within one second of an import
# could run stale code; the book's own packages (harness/, engine/) are compiled here with
# hash-checked bytecode, which Python checks against the source's bytes and writes again in
# that form after an edit. A module added to them later gets the usual form at its first
# import, until the environment is made again.
# harness/ and engine/ are built with the lock's setuptools (`--no-build-isolation`), not with
# the newest release a build environment would fetch (and 1 s faster).
# Two `make` runs started at once take turns here (flock), then the build driver's own lock
# refuses the second build with a message naming the first.
# The lock is universal (markers for 3.11, 3.12 and 3.13) and needs Python 3.11.5 or later (the
# locked soupsieve 4.1.3 requires 3.11.5), up to 3.13, the newest it is checked on; say so
# before anything is installed rather than let the install fail half way.
PYTHON_CHECK = import sys; v = sys.version_info; sys.exit(not ((3, 11, 5) <= v[:3] and v[:2] <= (3, 13)))

$(STAMP): requirements.txt harness/pyproject.toml engine/pyproject.toml
	@$(PYTHON) -c '$(PYTHON_CHECK)' 2>/dev/null || { echo "make: the book needs Python 3.11.5 or \
	    later, up to 3.13 (the locked soupsieve requires 3.11.5; the lock is checked on 3.11, 3.12 \
	    and 3.13); $(PYTHON) is $$($(PYTHON) --version 2>&1 || echo missing). Set \
	    PYTHON=/path/to/python3.X (X = 11, 12 or 13) or install one." >&2; exit 2; }
	@if [ -n "$(FOREIGN_VENV)" ]; then echo "make: .venv was made for $(or $(VENV_MADE_IN),another \
	    directory), not for $(CURDIR) (a copied checkout?); making it again here" >&2; \
	    $(SETUP_LOCK) rm -rf $(VENV); fi
	test -x $(BIN)/python || $(SETUP_LOCK) $(PYTHON) -m venv --without-pip $(VENV)
	$(SETUP_LOCK) $(PYTHON) -m pip --quiet --disable-pip-version-check --python $(BIN)/python \
	    install $(UV) 2> >(grep -v "is ignored: it is neither" >&2) || { \
	    $(SETUP_LOCK) $(BIN)/python -m ensurepip --default-pip >/dev/null && \
	    $(SETUP_LOCK) $(PIP) install $(UV) 2> >(grep -v "is ignored: it is neither" >&2); }
	$(SETUP_LOCK) $(BIN)/uv pip install --quiet --no-deps --compile-bytecode --python $(BIN)/python \
	    -r requirements.txt
	$(BIN)/uv pip check --quiet --python $(BIN)/python
	$(SETUP_LOCK) $(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --no-build-isolation \
	    -e harness -e engine
	$(BIN)/python -m compileall -q --invalidation-mode checked-hash harness/trainable_harness engine/claimbook
	echo '$(CURDIR)' > $(VENV_RECORD)
	touch $@

# The build itself is the driver's: it keys each chapter on its source, the book's modules
# its code reaches, its claims' registry entries and the lock, executes what changed (in
# parallel), renders, and publishes the site whole. Make cannot see those keys, so `all`
# always asks it; an unchanged tree costs the driver under a second. It first compares the
# environment with the lock and refuses a difference; `make ALLOW_ENV_MISMATCH=1` builds
# anyway, and every page then says which environment computed it. The driver, which judges
# every claim, reads and writes bytecode only under _build/bytecode, never a __pycache__
# folder a chapter's kernel could have written (docs/threat-model.md).
DRIVER = PYTHONDONTWRITEBYTECODE= $(BIN)/python -X pycache_prefix=$(CURDIR)/_build/bytecode \
	-m claimbook build
all: $(MATHJAX) | $(STAMP)
	@$(DRIVER) $(if $(ALLOW_ENV_MISMATCH),--allow-environment-mismatch)

$(MATHJAX): package.json package-lock.json
	$(SETUP_LOCK) bash -c 'npm ci --no-audit --no-fund --silent && \
	    rm -rf _build/site-extra/_vendor/mathjax && mkdir -p _build/site-extra/_vendor && \
	    cp -r node_modules/mathjax/es5 _build/site-extra/_vendor/mathjax && \
	    rm -f $(addprefix _build/site-extra/_vendor/mathjax/,$(MATHJAX_UNUSED)) && touch $@'

site: all

# MathJax alone (the CI render job, which renders from downloaded chapter outputs).
mathjax: $(MATHJAX)

# The workflows too: actionlint (syntax, expressions, action inputs) and zizmor's offline
# audits (pins, permissions, credentials, template injection; policy in .github/zizmor.yml).
lint: | $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/actionlint .github/workflows/*.yml
	$(BIN)/zizmor --offline --no-progress --config .github/zizmor.yml .github/workflows/

# The test tiers (markers in pyproject.toml), each timed, wall and CPU (the CPU of the
# processes a step waited for, so not the site tier's Chromium, which Playwright's driver
# ends, nor mutate's perturbations; a CPU time that grows for the same work is the machine's drift, not the code's):
# `unit` (no kernel, no Sphinx; the
# tier to run before every commit), `book` (fixture-book builds: driver, kernels, Sphinx),
# `site` (the built site, in a browser). Each runs on every core (pytest-xdist; an idle
# worker takes tests queued for a busy one, so a few long tests do not end the tier alone).
# claims, book and site collect only their folders (tests/conftest.py's TIER_FOLDERS, which
# refuses a test of theirs elsewhere).
TIER = TIMEFORMAT="make: $(1) tier took %1R s (CPU %1U s user, %1S s system)"; time

unit: | $(STAMP)
	@$(call TIER,unit) $(BIN)/pytest -m unit -n auto --dist worksteal -q

book-check: | $(STAMP)
	@$(call TIER,book) $(BIN)/pytest -m book -n auto --dist worksteal -q tests/engine/pipeline tests/engine/extensions tests/checks

# Whole claims recomputed as they are, and the checks beside them (summation order, dead
# runs); the mistakes each claim catches are `mutate`'s: seconds to tens of seconds each.
# `make test` runs the checks beside them only (CLAIMS_TESTS): its rebuild computes every
# claim and fails on one that does not verify or refute as registered, and the site tier
# checks the records it published (seeds, intervals); computing six of them again here was
# a tenth of its CPU time.
CLAIMS_TESTS = claims
claims-check: | $(STAMP)
	@$(call TIER,claims) $(BIN)/pytest -m "$(CLAIMS_TESTS)" -n auto --dist worksteal -q tests/harness/witnesses

# Every claim under each mistake it names (its registry's catches), each perturbation of the
# harness alone in a process of its own (forked from a server that imported the harness), one
# per core; writes the committed record claims/mistakes/record.json (keyed on the claims' and
# the mistakes' code), which `make` reuses and the claim pages show. Exits 1 naming a claim
# that catches none of its perturbations, or a mistake caught by fewer than two fields that
# measure the claim's subject. Its CPU time leaves out those processes (the server's
# children, which the shell does not wait for).
mutate: | $(STAMP)
	@TIMEFORMAT="make: mutate took %1R s (CPU %1U s user, %1S s system)"; time $(BIN)/python -m checks mutate

# The same run as a check, beside the rebuild from clean: it writes nothing and fails when
# the committed record (claims/mistakes/record.json) disagrees with what it computed, or a
# mistake is caught by fewer than two fields that measure the claim's subject.
mutate-check: | $(STAMP)
	@TIMEFORMAT="make: mutate-check took %1R s (CPU %1U s user, %1S s system)"; \
	    time $(BIN)/python -m checks mutate --check

# The science package against PyTorch (tests/pytorch), float64, to rounding: in an environment
# of its own, made by the interpreter's pip (tests/pytorch/requirements.txt, the lock as
# constraints); PyTorch is never a dependency of the book. It lives inside .venv, which no
# build reads, hashes or renders.
PYTORCH_VENV := $(VENV)/pytorch
$(PYTORCH_VENV)/.made: tests/pytorch/requirements.txt requirements.txt
	rm -rf $(PYTORCH_VENV)
	$(PYTHON) -m venv $(PYTORCH_VENV)
	$(PYTORCH_VENV)/bin/pip install --quiet --disable-pip-version-check \
	    -r tests/pytorch/requirements.txt -c requirements.txt \
	    2> >(grep -v "is ignored: it is neither" >&2)
	touch $@

pytorch-check: $(PYTORCH_VENV)/.made
	@$(call TIER,pytorch) env PYTHONPATH=harness $(PYTORCH_VENV)/bin/python -m pytest \
	    -c tests/pytorch/pytest.ini -q tests/pytorch

# The built-site checks, including a real browser: Debian's chromium, installed here if absent.
browser:
	@command -v chromium >/dev/null || { \
	    if [ "$$(id -u)" != 0 ]; then echo "make: the browser check needs Debian's chromium; \
	        install it as root: apt-get install --no-install-recommends chromium \
	        fonts-dejavu-core (CI runs as root and installs it itself)" >&2; exit 2; fi; \
	    echo "installing Debian's chromium for the browser check"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	        --no-install-recommends chromium fonts-dejavu-core >/dev/null; }

# SITE_TESTS: `make test` leaves the printed book (one printing, a minute of CPU) to pdf-check,
# and the checks that run a chapter's code again in the test process (chapter 16's is most of a
# minute of CPU) to chapter-code-check.
SITE_TESTS = site
site-check: browser
	@$(call TIER,site) $(BIN)/pytest -m "$(SITE_TESTS)" -n auto --dist worksteal -q tests/site tests/chapters

pdf-check: browser
	@$(call TIER,pdf) $(BIN)/pytest -m site -q tests/site/test_book_pdf.py

chapter-code-check: | $(STAMP)
	@$(call TIER,chapter-code) $(BIN)/pytest -m "site and chapter_code" -n auto --dist worksteal \
	    -q tests/chapters

# Every page's screenshots at every width, whole chapters included, in _build/screenshots/
# (for people; the site tier captures only a page with a failure, where it failed).
screenshots: browser
	SITE_SCREENSHOTS=1 $(BIN)/pytest -m site -q tests/site -k every_page_at_every_width

rebuild: clean
	$(MAKE) all

# The kernels' read-only sandbox (claimbook.pipeline.sandbox) needs Debian's bubblewrap; a
# build without it says so in one line. `make test` installs it when run as root, as CI does,
# so the tests check the sandbox and the rebuild runs in it.
sandbox:
	@command -v bwrap >/dev/null || { \
	    if [ "$$(id -u)" != 0 ]; then echo "make: chapter kernels run without their read-only \
	        sandbox; install it as root: apt-get install --no-install-recommends bubblewrap" >&2; \
	        exit 0; fi; \
	    echo "installing Debian's bubblewrap for the kernels' read-only sandbox"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	        --no-install-recommends bubblewrap >/dev/null; }

# make test, the check of every change: lint and the unit tier first (fast, and they catch
# most mistakes); then the book and claims tiers beside the rebuild from clean, and the site
# tier as soon as the rebuild has published; last, an unchanged tree with nothing left to do.
# The rebuild computes every claim, so the claims tier leaves out the whole_claim tests.
test: sandbox lint unit
	@$(MAKE) --no-print-directory -j3 --output-sync=target book-check claims-check \
	    built-site-check CLAIMS_TESTS="claims and not whole_claim" SITE_TESTS="site and not pdf and not chapter_code"
	@$(MAKE) --no-print-directory uptodate || { echo "make test: an unchanged tree would rebuild" >&2; exit 1; }

built-site-check: rebuild
	@$(MAKE) --no-print-directory site-check

# The checks too slow for make test, on the tree it built (CI runs both, .ci/run): every
# claim under each mistake it names, against the committed record; what Binder does, whose
# notebooks compute every claim again in a fresh environment and must write the rebuild's
# artifacts byte for byte; the science against PyTorch; the printed book; the chapters' code run
# again to measure their phone figures.
slow-checks: sandbox
	@$(MAKE) --no-print-directory -j2 --output-sync=target mutate-check binder-check \
	    pytorch-check pdf-check chapter-code-check BINDER_CHECK_FLAGS=--against=artifacts/claims

check-artifacts: | $(STAMP)
	@TIMEFORMAT="make: artifacts recomputed and compared in %1R s"; time \
	    $(BIN)/python -m claimbook claims verify --check-artifacts > _build/check-artifacts.log \
	    || { cat _build/check-artifacts.log; exit 1; }

verify: | $(STAMP)
	$(BIN)/python -m claimbook claims verify

repin: | $(STAMP)
	$(BIN)/python -m claimbook repin

# Exit 0 only if `make` would do nothing and the last build was clean.
uptodate: | $(STAMP)
	@$(BIN)/python -m claimbook build --question

# Timings of a cold build against Jupyter Book's own execution (not part of `make test`).
bench: all
	$(BIN)/python -m bench

# Generated books of 20, 50 and 100 chapters, each timed as `make bench` times this one; the
# growth table in _build/bench.json and its plot in _build/bench.svg (22 minutes on two cores
# on 2 December 2026, most of it the 100-chapter book).
GROWTH ?= 20,50,100
bench-growth: venv
	$(BIN)/python -m bench --growth $(GROWTH) --rounds 1 \
	    --generator tests/books/generate_scale_book.py

# The workflow's jobs (.github/workflows/book.yml), each in a fresh clone of HEAD, and the
# site they assemble compared byte for byte with a one-machine build (checks/matrix.py; not
# part of `make test`).
matrix-check: $(MATHJAX) | $(STAMP)
	$(BIN)/python -m checks matrix

# After a failed build the site kept in _build/html is served too: every page carries the
# banner saying when it was built and why the latest build failed (claimbook.pipeline.failed_build).
serve: $(MATHJAX) | $(STAMP)
	@$(DRIVER) || \
	    echo "make serve: the build failed; serving the site it kept, marked as such on every page"
	@test -f _build/html/index.html || { echo "make serve: no site in _build/html"; exit 1; }
	$(BIN)/python -m http.server --directory _build/html --bind 127.0.0.1 8000

# Binder's reader environment (binder/requirements.txt) is resolved from binder/requirements.in
# for Binder's Python (binder/runtime.txt) with the lock as constraints: the lock's versions.
# One universal lock for every Python the book supports (3.11.5 to 3.13): uv resolves
# requirements.in for all of them at once and writes markers where they differ (papermill's
# aiohttp on 3.12), keeping the lock's present pins where they still fit (an output file's pins
# are uv's preferences). It lists setuptools and wheel, which a locked package requires, and
# not uv or pip; the lock's leading comment lines are kept.
lock: | $(STAMP)
	cp requirements.txt requirements.lock.tmp
	$(BIN)/uv pip compile --quiet --universal --python-version 3.11.5 --no-header --no-annotate \
	    requirements.in -o requirements.lock.tmp
	{ sed '/^[^#]/,$$d' requirements.txt; cat requirements.lock.tmp; } > requirements.lock.new
	rm requirements.lock.tmp
	mv requirements.lock.new requirements.txt
	$(BIN)/uv pip compile --quiet --python-version 3.11 --no-header --no-annotate \
	    --constraint requirements.txt binder/requirements.in -o binder/requirements.txt

# Build products only; sources, the environment and node_modules stay. The engine removes
# them while holding the build lock, so a clean during a build is refused (claimbook.pipeline.clean);
# without an environment no build can be running, and plain rm does the same.
# Everything under artifacts/ but its README and .gitignore goes, links included (a link is
# removed, never followed).
clean:
	@if [ -x $(BIN)/python ] && [ -z "$(FOREIGN_VENV)" ]; then $(BIN)/python -m claimbook clean; else \
	    rm -rf _build $(EXECUTED); \
	    find artifacts -mindepth 1 -maxdepth 1 ! -name .gitignore ! -name README.md -exec rm -rf {} +; fi

# The book as one PDF, printed from the built site by headless Chromium (book_pdf, a tool beside the engine) to
# _build/pdf/book.pdf; then the site is rendered again, every page now linking the PDF, which
# the site carries at its root (claimbook.pdf_link: only while it is the print of this site).
# `make` does not print it: two printings of 130 pages take about as long as a cold build.
.PHONY: pdf binder-check
pdf: all browser
	@TIMEFORMAT="make: the PDF printed in %1R s"; time $(BIN)/python -m book_pdf
	@$(DRIVER)

# What Binder does (exactly binder/: runtime.txt, requirements.txt, postBuild, which runs each
# chapter and writes its reader notebook, checked to read as the site; every claim's artifact
# the chapters wrote judged verified or refuted), in a fresh environment in a temporary
# directory (checks/binder.py). BINDER_CHECK_FLAGS: `--pip` installs with pip, as
# repo2docker does (slower; uv installs the same pinned lock); `--against DIR` also requires
# every artifact to equal DIR's in all it computed (make slow-checks: the rebuild's).
binder-check: | $(STAMP)
	@TIMEFORMAT="make: binder check took %1R s (CPU %1U s user, %1S s system)"; time \
	    $(BIN)/python -m checks binder $(BINDER_CHECK_FLAGS)
