"""Section 16.9: small batches.

Batch norm as the batch shrinks, against ghost batches, batch renormalization, statistics
synchronized over devices, and group norm (:mod:`trainable_harness.small_batch`).
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.small_batch import (
    GHOST_SIZE,
    RENORM_LIMITS,
    clipped_renorm_gap_theory,
    draw_activations,
    ghost_batch_norm_train,
    mean_error_theory,
    single_sample_gap_theory,
    small_batch_sweep,
    synchronized_statistics,
    train_mode,
)

# Devices holding unequal shares of one batch of 64 (1, 3, 12 and 48 samples): the merge
# must weigh each device's mean by its count, which equal shares cannot show.
UNEQUAL_SPLITS = (1, 4, 16)

__all__ = ["small_batch_witness"]


@claim_computation
def small_batch_witness(seed: int) -> dict:
    """Claim ``c16-small-batch-001``, one seed: batch norm as the batch shrinks.

    From :func:`trainable_harness.small_batch.small_batch_sweep` (B = 1 to 64, 1024
    samples per size, 8 channels of 4 x 4 positions, shared variance 1 of a total 4):

    - ``gap_b1``, ``gap_b64``: RMS train/eval gap of batch norm at B = 1 and 64;
    - ``gap_b1_over_theory``: ``gap_b1`` over :func:`single_sample_gap_theory`, the gap
      derived for one sample (it depends on the divisor of the variance);
    - ``gap_slope``: least-squares slope of log gap against log B;
    - ``mean_error_max_relative_deviation``: largest relative deviation of the measured
      RMS error of the batch mean from ``sqrt((tau^2 + sigma^2 / HW) / B)``;
    - ``ghost_over_b8``: gap of 64-sample batches normalized in ghost batches of 8 over
      the gap of 8-sample batches;
    - ``renorm_gap_b2_over_theory``: train/eval gap of batch renormalization
      (``RENORM_LIMITS``: r_max 3, never reached, and d_max 0.5, reached in about a fifth
      of the batch-channels) at B = 2 over :func:`clipped_renorm_gap_theory`, the gap
      its clip of ``d`` leaves;
    - ``sync_max_error``: merged per-device statistics against the whole batch's;
      ``sync_unequal_max_error``: the same for devices holding 1, 3, 12 and 48 samples of
      a batch of 64 (:data:`UNEQUAL_SPLITS`, a draw of its own);
    - ``ghost_slices_max_error``: ghost batch norm (:data:`GHOST_SIZE` 8) of two batches
      of 64 against train mode of each slice of 8 on its own (a draw of its own);
    - ``renorm_gap_b4_over_theory``: as ``renorm_gap_b2_over_theory``, at B = 4;
    - group norm with 4 groups of 2 channels (``small_batch.GROUPS``):
      ``group_gap_max``, the largest over the sizes of the RMS difference between the
      first batch normalized whole and its samples normalized one at a time with
      :func:`trainable_harness.layers.group_norm`; ``group_batch_dependence_max``, the
      same for the batch against the batch twice as large that starts with it;
      ``group_distance``, the mean over the sizes of the RMS difference between group
      norm's output and the output with each group's population statistics;
      ``group_distance_slope``, the least-squares slope of its log against log B; and
      ``group_distance_over_gap_b2``, ``group_distance`` over batch norm's gap at B = 2.

    Examples
    --------
    >>> result = small_batch_witness(seed=0)
    >>> result["gap_b1"] > result["gap_b64"]
    True
    >>> result["group_gap_max"], result["group_batch_dependence_max"]
    (0.0, 0.0)
    """
    sweep = small_batch_sweep(seed)
    sizes = sweep["batch_sizes"]
    theory = np.array([mean_error_theory(b) for b in sizes])
    slope = np.polyfit(np.log(sizes), np.log(sweep["gap"]), 1)[0]
    b2 = int(np.flatnonzero(sizes == 2)[0])
    b4 = int(np.flatnonzero(sizes == 4)[0])
    b8 = int(np.flatnonzero(sizes == 8)[0])
    group_distance = sweep["group_distance"]
    group_slope = np.polyfit(np.log(sizes), np.log(group_distance), 1)[0]
    return {
        "gap_b1": float(sweep["gap"][0]),
        "gap_b1_over_theory": float(sweep["gap"][0] / single_sample_gap_theory()),
        "gap_b64": float(sweep["gap"][-1]),
        "gap_slope": float(slope),
        "mean_error_max_relative_deviation": float(
            np.max(np.abs(sweep["mean_error"] / theory - 1.0))
        ),
        "ghost_over_b8": float(sweep["ghost_gap"] / sweep["gap"][b8]),
        "renorm_gap_b2_over_theory": float(
            sweep["renorm_gap"][b2] / clipped_renorm_gap_theory(2, RENORM_LIMITS[1])
        ),
        "sync_max_error": sweep["sync_max_error"],
        "sync_unequal_max_error": _sync_unequal_error(np.random.default_rng([seed, 2])),
        "ghost_slices_max_error": _ghost_slices_error(np.random.default_rng([seed, 1])),
        "renorm_gap_b4_over_theory": float(
            sweep["renorm_gap"][b4] / clipped_renorm_gap_theory(4, RENORM_LIMITS[1])
        ),
        "group_gap_max": float(np.max(sweep["group_gap"])),
        "group_batch_dependence_max": float(np.max(sweep["group_batch_dependence"])),
        "group_distance": float(np.mean(group_distance)),
        "group_distance_slope": float(group_slope),
        "group_distance_over_gap_b2": float(np.mean(group_distance) / sweep["gap"][b2]),
    }


def _ghost_slices_error(rng: np.random.Generator) -> float:
    """Largest difference between ghost batch norm and train mode of each ghost alone."""
    X = draw_activations(rng, repeats=2, batch=64)
    alone = np.concatenate(
        [train_mode(X[:, start : start + GHOST_SIZE]) for start in range(0, 64, GHOST_SIZE)],
        axis=1,
    )
    return float(np.max(np.abs(ghost_batch_norm_train(X, GHOST_SIZE) - alone)))


def _sync_unequal_error(rng: np.random.Generator) -> float:
    """Largest difference between statistics merged over unequal devices and direct ones."""
    whole = draw_activations(rng, repeats=1, batch=64)[0]
    mean, variance = synchronized_statistics(np.split(whole, UNEQUAL_SPLITS))
    centered = whole - whole.mean(axis=(0, 2, 3), keepdims=True)
    return float(
        max(
            np.max(np.abs(mean - whole.mean(axis=(0, 2, 3)))),
            np.max(np.abs(variance - np.mean(centered**2, axis=(0, 2, 3)))),
        )
    )
