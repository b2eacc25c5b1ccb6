"""Tests of trainable_harness.mlp.layers: every backward pass against central differences."""

import numpy as np
import pytest
from finite_differences import FD_TOL, numeric_gradient

from trainable_harness.errors import (
    DegenerateNormalizationError,
    ResultOverflowError,
    ShapeError,
    UnsupportedDtypeError,
)
from trainable_harness.layers import batch_norm
from trainable_harness.mlp import (
    BN_EPS,
    batch_norm_backward,
    batch_norm_forward,
    linear_backward,
    linear_forward,
    relu_backward,
    relu_forward,
    softmax_cross_entropy,
    softmax_cross_entropy_backward,
)

RNG = np.random.default_rng(0)
X = RNG.normal(size=(6, 4))
W = RNG.normal(size=(4, 3))
B = RNG.normal(size=3)
UPSTREAM = RNG.normal(size=(6, 3))


def test_linear_backward():
    dX, dW, db = linear_backward(UPSTREAM, X, W)
    loss = lambda X_, W_, b_: np.sum(UPSTREAM * linear_forward(X_, W_, b_))  # noqa: E731
    np.testing.assert_allclose(dX, numeric_gradient(lambda v: loss(v, W, B), X), atol=FD_TOL)
    np.testing.assert_allclose(dW, numeric_gradient(lambda v: loss(X, v, B), W), atol=FD_TOL)
    np.testing.assert_allclose(db, numeric_gradient(lambda v: loss(X, W, v), B), atol=FD_TOL)


def test_relu_backward_away_from_the_kink():
    Z = RNG.normal(size=(6, 3))
    Z[np.abs(Z) < 1e-3] = 0.5  # central differences are undefined at 0
    numeric = numeric_gradient(lambda v: np.sum(UPSTREAM * relu_forward(v)), Z)
    np.testing.assert_allclose(relu_backward(UPSTREAM, Z), numeric, atol=FD_TOL)


@pytest.mark.parametrize("eps", [0.0, BN_EPS, 0.5])
def test_batch_norm_backward(eps):
    Z = RNG.normal(size=(6, 3)) * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]
    gamma, beta = RNG.normal(size=3), RNG.normal(size=3)

    def loss(Z_, g_, b_):
        return np.sum(UPSTREAM * batch_norm_forward(Z_, g_, b_, eps)[0])

    _, cache = batch_norm_forward(Z, gamma, beta, eps)
    dZ, dgamma, dbeta = batch_norm_backward(UPSTREAM, cache, gamma)
    np.testing.assert_allclose(
        dZ, numeric_gradient(lambda v: loss(v, gamma, beta), Z), atol=FD_TOL
    )
    np.testing.assert_allclose(
        dgamma, numeric_gradient(lambda v: loss(Z, v, beta), gamma), atol=FD_TOL
    )
    np.testing.assert_allclose(
        dbeta, numeric_gradient(lambda v: loss(Z, gamma, v), beta), atol=FD_TOL
    )


def test_batch_norm_forward_equals_the_harness_layer():
    Z = RNG.normal(size=(7, 5)) * 3 + 1
    gamma, beta = RNG.normal(size=5), RNG.normal(size=5)
    ours, _ = batch_norm_forward(Z, gamma, beta, BN_EPS)
    # Two implementations, two orders of operations: a few roundings of values near 1.
    np.testing.assert_allclose(ours, batch_norm(Z, gamma, beta, eps=BN_EPS), atol=1e-14)


def test_softmax_cross_entropy_backward_and_value():
    logits = RNG.normal(size=(6, 4)) * 3
    labels = np.array([0, 3, 1, 1, 2, 0])
    numeric = numeric_gradient(lambda v: softmax_cross_entropy(v, labels), logits)
    np.testing.assert_allclose(
        softmax_cross_entropy_backward(logits, labels), numeric, atol=FD_TOL
    )
    naive = np.mean(
        [np.log(np.sum(np.exp(r))) - r[k] for r, k in zip(logits, labels, strict=True)]
    )
    assert abs(softmax_cross_entropy(logits, labels) - naive) < 1e-14


LOGITS = np.random.default_rng(5).normal(size=(3, 4))


@pytest.mark.parametrize(
    ("labels", "error", "message"),
    [
        # -1 used to pick the last class, 4 used to raise numpy's IndexError.
        (np.array([0, -1, 2]), ShapeError, r"labels\[1\] = -1 is not a class index in \[0, 4\)"),
        (np.array([0, 4, 2]), ShapeError, r"labels\[1\] = 4 is not a class index in \[0, 4\)"),
        # One label broadcast over three rows used to be accepted.
        (np.array([1]), ShapeError, r"labels have shape \(1,\).*shape \(3,\)"),
        (np.array([[0, 1, 2]]), ShapeError, r"labels have shape \(1, 3\)"),
        (np.array([0.0, 1.0, 2.0]), UnsupportedDtypeError, "labels have dtype float64"),
        (np.array([True, False, True]), UnsupportedDtypeError, "labels have dtype bool"),
    ],
)
def test_cross_entropy_refuses_labels_that_are_not_one_class_per_row(labels, error, message):
    for function in (softmax_cross_entropy, softmax_cross_entropy_backward):
        with pytest.raises(error, match=message):
            function(LOGITS, labels)


def test_layers_refuse_results_beyond_range_and_bad_arrays():
    with pytest.raises(ResultOverflowError, match="X W \\+ b at index \\(0, 0\\)"):
        linear_forward(np.array([[1e200]]), np.array([[1e200]]))
    with pytest.raises(ShapeError, match="fan-in"):
        linear_forward(np.ones((2, 3)), np.ones((2, 3)))
    # The squares of 1e200 overflow: the variance was inf and the output silently 0.
    with pytest.raises(ResultOverflowError, match="variance of Z leaves float64's range"):
        batch_norm_forward(np.array([[-1e200], [1e200]]), np.ones(1), np.zeros(1))
    with pytest.raises(DegenerateNormalizationError, match="constant"):
        batch_norm_forward(np.ones((3, 1)), np.ones(1), np.zeros(1), eps=0.0)
    with pytest.raises(UnsupportedDtypeError, match="Z has dtype bool"):
        relu_forward(np.array([True]))
    with pytest.raises(ResultOverflowError, match="cross-entropy"):
        softmax_cross_entropy(np.array([[1e308, -1e308]]), np.array([1]))


def test_replica_axes_of_gamma_and_beta_must_fit_the_batch():
    # gamma (1, 3) against Z (5, 3) made numpy's in-place add fail with its own ValueError.
    with pytest.raises(ShapeError, match=r"gamma has shape \(1, 3\).*batch's \(\)"):
        batch_norm_forward(np.ones((5, 3)) * np.arange(5)[:, None], np.ones((1, 3)), np.zeros(3))


def test_batch_norm_forward_at_the_ends_of_the_range_raises_without_a_warning():
    # max - min of +-1.7e308 overflows inside the check: no RuntimeWarning may escape.
    with pytest.raises(ResultOverflowError, match="variance of Z"):
        batch_norm_forward(np.array([[1.7e308], [-1.7e308]]), np.ones(1), np.zeros(1))


def test_a_batch_of_one_example_gives_beta_and_a_zero_gradient():
    # Documented: with n = 1, Z - mean = 0, so Y = beta whatever Z, and dZ = 0.
    Z, beta = np.array([[3.0, -4.0e6]]), np.array([0.5, -1.0])
    Y, cache = batch_norm_forward(Z, np.array([2.0, 3.0]), beta)
    np.testing.assert_array_equal(Y, beta[None])
    dZ = batch_norm_backward(np.ones((1, 2)), cache, np.array([2.0, 3.0]))[0]
    np.testing.assert_array_equal(dZ, np.zeros((1, 2)))
