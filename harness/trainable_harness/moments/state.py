"""The centered moment state: ``count``, ``mean`` and ``m2 = sum_i (x_i - mean)^2``.

:class:`MomentState` checks its fields, remembers its accumulation dtype and gives the
population (``m2 / n``) and sample (``m2 / (n - 1)``) variances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainable_harness.errors import (
    DtypeMismatchError,
    InsufficientCountError,
    InvalidMomentStateError,
    check_finite,
)
from trainable_harness.moments.checks import (
    _as_scalar,
    _check_count_fits,
    _floating_dtype,
)

__all__ = ["MomentState"]


@dataclass(frozen=True)
class MomentState:
    """Immutable centered moment state ``(count, mean, m2)`` of a stream of values.

    ``m2`` is the sum of squared deviations from ``mean``. The accumulation dtype is the
    numpy scalar type of ``mean`` and ``m2`` (Python numbers are stored as float64). An
    empty state (``count == 0``, ``mean == m2 == 0``) is the identity of
    :func:`merge_moments`; build one with :meth:`MomentState.empty`.

    Attributes
    ----------
    count : int
        Number of values, ``n >= 0``.
    mean : numpy.floating
        Their mean.
    m2 : numpy.floating
        ``sum_i (x_i - mean)^2 >= 0``.

    Raises
    ------
    InvalidMomentStateError
        If ``count`` is not a non-negative integer (a bool or a float is not a count), if
        ``m2 < 0``, if an empty state has a nonzero ``mean`` or ``m2``, or if a state of
        one value has a nonzero ``m2``.
    DtypeMismatchError
        If ``mean`` and ``m2`` have different dtypes.
    NonFiniteInputError
        If ``mean`` or ``m2`` is NaN/inf.
    CountOverflowError
        If ``count`` exceeds the largest value of the dtype (float16: 65504), which the
        variances divide by in that dtype (a subclass of :class:`InvalidMomentStateError`).

    Examples
    --------
    >>> state = MomentState(count=4, mean=np.float64(10000.0), m2=np.float64(10.0))
    >>> float(state.population_variance), float(state.sample_variance)
    (2.5, 3.3333333333333335)
    >>> state.dtype
    dtype('float64')
    """

    count: int
    mean: np.floating
    m2: np.floating

    def __eq__(self, other: object) -> bool:
        # A Python bool on every version: from 3.13 the generated __eq__ compares field by
        # field and returns the last comparison, here a numpy bool (np.True_); 3.11 and 3.12
        # compared the fields' tuples, a bool. The dataclass still generates __hash__.
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.count, self.mean, self.m2) == (other.count, other.mean, other.m2)

    def __post_init__(self) -> None:
        if isinstance(self.count, bool) or not isinstance(self.count, int | np.integer):
            raise InvalidMomentStateError(
                f"count must be an integer, got {type(self.count).__name__}"
            )
        if self.count < 0:
            raise InvalidMomentStateError(f"count must be >= 0, got {self.count}")
        mean, m2 = _as_scalar(self.mean, "mean"), _as_scalar(self.m2, "m2")
        if type(mean) is not type(m2):
            raise DtypeMismatchError(
                f"mean has dtype {np.dtype(type(mean))} but m2 has {np.dtype(type(m2))}; "
                "a state accumulates in one dtype"
            )
        check_finite(np.array([mean, m2]), "(mean, m2)")
        _check_count_fits(self.count, np.dtype(type(mean)), "count: the state holds")
        if m2 < 0:
            raise InvalidMomentStateError(f"m2 is a sum of squares and must be >= 0, got {m2}")
        if self.count == 0 and (mean != 0 or m2 != 0):
            raise InvalidMomentStateError(
                f"an empty state (count 0) must have mean 0 and m2 0, got mean {mean}, m2 {m2}"
            )
        if self.count == 1 and m2 != 0:
            raise InvalidMomentStateError(
                f"a state of one value (count 1) has m2 = 0 (the value is its own mean), "
                f"got m2 {m2}"
            )
        object.__setattr__(self, "count", int(self.count))
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "m2", m2)

    @classmethod
    def empty(cls, dtype=np.float64) -> MomentState:
        """The empty state in ``dtype``: the identity of :func:`merge_moments`.

        Examples
        --------
        >>> MomentState.empty(np.float32)
        MomentState(count=0, mean=np.float32(0.0), m2=np.float32(0.0))
        """
        scalar = _floating_dtype(dtype).type
        return cls(count=0, mean=scalar(0), m2=scalar(0))

    @property
    def dtype(self) -> np.dtype:
        """The accumulation dtype of ``mean`` and ``m2``."""
        return np.dtype(type(self.mean))

    @property
    def population_variance(self) -> np.floating:
        """``m2 / count`` (denominator n), in the state's dtype.

        Raises
        ------
        InsufficientCountError
            If ``count == 0``.
        """
        if self.count == 0:
            raise InsufficientCountError(
                "population variance of an empty state is undefined (count 0); "
                "at least 1 value is needed"
            )
        return self.m2 / self.dtype.type(self.count)

    @property
    def sample_variance(self) -> np.floating:
        """``m2 / (count - 1)`` (denominator n - 1, unbiased), in the state's dtype.

        Raises
        ------
        InsufficientCountError
            If ``count < 2``: one value says nothing about spread with this denominator.
        """
        if self.count < 2:
            raise InsufficientCountError(
                f"sample variance needs count >= 2 (denominator count - 1), got count "
                f"{self.count}; use population_variance for a single value"
            )
        return self.m2 / self.dtype.type(self.count - 1)
