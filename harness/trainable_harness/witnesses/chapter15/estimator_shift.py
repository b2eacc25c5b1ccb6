"""Worked solution of chapter 15's exercise 4: the finite-estimator part and the shift part.

The train/evaluation discrepancy of section 15.3 over batch counts and sizes, then with a
shift between the training and evaluation populations, by
:mod:`trainable_harness.estimator_shift`.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.estimator_shift import mean_square_discrepancy, shift_part

__all__ = [
    "ESTIMATOR_BATCH_COUNTS",
    "ESTIMATOR_BATCH_SIZES",
    "ESTIMATOR_DEFAULT_COUNT",
    "ESTIMATOR_SHIFT",
    "estimator_shift_witness",
]

ESTIMATOR_SHIFT = 1.0  # half a standard deviation of N(4, 2^2)
ESTIMATOR_BATCH_SIZES = (8, 32)  # evaluation (and training) batch sizes compared
ESTIMATOR_BATCH_COUNTS = (2, 32)  # training batch counts compared
ESTIMATOR_DEFAULT_COUNT = 8


@claim_computation
def estimator_shift_witness(seed: int) -> dict:
    """Claim ``c15-estimator-shift-001``, one seed: finite-estimator and shift parts.

    From :mod:`trainable_harness.estimator_shift` (20 draws per setting, training from
    N(4, 2^2)): ``batch_size_ratio``, the RMS control discrepancy (no shift) with batches
    of 8 over that with batches of 32 (8 batches each); ``batch_count_ratio``, the control
    with 2 batches over that with 32 (batches of 32); ``shift_recovered``,
    ``sqrt(E[total^2] - E[control^2])`` at a shift of 1 over ``1 / sqrt(4 + eps)``
    (8 batches of 32).

    Examples
    --------
    >>> result = estimator_shift_witness(seed=0)
    >>> result["batch_size_ratio"] > 1
    True
    """

    def rms(count, size, shift, stream):
        return mean_square_discrepancy(seed + stream, count, size, shift) ** 0.5

    small, large = ESTIMATOR_BATCH_SIZES
    few, many = ESTIMATOR_BATCH_COUNTS
    count = ESTIMATOR_DEFAULT_COUNT
    control = rms(count, large, 0.0, 0)
    total = rms(count, large, ESTIMATOR_SHIFT, 1)
    return {
        "batch_size_ratio": rms(count, small, 0.0, 2) / control,
        "batch_count_ratio": rms(few, large, 0.0, 3) / rms(many, large, 0.0, 4),
        "shift_recovered": float(
            np.sqrt(max(total**2 - control**2, 0.0)) / shift_part(ESTIMATOR_SHIFT)
        ),
    }
