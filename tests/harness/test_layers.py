"""Tests of trainable_harness.layers: the four normalization layers, running state, folding.

The cross-check at the heart of this file is a second, deliberately naive implementation
(``naive_reduction_sets`` / ``naive_normalize`` / ``naive_running_update``) that builds every
reduction set with explicit nested loops over indices and computes means and variances with
plain Python sums. The harness must agree with it on random shapes and groupings.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from exact_reference import centered_ulp_bound, exact_standardized, normwise_ulps
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trainable_harness.errors import (
    AffineShapeError,
    CountError,
    DegenerateNormalizationError,
    EmptyInputError,
    IndivisibleGroupsError,
    InsufficientCountError,
    MomentOverflowError,
    MomentumRangeError,
    NegativeEpsilonError,
    NonFiniteInputError,
    RunningStateShapeError,
    ShapeError,
    SingleValuePerChannelError,
    TrainableError,
    UnknownChoiceError,
    UnsupportedDtypeError,
    UnsupportedRankError,
    WeightShapeError,
)
from trainable_harness.layers import (
    BatchNormState,
    apply_normalization,
    batch_norm,
    batch_norm_eval,
    batch_norm_eval_flops,
    batch_norm_train,
    batch_statistics,
    conv2d,
    fold_batch_norm_into_conv2d,
    fold_batch_norm_into_linear,
    group_norm,
    instance_norm,
    layer_norm,
    linear,
    reduction_axes,
    statistic_labels,
    update_running_statistics,
    values_per_statistic,
)

UNIT_ROUNDOFF = 2.0**-53  # u for float64 round-to-nearest
KINDS = ("batch", "layer", "instance", "group")
RANKS = {"batch": (2, 3, 4), "layer": (2, 3, 4), "instance": (4,), "group": (2, 3, 4)}
FAST = settings(max_examples=50, deadline=None)
CROSS_CHECK = settings(max_examples=100, deadline=None)


# ---------------------------------------------------------------------------
# The naive reference: explicit loops over index sets, plain sums
# ---------------------------------------------------------------------------


def naive_channel_axis(ndim):
    return 2 if ndim == 3 else 1


def naive_reduction_sets(kind, shape, num_groups=None):
    """Every reduction set as a list of index tuples, written out loop by loop."""
    sets = []
    if len(shape) == 4:
        B, C, H, W = shape
        size = C // num_groups if kind == "group" else None
        if kind == "batch":
            for c in range(C):
                sets.append([(b, c, h, w) for b in range(B) for h in range(H) for w in range(W)])
        elif kind == "layer":
            for b in range(B):
                sets.append([(b, c, h, w) for c in range(C) for h in range(H) for w in range(W)])
        elif kind == "instance":
            for b in range(B):
                for c in range(C):
                    sets.append([(b, c, h, w) for h in range(H) for w in range(W)])
        elif kind == "group":
            for b in range(B):
                for g in range(num_groups):
                    channels = range(g * size, (g + 1) * size)
                    sets.append(
                        [(b, c, h, w) for c in channels for h in range(H) for w in range(W)]
                    )
    elif len(shape) == 3:
        B, T, D = shape
        if kind == "batch":
            for d in range(D):
                sets.append([(b, t, d) for b in range(B) for t in range(T)])
        elif kind == "layer":
            for b in range(B):
                for t in range(T):
                    sets.append([(b, t, d) for d in range(D)])
        elif kind == "group":
            size = D // num_groups
            for b in range(B):
                for t in range(T):
                    for g in range(num_groups):
                        sets.append([(b, t, d) for d in range(g * size, (g + 1) * size)])
    elif len(shape) == 2:
        B, D = shape
        if kind == "batch":
            for d in range(D):
                sets.append([(b, d) for b in range(B)])
        elif kind == "layer":
            for b in range(B):
                sets.append([(b, d) for d in range(D)])
        elif kind == "group":
            size = D // num_groups
            for b in range(B):
                for g in range(num_groups):
                    sets.append([(b, d) for d in range(g * size, (g + 1) * size)])
    return sets


def naive_mean_and_variance(values, denominator="population"):
    m = len(values)
    mean = sum(values) / m
    squares = sum((v - mean) ** 2 for v in values)
    return mean, squares / (m if denominator == "population" else m - 1)


def naive_normalize(kind, X, gamma, beta, eps, num_groups=None):
    Y = np.full(X.shape, np.nan)
    channel_axis = naive_channel_axis(X.ndim)
    for index_set in naive_reduction_sets(kind, X.shape, num_groups):
        values = [float(X[i]) for i in index_set]
        mean, variance = naive_mean_and_variance(values)
        for i in index_set:
            c = i[channel_axis]
            Y[i] = gamma[c] * (float(X[i]) - mean) / math.sqrt(variance + eps) + beta[c]
    return Y


def naive_running_update(running_mean, running_variance, X, momentum, estimator):
    new_mean, new_variance = [], []
    for c, index_set in enumerate(naive_reduction_sets("batch", X.shape)):
        values = [float(X[i]) for i in index_set]
        mean, variance = naive_mean_and_variance(values, estimator)
        new_mean.append((1 - momentum) * running_mean[c] + momentum * mean)
        new_variance.append((1 - momentum) * running_variance[c] + momentum * variance)
    return np.array(new_mean), np.array(new_variance)


def naive_conv2d(X, K, b, stride, padding):
    B, C_in, H, W = X.shape
    C_out, _, kh, kw = K.shape
    padded = np.zeros((B, C_in, H + 2 * padding, W + 2 * padding))
    for n in range(B):
        for c in range(C_in):
            for i in range(H):
                for j in range(W):
                    padded[n, c, i + padding, j + padding] = X[n, c, i, j]
    H_out = (H + 2 * padding - kh) // stride + 1
    W_out = (W + 2 * padding - kw) // stride + 1
    Y = np.zeros((B, C_out, H_out, W_out))
    for n in range(B):
        for o in range(C_out):
            for i in range(H_out):
                for j in range(W_out):
                    total = b[o]
                    for c in range(C_in):
                        for u in range(kh):
                            for v in range(kw):
                                total += (
                                    K[o, c, u, v] * padded[n, c, i * stride + u, j * stride + v]
                                )
                    Y[n, o, i, j] = total
    return Y


def labels_from_naive_sets(kind, shape, num_groups=None):
    labels = np.full(shape, -1)
    for label, index_set in enumerate(naive_reduction_sets(kind, shape, num_groups)):
        for i in index_set:
            labels[i] = label
    return labels


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------


def divisors(n):
    return [g for g in range(1, n + 1) if n % g == 0]


@st.composite
def layer_cases(draw, kinds=KINDS, max_side=4):
    """A kind, a small shape of a rank it accepts, a grouping, and a data seed."""
    kind = draw(st.sampled_from(kinds))
    ndim = draw(st.sampled_from(RANKS[kind]))
    shape = [draw(st.integers(1, max_side)) for _ in range(ndim)]
    channel_axis = naive_channel_axis(ndim)
    shape[channel_axis] = draw(st.integers(1, 6))
    num_groups = None
    if kind == "group":
        num_groups = draw(st.sampled_from(divisors(shape[channel_axis])))
    seed = draw(st.integers(0, 2**32 - 1))
    return kind, tuple(shape), num_groups, seed


def random_batch(shape, seed, offset_scale=5.0):
    """Standard-normal values, each channel shifted by its own offset (non-centred data)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape)
    offsets = rng.uniform(-offset_scale, offset_scale, shape[naive_channel_axis(len(shape))])
    return X + offsets.reshape(
        [-1 if a == naive_channel_axis(len(shape)) else 1 for a in range(len(shape))]
    )


def random_affine(num_channels, seed):
    rng = np.random.default_rng(seed + 1)
    return rng.uniform(0.5, 2.0, num_channels), rng.uniform(-1.0, 1.0, num_channels)


def channels(shape):
    return shape[naive_channel_axis(len(shape))]


# ---------------------------------------------------------------------------
# Cross-check against the naive implementation
# ---------------------------------------------------------------------------


@CROSS_CHECK
@given(layer_cases(), st.sampled_from([1e-5, 1e-3, 0.1]))
def test_forward_agrees_with_naive_loops(case, eps):
    kind, shape, num_groups, seed = case
    X = random_batch(shape, seed)
    gamma, beta = random_affine(channels(shape), seed)
    Y = apply_normalization(kind, X, gamma, beta, eps=eps, num_groups=num_groups)
    expected = naive_normalize(kind, X, gamma, beta, eps, num_groups)
    assert not np.isnan(expected).any()  # the naive sets cover every element
    # Same formulas, different summation order: a mean's error is at most m*u*max|x|
    # (m <= 144, |x| <= ~10), amplified by 1/sqrt(eps) <= 317 and gamma <= 2: < 1e-10.
    np.testing.assert_allclose(Y, expected, rtol=0, atol=1e-10)


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
@given(layer_cases())
def test_statistic_labels_match_naive_sets(case):
    kind, shape, num_groups, _ = case
    labels = statistic_labels(kind, shape, num_groups=num_groups)
    expected = labels_from_naive_sets(kind, shape, num_groups)
    # Both number the sets in order of first appearance in C order, so they must be equal.
    np.testing.assert_array_equal(labels, expected)
    sizes = {len(s) for s in naive_reduction_sets(kind, shape, num_groups)}
    assert sizes == {values_per_statistic(kind, shape, num_groups=num_groups)}


def test_naive_reference_can_disagree():
    """The cross-check is not vacuous: BN and LN give different answers on the same data."""
    X = random_batch((3, 4), seed=0)
    gamma, beta = np.ones(4), np.zeros(4)
    assert (
        np.abs(naive_normalize("layer", X, gamma, beta, 1e-5) - batch_norm(X, gamma, beta)).max()
        > 0.1
    )


# ---------------------------------------------------------------------------
# Reduction axes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "ndim", "axes"),
    [
        ("batch", 2, (0,)),
        ("batch", 3, (0, 1)),
        ("batch", 4, (0, 2, 3)),
        ("layer", 2, (1,)),
        ("layer", 3, (2,)),
        ("layer", 4, (1, 2, 3)),
        ("instance", 4, (2, 3)),
        ("group", 3, (2,)),
        ("group", 4, (1, 2, 3)),
    ],
)
def test_reduction_axes_table(kind, ndim, axes):
    assert reduction_axes(kind, ndim) == axes


def test_values_per_statistic_for_a_cnn_batch():
    shape = (8, 16, 7, 5)
    assert values_per_statistic("batch", shape) == 8 * 7 * 5
    assert values_per_statistic("layer", shape) == 16 * 7 * 5
    assert values_per_statistic("instance", shape) == 7 * 5
    assert values_per_statistic("group", shape, num_groups=4) == 4 * 7 * 5
    assert values_per_statistic("batch", (8, 10, 3)) == 80


def test_group_norm_extremes_are_layer_and_instance_norm():
    X = random_batch((3, 6, 4, 5), seed=1)
    gamma, beta = random_affine(6, seed=1)
    # Same reductions over the same memory; only the reshape differs: rounding-level.
    np.testing.assert_allclose(
        group_norm(X, gamma, beta, num_groups=1), layer_norm(X, gamma, beta), rtol=0, atol=1e-14
    )
    np.testing.assert_allclose(
        group_norm(X, gamma, beta, num_groups=6), instance_norm(X, gamma, beta), rtol=0, atol=1e-14
    )
    assert (
        np.abs(group_norm(X, gamma, beta, num_groups=2) - layer_norm(X, gamma, beta)).max() > 0.01
    )


# ---------------------------------------------------------------------------
# Per-sample independence (chapter 16, section 1 claim)
# ---------------------------------------------------------------------------


@FAST
@given(
    st.sampled_from(["layer", "instance", "group", "batch"]),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(0, 63),
    st.integers(0, 2**32 - 1),
)
def test_sample_independence_of_layer_instance_group_but_not_batch(kind, c2, H, W, k, seed):
    shape = (64, 2 * c2, H, W)
    X = random_batch(shape, seed)
    gamma, beta = random_affine(shape[1], seed)
    groups = 2 if kind == "group" else None
    in_batch = apply_normalization(kind, X, gamma, beta, num_groups=groups)[k]
    alone = apply_normalization(kind, X[k : k + 1], gamma, beta, num_groups=groups)[0]
    difference = np.abs(in_batch - alone).max()
    if kind == "batch":
        # 64 samples against one: batch statistics differ by O(1) for N(0,1) data.
        assert difference > 1e-3
    else:
        # The same sample's statistics from the same values: a few ulps of O(1) outputs.
        assert difference <= 1e-14


# ---------------------------------------------------------------------------
# Invariances per reduction set (eps = 0, so they hold exactly in real arithmetic)
# ---------------------------------------------------------------------------


def lattice_batch(shape, seed):
    """Values k/4 with |k| <= 40: exactly representable, so a constant set is exactly so."""
    rng = np.random.default_rng(seed)
    return rng.integers(-40, 41, size=shape) / 4.0


@FAST
@given(layer_cases(), st.integers(0, 2**32 - 1))
def test_shift_and_scale_invariance_per_reduction_set(case, transform_seed):
    kind, shape, num_groups, seed = case
    X = lattice_batch(shape, seed)
    labels = labels_from_naive_sets(kind, shape, num_groups)
    # Spread >= 1/4 in every set keeps rounding amplification bounded (eps = 0 here).
    for label in np.unique(labels):
        assume(np.ptp(X[labels == label]) > 0)
    rng = np.random.default_rng(transform_seed)
    shifts = rng.uniform(-10, 10, labels.max() + 1)[labels]
    scales = rng.uniform(0.25, 4.0, labels.max() + 1)[labels]
    gamma, beta = random_affine(channels(shape), seed)
    Y = apply_normalization(kind, X, gamma, beta, eps=0.0, num_groups=num_groups)
    moved = apply_normalization(
        kind, scales * X + shifts, gamma, beta, eps=0.0, num_groups=num_groups
    )
    # Relative error of x - mean is <= ~m*u*(|x| + |shift|)/spread ~ 144*1.1e-16*60/(1/24)
    # ~ 2e-11 before gamma <= 2; 1e-9 leaves margin and is far below any real change.
    np.testing.assert_allclose(moved, Y, rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    ("kind", "other"),
    [("batch", "layer"), ("batch", "instance"), ("layer", "batch"), ("layer", "instance")],
)
def test_a_shift_constant_only_over_another_kinds_sets_changes_the_output(kind, other):
    # (Instance sets are the finest: a shift constant per channel or per sample is constant
    # on each of them, so instance norm is absent from the left column.)
    shape = (4, 3, 2, 2)
    X = random_batch(shape, seed=5)
    labels = labels_from_naive_sets(other, shape)
    shifts = np.random.default_rng(6).uniform(-3, 3, labels.max() + 1)[labels]
    gamma, beta = np.ones(3), np.zeros(3)
    change = np.abs(
        apply_normalization(kind, X + shifts, gamma, beta)
        - apply_normalization(kind, X, gamma, beta)
    )
    assert change.max() > 0.1


@FAST
@given(layer_cases(), st.floats(0.1, 10.0), st.sampled_from([1e-5, 1e-2]))
def test_uniform_scale_with_rescaled_eps_is_exact_invariance(case, a, eps):
    # N(a X; a^2 eps) = N(X; eps) for any a > 0, including one-value sets.
    kind, shape, num_groups, seed = case
    X = random_batch(shape, seed)
    gamma, beta = random_affine(channels(shape), seed)
    Y = apply_normalization(kind, X, gamma, beta, eps=eps, num_groups=num_groups)
    scaled = apply_normalization(kind, a * X, gamma, beta, eps=a * a * eps, num_groups=num_groups)
    # Rounding only; amplification bounded by 1/sqrt(eps) <= 317 on O(10) values.
    np.testing.assert_allclose(scaled, Y, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------
# Identity recovery (chapter 16, section 2 claim)
# ---------------------------------------------------------------------------


@FAST
@given(layer_cases(kinds=("batch",), max_side=6), st.sampled_from([0.0, 1e-5, 1.0]))
def test_identity_recovery_gamma_sqrt_variance_beta_mean(case, eps):
    _, shape, _, seed = case
    X = random_batch(shape, seed, offset_scale=100.0)
    assume(eps > 0 or values_per_statistic("batch", shape) >= 2)
    axes = reduction_axes("batch", len(shape))
    mean = X.mean(axis=axes)
    gamma = np.sqrt(X.var(axis=axes) + eps)
    Y = batch_norm(X, gamma, mean, eps=eps)
    # Bound: a few roundings of |x - mean| <= 2 max|X| plus the gap between two summation
    # orders of the mean (<= log2(m) u |mean| each): 32 u max|X| covers m <= 2^12.
    bound = 32 * UNIT_ROUNDOFF * np.abs(X).max()
    assert np.abs(Y - X).max() <= bound


def test_single_value_per_channel_outputs_beta_whatever_the_input():
    beta = np.array([0.0, -1.5, 2.0])
    for X in (np.array([[7.0, -3.0, 1e6]]), np.array([[[7.0, -3.0, 1e6]]])):
        np.testing.assert_array_equal(batch_norm(X, np.ones(3) * 5, beta), beta.reshape(X.shape))
    X4 = np.array([3.0, 1e8, -2.0]).reshape(1, 3, 1, 1)
    np.testing.assert_array_equal(batch_norm(X4, np.ones(3), beta).ravel(), beta)
    # "All zeros" only when beta = 0:
    assert not np.any(batch_norm(X4, np.ones(3), np.zeros(3)))


def test_single_value_train_mode_with_population_estimator_updates_to_zero_variance():
    state = BatchNormState.initial(2, momentum=0.5, variance_estimator="population")
    Y, new = batch_norm_train(np.array([[4.0, -6.0]]), [1.0, 1.0], [0.25, 0.5], state)
    np.testing.assert_array_equal(Y, [[0.25, 0.5]])
    np.testing.assert_array_equal(new.running_mean, [2.0, -3.0])
    np.testing.assert_array_equal(new.running_variance, [0.5, 0.5])


@pytest.mark.parametrize("shape", [(1, 3), (1, 1, 3), (1, 3, 1, 1)])
def test_single_value_train_mode_with_sample_estimator_raises(shape):
    state = BatchNormState.initial(3)
    with pytest.raises(SingleValuePerChannelError, match="one value per channel"):
        batch_norm_train(np.ones(shape), np.ones(3), np.zeros(3), state)
    assert issubclass(SingleValuePerChannelError, InsufficientCountError)


# ---------------------------------------------------------------------------
# Running statistics: EMA recurrence, estimators, eval mode
# ---------------------------------------------------------------------------


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


def test_train_mode_normalizes_with_population_variance_whatever_the_estimator():
    X = random_batch((3, 4), seed=8)
    gamma, beta = np.ones(4), np.zeros(4)
    for estimator in ("sample", "population"):
        state = BatchNormState.initial(4, variance_estimator=estimator)
        Y, _ = batch_norm_train(X, gamma, beta, state, eps=0.0)
        # Population variance of a standardized column is 1 (to rounding).
        np.testing.assert_allclose(Y.var(axis=0), 1.0, rtol=1e-13)


@FAST
@given(layer_cases(kinds=("batch",)), st.integers(0, 2**32 - 1))
def test_eval_mode_is_deterministic_per_sample(case, seed):
    _, shape, _, data_seed = case
    X = random_batch(shape, data_seed)
    rng = np.random.default_rng(seed)
    C = channels(shape)
    state = BatchNormState(rng.normal(size=C), rng.uniform(0.1, 3.0, C))
    gamma, beta = random_affine(C, seed)
    Y = batch_norm_eval(X, gamma, beta, state)
    for k in range(shape[0]):
        # Element-wise arithmetic only: bit-identical whatever else is in the batch.
        np.testing.assert_array_equal(batch_norm_eval(X[k : k + 1], gamma, beta, state)[0], Y[k])


def test_eval_mode_uses_the_running_statistics_not_the_batch():
    state = BatchNormState(np.array([1.0]), np.array([4.0]))
    Y = batch_norm_eval(np.array([[1.0], [1.0], [5.0]]), [2.0], [0.5], state, eps=0.0)
    np.testing.assert_array_equal(Y.ravel(), [0.5, 0.5, 4.5])


def test_state_is_immutable_and_copies_its_inputs():
    mean = np.array([1.0, 2.0])
    state = BatchNormState(mean, np.array([1.0, 1.0]))
    mean[0] = 99.0
    assert state.running_mean[0] == 1.0
    with pytest.raises(ValueError, match="read-only"):
        state.running_mean[0] = 5.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.momentum = 0.5  # type: ignore[misc]


# ---------------------------------------------------------------------------
# Folding (chapter 16, section 4 claim)
# ---------------------------------------------------------------------------


def random_state(C, rng):
    return BatchNormState(rng.normal(0.0, 2.0, C), rng.uniform(0.05, 4.0, C))


def folding_bound(scale, magnitude, n_terms, beta):
    """Rounding bound for |BN_eval(layer(x)) - folded_layer(x)|, per output element.

    ``magnitude`` = sum |w||x| + |b| + |running_mean| (the size of what is summed). Each path
    is a sum of n_terms + 3 products and adds, each rounding at most u relative to the
    running total: error <= (n_terms + 4) u (|scale| magnitude + |beta|) per path; two paths.
    """
    return 2 * (n_terms + 4) * UNIT_ROUNDOFF * (np.abs(scale) * magnitude + np.abs(beta))


@FAST
@given(
    st.integers(1, 5),
    st.integers(1, 4),
    st.integers(1, 8),
    st.integers(1, 6),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_folding_into_linear_agrees_at_rounding_level(B, T, d_in, d_out, with_bias, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(1.0, 3.0, (B, T, d_in))
    W = rng.normal(size=(d_out, d_in))
    b = rng.normal(size=d_out) if with_bias else None
    gamma, beta = rng.normal(size=d_out), rng.normal(size=d_out)
    state = random_state(d_out, rng)
    eps = 1e-5
    reference = batch_norm_eval(linear(X, W, b), gamma, beta, state, eps=eps)
    W2, b2 = fold_batch_norm_into_linear(W, b, gamma, beta, state, eps=eps)
    folded = linear(X, W2, b2)
    scale = gamma / np.sqrt(state.running_variance + eps)
    magnitude = (
        np.abs(X) @ np.abs(W).T + np.abs(0 if b is None else b) + np.abs(state.running_mean)
    )
    assert np.all(np.abs(folded - reference) <= folding_bound(scale, magnitude, d_in, beta))


@FAST
@given(
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(1, 2),
    st.integers(0, 1),
    st.integers(0, 2**32 - 1),
)
def test_folding_into_conv2d_agrees_at_rounding_level(B, C_in, C_out, k, stride, padding, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(0.5, 2.0, (B, C_in, 5, 4))
    K = rng.normal(size=(C_out, C_in, k, k))
    b = rng.normal(size=C_out)
    gamma, beta = rng.normal(size=C_out), rng.normal(size=C_out)
    state = random_state(C_out, rng)
    eps = 1e-5
    reference = batch_norm_eval(
        conv2d(X, K, b, stride=stride, padding=padding), gamma, beta, state, eps=eps
    )
    K2, b2 = fold_batch_norm_into_conv2d(K, b, gamma, beta, state, eps=eps)
    folded = conv2d(X, K2, b2, stride=stride, padding=padding)
    scale = (gamma / np.sqrt(state.running_variance + eps)).reshape(1, -1, 1, 1)
    magnitude = conv2d(np.abs(X), np.abs(K), np.abs(b), stride=stride, padding=padding) + np.abs(
        state.running_mean
    ).reshape(1, -1, 1, 1)
    bound = folding_bound(scale, magnitude, C_in * k * k, beta.reshape(1, -1, 1, 1))
    assert np.all(np.abs(folded - reference) <= bound)


def test_folding_with_the_wrong_eps_exceeds_the_bound():
    """The folding bound is tight enough to catch a real mistake (eps dropped)."""
    rng = np.random.default_rng(11)
    X, W, b = rng.normal(size=(6, 4)), rng.normal(size=(3, 4)), rng.normal(size=3)
    gamma, beta = rng.normal(size=3), rng.normal(size=3)
    state = BatchNormState(rng.normal(size=3), np.full(3, 1e-3))
    reference = batch_norm_eval(linear(X, W, b), gamma, beta, state, eps=1e-5)
    W2, b2 = fold_batch_norm_into_linear(W, b, gamma, beta, state, eps=0.0)
    scale = gamma / np.sqrt(state.running_variance + 1e-5)
    magnitude = np.abs(X) @ np.abs(W).T + np.abs(b) + np.abs(state.running_mean)
    assert np.any(np.abs(linear(X, W2, b2) - reference) > folding_bound(scale, magnitude, 4, beta))


@FAST
@given(
    st.integers(1, 2),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(0, 2),
    st.integers(0, 2**32 - 1),
)
def test_conv2d_agrees_with_naive_loops(B, C_in, C_out, kh, stride, padding, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(B, C_in, 4, 5))
    K = rng.normal(size=(C_out, C_in, kh, 2))
    b = rng.normal(size=C_out)
    expected = naive_conv2d(X, K, b, stride, padding)
    # Sums of <= 18 products of O(1) numbers in different orders: 1e-12 absolute.
    np.testing.assert_allclose(
        conv2d(X, K, b, stride=stride, padding=padding), expected, rtol=0, atol=1e-12
    )


def test_linear_convention_is_x_times_w_transposed():
    X = np.array([[1.0, 2.0, 3.0]])
    W = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])  # (d_out=2, d_in=3)
    np.testing.assert_array_equal(linear(X, W, np.array([10.0, 20.0])), [[11.0, 26.0]])


def test_eval_flops_count_what_folding_removes():
    work = batch_norm_eval_flops((2, 3, 4, 5))
    assert (work.elements, work.channels) == (120, 3)
    assert (work.subtract, work.divide, work.multiply, work.add) == (120, 120, 120, 120)
    assert (work.elementwise, work.per_channel, work.fused_elementwise) == (480, 6, 240)
    assert (work.folded_elementwise, work.removed_by_folding) == (0, 480)
    no_bias = batch_norm_eval_flops((2, 5, 7), preceding_bias=False)
    assert (no_bias.channels, no_bias.folded_elementwise, no_bias.removed_by_folding) == (
        7,
        70,
        210,
    )


# ---------------------------------------------------------------------------
# Dtype contract
# ---------------------------------------------------------------------------


def test_float64_default_integer_promotion_and_float32_option():
    X = np.arange(12).reshape(2, 3, 2)
    Y = layer_norm(X, np.ones(2), np.zeros(2))
    assert Y.dtype == np.float64
    Y32 = layer_norm(X, np.ones(2), np.zeros(2), dtype=np.float32)
    assert Y32.dtype == np.float32
    # float32 arithmetic on O(1) outputs: within a few float32 ulps (1.2e-7) of float64.
    np.testing.assert_allclose(Y32, Y, rtol=0, atol=1e-6)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4, 5, 6)])
def test_wrong_rank_names_the_shape_and_accepted_ranks(shape):
    with pytest.raises(UnsupportedRankError, match=r"got shape .* accepts 2-D \(B, d\)"):
        batch_norm(np.ones(shape), np.ones(shape[-1]), np.zeros(shape[-1]))


def test_instance_norm_refuses_3d_with_a_way_out():
    with pytest.raises(UnsupportedRankError, match=r"accepts 4-D .*transpose to \(B, d, T, 1\)"):
        instance_norm(np.ones((2, 3, 4)), np.ones(4), np.zeros(4))
    with pytest.raises(UnsupportedRankError):
        reduction_axes("instance", 3)


@pytest.mark.parametrize("num_groups", [4, 0, -2, 1.5, None])
def test_group_count_must_divide_channels(num_groups):
    with pytest.raises(IndivisibleGroupsError, match="num_groups"):
        group_norm(np.ones((2, 6, 2, 2)), np.ones(6), np.zeros(6), num_groups=num_groups)


def test_indivisible_groups_message_names_both_counts():
    with pytest.raises(IndivisibleGroupsError, match="6 channels cannot be split into 4"):
        statistic_labels("group", (1, 6, 2, 2), num_groups=4)


@pytest.mark.parametrize("which", ["gamma", "beta"])
def test_affine_shape_mismatch_names_both_shapes(which):
    params = {"gamma": np.ones(3), "beta": np.zeros(3)}
    params[which] = np.ones((3, 1))
    with pytest.raises(
        AffineShapeError, match=rf"{which} has shape \(3, 1\) but X has shape \(2, 3, 4, 4\)"
    ):
        batch_norm(np.ones((2, 3, 4, 4)), params["gamma"], params["beta"])


def test_layer_norm_refuses_a_per_element_affine():
    with pytest.raises(AffineShapeError, match=r"must have shape \(3,\)"):
        layer_norm(np.ones((2, 3, 4, 4)), np.ones((3, 4, 4)), np.zeros((3, 4, 4)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_says_where(bad):
    X = np.ones((2, 3, 4, 5))
    X[1, 0, 2, 3] = bad
    with pytest.raises(NonFiniteInputError, match=r"index \(1, 0, 2, 3\)"):
        group_norm(X, np.ones(3), np.zeros(3), num_groups=3)
    gamma = np.ones(3)
    gamma[2] = bad
    with pytest.raises(NonFiniteInputError, match="gamma"):
        layer_norm(np.ones((2, 3)), gamma, np.zeros(3))


def test_empty_batch_names_the_axis():
    with pytest.raises(EmptyInputError, match="empty along axis 0"):
        batch_norm(np.ones((0, 3, 2, 2)), np.ones(3), np.zeros(3))
    with pytest.raises(EmptyInputError, match="axis 2"):
        update_running_statistics(BatchNormState.initial(3), np.ones((2, 3, 0, 2)))


def test_negative_eps_raises():
    with pytest.raises(NegativeEpsilonError):
        layer_norm(np.ones((2, 3)), np.ones(3), np.zeros(3), eps=-1e-5)
    with pytest.raises(NegativeEpsilonError):
        fold_batch_norm_into_linear(
            np.ones((2, 2)), None, np.ones(2), np.zeros(2), BatchNormState.initial(2), eps=-1.0
        )


def test_zero_eps_on_a_constant_set_is_degenerate():
    X = np.array([[1.0, 2.0], [1.0, 5.0]])  # column 0 constant
    with pytest.raises(DegenerateNormalizationError, match="eps > 0"):
        batch_norm(X, np.ones(2), np.zeros(2), eps=0.0)
    state = BatchNormState(np.zeros(2), np.array([1.0, 0.0]))
    with pytest.raises(DegenerateNormalizationError):
        batch_norm_eval(X, np.ones(2), np.zeros(2), state, eps=0.0)


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


def test_layer_shape_errors():
    with pytest.raises(WeightShapeError, match=r"X \(2, 3\) and W \(4, 2\)"):
        linear(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(WeightShapeError, match="b must have shape"):
        linear(np.ones((2, 3)), np.ones((4, 3)), np.ones(3))
    with pytest.raises(WeightShapeError, match="matching C_in"):
        conv2d(np.ones((1, 2, 4, 4)), np.ones((3, 1, 2, 2)))
    with pytest.raises(WeightShapeError, match="larger than the padded input"):
        conv2d(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3)))
    with pytest.raises(ShapeError, match="stride"):
        conv2d(np.ones((1, 1, 4, 4)), np.ones((1, 1, 2, 2)), stride=0)
    with pytest.raises(AffineShapeError, match="has 3 outputs"):
        fold_batch_norm_into_conv2d(
            np.ones((3, 1, 2, 2)), None, np.ones(2), np.zeros(3), BatchNormState.initial(3)
        )


def test_every_layer_error_is_a_value_error():
    for error in (
        AffineShapeError,
        IndivisibleGroupsError,
        MomentumRangeError,
        RunningStateShapeError,
        SingleValuePerChannelError,
        UnknownChoiceError,
        UnsupportedRankError,
        WeightShapeError,
    ):
        assert issubclass(error, TrainableError) and issubclass(error, ValueError)


# ---------------------------------------------------------------------------
# Scale before you square: every magnitude of float16, float32 and float64
# ---------------------------------------------------------------------------

FLOAT_DTYPES = (np.float16, np.float32, np.float64)


@st.composite
def batches_at_any_magnitude(draw, dtype):
    """A layer case with data ``(offset + N(0, 1)) 2**k`` in ``dtype``, k over its range.

    The offset (up to ``2**p`` for a ``p``-bit significand) makes some sets ill-conditioned;
    ``k`` runs from the subnormals to near the largest finite value.
    """
    kind, shape, num_groups, seed = draw(layer_cases(max_side=2))
    finfo = np.finfo(dtype)
    precision = int(finfo.nmant) + 1
    exponent = draw(st.integers(int(finfo.minexp) - precision, int(finfo.maxexp) - precision - 4))
    offset_bits = draw(st.integers(0, precision))
    rng = np.random.default_rng(seed)
    data = rng.uniform(-1, 1) * 2.0**offset_bits + rng.standard_normal(shape)
    with np.errstate(under="ignore"):
        X = np.ldexp(data, exponent).astype(dtype)
    assume(np.isfinite(X).all())
    return kind, X, num_groups


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), eps=st.sampled_from([0.0, 1e-5, 1.0]))
def test_layers_are_accurate_at_every_magnitude(dtype, data, eps):
    kind, X, num_groups = data.draw(batches_at_any_magnitude(dtype))
    C = channels(X.shape)
    sets = naive_reduction_sets(kind, X.shape, num_groups)
    try:
        Y = apply_normalization(
            kind, X, np.ones(C), np.zeros(C), eps=eps, num_groups=num_groups, dtype=dtype
        )
    except DegenerateNormalizationError:
        # Refused only when some set is truly constant and eps = 0.
        assert eps == 0.0 and any(len({X[i] for i in s}) == 1 for s in sets)
        return
    assert Y.dtype == dtype
    for index_set in sets:
        values = [X[i] for i in index_set]
        reference = exact_standardized(values, eps)
        if max(abs(r) for r in reference) == 0:
            assert all(Y[i] == 0 for i in index_set)  # one value, or eps on a constant set
            continue
        errors = normwise_ulps([Y[i] for i in index_set], reference, dtype)
        assert errors <= centered_ulp_bound(len(index_set))


def test_the_cases_of_issue_10():
    np.testing.assert_array_equal(batch_norm([[-1e300], [1e300]], [1], [0]), [[-1.0], [1.0]])
    tiny = np.array([[0, 1e-25]], np.float32)
    Y = layer_norm(tiny, [1, 1], [0, 0], eps=0, dtype=np.float32)
    np.testing.assert_array_equal(Y, np.array([[-1.0, 1.0]], np.float32))
    half = np.array([[0.0, 1000.0], [1.0, -1000.0]], np.float16)
    Y = batch_norm(half, [1, 1], [0, 0], eps=0, dtype=np.float16)
    np.testing.assert_array_equal(Y, np.array([[-1, 1], [1, -1]], np.float16))


def test_batch_statistics_at_huge_values_report_an_overflowing_variance_only():
    stats = batch_statistics([[-1e300, 1.0], [1e300, 3.0]])
    np.testing.assert_array_equal(stats.mean, [0.0, 2.0])
    assert stats.population_variance[0] == np.inf  # 1e600 is beyond float64
    assert stats.population_variance[1] == 1.0
    with pytest.raises(MomentOverflowError, match="channel 0"):
        update_running_statistics(BatchNormState.initial(2), [[-1e300, 1.0], [1e300, 3.0]])


def test_eval_mode_and_folding_do_not_overflow_on_the_way():
    # x - running_mean = 2e308 overflows, but divided by sqrt(running_variance) = 1e10 it
    # is 2e298; running_variance + eps overflows, its root does not.
    state = BatchNormState(np.array([-1e308]), np.array([1e20]))
    Y = batch_norm_eval(np.array([[1e308]]), [1.0], [0.0], state, eps=0.0)
    np.testing.assert_allclose(Y, [[2e298]], rtol=4 * UNIT_ROUNDOFF)
    wide = BatchNormState(np.array([0.0]), np.array([1.7e308]))
    Y = batch_norm_eval(np.array([[1.3e154]]), [1.0], [0.0], wide, eps=1.7e308)
    np.testing.assert_allclose(Y, [[1.3e154 / math.sqrt(3.4) / 1e154]], rtol=8 * UNIT_ROUNDOFF)
    # gamma * x_hat overflows, beta brings it back: 1e308 * 2 - 1.5e308 = 5e307.
    unit = BatchNormState(np.array([0.0]), np.array([1.0]))
    Y = batch_norm_eval(np.array([[2.0]]), [1e308], [-1.5e308], unit, eps=0.0)
    np.testing.assert_allclose(Y, [[5e307]], rtol=4 * UNIT_ROUNDOFF)
    W, b = fold_batch_norm_into_linear(
        np.array([[1.0]]), [1e308], [1.0], [0.0], BatchNormState([-1e308], [4.0]), eps=0.0
    )
    # s = 1/sqrt(4) = 0.5 and b - running_mean = 2e308 (beyond range): b' = 1e308.
    np.testing.assert_array_equal(W, [[0.5]])
    np.testing.assert_allclose(b, [1e308], rtol=4 * UNIT_ROUNDOFF)


def test_results_beyond_range_are_infinite_without_a_warning():
    state = BatchNormState(np.array([0.0]), np.array([0.0]))
    Y = batch_norm_eval(np.array([[1e300]]), [1.0], [0.0], state, eps=1e-300)
    assert Y[0, 0] == np.inf  # 1e300 / 1e-150 = 1e450
    # gamma = 0 makes any x_hat, even one beyond range, contribute exactly 0.
    Y = batch_norm_eval(np.array([[1e300]]), [0.0], [0.25], state, eps=1e-300)
    assert Y[0, 0] == 0.25


# ---------------------------------------------------------------------------
# Arguments that were accepted silently
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: batch_norm_eval_flops((-1, 3)), CountError, r"shape\[0\].*got -1"),
        (lambda: batch_norm_eval_flops((2, 3.0)), CountError, r"shape\[1\].*float"),
        (lambda: batch_norm_eval_flops((2, True)), CountError, r"shape\[1\].*bool"),
        (lambda: batch_norm_eval_flops(6), CountError, "tuple"),
        (lambda: batch_norm_eval_flops((2, 3), preceding_bias="no"), UnknownChoiceError, "bias"),
        (lambda: values_per_statistic("batch", (2.9, 3)), CountError, r"shape\[0\].*2\.9"),
        (lambda: statistic_labels("batch", (-2, 3)), CountError, r"shape\[0\]"),
        (lambda: values_per_statistic(["batch"], (2, 3)), UnknownChoiceError, "kind"),
        (lambda: reduction_axes("batch", "2"), UnsupportedRankError, r"ndim.*'2' \(str\)"),
        (lambda: reduction_axes("batch", 2.0), UnsupportedRankError, "ndim"),
        (lambda: reduction_axes("batch", True), UnsupportedRankError, "bool"),
        (
            lambda: group_norm(np.ones((2, 4)), np.ones(4), np.zeros(4), num_groups=True),
            IndivisibleGroupsError,
            "num_groups.*bool",
        ),
        (
            lambda: group_norm(np.ones((2, 4)), np.ones(4), np.zeros(4), num_groups=np.inf),
            IndivisibleGroupsError,
            "num_groups.*inf",
        ),
        (
            lambda: group_norm(np.ones((2, 4)), np.ones(4), np.zeros(4), num_groups=2.0),
            IndivisibleGroupsError,
            "num_groups.*float",
        ),
        (
            lambda: batch_norm(np.ones((2, 2)), [1, 1], [0, 0], eps=True),
            UnsupportedDtypeError,
            "eps",
        ),
        (
            lambda: batch_norm(np.ones((2, 2)), [1, 1], [0, 0], eps="0.1"),
            UnsupportedDtypeError,
            "eps",
        ),
        (
            lambda: batch_norm(np.ones((2, 2)), [1, 1], [0, 0], eps=-1e-5),
            NegativeEpsilonError,
            "eps",
        ),
        (
            lambda: batch_norm(np.ones((2, 2)), [1, 1], [0, 0], eps=np.nan),
            NonFiniteInputError,
            "eps",
        ),
        (lambda: batch_norm(np.ones((2, 2), bool), [1, 1], [0, 0]), UnsupportedDtypeError, "bool"),
        (
            lambda: batch_norm(np.ones((2, 2)), [True, True], [0, 0]),
            UnsupportedDtypeError,
            "gamma",
        ),
        (
            lambda: batch_norm(np.ones((2, 2)), [1, 1], [0, 0], dtype=np.int32),
            UnsupportedDtypeError,
            "dtype",
        ),
        (
            lambda: batch_norm(np.ones((2, 2), object), [1, 1], [0, 0]),
            UnsupportedDtypeError,
            "object",
        ),
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
        (
            lambda: conv2d(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), stride=True),
            ShapeError,
            "stride.*bool",
        ),
        (
            lambda: conv2d(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), padding=1.0),
            ShapeError,
            "padding.*float",
        ),
    ],
)
def test_silent_acceptances_are_specific_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_no_function_writes_into_its_inputs():
    def frozen(array):
        array = np.array(array, dtype=float)
        array.flags.writeable = False  # an in-place write raises
        return array

    X, gamma, beta = frozen([[1.0, 5.0], [3.0, -2.0]]), frozen([1.0, 2.0]), frozen([0.0, 1.0])
    kept = [a.copy() for a in (X, gamma, beta)]
    state = BatchNormState(frozen([0.5, 0.0]), frozen([1.0, 2.0]))
    for kind in KINDS[:2]:
        apply_normalization(kind, X, gamma, beta, eps=1e-5)
    group_norm(X, gamma, beta, num_groups=1)
    batch_norm_train(X, gamma, beta, state)
    batch_norm_eval(X, gamma, beta, state)
    batch_statistics(X)
    W = frozen([[1.0, 2.0], [3.0, 4.0]])
    fold_batch_norm_into_linear(W, beta, gamma, beta, state)
    linear(X, W, beta)
    for original, after in zip(kept, (X, gamma, beta), strict=True):
        np.testing.assert_array_equal(original, after)
