"""Tests of the cancellation matrix (trainable_harness.precision)."""

from fractions import Fraction

import numpy as np
import pytest

from trainable_harness.errors import (
    NonFiniteInputError,
    PrecisionSettingError,
    ShapeError,
    UnsupportedDtypeError,
)
from trainable_harness.precision import (
    UnknownFormatError,
    bfloat16_raw_and_centered_variance,
    cancellation_row,
    cancellation_table,
    first_failures,
    round_to_bfloat16,
)


def naive_bfloat16(value: float) -> float:
    """Reference rounding: nearest multiple of the bfloat16 spacing, ties to even."""
    if value == 0:
        return 0.0
    exponent = int(np.floor(np.log2(abs(value))))
    spacing = Fraction(2) ** (exponent - 7)
    q = Fraction(value) / spacing
    low = q.numerator // q.denominator
    rest = q - low
    n = low + (1 if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and low % 2) else 0)
    return float(n * spacing)


@pytest.mark.parametrize("seed", range(5))
def test_bfloat16_rounding_matches_a_naive_reference(seed):
    rng = np.random.default_rng(seed)
    values = (rng.normal(size=200) * 10.0 ** rng.integers(-5, 6, size=200)).astype(np.float32)
    got = round_to_bfloat16(values)
    expected = [naive_bfloat16(float(v)) for v in values]
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float32))


def test_bfloat16_ties_and_specials():
    assert float(round_to_bfloat16(np.float32(1 + 2**-8))) == 1.0  # tie, even stays
    assert float(round_to_bfloat16(np.float32(1 + 3 * 2**-8))) == 1 + 2**-6  # tie, rounds up
    assert np.isnan(round_to_bfloat16(np.float32("nan")))
    assert np.isinf(round_to_bfloat16(np.float32("inf")))


def test_bfloat16_variance_is_exact_for_small_integers():
    assert bfloat16_raw_and_centered_variance([-2, -1, 1, 2]) == (2.5, 2.5)


def test_rows_and_failures():
    assert cancellation_row("fp64", 1e9)["centered"] == 2.5
    assert cancellation_row("fp16", 1e5)["stored_variance"] == float("inf")
    table = cancellation_table(range(0, 10))
    found = first_failures(table)
    # Each format's raw formula fails no later than its values collapse.
    for fmt, row in found.items():
        if row["values_collapse"] is not None:
            assert row["raw_fails"] <= row["values_collapse"], fmt
            assert row["centered_fails"] == row["values_collapse"], fmt
    with pytest.raises(UnknownFormatError, match="fmt"):
        cancellation_row("fp8", 1.0)


def test_round_to_bfloat16_refuses_float64_values_it_would_round_twice():
    # 1 + 2**-8 + 2**-30 lies above the tie 1 + 2**-8, so bfloat16 rounds it up to
    # 1 + 2**-7; through float32 it became the tie itself and rounded down to 1.
    with pytest.raises(UnsupportedDtypeError, match=r"not a float32 value.*round twice"):
        round_to_bfloat16(np.array([1.0 + 2.0**-8 + 2.0**-30]))
    with pytest.raises(UnsupportedDtypeError, match="not a float32 value"):
        round_to_bfloat16(1e300)  # overflowed float32 with a warning
    with pytest.raises(UnsupportedDtypeError, match="dtype <U1"):
        round_to_bfloat16("a")
    assert float(round_to_bfloat16(1.0 + 2.0**-8)) == 1.0  # float64 holding a float32


def test_bfloat16_witness_refuses_empty_and_non_finite_values():
    with pytest.raises(ShapeError, match=r"shape \(n,\) with n >= 1, got \(0,\)"):
        bfloat16_raw_and_centered_variance([])  # returned (nan, nan)
    with pytest.raises(NonFiniteInputError, match="values holds nan"):
        bfloat16_raw_and_centered_variance([1.0, np.nan])
    with pytest.raises(NonFiniteInputError, match="overflow when rounded to bfloat16"):
        bfloat16_raw_and_centered_variance([1e300, 1.0])


def test_table_settings_that_used_to_raise_from_python_or_be_truncated():
    with pytest.raises(PrecisionSettingError, match="10\\*\\*400 is beyond"):
        cancellation_table([400])  # Python's OverflowError
    with pytest.raises(PrecisionSettingError, match=r"got 2\.5"):
        cancellation_table([2.5], formats=("fp32",))  # truncated to 2
    with pytest.raises(PrecisionSettingError, match="offset must be a finite real number"):
        cancellation_row("fp32", float("nan"))  # a row that claimed the values overflowed
    with pytest.raises(PrecisionSettingError, match="table must be"):
        first_failures({"fp32": [1, 2]})


def test_cancellation_table_refuses_formats_given_as_one_string():
    # Before: the string was iterated and its first character reported: "got 'f'".
    with pytest.raises(UnknownFormatError, match=r"got the string 'fp32'; write \('fp32',\)"):
        cancellation_table([0], formats="fp32")


@pytest.mark.parametrize("offsets", [None, 4, "04"])
def test_cancellation_table_names_offsets_that_are_not_a_sequence(offsets):
    # Before: "'NoneType' object is not iterable" (or a string's characters as exponents).
    with pytest.raises(TypeError, match="log10_offsets must be a sequence"):
        cancellation_table(offsets)
