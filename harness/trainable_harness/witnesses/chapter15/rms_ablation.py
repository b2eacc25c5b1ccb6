"""Worked solution of chapter 15's exercise 5: the control an RMSNorm ablation needs.

LayerNorm and RMSNorm differ only through a token's mean: a standardized token shifted by
a fraction of its standard deviation, under both maps, and the two placements of epsilon
in RMSNorm.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation, field_name
from trainable_harness.normalization import centered_normalize, rms_normalize

__all__ = ["AUDIT_EPS", "AUDIT_MEAN_SHIFTS", "AUDIT_WIDTH", "rms_ablation_control_witness"]

AUDIT_WIDTH = 64  # coordinates of the audited token
AUDIT_MEAN_SHIFTS = (0.0, 0.1, 1.0)  # token mean over its standard deviation
AUDIT_EPS = 1e-6  # the epsilon of the placement comparison


@claim_computation
def rms_ablation_control_witness(seed: int) -> dict:
    """Claim ``c15-rms-ablation-001``: where LayerNorm and RMSNorm can differ at all.

    Exercise 5 of chapter 15. A token ``z`` of ``AUDIT_WIDTH`` coordinates drawn from
    ``default_rng(seed)`` and centered and scaled (mean 0, population variance 1, so its
    RMS is 1) is shifted by ``m`` in ``AUDIT_MEAN_SHIFTS``. With ``x = z + m`` the centered
    map (eq. 15.1) returns ``z`` and the RMS map (eq. 15.2) ``(z + m) / sqrt(1 + m^2)``, so

        ``gap(m) = max_i |z_i - (z_i + m) / sqrt(1 + m^2)|``,

    zero at ``m = 0`` and about ``m`` for small ``m``. The witness measures the gap with
    :func:`centered_normalize` and :func:`rms_normalize` (eps 0) and compares it with the
    closed form. It also compares two placements of epsilon in RMSNorm, inside the root
    (``x / sqrt(mean(x^2) + eps)``, :func:`rms_normalize`) and added to the RMS
    (``x / (rms(x) + eps)``), on the token scaled to RMS ``sqrt(AUDIT_EPS)`` and to RMS 1:
    the second over the first is ``sqrt(r^2 + eps) / (r + eps)`` for RMS ``r``.

    Returns
    -------
    dict
        ``gap.shift_<m>`` for each shift; ``closed_form_deviation`` (the largest
        ``|gap - closed form|``); ``placement_ratio_small_token`` and
        ``placement_ratio_unit_token`` (the output with eps added to the RMS over the
        output with eps inside the root, one value per token, the largest over its
        coordinates).

    Examples
    --------
    >>> result = rms_ablation_control_witness(seed=0)
    >>> result["gap"]["shift_0"] < 1e-14 < result["gap"]["shift_0p1"]
    True
    """
    rng = np.random.default_rng(seed)
    z = centered_normalize(rng.normal(size=AUDIT_WIDTH))
    gaps, deviations = {}, []
    for shift in AUDIT_MEAN_SHIFTS:
        x = z + shift
        gap = float(np.max(np.abs(centered_normalize(x) - rms_normalize(x))))
        closed = float(np.max(np.abs(z - (z + shift) / np.sqrt(1.0 + shift**2))))
        gaps[field_name("shift", shift)] = gap
        deviations.append(abs(gap - closed))

    def placement_ratio(rms_value: float) -> float:
        # x / (rms + eps) over x / sqrt(rms^2 + eps): the same for every coordinate.
        x = z * rms_value
        inside_root = rms_normalize(x, eps=AUDIT_EPS)
        on_rms = x / (np.sqrt(np.mean(x**2)) + AUDIT_EPS)
        return float(np.max(on_rms / inside_root))

    return {
        "gap": gaps,
        "closed_form_deviation": float(max(deviations)),
        "placement_ratio_small_token": placement_ratio(np.sqrt(AUDIT_EPS)),
        "placement_ratio_unit_token": placement_ratio(1.0),
    }
