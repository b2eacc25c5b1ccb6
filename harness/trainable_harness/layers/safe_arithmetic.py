"""The element-wise steps of eqs. 16.3-16.4 without a spurious overflow.

``(a - b) / denominator`` and ``gamma * x_hat + beta`` (the root ``sqrt(variance + eps)``
is :func:`~trainable_harness.normalization.root_of_sum`, written once there), each
computed directly and, only where an intermediate sum or product overflows although the
result would not, again from halved (or quartered) operands. Halving is exact away from
the subnormals, so these agree with the direct forms wherever those are finite; a result
whose exact value lies beyond the dtype's range is +-inf, as IEEE rounding gives it,
without a warning, and :func:`_check_representable` turns it into a
:class:`~trainable_harness.errors.ResultOverflowError` that names the operands. Where even
the halved forms overflow on the way (``gamma (x - mean) / root`` with a huge quotient and
a tiny ``gamma``), :func:`_affine_quotient` and :func:`_product_quotient` multiply
mantissas and add exponents. Used by train mode (the affine step), eval mode and folding.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import ResultOverflowError, first_nonfinite


def _scaled_difference(a: np.ndarray, b: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``(a - b) / denominator`` without a spurious overflow of ``a - b``.

    Where ``a - b`` overflows (``a`` and ``b`` near the largest float with opposite signs),
    it is computed as ``(a/2 - b/2) / (denominator/2)``. A quotient whose exact value lies
    beyond the range is +-inf, as IEEE rounding gives (the callers refuse it).
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
    exact value lies beyond the dtype's range is +-inf, as IEEE rounding gives (the
    callers then raise with :func:`_check_representable`).
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


def _product_quotient(a: np.ndarray, b: np.ndarray, c: np.ndarray, shift=0) -> np.ndarray:
    """``a * b / c * 2**shift`` (``c > 0``) with no intermediate overflow or underflow.

    Each operand is split as ``m 2**e`` with ``0.5 <= |m| < 1`` (:func:`numpy.frexp`, exact);
    the mantissas are multiplied and divided (``|m_a m_b / m_c| < 2``) and the exponents
    added, and one power of two is applied at the end. The result is ``+-inf`` only where
    its exact value is beyond the dtype's range.
    """
    (ma, ea), (mb, eb), (mc, ec) = np.frexp(a), np.frexp(b), np.frexp(c)
    exponent = ea.astype(np.int64) + eb.astype(np.int64) - ec.astype(np.int64) + shift
    with np.errstate(over="ignore"):
        return np.ldexp(ma * mb / mc, exponent)


def _affine_quotient(
    gamma: np.ndarray, a: np.ndarray, b: np.ndarray, root: np.ndarray, beta: np.ndarray
) -> np.ndarray:
    """``gamma (a - b) / root + beta`` (``root > 0``) with no intermediate overflow.

    ``a - b`` is formed from halves where it overflows; ``gamma (a - b) / root`` by
    :func:`_product_quotient`, and the sum with ``beta`` from halves. The slow path of
    eval mode and folding, taken only where the direct form is not finite.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        difference = a - b
        overflowed = np.isinf(difference)
        halved = np.where(overflowed, a * 0.5 - b * 0.5, difference)  # (a - b)/2 or a - b
        half_term = _product_quotient(gamma, halved, root, np.where(overflowed, 0, -1))
        return (half_term + beta * 0.5) * 2


def _check_representable(result: np.ndarray, what: str, describe) -> None:
    """Raise :class:`ResultOverflowError` if ``result`` holds +-inf or NaN.

    Only called on results computed without spurious overflow, so a non-finite entry is
    one whose exact value is beyond the dtype's range. ``describe(index)`` returns the
    operands at that index, named, and what to rescale.
    """
    index = first_nonfinite(result)
    if index is not None:
        raise ResultOverflowError(
            f"{what} at index {index} is beyond the largest {result.dtype} "
            f"({np.finfo(result.dtype).max:.4g}), so it has no finite value: {describe(index)}"
        )
