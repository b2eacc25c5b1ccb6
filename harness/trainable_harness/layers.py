"""Batch, layer, instance and group normalization on batches; running state; folding.

Chapter 16 ("Batch normalization in practice"). All four layers apply the same four
equations to a *reduction set* ``S`` of values ``x_i`` that share one mean and one variance:

- eq. 16.1, mean: ``mean = (1/m) sum_{i in S} x_i`` with ``m = |S|``;
- eq. 16.2, population (biased) variance: ``population_variance = (1/m) sum (x_i - mean)^2``;
- eq. 16.3, standardize: ``x_hat_i = (x_i - mean) / sqrt(population_variance + eps)``;
- eq. 16.4, scale and shift: ``y_i = gamma_k * x_hat_i + beta_k`` with ``k`` the channel
  (feature) of ``x_i``.

The layers differ only in which elements form a reduction set. Layouts and sets:

=========  ==============  ====================================  ================================
kind       2-D ``(B, d)``  3-D ``(B, T, d)``                     4-D ``(B, C, H, W)``
=========  ==============  ====================================  ================================
batch      over B, per d   over (B, T), per feature d            over (B, H, W), per channel C
layer      over d, per B   over d, per token (b, t)              over (C, H, W), per sample b
instance   refused         refused                               over (H, W), per (b, c)
group      d-groups, per   d-groups, per token (b, t)            channel groups and (H, W), per b
           sample b
=========  ==============  ====================================  ================================

The 3-D layout puts features last, as sequence models do, and a "sample" of layer and group
norm is one token ``(b, t)``: this is the transformer convention (LayerNorm over ``d``). With
that convention, instance norm on 3-D would normalize each (token, feature) pair over a single
value, so it is refused; to normalize each feature over time within a sequence, transpose to
``(B, d, T, 1)`` and use the 4-D form. The channel (feature) axis is 1 for 2-D and 4-D input
and 2 for 3-D input; ``gamma`` and ``beta`` always have shape ``(C,)`` (or ``(d,)``), one value
per channel, for all four kinds. For 4-D layer norm this is the per-channel affine of
``GroupNorm(1, C)``, not the per-element ``(C, H, W)`` affine of PyTorch's
``nn.LayerNorm([C, H, W])``; with it, group norm with one group *is* layer norm and group
norm with ``C`` groups *is* instance norm.

Dtype contract: inputs are converted to ``dtype`` (float64 by default; integers promoted;
bool, complex and object arrays refused) and all arithmetic happens in it. Running
statistics are stored in float64.

Scale before you square: eqs. 16.1-16.3 are computed by
:func:`~trainable_harness.normalization.scaled_moments` per reduction set -- deviations
after a shift by the set's first value, divided by a power of two ``2**E`` near the larger
of their largest magnitude and ``sqrt(eps)`` before squaring, with eps entering as
``eps / 4**E`` -- so ``x_hat = (x - mean) / sqrt(population_variance + eps)`` with eps
added to the variance in the input's units, and no square overflows or vanishes in
float16, float32 or float64. Eval mode, the affine step and folding avoid spurious
overflow (a sum or product beyond range whose result is not) by halving the operands;
a result whose exact value is beyond the dtype's largest finite value is +-inf, as IEEE
rounding gives it, without a warning.

Examples
--------
>>> X = np.arange(8.0).reshape(2, 2, 2)          # (B, T, d)
>>> reduction_axes("batch", 3), reduction_axes("layer", 3)
((0, 1), (2,))
>>> Y = batch_norm(X, np.ones(2), np.zeros(2), eps=0.0)
>>> print(Y[:, :, 0].ravel().round(4))
[-1.3416 -0.4472  0.4472  1.3416]

Magnitudes whose squares overflow or underflow the dtype:

>>> batch_norm([[-1e300], [1e300]], [1], [0])
array([[-1.],
       [ 1.]])
>>> layer_norm(np.array([[0, 1e-25]], np.float32), [1, 1], [0, 0], eps=0, dtype=np.float32)
array([[-1.,  1.]], dtype=float32)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from trainable_harness.errors import (
    AffineShapeError,
    CountError,
    DegenerateNormalizationError,
    EmptyInputError,
    IndivisibleGroupsError,
    MomentOverflowError,
    MomentumRangeError,
    RunningStateShapeError,
    ShapeError,
    SingleValuePerChannelError,
    UnknownChoiceError,
    UnsupportedDtypeError,
    UnsupportedRankError,
    WeightShapeError,
    check_finite,
)
from trainable_harness.normalization import scaled_moments, validated_eps

__all__ = [
    "BatchNormEvalWork",
    "BatchNormState",
    "BatchStatistics",
    "NormalizationKind",
    "VarianceEstimator",
    "apply_normalization",
    "batch_norm",
    "batch_norm_eval",
    "batch_norm_eval_flops",
    "batch_norm_train",
    "batch_statistics",
    "conv2d",
    "fold_batch_norm_into_conv2d",
    "fold_batch_norm_into_linear",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "linear",
    "reduction_axes",
    "statistic_labels",
    "update_running_statistics",
    "values_per_statistic",
]

NormalizationKind = Literal["batch", "layer", "instance", "group"]
VarianceEstimator = Literal["sample", "population"]

_LAYOUTS = {2: "(B, d)", 3: "(B, T, d)", 4: "(B, C, H, W)"}
# Axis holding channels/features, per rank: the axis gamma and beta run along.
_CHANNEL_AXIS = {2: 1, 3: 2, 4: 1}
# Axes each kind reduces over, per rank. For "group" the channel axis is reduced only
# within each group of consecutive channels.
_REDUCTION_AXES: dict[str, dict[int, tuple[int, ...]]] = {
    "batch": {2: (0,), 3: (0, 1), 4: (0, 2, 3)},
    "layer": {2: (1,), 3: (2,), 4: (1, 2, 3)},
    "instance": {4: (2, 3)},
    "group": {2: (1,), 3: (2,), 4: (1, 2, 3)},
}
_INSTANCE_3D_HINT = (
    "; instance norm of a (B, T, d) or (B, d) array would normalize each (token, feature) "
    "over a single value. To normalize each feature over time, transpose to (B, d, T, 1)"
)


# ---------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------


def _count(value, name: str, *, minimum: int = 0, error=CountError) -> int:
    """Return ``value`` as an int if it is an integer (not a bool) ``>= minimum``, else raise."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise error(
            f"{name} must be an integer >= {minimum}, got {value!r} ({type(value).__name__})"
        )
    if value < minimum:
        raise error(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def _as_shape(shape, name: str = "shape") -> tuple[int, ...]:
    """Return ``shape`` as a tuple of non-negative ints, naming the first bad entry."""
    if isinstance(shape, str) or not isinstance(shape, tuple | list | np.ndarray):
        raise CountError(
            f"{name} must be a tuple of non-negative integers, got {shape!r} "
            f"({type(shape).__name__})"
        )
    return tuple(_count(n, f"{name}[{i}]") for i, n in enumerate(shape))


def _check_kind(kind: str) -> None:
    if not isinstance(kind, str) or kind not in _REDUCTION_AXES:
        raise UnknownChoiceError(f"kind must be one of {sorted(_REDUCTION_AXES)}, got {kind!r}")


def _check_rank(kind: str, ndim: int, shape: tuple[int, ...] | None = None) -> None:
    accepted = _REDUCTION_AXES[kind]
    if ndim not in accepted:
        got = f"shape {shape} (rank {ndim})" if shape is not None else f"rank {ndim}"
        wanted = " or ".join(f"{r}-D {_LAYOUTS[r]}" for r in sorted(accepted))
        hint = _INSTANCE_3D_HINT if kind == "instance" and ndim in (2, 3) else ""
        raise UnsupportedRankError(f"{kind} norm got {got}; it accepts {wanted}{hint}")


def _as_float(array_like, name: str, dtype) -> np.ndarray:
    """Return ``array_like`` as a finite array of floating ``dtype`` (integers promoted)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise UnsupportedDtypeError(f"dtype must be a real floating type, got {dtype}")
    array = np.asarray(array_like)
    if array.dtype.kind not in "iuf":
        raise UnsupportedDtypeError(
            f"{name} has dtype {array.dtype}; a real floating or integer array is expected"
        )
    array = array.astype(dtype, copy=False)
    check_finite(array, name)
    return array


def _as_batch(X, kind: str, dtype) -> np.ndarray:
    """Check rank, emptiness and finiteness of a batch ``X`` for normalization ``kind``."""
    X = np.asarray(X)
    _check_rank(kind, X.ndim, X.shape)
    if X.size == 0:
        empty = [axis for axis, n in enumerate(X.shape) if n == 0]
        raise EmptyInputError(
            f"X has shape {X.shape}, empty along axis {empty[0]} of layout "
            f"{_LAYOUTS[X.ndim]}; every axis needs at least one value"
        )
    return _as_float(X, "X", dtype)


def _channels_of(X_shape) -> str:
    """Describe where a channel count comes from, for error messages."""
    X_shape = tuple(X_shape)
    return f"X has shape {X_shape} with {X_shape[_CHANNEL_AXIS[len(X_shape)]]} channels/features"


def _as_per_channel(values, name: str, num_channels: int, context: str, dtype) -> np.ndarray:
    """Return a per-channel parameter of shape ``(C,)``, naming both shapes if it is not."""
    values = np.asarray(values)
    if values.shape != (num_channels,):
        raise AffineShapeError(
            f"{name} has shape {values.shape} but {context}; {name} must have shape "
            f"({num_channels},)"
        )
    return _as_float(values, name, dtype)


def _check_momentum(momentum: float) -> float:
    if isinstance(momentum, bool | np.bool_) or not isinstance(
        momentum, int | float | np.integer | np.floating
    ):
        raise MomentumRangeError(
            f"momentum must be a real number in [0, 1], got {momentum!r} "
            f"({type(momentum).__name__})"
        )
    momentum = float(momentum)
    if not 0.0 <= momentum <= 1.0:  # also rejects NaN
        raise MomentumRangeError(
            f"momentum must lie in [0, 1] (the weight of the new batch statistic in "
            f"eq. 16.5), got {momentum}"
        )
    return momentum


def _check_estimator(variance_estimator: str) -> None:
    if variance_estimator not in ("sample", "population"):
        raise UnknownChoiceError(
            f"variance_estimator must be 'sample' or 'population', got {variance_estimator!r}"
        )


def _broadcast_shape(num_channels: int, ndim: int) -> tuple[int, ...]:
    """Shape that lines a ``(C,)`` vector up with the channel axis of a rank-``ndim`` batch."""
    shape = [1] * ndim
    shape[_CHANNEL_AXIS[ndim]] = num_channels
    return tuple(shape)


# ---------------------------------------------------------------------------
# Reduction sets
# ---------------------------------------------------------------------------


def reduction_axes(kind: NormalizationKind, ndim: int) -> tuple[int, ...]:
    """Return the axes that ``kind`` of normalization reduces over for a rank-``ndim`` batch.

    Layouts are ``(B, d)``, ``(B, T, d)`` and ``(B, C, H, W)`` (see the module table). Every
    element that agrees on the *other* axes shares one mean and variance. For ``"group"`` the
    channel axis is listed but is reduced only within each group of consecutive channels.

    Parameters
    ----------
    kind : {"batch", "layer", "instance", "group"}
    ndim : int
        Rank of the batch: 2, 3 or 4 (instance norm: 4 only).

    Returns
    -------
    tuple of int

    Raises
    ------
    UnknownChoiceError
        If ``kind`` is not one of the four names.
    UnsupportedRankError
        If ``kind`` does not accept rank ``ndim``, or ``ndim`` is not an integer (a string
        or a bool is not a rank).

    Examples
    --------
    >>> [reduction_axes(kind, 4) for kind in ("batch", "layer", "instance", "group")]
    [(0, 2, 3), (1, 2, 3), (2, 3), (1, 2, 3)]
    >>> reduction_axes("batch", 3), reduction_axes("layer", 3)
    ((0, 1), (2,))
    """
    _check_kind(kind)
    if isinstance(ndim, bool | np.bool_) or not isinstance(ndim, int | np.integer):
        raise UnsupportedRankError(
            f"ndim must be an integer rank (2, 3 or 4), got {ndim!r} ({type(ndim).__name__})"
        )
    _check_rank(kind, int(ndim))
    return _REDUCTION_AXES[kind][int(ndim)]


def _check_groups(num_groups, num_channels: int) -> int:
    if num_groups is None:
        raise IndivisibleGroupsError("group norm needs num_groups (a divisor of the channels)")
    num_groups = _count(num_groups, "num_groups", minimum=1, error=IndivisibleGroupsError)
    if num_channels % num_groups:
        raise IndivisibleGroupsError(
            f"{num_channels} channels cannot be split into {num_groups} equal groups; "
            f"num_groups must divide {num_channels}"
        )
    return num_groups


def statistic_labels(
    kind: NormalizationKind, shape: tuple[int, ...], *, num_groups: int | None = None
) -> np.ndarray:
    """Label every element of a batch of ``shape`` with the statistic it is normalized by.

    Two elements get the same label exactly when they lie in the same reduction set, so they
    share a mean and a variance. Labels are ``0, 1, ...`` in order of first appearance in C
    order. This is what the chapter's reduction-axes figure colours.

    Parameters
    ----------
    kind : {"batch", "layer", "instance", "group"}
    shape : tuple of int
        Shape of the batch, in one of the module's layouts.
    num_groups : int, optional
        Number of channel groups; required for ``"group"`` only.

    Returns
    -------
    numpy.ndarray of int64, shape ``shape``

    Raises
    ------
    UnknownChoiceError, UnsupportedRankError, IndivisibleGroupsError, CountError

    Examples
    --------
    >>> statistic_labels("batch", (2, 3))
    array([[0, 1, 2],
           [0, 1, 2]])
    >>> statistic_labels("group", (1, 4), num_groups=2)
    array([[0, 0, 1, 1]])
    """
    _check_kind(kind)
    shape = _as_shape(shape)
    axes = reduction_axes(kind, len(shape))
    channel_axis = _CHANNEL_AXIS[len(shape)]
    coordinates = list(np.indices(shape))
    if kind == "group":
        num_groups = _check_groups(num_groups, shape[channel_axis])
        # The group index is the part of the channel coordinate the statistic keeps.
        group_size = shape[channel_axis] // num_groups
        coordinates[channel_axis] = coordinates[channel_axis] // group_size
        sizes = list(shape)
        sizes[channel_axis] = num_groups
        kept = [axis for axis in range(len(shape)) if axis not in axes or axis == channel_axis]
    else:
        sizes = list(shape)
        kept = [axis for axis in range(len(shape)) if axis not in axes]
    if not kept:
        return np.zeros(shape, dtype=np.int64)
    keys = np.ravel_multi_index([coordinates[a] for a in kept], [sizes[a] for a in kept])
    _, labels = np.unique(keys.ravel(), return_inverse=True)
    # np.unique sorts keys; C-order keys of the kept coordinates are already in order of
    # first appearance, so the inverse gives 0, 1, ... in that order.
    return labels.reshape(shape).astype(np.int64)


def values_per_statistic(
    kind: NormalizationKind, shape: tuple[int, ...], *, num_groups: int | None = None
) -> int:
    """Return ``m``, the number of values each mean and variance of ``kind`` pools.

    ``m = B*H*W`` for 4-D batch norm, ``B*T`` for 3-D, ``C*H*W`` for 4-D layer norm,
    ``H*W`` for instance norm and ``(C/G)*H*W`` for group norm with ``G`` groups.

    Raises
    ------
    UnknownChoiceError, UnsupportedRankError, IndivisibleGroupsError
    CountError
        A shape entry that is not a non-negative integer (a float, a bool, a negative).

    Examples
    --------
    >>> values_per_statistic("batch", (8, 16, 7, 7))
    392
    >>> values_per_statistic("group", (8, 16, 7, 7), num_groups=4)
    196
    """
    _check_kind(kind)
    shape = _as_shape(shape)
    axes = reduction_axes(kind, len(shape))
    m = math.prod(shape[a] for a in axes)
    if kind == "group":
        m //= _check_groups(num_groups, shape[_CHANNEL_AXIS[len(shape)]])
    return m


# ---------------------------------------------------------------------------
# The four layers (eqs. 16.1-16.4)
# ---------------------------------------------------------------------------


def _standardize(X: np.ndarray, axes: tuple[int, ...], eps: float, kind: str) -> np.ndarray:
    """Eqs. 16.1-16.3 over ``axes`` of ``X``, scaled before squaring.

    :func:`~trainable_harness.normalization.scaled_moments` computes the deviations from the
    mean (after a shift by the set's first value) and divides them by a power of two near
    the larger of their largest magnitude and ``sqrt(eps)`` before squaring, with eps
    rescaled by the same square; ``x_hat`` is their ratio, so no square over- or
    underflows in any floating dtype.
    """
    parts = scaled_moments(X, axes, centered=True, eps=eps)
    if eps == 0.0 and parts.constant.any():
        where = tuple(int(i) for i in np.argwhere(parts.constant)[0])
        raise DegenerateNormalizationError(
            f"{kind} norm with eps = 0 is undefined: a reduction set (statistic index "
            f"{where} over axes {axes}) holds one repeated value, so its variance is 0. "
            "Pass eps > 0 (e.g. 1e-5) for a defined output"
        )
    return parts.normalized()


def _root_of_sum(variance: np.ndarray, eps: float) -> np.ndarray:
    """``sqrt(variance + eps)``; where the sum overflows, ``2 sqrt(variance/4 + eps/4)``.

    Both are finite for finite ``variance, eps >= 0``: the root of a finite float is far
    below the largest one. Quartering is exact away from the subnormals, and in that
    branch one of the two terms is near the largest float.
    """
    with np.errstate(over="ignore"):
        total = variance + eps
    overflowed = np.isinf(total)
    if overflowed.any():
        quartered = 2.0 * np.sqrt(variance * 0.25 + eps * 0.25)
        return np.where(overflowed, quartered, np.sqrt(np.where(overflowed, 0.0, total)))
    return np.sqrt(total)


def _scaled_difference(a: np.ndarray, b: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``(a - b) / denominator`` without a spurious overflow of ``a - b``.

    Where ``a - b`` overflows (``a`` and ``b`` near the largest float with opposite signs),
    it is computed as ``(a/2 - b/2) / (denominator/2)``. A quotient whose exact value lies
    beyond the range is +-inf, as IEEE rounding gives.
    """
    with np.errstate(over="ignore"):
        difference = a - b
        overflowed = np.isinf(difference)
        if overflowed.any():
            halves = (a * 0.5 - b * 0.5) / (denominator * 0.5)
            return np.where(overflowed, halves, difference / denominator)
        return difference / denominator


def _affine(gamma: np.ndarray, X_hat: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``gamma * X_hat + beta`` (eq. 16.4) without a spurious overflow.

    Where the direct form overflows (a product beyond range that ``beta`` would bring back,
    say), both terms are halved, added and doubled: halving is exact, and a result whose
    exact value lies beyond the dtype's range is returned as +-inf, as IEEE rounding gives.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        Y = gamma * X_hat + beta
        overflowed = ~np.isfinite(Y)
        if overflowed.any():
            half = (gamma * 0.5) * X_hat + beta * 0.5
            Y = np.where(overflowed, half * 2, Y)
            # gamma = 0 times an x_hat beyond range (eval mode) is 0 exactly: y = beta.
            Y = np.where(overflowed & (gamma == 0), beta, Y)
    return Y


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
        X_hat = _standardize(X.reshape(grouped_shape), grouped_axes, eps, kind)
        X_hat = X_hat.reshape(X.shape)
    else:
        X_hat = _standardize(X, _REDUCTION_AXES[kind][X.ndim], eps, kind)
    affine_shape = _broadcast_shape(num_channels, X.ndim)
    return _affine(gamma.reshape(affine_shape), X_hat, beta.reshape(affine_shape))


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


# ---------------------------------------------------------------------------
# Running statistics: train and eval mode (eq. 16.5)
# ---------------------------------------------------------------------------


class BatchStatistics(NamedTuple):
    """Per-channel statistics of one batch: values per channel, mean, population variance."""

    count: int
    mean: np.ndarray
    population_variance: np.ndarray

    @property
    def sample_variance(self) -> np.ndarray:
        """``m2 / (count - 1)``, Bessel-corrected; needs ``count >= 2``."""
        if self.count < 2:
            raise SingleValuePerChannelError(
                f"the sample variance divides by count - 1 and needs count >= 2 values per "
                f"channel; this batch has count = {self.count}"
            )
        return self.population_variance * (self.count / (self.count - 1))


def batch_statistics(X, *, dtype=np.float64) -> BatchStatistics:
    """Per-channel ``count``, mean (eq. 16.1) and population variance (eq. 16.2) of a batch.

    Reduction sets are those of :func:`batch_norm`.

    The mean is computed after a shift by each channel's first value, the variance with
    the deviations scaled by a power of two before squaring; a variance whose exact value
    exceeds the dtype's range (deviations near ``1e300`` in float64) is ``inf``.

    Raises
    ------
    UnsupportedRankError, EmptyInputError, NonFiniteInputError

    Examples
    --------
    >>> stats = batch_statistics(np.array([[1.0, 10.0], [3.0, 30.0]]))
    >>> stats.count, stats.mean, stats.population_variance, stats.sample_variance
    (2, array([ 2., 20.]), array([  1., 100.]), array([  2., 200.]))
    """
    X = _as_batch(X, "batch", dtype)
    axes = _REDUCTION_AXES["batch"][X.ndim]
    parts = scaled_moments(X, axes, centered=True, eps=0.0, with_mean=True)
    mean = parts.mean.reshape(-1)
    population_variance = parts.variance().reshape(-1)
    return BatchStatistics(values_per_statistic("batch", X.shape), mean, population_variance)


def _readonly_float64_vector(values, name: str) -> np.ndarray:
    array = _as_float(values, name, np.float64)
    if array.ndim != 1 or array.size == 0:
        raise RunningStateShapeError(
            f"{name} must be a non-empty 1-D array (one value per channel), got shape "
            f"{array.shape}"
        )
    array = array.copy()
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class BatchNormState:
    """Running statistics of a batch-norm layer, updated in train mode, used in eval mode.

    Eq. 16.5 (PyTorch's convention: ``momentum`` weights the *new* batch; Keras's
    ``momentum`` is ``1 -`` this one)::

        running_mean     <- (1 - momentum) * running_mean     + momentum * batch mean
        running_variance <- (1 - momentum) * running_variance + momentum * batch variance

    ``variance_estimator`` names the batch variance that enters ``running_variance``:
    ``"sample"`` (divide by ``m - 1``; PyTorch) or ``"population"`` (divide by ``m``;
    Keras/TensorFlow). Train-mode *normalization* always uses the population variance.

    The default is ``"sample"``: eval mode wants an estimate of the variance of the
    activation distribution, and the sample variance is its unbiased estimate from one
    batch, so the moving average of unbiased estimates is unbiased too (for stationary
    inputs), while the population variance is low by the factor ``(m - 1)/m`` (0.5 for
    ``m = 2``; negligible for ``m`` in the hundreds). The price is that a train-mode update
    with one value per channel (``m = 1``) is undefined and raises.

    Attributes
    ----------
    running_mean, running_variance : numpy.ndarray, shape ``(C,)``, float64, read-only
    momentum : float in [0, 1]
    variance_estimator : {"sample", "population"}
    num_updates : int
        Number of train-mode updates applied so far.

    Raises
    ------
    RunningStateShapeError, MomentumRangeError, UnknownChoiceError, NonFiniteInputError
        On mismatched or non-1-D vectors, momentum outside [0, 1], an unknown estimator,
        NaN/inf; a negative ``running_variance`` raises :class:`RunningStateShapeError`.

    Examples
    --------
    >>> state = BatchNormState.initial(2, momentum=0.1)
    >>> state.running_mean, state.running_variance, state.num_updates
    (array([0., 0.]), array([1., 1.]), 0)
    """

    running_mean: np.ndarray
    running_variance: np.ndarray
    momentum: float = 0.1
    variance_estimator: VarianceEstimator = "sample"
    num_updates: int = field(default=0)

    def __post_init__(self) -> None:
        mean = _readonly_float64_vector(self.running_mean, "running_mean")
        variance = _readonly_float64_vector(self.running_variance, "running_variance")
        if mean.shape != variance.shape:
            raise RunningStateShapeError(
                f"running_mean has shape {mean.shape} but running_variance has shape "
                f"{variance.shape}; both must be (C,)"
            )
        if (variance < 0).any():
            index = int(np.argmax(variance < 0))
            raise RunningStateShapeError(
                f"running_variance[{index}] = {variance[index]} is negative; a variance "
                "must be >= 0"
            )
        _check_estimator(self.variance_estimator)
        _count(self.num_updates, "num_updates", error=RunningStateShapeError)
        # Frozen dataclass: normalized values are set through object.__setattr__.
        object.__setattr__(self, "running_mean", mean)
        object.__setattr__(self, "running_variance", variance)
        object.__setattr__(self, "momentum", _check_momentum(self.momentum))
        object.__setattr__(self, "num_updates", int(self.num_updates))

    @classmethod
    def initial(
        cls,
        num_channels: int,
        *,
        momentum: float = 0.1,
        variance_estimator: VarianceEstimator = "sample",
    ) -> BatchNormState:
        """Return the usual starting state: running mean 0, running variance 1 per channel.

        Raises
        ------
        CountError
            If ``num_channels`` is not an integer >= 1 (a bool is not a count).
        """
        num_channels = _count(num_channels, "num_channels", minimum=1)
        return cls(np.zeros(num_channels), np.ones(num_channels), momentum, variance_estimator, 0)

    @property
    def num_channels(self) -> int:
        return self.running_mean.size


def _check_state_channels(state: BatchNormState, num_channels: int, context: str) -> None:
    if not isinstance(state, BatchNormState):
        raise TypeError(f"state must be a BatchNormState, got {type(state).__name__}")
    if state.num_channels != num_channels:
        raise RunningStateShapeError(
            f"the running state has {state.num_channels} channels but {context}"
        )


def update_running_statistics(state: BatchNormState, X) -> BatchNormState:
    """Return ``state`` after one train-mode update (eq. 16.5) with the batch ``X``.

    The batch variance used is ``state.variance_estimator``'s; see :class:`BatchNormState`.

    Raises
    ------
    SingleValuePerChannelError
        ``variance_estimator == "sample"`` and the batch has one value per channel: the
        sample variance divides by ``m - 1 = 0``.
    MomentOverflowError
        A channel's batch variance exceeds the largest float64 (no running state holds it).
    RunningStateShapeError
        The state's channel count differs from ``X``'s.
    UnsupportedRankError, EmptyInputError, NonFiniteInputError

    Examples
    --------
    >>> state = BatchNormState.initial(1, momentum=0.5, variance_estimator="population")
    >>> new = update_running_statistics(state, np.array([[1.0], [3.0]]))
    >>> new.running_mean, new.running_variance, new.num_updates
    (array([1.]), array([1.]), 1)
    """
    stats = batch_statistics(X)
    _check_state_channels(state, stats.mean.size, _channels_of(np.shape(X)))
    if not np.isfinite(stats.population_variance).all():
        channel = int(np.argmax(~np.isfinite(stats.population_variance)))
        raise MomentOverflowError(
            f"X has shape {np.shape(X)}: the batch variance of channel {channel} exceeds "
            "the largest float64, so no running variance can hold it; rescale X"
        )
    if state.variance_estimator == "sample":
        if stats.count < 2:
            raise SingleValuePerChannelError(
                f"X has shape {np.shape(X)}, one value per channel, so the sample variance "
                "that variance_estimator='sample' feeds into the running variance is "
                "undefined (it divides by m - 1 = 0). The train-mode output itself would be "
                "beta. Use a batch with >= 2 values per channel, "
                "variance_estimator='population', or eval mode"
            )
        batch_variance = stats.sample_variance
    else:
        batch_variance = stats.population_variance
    keep = 1.0 - state.momentum
    return BatchNormState(
        keep * state.running_mean + state.momentum * stats.mean,
        keep * state.running_variance + state.momentum * batch_variance,
        state.momentum,
        state.variance_estimator,
        state.num_updates + 1,
    )


def batch_norm_train(
    X, gamma, beta, state: BatchNormState, *, eps: float = 1e-5
) -> tuple[np.ndarray, BatchNormState]:
    """Train-mode batch norm: normalize with the batch's statistics, update the running state.

    The output is :func:`batch_norm` (eqs. 16.1-16.4, population variance, float64); the
    new state is :func:`update_running_statistics` (eq. 16.5).

    Returns
    -------
    Y : numpy.ndarray, same shape as ``X``
    new_state : BatchNormState

    Raises
    ------
    As :func:`batch_norm` and :func:`update_running_statistics`.

    Examples
    --------
    >>> state = BatchNormState.initial(1, momentum=0.1)
    >>> Y, state = batch_norm_train(np.array([[1.0], [3.0]]), [1.0], [0.0], state, eps=0.0)
    >>> Y.ravel(), state.running_mean, state.running_variance
    (array([-1.,  1.]), array([0.2]), array([1.1]))
    """
    Y = batch_norm(X, gamma, beta, eps=eps)
    return Y, update_running_statistics(state, X)


def batch_norm_eval(X, gamma, beta, state: BatchNormState, *, eps: float = 1e-5) -> np.ndarray:
    """Eval-mode batch norm: eqs. 16.3-16.4 with the frozen running statistics.

    ``y = gamma * (x - running_mean) / sqrt(running_variance + eps) + beta`` per channel. The
    result for one sample depends on that sample and the state only, never on the batch.

    Raises
    ------
    As :func:`batch_norm`, plus :class:`RunningStateShapeError` on a channel-count mismatch
    and :class:`DegenerateNormalizationError` when ``eps = 0`` meets a zero running variance.

    Examples
    --------
    >>> state = BatchNormState(np.array([2.0]), np.array([4.0]))
    >>> batch_norm_eval(np.array([[0.0], [2.0], [6.0]]), [1.0], [0.0], state, eps=0.0).ravel()
    array([-1.,  0.,  2.])
    """
    eps = validated_eps(eps)
    X = _as_batch(X, "batch", np.float64)
    num_channels = X.shape[_CHANNEL_AXIS[X.ndim]]
    _check_state_channels(state, num_channels, _channels_of(X.shape))
    gamma = _as_per_channel(gamma, "gamma", num_channels, _channels_of(X.shape), np.float64)
    beta = _as_per_channel(beta, "beta", num_channels, _channels_of(X.shape), np.float64)
    if eps == 0.0 and (state.running_variance == 0).any():
        raise DegenerateNormalizationError(
            "eval-mode batch norm with eps = 0 divides by sqrt(running_variance), which is 0 "
            f"for channel {int(np.argmax(state.running_variance == 0))}; pass eps > 0"
        )
    shape = _broadcast_shape(num_channels, X.ndim)
    root = _root_of_sum(state.running_variance.reshape(shape), eps)
    X_hat = _scaled_difference(X, state.running_mean.reshape(shape), root)
    return _affine(gamma.reshape(shape), X_hat, beta.reshape(shape))


# ---------------------------------------------------------------------------
# Folding eval-mode batch norm into the preceding layer (eq. 16.6)
# ---------------------------------------------------------------------------


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


def _fold_scale_shift(
    b, gamma, beta, state: BatchNormState, eps: float, num_outputs: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel ``scale = gamma/sqrt(rv + eps)`` and folded bias (eq. 16.6)."""
    eps = validated_eps(eps)
    context = f"the layer before batch norm has {num_outputs} outputs"
    _check_state_channels(state, num_outputs, context)
    gamma = _as_per_channel(gamma, "gamma", num_outputs, context, np.float64)
    beta = _as_per_channel(beta, "beta", num_outputs, context, np.float64)
    b = np.zeros(num_outputs) if b is None else _as_bias(b, num_outputs, np.float64)
    if eps == 0.0 and (state.running_variance == 0).any():
        raise DegenerateNormalizationError(
            "cannot fold with eps = 0: some running_variance is 0, so the scale "
            "gamma/sqrt(running_variance) is undefined; pass eps > 0"
        )
    root = _root_of_sum(state.running_variance, eps)
    with np.errstate(over="ignore"):
        scale = gamma / root  # +-inf only if the exact scale is beyond range
        difference = b - state.running_mean
    if np.isinf(difference).any():
        # b and running_mean near the largest float with opposite signs: halve both.
        halved = _affine(scale, b * 0.5 - state.running_mean * 0.5, beta * 0.5)
        with np.errstate(over="ignore"):
            return scale, np.where(
                np.isinf(difference),
                2.0 * halved,
                _affine(scale, np.where(np.isinf(difference), 0.0, difference), beta),
            )
    return scale, _affine(scale, difference, beta)


def fold_batch_norm_into_linear(
    W, b, gamma, beta, state: BatchNormState, *, eps: float = 1e-5
) -> tuple[np.ndarray, np.ndarray]:
    """Fold an eval-mode batch norm into the linear layer before it (eq. 16.6).

    With ``y = x W^T + b`` (:func:`linear`) followed by :func:`batch_norm_eval` over the
    ``d_out`` features, and ``s = gamma / sqrt(running_variance + eps)`` per feature::

        W' = diag(s) W,        b' = s * (b - running_mean) + beta,

    so ``batch_norm_eval(linear(X, W, b)) == linear(X, W', b')`` up to rounding.

    Parameters
    ----------
    W : array_like, shape ``(d_out, d_in)``
    b : array_like, shape ``(d_out,)``, or None for a layer without bias
    gamma, beta : array_like, shape ``(d_out,)``
    state : BatchNormState with ``d_out`` channels
    eps : float >= 0, default 1e-5

    Returns
    -------
    (W', b') : float64 arrays of shapes ``(d_out, d_in)`` and ``(d_out,)``

    Raises
    ------
    WeightShapeError, AffineShapeError, RunningStateShapeError, NonFiniteInputError,
    NegativeEpsilonError, DegenerateNormalizationError (``eps = 0`` with a zero variance).

    Examples
    --------
    >>> state = BatchNormState(np.array([1.0]), np.array([4.0]))
    >>> fold_batch_norm_into_linear(np.array([[2.0, 4.0]]), None, [1.0], [0.0], state, eps=0.0)
    (array([[1., 2.]]), array([-0.5]))
    """
    W = _as_float(W, "W", np.float64)
    if W.ndim != 2:
        raise WeightShapeError(f"W must have shape (d_out, d_in), got {W.shape}")
    scale, folded_bias = _fold_scale_shift(b, gamma, beta, state, eps, W.shape[0])
    with np.errstate(over="ignore"):  # an entry beyond range is +-inf, as IEEE rounds it
        return scale[:, None] * W, folded_bias


def fold_batch_norm_into_conv2d(
    K, b, gamma, beta, state: BatchNormState, *, eps: float = 1e-5
) -> tuple[np.ndarray, np.ndarray]:
    """Fold an eval-mode batch norm into the 2-D convolution before it (eq. 16.6).

    With :func:`conv2d` (kernel ``K`` of shape ``(C_out, C_in, kh, kw)``, bias ``b``)
    followed by :func:`batch_norm_eval` over its ``C_out`` channels::

        K'[o] = s[o] * K[o],   b' = s * (b - running_mean) + beta,
        s = gamma / sqrt(running_variance + eps).

    Exact in real arithmetic for any stride and zero padding (the convolution is linear in
    ``K`` and the bias is added after the sum).

    Returns
    -------
    (K', b') : float64 arrays of shapes ``(C_out, C_in, kh, kw)`` and ``(C_out,)``

    Raises
    ------
    As :func:`fold_batch_norm_into_linear`.

    Examples
    --------
    >>> state = BatchNormState(np.array([0.0, 1.0]), np.array([1.0, 4.0]))
    >>> K2, b2 = fold_batch_norm_into_conv2d(np.ones((2, 1, 1, 1)), [0.0, 0.0],
    ...                                      [1.0, 1.0], [0.0, 0.0], state, eps=0.0)
    >>> K2.ravel(), b2
    (array([1. , 0.5]), array([ 0. , -0.5]))
    """
    K = _as_float(K, "K", np.float64)
    if K.ndim != 4:
        raise WeightShapeError(f"K must have shape (C_out, C_in, kh, kw), got {K.shape}")
    scale, folded_bias = _fold_scale_shift(b, gamma, beta, state, eps, K.shape[0])
    with np.errstate(over="ignore"):  # an entry beyond range is +-inf, as IEEE rounds it
        return scale[:, None, None, None] * K, folded_bias


@dataclass(frozen=True)
class BatchNormEvalWork:
    """Counts of the arithmetic an eval-mode batch norm costs on one batch.

    Attributes
    ----------
    elements : int
        Number of values in the batch (``N``).
    channels : int
        Number of channels (``C``).
    subtract, divide, multiply, add : int
        Element-wise operations of eval BN as eqs. 16.3-16.4 write it: one each per
        element (``x - mean``, ``/ std``, ``gamma *``, ``+ beta``), so each equals ``N``.
    per_channel : int
        Operations done once per channel as written: ``running_variance + eps`` and the
        square root, ``2C``.
    fused_elementwise : int
        Element-wise operations after precomputing ``s`` and ``beta - s*mean`` per channel
        (one multiply and one add per element, ``2N``): an unfolded inference engine.
    folded_elementwise : int
        Element-wise operations left once BN is folded into the preceding layer: 0 when that
        layer already adds a bias, else ``N`` (the new bias add).
    """

    elements: int
    channels: int
    subtract: int
    divide: int
    multiply: int
    add: int
    per_channel: int
    fused_elementwise: int
    folded_elementwise: int

    @property
    def elementwise(self) -> int:
        """Element-wise operations of BN as written, ``4N``."""
        return self.subtract + self.divide + self.multiply + self.add

    @property
    def removed_by_folding(self) -> int:
        """Element-wise operations folding removes at run time (``4N`` or ``3N``)."""
        return self.elementwise - self.folded_elementwise


def batch_norm_eval_flops(
    shape: tuple[int, ...], *, preceding_bias: bool = True
) -> BatchNormEvalWork:
    """Count the arithmetic of eval-mode batch norm on a batch of ``shape``, and after folding.

    Counted: scalar floating-point subtractions, divisions, multiplications and additions
    applied to the batch's values at run time (eqs. 16.3-16.4 with frozen statistics), and
    separately the per-channel ones. Not counted: memory traffic, broadcasting, and the
    one-time cost of folding itself (``C_out * fan_in`` multiplies for the weights plus
    ``O(C)`` for the bias, paid once offline, not per batch).

    Parameters
    ----------
    shape : tuple of int
        Batch shape ``(B, d)``, ``(B, T, d)`` or ``(B, C, H, W)``.
    preceding_bias : bool, default True
        Whether the layer BN is folded into already adds a bias.

    Raises
    ------
    UnsupportedRankError
    CountError
        A shape entry that is not a non-negative integer (a float, a bool, a negative).
    UnknownChoiceError
        ``preceding_bias`` is not a bool.

    Examples
    --------
    >>> work = batch_norm_eval_flops((8, 64, 32, 32))
    >>> work.elements, work.elementwise, work.fused_elementwise, work.removed_by_folding
    (524288, 2097152, 1048576, 2097152)
    """
    shape = _as_shape(shape)
    if not isinstance(preceding_bias, bool | np.bool_):
        raise UnknownChoiceError(f"preceding_bias must be True or False, got {preceding_bias!r}")
    _check_rank("batch", len(shape), shape)
    elements = math.prod(shape)
    channels = shape[_CHANNEL_AXIS[len(shape)]]
    return BatchNormEvalWork(
        elements=elements,
        channels=channels,
        subtract=elements,
        divide=elements,
        multiply=elements,
        add=elements,
        per_channel=2 * channels,
        fused_elementwise=2 * elements,
        folded_elementwise=0 if preceding_bias else elements,
    )
