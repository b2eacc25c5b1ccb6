# Trainable: build the book from its sources.  `make` builds; `make test` checks everything.
SHELL := bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := all

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: all venv test lint

all: venv

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: venv lint
	$(BIN)/pytest
