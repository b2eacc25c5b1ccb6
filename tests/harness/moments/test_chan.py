"""trainable_harness.moments.chan: Chan's pairwise update against exact arithmetic."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainable_harness.moments.chan import _chan_update, _chan_update_scaled


def _exact(count_a, mean_a, count_b, mean_b):
    """The merged mean and ``delta**2 n_a n_b / n`` in exact rational arithmetic."""
    a, b = Fraction(float(mean_a)), Fraction(float(mean_b))
    count = count_a + count_b
    return a + (b - a) * count_b / count, (b - a) ** 2 * count_a * count_b / count


counts = st.integers(min_value=1, max_value=10**6)
means = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=100, deadline=None)  # Hypothesis's default
@given(counts, means, counts, means)
def test_the_update_is_within_a_few_roundings_of_exact_in_float64(
    count_a, mean_a, count_b, mean_b
):
    count, mean, between = _chan_update(count_a, np.float64(mean_a), count_b, np.float64(mean_b))
    exact_mean, exact_between = _exact(count_a, mean_a, count_b, mean_b)
    assert count == count_a + count_b
    assert type(mean) is np.float64 and type(between) is np.float64
    # mean = fl(a + fl(fl(b - a) fl(n_b / n))): the product is off by at most 3u of
    # |b - a| <= 2S (S the larger |mean|), the sum by u of S: 7uS, below 7 spacings at S.
    scale = max(abs(mean_a), abs(mean_b), float(np.finfo(np.float64).tiny))
    assert abs(Fraction(float(mean)) - exact_mean) <= 7 * Fraction(float(np.spacing(scale)))
    # between: delta (u relative), its square (2u + u), times n_a, times n_b, over n (u
    # each): 6u relative, to first order, while delta**2 is a normal number. Below that its
    # square rounds to a multiple of the smallest subnormal, 2**-1074: an absolute error of
    # at most that, times the count factor n_a n_b / n, on top of the relative 6u.
    error = abs(Fraction(float(between)) - exact_between)
    weight = Fraction(count_a * count_b, count_a + count_b)
    if (Fraction(mean_b) - Fraction(mean_a)) ** 2 >= Fraction(float(np.finfo(np.float64).tiny)):
        assert error <= 7 * Fraction(2) ** -53 * exact_between
    else:
        assert error <= 7 * Fraction(2) ** -53 * exact_between + 2 * weight * Fraction(2) ** -1074


def test_a_float16_update_that_overflows_as_written_is_redone_scaled():
    # delta * n_b = 600 * 1000 is beyond float16's 65504, the merged mean is not.
    count, mean, between = _chan_update(1000, np.float16(-300.0), 1000, np.float16(300.0))
    assert count == 2000 and mean.dtype == np.float16
    assert np.isfinite(mean) and float(mean) == 0.0
    # between = 600**2 * 1000 * 1000 / 2000 = 1.8e8: beyond float16, so inf, and only so.
    assert np.isinf(between)
    # delta**2 n_a n_b = 4e6 is beyond float16, delta**2 n_a n_b / n = 20000 is not.
    count, mean, between = _chan_update(100, np.float16(-10.0), 100, np.float16(10.0))
    assert float(mean) == 0.0 and np.isfinite(between)
    exact_between = _exact(100, -10.0, 100, 10.0)[1]
    assert exact_between == 20000
    # As in float64 above: 6 relative roundings of float16 (u = 2**-11) to first order.
    assert abs(Fraction(float(between)) - exact_between) / exact_between <= 7 * Fraction(2) ** -11


def test_float64_means_near_the_largest_value_merge_without_overflow():
    big = np.finfo(np.float64).max / 2
    _, mean, between = _chan_update(1, np.float64(-big), 1, np.float64(big))
    assert mean == 0.0  # exact: the midpoint of -big and big
    assert np.isinf(between)  # (2 big)**2 / 2 is beyond range: inf is its true value
    _, mean, _ = _chan_update(2, np.float64(big), 2, np.float64(big / 2))
    assert mean == pytest.approx(0.75 * big, rel=4 * 2**-53)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_the_scaled_update_stays_between_the_two_means(dtype):
    low, high = dtype(-3.5), dtype(7.25)
    for count_a, count_b in [(1, 1), (1, 10**4), (10**4, 1), (7, 3)]:
        mean, between = _chan_update_scaled(count_a, low, count_b, high)
        assert type(mean) is dtype and type(between) is dtype
        assert low <= mean <= high
        exact_mean, exact_between = _exact(count_a, low, count_b, high)
        # The bounds of the float64 property above, with the dtype's u = eps / 2: the
        # scaling by a power of two is exact.
        u = Fraction(float(np.finfo(dtype).eps)) / 2
        assert abs(Fraction(float(mean)) - exact_mean) <= 7 * u * Fraction(7.25)
        assert abs(Fraction(float(between)) - exact_between) <= 7 * u * exact_between


def test_equal_means_merge_to_that_mean_with_no_between_term():
    for dtype in (np.float16, np.float32, np.float64):
        count, mean, between = _chan_update(5, dtype(2.5), 9, dtype(2.5))
        assert (count, mean, between) == (14, dtype(2.5), dtype(0.0))
        assert _chan_update_scaled(5, dtype(0.0), 9, dtype(0.0)) == (dtype(0.0), dtype(0.0))
