"""Tests of trainable_harness.layers.folding: eq. 16.6 and the work folding removes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from layer_reference import FAST, UNIT_ROUNDOFF

from trainable_harness.errors import CountError, UnknownChoiceError, UnsupportedRankError
from trainable_harness.layers import (
    BatchNormState,
    batch_norm_eval,
    batch_norm_eval_flops,
    conv2d,
    fold_batch_norm_into_conv2d,
    fold_batch_norm_into_linear,
    linear,
)


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


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: batch_norm_eval_flops((-1, 3)), CountError, r"shape\[0\].*got -1"),
        (lambda: batch_norm_eval_flops((2, 3.0)), CountError, r"shape\[1\].*float"),
        (lambda: batch_norm_eval_flops((2, True)), CountError, r"shape\[1\].*bool"),
        (lambda: batch_norm_eval_flops(6), CountError, "tuple"),
        (lambda: batch_norm_eval_flops((2, 3), preceding_bias="no"), UnknownChoiceError, "bias"),
    ],
)
def test_silent_acceptances_are_specific_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_eval_flops_of_a_wrong_rank_names_shape():
    # The rank message names the argument the caller passed: here ``shape``, not X.
    with pytest.raises(UnsupportedRankError, match=r"batch norm got shape \(4,\) \(rank 1\)"):
        batch_norm_eval_flops((4,))
