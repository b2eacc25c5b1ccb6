"""Tests of trainable_harness.layers.standardize: the one standardization, its contract."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from trainable_harness.errors import (
    DegenerateNormalizationError,
    EmptyInputError,
    InvalidMomentStateError,
    NegativeEpsilonError,
    NonFiniteInputError,
    ShapeError,
    UnsupportedDtypeError,
)
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


# --- bad input: every public entry point checks its own arguments -------------------------


@given(
    X=hnp.arrays(np.int64, (3, 4), elements=st.integers(-1000, 1000)),
    eps=st.sampled_from([0.5, 1e-5]),
)
def test_integer_input_is_standardized_as_its_float64_conversion(X, eps):
    # Before: eps was rounded to an integer in X's dtype (dropped), and a constant column
    # gave 0/0 = NaN.
    expected = standardize(X.astype(np.float64), (0,), eps=eps)
    np.testing.assert_array_equal(standardize(X, (0,), eps=eps), expected)


@given(X=hnp.arrays(np.float64, (3, 4), elements=st.floats(-1e3, 1e3)))
def test_a_negative_axis_is_the_same_axis_counted_from_the_end(X):
    # Before: axes=(-1,) shifted every value by itself, so every output was 0.
    np.testing.assert_array_equal(standardize(X, (-1,), eps=1e-5), standardize(X, (1,), eps=1e-5))


@pytest.mark.parametrize(
    ("X", "axes", "eps", "error", "named"),
    [
        (np.ones((2, 3)), (0,), -1.0, NegativeEpsilonError, "eps"),
        (np.ones((2, 3)), (0,), np.inf, NonFiniteInputError, "eps"),
        (np.ones((2, 3)), (0,), True, UnsupportedDtypeError, "eps"),
        (np.array([[1.0, np.nan], [2.0, 3.0]]), (0,), 1e-5, NonFiniteInputError, "X"),
        (np.ones((2, 3), dtype=bool), (0,), 1e-5, UnsupportedDtypeError, "X"),
        (np.ones((2, 3), dtype=complex), (0,), 1e-5, UnsupportedDtypeError, "X"),
        ([[1.0, 2.0], [3.0, None]], (0,), 1e-5, UnsupportedDtypeError, "X"),
        (np.ones((2, 3)), (2,), 1e-5, ShapeError, "axes"),
        (np.ones((2, 3)), (1, -1), 1e-5, ShapeError, "axes"),
        (np.ones((2, 3)), None, 1e-5, ShapeError, "axes"),
        (np.ones((2, 0)), (1,), 1e-5, EmptyInputError, "axis 1"),
    ],
)
def test_bad_input_to_standardize_is_refused_naming_it(X, axes, eps, error, named):
    with pytest.raises(error, match=named):
        standardize(X, axes, eps=eps)
    with pytest.raises(error, match=named):
        standardized_moments(X, axes, eps=eps)


@pytest.mark.parametrize(
    ("arguments", "error", "named"),
    [
        ({"variance": np.array([1.0, -0.5])}, InvalidMomentStateError, "variance"),
        ({"variance": np.array([1.0, np.nan])}, NonFiniteInputError, "variance"),
        ({"mean": np.array([np.inf, 0.0])}, NonFiniteInputError, "mean"),
        ({"X": np.array([[0.0, np.nan]])}, NonFiniteInputError, "X"),
        ({"X": np.array([[True, False]])}, UnsupportedDtypeError, "X"),
        ({"mean": np.array([1j, 0.0])}, UnsupportedDtypeError, "mean"),
        ({"variance": "1.0"}, UnsupportedDtypeError, "variance"),
        ({"mean": np.zeros(3)}, ShapeError, r"mean \(3,\)"),
        ({"eps": -1e-5}, NegativeEpsilonError, "eps"),
        ({"eps": float("nan")}, NonFiniteInputError, "eps"),
    ],
)
def test_bad_input_to_standardize_with_is_refused_naming_it(arguments, error, named):
    # Before: NaN or a broadcasting ValueError from deep inside, or a silent NaN output.
    given = {"X": np.ones((4, 2)), "mean": np.zeros(2), "variance": np.ones(2), "eps": 1e-5}
    given.update(arguments)
    eps = given.pop("eps")
    with pytest.raises(error, match=named):
        standardize_with(given["X"], given["mean"], given["variance"], eps=eps)


def test_checks_leave_a_python_float_mean_weak():
    # The checks do not convert the statistics: float32 X with Python-float statistics
    # stays float32, as numpy's promotion rules give it.
    X = np.array([1.0, 3.0], np.float32)
    assert standardize_with(X, 2.0, np.float32(1.0), eps=0.0).dtype == np.float32
