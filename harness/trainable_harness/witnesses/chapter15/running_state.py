"""Section 15.3: train-mode and evaluation-mode statistics are different estimators.

Training batches and one evaluation batch from one Gaussian population: the running state
merged from per-batch Welford states, the evaluation batch's own state, and the evaluation
values normalized under each.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.layers.standardize import standardize_with
from trainable_harness.moments import MomentState, merge_moments, stable_online_moments

__all__ = [
    "BATCH_COUNT",
    "BATCH_SIZE",
    "EPS",
    "MERGED_MEAN_TOLERANCE",
    "POPULATION_MEAN",
    "POPULATION_STD",
    "normalize_with",
    "running_state_experiment",
    "running_state_summary",
    "running_state_witness",
]

POPULATION_MEAN, POPULATION_STD = 4.0, 2.0  # N(4, 2^2): variance equals the mean
BATCH_COUNT, BATCH_SIZE = 8, 32  # training batches, and values per batch (evaluation too)
EPS = 1e-5  # added to the population variance inside the square root
# Merging is not one pass: the merged mean may differ from a single pass by a few roundings
# of a mean near 4 (ulp = 8.9e-16).
MERGED_MEAN_TOLERANCE = 3e-15


def normalize_with(values: np.ndarray, state: MomentState, eps: float) -> np.ndarray:
    """``(values - mean) / sqrt(population_variance + eps)`` with a given state's moments.

    The harness's one standardization with given statistics,
    :func:`~trainable_harness.layers.standardize_with`.

    Examples
    --------
    >>> state = stable_online_moments(np.array([1.0, 3.0]), dtype=np.float64)
    >>> normalize_with(np.array([1.0, 3.0]), state, 0.0)
    array([-1.,  1.])
    """
    return standardize_with(values, state.mean, state.population_variance, eps=eps)


def running_state_experiment(
    seed: int,
    *,
    batch_count: int = BATCH_COUNT,
    batch_size: int = BATCH_SIZE,
    eps: float = EPS,
) -> dict:
    """The running state, the evaluation state, and the evaluation batch normalized by each.

    With ``rng = numpy.random.default_rng(seed)``, draw ``batch_count`` training batches of
    ``batch_size`` values from N(4, 2^2), then one evaluation batch of ``batch_size`` from the
    same population (no distribution shift). Each training batch is reduced to a Welford
    state (:func:`stable_online_moments`, float64) and the states are merged left to right
    (:func:`merge_moments`); a single pass over all training values is kept for comparison.
    The evaluation values are normalized with :func:`normalize_with` under the evaluation
    batch's own state (train mode) and under the running state (evaluation mode).

    Returns
    -------
    dict
        ``training_batches`` (shape ``(batch_count, batch_size)``), ``evaluation_batch``;
        ``running_trace`` (the merged state after 1, 2, ..., ``batch_count`` batches),
        ``running_state`` (its last entry), ``direct_state`` (one pass over all training
        values), ``evaluation_state``; ``train_mode_output`` and ``evaluation_mode_output``.

    Examples
    --------
    >>> run = running_state_experiment(0, batch_count=3, batch_size=4)
    >>> len(run["running_trace"]), run["running_state"].count, run["direct_state"].count
    (3, 12, 12)
    """
    rng = np.random.default_rng(seed)
    training_batches = rng.normal(POPULATION_MEAN, POPULATION_STD, size=(batch_count, batch_size))
    evaluation_batch = rng.normal(POPULATION_MEAN, POPULATION_STD, size=batch_size)

    running_trace = [stable_online_moments(training_batches[0], dtype=np.float64)]
    for batch in training_batches[1:]:
        running_trace.append(
            merge_moments(running_trace[-1], stable_online_moments(batch, dtype=np.float64))
        )
    running_state = running_trace[-1]
    evaluation_state = stable_online_moments(evaluation_batch, dtype=np.float64)
    return {
        "training_batches": training_batches,
        "evaluation_batch": evaluation_batch,
        "running_trace": running_trace,
        "running_state": running_state,
        "direct_state": stable_online_moments(training_batches.ravel(), dtype=np.float64),
        "evaluation_state": evaluation_state,
        "train_mode_output": normalize_with(evaluation_batch, evaluation_state, eps),
        "evaluation_mode_output": normalize_with(evaluation_batch, running_state, eps),
    }


@claim_computation
def running_state_witness(
    seed: int, *, batch_count: int = BATCH_COUNT, batch_size: int = BATCH_SIZE, eps: float = EPS
) -> dict:
    """Claim ``c15-running-state-001``: train-mode against evaluation-mode statistics.

    Section 15.3: the states and outputs of :func:`running_state_experiment`, in float64,
    summarized by :func:`running_state_summary`.

    Parameters
    ----------
    seed : int
        The registered ``claim_seed("c15-running-state")``.
    batch_count, batch_size : int, default :data:`BATCH_COUNT` and :data:`BATCH_SIZE`
    eps : float, default :data:`EPS`
        Added to the population variance inside the square root.

    Returns
    -------
    dict
        ``running_mean``, ``evaluation_mean``, ``running_population_variance``,
        ``evaluation_population_variance`` (floats); ``merged_equals_direct`` (bool: the
        merged ``m2`` equals a single pass over all training values bit for bit and the
        means differ by at most :data:`MERGED_MEAN_TOLERANCE`); ``merged_mean_gap`` (that
        mean difference); ``merged_variance_relative_gap`` (the merged population
        variance's relative distance from the single pass's); and
        ``normalized_discrepancy`` with ``maximum_absolute``, the largest change of a
        normalized evaluation value between the two states.

    Examples
    --------
    >>> result = running_state_witness(316832669)
    >>> round(result["running_mean"], 3), round(result["evaluation_mean"], 3)
    (4.096, 3.766)
    >>> round(result["normalized_discrepancy"]["maximum_absolute"], 3)
    0.448
    """
    return running_state_summary(
        running_state_experiment(seed, batch_count=batch_count, batch_size=batch_size, eps=eps)
    )


def running_state_summary(run: dict) -> dict:
    """The fields of :func:`running_state_witness`, from :func:`running_state_experiment`.

    Examples
    --------
    >>> summary = running_state_summary(running_state_experiment(0))
    >>> summary["merged_mean_gap"] <= MERGED_MEAN_TOLERANCE  # a few roundings of the mean
    True
    """
    running_state, direct_state = run["running_state"], run["direct_state"]
    evaluation_state = run["evaluation_state"]
    merged_mean_gap = float(abs(running_state.mean - direct_state.mean))
    discrepancy = np.abs(run["train_mode_output"] - run["evaluation_mode_output"])
    return {
        "running_mean": float(running_state.mean),
        "evaluation_mean": float(evaluation_state.mean),
        "running_population_variance": float(running_state.population_variance),
        "evaluation_population_variance": float(evaluation_state.population_variance),
        "merged_equals_direct": bool(
            running_state.m2 == direct_state.m2 and merged_mean_gap <= MERGED_MEAN_TOLERANCE
        ),
        "merged_mean_gap": merged_mean_gap,
        "merged_variance_relative_gap": float(
            abs(running_state.population_variance - direct_state.population_variance)
            / direct_state.population_variance
        ),
        "normalized_discrepancy": {"maximum_absolute": float(np.max(discrepancy))},
    }
