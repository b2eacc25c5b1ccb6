"""The cancellation witness of section 15.2: raw-moment against centered variance.

:func:`raw_and_centered_variance` computes both as written in one precision, so that
what the precision does to each formula shows.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.moments.checks import (
    _floating_dtype,
    _values_in_dtype,
)

__all__ = ["raw_and_centered_variance"]


def raw_and_centered_variance(values, dtype=np.float32) -> tuple[float, float]:
    """The cancellation witness of section 15.2: raw-moment vs centered variance.

    Both are population variances (denominator n), computed entirely in ``dtype``:

    - raw: ``mean(x**2) - mean(x)**2``, which subtracts two nearly equal large numbers
      when ``|mean| >> std`` and can lose every significant digit;
    - centered: ``mean((x - mean(x))**2)``, which subtracts before squaring.

    This is a witness of what a precision does to the two formulas, so they are computed
    as written, without scaling: a square or sum beyond ``dtype``'s range (``x**2`` of
    ``10**3`` in float16) gives ``inf`` or ``nan`` with numpy's overflow warning, returned
    as is; :func:`trainable_harness.precision.cancellation_row` records it as a failure.
    For moments that do not overflow, use :func:`streaming_moments`.

    Parameters
    ----------
    values : array_like, shape (n,)
        n >= 1 real values; converted to ``dtype`` first (integers included).
    dtype : numpy floating dtype, default numpy.float32
        The arithmetic precision of the witness.

    Returns
    -------
    tuple of (float, float)
        ``(raw, centered)`` as Python floats.

    Raises
    ------
    ShapeError, EmptyInputError, NonFiniteInputError, UnsupportedDtypeError
        As for :func:`stable_online_moments`.

    Examples
    --------
    >>> raw_and_centered_variance(np.array([9998, 9999, 10001, 10002]))
    (0.0, 2.5)
    >>> raw_and_centered_variance(np.array([9998, 9999, 10001, 10002]), dtype=np.float64)
    (2.5, 2.5)
    """
    dtype = _floating_dtype(dtype)
    x = _values_in_dtype(values, dtype)
    mean = np.mean(x, dtype=dtype)
    raw = np.mean(x * x, dtype=dtype) - mean * mean
    centered = np.mean((x - mean) ** 2, dtype=dtype)
    return float(raw), float(centered)
