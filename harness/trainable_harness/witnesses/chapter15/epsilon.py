"""Section 15.2: epsilon changes the map.

The RMS map with ``eps`` inside the square root against the exact map, on multiples of the
opening example's vector whose second moment ``mu2`` runs over eight decades of ``eps``.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.errors import ShapeError
from trainable_harness.normalization import normalization_jacobian, rms_normalize
from trainable_harness.witnesses.chapter15.invariance import EXAMPLE_VECTOR

__all__ = ["EPSILON", "EPSILON_RATIOS", "epsilon_sweep", "epsilon_witness", "sweep_row"]

EPSILON = 1e-5  # the eps of the section: PyTorch's default
# mu2 / eps over eight decades, the rows of the chapter's table.
EPSILON_RATIOS = (1e-2, 1e-1, 1.0, 1e1, 1e2, 1e4, 1e6)


def epsilon_sweep(
    direction: np.ndarray, ratios=EPSILON_RATIOS, *, eps: float = EPSILON
) -> np.ndarray:
    """The RMS map with epsilon against the exact map, at second moments ``ratio * eps``.

    Section 15.2. For each ratio, ``direction`` is rescaled to ``x`` with
    ``mu2 = mean(x**2) = ratio * eps``, and three things are measured in float64:

    - ``gap_from_exact = max |N_eps(x) - N(x)|`` (eq. 15.2 with and without eps);
    - ``scale_break = max |N_eps(2x) - N_eps(x)|``, what doubling the input still moves;
    - ``gain_ratio``: the norm of the exact Jacobian with eps along ``x/||x||`` over its
      norm along a unit tangent orthogonal to ``x`` and to ``1``; in theory
      ``1 / (1 + ratio)``.

    Parameters
    ----------
    direction : numpy.ndarray, shape (d,), d >= 3
        A direction with zero mean (so the centered and RMS maps agree on it).
    ratios : sequence of float
        Values of ``mu2 / eps``.
    eps : float, default :data:`EPSILON`

    Returns
    -------
    numpy.ndarray, shape (len(ratios), 4)
        Rows ``(ratio, gap_from_exact, scale_break, gain_ratio)``.

    Raises
    ------
    ShapeError
        If ``direction`` is not a vector of at least 3 values with zero mean.

    Examples
    --------
    >>> rows = epsilon_sweep(np.array([-2.0, -1.0, 1.0, 2.0]), [1.0])
    >>> round(float(rows[0, 3]), 12)
    0.5
    """
    direction = np.asarray(direction, dtype=np.float64)
    if direction.ndim != 1 or direction.size < 3 or abs(direction.mean()) > 1e-12:
        raise ShapeError(
            "epsilon_sweep: direction must be a vector of at least 3 values with zero mean, "
            f"got shape {direction.shape}"
        )
    # A unit vector orthogonal to the direction and to the constant vector 1.
    tangent = np.linalg.svd(np.stack([direction, np.ones_like(direction)]))[2][-1]
    rows = []
    for ratio in ratios:
        x = direction * np.sqrt(ratio * eps / np.mean(direction**2))
        gap_from_exact = np.max(np.abs(rms_normalize(x, eps=eps) - rms_normalize(x)))
        scale_break = np.max(np.abs(rms_normalize(2.0 * x, eps=eps) - rms_normalize(x, eps=eps)))
        jacobian = normalization_jacobian(x, centered=False, eps=eps)
        radial = np.linalg.norm(jacobian @ (x / np.linalg.norm(x)))
        tangential = np.linalg.norm(jacobian @ tangent)
        rows.append((ratio, gap_from_exact, scale_break, radial / tangential))
    return np.array(rows)


def sweep_row(rows: np.ndarray, ratio: float) -> np.ndarray:
    """The row of an :func:`epsilon_sweep` table whose ``mu2 / eps`` is ``ratio``.

    Examples
    --------
    >>> sweep_row(np.array([[1.0, 0.1, 0.2, 0.5], [10.0, 0.0, 0.0, 0.1]]), 10.0)
    array([10. ,  0. ,  0. ,  0.1])
    """
    return rows[np.flatnonzero(rows[:, 0] == ratio)[0]]


@claim_computation
def epsilon_witness(*, eps: float = EPSILON) -> dict:
    """Claim ``c15-epsilon-001``: how much epsilon changes the RMS map (section 15.2).

    :func:`epsilon_sweep` of :data:`EXAMPLE_VECTOR` over :data:`EPSILON_RATIOS`, in float64.

    Returns
    -------
    dict
        ``scale_break_at_1`` and ``gain_ratio_at_1`` (``mu2 = eps``),
        ``scale_break_at_1e4`` (``mu2 = 1e4 eps``), ``gap_at_small`` (``mu2 = 1e-2 eps``),
        ``gain_ratio_formula_error`` (the largest relative gap between the measured gain
        ratio and ``1 / (1 + mu2 / eps)`` over the sweep), ``gain_cap``, ``1 / sqrt(eps)``,
        the largest gain the map can have, and ``gain_at_small_over_cap``, the spectral norm
        of the Jacobian at ``mu2 = 1e-2 eps`` (mean square of ``(-2, -1, 1, 2)`` is 2.5) as
        a fraction of that cap.

    Examples
    --------
    >>> result = epsilon_witness()
    >>> round(result["scale_break_at_1"], 3), round(result["gain_ratio_at_1"], 2)
    (0.237, 0.5)
    >>> round(result["gain_cap"])
    316
    """
    ratios = np.array(EPSILON_RATIOS)
    direction = np.array(EXAMPLE_VECTOR)
    rows = epsilon_sweep(direction, ratios, eps=eps)
    theory = 1.0 / (1.0 + ratios)
    return {
        "scale_break_at_1": float(sweep_row(rows, 1.0)[2]),
        "gain_ratio_at_1": float(sweep_row(rows, 1.0)[3]),
        "scale_break_at_1e4": float(sweep_row(rows, 1e4)[2]),
        "gap_at_small": float(sweep_row(rows, 1e-2)[1]),
        "gain_ratio_formula_error": float(np.max(np.abs(rows[:, 3] - theory) / theory)),
        "gain_cap": float(1.0 / np.sqrt(eps)),
        "gain_at_small_over_cap": float(
            np.linalg.norm(
                normalization_jacobian(
                    direction * np.sqrt(1e-2 * eps / np.mean(direction**2)),
                    centered=False,
                    eps=eps,
                ),
                ord=2,
            )
            * np.sqrt(eps)
        ),
    }
