"""Tests of trainable_harness.moments.state: the fields, variances and counts of a state."""

import numpy as np
import pytest

from trainable_harness import (
    CountOverflowError,
    DtypeMismatchError,
    InsufficientCountError,
    InvalidMomentStateError,
    MomentState,
    NonFiniteInputError,
    UnsupportedDtypeError,
    merge_moments,
    stable_online_moments,
    streaming_moments,
)


def test_variances_use_their_named_denominators():
    state = MomentState(count=5, mean=np.float64(1.0), m2=np.float64(10.0))
    assert state.population_variance == 2.0
    assert state.sample_variance == 2.5


def test_state_is_immutable():
    state = stable_online_moments([1.0, 2.0])
    with pytest.raises(AttributeError):
        state.mean = 0.0


def test_state_knows_its_dtype_and_python_numbers_mean_float64():
    assert stable_online_moments([1.0, 2.0], dtype=np.float32).dtype == np.float32
    assert MomentState(count=2, mean=1.5, m2=0.5).dtype == np.float64
    assert MomentState.empty(np.float32).dtype == np.float32


def test_sample_variance_of_fewer_than_two_values_is_refused():
    with pytest.raises(InsufficientCountError, match=r"count >= 2.*got count 1"):
        _ = stable_online_moments([3.0]).sample_variance
    with pytest.raises(InsufficientCountError, match="count 0"):
        _ = MomentState.empty().population_variance
    assert stable_online_moments([3.0]).population_variance == 0.0


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"count": -1, "mean": 0.0, "m2": 0.0}, InvalidMomentStateError, "count must be >= 0"),
        ({"count": 2, "mean": 0.0, "m2": -1.0}, InvalidMomentStateError, "m2 .* >= 0"),
        ({"count": 0, "mean": 1.0, "m2": 0.0}, InvalidMomentStateError, "empty state"),
        ({"count": 2.0, "mean": 1.0, "m2": 0.0}, InvalidMomentStateError, "integer"),
        ({"count": 2, "mean": np.nan, "m2": 0.0}, NonFiniteInputError, "index"),
        (
            {"count": 2, "mean": np.float32(1), "m2": np.float64(0)},
            DtypeMismatchError,
            "float32.*float64",
        ),
    ],
)
def test_impossible_states_are_refused(fields, error, message):
    with pytest.raises(error, match=message):
        MomentState(**fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"count": 1, "mean": 1.0, "m2": 5.0}, "one value.*m2 = 0"),
        ({"count": True, "mean": 1.0, "m2": 0.0}, "integer"),
        ({"count": 2, "mean": True, "m2": 0.0}, "real number"),
    ],
)
def test_one_value_states_and_bool_fields_are_refused(fields, message):
    with pytest.raises((InvalidMomentStateError, UnsupportedDtypeError), match=message):
        MomentState(**fields)


FLOAT16_COUNT_LIMIT = 65504  # float16's largest finite value: a count beyond it is inf


def test_float16_states_refuse_counts_beyond_65504_instead_of_dividing_by_inf():
    # Welford's mean + delta / n with n = inf in float16 stops moving: 70 000 values of
    # 0.5 then 0.25 gave mean 0.5 and m2 0 instead of failing.
    values = np.concatenate([np.full(40_000, 0.5), np.full(30_000, 0.25)])
    with pytest.raises(CountOverflowError, match=r"values has 70000 values.*float16 \(65504\)"):
        stable_online_moments(values, dtype=np.float16)
    with pytest.raises(CountOverflowError, match="chunk 0 holds 70000 values"):
        streaming_moments(values, dtype=np.float16)
    with pytest.raises(CountOverflowError, match="chunks 0 to 1 hold 70000 values"):
        streaming_moments([values[:40_000], values[40_000:]], dtype=np.float16)
    with pytest.raises(CountOverflowError, match="the state holds 70000 values"):
        MomentState(count=70_000, mean=np.float16(0.4), m2=np.float16(100.0))
    left = stable_online_moments(values[:40_000], dtype=np.float16)
    right = stable_online_moments(values[40_000:], dtype=np.float16)
    with pytest.raises(CountOverflowError, match=r"count 40000 \+ 30000.*70000 values"):
        merge_moments(left, right)
    # The error is an InvalidMomentStateError, and the largest count itself is accepted.
    assert issubclass(CountOverflowError, InvalidMomentStateError)
    full = stable_online_moments(np.full(FLOAT16_COUNT_LIMIT, 0.5), dtype=np.float16)
    assert (full.count, float(full.mean), float(full.m2)) == (FLOAT16_COUNT_LIMIT, 0.5, 0.0)
