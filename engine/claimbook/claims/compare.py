r"""Comparing a claim's results with its registered expectations, and how wide they are.

:func:`comparisons` gives one record per field, ``{expected, got, tolerance, reason,
passed}``: the expectation as shown (:func:`shown_expectation`), the value computed, and
whether it passed. A computed field without an expectation gets a failing record: registry
and computation agree one to one. The comparators are docs/claims.md's; on a statistical
claim a deterministic comparator must hold for every seed.

:func:`tolerance_ratio` measures a statistical field's tolerance in standard errors of the
seeds' mean, :math:`s/\sqrt n` (denominator :math:`n - 1`). The half-width is
:math:`(hi - lo)/2` for ``ci_within`` or ``interval``; ``abs_tol`` or ``rel_tol * |value|``
for ``mean`` or ``value``; :math:`|\bar x - t|` for ``fraction: {above | below: t}``; 0 for
``equals``. A ratio above :data:`WIDE_RATIO` needs ``wide_because`` in the field's entry,
and ``wide_because`` on a field that is not so wide is refused
(:func:`wide_tolerance_problems`). Seeds that all agree give an infinite ratio.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from claimbook.claims.computations import flatten
from claimbook.errors import ClaimError

WIDE_RATIO = 10.0

_MISSING = object()


def is_number(value) -> bool:
    """A finite int or float that is not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _equal_exactly(expected, got) -> bool:
    """Equality that keeps booleans, numbers and strings apart (``True == 1`` in Python)."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool) and expected == got
    if isinstance(expected, str) or isinstance(got, str):
        return isinstance(expected, str) and isinstance(got, str) and expected == got
    return got == expected


def _absolute(bound: Mapping):
    """A ``{value, abs_tol | rel_tol}`` bound's absolute tolerance."""
    return bound["abs_tol"] if "abs_tol" in bound else bound["rel_tol"] * abs(bound["value"])


def _within(bound: Mapping, got) -> bool:
    return is_number(got) and abs(got - bound["value"]) <= _absolute(bound)


def _tolerance_text(bound: Mapping) -> str:
    name = "abs_tol" if "abs_tol" in bound else "rel_tol"
    return f"{name} {bound[name]!r}"


def _per_value(expectation: Mapping) -> tuple:
    """(expected shown, tolerance text, test of one value) for equals/abs/rel/interval."""
    if "equals" in expectation:
        expected = expectation["equals"]
        return expected, "exact", lambda got: got is not _MISSING and _equal_exactly(expected, got)
    if "interval" in expectation:
        low, high = expectation["interval"]
        return [low, high], "closed interval", lambda got: is_number(got) and low <= got <= high
    tolerance = _tolerance_text(expectation)
    return expectation["value"], tolerance, lambda got: _within(expectation, got)


def _fraction_side(rule: Mapping) -> str:
    return "above" if "above" in rule else "below"


def shown_expectation(expectation: Mapping, *, statistical: bool = False) -> tuple:
    """``(expected, tolerance)`` as a record shows them, for any registered expectation."""
    if "ci_within" in expectation:
        return list(expectation["ci_within"]), "interval within"
    if "mean" in expectation:
        bound = expectation["mean"]
        return bound["value"], f"mean {_tolerance_text(bound)}"
    if "fraction" in expectation:
        rule = expectation["fraction"]
        side = _fraction_side(rule)
        return (
            {side: rule[side], "at_least": rule["at_least"]},
            f"fraction of seeds {side} {rule[side]!r}",
        )
    expected, tolerance, _test = _per_value(expectation)
    return expected, f"{tolerance}, every seed" if statistical else tolerance


def _record(expectation: Mapping | None, got, passed, *, statistical: bool = False) -> dict:
    if expectation is None:
        expected, tolerance, reason = None, "no expectation registered", None
    else:
        expected, tolerance = shown_expectation(expectation, statistical=statistical)
        reason = expectation.get("reason")
    return {
        "expected": expected,
        "got": None if got is _MISSING else got,
        "tolerance": tolerance,
        "reason": reason,
        "passed": bool(passed),
    }


def _deterministic(expect: Mapping, result: Mapping) -> dict:
    flat = flatten(result)
    records = {}
    for field, expectation in expect.items():
        got = flat.get(field, _MISSING)
        records[field] = _record(expectation, got, _per_value(expectation)[2](got))
    for field in flat.keys() - expect.keys():
        records[field] = _record(None, flat[field], False)
    return records


def _statistical_passed(expectation: Mapping, summary: Mapping) -> tuple:
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
        side = _fraction_side(rule)
        threshold = rule[side]
        if side == "above":
            hits = sum(is_number(v) and v > threshold for v in values)
        else:
            hits = sum(is_number(v) and v < threshold for v in values)
        fraction = hits / len(values) if values else 0.0
        numbers = all(is_number(v) for v in values)
        return fraction, numbers and fraction >= rule["at_least"]
    test = _per_value(expectation)[2]
    return values, bool(values) and all(test(_MISSING if v is None else v) for v in values)


def _statistical(expect: Mapping, result: Mapping) -> dict:
    records = {}
    for field, expectation in expect.items():
        summary = result.get(field)
        if summary is None:
            per_value = any(key in expectation for key in ("equals", "interval", "value"))
            records[field] = {
                "expected": _per_value(expectation)[0] if per_value else None,
                "got": None,
                "tolerance": "field not returned",
                "reason": expectation.get("reason"),
                "passed": False,
            }
        else:
            got, passed = _statistical_passed(expectation, summary)
            records[field] = _record(expectation, got, passed, statistical=True)
    for field in result.keys() - expect.keys():
        records[field] = _record(None, result[field]["per_seed"], False)
    return records


def comparisons(expect: Mapping, result: Mapping, *, statistical: bool) -> dict:
    """Field -> record, for a (nested) result or, if ``statistical``, the per-field summary
    of :func:`claimbook.claims.store.statistical_result`."""
    return _statistical(expect, result) if statistical else _deterministic(expect, result)


def half_width(expectation: Mapping, mean: float) -> float:
    """The half-width of ``expectation``'s tolerance around a field whose mean is ``mean``;
    :class:`ClaimError` for an expectation of no known kind."""
    if "ci_within" in expectation or "interval" in expectation:
        low, high = expectation.get("ci_within", expectation.get("interval"))
        return (float(high) - float(low)) / 2.0
    if "mean" in expectation:
        return float(_absolute(expectation["mean"]))
    if "fraction" in expectation:
        rule = expectation["fraction"]
        bound = rule["above"] if "above" in rule else rule["below"]
        return abs(mean - float(bound))
    if "equals" in expectation:
        return 0.0
    if "value" in expectation:
        return float(_absolute(expectation))
    raise ClaimError(
        f"parameter expectation has no known kind (keys {sorted(expectation)}); expected "
        "ci_within, interval, mean, fraction, equals or value"
    )


def tolerance_ratio(expectation: Mapping, per_seed: Sequence) -> dict | None:
    """``{half_width, se, ratio}`` of a field's expectation and per-seed values, or None
    unless they are at least two finite numbers."""
    if len(per_seed) < 2 or not all(is_number(v) for v in per_seed):
        return None
    x = np.asarray(per_seed, dtype=np.float64)
    mean = float(np.mean(x))
    se = float(np.std(x, ddof=1)) / math.sqrt(x.size)
    half = half_width(expectation, mean)
    if se > 0.0:
        ratio = half / se
    else:
        ratio = math.inf if half > 0.0 else 0.0
    return {"half_width": half, "se": se, "ratio": ratio}


def field_ratios(expect: Mapping, result: Mapping) -> dict:
    """Field -> :func:`tolerance_ratio` for a statistical claim's registry and stored result."""
    ratios = {}
    for field, expectation in expect.items():
        summary = result.get(field)
        if isinstance(summary, Mapping) and isinstance(summary.get("per_seed"), list):
            ratios[field] = tolerance_ratio(expectation, summary["per_seed"])
    return ratios


def wide_tolerance_problems(claim_id: str, expect: Mapping, result: Mapping) -> list[str]:
    """One line per field wider than :data:`WIDE_RATIO` SE without ``wide_because``, and per
    ``wide_because`` on a field that is not that wide."""
    problems = []
    for field, ratio in sorted(field_ratios(expect, result).items()):
        if ratio is None:
            continue
        excused = "wide_because" in expect[field]
        shown = "inf" if math.isinf(ratio["ratio"]) else f"{ratio['ratio']:.3g}"
        if ratio["ratio"] > WIDE_RATIO and not excused:
            problems.append(
                f"claim {claim_id} field {field}: its tolerance is {shown} standard errors "
                f"of the seeds' mean wide (half-width {ratio['half_width']:.3g}, SE "
                f"{ratio['se']:.3g}), more than {WIDE_RATIO:g}; tighten it from the evidence "
                "or state why with wide_because: <reason> in its registry entry"
            )
        elif ratio["ratio"] <= WIDE_RATIO and excused:
            problems.append(
                f"claim {claim_id} field {field}: its tolerance is {shown} standard errors "
                f"wide, at most {WIDE_RATIO:g}, so there is nothing to excuse; remove "
                "wide_because"
            )
    return problems
