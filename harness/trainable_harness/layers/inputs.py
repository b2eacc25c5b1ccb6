"""Argument checks the layers share: counts, shapes and per-channel vectors.

Each check returns the argument in the form the layers compute with, or raises the
specific error of :mod:`trainable_harness.errors` with a message that names the argument,
what it was and what is expected. Arrays go through the package's one dtype check,
:func:`~trainable_harness.errors.check_real_array`: converted to a real floating ``dtype``
(integers promoted; bool, complex and object arrays refused) and finite.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    AffineShapeError,
    CountError,
    check_real_array,
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


def _as_per_channel(values, name: str, num_channels: int, context: str, dtype) -> np.ndarray:
    """Return a per-channel parameter of shape ``(C,)``, naming both shapes if it is not."""
    values = np.asarray(values)
    if values.shape != (num_channels,):
        raise AffineShapeError(
            f"{name} has shape {values.shape} but {context}; {name} must have shape "
            f"({num_channels},)"
        )
    return check_real_array(values, name, dtype)
