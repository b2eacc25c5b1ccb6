"""Tests of trainable_harness.layers.standardize: the one standardization, its contract."""

from __future__ import annotations

import numpy as np
import pytest

from trainable_harness.errors import DegenerateNormalizationError
from trainable_harness.layers.standardize import (
    standardize,
    standardize_with,
    standardized_moments,
)

RNG = np.random.default_rng(7)


def test_own_statistics_use_the_population_variance_with_eps_inside_the_root():
    X = RNG.normal(3.0, 2.0, size=(5, 4, 3))
    before = X.copy()
    eps = 0.5  # large, so that eps outside the root or a divisor m - 1 would show
    parts = standardized_moments(X, (0, 2), eps=eps)
    mean = X.mean(axis=(0, 2), keepdims=True)
    variance = ((X - mean) ** 2).mean(axis=(0, 2), keepdims=True)  # 1/m, m = 15
    np.testing.assert_allclose(parts.mean, mean, rtol=1e-15)
    np.testing.assert_allclose(parts.variance(), variance, rtol=1e-14)
    np.testing.assert_allclose(parts.root(), np.sqrt(variance + eps), rtol=1e-15)
    expected = (X - mean) / np.sqrt(variance + eps)
    np.testing.assert_allclose(standardize(X, (0, 2), eps=eps), expected, rtol=1e-14)
    np.testing.assert_array_equal(X, before)  # never modified
    assert standardize(X, (0, 2), eps=eps).dtype == np.float64


def test_values_whose_squares_overflow_are_standardized():
    X = np.array([[-1e300, 1e300], [3e300, 5e300]])
    np.testing.assert_array_equal(standardize(X, (1,), eps=0.0), [[-1.0, 1.0], [-1.0, 1.0]])


def test_a_constant_set_at_eps_zero_is_refused_naming_the_computation():
    X = np.array([[1.0, 1.0], [1.0, 2.0]])
    with pytest.raises(DegenerateNormalizationError, match=r"^train_mode with eps = 0.*\(0,\)"):
        standardize(X, (1,), eps=0.0, what="train_mode")
    np.testing.assert_array_equal(standardize(X, (1,), eps=1e-5)[0], [0.0, 0.0])


def test_given_statistics_divide_by_the_root_of_variance_plus_eps():
    X = np.array([0.0, 2.0, 6.0])
    before = X.copy()
    np.testing.assert_array_equal(standardize_with(X, 2.0, 4.0, eps=0.0), [-1.0, 0.0, 2.0])
    np.testing.assert_allclose(standardize_with(X, 2.0, 4.0, eps=5.0), (X - 2.0) / 3.0, rtol=1e-15)
    np.testing.assert_array_equal(X, before)
    # x - mean beyond range is formed from halves; the quotient is in range.
    big = np.finfo(np.float64).max
    assert standardize_with(np.array([0.75 * big]), -0.75 * big, 4.0, eps=0.0)[0] == 0.75 * big
    with pytest.raises(DegenerateNormalizationError, match="population_eval with eps = 0"):
        standardize_with(X, 0.0, np.array([0.0, 1.0, 1.0]), eps=0.0, what="population_eval")
