"""Section 15.1 and the FP32 check of 15.2: what the centered and the RMS map forget.

The opening example of chapter 15: ``x = (-2, -1, 1, 2)`` and ``x + 10`` under both maps
(eqs. 15.1-15.2, eps = 0, float64), the ranks of their exact Jacobians (eq. 15.3), and the
population variance of ``(9998, 9999, 10001, 10002)`` by the raw-moment formula and by
centering first.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.moments import raw_and_centered_variance
from trainable_harness.normalization import (
    centered_normalize,
    normalization_jacobian,
    rms_normalize,
)

__all__ = [
    "CANCELLATION_VALUES",
    "EXAMPLE_VECTOR",
    "RANK_TOLERANCE",
    "SHIFT",
    "invariance_witness",
    "jacobian_rank",
    "shift_change",
]

EXAMPLE_VECTOR = (-2.0, -1.0, 1.0, 2.0)  # zero mean: both maps agree on it
SHIFT = 10.0  # the constant added to every coordinate
CANCELLATION_VALUES = (9998.0, 9999.0, 10001.0, 10002.0)  # mean 10^4, variance 2.5
# Singular values of the d = 4 Jacobians are O(1) or O(1e-16): any threshold in between
# counts the erased directions, and 1e-10 is far from both.
RANK_TOLERANCE = 1e-10


def shift_change(normalize: Callable[[np.ndarray], np.ndarray], x, shift: float) -> float:
    """``max_i |N(x + shift)_i - N(x)_i|``: how far a constant shift moves the output of ``N``.

    Zero for the centered map whenever ``x + shift`` centers to ``x`` exactly; for the RMS
    map the shift survives as a constant component of the output.

    Examples
    --------
    >>> shift_change(centered_normalize, np.array(EXAMPLE_VECTOR), SHIFT)
    0.0
    >>> round(shift_change(rms_normalize, np.array(EXAMPLE_VECTOR), SHIFT), 3)
    2.055
    """
    x = np.asarray(x, dtype=np.float64)
    return float(np.max(np.abs(normalize(x + shift) - normalize(x))))


def jacobian_rank(jacobian: np.ndarray) -> int:
    """Rank of a Jacobian, counting singular values above :data:`RANK_TOLERANCE`.

    Examples
    --------
    >>> jacobian_rank(normalization_jacobian(np.array(EXAMPLE_VECTOR), centered=True))
    2
    """
    return int(np.linalg.matrix_rank(jacobian, tol=RANK_TOLERANCE))


@claim_computation
def invariance_witness() -> dict:
    """Claim ``c15-invariance-001``: invariances, Jacobian ranks and FP32 cancellation.

    Section 15.1: for ``x`` = :data:`EXAMPLE_VECTOR` and ``x + 10``, the largest coordinate
    change of the centered map (eq. 15.1) and of the RMS map (eq. 15.2), both at eps = 0 in
    float64 (:func:`shift_change`); the ranks of their exact Jacobians at ``x`` (eq. 15.3;
    :func:`jacobian_rank`). Section 15.2: the population variance of the FP32 values
    :data:`CANCELLATION_VALUES` by the raw-moment formula and by centering first.

    Returns
    -------
    dict
        ``centered_shift_deviation``, ``rms_shift_deviation`` (floats),
        ``centered_shifted_mean`` (``|mean N(x + 10)|`` of the centered map),
        ``rms_direction_gap`` (one minus the cosine of the RMS output of ``x + 10`` with
        ``x + 10``), ``rms_constant_component_gap`` (``|mean RMS(y) - mean(y) / rms(y)|``
        for ``y = x + 10``),
        ``centered_jacobian_rank``, ``rms_jacobian_rank`` (ints),
        ``fp32_raw_moment_variance``, ``fp32_centered_variance`` (floats), and
        ``fp64_raw_moment_variance``, the raw-moment formula on the same values in FP64.

    Examples
    --------
    >>> result = invariance_witness()
    >>> result["centered_shift_deviation"], round(result["rms_shift_deviation"], 3)
    (0.0, 2.055)
    >>> result["centered_jacobian_rank"], result["rms_jacobian_rank"]
    (2, 3)
    >>> result["fp32_raw_moment_variance"], result["fp32_centered_variance"]
    (0.0, 2.5)
    >>> result["fp64_raw_moment_variance"]
    2.5
    """
    x = np.array(EXAMPLE_VECTOR)
    values = np.array(CANCELLATION_VALUES)
    raw, centered = raw_and_centered_variance(values, dtype=np.float32)
    fp64_raw, _ = raw_and_centered_variance(values, dtype=np.float64)
    shifted = x + SHIFT
    rms_output = rms_normalize(shifted)
    cosine = rms_output @ shifted / (np.linalg.norm(rms_output) * np.linalg.norm(shifted))
    return {
        "centered_shift_deviation": shift_change(centered_normalize, x, SHIFT),
        "rms_shift_deviation": shift_change(rms_normalize, x, SHIFT),
        # What each map forgets, measured on x + 10: the centered output has mean 0 (the
        # shift is gone); the RMS output points along x + 10 (only the scale is gone) and
        # keeps the shift as its constant component, mean(y) / rms(y).
        "centered_shifted_mean": float(abs(np.mean(centered_normalize(shifted)))),
        "rms_direction_gap": float(1.0 - cosine),
        "rms_constant_component_gap": float(
            abs(np.mean(rms_output) - np.mean(shifted) / np.sqrt(np.mean(shifted**2)))
        ),
        "centered_jacobian_rank": jacobian_rank(normalization_jacobian(x, centered=True)),
        "rms_jacobian_rank": jacobian_rank(normalization_jacobian(x, centered=False)),
        "fp32_raw_moment_variance": raw,
        "fp32_centered_variance": centered,
        "fp64_raw_moment_variance": fp64_raw,
    }
