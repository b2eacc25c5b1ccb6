"""The element-wise steps of eqs. 16.3-16.4 without a spurious overflow.

``sqrt(variance + eps)``, ``(a - b) / denominator`` and ``gamma * x_hat + beta``, each
computed directly and, only where an intermediate sum or product overflows although the
result would not, again from halved (or quartered) operands. Halving is exact away from
the subnormals, so these agree with the direct forms wherever those are finite; a result
whose exact value lies beyond the dtype's range is +-inf, as IEEE rounding gives it,
without a warning. Used by train mode (the affine step), eval mode and folding.
"""

from __future__ import annotations

import numpy as np


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
