"""Section 16.5: how many values a statistic sees, and how noisy a channel mean is.

The spread of batch norm's per-channel mean over repeated draws, for independent values
(``sigma / sqrt(n)``) and for values that share a per-sample offset (eq. 16.7).
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.layers import batch_statistics, values_per_statistic

__all__ = [
    "SPREAD_BATCH_SIZES",
    "SPREAD_INDEPENDENT_STD",
    "SPREAD_NOISE_VARIANCE",
    "SPREAD_OFFSET_VARIANCE",
    "SPREAD_REPEATS",
    "SPREAD_SIDES",
    "spread_of_batch_means",
    "statistic_spread_profiles",
    "statistic_spread_summary",
    "statistic_spread_witness",
]

SPREAD_BATCH_SIZES = (2, 8, 32)
SPREAD_SIDES = (1, 2, 4, 8)  # H = W
SPREAD_REPEATS = 500  # per seed; ten seeds pool 5000 repeats per configuration
# Both models have total variance 4: all of it independent, or 1 shared by the positions
# of a sample plus 3 independent.
SPREAD_INDEPENDENT_STD = 2.0
SPREAD_OFFSET_VARIANCE, SPREAD_NOISE_VARIANCE = 1.0, 3.0


def spread_of_batch_means(
    rng: np.random.Generator,
    batch_size: int,
    side: int,
    *,
    repeats: int,
    sample_std: float,
    pixel_std: float,
) -> tuple[int, float]:
    """Values per statistic and spread of batch norm's per-channel mean over repeated draws.

    Each of ``repeats`` channels is one independent repetition: a batch of shape
    ``(batch_size, repeats, side, side)`` holds ``sample_std * z[b, c] + pixel_std *
    e[b, c, h, w]`` with independent standard normals ``z`` (one per sample and channel,
    shared by its pixels, like an image's overall brightness) and ``e``. Returns
    ``(n, s)``: ``n = values_per_statistic("batch", shape)`` and ``s`` the standard
    deviation (``ddof=1``) of the ``repeats`` per-channel means of :func:`batch_statistics`.

    Theory: ``s^2 = sample_std^2 / B + pixel_std^2 / n`` (section 16.5).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n, s = spread_of_batch_means(rng, 4, 2, repeats=2000, sample_std=0.0, pixel_std=1.0)
    >>> n, bool(abs(s - 1 / 4) < 0.02)
    (16, True)
    """
    shape = (batch_size, repeats, side, side)
    X = sample_std * rng.standard_normal((batch_size, repeats, 1, 1))
    X = X + pixel_std * rng.standard_normal(shape)
    means = batch_statistics(X).mean
    return values_per_statistic("batch", shape), float(np.std(means, ddof=1))


def statistic_spread_profiles(seed: int, *, repeats: int = SPREAD_REPEATS) -> dict:
    """Spreads of a batch norm channel mean for every (batch size, side), both models.

    Section 16.5, with ``rng = numpy.random.default_rng(seed)`` and every (batch size, side)
    of ``SPREAD_BATCH_SIZES x SPREAD_SIDES`` (``n = B H W`` from 2 to 2048 values), in
    this order: first *independent* values (``sample_std = 0``, ``pixel_std = 2``), then
    *correlated* ones (``sample_std = 1``, ``pixel_std = sqrt(3)``, the same total variance
    4), each through :func:`spread_of_batch_means` with ``repeats`` repetitions.

    Returns
    -------
    dict
        ``batch_sizes`` and ``n`` (arrays over the 12 configurations, batch size major),
        ``independent`` and ``correlated`` (the measured spreads) and
        ``independent_theory`` (``2 / sqrt(n)``) and ``correlated_theory``
        (``sqrt(1/B + 3/n)``, eq. 16.7).

    Examples
    --------
    >>> profiles = statistic_spread_profiles(0, repeats=50)
    >>> profiles["n"][[0, -1]].tolist()
    [2.0, 2048.0]
    """
    rng = np.random.default_rng(seed)
    configurations = [(B, side) for B in SPREAD_BATCH_SIZES for side in SPREAD_SIDES]
    independent = [
        spread_of_batch_means(
            rng, B, side, repeats=repeats, sample_std=0.0, pixel_std=SPREAD_INDEPENDENT_STD
        )
        for B, side in configurations
    ]
    correlated = [
        spread_of_batch_means(
            rng,
            B,
            side,
            repeats=repeats,
            sample_std=np.sqrt(SPREAD_OFFSET_VARIANCE),
            pixel_std=np.sqrt(SPREAD_NOISE_VARIANCE),
        )
        for B, side in configurations
    ]
    n = np.array([count for count, _ in independent], dtype=float)
    batch_sizes = np.array([B for B, _ in configurations], dtype=float)
    return {
        "batch_sizes": batch_sizes,
        "n": n,
        "independent": np.array([s for _, s in independent]),
        "correlated": np.array([s for _, s in correlated]),
        "independent_theory": SPREAD_INDEPENDENT_STD / np.sqrt(n),
        "correlated_theory": np.sqrt(
            SPREAD_OFFSET_VARIANCE / batch_sizes + SPREAD_NOISE_VARIANCE / n
        ),
    }


def statistic_spread_summary(profiles: dict) -> dict:
    """The fields of :func:`statistic_spread_witness`, from :func:`statistic_spread_profiles`.

    Examples
    --------
    >>> summary = statistic_spread_summary(statistic_spread_profiles(0, repeats=50))
    >>> summary["correlated"]["nominal_values"]
    2048
    """
    n, spread, correlated = profiles["n"], profiles["independent"], profiles["correlated"]
    slope = np.polyfit(np.log(n), np.log(spread), 1)[0]
    widest = n == n.max()  # B = 32, 8 x 8
    smallest = (profiles["batch_sizes"] == SPREAD_BATCH_SIZES[0]) & (
        n == SPREAD_BATCH_SIZES[0] * SPREAD_SIDES[-1] ** 2
    )
    total_variance = SPREAD_OFFSET_VARIANCE + SPREAD_NOISE_VARIANCE
    return {
        "independent": {
            "slope": float(slope),
            "mean_ratio_to_theory": float(np.mean(spread / profiles["independent_theory"])),
        },
        "correlated": {
            "mean_ratio_to_theory": float(np.mean(correlated / profiles["correlated_theory"])),
            "nominal_values": int(n[widest][0]),
            "effective_values": float(total_variance / correlated[widest][0] ** 2),
            "spread_smallest_batch": float(correlated[smallest][0]),
            "spread_largest_batch": float(correlated[widest][0]),
        },
    }


@claim_computation
def statistic_spread_witness(seed: int, *, repeats: int = SPREAD_REPEATS) -> dict:
    """Claim ``c16-statistic-spread-001`` (one seed of a set): how noisy is a BN channel mean.

    Section 16.5: the spreads of :func:`statistic_spread_profiles`, summarized by
    :func:`statistic_spread_summary`.

    Returns
    -------
    dict
        ``independent.slope``: least-squares slope of log spread against log n.
        ``independent.mean_ratio_to_theory`` and ``correlated.mean_ratio_to_theory``: the
        measured spread over the theory (``2/sqrt(n)``, ``sqrt(1/B + 3/n)``), averaged
        over the 12 configurations. ``correlated.nominal_values`` and
        ``correlated.effective_values`` at the largest configuration (B = 32, 8 x 8): ``n``
        and ``4 / s^2``, the number of independent values with the same spread.
        ``correlated.spread_smallest_batch`` and ``correlated.spread_largest_batch``: the
        spread at 8 x 8 positions with B = 2 and B = 32.

    Examples
    --------
    >>> result = statistic_spread_witness(1101522529, repeats=200)
    >>> bool(-0.6 < result["independent"]["slope"] < -0.4)
    True
    """
    return statistic_spread_summary(statistic_spread_profiles(seed, repeats=repeats))
