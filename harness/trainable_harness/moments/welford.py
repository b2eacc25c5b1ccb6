"""Welford's per-value update: :func:`stable_online_moments`.

A Python loop, slow and kept exactly as it is: the registered "merged equals direct, bit
for bit" result of section 15.3 depends on its rounding.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    MomentOverflowError,
    NonFiniteInputError,
)
from trainable_harness.moments.checks import (
    _check_count_fits,
    _floating_dtype,
    _values_in_dtype,
)
from trainable_harness.moments.state import MomentState
from trainable_harness.moments.streaming import streaming_moments

__all__ = ["stable_online_moments"]


def stable_online_moments(values, dtype=np.float64) -> MomentState:
    """Welford's one-value-at-a-time update, accumulating in ``dtype``.

    For the k-th value ``x_k`` (k = 1, 2, ...), with every operation in ``dtype``::

        delta = x_k - mean
        mean  = mean + delta / k
        m2    = m2 + delta * (x_k - mean)      # uses the updated mean

    This exact per-value form, in a Python loop over numpy scalars, is deliberate: for
    the running-state data of section 15.3, merging the eight per-batch states with
    :func:`merge_moments` reproduces the ``m2`` of one pass over all 256 values bit for
    bit (and the mean within 3e-15). A two-pass or vectorised computation does not.

    Parameters
    ----------
    values : array_like, shape (n,)
        The stream, n >= 1. Integer values are converted to ``dtype``; so are floating
        values of another dtype (a narrowing conversion rounds them).
    dtype : numpy floating dtype, default numpy.float64
        The accumulation dtype of the returned state.

    Returns
    -------
    MomentState
        ``count = n`` and ``mean``, ``m2`` as scalars of ``dtype``.

    Raises
    ------
    ShapeError
        If ``values`` is not 1-D.
    EmptyInputError
        If ``values`` is empty (use :meth:`MomentState.empty` for an empty state).
    NonFiniteInputError
        If a value is NaN/inf, or overflows when converted to ``dtype``. Its subclass
        :class:`MomentOverflowError` if the update overflows ``dtype`` (``m2`` or a
        deviation beyond its largest value); the message gives the exact ``m2``.
    CountOverflowError
        If ``n`` exceeds the largest ``dtype`` value (float16: 65504 values), the count
        the update divides by in ``dtype``.
    UnsupportedDtypeError
        If ``dtype`` is not floating or the values are not real numbers.

    Examples
    --------
    >>> state = stable_online_moments([1, 2, 3, 4])
    >>> state.count, float(state.mean), float(state.m2), float(state.sample_variance)
    (4, 2.5, 5.0, 1.6666666666666667)

    The accumulation dtype is part of the result. On the values of section 15.2 the
    running means (9999.33..., ...) round; float64 still gives 2.5 to 12 digits, float32
    to 3.

    >>> values = [9998, 9999, 10001, 10002]
    >>> float(stable_online_moments(values, dtype=np.float64).population_variance)
    2.499999999999318
    >>> float(stable_online_moments(values, dtype=np.float32).population_variance)
    2.5003662109375
    """
    dtype = _floating_dtype(dtype)
    scalar = dtype.type
    converted = _values_in_dtype(values, dtype)
    _check_count_fits(converted.size, dtype, "values has")
    count, mean, m2 = 0, scalar(0), scalar(0)
    # A step beyond range leaves inf or NaN, reported below with the exact m2.
    with np.errstate(over="ignore", invalid="ignore"):
        for value in converted:
            count += 1
            delta = value - mean
            mean = mean + delta / scalar(count)
            m2 = m2 + delta * (value - mean)
    if not (np.isfinite(mean) and np.isfinite(m2)):
        raise MomentOverflowError(
            f"values: Welford's update in {dtype} overflowed (m2 or a deviation passed the "
            f"largest {dtype}, {np.finfo(dtype).max:.4g}); the exact m2 of the values is "
            f"{_exact_m2_text(converted)}. Accumulate in a wider dtype, or divide the values "
            "by a power of two first"
        )
    return MomentState(count=count, mean=mean, m2=m2)


def _exact_m2_text(values: np.ndarray) -> str:
    """``about <m2>`` for finite ``values``, computed at float64 range, for a message."""
    try:
        with np.errstate(over="ignore"):
            wide = values.astype(np.float64)
        return f"about {float(streaming_moments(wide).m2):.4g}"
    except NonFiniteInputError:
        return f"beyond the largest float64 ({np.finfo(np.float64).max:.4g})"
