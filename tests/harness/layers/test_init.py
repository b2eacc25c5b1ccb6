"""Tests of the package trainable_harness.layers: one public surface over its modules."""

from __future__ import annotations

import pytest
from package_surface import assert_exports_exactly, assert_same_objects

import trainable_harness
from trainable_harness import layers

MODULES = (
    "reduction_sets",
    "standardize",
    "normalize",
    "running_state",
    "train_eval",
    "linear_conv",
    "folding",
)


def test_the_package_exports_exactly_the_public_names_of_its_modules():
    assert_exports_exactly(layers, MODULES, private=())


@pytest.mark.parametrize("module", MODULES)
def test_each_public_name_is_the_same_object_everywhere(module):
    assert_same_objects(layers, module, (), trainable_harness)
