"""Standardization over a reduction set, written once (eqs. 16.1-16.3).

Every experiment of the harness that standardizes -- the four layers of
:mod:`~trainable_harness.layers.normalize`, the small-batch model's train mode, batch
renormalization and group norm (:mod:`trainable_harness.small_batch`), the estimator-shift
experiment (:mod:`trainable_harness.estimator_shift`) -- calls one of the two functions
below, and both divide by :func:`~trainable_harness.normalization.root_of_sum`, so a
mistake in the standardization reaches every claim that relies on it:

- :func:`standardize`, with the reduction set's own statistics (train mode):
  ``x_hat = (x - mean) / sqrt(population_variance + eps)``, and
  :func:`standardized_moments`, the same computation with its mean, variance and root;
- :func:`standardize_with`, with given statistics (evaluation mode, population or merged
  statistics): ``(x - mean) / sqrt(variance + eps)``.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    DegenerateNormalizationError,
    InvalidMomentStateError,
    ShapeError,
    check_real_array,
)
from trainable_harness.layers.safe_arithmetic import _scaled_difference
from trainable_harness.normalization import (
    ScaledMoments,
    _reduction_axes,
    root_of_sum,
    scaled_moments,
    validated_eps,
)

__all__ = ["standardize", "standardize_with", "standardized_moments"]


def standardized_moments(X: np.ndarray, axes, *, eps: float, what: str = "X") -> ScaledMoments:
    """Mean, population variance and standardized values of ``X`` over ``axes``.

    Per reduction set ``S`` (the entries of ``X`` that agree off ``axes``), ``m = |S|``:

    - ``mean = (1/m) sum_{i in S} x_i`` (eq. 16.1);
    - ``population_variance = (1/m) sum_{i in S} (x_i - mean)^2`` (eq. 16.2: divided by
      ``m``, not ``m - 1``);
    - ``x_hat_i = (x_i - mean) / sqrt(population_variance + eps)`` (eq. 16.3), eps inside
      the root (:func:`~trainable_harness.normalization.root_of_sum`).

    Computed by :func:`~trainable_harness.normalization.scaled_moments`: the deviations
    after a shift by the set's first value, scaled by a power of two before squaring, so
    no square overflows or vanishes (values near ``1e300`` are standardized).

    Parameters
    ----------
    X : array_like, float64 (any floating dtype is kept, integers are promoted), finite
        Never modified.
    axes : tuple of int
        Distinct axes that form a reduction set (a negative axis counts from the end),
        none of length 0.
    eps : float
        A real number ``>= 0`` (:func:`~trainable_harness.normalization.validated_eps`).
    what : str, default ``"X"``
        The name of the computation, for the message of a refusal.

    Returns
    -------
    ScaledMoments
        ``.normalized()`` is ``x_hat`` (``X``'s shape); ``.mean`` (in ``X``'s units),
        ``.variance()`` (the population variance; it raises
        :class:`~trainable_harness.errors.MomentOverflowError` beyond the dtype's range)
        and ``.root()`` (``sqrt(population_variance + eps)``) have ``X``'s shape with
        ``axes`` of length 1.

    Raises
    ------
    DegenerateNormalizationError
        ``eps = 0`` and a reduction set holds one repeated value (its variance is 0, so
        ``x_hat`` is undefined); the message names ``what`` and the set.
    NonFiniteInputError, UnsupportedDtypeError
        NaN/inf in ``X`` (index named); a bool, complex, object or string ``X``.
    ShapeError, EmptyInputError
        ``axes`` is not a tuple of distinct axes of ``X``, or one of them has length 0.
    NegativeEpsilonError, NonFiniteInputError, UnsupportedDtypeError
        ``eps`` negative, NaN/inf, or not a real number.

    Examples
    --------
    >>> parts = standardized_moments(np.array([[1.0, 10.0], [3.0, 30.0]]), (0,), eps=0.0)
    >>> parts.normalized(), parts.mean, parts.variance(), parts.root()
    (array([[-1., -1.],
           [ 1.,  1.]]), array([[ 2., 20.]]), array([[  1., 100.]]), array([[ 1., 10.]]))
    """
    eps = validated_eps(eps)
    X = check_real_array(X, "X", None)
    axes = _reduction_axes(X, axes)
    parts = scaled_moments(X, axes, centered=True, eps=eps, with_mean=True)
    if eps == 0.0 and parts.constant.any():
        where = tuple(int(i) for i in np.argwhere(parts.constant)[0])
        raise DegenerateNormalizationError(
            f"{what} with eps = 0 is undefined: a reduction set (statistic index {where} "
            f"over axes {tuple(axes)}) holds one repeated value, so its variance is 0. "
            "Pass eps > 0 (e.g. 1e-5) for a defined output"
        )
    return parts


def standardize(X: np.ndarray, axes, *, eps: float, what: str = "X") -> np.ndarray:
    """``(x - mean) / sqrt(population_variance + eps)`` over ``axes``, with ``X``'s own statistics.

    :func:`standardized_moments`'s ``x_hat`` (see there for the math, eps and the
    population variance ``1/m``); same parameters and refusals. Returns a new array of
    ``X``'s shape and dtype (float64 for float64 input); ``X`` is never modified.

    Examples
    --------
    >>> standardize(np.array([[1.0, 3.0, 5.0]]), (1,), eps=0.0).round(4)
    array([[-1.2247,  0.    ,  1.2247]])
    """
    return standardized_moments(X, axes, eps=eps, what=what).normalized()


def standardize_with(X, mean, variance, *, eps: float, what: str = "X") -> np.ndarray:
    """``(x - mean) / sqrt(variance + eps)`` with given statistics (evaluation mode).

    The statistics are not ``X``'s own: a running or merged state, or the population's.
    The root is :func:`~trainable_harness.normalization.root_of_sum` (eps inside it), the
    difference is formed from halves where ``x - mean`` overflows.

    Parameters
    ----------
    X : array_like, float64 (integers are promoted), finite, any shape
        Never modified.
    mean, variance : numpy.ndarray or float, finite, broadcastable with ``X``
        The statistics; ``variance >= 0`` (a population or sample variance, as the caller
        chose).
    eps : float
        A real number ``>= 0``.
    what : str, default ``"X"``
        The name of the computation, for the message of a refusal.

    Returns
    -------
    numpy.ndarray
        The broadcast shape of ``X``, ``mean`` and ``variance``; float64 for float64 input.
        An entry whose exact value is beyond the dtype's range is +-inf (the callers
        refuse it).

    Raises
    ------
    DegenerateNormalizationError
        ``eps = 0`` and some ``variance`` is 0.
    NonFiniteInputError, UnsupportedDtypeError
        NaN/inf in ``X``, ``mean`` or ``variance`` (named, with the index); a bool,
        complex, object or string one.
    InvalidMomentStateError
        A negative ``variance`` (named, with the index).
    ShapeError
        ``X``, ``mean`` and ``variance`` do not broadcast together (shapes named).
    NegativeEpsilonError, NonFiniteInputError, UnsupportedDtypeError
        ``eps`` negative, NaN/inf, or not a real number.

    Examples
    --------
    >>> standardize_with(np.array([0.0, 2.0, 6.0]), 2.0, 4.0, eps=0.0)
    array([-1.,  0.,  2.])
    """
    validated_eps(eps)  # only checked: eps enters the root as given, as it always has
    X = check_real_array(X, "X", None)
    variance = check_real_array(variance, "variance", None)
    # Checked, not converted: a Python float mean keeps its weak type in the arithmetic.
    mean_shape = check_real_array(mean, "mean", None).shape
    if (variance < 0).any():
        index = tuple(int(i) for i in np.argwhere(variance < 0)[0])
        raise InvalidMomentStateError(
            f"variance holds {variance[index]!r} at index {index}; a variance is >= 0"
        )
    try:
        np.broadcast_shapes(X.shape, mean_shape, variance.shape)
    except ValueError:
        raise ShapeError(
            f"{what}: X {X.shape}, mean {mean_shape} and variance {variance.shape} do not "
            "broadcast together"
        ) from None
    if eps == 0.0 and (variance == 0).any():
        raise DegenerateNormalizationError(
            f"{what} with eps = 0: a given variance is 0, so (x - mean) / sqrt(variance) is "
            "undefined; pass eps > 0"
        )
    with np.errstate(over="ignore"):
        return _scaled_difference(X, mean, root_of_sum(variance, eps))
