"""Chan's pairwise update of a count and a mean (private), shared by the merges.

:func:`~trainable_harness.moments.merge.merge_moments` and
:func:`~trainable_harness.moments.streaming.streaming_moments` merge with it; where the
update overflows although its exact result would not, it is redone with the means scaled
by a power of two.
"""

from __future__ import annotations

import numpy as np

__all__: list[str] = []


def _chan_update(count_a: int, mean_a, count_b: int, mean_b):
    """Chan's pairwise update: the merged count and mean, and ``delta**2 n_a n_b / n``.

    ``delta = mean_b - mean_a``; every operation is in the means' numpy dtype. Where
    that overflows although the exact result would not (``delta * n_b`` or
    ``delta**2 n_a n_b`` beyond float16's 65504, ``delta`` or ``delta**2`` beyond
    float64's range), the overflowed result is recomputed by :func:`_chan_update_scaled`;
    the ``between`` term returned is ``inf`` only if its exact value is beyond range.
    """
    scalar = type(mean_a)
    count = count_a + count_b
    with np.errstate(over="ignore", invalid="ignore"):  # recomputed below if so
        delta = mean_b - mean_a
        mean = mean_a + delta * scalar(count_b) / scalar(count)
        between = delta**2 * scalar(count_a) * scalar(count_b) / scalar(count)
    if not (np.isfinite(mean) and np.isfinite(between)):
        scaled_mean, scaled_between = _chan_update_scaled(count_a, mean_a, count_b, mean_b)
        mean = mean if np.isfinite(mean) else scaled_mean
        between = between if np.isfinite(between) else scaled_between
    return count, mean, between


def _chan_update_scaled(count_a: int, mean_a, count_b: int, mean_b):
    """Chan's update with the means divided by a power of two ``2**e`` first.

    With ``a = mean_a 2**-e``, ``b = mean_b 2**-e`` (both below 1/2 in magnitude, exact
    away from the subnormals), the count ratios ``n_b / n`` and ``n_a n_b / n`` formed
    exactly and rounded once to the dtype (``n_a n_b / n <= n / 4``, within range for any
    count a state holds)::

        mean    = 2**e (a + (b - a) n_b / n),    clipped to [min, max] of the two means
        between = 4**e ((b - a)**2 (n_a n_b / n))

    Nothing overflows before the final power of two, which gives ``inf`` for ``between``
    only where its exact value is beyond the dtype's range.
    """
    scalar = type(mean_a)
    count = count_a + count_b
    largest = max(abs(mean_a), abs(mean_b))
    exponent = int(np.frexp(largest)[1]) + 1 if largest > 0 else 0
    a, b = np.ldexp(mean_a, -exponent), np.ldexp(mean_b, -exponent)
    delta = b - a
    fraction_b = scalar(count_b / count)
    weight = scalar(count_a * count_b / count)
    with np.errstate(over="ignore"):
        mean = np.clip(
            np.ldexp(a + delta * fraction_b, exponent), min(mean_a, mean_b), max(mean_a, mean_b)
        )
        between = np.ldexp(delta * delta * weight, 2 * exponent)
    return scalar(mean), scalar(between)
