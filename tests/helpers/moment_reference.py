"""Exact references shared by the tests of trainable_harness.moments."""

from fractions import Fraction

import numpy as np
from hypothesis import settings

UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2  # u = 2**-53
PROPERTY_SETTINGS = settings(max_examples=75, deadline=None)


def exact_moments(values):
    """Mean and m2 of float64 values in exact rational arithmetic."""
    exact = [Fraction(float(v)) for v in values]
    mean = sum(exact) / len(exact)
    return mean, sum((v - mean) ** 2 for v in exact)
