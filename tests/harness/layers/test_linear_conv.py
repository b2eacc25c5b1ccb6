"""Tests of trainable_harness.layers.linear_conv: the linear layer and the direct convolution."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from layer_reference import FAST

from trainable_harness.errors import (
    AffineShapeError,
    ResultOverflowError,
    ShapeError,
    WeightShapeError,
)
from trainable_harness.layers import BatchNormState, conv2d, fold_batch_norm_into_conv2d, linear


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


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
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


# --- sums and products beyond range ---------------------------------------------------


def test_linear_redoes_spurious_overflows_and_refuses_results_beyond_range():
    # 1e308 + 1e308 - 1e308 overflows on the way; the result 1e308 does not (was inf).
    np.testing.assert_array_equal(linear([[1e308, 1e308, -1e308]], np.ones((1, 3))), [[1e308]])
    # float16: 300 * 300 = 90000 overflows on the way; 300 * 300 - 300 * 299 = 300 fits.
    Y = linear(
        np.array([[300.0, 300.0]], np.float16),
        np.array([[300.0, -299.0]], np.float16),
        np.array([0.0], np.float16),
        dtype=np.float16,
    )
    assert Y.dtype == np.float16 and Y[0, 0] == 300.0
    # 1e200 * 1e200 = 1e400 is beyond float64: refused, naming X and W (was inf).
    with pytest.raises(ResultOverflowError, match=r"linear's output.*max\|X\| = 1e\+200.*W"):
        linear([[1e200]], [[1e200]])


def test_conv2d_redoes_spurious_overflows_and_refuses_results_beyond_range():
    X = np.array([1e308, 1e308, -1e308]).reshape(1, 1, 1, 3)
    np.testing.assert_array_equal(conv2d(X, np.ones((1, 1, 1, 3))), [[[[1e308]]]])
    np.testing.assert_array_equal(conv2d(X, np.ones((1, 1, 1, 3)), [-1e308]), [[[[0.0]]]])
    with pytest.raises(ResultOverflowError, match=r"conv2d's output.*K\[0\].*rescale X or K"):
        conv2d(np.full((1, 1, 1, 1), 1e200), np.full((1, 1, 1, 1), 1e200))


@pytest.mark.parametrize("kernel", [(2, 0), (0, 2), (0, 0)])
def test_conv2d_refuses_an_empty_kernel(kernel):
    # Before: a 0-wide window gave an output wider than the input, holding only b.
    X = np.ones((1, 2, 3, 3))
    with pytest.raises(WeightShapeError, match=r"K has shape .* at least 1x1"):
        conv2d(X, np.ones((1, 2, *kernel)), np.array([0.5]))
