"""Tests of trainable_harness.digits.data: the loader, the split and its seed."""

import subprocess
import sys

import numpy as np
import pytest

from claimbook.claims import claim_seed
from trainable_harness.digits.data import load_digit_images, split_seed, stratified_split
from trainable_harness.errors import DigitsError

LABELS = np.repeat(np.arange(10), 30)


def test_the_loader_returns_the_digits_read_only_in_the_unit_interval():
    images, labels = load_digit_images()
    assert images.shape == (1797, 8, 8) and images.dtype == np.float64
    assert labels.shape == (1797,) and set(labels.tolist()) == set(range(10))
    assert images.min() == 0.0 and images.max() == 1.0
    with pytest.raises(ValueError):
        images[0, 0, 0] = 1.0


def test_importing_the_package_does_not_import_scikit_learn():
    script = "import sys, trainable_harness.digits; print('sklearn' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_the_split_is_stratified_disjoint_and_reproducible():
    train, test = stratified_split(LABELS, 2 / 3, seed=5)
    assert np.intersect1d(train, test).size == 0 and train.size + test.size == LABELS.size
    assert (np.bincount(LABELS[test]) == 20).all()
    again = stratified_split(LABELS, 2 / 3, seed=5)
    assert all(np.array_equal(a, b) for a, b in zip((train, test), again, strict=True))
    other = stratified_split(LABELS, 2 / 3, seed=6)
    assert not np.array_equal(test, other[1])


@pytest.mark.parametrize(
    ("labels", "fraction", "word"),
    [
        (LABELS.astype(float), 0.5, "labels"),
        (LABELS, 1.0, "test_fraction"),
        (LABELS, True, "test_fraction"),
        (LABELS, 0.001, "class 0"),
    ],
)
def test_the_split_refuses_bad_input(labels, fraction, word):
    with pytest.raises(DigitsError, match=word):
        stratified_split(labels, fraction, seed=0)


def test_the_split_seed_is_the_registry_seed_of_the_name():
    assert split_seed("c16-digits-batch-size") == claim_seed("c16-digits-batch-size")
    with pytest.raises(DigitsError, match="name"):
        split_seed("")
