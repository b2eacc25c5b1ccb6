"""Exact references for the numerics tests: rational arithmetic and an 80-digit root.

A float (of any width) is a dyadic rational, so means, deviations, variances and eps are
exact as :class:`fractions.Fraction`; only the square root is not, and it is taken with 80
significant decimal digits, far beyond the 16 of float64. Errors are reported in units in
the last place (ulps) of the dtype under test.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np


def exact_sqrt(value: Fraction) -> Fraction:
    """``sqrt(value)`` to 80 significant digits, as a Fraction."""
    with localcontext() as context:
        context.prec = 80
        context.Emin, context.Emax = -(10**6), 10**6
        root = (Decimal(value.numerator) / Decimal(value.denominator)).sqrt()
    return Fraction(root)


def exact_standardized(x, eps: float = 0.0, *, centered: bool = True) -> list[Fraction]:
    """``(x - mean) / sqrt(population_variance + eps)`` (or ``x / sqrt(mean(x^2) + eps)``)."""
    values = [Fraction(float(v)) for v in np.ravel(x)]
    mean = sum(values) / len(values) if centered else Fraction(0)
    deviations = [v - mean for v in values]
    variance = sum(t * t for t in deviations) / len(values) + Fraction(eps)
    root = exact_sqrt(variance)
    return [t / root for t in deviations]


def ulp(value: Fraction | float, dtype) -> Fraction:
    """The spacing of ``dtype`` at ``|value|`` (at least the smallest subnormal)."""
    dtype = np.dtype(dtype)
    with np.errstate(over="ignore"):
        rounded = np.abs(dtype.type(float(value)))
    if np.isinf(rounded):
        rounded = np.finfo(dtype).max
    return Fraction(float(np.spacing(rounded)))


def normwise_ulps(computed, reference: list[Fraction], dtype) -> float:
    """``max_i |computed_i - reference_i|`` in ulps of the largest ``|reference_i|``."""
    scale = ulp(max(abs(r) for r in reference), dtype)
    errors = (
        abs(Fraction(float(c)) - r) for c, r in zip(np.ravel(computed), reference, strict=True)
    )
    return float(max(errors) / scale)


def elementwise_ulps(computed, reference: list[Fraction], dtype) -> float:
    """``max_i |computed_i - reference_i| / ulp(reference_i)``."""
    return float(
        max(
            abs(Fraction(float(c)) - r) / ulp(r, dtype)
            for c, r in zip(np.ravel(computed), reference, strict=True)
        )
    )


def centered_ulp_bound(d: int) -> float:
    """``3d/2 + 5``: ulps of the largest output a standardized set of ``d`` values may miss by.

    The first-order rounding analysis of ``tests/harness/test_normalization.py`` (deviations
    ``(d + 2) u``, root ``(d/2 + 2) u``, one division).
    """
    return 1.5 * d + 5
