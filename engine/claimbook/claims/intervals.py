r"""Confidence intervals for the mean (or the median) of a statistical claim's per-seed values.

Two methods for the mean, named in the registry's ``statistics: {level: L, method: ...}``:

- ``t`` -- Student's t interval of the mean, :math:`\bar x \pm t_{(1+L)/2,\,n-1}\, s/\sqrt n`
  with the sample standard deviation :math:`s` (denominator :math:`n - 1`), the quantile
  from scipy (``scipy.special.stdtrit``).
- ``bootstrap`` -- the percentile bootstrap: 10 000 resamples (with replacement) of the
  per-seed values, drawn by ``numpy.random.default_rng(claim_seed(id + "/bootstrap"))``;
  the interval is the ``(1-L)/2`` and ``(1+L)/2`` quantiles (numpy's default linear
  interpolation) of the resampled means.

And one for the median, which a field selects in its own registry entry with
``interval_method: median-rank``:

- ``median-rank`` -- the exact binomial order-statistic interval of the median,
  :math:`[x_{(k)}, x_{(n-k+1)}]` with the largest :math:`k` whose coverage
  :math:`1 - 2 P(\mathrm{Bin}(n, 1/2) \le k - 1)` is at least ``L``
  (:func:`median_rank_interval`). It is fit for per-seed outcomes that take few values
  (powers of two, their logarithms), where a t interval is not: it assumes nothing about
  the distribution, and with ties it covers at least as often. For 10 seeds at 0.95 it is
  ``[x_(2), x_(9)]``, with coverage 1 - 2 x 11/1024 = 0.979.

All need at least two values; the values are float64 and never modified.

Examples
--------
>>> round(t_quantile(0.975, 9), 6)
2.262157
>>> lo, hi = mean_interval([1.0, 2.0, 3.0], level=0.95, method="t")
>>> round(lo, 4), round(hi, 4)
(-0.4841, 4.4841)
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from claimbook.errors import IntervalError

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "FIELD_INTERVAL_METHODS",
    "INTERVAL_METHODS",
    "mean_interval",
    "median_rank_coverage",
    "median_rank_interval",
    "t_quantile",
]

BOOTSTRAP_RESAMPLES = 10_000
INTERVAL_METHODS = ("t", "bootstrap")
FIELD_INTERVAL_METHODS = ("median-rank",)  # what a field's interval_method may select


@functools.cache  # a build asks for the same few quantiles for every statistical claim
def t_quantile(probability: float, dof: int) -> float:
    """The ``probability`` quantile (0.5 < p < 1) of Student's t with ``dof`` >= 1.

    Examples
    --------
    >>> round(t_quantile(0.975, 1), 4)
    12.7062
    >>> round(t_quantile(0.975, 1000), 4)
    1.9623
    """
    if not 0.5 < probability < 1.0:
        raise IntervalError(f"probability must lie in (0.5, 1), got {probability!r}")
    if isinstance(dof, bool) or not isinstance(dof, int) or dof < 1:
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
    """A ``level`` confidence interval of the mean of ``values`` by ``method``.

    Parameters
    ----------
    values : sequence of float
        At least two finite per-seed values (converted to float64).
    level : float
        In (0, 1), e.g. 0.95.
    method : {"t", "bootstrap"}
    bootstrap_seed : int, optional
        Required for ``"bootstrap"``: the seed of the resampling generator.

    Raises
    ------
    IntervalError
        Fewer than two values.
    IntervalError
        A value is NaN or infinite.
    IntervalError
        An unknown ``method``, a level outside (0, 1), or bootstrap without a seed.
    """
    x = _checked(values, level)
    mean = float(np.mean(x))
    if method == "t":
        half = t_quantile((1.0 + level) / 2.0, x.size - 1) * float(np.std(x, ddof=1))
        half /= math.sqrt(x.size)
        return mean - half, mean + half
    if method == "bootstrap":
        if bootstrap_seed is None:
            raise IntervalError("method 'bootstrap' needs bootstrap_seed")
        rng = np.random.default_rng(bootstrap_seed)
        indices = rng.integers(0, x.size, size=(BOOTSTRAP_RESAMPLES, x.size))
        means = x[indices].mean(axis=1)
        low, high = np.quantile(means, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
        return float(low), float(high)
    raise IntervalError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")


def median_rank_coverage(n: int, k: int) -> float:
    r"""The exact probability that ``[x_(k), x_(n-k+1)]`` covers the median of a continuous
    distribution, from ``n`` independent draws: :math:`1 - 2 P(\mathrm{Bin}(n, 1/2) \le k - 1)`.

    For a distribution with atoms (integer outcomes) the closed interval covers the median at
    least this often.

    Examples
    --------
    >>> round(median_rank_coverage(10, 2), 6)  # 1 - 2 x 11/1024
    0.978516
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise IntervalError(f"n must be an int >= 1, got {n!r}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= (n + 1) // 2:
        raise IntervalError(
            f"k must be an int in [1, (n + 1) // 2] = [1, {(n + 1) // 2}], got {k!r}"
        )
    below = sum(math.comb(n, i) for i in range(k))
    return float(Fraction(2**n - 2 * below, 2**n))


def median_rank_interval(values, *, level: float) -> tuple[float, float]:
    r"""The exact rank-based ``level`` interval of the median: :math:`[x_{(k)}, x_{(n-k+1)}]`.

    :math:`k` is the largest rank whose interval covers the median with probability at least
    ``level`` (:func:`median_rank_coverage`, exact binomial sums in integers), so the
    interval is the narrowest of its kind; it is distribution-free, and fit for outcomes
    that take few values (powers of two, their logarithms), where a t interval is not.

    Raises
    ------
    IntervalError
        Fewer than two values, a value that is not finite, a level outside (0, 1), or too
        few values for ``level`` (even ``[min, max]`` covers with less).

    Examples
    --------
    >>> median_rank_interval([3.0, 1.0, 2.0, 4.0, 3.0, 3.0, 2.0, 4.0, 1.0, 3.0], level=0.95)
    (1.0, 4.0)
    """
    x = np.sort(_checked(values, level))
    n = x.size
    target = Fraction(level)
    best = None
    for k in range(1, (n + 1) // 2 + 1):
        below = sum(math.comb(n, i) for i in range(k))
        if Fraction(2**n - 2 * below, 2**n) >= target:
            best = k
        else:
            break
    if best is None:
        raise IntervalError(
            f"values: {n} values cannot give a {level!r} interval of the median; even "
            f"[min, max] covers it with probability {median_rank_coverage(n, 1)!r}"
        )
    return float(x[best - 1]), float(x[n - best])
