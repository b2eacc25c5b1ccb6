"""Comparing a claim's results with its registered expectations: one record per field.

A record is ``{expected, got, tolerance, reason, passed}``: the expectation as shown
(:func:`shown_expectation`), the value computed, and whether it passed. A computed field
without an expectation gets a failing record: registry and computation agree one to one.
The comparators are docs/claims.md's; on a statistical claim a deterministic comparator
must hold for every seed.

>>> shown_expectation({"value": 0.5, "abs_tol": 1e-12})
(0.5, 'abs_tol 1e-12')
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from claimbook.claims.computations import flatten

__all__ = ["comparisons", "is_number", "shown_expectation"]

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


def _within(bound: Mapping, got) -> bool:
    tolerance = bound["abs_tol"] if "abs_tol" in bound else bound["rel_tol"] * abs(bound["value"])
    return is_number(got) and abs(got - bound["value"]) <= tolerance


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
