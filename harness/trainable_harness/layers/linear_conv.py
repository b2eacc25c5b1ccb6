"""The layers batch norm is folded into: a linear layer and a direct 2-D convolution.

Both follow PyTorch's conventions (``nn.Linear``: ``Y = X W^T + b``; ``nn.Conv2d``:
cross-correlation with zero padding) and the package's dtype contract.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from trainable_harness.errors import ShapeError, WeightShapeError, check_real_array
from trainable_harness.layers.inputs import _count
from trainable_harness.layers.safe_arithmetic import _check_representable

__all__ = ["conv2d", "linear"]


def linear(X, W, b=None, *, dtype=np.float64) -> np.ndarray:
    """Affine layer ``Y = X W^T + b`` (the convention of PyTorch's ``nn.Linear``).

    Parameters
    ----------
    X : array_like, shape ``(..., d_in)``
    W : array_like, shape ``(d_out, d_in)``
    b : array_like, shape ``(d_out,)``, optional (no bias if None)

    Returns
    -------
    numpy.ndarray, shape ``(..., d_out)``

    Where a product or a partial sum overflows, ``X`` and ``W`` are divided by powers of
    two first (exact) and the result multiplied back, so an entry is refused only if its
    exact value is beyond the dtype's range.

    Raises
    ------
    WeightShapeError, NonFiniteInputError, UnsupportedDtypeError
    ResultOverflowError
        An output whose exact value is beyond the dtype's range (``1e200 * 1e200``), named.

    Examples
    --------
    >>> linear(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0], [0.0, 3.0]]), np.array([0.5, 0.0]))
    array([[3.5, 6. ]])
    """
    X = check_real_array(X, "X", dtype)
    W = check_real_array(W, "W", dtype)
    if W.ndim != 2 or X.ndim < 1 or X.shape[-1] != W.shape[1]:
        raise WeightShapeError(
            f"linear needs X of shape (..., d_in) and W of shape (d_out, d_in); got X "
            f"{X.shape} and W {W.shape}"
        )
    bias = None if b is None else _as_bias(b, W.shape[0], dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # redone below if so
        Y = X @ W.T
        if bias is not None:
            Y = Y + bias
    if not np.isfinite(Y).all():
        Y = _rescaled(Y, lambda x, w: x @ w.T, X, W, bias, None)
        _check_representable(
            Y,
            "linear's output X W^T + b",
            lambda index: (
                f"its products X[..., :] W[{index[-1]}, :] sum beyond range (max|X| = "
                f"{np.max(np.abs(X)):.4g}, max|W| = {np.max(np.abs(W)):.4g}); rescale X or W"
            ),
        )
    return Y


def _exponent(array: np.ndarray) -> int:
    """``k`` with ``max|array| = f 2**k``, ``0.5 <= f < 1`` (0 for an all-zero array)."""
    largest = np.max(np.abs(array)) if array.size else 0
    return int(np.frexp(largest)[1]) if largest > 0 else 0


def _rescaled(Y, product, X, W, bias, bias_shape) -> np.ndarray:
    """Redo the entries of ``Y = product(X, W) + bias`` that are not finite, scaled.

    ``X`` and ``W`` are divided by powers of two ``2**kx``, ``2**kw`` near their largest
    magnitudes (exact), so their products and sums stay far below the overflow threshold;
    the bias enters divided by ``2**(kx + kw)`` and the sum is multiplied back. An entry
    is then ``+-inf`` only where its exact value is beyond the dtype's range (or within
    rounding of it).
    """
    kx, kw = _exponent(X), _exponent(W)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        scaled = product(np.ldexp(X, -kx), np.ldexp(W, -kw))
        if bias is not None:
            scaled_bias = np.ldexp(bias, -(kx + kw))
            scaled = scaled + (
                scaled_bias if bias_shape is None else scaled_bias.reshape(bias_shape)
            )
        exact = np.ldexp(scaled, kx + kw)
    return np.where(np.isfinite(Y), Y, exact)


def _as_bias(b, num_outputs: int, dtype) -> np.ndarray:
    b = check_real_array(b, "b", dtype)
    if b.shape != (num_outputs,):
        raise WeightShapeError(
            f"b has shape {b.shape}; the layer has {num_outputs} outputs, so b must have "
            f"shape ({num_outputs},)"
        )
    return b


def conv2d(X, K, b=None, *, stride: int = 1, padding: int = 0, dtype=np.float64) -> np.ndarray:
    """Direct 2-D convolution (cross-correlation, as deep-learning frameworks compute it).

    ``Y[n, o, i, j] = b[o] + sum_{c, u, v} K[o, c, u, v] * Xp[n, c, i*stride + u,
    j*stride + v]`` with ``Xp`` the input zero-padded by ``padding`` on each spatial side.
    Computed without Python loops (``sliding_window_view`` and ``einsum``).

    Parameters
    ----------
    X : array_like, shape ``(B, C_in, H, W)``
    K : array_like, shape ``(C_out, C_in, kh, kw)``
    b : array_like, shape ``(C_out,)``, optional
    stride : int >= 1
    padding : int >= 0

    Returns
    -------
    numpy.ndarray, shape ``(B, C_out, (H + 2p - kh)//stride + 1, (W + 2p - kw)//stride + 1)``

    Raises
    ------
    WeightShapeError
        Ranks or channel counts do not fit, the kernel is empty (``kh`` or ``kw`` is 0), or
        it is larger than the padded input.
    ShapeError
        ``stride < 1`` or ``padding < 0``.
    NonFiniteInputError
    ResultOverflowError
        An output whose exact value is beyond the dtype's range (products and partial sums
        that overflow on the way are redone with ``X`` and ``K`` scaled by powers of two).

    Examples
    --------
    >>> X = np.arange(9.0).reshape(1, 1, 3, 3)
    >>> conv2d(X, np.ones((1, 1, 2, 2)), np.array([0.5]))
    array([[[[ 8.5, 12.5],
             [20.5, 24.5]]]])
    """
    X = check_real_array(X, "X", dtype)
    K = check_real_array(K, "K", dtype)
    if X.ndim != 4 or K.ndim != 4 or X.shape[1] != K.shape[1]:
        raise WeightShapeError(
            f"conv2d needs X of shape (B, C_in, H, W) and K of shape (C_out, C_in, kh, kw) "
            f"with matching C_in; got X {X.shape} and K {K.shape}"
        )
    stride = _count(stride, "stride", minimum=1, error=ShapeError)
    padding = _count(padding, "padding", error=ShapeError)
    kh, kw = K.shape[2:]
    if kh == 0 or kw == 0:
        # A 0-wide window would give an output wider than the input, holding only b.
        raise WeightShapeError(f"K has shape {K.shape}; its kernel kh x kw must be at least 1x1")
    padded = np.pad(X, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    if padded.shape[2] < kh or padded.shape[3] < kw:
        raise WeightShapeError(
            f"kernel {kh}x{kw} is larger than the padded input {padded.shape[2]}x"
            f"{padded.shape[3]} (X {X.shape}, padding {padding})"
        )
    windows = sliding_window_view(padded, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    bias = None if b is None else _as_bias(b, K.shape[0], dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # redone below if so
        Y = np.einsum("ncijuv,ocuv->noij", windows, K)
        if bias is not None:
            Y = Y + bias.reshape(1, -1, 1, 1)
    if not np.isfinite(Y).all():
        Y = _rescaled(
            Y, lambda x, k: np.einsum("ncijuv,ocuv->noij", x, k), windows, K, bias, (1, -1, 1, 1)
        )
        _check_representable(
            Y,
            "conv2d's output",
            lambda index: (
                f"the products of kernel K[{index[1]}] with its window sum beyond range "
                f"(max|X| = {np.max(np.abs(X)):.4g}, max|K| = {np.max(np.abs(K)):.4g}); "
                "rescale X or K"
            ),
        )
    return Y
