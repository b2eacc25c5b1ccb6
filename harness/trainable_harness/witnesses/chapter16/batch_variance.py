"""Worked solution of chapter 16's exercise 3: the expected batch variance.

In the model of :mod:`trainable_harness.small_batch` (a variance shared by a sample's
positions and an independent one), the mean batch population variance against its
derived expectation, with and without Bessel's correction.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.small_batch import (
    INDEPENDENT_VARIANCE,
    SHARED_VARIANCE,
    SIDE,
    batch_population_variances,
    draw_activations,
    expected_batch_variance,
)

__all__ = ["BATCH_VARIANCE_SAMPLES", "BATCH_VARIANCE_SIZES", "batch_variance_witness"]

BATCH_VARIANCE_SIZES = (1, 2, 8)  # batch sizes of exercise 3's check
BATCH_VARIANCE_SAMPLES = 1024  # samples drawn per batch size and seed


@claim_computation
def batch_variance_witness(seed: int) -> dict:
    """Claim ``c16-batch-variance-001``, one seed: exercise 3's expected batch variance.

    In the model of :mod:`trainable_harness.small_batch` (shared variance ``tau^2``,
    independent variance ``sigma^2``, ``H W`` positions per sample), draw
    ``BATCH_VARIANCE_SAMPLES`` samples per batch size ``B`` in ``BATCH_VARIANCE_SIZES``
    (``rng = numpy.random.default_rng(seed)``), in batches of ``B``, and take each channel's
    batch population variance (eq. 16.2 over ``m = B H W`` values). Per size, under
    ``b<B>``:

    - ``mean_over_prediction``: the mean of those variances over batches and channels
      divided by :func:`~trainable_harness.small_batch.expected_batch_variance`,
      ``tau^2 (1 - 1/B) + sigma^2 (1 - 1/m)``;
    - ``bessel_over_total``: the same mean times Bessel's ``m / (m - 1)``, divided by the
      population variance ``tau^2 + sigma^2`` it is meant to estimate;
    - ``bessel_over_total_predicted``: what the derivation predicts for it,
      ``m / (m - 1)`` times the expected variance over ``tau^2 + sigma^2`` (at ``B = 1``
      exactly ``sigma^2 / (tau^2 + sigma^2)``).

    Examples
    --------
    >>> result = batch_variance_witness(seed=0)
    >>> result["b1"]["bessel_over_total_predicted"]
    0.75
    >>> abs(result["b8"]["mean_over_prediction"] - 1) < 0.02
    True
    """
    rng = np.random.default_rng(seed)
    total = SHARED_VARIANCE + INDEPENDENT_VARIANCE
    out = {}
    for batch in BATCH_VARIANCE_SIZES:
        X = draw_activations(rng, BATCH_VARIANCE_SAMPLES // batch, batch)
        measured = float(np.mean(batch_population_variances(X)))
        expected = expected_batch_variance(batch)
        bessel = (batch * SIDE**2) / (batch * SIDE**2 - 1)
        out[f"b{batch}"] = {
            "mean_over_prediction": measured / expected,
            "bessel_over_total": bessel * measured / total,
            "bessel_over_total_predicted": bessel * expected / total,
        }
    return out
