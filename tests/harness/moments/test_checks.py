"""trainable_harness.moments.checks: the moments' argument checks name what they refuse."""

import numpy as np
import pytest

from trainable_harness.errors import (
    CountOverflowError,
    EmptyInputError,
    NonFiniteInputError,
    ShapeError,
    UnsupportedDtypeError,
)
from trainable_harness.moments.checks import (
    _as_scalar,
    _check_count_fits,
    _floating_dtype,
    _largest_count,
    _values_in_dtype,
)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, "float32"])
def test_floating_dtypes_are_accepted_as_numpy_dtypes(dtype):
    assert _floating_dtype(dtype) == np.dtype(dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.complex128, bool, "U3"])
def test_other_dtypes_are_refused_naming_the_dtype(dtype):
    with pytest.raises(UnsupportedDtypeError, match=f"accumulation dtype {np.dtype(dtype)} "):
        _floating_dtype(dtype)


def test_the_largest_count_is_the_dtypes_largest_value():
    assert _largest_count(np.dtype(np.float16)) == 65504.0
    assert _largest_count(np.dtype(np.float64)) == np.finfo(np.float64).max


def test_a_count_beyond_float16_is_refused_and_one_within_is_not():
    _check_count_fits(65504, np.dtype(np.float16), "merging")
    with pytest.raises(CountOverflowError, match=r"merging 65505 values, more than the largest"):
        _check_count_fits(65505, np.dtype(np.float16), "merging")


def test_scalars_keep_numpy_floats_and_promote_python_numbers_to_float64():
    half = np.float16(0.5)
    assert _as_scalar(half, "mean") is half
    assert type(_as_scalar(3, "mean")) is np.float64
    assert type(_as_scalar(np.int32(3), "mean")) is np.float64
    assert _as_scalar(2.5, "m2") == np.float64(2.5)


@pytest.mark.parametrize("value", [True, "1.0", None, 1j, [1.0]])
def test_non_numbers_and_booleans_are_refused_naming_the_parameter(value):
    with pytest.raises(UnsupportedDtypeError, match=r"^mean must be a real number"):
        _as_scalar(value, "mean")


def test_an_integer_beyond_float64_is_refused_naming_the_parameter():
    with pytest.raises(NonFiniteInputError, match=r"^m2 = 1\d+ is beyond float64's range"):
        _as_scalar(10**400, "m2")


def test_values_are_converted_without_changing_the_input():
    values = np.array([1, 2, 3], dtype=np.int64)
    converted = _values_in_dtype(values, np.dtype(np.float32))
    assert converted.dtype == np.float32 and converted.tolist() == [1.0, 2.0, 3.0]
    assert values.dtype == np.int64 and values.tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        (np.array(["a"]), UnsupportedDtypeError, "^values has dtype <U1; a real"),
        (np.ones((2, 2)), ShapeError, r"values have shape \(2, 2\); a 1-D array"),
        (np.ones(0), EmptyInputError, r"^values is empty \(shape \(0,\)\)"),
        (np.array([1.0, np.nan]), NonFiniteInputError, r"^values holds nan at index \(1,\)"),
    ],
)
def test_bad_values_are_refused_naming_what_is_wrong(values, error, message):
    with pytest.raises(error, match=message):
        _values_in_dtype(values, np.dtype(np.float64))


def test_finite_values_that_overflow_the_dtype_are_refused_without_a_warning():
    with np.errstate(all="raise"):  # numpy's overflow warning would raise here
        with pytest.raises(NonFiniteInputError, match=r"^values converted to float16 holds inf"):
            _values_in_dtype(np.array([1.0, 1e6]), np.dtype(np.float16))
