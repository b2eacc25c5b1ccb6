"""Tests of trainable_harness.moments.welford: Welford's update and the checks of its values."""

from fractions import Fraction

import numpy as np
import pytest
from moment_reference import UNIT_ROUNDOFF, exact_moments

from trainable_harness import (
    EmptyInputError,
    MomentOverflowError,
    MomentState,
    NonFiniteInputError,
    ShapeError,
    UnsupportedDtypeError,
    raw_and_centered_variance,
    stable_online_moments,
)


def test_welford_matches_exact_arithmetic_on_ill_conditioned_data():
    # Offset 1e8 with unit spread: condition number kappa = sqrt(sum x^2 / m2) ~ 1e8.
    values = 1e8 + np.random.default_rng(1531).normal(0, 1, size=1000)
    exact_mean, exact_m2 = exact_moments(values)
    n = len(values)
    kappa = float(sum(Fraction(v) ** 2 for v in values) / exact_m2) ** 0.5
    state = stable_online_moments(values)
    m2_error = float(abs(Fraction(float(state.m2)) - exact_m2) / exact_m2)
    mean_error = float(abs(Fraction(float(state.mean)) - exact_mean) / exact_mean)
    # Bounds for the updating algorithm (Chan, Golub and LeVeque 1983): relative error of
    # m2 at most n * kappa * u (~1e-5 here; measured ~1e-10), of the mean at most n * u.
    assert m2_error <= n * kappa * UNIT_ROUNDOFF
    assert mean_error <= n * UNIT_ROUNDOFF
    # The bound discriminates: the raw-moment formula on the same data breaks it.
    raw_m2 = n * (np.mean(values**2) - np.mean(values) ** 2)
    assert float(abs(Fraction(float(raw_m2)) - exact_m2) / exact_m2) > n * kappa * UNIT_ROUNDOFF


def test_welford_accumulates_in_the_requested_dtype():
    state = stable_online_moments(np.arange(5), dtype=np.float32)
    assert type(state.mean) is np.float32 and type(state.m2) is np.float32
    assert (state.count, float(state.mean), float(state.m2)) == (5, 2.0, 10.0)


@pytest.mark.parametrize("function", [stable_online_moments, raw_and_centered_variance])
def test_empty_values_are_refused(function):
    with pytest.raises(EmptyInputError, match="empty"):
        function([])


@pytest.mark.parametrize("function", [stable_online_moments, raw_and_centered_variance])
def test_non_finite_values_name_their_index(function):
    with pytest.raises(NonFiniteInputError, match=r"index \(2,\)"):
        function([1.0, 2.0, np.inf])


@pytest.mark.parametrize("function", [stable_online_moments, raw_and_centered_variance])
def test_batched_values_are_refused_with_both_shapes(function):
    with pytest.raises(ShapeError, match=r"shape \(8, 32\).*\(n,\).*ravel"):
        function(np.zeros((8, 32)))


def test_overflow_on_conversion_to_the_accumulation_dtype_is_reported():
    with pytest.raises(NonFiniteInputError, match="converted to float32"):
        stable_online_moments([1.0, 1e300], dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.int64, np.complex128])
def test_non_floating_accumulation_dtype_is_refused(dtype):
    with pytest.raises(UnsupportedDtypeError, match="not a real floating type"):
        stable_online_moments([1.0, 2.0], dtype=dtype)


def test_bool_values_are_refused():
    with pytest.raises(UnsupportedDtypeError, match="bool"):
        stable_online_moments(np.array([True, False]))


def test_welford_overflow_is_reported_with_the_exact_m2():
    # m2 = 80000 exceeds float16's 65504; the message says so instead of "holds inf".
    with pytest.raises(MomentOverflowError, match=r"float16 overflowed.*exact m2.*about 8e\+04"):
        stable_online_moments(np.array([200.0, -200.0, 0.0]), dtype=np.float16)
    with pytest.raises(MomentOverflowError, match="beyond the largest float64"):
        stable_online_moments([1e308, -1e308])


def test_python_integers_beyond_float64_are_named_not_overflow_errors():
    with pytest.raises(NonFiniteInputError, match=r"mean = 1000.* is beyond float64's range"):
        MomentState(count=3, mean=10**400, m2=0.0)
