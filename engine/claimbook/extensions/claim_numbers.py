"""A claim field's numbers as its claim page shows them, in the prose's own format.

Numbers are written by :func:`claimbook.numbers.format_value`, as the chapters' bound numbers
are, in the spec the prose cites the field with (:func:`cited_spec`); a field the prose does
not cite is rounded to the place of the leading digit of the width it is judged against
(:func:`rule_spec`, :func:`judged_width`).

>>> shown({"mean": 0.0751, "ci": [0.0733, 0.0772], "level": 0.95}, None, None)
'0.075 (95% CI 0.073 to 0.077)'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

from claimbook.numbers import format_value, is_statistical

SHOWN_DIGITS = 7  # at most this many significant digits; the record keeps every one


def _real(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def judged_width(value, expectation: Mapping | None) -> float | None:
    """The width a value is judged against: its interval over seeds, else its tolerance's
    (None if neither)."""
    if is_statistical(value):
        low, high = value["ci"]
        return high - low if high > low else None
    bound = (expectation or {}).get("mean", expectation or {})
    if "abs_tol" in bound:
        return 2 * bound["abs_tol"]
    if "rel_tol" in bound and _real(value):
        return 2 * bound["rel_tol"] * abs(value)
    low_high = bound.get("interval") or bound.get("ci_within")
    if low_high:
        return low_high[1] - low_high[0]
    return None


def rule_spec(center: float, width: float | None) -> str:
    """The spec that rounds ``center`` to the place of ``width``'s leading digit: fixed point
    for magnitudes 1e-4 to 1e7, else scientific; below that place two significant digits;
    no width: ``.7g``."""
    if not width or not _real(width) or not _real(center) or not center:
        return f".{SHOWN_DIGITS}g"
    place = math.floor(math.log10(abs(width)))
    magnitude = math.floor(math.log10(abs(center)))
    if magnitude < place:
        return ".1e"
    if -4 <= magnitude < SHOWN_DIGITS:
        return f".{max(0, min(-place, SHOWN_DIGITS - 1 - magnitude))}f"
    return f".{min(magnitude - place, SHOWN_DIGITS - 1)}e"


def _interval_spec(value: Mapping, width: float | None) -> str:
    """:func:`rule_spec` of an interval, one digit finer at a time (at most
    :data:`SHOWN_DIGITS`) until its centre and both ends read apart."""
    center = value["median"] if value.get("method") == "median-rank" else value["mean"]
    spec = rule_spec(center, width)
    while spec.endswith("f") and int(spec[1:-1]) < SHOWN_DIGITS:
        texts = {format(number, spec) for number in (center, *value["ci"])}
        if len(texts) == 3:
            break
        spec = f".{int(spec[1:-1]) + 1}f"
    return spec


def cited_spec(field: str, cited: list[tuple[str, str]]) -> str | None:
    """The spec the prose gives ``field``, or one of its dotted parts, where it cites it."""
    for name, spec in cited:
        if spec and (name == field or name.startswith(field + ".")):
            return spec
    return None


def shown(value, expectation: Mapping | None, spec: str | None) -> str:
    """A field's value: by the prose's ``spec`` if it applies, else by :func:`rule_spec`;
    integers, booleans and text as they are; a fraction of seeds as the share that met it."""
    if value is None:
        return "\u2014"
    if isinstance(value, str):
        return value
    if expectation and "fraction" in expectation and _real(value):
        return f"{value:.0%} of the seeds"  # the share of seeds that met it
    if spec:
        try:
            return format_value(value, spec)
        except ValueError:
            pass  # the prose cites another part of the field; round this one by the rule
    width = judged_width(value, expectation)
    if is_statistical(value):
        return format_value(value, _interval_spec(value, width))
    if _real(value) and isinstance(value, float):
        return format_value(value, rule_spec(value, width))
    return format_value(value)


def _as_written(bound) -> str:
    if isinstance(bound, str):
        return bound
    return format_value(bound, ".7g") if _real(bound) else format_value(bound)


def expected_words(expectation: Mapping | None, *, statistical: bool = False) -> str:
    """A registered expectation, of any shape ``claim_schema.json`` allows, as a sentence; a
    per-value expectation of a statistical claim holds for every seed."""
    if not expectation:
        return "No expectation is registered."
    if "ci_within" in expectation:
        low, high = map(_as_written, expectation["ci_within"])
        return f"The 95% CI lies within {low} to {high}."
    if "fraction" in expectation:
        rule = expectation["fraction"]
        side = "above" if "above" in rule else "below"
        return f"At least {rule['at_least']:.0%} of the seeds {side} {_as_written(rule[side])}."
    bound = expectation.get("mean", expectation)
    if "equals" in bound:
        words = f"exactly {_as_written(bound['equals'])}"
    elif "interval" in bound:
        low, high = map(_as_written, bound["interval"])
        words = f"within {low} to {high}"
    elif "abs_tol" in bound:
        words = f"within {_as_written(bound['abs_tol'])} of {_as_written(bound['value'])}"
    else:
        words = (
            f"within a relative {_as_written(bound['rel_tol'])} of {_as_written(bound['value'])}"
        )
    if "mean" in expectation:
        words = f"the mean {words}"
    elif statistical:
        words = f"every seed {words}"
    return words[0].upper() + words[1:] + "."


def tolerance_over_se(ratio: Mapping | None) -> str | None:
    """A field's tolerance half-width over its seeds' standard error, as a sentence."""
    if ratio is None:
        return None
    value = ratio["ratio"]
    if math.isinf(value) or ratio["se"] == 0.0:
        return "No standard error: every seed gives the same value."
    shown = f"{value:.1f}" if value < 10 else f"{value:.0f}" if value < 1000 else f"{value:.2e}"
    return f"{shown} standard errors of the seeds' mean."
