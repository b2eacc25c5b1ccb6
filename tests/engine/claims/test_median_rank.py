"""The exact rank-based interval of the median: its coverage, against exact binomial sums and
draws, and its invariances."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claimbook.claims.compare import median_rank_coverage, median_rank_interval
from claimbook.errors import IntervalError


def exact_coverage(n: int, k: int) -> Fraction:
    """P(x_(k) <= median <= x_(n-k+1)) for a continuous distribution: the number of draws
    below the median is Bin(n, 1/2), and the interval misses when it is < k or > n - k."""
    pmf = [Fraction(math.comb(n, i), 2**n) for i in range(n + 1)]
    return sum(pmf[i] for i in range(k, n - k + 1))


@pytest.mark.parametrize("n", range(1, 41))
def test_the_coverage_is_the_exact_binomial_sum(n):
    for k in range(1, (n + 1) // 2 + 1):
        assert median_rank_coverage(n, k) == float(exact_coverage(n, k))


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("n", range(2, 41))
def test_the_rank_is_the_largest_whose_coverage_reaches_the_level(n, level):
    ranks = [k for k in range(1, (n + 1) // 2 + 1) if exact_coverage(n, k) >= Fraction(level)]
    values = np.arange(n, dtype=np.float64) * 10.0  # x_(j) = 10 (j - 1)
    if not ranks:
        with pytest.raises(IntervalError, match=r"values: \d+ values cannot give a"):
            median_rank_interval(values, level=level)
        return
    k = max(ranks)
    assert median_rank_interval(values[::-1], level=level) == (10.0 * (k - 1), 10.0 * (n - k))


def test_ten_seeds_at_95_percent_give_the_second_and_ninth_values():
    values = [7.0, 1.0, 9.0, 3.0, 5.0, 2.0, 8.0, 4.0, 6.0, 10.0]
    assert median_rank_interval(values, level=0.95) == (2.0, 9.0)
    assert median_rank_coverage(10, 2) == 1 - 2 * 11 / 1024


def test_drawn_coverage_matches_the_exact_coverage_for_a_continuous_distribution():
    rng = np.random.default_rng(20261201)
    draws = rng.standard_normal((20_000, 10))  # the median is 0
    lows, highs = np.sort(draws, axis=1)[:, 1], np.sort(draws, axis=1)[:, 8]
    covered = np.mean((lows <= 0.0) & (0.0 <= highs))
    expected = median_rank_coverage(10, 2)  # 0.9785
    assert abs(covered - expected) < 4 * math.sqrt(expected * (1 - expected) / 20_000)


def test_with_integer_outcomes_the_interval_covers_the_median_at_least_as_often():
    # Powers of two on a grid: log2 values 0..4 with these probabilities; the median is 2.
    rng = np.random.default_rng(7)
    outcomes = rng.choice(
        [0.0, 1.0, 2.0, 3.0, 4.0], p=[0.1, 0.2, 0.3, 0.25, 0.15], size=(4000, 10)
    )
    covered = np.mean(
        [lo <= 2.0 <= hi for lo, hi in (median_rank_interval(r, level=0.95) for r in outcomes)]
    )
    assert covered >= median_rank_coverage(10, 2) - 4 * math.sqrt(0.98 * 0.02 / 4000)


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
samples = st.lists(finite, min_size=6, max_size=30)


@settings(max_examples=100, deadline=None)  # Hypothesis's default
@given(samples, st.integers(min_value=-1000, max_value=1000), st.randoms(use_true_random=False))
def test_shifting_shifts_the_interval_and_order_does_not_matter(values, shift, random):
    low, high = median_rank_interval(values, level=0.9)
    assert low <= float(np.median(values)) <= high
    shuffled = list(values)
    random.shuffle(shuffled)
    assert median_rank_interval(shuffled, level=0.9) == (low, high)
    # An integer shift of integer values is exact in float64, so the interval moves exactly.
    integers = [float(round(v)) for v in values]
    base = median_rank_interval(integers, level=0.9)
    moved = median_rank_interval([v + shift for v in integers], level=0.9)
    assert moved == (base[0] + shift, base[1] + shift)


@settings(max_examples=100, deadline=None)
@given(samples)
def test_negating_the_values_mirrors_the_interval(values):
    low, high = median_rank_interval(values, level=0.9)
    assert median_rank_interval([-v for v in values], level=0.9) == (-high, -low)


@pytest.mark.parametrize(
    ("values", "level", "match"),
    [
        ([1.0], 0.95, "at least 2 numbers"),
        ([1.0, math.nan, 2.0], 0.95, "NaN or inf"),
        ([1.0, 2.0, 3.0], 1.5, "level must lie in"),
        ([1.0, 2.0, 3.0, 4.0, 5.0], 0.95, "5 values cannot give a 0.95 interval"),
    ],
)
def test_bad_parameters_are_named(values, level, match):
    with pytest.raises(IntervalError, match=match):
        median_rank_interval(values, level=level)


@pytest.mark.parametrize(("n", "k"), [(0, 1), (10, 0), (10, 6), (10, 2.0), (True, 1)])
def test_bad_ranks_are_named(n, k):
    with pytest.raises(IntervalError, match=r"^(n|k) must be an int"):
        median_rank_coverage(n, k)
