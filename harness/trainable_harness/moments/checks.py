"""Argument checks shared by the modules of :mod:`trainable_harness.moments` (private).

Accumulation dtypes, the largest count a state of a dtype holds, scalars of a state and
1-D arrays of values converted to a dtype.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    CountOverflowError,
    NonFiniteInputError,
    ShapeError,
    UnsupportedDtypeError,
    check_nonempty,
    check_real_array,
)

__all__: list[str] = []


def _floating_dtype(dtype) -> np.dtype:
    """Return ``np.dtype(dtype)`` if it is a real floating type, else raise."""
    resolved = np.dtype(dtype)
    if resolved.kind != "f":
        raise UnsupportedDtypeError(
            f"accumulation dtype {resolved} is not a real floating type; use e.g. "
            "np.float64 or np.float32"
        )
    return resolved


def _largest_count(dtype: np.dtype) -> float:
    """The largest count a state in ``dtype`` holds: its largest finite value.

    A state divides by its count in its own dtype (``mean + delta / n``, ``m2 / n``); a
    count beyond this converts to ``inf`` (float16: beyond 65504) and the division would
    silently give 0.
    """
    return float(np.finfo(dtype).max)


def _check_count_fits(count: int, dtype: np.dtype, what: str) -> None:
    """Raise :class:`CountOverflowError` if ``count`` exceeds the largest ``dtype`` value."""
    if count > _largest_count(dtype):
        raise CountOverflowError(
            f"{what} {count} values, more than the largest {dtype} ({_largest_count(dtype):.6g}): "
            f"a state accumulated in {dtype} divides by its count in {dtype}, which would "
            "overflow to inf and turn the divisions into 0. Accumulate in float32 or float64 "
            "(convert a state with MomentState(count, np.float32(mean), np.float32(m2)))"
        )


def _as_scalar(value, name: str) -> np.floating:
    """Keep numpy floating scalars as they are; promote Python numbers to float64."""
    if isinstance(value, np.floating):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer):
        raise UnsupportedDtypeError(
            f"{name} must be a real number or numpy floating scalar, got {type(value).__name__}"
        )
    try:
        return np.float64(value)
    except OverflowError:  # an int beyond float64's range
        raise NonFiniteInputError(f"{name} = {value} is beyond float64's range") from None


def _values_in_dtype(values, dtype: np.dtype) -> np.ndarray:
    """Return ``values`` as a finite, non-empty 1-D array converted to ``dtype``."""
    array = check_real_array(values, "values", dtype)
    if array.ndim != 1:
        raise ShapeError(
            f"values have shape {array.shape}; a 1-D array of shape (n,) is expected "
            "(use .ravel() to pool a batch)"
        )
    check_nonempty(array, "values")
    return array
