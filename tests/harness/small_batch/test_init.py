"""Tests of the package trainable_harness.small_batch: one public surface over its modules."""

from __future__ import annotations

import importlib

import pytest

from trainable_harness import errors, small_batch

MODULES = ("model", "train_eval", "fixes", "groups", "sweep")
# Read as ``small_batch.<name>`` by the chapters and tests, though outside ``__all__``.
OUTSIDE_ALL = {
    "model": ("CHANNEL_MEANS", "EPS"),
    "sweep": ("SAMPLES_PER_SIZE", "GHOST_SIZE", "SYNC_PER_DEVICE", "RENORM_LIMITS"),
}


def test_the_package_exports_exactly_the_public_names_of_its_modules():
    names = [
        name
        for module in MODULES
        for name in importlib.import_module(f"trainable_harness.small_batch.{module}").__all__
    ]
    assert len(names) == len(set(names))  # each name has one home
    assert sorted(names) == sorted(small_batch.__all__)
    assert importlib.import_module("trainable_harness.small_batch.checks").__all__ == []


@pytest.mark.parametrize("module", MODULES)
def test_each_name_is_the_same_object_everywhere(module):
    home = importlib.import_module(f"trainable_harness.small_batch.{module}")
    for name in (*home.__all__, *OUTSIDE_ALL.get(module, ())):
        assert getattr(small_batch, name) is getattr(home, name)


def test_the_error_of_the_experiment_is_still_read_from_the_package():
    assert small_batch.SmallBatchError is errors.SmallBatchError
