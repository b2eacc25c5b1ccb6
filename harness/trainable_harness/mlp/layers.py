"""The layers of the MLP, each with its backward pass written out.

Linear, ReLU, batch norm in train mode over the example axis ``-2`` (eqs. 16.1-16.4) and
softmax cross-entropy; each public function checks its arguments and has an unchecked
form (``_linear_forward``, ...) that the training loop calls.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.errors import (
    DegenerateNormalizationError,
    ResultOverflowError,
    ShapeError,
)
from trainable_harness.mlp.checks import (
    _broadcast_into,
    _check_bool,
    _check_labels,
    _check_result,
    _real_array,
)
from trainable_harness.normalization import root_of_sum, validated_eps

__all__ = [
    "batch_norm_backward",
    "batch_norm_forward",
    "linear_backward",
    "linear_forward",
    "relu_backward",
    "relu_forward",
    "softmax_cross_entropy",
    "softmax_cross_entropy_backward",
]


BN_EPS = 1e-5  # PyTorch's default, added to the population variance


def linear_forward(X, W, b=None) -> np.ndarray:
    """``Y = X W + b`` with replica axes: ``X (..., n, i)``, ``W (..., i, o)``, ``b (..., o)``.

    Raises
    ------
    ShapeError
        Shapes that do not fit (the message names them).
    NonFiniteInputError, UnsupportedDtypeError
        NaN/inf, or bool, complex or object arrays.
    ResultOverflowError
        An output beyond float64's range.

    Examples
    --------
    >>> linear_forward(np.ones((2, 3)), np.ones((3, 1)), np.array([0.5]))
    array([[3.5],
           [3.5]])
    """
    X, W = _real_array(X, "X", min_ndim=2), _real_array(W, "W", min_ndim=2)
    if X.shape[-1] != W.shape[-2]:
        raise ShapeError(f"X {X.shape} and W {W.shape}: X's last axis must match W's fan-in")
    if b is not None:
        b = _real_array(b, "b")
        if b.shape[-1] != W.shape[-1]:
            raise ShapeError(f"b {b.shape} and W {W.shape}: b needs one value per output")
    with np.errstate(over="ignore", invalid="ignore"):
        Y = _linear_forward(X, W, b)
    return _check_result(Y, "X W + b", "X, W or b")


def _linear_forward(X, W, b=None) -> np.ndarray:
    Y = np.matmul(X, W)
    return Y if b is None else Y + b[..., None, :]


def linear_backward(dY, X, W, with_bias: bool = True):
    """Gradients of ``Y = X W + b``: returns ``(dX, dW, db)`` (``db`` None without bias).

    Examples
    --------
    >>> dX, dW, db = linear_backward(np.ones((2, 1)), np.ones((2, 3)), np.ones((3, 1)))
    >>> dX.shape, dW.shape, db.tolist()
    ((2, 3), (3, 1), [2.0])
    """
    dY, X = _real_array(dY, "dY", min_ndim=2), _real_array(X, "X", min_ndim=2)
    W = _real_array(W, "W", min_ndim=2)
    if X.shape[-1] != W.shape[-2] or dY.shape[-1] != W.shape[-1] or dY.shape[-2] != X.shape[-2]:
        raise ShapeError(
            f"dY {dY.shape}, X {X.shape} and W {W.shape} do not fit Y = X W: dY must be "
            "(..., n, fan_out), X (..., n, fan_in), W (..., fan_in, fan_out)"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        grads = _linear_backward(dY, X, W, _check_bool(with_bias, "with_bias"))
    for name, grad in zip(("dX", "dW", "db"), grads, strict=True):
        if grad is not None:
            _check_result(grad, name, "dY, X or W")
    return grads


def _linear_backward(dY, X, W, with_bias: bool = True):
    dX = np.matmul(dY, np.swapaxes(W, -1, -2))
    dW = np.matmul(np.swapaxes(X, -1, -2), dY)
    db = dY.sum(axis=-2) if with_bias else None
    return dX, dW, db


def relu_forward(Z) -> np.ndarray:
    """``max(Z, 0)``.

    Examples
    --------
    >>> relu_forward(np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    return np.maximum(_real_array(Z, "Z"), 0.0)


def relu_backward(dY, Z) -> np.ndarray:
    """``dY [Z > 0]`` (the subgradient 0 is taken at ``Z = 0``).

    Examples
    --------
    >>> relu_backward(np.array([5.0, 5.0]), np.array([-1.0, 2.0]))
    array([0., 5.])
    """
    dY, Z = _real_array(dY, "dY"), _real_array(Z, "Z")
    if dY.shape != Z.shape:
        raise ShapeError(f"dY {dY.shape} and Z {Z.shape} must have one shape")
    return dY * (Z > 0.0)


class BatchNormCache(NamedTuple):
    """What the batch-norm backward pass needs: ``Z_hat`` and ``1 / sqrt(var + eps)``."""

    Z_hat: np.ndarray
    inv_std: np.ndarray


def batch_norm_forward(Z, gamma, beta, eps: float = BN_EPS):
    """Train-mode batch norm over the example axis ``-2`` (eqs. 16.1-16.4).

    ``Y = gamma (Z - mean) / sqrt(population_variance + eps) + beta``, one statistic per
    feature and replica. Equal, for one replica, to
    :func:`trainable_harness.layers.batch_norm` on ``(n, width)`` input; as there, a batch
    of one example (``n = 1``) has ``Z - mean = 0``, so ``Y = beta`` whatever ``Z``, and
    its gradient with respect to ``Z`` is 0.

    The mean and population variance are computed as written, two passes without scaling
    (this loop is the learning-rate sweeps' hot path; :func:`trainable_harness.layers.standardize`,
    which scales before squaring, takes 1.2 to 5 times as long here); the root is the
    harness's one :func:`~trainable_harness.normalization.root_of_sum`, eps inside it.
    Use :func:`trainable_harness.layers.batch_norm` for inputs whose squares leave
    float64's range.

    Returns
    -------
    (numpy.ndarray, BatchNormCache)

    Raises
    ------
    ShapeError
        ``Z`` not ``(..., n, width)`` with ``n >= 1``, or ``gamma``, ``beta`` not
        ``(..., width)``.
    NegativeEpsilonError, NonFiniteInputError, UnsupportedDtypeError
        A negative eps; NaN/inf or non-real values.
    DegenerateNormalizationError
        ``eps = 0`` and a feature constant over the batch.
    ResultOverflowError
        A variance whose squares overflow float64 (``|Z|`` beyond about ``1e154``), or an
        output beyond range.

    Examples
    --------
    >>> Y, _ = batch_norm_forward(np.array([[1.0], [3.0]]), np.ones(1), np.zeros(1), eps=0.0)
    >>> Y.ravel()
    array([-1.,  1.])
    """
    eps = validated_eps(eps)
    Z = _real_array(Z, "Z", min_ndim=2)
    gamma, beta = _real_array(gamma, "gamma"), _real_array(beta, "beta")
    if Z.shape[-2] < 1 or gamma.shape[-1] != Z.shape[-1] or beta.shape[-1] != Z.shape[-1]:
        raise ShapeError(
            f"Z {Z.shape}, gamma {gamma.shape}, beta {beta.shape}: Z must be (..., n, width) "
            "with n >= 1 and gamma, beta (..., width)"
        )
    _broadcast_into(Z.shape[:-2], (("gamma", gamma), ("beta", beta)), "batch_norm_forward")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        Y, cache = _batch_norm_forward(Z, gamma, beta, eps)
    if not np.isfinite(cache.inv_std).all() or not (cache.inv_std > 0).all():
        with np.errstate(over="ignore"):
            constant = np.ptp(Z, axis=-2) == 0
        if eps == 0.0 and constant.any():
            raise DegenerateNormalizationError(
                "batch_norm_forward with eps = 0: a feature of Z is constant over the batch, "
                "so its variance is 0; pass eps > 0"
            )
        raise ResultOverflowError(
            "batch_norm_forward: a variance of Z leaves float64's range (its squares "
            "overflow, or vanish with eps = 0): rescale Z, or use "
            "trainable_harness.layers.batch_norm, which scales before squaring"
        )
    return _check_result(Y, "gamma Z_hat + beta", "gamma and beta"), cache


def _batch_norm_forward(Z, gamma, beta, eps: float = BN_EPS):
    n = Z.shape[-2]
    mean = Z.sum(axis=-2, keepdims=True) / n
    centered = Z - mean
    # einsum sums the squares without a temporary array the size of Z (the sweeps of the
    # learning-rate section spend most of their time here).
    population_variance = np.einsum("...nk,...nk->...k", centered, centered)[..., None, :] / n
    inv_std = 1.0 / root_of_sum(population_variance, eps)  # the harness's one root
    Z_hat = centered
    Z_hat *= inv_std  # in place: centered is not needed after this
    Y = Z_hat * gamma[..., None, :]
    Y += beta[..., None, :]
    return Y, BatchNormCache(Z_hat=Z_hat, inv_std=inv_std)


def batch_norm_backward(dY, cache: BatchNormCache, gamma):
    """Backward pass of :func:`batch_norm_forward`: returns ``(dZ, dgamma, dbeta)``.

    ``dZ = gamma inv_std (dY - mean_n(dY) - Z_hat mean_n(dY Z_hat))``: the centering
    projector removes the mean of the upstream gradient, and the scale removes its
    component along ``Z_hat`` (the radial direction of chapter 15's Jacobian, eq. 15.3).

    Examples
    --------
    >>> Z = np.array([[1.0], [2.0], [4.0]])
    >>> _, cache = batch_norm_forward(Z, np.ones(1), np.zeros(1), eps=0.0)
    >>> dZ, dgamma, dbeta = batch_norm_backward(np.ones((3, 1)), cache, np.ones(1))
    >>> float(np.abs(dZ).max()) < 1e-15, dbeta.tolist()   # a shift of Y's gradient is lost
    (True, [3.0])
    """
    if not isinstance(cache, BatchNormCache):
        raise TypeError(f"cache must be the BatchNormCache of batch_norm_forward, got {cache!r}")
    dY, gamma = _real_array(dY, "dY", min_ndim=2), _real_array(gamma, "gamma")
    if dY.shape != cache.Z_hat.shape or gamma.shape[-1] != dY.shape[-1]:
        raise ShapeError(
            f"dY {dY.shape} must have the shape of the forward pass's Z {cache.Z_hat.shape}, "
            f"and gamma {gamma.shape} one value per feature"
        )
    _broadcast_into(dY.shape[:-2], (("gamma", gamma),), "batch_norm_backward")
    with np.errstate(over="ignore", invalid="ignore"):
        grads = _batch_norm_backward(dY, cache, gamma)
    for name, grad in zip(("dZ", "dgamma", "dbeta"), grads, strict=True):
        _check_result(grad, name, "dY or gamma")
    return grads


def _batch_norm_backward(dY, cache: BatchNormCache, gamma):
    Z_hat, inv_std = cache
    n = Z_hat.shape[-2]
    dgamma = np.einsum("...nk,...nk->...k", dY, Z_hat)
    dbeta = dY.sum(axis=-2)
    d_hat = dY * gamma[..., None, :]
    # mean_n(d_hat Z_hat) = gamma dgamma / n: no second pass over the batch.
    dZ = d_hat - (dbeta * gamma)[..., None, :] / n
    dZ -= Z_hat * (gamma * dgamma)[..., None, :] / n
    dZ *= inv_std
    return dZ, dgamma, dbeta


def softmax_cross_entropy(logits, labels) -> np.ndarray:
    """Mean over examples of ``logsumexp(logits) - logits[label]``; shape ``(...)``.

    Examples
    --------
    Raises
    ------
    ShapeError
        Labels that are not one class index in ``[0, classes)`` per row (a label of -1
        would pick the last class), or logits of rank below 2.
    UnsupportedDtypeError, NonFiniteInputError
        Non-integer labels, non-real or non-finite logits.
    ResultOverflowError
        A loss beyond float64's range (logits spread wider than it).

    >>> round(float(softmax_cross_entropy(np.zeros((2, 4)), np.array([0, 3]))), 6)
    1.386294
    """
    logits = _real_array(logits, "logits", min_ndim=2)
    labels = _check_labels(labels, logits.shape[-2], logits.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        loss = _softmax_cross_entropy(logits, labels)
    _check_result(np.asarray(loss), "the cross-entropy", "the logits")
    return loss


def _softmax_cross_entropy(logits, labels) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=-1))
    picked = np.take_along_axis(shifted, _label_index(labels, shifted), axis=-1)[..., 0]
    return np.mean(log_norm - picked, axis=-1)


def _label_index(labels, logits) -> np.ndarray:
    index = np.broadcast_to(np.asarray(labels)[:, None], (*logits.shape[-2:-1], 1))
    return np.broadcast_to(index, (*logits.shape[:-1], 1))


def softmax_cross_entropy_backward(logits, labels) -> np.ndarray:
    """``(softmax(logits) - onehot(labels)) / n``, the gradient of the mean loss.

    Examples
    --------
    Raises
    ------
    As :func:`softmax_cross_entropy`.

    >>> softmax_cross_entropy_backward(np.zeros((1, 2)), np.array([1]))
    array([[ 0.5, -0.5]])
    """
    logits = _real_array(logits, "logits", min_ndim=2)
    labels = _check_labels(labels, logits.shape[-2], logits.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):
        return _softmax_cross_entropy_backward(logits, labels)


def _softmax_cross_entropy_backward(logits, labels) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    probabilities = np.exp(shifted)
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    onehot = np.zeros_like(probabilities)
    np.put_along_axis(onehot, _label_index(labels, logits), 1.0, axis=-1)
    return (probabilities - onehot) / logits.shape[-2]
