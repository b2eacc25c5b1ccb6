"""Tests of the package trainable_harness.mlp: one public surface over its modules."""

from __future__ import annotations

import importlib

import pytest
from package_surface import assert_exports_exactly, assert_same_objects

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
    assert_exports_exactly(mlp, MODULES, private=("checks",))


@pytest.mark.parametrize("module", MODULES)
def test_each_public_name_is_the_same_object_everywhere(module):
    assert_same_objects(mlp, module, ())


@pytest.mark.parametrize("name", CONSTANTS_AND_TYPES)
def test_constants_and_result_types_stay_readable_from_the_package(name):
    homes = [
        importlib.import_module(f"trainable_harness.mlp.{module}")
        for module in MODULES
        if hasattr(importlib.import_module(f"trainable_harness.mlp.{module}"), name)
    ]
    assert homes and all(getattr(home, name) is getattr(mlp, name) for home in homes)
