"""The cancellation matrix: raw-moment against centered variance across formats and offsets.

Chapter 15, exercise 2 and its worked solution. The four values
``offset + (-2, -1, 1, 2)`` (variance 2.5 at any offset) are stored in a floating format
and their population variance is computed in that format by the two formulas of
:func:`trainable_harness.moments.raw_and_centered_variance`. Formats: FP16, FP32 and FP64
(numpy's types) and BF16, which numpy lacks and which is emulated here: every value and
every intermediate result is rounded from float32 to the nearest bfloat16 (8 significant
bits, round half to even). One rounding of an exact float32 result is what bfloat16
hardware delivers for ``+``, ``-``, ``*`` and ``/``, because float32 carries more than
``2 * 8 + 2`` significant bits, so the double rounding through float32 is innocuous.

Two failures are told apart:

- *the values collapse*: the stored values no longer have variance near 2.5 (the format
  cannot represent them apart), so no formula can recover it;
- *the raw formula cancels*: the stored values are fine, but ``mean(x^2) - mean(x)^2``
  loses the answer, or overflows.

Examples
--------
>>> float(round_to_bfloat16(np.float32(1.0 + 2.0**-8)))   # a tie rounds to even
1.0
>>> row = cancellation_row("bf16", 100.0)
>>> row["stored_variance"], row["centered"]
(2.5, 2.5)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from trainable_harness.errors import (
    NonFiniteInputError,
    PrecisionSettingError,
    ShapeError,
    UnknownFormatError,
    UnsupportedDtypeError,
    check_integer,
    check_real,
    check_real_array,
)
from trainable_harness.moments import raw_and_centered_variance

__all__ = [
    "FORMATS",
    "LOG10_OFFSETS",
    "bfloat16_raw_and_centered_variance",
    "cancellation_row",
    "cancellation_table",
    "first_failures",
    "round_to_bfloat16",
]

FORMATS = ("fp16", "bf16", "fp32", "fp64")
_NUMPY_TYPES = {"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}
DEVIATIONS = (-2.0, -1.0, 1.0, 2.0)
TRUE_VARIANCE = 2.5
LOG10_OFFSETS = tuple(range(10))  # offsets 1 to 10^9, the default of the exercise
FAILURE = 0.1  # a relative error above 10% counts as failed


def round_to_bfloat16(x) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), returned as float32.

    Infinities and NaN pass through; bfloat16 has float32's exponent range, so only values
    within half a bfloat16 ulp of float32's largest finite value round to inf.

    Parameters
    ----------
    x : array_like of float32 values
        float16 and float32 arrays, and integers or float64 values that float32 holds
        exactly (``1.0``, ``10001``), are accepted.

    Raises
    ------
    UnsupportedDtypeError
        If ``x`` is not real (bool, complex, text), or holds float64 values that float32
        cannot hold exactly: rounding them to float32 first would round twice (the double
        rounding can land on the other side of a tie).

    Examples
    --------
    >>> float(round_to_bfloat16(np.float32(10001.0)))    # spacing 64 near 10^4
    9984.0
    """
    x = _float32_values(x, "x")
    bits = x.view(np.uint32).astype(np.uint64)
    # Add half an ulp of bfloat16 (0x7FFF) plus the lowest kept bit (ties to even), truncate.
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(x), x, out)


def _float32_values(values, name: str) -> np.ndarray:
    """``values`` as float32, refusing non-real values and inexact conversions."""
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        raise UnsupportedDtypeError(
            f"{name} has dtype {array.dtype}; real float32 values are expected"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        converted = array.astype(np.float32)
    same = (converted == array) | (np.isnan(converted) & np.isnan(array))
    if not same.all():
        index = tuple(int(i) for i in np.argwhere(~same)[0])
        raise UnsupportedDtypeError(
            f"{name}{list(index) if index else ''} = {array[index]!r} ({array.dtype}) is not a "
            "float32 value; bfloat16 rounding starts from float32, and converting to float32 "
            "first would round twice. Convert explicitly with .astype(numpy.float32)"
        )
    return converted


def bfloat16_raw_and_centered_variance(values) -> tuple[float, float]:
    """:func:`~trainable_harness.moments.raw_and_centered_variance` in emulated BF16.

    Same formulas, sums taken left to right, every intermediate rounded to bfloat16. As
    for the numpy formats, an intermediate beyond bfloat16's range gives inf (or NaN),
    returned as is: that failure of a formula is what the witness records.

    Parameters
    ----------
    values : array_like, shape (n,)
        n >= 1 finite real values; rounded to float32 and then to bfloat16.

    Raises
    ------
    ShapeError, NonFiniteInputError, UnsupportedDtypeError
        Values that are not a non-empty 1-D array of finite real numbers, or that overflow
        when rounded to bfloat16.

    Examples
    --------
    >>> bfloat16_raw_and_centered_variance([-2, -1, 1, 2])
    (2.5, 2.5)
    """
    b = round_to_bfloat16
    array = check_real_array(values, "values")
    if array.ndim != 1 or array.size == 0:
        raise ShapeError(f"values must have shape (n,) with n >= 1, got {array.shape}")
    with np.errstate(over="ignore"):
        x = b(array.astype(np.float32))
    if not np.isfinite(x).all():
        raise NonFiniteInputError(
            "values overflow when rounded to bfloat16 (beyond about 3.39e38); no bfloat16 "
            "witness can store them"
        )
    n = np.float32(x.shape[0])

    def mean(v):
        total = np.float32(0.0)
        for value in v:
            total = b(total + value)
        return b(total / n)

    with np.errstate(over="ignore", invalid="ignore"):
        m = mean(x)
        raw = b(mean(b(x * x)) - b(m * m))
        centered = mean(b(b(x - m) ** 2))
    return float(raw), float(centered)


def _stored(offset: float, fmt: str) -> np.ndarray:
    values = offset + np.array(DEVIATIONS)
    if fmt == "bf16":
        return round_to_bfloat16(values.astype(np.float32))
    with np.errstate(over="ignore"):
        return values.astype(_NUMPY_TYPES[fmt])


def cancellation_row(fmt: str, offset: float) -> dict:
    """Stored-value variance (exact) and both formulas' results for one format and offset.

    ``stored_variance`` is the population variance of the values *as stored*, computed
    exactly with fractions; inf if a value overflowed the format (the row then records
    that the values collapse, with ``raw`` and ``centered`` NaN). The two formulas run in
    the format as written (:func:`~trainable_harness.moments.raw_and_centered_variance`),
    so an intermediate beyond the format's range gives inf or NaN: that is the failure
    the row records.

    Raises
    ------
    UnknownFormatError
        If ``fmt`` is not one of ``FORMATS``.
    PrecisionSettingError
        If ``offset`` is not a finite real number.

    Examples
    --------
    >>> cancellation_row("fp32", 1e4)
    {'stored_variance': 2.5, 'raw': 0.0, 'centered': 2.5}
    """
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise UnknownFormatError(f"fmt must be one of {FORMATS}, got {fmt!r}")
    offset = check_real(offset, "offset", error=PrecisionSettingError)
    stored = _stored(offset, fmt)
    if not np.all(np.isfinite(stored)):
        return {"stored_variance": float("inf"), "raw": float("nan"), "centered": float("nan")}
    exact = [Fraction(float(v)) for v in stored]
    mean = sum(exact) / len(exact)
    stored_variance = float(sum((v - mean) ** 2 for v in exact) / len(exact))
    if fmt == "bf16":
        raw, centered = bfloat16_raw_and_centered_variance(stored)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            raw, centered = raw_and_centered_variance(stored, dtype=_NUMPY_TYPES[fmt])
    return {"stored_variance": stored_variance, "raw": raw, "centered": centered}


def cancellation_table(log10_offsets, formats=FORMATS) -> dict:
    """``{fmt: {k: cancellation_row(fmt, 10**k)}}`` for every format and exponent ``k``.

    Examples
    --------
    >>> table = cancellation_table([0, 4], formats=("fp32",))
    >>> table["fp32"][4]["raw"], table["fp32"][4]["centered"]
    (0.0, 2.5)

    Raises
    ------
    PrecisionSettingError
        An exponent that is not a whole number with ``10**k`` a finite, nonzero float64
        (``-323 <= k <= 308``); 2.5 used to be truncated to 2.
    UnknownFormatError
        A format outside ``FORMATS``, or ``formats`` given as one string (``"fp32"``
        rather than ``("fp32",)``).
    """
    if isinstance(formats, str):
        # Iterating the string would report its first character as an unknown format.
        raise UnknownFormatError(
            f"formats must be a tuple of names from {FORMATS}, got the string {formats!r}; "
            f"write ({formats!r},)"
        )
    if isinstance(log10_offsets, str) or not hasattr(log10_offsets, "__iter__"):
        raise TypeError(
            "log10_offsets must be a sequence of whole numbers, got "
            f"{type(log10_offsets).__name__}"
        )
    exponents = [
        check_integer(k, "log10_offsets entry", minimum=-323, error=PrecisionSettingError)
        for k in log10_offsets
    ]
    for k in exponents:
        if k > 308:
            raise PrecisionSettingError(
                f"log10_offsets entry {k} is too large: 10**{k} is beyond float64's range "
                "(largest exponent 308)"
            )
    return {fmt: {k: cancellation_row(fmt, 10.0**k) for k in exponents} for fmt in formats}


def _failed(value: float) -> bool:
    return not np.isfinite(value) or abs(value / TRUE_VARIANCE - 1.0) > FAILURE


def first_failures(table: dict) -> dict:
    """Smallest exponent at which each failure first appears, per format (None if never).

    ``values_collapse``: the stored values' variance is off by more than 10% (or a value
    overflowed); ``raw_fails``: the raw formula is off by more than 10% of 2.5 (or is not
    finite); ``centered_fails``: the same for the centered formula.

    Examples
    --------
    >>> first_failures(cancellation_table(range(0, 6), formats=("fp32",)))["fp32"]
    {'values_collapse': None, 'raw_fails': 4, 'centered_fails': None}

    Raises
    ------
    PrecisionSettingError
        If ``table`` is not a :func:`cancellation_table` (a mapping of formats to rows
        with ``stored_variance``, ``raw`` and ``centered``).
    """
    fields = {"stored_variance", "raw", "centered"}
    if not isinstance(table, dict) or not all(
        isinstance(rows, dict)
        and all(isinstance(r, dict) and fields <= set(r) for r in rows.values())
        for rows in table.values()
    ):
        raise PrecisionSettingError(
            "table must be what cancellation_table returns: {fmt: {k: row}} with rows "
            f"holding {sorted(fields)}"
        )
    out = {}
    for fmt, rows in table.items():
        found = {"values_collapse": None, "raw_fails": None, "centered_fails": None}
        for k in sorted(rows):
            row = rows[k]
            checks = {
                "values_collapse": _failed(row["stored_variance"]),
                "raw_fails": _failed(row["raw"]),
                "centered_fails": _failed(row["centered"]),
            }
            for name, failed in checks.items():
                if failed and found[name] is None:
                    found[name] = k
        out[fmt] = found
    return out
