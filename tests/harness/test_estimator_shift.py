"""Tests of the discrepancy split of chapter 15, exercise 4 (trainable_harness.estimator_shift)."""

import numpy as np
import pytest

from trainable_harness.errors import (
    EstimatorSettingError,
    ResultOverflowError,
    SeedError,
    TrainableError,
)
from trainable_harness.estimator_shift import (
    discrepancy,
    mean_square_discrepancy,
    shift_part,
)


def test_a_large_shift_dominates_the_discrepancy():
    # A shift of 20 standard deviations: the control part (~0.2) is negligible beside 10.
    total = mean_square_discrepancy(0, 8, 32, 40.0) ** 0.5
    assert abs(total / shift_part(40.0) - 1) < 0.05


def test_reproducible_and_seeded():
    a = mean_square_discrepancy(3, 2, 8, 0.0)
    assert a == mean_square_discrepancy(3, 2, 8, 0.0)
    assert a != mean_square_discrepancy(4, 2, 8, 0.0)


def test_discrepancy_against_a_naive_loop():
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    got = discrepancy(rng_a, 3, 5, 0.5)
    training = rng_b.normal(4.0, 2.0, size=(3, 5))
    evaluation = rng_b.normal(4.5, 2.0, size=5)
    values = [v for row in training for v in row]
    m = sum(values) / len(values)
    var = sum((v - m) ** 2 for v in values) / len(values)
    me = sum(evaluation) / 5
    ve = sum((v - me) ** 2 for v in evaluation) / 5
    diffs = [(x - m) / (var + 1e-5) ** 0.5 - (x - me) / (ve + 1e-5) ** 0.5 for x in evaluation]
    assert got == pytest.approx((sum(d * d for d in diffs) / 5) ** 0.5, rel=1e-12)


@pytest.mark.parametrize("count, size", [(0, 8), (2, 1), (1.5, 8)])
def test_bad_counts_raise(count, size):
    with pytest.raises(TrainableError):
        discrepancy(np.random.default_rng(0), count, size, 0.0)


def test_a_shift_whose_squares_overflow_is_measured_not_returned_as_inf():
    # The discrepancy is about shift / std = 5e299; its square overflowed to inf.
    value = discrepancy(np.random.default_rng(0), 4, 8, 1e300)
    assert np.isfinite(value) and value == pytest.approx(0.5e300, rel=0.3)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: discrepancy(np.random.default_rng(0), 4, 8, float("nan")), "shift must be"),
        (lambda: discrepancy(np.random.default_rng(0), float("nan"), 8, 0.0), "batch_count"),
        (lambda: mean_square_discrepancy(0, 4, "8", 0.0), "batch_size must be an integer"),
        (lambda: shift_part(float("inf")), "shift must be a finite real number"),
    ],
)
def test_bad_settings_are_named(call, message):
    with pytest.raises(EstimatorSettingError, match=message):
        call()


def test_a_mean_square_beyond_range_and_a_negative_seed_are_named():
    # (5e299)**2 raised Python's OverflowError.
    with pytest.raises(ResultOverflowError, match=r"squared discrepancy.*shift = 1e\+300"):
        mean_square_discrepancy(0, 2, 4, 1e300, repeats=2)
    with pytest.raises(SeedError, match="got -1"):
        mean_square_discrepancy(-1, 2, 4, 0.0)
