"""Argument checks the layers share: counts, shapes, floating arrays, per-channel vectors.

Each check returns the argument in the form the layers compute with, or raises the
specific error of :mod:`trainable_harness.errors` with a message that names the argument,
what it was and what is expected. The dtype contract of the package
(:mod:`trainable_harness.layers`) is enforced here: arrays are converted to a real floating
``dtype`` (integers promoted; bool, complex and object arrays refused) and must be finite.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    AffineShapeError,
    CountError,
    UnsupportedDtypeError,
    check_finite,
)


def _count(value, name: str, *, minimum: int = 0, error=CountError) -> int:
    """Return ``value`` as an int if it is an integer (not a bool) ``>= minimum``, else raise."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise error(
            f"{name} must be an integer >= {minimum}, got {value!r} ({type(value).__name__})"
        )
    if value < minimum:
        raise error(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def _as_shape(shape, name: str = "shape") -> tuple[int, ...]:
    """Return ``shape`` as a tuple of non-negative ints, naming the first bad entry."""
    if isinstance(shape, str) or not isinstance(shape, tuple | list | np.ndarray):
        raise CountError(
            f"{name} must be a tuple of non-negative integers, got {shape!r} "
            f"({type(shape).__name__})"
        )
    return tuple(_count(n, f"{name}[{i}]") for i, n in enumerate(shape))


def _as_float(array_like, name: str, dtype) -> np.ndarray:
    """Return ``array_like`` as a finite array of floating ``dtype`` (integers promoted)."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:  # numpy's "data type 'x' not understood" would not name the argument
        raise UnsupportedDtypeError(
            f"dtype must be a real floating type, got {dtype!r} ({type(dtype).__name__})"
        ) from None
    if dtype.kind != "f":
        raise UnsupportedDtypeError(f"dtype must be a real floating type, got {dtype}")
    array = np.asarray(array_like)
    if array.dtype.kind not in "iuf":
        raise UnsupportedDtypeError(
            f"{name} has dtype {array.dtype}; a real floating or integer array is expected"
        )
    check_finite(array, name)
    if array.dtype == dtype:
        return array
    # A finite value beyond the range of a narrower dtype overflows on conversion; that
    # is reported just below, naming the conversion, so numpy's warning would only repeat it.
    with np.errstate(over="ignore"):
        converted = array.astype(dtype)
    check_finite(converted, f"{name} converted to {dtype}")
    return converted


def _as_per_channel(values, name: str, num_channels: int, context: str, dtype) -> np.ndarray:
    """Return a per-channel parameter of shape ``(C,)``, naming both shapes if it is not."""
    values = np.asarray(values)
    if values.shape != (num_channels,):
        raise AffineShapeError(
            f"{name} has shape {values.shape} but {context}; {name} must have shape "
            f"({num_channels},)"
        )
    return _as_float(values, name, dtype)
