"""Tests of trainable_harness.covariate_shift's public helpers on bad input.

The experiment itself is tested with its witness (tests/harness/witnesses/chapter16/
test_activation_drift.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from trainable_harness import covariate_shift as cs
from trainable_harness.errors import (
    EmptyInputError,
    NonFiniteInputError,
    ShapeError,
    UnsupportedDtypeError,
)

SAMPLE = np.random.default_rng(3).normal(size=(5, 3))


@pytest.mark.parametrize(
    ("before", "after", "error", "named"),
    [
        (SAMPLE, SAMPLE[:4], ShapeError, r"before \(5, 3\) and after \(4, 3\)"),
        (SAMPLE, SAMPLE[:, :2], ShapeError, r"after \(5, 2\)"),
        (SAMPLE[0], SAMPLE[1], ShapeError, "must share one shape"),
        (SAMPLE[:0], SAMPLE[:0], EmptyInputError, "no values"),
        (np.where(SAMPLE > 1, np.nan, SAMPLE), SAMPLE, NonFiniteInputError, "before"),
        (SAMPLE, SAMPLE.astype(complex), UnsupportedDtypeError, "after"),
        (SAMPLE > 0, SAMPLE, UnsupportedDtypeError, "before"),
        (None, SAMPLE, UnsupportedDtypeError, "before"),
    ],
)
def test_wasserstein_refuses_samples_that_cannot_be_compared(before, after, error, named):
    # Before: a broadcasting ValueError or AxisError from inside numpy, a NaN distance,
    # or a complex sample's imaginary part silently dropped.
    with pytest.raises(error, match=named):
        cs.per_feature_wasserstein(before, after)


def test_wasserstein_does_not_modify_its_inputs():
    before, after = SAMPLE.copy(), SAMPLE[::-1].copy()
    before.flags.writeable = after.flags.writeable = False
    cs.per_feature_wasserstein(before, after)
    np.testing.assert_array_equal(before, SAMPLE)
