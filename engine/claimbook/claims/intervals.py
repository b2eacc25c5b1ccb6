r"""Confidence intervals for the mean (or the median) of a statistical claim's per-seed values.

All need at least two finite values, read as float64 and never modified; bad input raises
:class:`IntervalError`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from claimbook.errors import IntervalError

BOOTSTRAP_RESAMPLES = 10_000
INTERVAL_METHODS = ("t", "bootstrap")


def _is_int(value, low: int, high: float = math.inf) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def t_quantile(probability: float, dof: int) -> float:
    """The ``probability`` quantile (0.5 < p < 1) of Student's t with ``dof`` >= 1."""
    if not 0.5 < probability < 1.0:
        raise IntervalError(f"probability must lie in (0.5, 1), got {probability!r}")
    if not _is_int(dof, 1):
        raise IntervalError(f"dof must be an int >= 1, got {dof!r}")
    from scipy.special import stdtrit  # late: 0.3 s to import, paid where an interval is

    return float(stdtrit(dof, probability))


def _checked(values, level) -> np.ndarray:
    """``values`` as a float64 array, refused unless 1-D, at least 2, finite; level in (0, 1)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size < 2:
        raise IntervalError(
            f"values must be a 1-D sequence of at least 2 numbers, got shape {x.shape}"
        )
    if not np.isfinite(x).all():
        raise IntervalError("values hold NaN or inf; an interval needs finite values")
    if not 0.0 < level < 1.0:
        raise IntervalError(f"level must lie in (0, 1), got {level!r}")
    return x


def mean_interval(
    values, *, level: float, method: str, bootstrap_seed: int | None = None
) -> tuple[float, float]:
    r"""The ``level`` (L) interval of the mean of ``values`` by ``method``: ``"t"``,
    :math:`\bar x \pm t_{(1+L)/2,\,n-1}\, s/\sqrt n` (:math:`s` with denominator
    :math:`n - 1`); ``"bootstrap"``, the :math:`(1 \mp L)/2` quantiles (linear) of the means
    of 10 000 resamples drawn by ``default_rng(bootstrap_seed)``."""
    x = _checked(values, level)
    if method == "t":
        half = t_quantile((1.0 + level) / 2.0, x.size - 1) * float(np.std(x, ddof=1))
        half /= math.sqrt(x.size)
        mean = float(np.mean(x))
        return mean - half, mean + half
    if method != "bootstrap":
        raise IntervalError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")
    if bootstrap_seed is None:
        raise IntervalError("method 'bootstrap' needs bootstrap_seed")
    indices = np.random.default_rng(bootstrap_seed).integers(
        0, x.size, size=(BOOTSTRAP_RESAMPLES, x.size)
    )
    low, high = np.quantile(x[indices].mean(axis=1), [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(low), float(high)


def _coverage(n: int, k: int) -> Fraction:
    return 1 - Fraction(2 * sum(math.comb(n, i) for i in range(k)), 2**n)


def median_rank_coverage(n: int, k: int) -> float:
    r"""The probability that ``[x_(k), x_(n-k+1)]`` of ``n`` independent draws covers the
    median of a continuous distribution: :math:`1 - 2 P(\mathrm{Bin}(n, 1/2) \le k - 1)`
    (with atoms, at least that). Needs ints ``n >= 1`` and ``1 <= k <= (n + 1) // 2``.
    """
    if not _is_int(n, 1):
        raise IntervalError(f"n must be an int >= 1, got {n!r}")
    if not _is_int(k, 1, (n + 1) // 2):
        raise IntervalError(
            f"k must be an int in [1, (n + 1) // 2] = [1, {(n + 1) // 2}], got {k!r}"
        )
    return float(_coverage(n, k))


def median_rank_interval(values, *, level: float) -> tuple[float, float]:
    r"""The exact ``level`` interval of the median, :math:`[x_{(k)}, x_{(n-k+1)}]` with the
    largest :math:`k` whose coverage (:func:`median_rank_coverage`) is at least ``level``;
    refused as :func:`mean_interval` refuses, and when even ``[min, max]`` covers less."""
    x = np.sort(_checked(values, level))
    n = x.size
    ranks = [k for k in range(1, (n + 1) // 2 + 1) if _coverage(n, k) >= Fraction(level)]
    if not ranks:
        raise IntervalError(
            f"values: {n} values cannot give a {level!r} interval of the median; even "
            f"[min, max] covers it with probability {median_rank_coverage(n, 1)!r}"
        )
    best = max(ranks)  # the coverage falls as k grows
    return float(x[best - 1]), float(x[n - best])
