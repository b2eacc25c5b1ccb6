"""Tests of trainable_harness.moments.streaming: moments at array speed."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from moment_reference import PROPERTY_SETTINGS, UNIT_ROUNDOFF

from trainable_harness import (
    EmptyInputError,
    MomentOverflowError,
    NonFiniteInputError,
    ShapeError,
    UnsupportedDtypeError,
    stable_online_moments,
    streaming_moments,
)


def exact_m2_and_mean(values):
    """Exact ``m2`` and mean of float64 values in integer arithmetic (fast for 1e5 values).

    Every float64 is ``k 2**e`` with an integer ``k``, so sums of the values and of their
    squares are exact integers times a power of two, and ``m2 = sum x**2 - (sum x)**2/n``.
    """
    mantissas, exponents = np.frexp(np.asarray(values, dtype=np.float64))
    integers = (mantissas * 2.0**53).astype(np.int64).tolist()
    shifts = (exponents.astype(np.int64) - 53).tolist()
    lowest = min(shifts)
    scaled = [k << (s - lowest) for k, s in zip(integers, shifts, strict=True)]
    n, total = len(scaled), sum(scaled)
    unit = Fraction(2) ** lowest
    m2 = Fraction(n * sum(k * k for k in scaled) - total * total, n) * unit**2
    return m2, Fraction(total, n) * unit


def ill_conditioned(seed, n=10_000):
    """Offset 1e8, spread 1: condition number sqrt(1 + mean^2/variance) ~ 1e8."""
    return 1e8 + np.random.default_rng(seed).normal(0.0, 1.0, size=n)


def relative_error(value, exact):
    return float(abs(Fraction(float(value)) - exact) / exact)


@pytest.mark.parametrize("seed", range(10))
def test_streaming_m2_is_correctly_rounded_on_ill_conditioned_data(seed):
    # Within a chunk the deviations x - m are exact (x and m within a factor 2), the sum
    # of the high parts of their squares is exact, and the low parts (2**-18 of it) add an
    # error near 2**-18 * 15 u; fsum rounds the total once. So m2 is within u (1 + 2**-10)
    # of the exact value: correctly rounded but for ties. numpy.var's m2 is not (its mean's
    # error alone adds n (m - mean)^2, about one u here).
    values = ill_conditioned(seed)
    exact_m2, exact_mean = exact_m2_and_mean(values)
    for chunks in (values, np.array_split(values, 10), np.array_split(values, 997)):
        state = streaming_moments(chunks)
        assert state.count == values.size
        assert relative_error(state.m2, exact_m2) <= UNIT_ROUNDOFF * (1 + 2**-10)
        # The mean: shift (the first chunk's m) plus a small mean about it, one rounding.
        assert abs(Fraction(float(state.mean)) - exact_mean) <= 2 * UNIT_ROUNDOFF * exact_mean


def test_streaming_error_is_no_larger_than_numpy_var_over_seeds():
    # Population variances of 20 draws of 1e4 ill-conditioned values, against exact
    # arithmetic. Both round m2/n once more; the comparison is over seeds, not one draw.
    streaming, numpy_var = [], []
    for seed in range(20):
        values = ill_conditioned(seed)
        exact = exact_m2_and_mean(values)[0] / values.size
        streaming.append(relative_error(streaming_moments(values).population_variance, exact))
        numpy_var.append(relative_error(np.var(values), exact))
    assert np.median(streaming) <= np.median(numpy_var)
    assert max(streaming) <= max(numpy_var)
    # Two roundings (m2, then m2/n) bound every draw.
    assert max(streaming) <= 2 * UNIT_ROUNDOFF * (1 + 2**-10)


@pytest.mark.parametrize("scale", [2e-150, 1e-100, 1e-5, 1.0, 1e100, 1e150])
def test_streaming_is_accurate_at_every_scale(scale):
    # Well-conditioned data of any magnitude whose m2 is a normal float64 (2000 values of
    # spread 1e150 give 2e303): deviations from a rough mean are rounded (relative u each,
    # so 2u on each square), the squares are split and summed exactly (scaled by a power
    # of two where they would leave the range), and m2 is rounded once: within 3u.
    values = scale * np.random.default_rng(7).normal(0.0, 1.0, size=2000)
    exact_m2, exact_mean = exact_m2_and_mean(values)
    state = streaming_moments(np.array_split(values, 3))
    assert relative_error(state.m2, exact_m2) <= 3 * UNIT_ROUNDOFF
    # Mean: the rounding of the rough mean's first-pass sum (n u |x| at worst) is corrected
    # by S1/n up to a few u of the spread.
    assert abs(Fraction(float(state.mean)) - exact_mean) <= 8 * UNIT_ROUNDOFF * scale


def test_streaming_moments_of_values_beyond_the_square_range():
    # The squares of 1e200 overflow float64 and those of 1e-200 vanish; m2 is scaled first.
    huge = streaming_moments(np.array([-1e150, 1e150, 3e150]))
    assert float(huge.m2) == pytest.approx(8e300, rel=4 * UNIT_ROUNDOFF)
    tiny = streaming_moments(np.array([1e-160, 2e-160, 3e-160, 4e-160]))
    assert float(tiny.m2) == pytest.approx(5e-320, rel=0.01)  # a subnormal: few digits
    with pytest.raises(MomentOverflowError, match="m2"):
        streaming_moments(np.array([-1e200, 1e200]))


chunk_sizes = st.lists(st.integers(0, 40), min_size=1, max_size=12)


@PROPERTY_SETTINGS
@given(sizes=chunk_sizes, seed=st.integers(0, 2**32 - 1), offset=st.sampled_from([0.0, 1e8]))
def test_any_chunking_gives_the_same_moments(sizes, seed, offset):
    values = offset + np.random.default_rng(seed).normal(0.0, 1.0, size=sum(sizes))
    assume(values.size >= 2)
    chunks = np.split(values, np.cumsum(sizes)[:-1])
    whole, chunked = streaming_moments(values), streaming_moments(chunks)
    assert whole.count == chunked.count == values.size
    # Each is within the per-chunk rounding of the exact m2 (3 u, as at every scale) plus
    # the merges' between-chunk terms, whose deltas carry u |mean - shift| each: a total of
    # 3 u m2 + n u^2 max|x - shift|^2 per merge at most, far below 1e-12 m2 here.
    exact_m2, _ = exact_m2_and_mean(values)
    for state in (whole, chunked):
        assert relative_error(state.m2, exact_m2) <= 4 * UNIT_ROUNDOFF
    assert abs(whole.mean - chunked.mean) <= 4 * UNIT_ROUNDOFF * max(abs(offset), 1.0)


def test_streaming_accepts_generators_and_empty_chunks_and_keeps_the_dtype():
    values = np.arange(10.0)
    expected = streaming_moments(values)
    assert streaming_moments(c for c in np.array_split(values, 4)) == expected
    assert streaming_moments([np.array([]), values, np.array([])]) == expected
    narrow = streaming_moments(np.arange(10, dtype=np.float32), dtype=np.float32)
    assert narrow.dtype == np.float32 and float(narrow.m2) == 82.5
    assert streaming_moments([np.arange(3), np.arange(3, 10)]) == expected  # integers


def test_streaming_agrees_with_welford_on_the_running_state_data(running_state_data):
    training_batches, _ = running_state_data
    streamed = streaming_moments(list(training_batches))
    welford = stable_online_moments(training_batches.ravel())
    exact_m2, _ = exact_m2_and_mean(training_batches.ravel())
    assert streamed.count == welford.count == 256
    assert relative_error(streamed.m2, exact_m2) <= UNIT_ROUNDOFF * 3
    assert abs(streamed.m2 - welford.m2) <= 256 * UNIT_ROUNDOFF * welford.m2


def test_streaming_never_writes_into_its_input():
    values = np.random.default_rng(3).normal(size=1000)
    values.flags.writeable = False  # an in-place write raises
    kept = values.copy()
    streaming_moments(values)
    streaming_moments([values[:500], values[500:]])
    np.testing.assert_array_equal(values, kept)


@pytest.mark.parametrize(
    ("chunks", "error", "message"),
    [
        (np.array([]), EmptyInputError, "no values"),
        ([], EmptyInputError, "no values"),
        ([np.array([]), np.zeros(0)], EmptyInputError, "no values"),
        ([np.array([1.0, np.nan])], NonFiniteInputError, r"chunk 0 .*nan.*\(1,\)"),
        ([np.ones(3), np.array([np.inf])], NonFiniteInputError, r"chunk 1 .*inf"),
        (np.zeros((2, 3)), ShapeError, r"chunk 0 has shape \(2, 3\).*ravel"),
        ([1.0, 2.0], ShapeError, r"chunk 0 has shape \(\).*numpy.asarray"),
        ([np.array([1 + 1j])], UnsupportedDtypeError, "complex"),
        ([np.array(["a"], dtype=object)], UnsupportedDtypeError, "object"),
        ([np.array([True])], UnsupportedDtypeError, "bool"),
    ],
)
def test_streaming_bad_input_gets_specific_errors(chunks, error, message):
    with pytest.raises(error, match=message):
        streaming_moments(chunks)


def test_streaming_refuses_non_iterables_and_bad_dtypes():
    with pytest.raises(TypeError, match="iterable"):
        streaming_moments(5)
    with pytest.raises(UnsupportedDtypeError, match="not a real floating type"):
        streaming_moments(np.ones(3), dtype=np.int64)
    with pytest.raises(NonFiniteInputError, match="converted to float32"):
        streaming_moments(np.array([1.0, 1e300]), dtype=np.float32)


def test_streaming_float16_chunks_merge_without_a_spurious_overflow():
    # Chunk means 5 apart merged over thousands of values: delta**2 n_a n_b overflows
    # float16 while m2 (about 3e4) does not. It used to be refused as "m2 (about inf)".
    rng = np.random.default_rng(4753)
    values = (rng.normal(size=4000) - 96.0).astype(np.float16)
    values[:2000] += np.float16(5.0)
    exact_m2, exact_mean = exact_m2_and_mean(values.astype(np.float64))
    state = streaming_moments(np.array_split(values, 38), dtype=np.float16)
    assert state.count == 4000 and state.dtype == np.float16
    # float16 keeps 11 bits: the chunk means and merge terms carry ~2**-11 each.
    assert relative_error(state.m2, exact_m2) <= 1e-2
    assert abs(float(state.mean) - float(exact_mean)) <= 0.25


def test_streaming_m2_beyond_float64_is_a_moment_overflow_not_an_overflow_error():
    # Each chunk's m2 (about 1e308) fits, their sum does not: math.fsum's OverflowError
    # used to escape.
    with pytest.raises(MomentOverflowError, match="beyond the largest float64"):
        streaming_moments([np.array([0.7e154, -0.7e154])] * 3)
    with pytest.raises(MomentOverflowError, match="chunk 1: its mean and the mean"):
        streaming_moments([np.array([-1.2e154]), np.array([1.2e154])])


def test_streaming_refuses_a_dtype_wider_than_its_float64_parts():
    # 2.0 ** (maxexp / 2) raised Python's OverflowError for longdouble.
    with pytest.raises(UnsupportedDtypeError, match="cannot accumulate in the wider"):
        streaming_moments(np.array([1.0, 2.0, 3.0]), dtype=np.longdouble)
    state = stable_online_moments([1, 2, 3], dtype=np.longdouble)  # Welford's loop can
    assert state.dtype == np.longdouble and state.m2 == 2
