"""Tests of trainable_harness.layers.normalize: the four layers (eqs. 16.1-16.4).

The forward pass is cross-checked against the naive loops of ``layer_reference``, and
against exact rational arithmetic at every magnitude of float16, float32 and float64.
"""

from __future__ import annotations

import numpy as np
import pytest
from exact_reference import centered_ulp_bound, exact_standardized, normwise_ulps
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from layer_reference import (
    CROSS_CHECK,
    FAST,
    UNIT_ROUNDOFF,
    channels,
    labels_from_naive_sets,
    layer_cases,
    naive_normalize,
    naive_reduction_sets,
    random_affine,
    random_batch,
)

from trainable_harness.errors import (
    DegenerateNormalizationError,
    IndivisibleGroupsError,
    NegativeEpsilonError,
    NonFiniteInputError,
    ResultOverflowError,
    UnsupportedDtypeError,
    UnsupportedRankError,
)
from trainable_harness.layers import (
    BatchNormState,
    apply_normalization,
    batch_norm,
    batch_norm_eval,
    fold_batch_norm_into_linear,
    group_norm,
    instance_norm,
    layer_norm,
    reduction_axes,
    values_per_statistic,
)


def lattice_batch(shape, seed):
    """Values k/4 with |k| <= 40: exactly representable, so a constant set is exactly so."""
    rng = np.random.default_rng(seed)
    return rng.integers(-40, 41, size=shape) / 4.0


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


def test_naive_reference_can_disagree():
    """The cross-check is not vacuous: BN and LN give different answers on the same data."""
    X = random_batch((3, 4), seed=0)
    gamma, beta = np.ones(4), np.zeros(4)
    assert (
        np.abs(naive_normalize("layer", X, gamma, beta, 1e-5) - batch_norm(X, gamma, beta)).max()
        > 0.1
    )


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


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4, 5, 6)])
def test_wrong_rank_names_the_shape_and_accepted_ranks(shape):
    with pytest.raises(UnsupportedRankError, match=r"got X of shape .* accepts 2-D \(B, d\)"):
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


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
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
    ],
)
def test_silent_acceptances_are_specific_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_outputs_beyond_range_are_refused_naming_gamma_and_beta():
    # gamma = beta = 1e308: gamma x_hat + beta is beyond float64 where x_hat > 0.8 (was inf).
    X = np.array([[1.0], [3.0]])
    with pytest.raises(ResultOverflowError, match=r"index \(1, 0\).*gamma\[0\].*beta\[0\]"):
        batch_norm(X, [1e308], [1e308], eps=0.0)
    # Where the product overflows but beta brings the sum back, the output is computed.
    Y = batch_norm(np.array([[0.0], [0.0], [3.0]]), [1.5e308], [-0.5e308], eps=0.0)
    np.testing.assert_allclose(Y[2], [2 * (0.75e308 * np.sqrt(2) - 0.25e308)], rtol=1e-15)
    with pytest.raises(ResultOverflowError, match="layer norm's output"):
        layer_norm(np.array([[1.0, 3.0]], np.float16), [6e4, 6e4], [6e4, 6e4], dtype=np.float16)
