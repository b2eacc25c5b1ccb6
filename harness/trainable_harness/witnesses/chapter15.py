"""Chapter 15's claim computations: normalization invariance and running moment states.

Each is registered with :func:`~trainable_harness.claims.computations.claim_computation`
and named in ``claims/c15-*.yaml`` as ``trainable_harness.witnesses.chapter15.<name>``.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claims.computations import claim_computation
from trainable_harness.moments import (
    merge_moments,
    raw_and_centered_variance,
    stable_online_moments,
)
from trainable_harness.normalization import (
    centered_normalize,
    normalization_jacobian,
    rms_normalize,
)

__all__ = ["invariance_witness", "running_state_witness"]

# Tolerances of the claims' own arithmetic, not of their expectations.
RANK_TOLERANCE = 1e-10  # singular values of the d = 4 Jacobians are O(1) or O(1e-16)
MERGED_MEAN_TOLERANCE = 3e-15  # a few ulps of a mean near 4 (ulp = 8.9e-16)


@claim_computation
def invariance_witness() -> dict:
    """Claim ``c15-invariance-001``: invariances, Jacobian ranks and FP32 cancellation.

    Section 15.1: for ``x = (-2, -1, 1, 2)`` and ``x + 10``, the largest coordinate change of
    the centered map (eq. 15.1) and of the RMS map (eq. 15.2), both at eps = 0 in float64;
    the ranks of their exact Jacobians at ``x`` (eq. 15.3; ``numpy.linalg.matrix_rank``
    with ``tol=1e-10``). Section 15.2: the population variance of the FP32 values
    (9998, 9999, 10001, 10002) by the raw-moment formula and by centering first.

    Returns
    -------
    dict
        ``centered_shift_deviation``, ``rms_shift_deviation`` (floats),
        ``centered_jacobian_rank``, ``rms_jacobian_rank`` (ints),
        ``fp32_raw_moment_variance``, ``fp32_centered_variance`` (floats).

    Examples
    --------
    >>> result = invariance_witness()
    >>> result["centered_shift_deviation"], round(result["rms_shift_deviation"], 3)
    (0.0, 2.055)
    >>> result["centered_jacobian_rank"], result["rms_jacobian_rank"]
    (2, 3)
    >>> result["fp32_raw_moment_variance"], result["fp32_centered_variance"]
    (0.0, 2.5)
    """
    x = np.array([-2.0, -1.0, 1.0, 2.0])
    shifted = x + 10.0
    raw, centered = raw_and_centered_variance(
        np.array([9998.0, 9999.0, 10001.0, 10002.0]), dtype=np.float32
    )
    return {
        "centered_shift_deviation": _max_abs_change(centered_normalize, x, shifted),
        "rms_shift_deviation": _max_abs_change(rms_normalize, x, shifted),
        "centered_jacobian_rank": _jacobian_rank(x, centered=True),
        "rms_jacobian_rank": _jacobian_rank(x, centered=False),
        "fp32_raw_moment_variance": raw,
        "fp32_centered_variance": centered,
    }


def _max_abs_change(normalize, x: np.ndarray, shifted: np.ndarray) -> float:
    return float(np.max(np.abs(normalize(shifted) - normalize(x))))


def _jacobian_rank(x: np.ndarray, centered: bool) -> int:
    jacobian = normalization_jacobian(x, centered=centered)
    return int(np.linalg.matrix_rank(jacobian, tol=RANK_TOLERANCE))


@claim_computation
def running_state_witness(
    seed: int, *, batch_count: int = 8, batch_size: int = 32, eps: float = 1e-5
) -> dict:
    """Claim ``c15-running-state-001``: train-mode against evaluation-mode statistics.

    Section 15.3: with ``rng = numpy.random.default_rng(seed)``, draw ``batch_count``
    training batches of ``batch_size`` from N(4, 2^2), then one evaluation batch of
    ``batch_size`` from the same population (no distribution shift). The running state
    merges the per-batch Welford states left to right (:func:`merge_moments`); the
    evaluation state is one Welford pass over the evaluation batch; all in float64.
    The evaluation values are then normalized as ``(x - mean) / sqrt(population_variance
    + eps)`` under each state.

    Parameters
    ----------
    seed : int
        The registered ``claim_seed("c15-running-state")``.
    batch_count, batch_size : int, default 8 and 32
    eps : float, default 1e-5
        Added to the population variance inside the square root.

    Returns
    -------
    dict
        ``running_mean``, ``evaluation_mean``, ``running_population_variance``,
        ``evaluation_population_variance`` (floats); ``merged_equals_direct`` (bool: the
        merged ``m2`` equals a single pass over all training values bit for bit and the
        means differ by at most 3e-15); ``merged_mean_gap`` (that mean difference); and
        ``normalized_discrepancy`` with ``maximum_absolute``, the largest change of a
        normalized evaluation value between the two states.

    Examples
    --------
    >>> from trainable_harness.claims import claim_seed
    >>> result = running_state_witness(claim_seed("c15-running-state"))
    >>> round(result["running_mean"], 3), round(result["evaluation_mean"], 3)
    (4.096, 3.766)
    >>> round(result["normalized_discrepancy"]["maximum_absolute"], 3)
    0.448
    """
    rng = np.random.default_rng(seed)
    training_batches = rng.normal(4, 2, size=(batch_count, batch_size))
    evaluation_batch = rng.normal(4, 2, size=batch_size)

    running_state = stable_online_moments(training_batches[0], dtype=np.float64)
    for batch in training_batches[1:]:
        running_state = merge_moments(
            running_state, stable_online_moments(batch, dtype=np.float64)
        )
    direct_state = stable_online_moments(training_batches.ravel(), dtype=np.float64)
    evaluation_state = stable_online_moments(evaluation_batch, dtype=np.float64)

    merged_mean_gap = float(abs(running_state.mean - direct_state.mean))
    train_mode_output = _normalize_with(evaluation_batch, evaluation_state, eps)
    evaluation_mode_output = _normalize_with(evaluation_batch, running_state, eps)
    return {
        "running_mean": float(running_state.mean),
        "evaluation_mean": float(evaluation_state.mean),
        "running_population_variance": float(running_state.population_variance),
        "evaluation_population_variance": float(evaluation_state.population_variance),
        "merged_equals_direct": bool(
            running_state.m2 == direct_state.m2 and merged_mean_gap <= MERGED_MEAN_TOLERANCE
        ),
        "merged_mean_gap": merged_mean_gap,
        "normalized_discrepancy": {
            "maximum_absolute": float(np.max(np.abs(train_mode_output - evaluation_mode_output)))
        },
    }


def _normalize_with(values: np.ndarray, state, eps: float) -> np.ndarray:
    """Normalize ``values`` with a given state's mean and population variance."""
    return (values - state.mean) / np.sqrt(state.population_variance + eps)
