"""Centered moment states: Welford's update, the pairwise merge, and a cancellation witness.

Chapter 15 reuses the streaming centered statistics of chapter 2 in two places: section
15.2 (raw moments cancel catastrophically, centered ones do not) and section 15.3 (the
running state of batch-coordinate normalization is a merge of per-batch states).

A state holds ``count`` (n), ``mean`` and ``m2 = sum_i (x_i - mean)^2``; the variance
estimators divide ``m2`` by an explicit denominator: ``population_variance = m2 / n``,
``sample_variance = m2 / (n - 1)``. The state remembers its accumulation dtype (the
numpy scalar type of ``mean`` and ``m2``), and states of different dtypes never mix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainable_harness.errors import (
    DtypeMismatchError,
    InsufficientCountError,
    InvalidMomentStateError,
    ShapeError,
    UnsupportedDtypeError,
    check_finite,
    check_nonempty,
)

__all__ = [
    "MomentState",
    "merge_moments",
    "raw_and_centered_variance",
    "stable_online_moments",
]


def _floating_dtype(dtype) -> np.dtype:
    """Return ``np.dtype(dtype)`` if it is a real floating type, else raise."""
    resolved = np.dtype(dtype)
    if resolved.kind != "f":
        raise UnsupportedDtypeError(
            f"accumulation dtype {resolved} is not a real floating type; use e.g. "
            "np.float64 or np.float32"
        )
    return resolved


def _as_scalar(value, name: str) -> np.floating:
    """Keep numpy floating scalars as they are; promote Python numbers to float64."""
    if isinstance(value, np.floating):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer):
        raise UnsupportedDtypeError(
            f"{name} must be a real number or numpy floating scalar, got {type(value).__name__}"
        )
    return np.float64(value)


def _values_in_dtype(values, dtype: np.dtype) -> np.ndarray:
    """Return ``values`` as a finite, non-empty 1-D array converted to ``dtype``."""
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        raise UnsupportedDtypeError(
            f"values have dtype {array.dtype}; real floating or integer values are expected"
        )
    if array.ndim != 1:
        raise ShapeError(
            f"values have shape {array.shape}; a 1-D array of shape (n,) is expected "
            "(use .ravel() to pool a batch)"
        )
    check_nonempty(array, "values")
    check_finite(array, "values")
    # Conversion to a narrow dtype can overflow finite values to inf; that is reported
    # as an error just below, so numpy's warning would only repeat it.
    with np.errstate(over="ignore"):
        converted = array.astype(dtype)
    check_finite(converted, f"values converted to {dtype}")
    return converted


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
        If ``count`` is not a non-negative integer, if ``m2 < 0``, or if an empty state
        has a nonzero ``mean`` or ``m2``.
    DtypeMismatchError
        If ``mean`` and ``m2`` have different dtypes.
    NonFiniteInputError
        If ``mean`` or ``m2`` is NaN/inf.

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
        if m2 < 0:
            raise InvalidMomentStateError(f"m2 is a sum of squares and must be >= 0, got {m2}")
        if self.count == 0 and (mean != 0 or m2 != 0):
            raise InvalidMomentStateError(
                f"an empty state (count 0) must have mean 0 and m2 0, got mean {mean}, m2 {m2}"
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
        If a value is NaN/inf, or overflows when converted to ``dtype``.
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
    count, mean, m2 = 0, scalar(0), scalar(0)
    for value in _values_in_dtype(values, dtype):
        count += 1
        delta = value - mean
        mean = mean + delta / scalar(count)
        m2 = m2 + delta * (value - mean)
    return MomentState(count=count, mean=mean, m2=m2)


def merge_moments(a: MomentState, b: MomentState) -> MomentState:
    """Pairwise merge of two centered states (Chan, Golub and LeVeque).

    With ``n = n_a + n_b`` and ``delta = mean_b - mean_a``, all in the states' dtype::

        mean = mean_a + delta * n_b / n
        m2   = m2_a + m2_b + delta**2 * n_a * n_b / n

    The correction term ``delta**2 n_a n_b / n`` is non-negative: it is the spread
    between the two groups' means. An empty state is the identity (returned unchanged).

    Parameters
    ----------
    a, b : MomentState
        States accumulated in the same dtype.

    Returns
    -------
    MomentState
        The state of the concatenated streams.

    Raises
    ------
    DtypeMismatchError
        If ``a.dtype != b.dtype``: convert one of them explicitly first.
    TypeError
        If an argument is not a :class:`MomentState`.

    Examples
    --------
    >>> left = stable_online_moments([1.0, 2.0])
    >>> right = stable_online_moments([3.0, 4.0, 5.0])
    >>> merged = merge_moments(left, right)
    >>> merged.count, float(merged.mean), float(merged.m2)
    (5, 3.0, 10.0)
    >>> merge_moments(MomentState.empty(), right) == right
    True
    """
    for name, state in (("a", a), ("b", b)):
        if not isinstance(state, MomentState):
            raise TypeError(f"{name} must be a MomentState, got {type(state).__name__}")
    if a.dtype != b.dtype:
        raise DtypeMismatchError(
            f"cannot merge a state accumulated in {a.dtype} with one in {b.dtype}; "
            "recompute one of them in the other's dtype"
        )
    if a.count == 0:
        return b
    if b.count == 0:
        return a
    scalar = a.dtype.type
    count = a.count + b.count
    delta = b.mean - a.mean
    mean = a.mean + delta * scalar(b.count) / scalar(count)
    m2 = a.m2 + b.m2 + delta**2 * scalar(a.count) * scalar(b.count) / scalar(count)
    return MomentState(count=count, mean=mean, m2=m2)


def raw_and_centered_variance(values, dtype=np.float32) -> tuple[float, float]:
    """The cancellation witness of section 15.2: raw-moment vs centered variance.

    Both are population variances (denominator n), computed entirely in ``dtype``:

    - raw: ``mean(x**2) - mean(x)**2``, which subtracts two nearly equal large numbers
      when ``|mean| >> std`` and can lose every significant digit;
    - centered: ``mean((x - mean(x))**2)``, which subtracts before squaring.

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
