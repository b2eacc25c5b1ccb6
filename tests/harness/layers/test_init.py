"""Tests of the package trainable_harness.layers: one public surface over its modules."""

from __future__ import annotations

import importlib

import pytest

import trainable_harness
from trainable_harness import layers

MODULES = ("reduction_sets", "normalize", "running_state", "train_eval", "linear_conv", "folding")


def test_the_package_exports_exactly_the_public_names_of_its_modules():
    names = [
        name
        for module in MODULES
        for name in importlib.import_module(f"trainable_harness.layers.{module}").__all__
    ]
    assert len(names) == len(set(names))  # each name has one home
    assert sorted(names) == sorted(layers.__all__)


@pytest.mark.parametrize("module", MODULES)
def test_each_public_name_is_the_same_object_everywhere(module):
    home = importlib.import_module(f"trainable_harness.layers.{module}")
    for name in home.__all__:
        assert getattr(layers, name) is getattr(home, name)
        assert getattr(trainable_harness, name) is getattr(home, name)
