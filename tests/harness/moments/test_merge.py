"""Tests of trainable_harness.moments.merge: the pairwise merge and the running-state figures."""

from functools import reduce

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from moment_reference import PROPERTY_SETTINGS, UNIT_ROUNDOFF, exact_moments

from trainable_harness import (
    DtypeMismatchError,
    MomentOverflowError,
    MomentState,
    merge_moments,
    stable_online_moments,
)


def test_merged_batches_equal_the_direct_pass_on_the_seed_data(running_state_data):
    training_batches, _ = running_state_data
    running = reduce(merge_moments, [stable_online_moments(b) for b in training_batches])
    direct = stable_online_moments(training_batches.ravel())
    assert running.count == direct.count == 256
    assert running.m2 == direct.m2  # bit-equal, as the seed asserts
    assert abs(running.mean - direct.mean) <= 3e-15


@pytest.mark.parametrize("split", [1, 7, 50, 99])
def test_merge_matches_the_direct_pass_at_any_split(split):
    values = 3.0 + np.random.default_rng(split).normal(0, 2, size=100)
    merged = merge_moments(
        stable_online_moments(values[:split]), stable_online_moments(values[split:])
    )
    exact_mean, exact_m2 = exact_moments(values)
    # Both partial states carry rounding of order n * u relative; 1e-13 is ~1e3 u.
    assert merged.count == 100
    assert abs(merged.mean - float(exact_mean)) <= 1e-13 * abs(float(exact_mean))
    assert abs(merged.m2 - float(exact_m2)) <= 1e-13 * float(exact_m2)


def test_empty_state_is_the_identity_of_merge():
    state = stable_online_moments([1.0, 5.0, 6.0])
    assert merge_moments(MomentState.empty(), state) == state
    assert merge_moments(state, MomentState.empty()) == state


def test_merge_of_states_in_different_dtypes_is_refused():
    wide = stable_online_moments([1.0, 2.0], dtype=np.float64)
    narrow = stable_online_moments([1.0, 2.0], dtype=np.float32)
    with pytest.raises(DtypeMismatchError, match=r"float64.*float32"):
        merge_moments(wide, narrow)
    with pytest.raises(DtypeMismatchError):
        merge_moments(MomentState.empty(np.float32), wide)


def test_merge_refuses_things_that_are_not_states():
    with pytest.raises(TypeError, match="MomentState"):
        merge_moments(stable_online_moments([1.0]), (1, 1.0, 0.0))


value_lists = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=20)


def merge_tolerances(*groups):
    """Absolute tolerances for mean and m2 of states built from ``groups`` of values.

    Every quantity is a sum of O(n) terms bounded by the scale (mean) or the squared scale
    (m2), each carrying a few roundings of relative size u; 64 n u covers them.
    """
    values = np.concatenate([np.asarray(g) for g in groups])
    n, scale = len(values), max(np.abs(values).max(), 1.0)
    return 64 * n * UNIT_ROUNDOFF * scale, 64 * n * UNIT_ROUNDOFF * scale**2


@PROPERTY_SETTINGS
@given(first=value_lists, second=value_lists)
def test_merge_is_commutative_within_rounding(first, second):
    a, b = stable_online_moments(first), stable_online_moments(second)
    ab, ba = merge_moments(a, b), merge_moments(b, a)
    mean_atol, m2_atol = merge_tolerances(first, second)
    assert ab.count == ba.count
    assert abs(ab.mean - ba.mean) <= mean_atol
    assert abs(ab.m2 - ba.m2) <= m2_atol


@PROPERTY_SETTINGS
@given(first=value_lists, second=value_lists, third=value_lists)
def test_merge_is_associative_within_rounding(first, second, third):
    a, b, c = (stable_online_moments(v) for v in (first, second, third))
    left = merge_moments(merge_moments(a, b), c)
    right = merge_moments(a, merge_moments(b, c))
    mean_atol, m2_atol = merge_tolerances(first, second, third)
    assert left.count == right.count
    assert abs(left.mean - right.mean) <= mean_atol
    assert abs(left.m2 - right.m2) <= m2_atol
    # Both orders also agree with exact arithmetic over all the values.
    exact_mean, exact_m2 = exact_moments(first + second + third)
    assert abs(left.mean - float(exact_mean)) <= mean_atol
    assert abs(left.m2 - float(exact_m2)) <= m2_atol


def test_running_state_figures_of_the_seed(running_state_data):
    training_batches, evaluation_batch = running_state_data
    running = reduce(merge_moments, [stable_online_moments(b) for b in training_batches])
    evaluation = stable_online_moments(evaluation_batch)
    eps = 1e-5
    train_mode = (evaluation_batch - evaluation.mean) / np.sqrt(
        evaluation.population_variance + eps
    )
    evaluation_mode = (evaluation_batch - running.mean) / np.sqrt(
        running.population_variance + eps
    )
    assert (round(float(running.mean), 3), round(float(evaluation.mean), 3)) == (4.096, 3.766)
    assert (
        round(float(running.population_variance), 3),
        round(float(evaluation.population_variance), 3),
    ) == (3.801, 3.063)
    assert round(float(np.abs(train_mode - evaluation_mode).max()), 3) == 0.448


@pytest.mark.parametrize(
    ("a", "b", "count", "mean", "m2"),
    [
        # float16: delta**2 n_a n_b = 300 * 300 overflows, though m2 = 150 does not.
        ((300, np.float16(1.0)), (300, np.float16(2.0)), 600, 1.5, 150.0),
        # float16: delta * n_b = 10 * 10000 overflows, though the mean is 7.9.
        ((100, np.float16(-2.0)), (10_000, np.float16(8.0)), 10_100, 7.90099, 9900.99),
        # float64: delta**2 = (1.5e154)**2 overflows, though m2 = delta**2 / 2 does not.
        ((1, np.float64(-7.5e153)), (1, np.float64(7.5e153)), 2, 0.0, 1.125e308),
    ],
)
def test_merge_scales_intermediates_that_overflow_when_the_result_does_not(a, b, count, mean, m2):
    zero = type(a[1])(0)
    merged = merge_moments(MomentState(a[0], a[1], zero), MomentState(b[0], b[1], zero))
    assert merged.count == count and merged.dtype == type(a[1])
    assert float(merged.mean) == pytest.approx(mean, rel=2e-3, abs=1e-300)
    assert float(merged.m2) == pytest.approx(m2, rel=2e-3)


def test_merges_beyond_range_name_the_true_m2():
    wide = MomentState(count=1, mean=np.float16(-30.0), m2=np.float16(0.0))
    far = MomentState(count=3000, mean=np.float16(20.0), m2=np.float16(0.0))
    # delta**2 n_a n_b / n = 2500 * 3000 / 3001 = 2499: fine. With 300 values at -30:
    assert float(merge_moments(wide, far).m2) == pytest.approx(2499.17, rel=1e-3)
    heavy = MomentState(count=300, mean=np.float16(-30.0), m2=np.float16(0.0))
    with pytest.raises(
        MomentOverflowError, match=r"about 6\.818e\+05\) exceeds the largest float16"
    ):
        merge_moments(heavy, far)
    huge = (MomentState(1, -1.5e308, 0.0), MomentState(3, 1.7e308, 0.0))
    with pytest.raises(MomentOverflowError, match="beyond float64's range"):
        merge_moments(*huge)
