"""Section 16.2: the four equations of batch norm, and the identity inside them.

With ``gamma = sqrt(var + eps)`` and ``beta = mean`` per channel, batch norm returns its
input; in floating point, to within a stated number of rounding units.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.layers import batch_norm, batch_statistics
from trainable_harness.witnesses.chapter16.batch_dependence import channel_offset_batch

__all__ = [
    "IDENTITY_BOUND_FACTOR",
    "IDENTITY_EPS",
    "IDENTITY_LOG10_SCALES",
    "IDENTITY_OFFSET_BOUND",
    "IDENTITY_SHAPE",
    "UNIT_ROUNDOFF",
    "identity_recovery_batch",
    "identity_recovery_witness",
]

UNIT_ROUNDOFF = 2.0**-53  # u of float64 round-to-nearest
IDENTITY_BOUND_FACTOR = 32  # rounding units of max|x| the layers tests allow
IDENTITY_SHAPE = (32, 8, 5, 5)  # (B, C, H, W)
IDENTITY_EPS = 1e-5
IDENTITY_OFFSET_BOUND = 100.0  # channel offsets uniform in [-100, 100]
IDENTITY_LOG10_SCALES = (-2.0, 1.0)  # channel standard deviations from 0.01 to 10


def identity_recovery_batch(seed: int, shape: tuple[int, ...] = IDENTITY_SHAPE) -> np.ndarray:
    """A batch far from standardized: channel offsets up to 100, spreads from 0.01 to 10.

    With ``rng = numpy.random.default_rng(seed)``: offsets uniform in
    ``[-IDENTITY_OFFSET_BOUND, IDENTITY_OFFSET_BOUND]``, scales log-uniform over
    ``IDENTITY_LOG10_SCALES``, then the batch (:func:`channel_offset_batch`).

    Examples
    --------
    >>> identity_recovery_batch(0).shape
    (32, 8, 5, 5)
    """
    rng = np.random.default_rng(seed)
    num_channels = shape[1]
    offsets = rng.uniform(-IDENTITY_OFFSET_BOUND, IDENTITY_OFFSET_BOUND, num_channels)
    scales = 10.0 ** rng.uniform(*IDENTITY_LOG10_SCALES, num_channels)
    return channel_offset_batch(rng, offsets, scales, shape)


@claim_computation
def identity_recovery_witness(
    seed: int, *, shape: tuple[int, int, int, int] = IDENTITY_SHAPE, eps: float = IDENTITY_EPS
) -> dict:
    """Claim ``c16-identity-recovery-001``: gamma = sqrt(var + eps), beta = mean give y = x.

    Section 16.2: the batch of :func:`identity_recovery_batch`. Set
    ``gamma = sqrt(population_variance + eps)`` and ``beta = mean`` per channel from
    :func:`batch_statistics` (eqs. 16.1-16.2) and apply :func:`batch_norm` (eqs. 16.3-16.4).
    Repeat with the *sample* variance in gamma, the convention a reader might copy from a
    framework's running statistics.

    Returns
    -------
    dict
        ``max_abs_error`` (largest ``|y - x|``), ``max_abs_input`` (largest ``|x|``),
        ``rounding_bound`` (``32 u max|x|``, the bound of the layers tests),
        ``error_in_rounding_units`` (``max_abs_error / (u max|x|)`` with ``u = 2^-53``), and
        ``sample_variance_gamma.max_abs_error`` and ``.error_in_rounding_units`` (the same
        with the sample variance in gamma).

    Examples
    --------
    >>> result = identity_recovery_witness(2401772406)
    >>> result["error_in_rounding_units"] <= 32
    True
    >>> result["sample_variance_gamma"]["max_abs_error"] > 1e-4
    True
    """
    X = identity_recovery_batch(seed, shape)
    stats = batch_statistics(X)
    recovered = batch_norm(X, np.sqrt(stats.population_variance + eps), stats.mean, eps=eps)
    with_sample = batch_norm(X, np.sqrt(stats.sample_variance + eps), stats.mean, eps=eps)
    max_abs_error = float(np.max(np.abs(recovered - X)))
    max_abs_input = float(np.max(np.abs(X)))
    sample_error = float(np.max(np.abs(with_sample - X)))
    return {
        "max_abs_error": max_abs_error,
        "max_abs_input": max_abs_input,
        "rounding_bound": IDENTITY_BOUND_FACTOR * UNIT_ROUNDOFF * max_abs_input,
        "error_in_rounding_units": max_abs_error / (UNIT_ROUNDOFF * max_abs_input),
        "sample_variance_gamma": {
            "max_abs_error": sample_error,
            "error_in_rounding_units": sample_error / (UNIT_ROUNDOFF * max_abs_input),
        },
    }
