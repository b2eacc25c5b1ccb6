"""Tests of trainable_harness.layers.running_state: batch statistics, running state, eq. 16.5."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from layer_reference import (
    CROSS_CHECK,
    FAST,
    UNIT_ROUNDOFF,
    channels,
    layer_cases,
    naive_running_update,
    random_batch,
)

from trainable_harness.errors import (
    CountError,
    MomentOverflowError,
    MomentumRangeError,
    RunningStateShapeError,
    UnknownChoiceError,
)
from trainable_harness.layers import (
    BatchNormState,
    batch_norm_eval,
    batch_statistics,
    reduction_axes,
    update_running_statistics,
    values_per_statistic,
)


@CROSS_CHECK
@given(
    layer_cases(kinds=("batch",)),
    st.floats(0.0, 1.0),
    st.sampled_from(["sample", "population"]),
)
def test_running_update_agrees_with_naive_loops(case, momentum, estimator):
    _, shape, _, seed = case
    assume(estimator == "population" or values_per_statistic("batch", shape) >= 2)
    X = random_batch(shape, seed)
    rng = np.random.default_rng(seed + 2)
    state = BatchNormState(
        rng.normal(size=channels(shape)),
        rng.uniform(0.5, 2.0, channels(shape)),
        momentum,
        estimator,
        num_updates=3,
    )
    new = update_running_statistics(state, X)
    mean, variance = naive_running_update(
        state.running_mean, state.running_variance, X, momentum, estimator
    )
    # Different summation order only; values are O(10), m <= 64: well under 1e-12.
    np.testing.assert_allclose(new.running_mean, mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(new.running_variance, variance, rtol=0, atol=1e-12)
    assert new.num_updates == 4
    assert (new.momentum, new.variance_estimator) == (momentum, estimator)


@FAST
@given(st.floats(0.0, 1.0), st.sampled_from(["sample", "population"]), st.integers(0, 2**32 - 1))
def test_ema_matches_hand_unrolled_recurrence(momentum, estimator, seed):
    rng = np.random.default_rng(seed)
    batches = [rng.normal(3.0, 2.0, size=(5, 2, 2, 3)) for _ in range(3)]
    state = BatchNormState.initial(2, momentum=momentum, variance_estimator=estimator)
    for X in batches:
        state = update_running_statistics(state, X)
    ddof = 1 if estimator == "sample" else 0
    mus = [X.mean(axis=(0, 2, 3)) for X in batches]
    variances = [X.var(axis=(0, 2, 3), ddof=ddof) for X in batches]
    p, q = momentum, 1.0 - momentum
    # r3 = q^3 r0 + p q^2 s1 + p q s2 + p s3, with r0 = 0 (mean) and 1 (variance).
    mean3 = p * q * q * mus[0] + p * q * mus[1] + p * mus[2]
    variance3 = q**3 * 1.0 + p * q * q * variances[0] + p * q * variances[1] + p * variances[2]
    # Different association order of at most 4 terms of size <= ~10: 1e-13 absolute.
    np.testing.assert_allclose(state.running_mean, mean3, rtol=0, atol=1e-13)
    np.testing.assert_allclose(state.running_variance, variance3, rtol=0, atol=1e-13)
    assert state.num_updates == 3


def test_momentum_extremes_freeze_or_replace():
    X = random_batch((4, 3), seed=3)
    start = BatchNormState(np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 2.0]), momentum=0.0)
    frozen = update_running_statistics(start, X)
    np.testing.assert_array_equal(frozen.running_mean, start.running_mean)
    np.testing.assert_array_equal(frozen.running_variance, start.running_variance)
    replaced = update_running_statistics(dataclasses.replace(start, momentum=1.0), X)
    stats = batch_statistics(X)
    np.testing.assert_array_equal(replaced.running_mean, stats.mean)
    np.testing.assert_array_equal(replaced.running_variance, stats.sample_variance)
    # The shifted mean and numpy's each carry about m = 4 roundings of terms up to
    # 2 max|x| (a shifted value), so they agree to 16 u max|x|.
    mean_atol = 16 * UNIT_ROUNDOFF * np.abs(X).max()
    np.testing.assert_allclose(stats.mean, X.mean(axis=0), rtol=0, atol=mean_atol)
    np.testing.assert_allclose(stats.sample_variance, X.var(axis=0, ddof=1), rtol=1e-15)


def test_sample_and_population_estimators_differ_by_bessel_factor():
    X = random_batch((2, 3, 2, 2), seed=4)  # m = 8 values per channel
    stats = batch_statistics(X)
    assert stats.count == 8
    np.testing.assert_allclose(
        stats.sample_variance, stats.population_variance * 8 / 7, rtol=1e-15
    )
    sample = update_running_statistics(BatchNormState.initial(3, momentum=1.0), X)
    population = update_running_statistics(
        BatchNormState.initial(3, momentum=1.0, variance_estimator="population"), X
    )
    np.testing.assert_allclose(
        sample.running_variance / population.running_variance, 8 / 7, rtol=1e-15
    )


def test_state_is_immutable_and_copies_its_inputs():
    mean = np.array([1.0, 2.0])
    state = BatchNormState(mean, np.array([1.0, 1.0]))
    mean[0] = 99.0
    assert state.running_mean[0] == 1.0
    with pytest.raises(ValueError, match="read-only"):
        state.running_mean[0] = 5.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.momentum = 0.5  # type: ignore[misc]


@pytest.mark.parametrize("momentum", [-0.1, 1.5, float("nan")])
def test_momentum_outside_unit_interval_raises(momentum):
    with pytest.raises(MomentumRangeError, match=r"\[0, 1\]"):
        BatchNormState.initial(2, momentum=momentum)


def test_unknown_options_raise():
    with pytest.raises(UnknownChoiceError, match="'sample' or 'population'"):
        BatchNormState.initial(2, variance_estimator="unbiased")  # type: ignore[arg-type]
    with pytest.raises(UnknownChoiceError, match="kind must be one of"):
        reduction_axes("rms", 4)  # type: ignore[arg-type]


def test_state_channel_mismatch_and_malformed_state():
    with pytest.raises(RunningStateShapeError, match="running state has 2 channels but X"):
        batch_norm_eval(np.ones((2, 3)), np.ones(3), np.zeros(3), BatchNormState.initial(2))
    with pytest.raises(RunningStateShapeError, match="negative"):
        BatchNormState(np.zeros(2), np.array([1.0, -1.0]))
    with pytest.raises(RunningStateShapeError, match="both must be"):
        BatchNormState(np.zeros(2), np.ones(3))


def test_batch_statistics_refuse_a_variance_beyond_range_by_channel():
    # The variance 1e600 of channel 0 is beyond float64: refused, where it used to be inf.
    with pytest.raises(MomentOverflowError, match=r"shape \(2, 2\).*channel 0 exceeds"):
        batch_statistics([[-1e300, 1.0], [1e300, 3.0]])
    with pytest.raises(MomentOverflowError, match="channel 0"):
        update_running_statistics(BatchNormState.initial(2), [[-1e300, 1.0], [1e300, 3.0]])
    # Means and variances near the ends of the range that fit are computed, not refused.
    stats = batch_statistics([[-1e154, 1.0], [1e154, 3.0]])
    np.testing.assert_array_equal(stats.mean, [0.0, 2.0])
    np.testing.assert_allclose(stats.population_variance, [1e308, 1.0], rtol=1e-15)
    # Its sample variance, 2e308, is not: refused by name too.
    with pytest.raises(MomentOverflowError, match="sample variance of channel 0"):
        _ = stats.sample_variance


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: BatchNormState.initial(2, momentum=True), MomentumRangeError, "bool"),
        (lambda: BatchNormState.initial(2, momentum="0.1"), MomentumRangeError, "str"),
        (lambda: BatchNormState.initial(True), CountError, "num_channels.*bool"),
        (lambda: BatchNormState.initial(2.0), CountError, "num_channels.*float"),
        (
            lambda: BatchNormState([0.0], [1.0], num_updates=True),
            RunningStateShapeError,
            "num_updates",
        ),
        (
            lambda: BatchNormState([0.0], [1.0], num_updates=np.inf),
            RunningStateShapeError,
            "num_updates",
        ),
    ],
)
def test_silent_acceptances_are_specific_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_momentum_beyond_float64_is_named_not_an_overflow_error():
    with pytest.raises(MomentumRangeError, match="momentum must lie in"):
        BatchNormState.initial(2, momentum=10**400)
