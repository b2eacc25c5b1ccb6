"""The layers batch norm is folded into: a linear layer and a direct 2-D convolution.

Both follow PyTorch's conventions (``nn.Linear``: ``Y = X W^T + b``; ``nn.Conv2d``:
cross-correlation with zero padding) and the package's dtype contract.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from trainable_harness.errors import ShapeError, WeightShapeError
from trainable_harness.layers.inputs import _as_float, _count

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

    Raises
    ------
    WeightShapeError, NonFiniteInputError, UnsupportedDtypeError

    Examples
    --------
    >>> linear(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0], [0.0, 3.0]]), np.array([0.5, 0.0]))
    array([[3.5, 6. ]])
    """
    X = _as_float(X, "X", dtype)
    W = _as_float(W, "W", dtype)
    if W.ndim != 2 or X.ndim < 1 or X.shape[-1] != W.shape[1]:
        raise WeightShapeError(
            f"linear needs X of shape (..., d_in) and W of shape (d_out, d_in); got X "
            f"{X.shape} and W {W.shape}"
        )
    Y = X @ W.T
    if b is not None:
        Y = Y + _as_bias(b, W.shape[0], dtype)
    return Y


def _as_bias(b, num_outputs: int, dtype) -> np.ndarray:
    b = _as_float(b, "b", dtype)
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
        Ranks or channel counts do not fit, or the kernel is larger than the padded input.
    ShapeError
        ``stride < 1`` or ``padding < 0``.
    NonFiniteInputError

    Examples
    --------
    >>> X = np.arange(9.0).reshape(1, 1, 3, 3)
    >>> conv2d(X, np.ones((1, 1, 2, 2)), np.array([0.5]))
    array([[[[ 8.5, 12.5],
             [20.5, 24.5]]]])
    """
    X = _as_float(X, "X", dtype)
    K = _as_float(K, "K", dtype)
    if X.ndim != 4 or K.ndim != 4 or X.shape[1] != K.shape[1]:
        raise WeightShapeError(
            f"conv2d needs X of shape (B, C_in, H, W) and K of shape (C_out, C_in, kh, kw) "
            f"with matching C_in; got X {X.shape} and K {K.shape}"
        )
    stride = _count(stride, "stride", minimum=1, error=ShapeError)
    padding = _count(padding, "padding", error=ShapeError)
    kh, kw = K.shape[2:]
    padded = np.pad(X, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    if padded.shape[2] < kh or padded.shape[3] < kw:
        raise WeightShapeError(
            f"kernel {kh}x{kw} is larger than the padded input {padded.shape[2]}x"
            f"{padded.shape[3]} (X {X.shape}, padding {padding})"
        )
    windows = sliding_window_view(padded, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    Y = np.einsum("ncijuv,ocuv->noij", windows, K)
    if b is not None:
        Y = Y + _as_bias(b, K.shape[0], dtype).reshape(1, -1, 1, 1)
    return Y
