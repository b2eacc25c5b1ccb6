r"""How wide each statistical field's tolerance is, in standard errors of the seeds' mean.

For per-seed values :math:`x_1, \dots, x_n` the standard error is :math:`s/\sqrt n`
(denominator :math:`n - 1`). The tolerance's half-width is :math:`(hi - lo)/2` for
``ci_within`` or ``interval``; ``abs_tol`` or ``rel_tol * |value|`` for ``mean`` or
``value``; :math:`|\bar x - t|` for ``fraction: {above | below: t}``; 0 for ``equals``. A
ratio half-width / SE above :data:`WIDE_RATIO` needs ``wide_because`` in the field's
entry, and ``wide_because`` on a field that is not so wide is refused
(:func:`wide_tolerance_problems`). Seeds that all agree give an infinite ratio.

>>> round(tolerance_ratio({"ci_within": [0.9, 1.1]}, [0.99, 1.01])["ratio"], 9)
10.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from claimbook.claims.compare import is_number
from claimbook.errors import ClaimError

__all__ = [
    "WIDE_RATIO",
    "field_ratios",
    "half_width",
    "tolerance_ratio",
    "wide_tolerance_problems",
]

WIDE_RATIO = 10.0


def _absolute(bound: Mapping) -> float:
    if "abs_tol" in bound:
        return float(bound["abs_tol"])
    return float(bound["rel_tol"]) * abs(float(bound["value"]))


def half_width(expectation: Mapping, mean: float) -> float:
    """The half-width of ``expectation``'s tolerance around a field whose mean is ``mean``;
    :class:`ClaimError` for an expectation of no known kind."""
    if "ci_within" in expectation or "interval" in expectation:
        low, high = expectation.get("ci_within", expectation.get("interval"))
        return (float(high) - float(low)) / 2.0
    if "mean" in expectation:
        return _absolute(expectation["mean"])
    if "fraction" in expectation:
        rule = expectation["fraction"]
        bound = rule["above"] if "above" in rule else rule["below"]
        return abs(mean - float(bound))
    if "equals" in expectation:
        return 0.0
    if "value" in expectation:
        return _absolute(expectation)
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
