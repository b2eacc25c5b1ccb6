"""A claim field's numbers as its claim page shows them, in the prose's own format.

Every number is written by :func:`claimbook.numbers.format_value`, the formatter of the
chapters' bound numbers, so an interval reads "0.075 (95% CI 0.073 to 0.077)" on both. The
format spec is the one the chapter gives the field where it cites it (``{claim-value}``
``id.field:.3f``); a field the prose does not cite is rounded by one rule
(:func:`rule_spec`): to the decimal place of the leading digit of the width it is judged
against, the interval's over seeds (finer if its centre and ends would read alike), else
the tolerance's.

Examples
--------
>>> shown({"mean": 0.0751, "ci": [0.0733, 0.0772], "level": 0.95}, None, None)
'0.075 (95% CI 0.073 to 0.077)'
>>> shown(2.0550947413870233, {"value": 2.055, "abs_tol": 0.0005}, None)
'2.055'
>>> shown(2.0550947413870233, None, ".1f")
'2.1'
>>> expected_words({"ci_within": [0.06, 0.09]}, statistical=True)
'The 95% CI lies within 0.06 to 0.09.'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

from claimbook.numbers import format_value, is_statistical

__all__ = [
    "cited_spec",
    "expected_words",
    "judged_width",
    "rule_spec",
    "shown",
    "tolerance_over_se",
]

SHOWN_DIGITS = 7  # at most this many significant digits; the record keeps every one


def _real(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def judged_width(value, expectation: Mapping | None) -> float | None:
    """The width a value is judged against: its interval over seeds, else its tolerance.

    Examples
    --------
    >>> judged_width(1.0, {"value": 1.0, "rel_tol": 0.01})
    0.02
    >>> judged_width(3, {"equals": 3}) is None
    True
    """
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
    """The spec that rounds ``center`` to the place of ``width``'s leading digit.

    Fixed point for magnitudes from 1e-4 to 1e7, else scientific; a value below that place
    keeps two significant digits; nothing to judge by: as written (``.7g``).

    Examples
    --------
    >>> rule_spec(0.0751, 0.0039), rule_spec(438.2, 30.0), rule_spec(2.2e-16, 1e-12)
    ('.3f', '.0f', '.1e')
    """
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
    """:func:`rule_spec` of an interval over seeds, one digit finer at a time (at most
    :data:`SHOWN_DIGITS`) until its centre and both ends read apart: -0.497 (95% CI -0.503
    to -0.492), never -0.50 (95% CI -0.50 to -0.49)."""
    center = value["median"] if value.get("method") == "median-rank" else value["mean"]
    spec = rule_spec(center, width)
    while spec.endswith("f") and int(spec[1:-1]) < SHOWN_DIGITS:
        texts = {format(number, spec) for number in (center, *value["ci"])}
        if len(texts) == 3:
            break
        spec = f".{int(spec[1:-1]) + 1}f"
    return spec


def cited_spec(field: str, cited: list[tuple[str, str]]) -> str | None:
    """The spec the prose gives ``field``: where it cites the field or one of its parts.

    Examples
    --------
    >>> cited_spec("gap", [("gap_b1", ".2f"), ("gap.mean", ".3f")])
    '.3f'
    """
    for name, spec in cited:
        if spec and (name == field or name.startswith(field + ".")):
            return spec
    return None


def shown(value, expectation: Mapping | None, spec: str | None) -> str:
    """A field's value: by the prose's ``spec`` if it has one (and it applies), else by
    :func:`rule_spec`; integers, booleans and text as they are; a fraction of seeds as the
    share of them that met it. (A result field is a number, a boolean, a string or a
    statistical summary: ``claimbook.claims.computations``.)"""
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
    """A registered bound as written (text as it is; at most :data:`SHOWN_DIGITS` digits)."""
    if isinstance(bound, str):
        return bound
    return format_value(bound, ".7g") if _real(bound) else format_value(bound)


def expected_words(expectation: Mapping | None, *, statistical: bool = False) -> str:
    """A registered expectation as a sentence, for every shape the registry allows
    (``claim_schema.json``); bounds as registered. A per-value expectation of a statistical
    claim holds for every seed.

    Examples
    --------
    >>> expected_words({"value": 2.055, "abs_tol": 0.0005})
    'Within 0.0005 of 2.055.'
    >>> expected_words({"fraction": {"below": 1e-14, "at_least": 1.0}}, statistical=True)
    'At least 100% of the seeds below 1e-14.'
    >>> expected_words({"equals": 3}, statistical=True)
    'Every seed exactly 3.'
    >>> expected_words({"mean": {"value": 1.0, "rel_tol": 0.05}}, statistical=True)
    'The mean within a relative 0.05 of 1.'
    """
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
    """A field's tolerance half-width over its seeds' standard error, as a sentence.

    Examples
    --------
    >>> tolerance_over_se({"half_width": 0.04, "se": 0.01, "ratio": 4.0})
    "4.0 standard errors of the seeds' mean."
    >>> tolerance_over_se({"half_width": 0.05, "se": 1e-7, "ratio": 5e5})
    "5.00e+05 standard errors of the seeds' mean."
    >>> tolerance_over_se({"half_width": 1e-15, "se": 0.0, "ratio": math.inf})
    'No standard error: every seed gives the same value.'
    """
    if ratio is None:
        return None
    value = ratio["ratio"]
    if math.isinf(value) or ratio["se"] == 0.0:
        return "No standard error: every seed gives the same value."
    shown = f"{value:.1f}" if value < 10 else f"{value:.0f}" if value < 1000 else f"{value:.2e}"
    return f"{shown} standard errors of the seeds' mean."
