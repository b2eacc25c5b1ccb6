"""Comparing a claim's results with its registered expectations, and how wide they are.

:func:`comparisons` gives one record per field; a computed field without an expectation
fails. :func:`tolerance_ratio` measures a statistical field's tolerance in standard errors of
the seeds' mean; :func:`mean_interval` and :func:`median_rank_interval` are the intervals over
seeds (at least two finite values; bad input raises :class:`IntervalError`). The comparators
and :data:`WIDE_RATIO`'s rule are docs/claims.md's.
"""

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

from claimbook.claims.registry import flatten
from claimbook.errors import ClaimError, IntervalError

WIDE_RATIO = 10.0
BOOTSTRAP_RESAMPLES = 10_000
INTERVAL_METHODS = ("t", "bootstrap")
_MISSING = object()


def is_number(value) -> bool:
    """A finite int or float that is not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _sort(value):
    """Booleans, strings and the rest compare only among themselves (``True == 1``)."""
    return type(value) if isinstance(value, bool | str) else None


def _tolerance(bound: Mapping) -> tuple[float, str]:
    """A ``{value, abs_tol | rel_tol}`` bound's absolute tolerance, and as a record shows it."""
    name = "abs_tol" if "abs_tol" in bound else "rel_tol"
    scale = 1 if name == "abs_tol" else abs(bound["value"])
    return bound[name] * scale, f"{name} {bound[name]!r}"


def _within(bound: Mapping, got) -> bool:
    return is_number(got) and abs(got - bound["value"]) <= _tolerance(bound)[0]


def _per_value(expectation: Mapping) -> tuple:
    """(expected shown, tolerance text, test of one value) for equals, interval or value."""
    if "equals" in expectation:
        expected = expectation["equals"]
        return expected, "exact", lambda got: _sort(got) is _sort(expected) and got == expected
    if "interval" in expectation:
        low, high = expectation["interval"]
        return [low, high], "closed interval", lambda got: is_number(got) and low <= got <= high
    return expectation["value"], _tolerance(expectation)[1], lambda got: _within(expectation, got)


def shown_expectation(expectation: Mapping, *, statistical: bool = False) -> tuple:
    """``(expected, tolerance)`` as a record shows them."""
    if "ci_within" in expectation:
        return list(expectation["ci_within"]), "interval within"
    if "mean" in expectation:
        return expectation["mean"]["value"], f"mean {_tolerance(expectation['mean'])[1]}"
    if "fraction" in expectation:
        rule = expectation["fraction"]
        side = "above" if "above" in rule else "below"
        shown = {side: rule[side], "at_least": rule["at_least"]}
        return shown, f"fraction of seeds {side} {rule[side]!r}"
    expected, tolerance, _ = _per_value(expectation)
    return expected, f"{tolerance}, every seed" if statistical else tolerance


def _statistical_got(expectation: Mapping, summary: Mapping) -> tuple:
    """(the value a record shows as got, whether the field passed) over a field's seeds."""
    values = summary["per_seed"]
    if "ci_within" in expectation:
        low, high = expectation["ci_within"]
        ci = summary.get("ci")
        return ci, ci is not None and low <= ci[0] and ci[1] <= high
    if "mean" in expectation:
        mean = summary.get("mean")
        return mean, mean is not None and _within(expectation["mean"], mean)
    if "fraction" in expectation:
        rule = expectation["fraction"]
        above = "above" in rule
        threshold = rule["above" if above else "below"]
        hits = sum(is_number(v) and (v > threshold if above else v < threshold) for v in values)
        fraction = hits / len(values) if values else 0.0
        return fraction, all(is_number(v) for v in values) and fraction >= rule["at_least"]
    test = _per_value(expectation)[2]
    return values, bool(values) and all(test(_MISSING if v is None else v) for v in values)


def comparisons(expect: Mapping, result: Mapping, *, statistical: bool) -> dict:
    """Field -> ``{expected, got, tolerance, reason, passed}``, for a (nested) result or, if
    ``statistical``, :func:`claimbook.claims.store.statistical_result`'s summary."""
    flat = result if statistical else flatten(result)
    records = {}
    for field, expectation in expect.items():
        expected, tolerance = shown_expectation(expectation, statistical=statistical)
        got = flat.get(field, _MISSING)
        if statistical and (got is _MISSING or got is None):
            per_value = any(key in expectation for key in ("equals", "interval", "value"))
            expected = _per_value(expectation)[0] if per_value else None
            got, passed, tolerance = None, False, "field not returned"
        elif statistical:
            got, passed = _statistical_got(expectation, got)
        else:
            passed = _per_value(expectation)[2](got)
        records[field] = {
            "expected": expected,
            "got": None if got is _MISSING else got,
            "tolerance": tolerance,
            "reason": expectation.get("reason"),
            "passed": bool(passed),
        }
    for field in flat.keys() - expect.keys():
        records[field] = {
            "expected": None,
            "got": flat[field]["per_seed"] if statistical else flat[field],
            "tolerance": "no expectation registered",
            "reason": None,
            "passed": False,
        }
    return records


def half_width(expectation: Mapping, mean: float) -> float:
    r"""The half-width of ``expectation``'s tolerance around ``mean``: :math:`(hi - lo)/2`,
    ``abs_tol`` (or ``rel_tol * |value|``), :math:`|mean - t|` for ``fraction``, 0 for
    ``equals``; :class:`ClaimError` for an expectation of no known kind."""
    if "ci_within" in expectation or "interval" in expectation:
        low, high = expectation.get("ci_within", expectation.get("interval"))
        return (float(high) - float(low)) / 2.0
    if "mean" in expectation or "value" in expectation:
        return float(_tolerance(expectation.get("mean", expectation))[0])
    if "fraction" in expectation:
        rule = expectation["fraction"]
        return abs(mean - float(rule["above"] if "above" in rule else rule["below"]))
    if "equals" in expectation:
        return 0.0
    raise ClaimError(
        f"parameter expectation has no known kind (keys {sorted(expectation)}); expected "
        "ci_within, interval, mean, fraction, equals or value"
    )


def tolerance_ratio(expectation: Mapping, per_seed: Sequence) -> dict | None:
    r"""``{half_width, se, ratio}``, ``se`` being :math:`s/\sqrt n` (denominator
    :math:`n - 1`; all seeds equal: ratio inf), or None unless two or more finite numbers."""
    if len(per_seed) < 2 or not all(is_number(v) for v in per_seed):
        return None
    x = np.asarray(per_seed, dtype=np.float64)
    se = float(np.std(x, ddof=1)) / math.sqrt(x.size)
    half = half_width(expectation, float(np.mean(x)))
    ratio = half / se if se > 0.0 else math.inf if half > 0.0 else 0.0
    return {"half_width": half, "se": se, "ratio": ratio}


def field_ratios(expect: Mapping, result: Mapping) -> dict:
    """Field -> :func:`tolerance_ratio` of a statistical claim's stored result."""
    return {
        field: tolerance_ratio(expectation, result[field]["per_seed"])
        for field, expectation in expect.items()
        if isinstance(result.get(field), Mapping)
        and isinstance(result[field].get("per_seed"), list)
    }


def wide_tolerance_problems(claim_id: str, expect: Mapping, result: Mapping) -> list[str]:
    """A line per field wider than :data:`WIDE_RATIO` SE without ``wide_because``, or not
    that wide with it."""
    problems = []
    for field, ratio in sorted(field_ratios(expect, result).items()):
        if ratio is None:
            continue
        excused = "wide_because" in expect[field]
        shown = "inf" if math.isinf(ratio["ratio"]) else f"{ratio['ratio']:.3g}"
        said = f"claim {claim_id} field {field}: its tolerance is {shown} standard errors"
        if ratio["ratio"] > WIDE_RATIO and not excused:
            problems.append(
                f"{said} of the seeds' mean wide (half-width {ratio['half_width']:.3g}, SE "
                f"{ratio['se']:.3g}), more than {WIDE_RATIO:g}; tighten it from the evidence "
                "or state why with wide_because: <reason> in its registry entry"
            )
        elif ratio["ratio"] <= WIDE_RATIO and excused:
            problems.append(
                f"{said} wide, at most {WIDE_RATIO:g}, so there is nothing to excuse; remove "
                "wide_because"
            )
    return problems


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
    (with atoms, at least that). Needs ints ``n >= 1`` and ``1 <= k <= (n + 1) // 2``."""
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
