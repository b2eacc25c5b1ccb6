"""Tests of the package trainable_harness.mlp: one public surface over its modules."""

from __future__ import annotations

import importlib

import pytest

from trainable_harness import mlp

MODULES = ("task", "layers", "network", "sweeps", "probes")
# Read as ``mlp.<name>`` by the chapters and tests, though outside ``__all__``.
CONSTANTS_AND_TYPES = (
    "INPUTS",
    "WIDTH",
    "CLASSES",
    "BN_EPS",
    "DIVERGED_LOSS",
    "LEARNING_RATES",
    "BUDGET",
    "TASK_SIZE",
    "PROBE_LR",
    "PROBE_MULTIPLIERS",
    "PROBE_EVERY",
    "BatchNormCache",
    "TrainingRun",
    "LineProbe",
    "Sweep",
)


def test_the_package_exports_exactly_the_public_names_of_its_modules():
    names = [
        name
        for module in MODULES
        for name in importlib.import_module(f"trainable_harness.mlp.{module}").__all__
    ]
    assert len(names) == len(set(names))  # each name has one home
    assert sorted(names) == sorted(mlp.__all__)
    assert importlib.import_module("trainable_harness.mlp.checks").__all__ == []


@pytest.mark.parametrize("module", MODULES)
def test_each_public_name_is_the_same_object_everywhere(module):
    home = importlib.import_module(f"trainable_harness.mlp.{module}")
    for name in home.__all__:
        assert getattr(mlp, name) is getattr(home, name)


@pytest.mark.parametrize("name", CONSTANTS_AND_TYPES)
def test_constants_and_result_types_stay_readable_from_the_package(name):
    homes = [
        importlib.import_module(f"trainable_harness.mlp.{module}")
        for module in MODULES
        if hasattr(importlib.import_module(f"trainable_harness.mlp.{module}"), name)
    ]
    assert homes and all(getattr(home, name) is getattr(mlp, name) for home in homes)
