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

from trainable_harness.errors import DegenerateNormalizationError
from trainable_harness.layers.safe_arithmetic import _scaled_difference
from trainable_harness.normalization import ScaledMoments, root_of_sum, scaled_moments

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
    X : numpy.ndarray, float64 (any floating dtype is kept), finite, any shape
        Checked by the caller (finite, non-empty); never modified.
    axes : tuple of int
        Non-negative axes that form a reduction set.
    eps : float
        ``>= 0``, checked by the caller (:func:`~trainable_harness.normalization.validated_eps`).
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

    Examples
    --------
    >>> parts = standardized_moments(np.array([[1.0, 10.0], [3.0, 30.0]]), (0,), eps=0.0)
    >>> parts.normalized(), parts.mean, parts.variance(), parts.root()
    (array([[-1., -1.],
           [ 1.,  1.]]), array([[ 2., 20.]]), array([[  1., 100.]]), array([[ 1., 10.]]))
    """
    parts = scaled_moments(X, tuple(axes), centered=True, eps=eps, with_mean=True)
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
    X : numpy.ndarray, float64, finite, any shape
        Never modified.
    mean, variance : numpy.ndarray or float, broadcastable to ``X``
        The statistics; ``variance >= 0`` (a population or sample variance, as the caller
        chose).
    eps : float
        ``>= 0``, checked by the caller.
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

    Examples
    --------
    >>> standardize_with(np.array([0.0, 2.0, 6.0]), 2.0, 4.0, eps=0.0)
    array([-1.,  0.,  2.])
    """
    variance = np.asarray(variance)
    if eps == 0.0 and (variance == 0).any():
        raise DegenerateNormalizationError(
            f"{what} with eps = 0: a given variance is 0, so (x - mean) / sqrt(variance) is "
            "undefined; pass eps > 0"
        )
    with np.errstate(over="ignore"):
        return _scaled_difference(X, mean, root_of_sum(variance, eps))
