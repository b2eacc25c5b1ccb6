"""Worked solution of chapter 16's exercise 2: running means under a drifting mean.

The lag and the noise of the moving average of eq. 16.5 for four momenta, while the mean
of the training batches drifts (:mod:`trainable_harness.running_drift`).
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.running_drift import MOMENTA, drifting_running_means

__all__ = ["drift_momentum_witness"]


@claim_computation
def drift_momentum_witness(seed: int) -> dict:
    """Claim ``c16-drift-momentum-001``, one seed: running means under a drifting mean.

    :func:`trainable_harness.running_drift.drifting_running_means` with momenta 1%, 10%,
    30% and 50% (100 batches of 32 from ``N(mu_t, 4)``, ``mu_t`` from 4 to 6): the error
    against the final mean for each momentum (``final_error_1pct`` ...) and the smallest
    error against the merged mean of all training values over the four momenta
    (``merged_error_min``).

    Examples
    --------
    >>> result = drift_momentum_witness(seed=0)
    >>> result["final_error_1pct"] > result["final_error_10pct"]
    True
    """
    errors = drifting_running_means(seed)
    names = [f"final_error_{round(100 * m)}pct" for m in MOMENTA]
    result = {name: float(e) for name, e in zip(names, errors["final_error"], strict=True)}
    result["merged_error_min"] = float(np.min(errors["merged_error"]))
    return result
