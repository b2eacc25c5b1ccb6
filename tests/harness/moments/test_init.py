"""Tests of the package trainable_harness.moments: one public surface over its modules."""

from __future__ import annotations

import importlib

import pytest

import trainable_harness
from trainable_harness import moments

MODULES = ("state", "welford", "merge", "streaming", "cancellation")


def test_the_package_exports_exactly_the_public_names_of_its_modules():
    names = [
        name
        for module in MODULES
        for name in importlib.import_module(f"trainable_harness.moments.{module}").__all__
    ]
    assert len(names) == len(set(names))  # each name has one home
    assert sorted(names) == sorted(moments.__all__)
    for private in ("checks", "chan"):
        assert importlib.import_module(f"trainable_harness.moments.{private}").__all__ == []


@pytest.mark.parametrize("module", MODULES)
def test_each_public_name_is_the_same_object_everywhere(module):
    home = importlib.import_module(f"trainable_harness.moments.{module}")
    for name in home.__all__:
        assert getattr(moments, name) is getattr(home, name)
        assert getattr(trainable_harness, name) is getattr(home, name)
