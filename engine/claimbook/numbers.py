"""The one format of a result on a page: a number, an interval, or a value over seeds."""

import math
from collections.abc import Mapping
from numbers import Real


def is_statistical(value) -> bool:
    """True for a statistical field's summary (it has a mean and an interval)."""
    return isinstance(value, Mapping) and "mean" in value and "ci" in value


def _format_number(value, spec: str) -> str:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{value!r} is not a number")
    return format(value, spec)


def format_value(value, spec: str = "") -> str:
    """Page text of a result field: a number, an interval ``[lo, hi]``, or a statistical
    field's "m (95% CI lo to hi)" ("m (median; 95% CI lo to hi)" for a median's interval),
    each number formatted by ``spec``. ValueError for anything else or a spec that fails."""
    if is_statistical(value):
        median = value.get("method") == "median-rank" and "median" in value
        centre = _format_number(value["median" if median else "mean"], spec)
        low, high = (_format_number(bound, spec) for bound in value["ci"])
        level = value.get("level")  # a fraction or a percentage; 95% when absent
        level = f"{level * 100 if level <= 1 else level:g}%" if isinstance(level, Real) else "95%"
        return f"{centre} ({'median; ' if median else ''}{level} CI {low} to {high})"
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return f"[{_format_number(value[0], spec)}, {_format_number(value[1], spec)}]"
    if isinstance(value, bool) and not spec:
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value) and not spec:
        return str(value)
    return _format_number(value, spec)
