"""Error classes of the harness, and the input checks that raise them.

Every error is a :class:`ValueError` subclass (through :class:`TrainableError`), so
callers that already catch ``ValueError`` keep working, while tests and chapters can
catch the precise failure. Messages say what was wrong, where, and what is expected.

Every error class of the harness is defined here: the shared ones first, then those of
one module in a section named for it (``# --- small_batch/: ...``), which that module
imports (so ``from trainable_harness.small_batch import SmallBatchError`` works too). A new
one goes in its module's section and subclasses :class:`TrainableError`.

Examples
--------
>>> from trainable_harness.errors import NegativeEpsilonError, TrainableError
>>> issubclass(NegativeEpsilonError, TrainableError) and issubclass(TrainableError, ValueError)
True
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "DegenerateNormalizationError",
    "DtypeMismatchError",
    "EmptyInputError",
    "InsufficientCountError",
    "InvalidMomentStateError",
    "NegativeEpsilonError",
    "NonFiniteInputError",
    "SeedError",
    "ShapeError",
    "TrainableError",
    "UnsupportedDtypeError",
    "check_eps",
    "check_finite",
    "check_integer",
    "check_nonempty",
    "check_real",
    "check_real_array",
    "check_seed",
    "first_nonfinite",
]


class TrainableError(ValueError):
    """Base class of every error the harness raises on bad input."""


class DegenerateNormalizationError(TrainableError):
    """The normalizing statistic is zero (constant vector for centering, zero vector for RMS)."""


class NonFiniteInputError(TrainableError):
    """An input holds NaN or +-inf."""


class EmptyInputError(TrainableError):
    """An input has no values along the axis the statistic is taken over."""


class ShapeError(TrainableError):
    """An input has a shape the function does not accept."""


class NegativeEpsilonError(TrainableError):
    """``eps`` is negative (it must be a finite number >= 0)."""


class DtypeMismatchError(TrainableError):
    """Two moment states accumulated in different dtypes were combined."""


class UnsupportedDtypeError(TrainableError):
    """An input or accumulation dtype is not a real floating or integer type."""


class InsufficientCountError(TrainableError):
    """A moment state holds too few values for the requested estimator."""


class InvalidMomentStateError(TrainableError):
    """A moment state was built with impossible fields (negative count or m2, ...)."""


class SeedError(TrainableError):
    """A random seed that is not a non-negative integer."""


# ---------------------------------------------------------------------------
# Checks shared by the harness modules. Each raises one of the errors above.
# ---------------------------------------------------------------------------


def check_eps(eps: float) -> float:
    """Return ``eps`` as a float after checking that it is finite and >= 0.

    Raises
    ------
    NonFiniteInputError
        If ``eps`` is NaN or infinite.
    NegativeEpsilonError
        If ``eps < 0``.

    Examples
    --------
    >>> check_eps(1e-5)
    1e-05
    >>> check_eps(-1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trainable_harness.errors.NegativeEpsilonError: eps must be >= 0, got -1.0; ...
    """
    try:
        eps = float(eps)
    except OverflowError:  # an int beyond float64's range
        eps = math.inf
    if not math.isfinite(eps):
        raise NonFiniteInputError(f"eps must be a finite number >= 0, got {eps}")
    if eps < 0:
        raise NegativeEpsilonError(
            f"eps must be >= 0, got {eps}; it is added to a variance, so a negative value "
            "could make the denominator zero or imaginary"
        )
    return eps


def first_nonfinite(values: np.ndarray) -> tuple[int, ...] | None:
    """The index of the first entry of ``values`` (C order) that is NaN or +-inf, or None.

    Examples
    --------
    >>> first_nonfinite(np.array([[1.0, 2.0], [np.inf, np.nan]]))
    (1, 0)
    >>> first_nonfinite(np.array([1.0])) is None
    True
    """
    finite = np.isfinite(values)
    if finite.all():
        return None
    return tuple(int(i) for i in np.argwhere(~finite)[0])


def check_finite(x: np.ndarray, name: str = "x") -> None:
    """Raise :class:`NonFiniteInputError` naming the first NaN/inf index of ``x``.

    Examples
    --------
    >>> check_finite(np.array([1.0, np.nan]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trainable_harness.errors.NonFiniteInputError: x holds nan at index (1,); ...
    """
    index = first_nonfinite(x)
    if index is not None:
        raise NonFiniteInputError(
            f"{name} holds {x[index]} at index {index}; all values must be finite (no NaN or inf)"
        )


def check_nonempty(x: np.ndarray, name: str = "x") -> None:
    """Raise :class:`EmptyInputError` if ``x`` has no values (or an empty last axis).

    Examples
    --------
    >>> check_nonempty(np.zeros((3, 0)))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trainable_harness.errors.EmptyInputError: x is empty (shape (3, 0)); ...
    """
    if x.size == 0:
        raise EmptyInputError(
            f"{name} is empty (shape {x.shape}); at least one value along the last axis is needed"
        )


def check_integer(value, name: str, *, minimum: int, error: type[TrainableError]) -> int:
    """Return ``value`` as an int if it is a whole number ``>= minimum``, else raise ``error``.

    Python and numpy integers pass, and so do floats with an integer value (``256.0``), as
    the experiments' settings always have; a bool, a string, NaN, inf or a fraction is
    refused with a message naming ``name``.

    Examples
    --------
    >>> check_integer(8.0, "batch", minimum=1, error=ShapeError)
    8
    >>> check_integer(float("nan"), "batch", minimum=1, error=ShapeError)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trainable_harness.errors.ShapeError: batch must be an integer >= 1, got nan (float)
    """
    whole = isinstance(value, int | np.integer) or (
        isinstance(value, float | np.floating) and math.isfinite(value) and value == int(value)
    )
    if isinstance(value, bool | np.bool_) or not whole or value < minimum:
        raise error(
            f"{name} must be an integer >= {minimum}, got {value!r} ({type(value).__name__})"
        )
    return int(value)


def check_real(value, name: str, *, error: type[TrainableError]) -> float:
    """Return ``value`` as a finite Python float if it is a real number, else raise ``error``.

    A 0-d real array counts as its value; a bool, a string, a complex number, a larger
    array or NaN/inf is refused, naming ``name``.

    Examples
    --------
    >>> check_real(np.float32(0.5), "lr", error=TrainableError)
    0.5
    >>> check_real(True, "lr", error=TrainableError)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trainable_harness.errors.TrainableError: lr must be a finite real number, got True (bool)
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(
        value, int | float | np.integer | np.floating
    ):
        raise error(f"{name} must be a finite real number, got {value!r} ({type(value).__name__})")
    try:
        number = float(value)
    except OverflowError:  # an int beyond float64's range
        number = math.inf
    if not math.isfinite(number):
        raise error(f"{name} must be a finite real number, got {value!r}")
    return number


def check_real_array(values, name: str, dtype=np.float64) -> np.ndarray:
    """Return ``values`` as a finite array of the real floating ``dtype``, naming ``name``.

    With ``dtype=None`` a floating array keeps its own dtype and an integer one becomes
    float64 (for code that computes in its caller's precision).

    The dtype contract of the harness: integers are promoted, floats converted, and bool,
    complex, object and text arrays refused (:class:`UnsupportedDtypeError`); a NaN or inf,
    in ``values`` or produced by the conversion to a narrower ``dtype``, raises
    :class:`NonFiniteInputError`. An array already of ``dtype`` is returned itself, not a
    copy: callers read it and never write into it.

    Examples
    --------
    >>> check_real_array([1, 2], "x")
    array([1., 2.])
    >>> check_real_array(np.ones(1, np.float32), "x", None).dtype
    dtype('float32')
    >>> check_real_array([True], "x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trainable_harness.errors.UnsupportedDtypeError: x has dtype bool; a real floating or ...
    """
    if dtype is None:
        values = np.asarray(values)
        dtype = values.dtype if values.dtype.kind == "f" else np.float64
    try:
        dtype = np.dtype(dtype)
    except TypeError:  # numpy's "data type 'x' not understood" would not name the argument
        raise UnsupportedDtypeError(
            f"dtype must be a real floating type, got {dtype!r} ({type(dtype).__name__})"
        ) from None
    if dtype.kind != "f":
        raise UnsupportedDtypeError(f"dtype must be a real floating type, got {dtype}")
    array = np.asarray(values)
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


def check_seed(seed, name: str = "seed") -> int:
    """Return ``seed`` as an int if it is a non-negative integer (the seeds of the book).

    ``numpy.random.default_rng`` refuses a negative seed with its own ``ValueError`` and a
    float with a ``TypeError``; this names the parameter instead.

    Examples
    --------
    >>> check_seed(np.int64(7))
    7
    """
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer) or seed < 0:
        raise SeedError(f"{name} must be an integer >= 0, got {seed!r} ({type(seed).__name__})")
    return int(seed)


# --- layers/: batch/layer/instance/group norm, running state, folding ---------------------

__all__ += [
    "AffineShapeError",
    "IndivisibleGroupsError",
    "MomentumRangeError",
    "RunningStateShapeError",
    "SingleValuePerChannelError",
    "UnknownChoiceError",
    "UnsupportedRankError",
    "WeightShapeError",
]


class UnsupportedRankError(ShapeError):
    """A batch has a rank the normalization layer does not accept (e.g. 3-D instance norm)."""


class AffineShapeError(ShapeError):
    """``gamma`` or ``beta`` does not have one value per channel of the batch."""


class IndivisibleGroupsError(ShapeError):
    """Group norm's ``num_groups`` is not a positive divisor of the channel count."""


class RunningStateShapeError(ShapeError):
    """A batch-norm running state is malformed or has a different channel count than the batch."""


class WeightShapeError(ShapeError):
    """A linear or convolution weight, bias or input has shapes that do not fit together."""


class MomentumRangeError(TrainableError):
    """A running-statistics momentum lies outside [0, 1]."""


class SingleValuePerChannelError(InsufficientCountError):
    """A sample variance was requested for a batch with one value per channel."""


class UnknownChoiceError(TrainableError):
    """A string option (normalization kind, variance estimator) is not one of the choices."""


# --- moments/, normalization.py, layers/: counts, moments beyond range --------------------

__all__ += [
    "CountError",
    "CountOverflowError",
    "MomentOverflowError",
    "ResultOverflowError",
]


class ResultOverflowError(NonFiniteInputError):
    """A result's exact value lies beyond the largest finite value of its dtype.

    Raised instead of returning ``inf``; the message names the parameters to rescale.
    """


class MomentOverflowError(ResultOverflowError):
    """A sum of squared deviations exceeds the largest value of the accumulation dtype."""


class CountOverflowError(InvalidMomentStateError):
    """A moment state's count exceeds the largest value of its accumulation dtype.

    The state divides by its count in that dtype; float16's largest value is 65504.
    """


class CountError(ShapeError):
    """A count or size (a shape entry, a group count, ...) is not a non-negative integer."""


# --- geometry.py: scale-invariant geometry and gradient descent ---------------------------

__all__ += ["LearningRateError"]


class LearningRateError(TrainableError):
    """A learning rate or weight decay that is not a finite number in its allowed range."""


# --- mlp/: the MLP experiment -------------------------------------------------------------

__all__ += ["MLPError"]


class MLPError(TrainableError):
    """A setting of the MLP experiment that cannot run (names the parameter)."""


# --- small_batch/: the small-batch experiments --------------------------------------------

__all__ += ["SmallBatchError"]


class SmallBatchError(TrainableError):
    """A setting of the small-batch experiment that cannot run (names the parameter)."""


# --- precision.py: floating formats and cancellation --------------------------------------

__all__ += ["PrecisionSettingError", "UnknownFormatError"]


class UnknownFormatError(TrainableError):
    """A floating format name outside ``FORMATS``."""


class PrecisionSettingError(TrainableError):
    """An offset, exponent or table of the cancellation matrix that cannot be used (named)."""


# --- estimator_shift.py: the estimator-shift experiment -----------------------------------

__all__ += ["EstimatorSettingError"]


class EstimatorSettingError(TrainableError):
    """A batch count or size that cannot form the states (names the parameter)."""


# --- running_drift.py: the drift of running statistics ------------------------------------

__all__ += ["DriftSettingError"]


class DriftSettingError(TrainableError):
    """A setting of the drift experiment that cannot run (names the parameter)."""


# --- depth.py: gradients of deep batch-normalized networks at initialization --------------

__all__ += ["DepthSettingError"]


class DepthSettingError(TrainableError):
    """A depth, width, batch or variant of the depth experiment that cannot run (named)."""


# --- digits/: the convolutional network on scikit-learn's digits --------------------------

__all__ += ["DigitsError"]


class DigitsError(TrainableError):
    """A setting of the digits experiments that cannot run (names the parameter)."""
