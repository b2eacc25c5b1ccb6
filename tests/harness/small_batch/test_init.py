"""Tests of the package trainable_harness.small_batch: one public surface over its modules."""

from __future__ import annotations

import pytest
from package_surface import assert_exports_exactly, assert_same_objects

from trainable_harness import errors, small_batch

MODULES = ("model", "train_eval", "fixes", "groups", "sweep")
# Read as ``small_batch.<name>`` by the chapters and tests, though outside ``__all__``.
OUTSIDE_ALL = {
    "model": ("CHANNEL_MEANS", "EPS"),
    "sweep": ("SAMPLES_PER_SIZE", "GHOST_SIZE", "SYNC_PER_DEVICE", "RENORM_LIMITS"),
}


def test_the_package_exports_exactly_the_public_names_of_its_modules():
    assert_exports_exactly(small_batch, MODULES, private=("checks",))


@pytest.mark.parametrize("module", MODULES)
def test_each_name_is_the_same_object_everywhere(module):
    assert_same_objects(small_batch, module, OUTSIDE_ALL.get(module, ()))


def test_the_error_of_the_experiment_is_still_read_from_the_package():
    assert small_batch.SmallBatchError is errors.SmallBatchError
