"""The four layers: batch, layer, instance and group normalization (eqs. 16.1-16.4).

One implementation, :func:`_normalize`, serves all four: it checks the batch and the
per-channel ``gamma`` and ``beta``, standardizes every reduction set of the kind (for
group norm, after splitting the channel axis into groups) with
:func:`~trainable_harness.layers.standardize.standardize`, scaled before squaring, and
applies the per-channel affine. Batch norm here uses the batch's own statistics (the
train-mode output, no running state); see :mod:`trainable_harness.layers.train_eval` for
the two modes.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.layers.inputs import _as_per_channel
from trainable_harness.layers.reduction_sets import (
    _CHANNEL_AXIS,
    _REDUCTION_AXES,
    NormalizationKind,
    _as_batch,
    _broadcast_shape,
    _channels_of,
    _check_groups,
    _check_kind,
)
from trainable_harness.layers.safe_arithmetic import _affine, _check_representable
from trainable_harness.layers.standardize import standardize
from trainable_harness.normalization import validated_eps

__all__ = ["apply_normalization", "batch_norm", "group_norm", "instance_norm", "layer_norm"]


def _normalize(kind, X, gamma, beta, *, eps, num_groups=None, dtype=np.float64) -> np.ndarray:
    eps = validated_eps(eps)
    X = _as_batch(X, kind, dtype)
    channel_axis = _CHANNEL_AXIS[X.ndim]
    num_channels = X.shape[channel_axis]
    gamma = _as_per_channel(gamma, "gamma", num_channels, _channels_of(X.shape), dtype)
    beta = _as_per_channel(beta, "beta", num_channels, _channels_of(X.shape), dtype)
    if kind == "group":
        num_groups = _check_groups(num_groups, num_channels)
        # Split the channel axis into (groups, channels per group) and reduce over the
        # second part together with the axes after it.
        before, after = X.shape[:channel_axis], X.shape[channel_axis + 1 :]
        grouped_shape = (*before, num_groups, num_channels // num_groups, *after)
        grouped_axes = tuple(range(channel_axis + 1, len(grouped_shape)))
        X_hat = standardize(X.reshape(grouped_shape), grouped_axes, eps=eps, what=f"{kind} norm")
        X_hat = X_hat.reshape(X.shape)
    else:
        X_hat = standardize(X, _REDUCTION_AXES[kind][X.ndim], eps=eps, what=f"{kind} norm")
    affine_shape = _broadcast_shape(num_channels, X.ndim)
    Y = _affine(gamma.reshape(affine_shape), X_hat, beta.reshape(affine_shape))

    def operands(index):
        k = index[channel_axis]
        return (
            f"gamma[{k}] = {gamma[k]!r}, x_hat = {X_hat[index]!r}, beta[{k}] = {beta[k]!r}; "
            "rescale gamma and beta"
        )

    _check_representable(Y, f"{kind} norm's output gamma * x_hat + beta (eq. 16.4)", operands)
    return Y


def batch_norm(X, gamma, beta, *, eps: float = 1e-5, dtype=np.float64) -> np.ndarray:
    """Batch normalization with the batch's own statistics (train-mode output, no state).

    Eqs. 16.1-16.4 with one reduction set per channel: over ``(B, H, W)`` for 4-D
    ``(B, C, H, W)``, over ``(B, T)`` for 3-D ``(B, T, d)``, over ``B`` for 2-D ``(B, d)``.
    The variance is the population (biased, divide by ``m``) variance of the batch. When a
    channel holds a single value (``m = 1``), ``x_hat = 0`` exactly and the output is
    ``beta`` whatever the input; it is all zeros only if ``beta = 0``.

    Parameters
    ----------
    X : array_like, shape ``(B, d)``, ``(B, T, d)`` or ``(B, C, H, W)``
    gamma, beta : array_like, shape ``(C,)`` (or ``(d,)``)
        Per-channel scale and shift (eq. 16.4).
    eps : float, default 1e-5
        Added to the population variance inside the square root (eq. 16.3), in the
        input's units (it is rescaled with the deviations, never added to a scaled
        variance); a real number ``>= 0``.
    dtype : floating dtype, default float64
        Dtype of the arithmetic and of the result.

    Returns
    -------
    numpy.ndarray, same shape as ``X``

    Raises
    ------
    UnsupportedRankError
        ``X`` is not 2-, 3- or 4-D (the message names its shape).
    AffineShapeError
        ``gamma`` or ``beta`` is not ``(C,)`` (both shapes named).
    EmptyInputError, NonFiniteInputError, NegativeEpsilonError
        An empty axis; NaN/inf in ``X``, ``gamma`` or ``beta`` (index named); ``eps < 0``.
    UnsupportedDtypeError
        A bool, complex or object array; a non-floating ``dtype``; an ``eps`` that is not a
        real number (a bool or a string).
    DegenerateNormalizationError
        ``eps = 0`` and some channel is constant over its reduction set (only then: two
        distinct values, however close, are normalized).
    ResultOverflowError
        An output ``gamma * x_hat + beta`` whose exact value is beyond the dtype's range
        (``gamma = beta = 1e308``, say); the message names the index, ``gamma`` and
        ``beta``. (``x_hat`` itself is always in range: ``|x_hat| <= sqrt(m)``.)

    Examples
    --------
    >>> X = np.array([[1.0, 10.0], [3.0, 30.0]])          # (B=2, d=2)
    >>> batch_norm(X, gamma=np.ones(2), beta=np.zeros(2), eps=0.0)
    array([[-1., -1.],
           [ 1.,  1.]])
    >>> batch_norm(X[:1], gamma=np.ones(2), beta=np.array([0.5, -2.0]))  # one value each
    array([[ 0.5, -2. ]])
    """
    return _normalize("batch", X, gamma, beta, eps=eps, dtype=dtype)


def layer_norm(X, gamma, beta, *, eps: float = 1e-5, dtype=np.float64) -> np.ndarray:
    """Layer normalization: eqs. 16.1-16.4 over the features of each sample.

    Reduction sets: ``(C, H, W)`` of each sample ``b`` for 4-D; ``d`` of each token
    ``(b, t)`` for 3-D ``(B, T, d)`` (the transformer convention); ``d`` of each row for 2-D.
    The affine is per channel/feature: ``gamma``, ``beta`` have shape ``(C,)`` or ``(d,)``
    (for 4-D this is ``GroupNorm(1, C)``'s affine, not a per-element ``(C, H, W)`` one).
    A sample's output does not depend on the other samples of the batch.

    Parameters, Returns and Raises are as for :func:`batch_norm`.

    Examples
    --------
    >>> X = np.array([[[1.0, 3.0], [10.0, 30.0]]])        # (B=1, T=2, d=2)
    >>> layer_norm(X, np.ones(2), np.zeros(2), eps=0.0)
    array([[[-1.,  1.],
            [-1.,  1.]]])
    """
    return _normalize("layer", X, gamma, beta, eps=eps, dtype=dtype)


def instance_norm(X, gamma, beta, *, eps: float = 1e-5, dtype=np.float64) -> np.ndarray:
    """Instance normalization: eqs. 16.1-16.4 over ``(H, W)`` of each sample and channel.

    4-D ``(B, C, H, W)`` only. A 3-D ``(B, T, d)`` or 2-D array is refused: with features
    last, one (token, feature) pair holds a single value. To normalize each feature over
    time, transpose to ``(B, d, T, 1)``.

    Parameters, Returns and Raises are as for :func:`batch_norm` (rank 4 only).

    Examples
    --------
    >>> X = np.array([1.0, 3.0, 10.0, 30.0]).reshape(1, 2, 2, 1)   # (B, C, H, W)
    >>> instance_norm(X, np.ones(2), np.zeros(2), eps=0.0).ravel()
    array([-1.,  1., -1.,  1.])
    """
    return _normalize("instance", X, gamma, beta, eps=eps, dtype=dtype)


def group_norm(
    X, gamma, beta, *, num_groups: int, eps: float = 1e-5, dtype=np.float64
) -> np.ndarray:
    """Group normalization: eqs. 16.1-16.4 over groups of consecutive channels per sample.

    The ``C`` channels (features) split into ``num_groups`` groups of ``C/num_groups``
    consecutive channels. Reduction sets: a group's channels and ``(H, W)`` of one sample for
    4-D; a group's features of one token ``(b, t)`` for 3-D; of one row for 2-D. With
    ``num_groups = 1`` this is :func:`layer_norm`; with ``num_groups = C`` (4-D) it is
    :func:`instance_norm`.

    Parameters
    ----------
    num_groups : int
        Number of groups: an integer (not a bool or a float) that divides ``C``.

    Other parameters, Returns and Raises are as for :func:`batch_norm`, plus
    :class:`IndivisibleGroupsError` when ``num_groups`` does not divide ``C``.

    Examples
    --------
    >>> x = np.array([[1.0, 3.0, 10.0, 30.0]])                 # (B=1, d=4)
    >>> group_norm(x, np.ones(4), np.zeros(4), num_groups=2, eps=0.0)
    array([[-1.,  1., -1.,  1.]])
    """
    return _normalize("group", X, gamma, beta, eps=eps, num_groups=num_groups, dtype=dtype)


def apply_normalization(
    kind: NormalizationKind,
    X,
    gamma,
    beta,
    *,
    eps: float = 1e-5,
    num_groups: int | None = None,
    dtype=np.float64,
) -> np.ndarray:
    """Apply the layer named by ``kind`` (batch norm uses batch statistics, as in train mode).

    Convenience for loops over the four kinds; ``num_groups`` is used by ``"group"`` only.

    Examples
    --------
    >>> X = np.array([[1.0, 3.0], [5.0, 11.0]])
    >>> apply_normalization("layer", X, np.ones(2), np.zeros(2), eps=0.0)
    array([[-1.,  1.],
           [-1.,  1.]])
    """
    _check_kind(kind)
    return _normalize(kind, X, gamma, beta, eps=eps, num_groups=num_groups, dtype=dtype)
