"""Tests of moment states, Welford's update, the pairwise merge and the cancellation witness."""

from fractions import Fraction
from functools import reduce
from hashlib import sha256

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trainable_harness import (
    CountOverflowError,
    DtypeMismatchError,
    EmptyInputError,
    InsufficientCountError,
    InvalidMomentStateError,
    MomentOverflowError,
    MomentState,
    NonFiniteInputError,
    ShapeError,
    UnsupportedDtypeError,
    merge_moments,
    raw_and_centered_variance,
    stable_online_moments,
    streaming_moments,
)

UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2  # u = 2**-53
PROPERTY_SETTINGS = settings(max_examples=75, deadline=None)


def exact_moments(values):
    """Mean and m2 of float64 values in exact rational arithmetic."""
    exact = [Fraction(float(v)) for v in values]
    mean = sum(exact) / len(exact)
    return mean, sum((v - mean) ** 2 for v in exact)


@pytest.fixture(scope="module")
def running_state_data():
    """The section 15.3 draw: eight training batches and one evaluation batch."""
    rng = np.random.default_rng(int(sha256(b"c15-running-state").hexdigest()[:8], 16))
    training_batches = rng.normal(4, 2, size=(8, 32))
    evaluation_batch = rng.normal(4, 2, size=32)
    return training_batches, evaluation_batch


# --- MomentState ---------------------------------------------------------------------


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


# --- Welford's update ----------------------------------------------------------------


def test_welford_matches_exact_arithmetic_on_ill_conditioned_data():
    # Offset 1e8 with unit spread: condition number kappa = sqrt(sum x^2 / m2) ~ 1e8.
    values = 1e8 + np.random.default_rng(1531).normal(0, 1, size=1000)
    exact_mean, exact_m2 = exact_moments(values)
    n = len(values)
    kappa = float(sum(Fraction(v) ** 2 for v in values) / exact_m2) ** 0.5
    state = stable_online_moments(values)
    m2_error = float(abs(Fraction(float(state.m2)) - exact_m2) / exact_m2)
    mean_error = float(abs(Fraction(float(state.mean)) - exact_mean) / exact_mean)
    # Bounds for the updating algorithm (Chan, Golub and LeVeque 1983): relative error of
    # m2 at most n * kappa * u (~1e-5 here; measured ~1e-10), of the mean at most n * u.
    assert m2_error <= n * kappa * UNIT_ROUNDOFF
    assert mean_error <= n * UNIT_ROUNDOFF
    # The bound discriminates: the raw-moment formula on the same data breaks it.
    raw_m2 = n * (np.mean(values**2) - np.mean(values) ** 2)
    assert float(abs(Fraction(float(raw_m2)) - exact_m2) / exact_m2) > n * kappa * UNIT_ROUNDOFF


def test_welford_accumulates_in_the_requested_dtype():
    state = stable_online_moments(np.arange(5), dtype=np.float32)
    assert type(state.mean) is np.float32 and type(state.m2) is np.float32
    assert (state.count, float(state.mean), float(state.m2)) == (5, 2.0, 10.0)


# --- merge ---------------------------------------------------------------------------


def test_merged_batches_equal_the_direct_pass_on_the_seed_data(running_state_data):
    training_batches, _ = running_state_data
    running = reduce(merge_moments, [stable_online_moments(b) for b in training_batches])
    direct = stable_online_moments(training_batches.ravel())
    assert running.count == direct.count == 256
    assert running.m2 == direct.m2  # bit-equal, as the seed asserts
    assert abs(running.mean - direct.mean) <= 3e-15


@pytest.mark.parametrize("split", [1, 7, 50, 99])
def test_merge_matches_the_direct_pass_at_any_split(split):
    values = 3.0 + np.random.default_rng(split).normal(0, 2, size=100)
    merged = merge_moments(
        stable_online_moments(values[:split]), stable_online_moments(values[split:])
    )
    exact_mean, exact_m2 = exact_moments(values)
    # Both partial states carry rounding of order n * u relative; 1e-13 is ~1e3 u.
    assert merged.count == 100
    assert abs(merged.mean - float(exact_mean)) <= 1e-13 * abs(float(exact_mean))
    assert abs(merged.m2 - float(exact_m2)) <= 1e-13 * float(exact_m2)


def test_empty_state_is_the_identity_of_merge():
    state = stable_online_moments([1.0, 5.0, 6.0])
    assert merge_moments(MomentState.empty(), state) == state
    assert merge_moments(state, MomentState.empty()) == state


def test_merge_of_states_in_different_dtypes_is_refused():
    wide = stable_online_moments([1.0, 2.0], dtype=np.float64)
    narrow = stable_online_moments([1.0, 2.0], dtype=np.float32)
    with pytest.raises(DtypeMismatchError, match=r"float64.*float32"):
        merge_moments(wide, narrow)
    with pytest.raises(DtypeMismatchError):
        merge_moments(MomentState.empty(np.float32), wide)


def test_merge_refuses_things_that_are_not_states():
    with pytest.raises(TypeError, match="MomentState"):
        merge_moments(stable_online_moments([1.0]), (1, 1.0, 0.0))


value_lists = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=20)


def merge_tolerances(*groups):
    """Absolute tolerances for mean and m2 of states built from ``groups`` of values.

    Every quantity is a sum of O(n) terms bounded by the scale (mean) or the squared scale
    (m2), each carrying a few roundings of relative size u; 64 n u covers them.
    """
    values = np.concatenate([np.asarray(g) for g in groups])
    n, scale = len(values), max(np.abs(values).max(), 1.0)
    return 64 * n * UNIT_ROUNDOFF * scale, 64 * n * UNIT_ROUNDOFF * scale**2


@PROPERTY_SETTINGS
@given(first=value_lists, second=value_lists)
def test_merge_is_commutative_within_rounding(first, second):
    a, b = stable_online_moments(first), stable_online_moments(second)
    ab, ba = merge_moments(a, b), merge_moments(b, a)
    mean_atol, m2_atol = merge_tolerances(first, second)
    assert ab.count == ba.count
    assert abs(ab.mean - ba.mean) <= mean_atol
    assert abs(ab.m2 - ba.m2) <= m2_atol


@PROPERTY_SETTINGS
@given(first=value_lists, second=value_lists, third=value_lists)
def test_merge_is_associative_within_rounding(first, second, third):
    a, b, c = (stable_online_moments(v) for v in (first, second, third))
    left = merge_moments(merge_moments(a, b), c)
    right = merge_moments(a, merge_moments(b, c))
    mean_atol, m2_atol = merge_tolerances(first, second, third)
    assert left.count == right.count
    assert abs(left.mean - right.mean) <= mean_atol
    assert abs(left.m2 - right.m2) <= m2_atol
    # Both orders also agree with exact arithmetic over all the values.
    exact_mean, exact_m2 = exact_moments(first + second + third)
    assert abs(left.mean - float(exact_mean)) <= mean_atol
    assert abs(left.m2 - float(exact_m2)) <= m2_atol


# --- the running-state figures of section 15.3 -----------------------------------------


def test_running_state_figures_of_the_seed(running_state_data):
    training_batches, evaluation_batch = running_state_data
    running = reduce(merge_moments, [stable_online_moments(b) for b in training_batches])
    evaluation = stable_online_moments(evaluation_batch)
    eps = 1e-5
    train_mode = (evaluation_batch - evaluation.mean) / np.sqrt(
        evaluation.population_variance + eps
    )
    evaluation_mode = (evaluation_batch - running.mean) / np.sqrt(
        running.population_variance + eps
    )
    assert (round(float(running.mean), 3), round(float(evaluation.mean), 3)) == (4.096, 3.766)
    assert (
        round(float(running.population_variance), 3),
        round(float(evaluation.population_variance), 3),
    ) == (3.801, 3.063)
    assert round(float(np.abs(train_mode - evaluation_mode).max()), 3) == 0.448


# --- the cancellation witness of section 15.2 ------------------------------------------

CANCELLATION_VALUES = np.array([9998, 9999, 10001, 10002])


def test_float32_raw_moments_cancel_to_zero_while_centering_gives_2_5():
    assert raw_and_centered_variance(CANCELLATION_VALUES) == (0.0, 2.5)


def test_float64_raw_moments_survive_the_same_input():
    assert raw_and_centered_variance(CANCELLATION_VALUES, dtype=np.float64) == (2.5, 2.5)


def test_witness_returns_python_floats():
    raw, centered = raw_and_centered_variance(CANCELLATION_VALUES)
    assert type(raw) is float and type(centered) is float


# --- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize("function", [stable_online_moments, raw_and_centered_variance])
def test_empty_values_are_refused(function):
    with pytest.raises(EmptyInputError, match="empty"):
        function([])


@pytest.mark.parametrize("function", [stable_online_moments, raw_and_centered_variance])
def test_non_finite_values_name_their_index(function):
    with pytest.raises(NonFiniteInputError, match=r"index \(2,\)"):
        function([1.0, 2.0, np.inf])


@pytest.mark.parametrize("function", [stable_online_moments, raw_and_centered_variance])
def test_batched_values_are_refused_with_both_shapes(function):
    with pytest.raises(ShapeError, match=r"shape \(8, 32\).*\(n,\).*ravel"):
        function(np.zeros((8, 32)))


def test_overflow_on_conversion_to_the_accumulation_dtype_is_reported():
    with pytest.raises(NonFiniteInputError, match="converted to float32"):
        stable_online_moments([1.0, 1e300], dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.int64, np.complex128])
def test_non_floating_accumulation_dtype_is_refused(dtype):
    with pytest.raises(UnsupportedDtypeError, match="not a real floating type"):
        stable_online_moments([1.0, 2.0], dtype=dtype)


# --- one-value states and counts -----------------------------------------------------


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


def test_bool_values_are_refused():
    with pytest.raises(UnsupportedDtypeError, match="bool"):
        stable_online_moments(np.array([True, False]))


# --- streaming moments at array speed ---------------------------------------------------


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


# --- counts and intermediates beyond the accumulation dtype --------------------------

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


@pytest.mark.parametrize(
    ("a", "b", "count", "mean", "m2"),
    [
        # float16: delta**2 n_a n_b = 300 * 300 overflows, though m2 = 150 does not.
        ((300, np.float16(1.0)), (300, np.float16(2.0)), 600, 1.5, 150.0),
        # float16: delta * n_b = 10 * 10000 overflows, though the mean is 7.9.
        ((100, np.float16(-2.0)), (10_000, np.float16(8.0)), 10_100, 7.90099, 9900.99),
        # float64: delta**2 = (1.5e154)**2 overflows, though m2 = delta**2 / 2 does not.
        ((1, np.float64(-7.5e153)), (1, np.float64(7.5e153)), 2, 0.0, 1.125e308),
    ],
)
def test_merge_scales_intermediates_that_overflow_when_the_result_does_not(a, b, count, mean, m2):
    zero = type(a[1])(0)
    merged = merge_moments(MomentState(a[0], a[1], zero), MomentState(b[0], b[1], zero))
    assert merged.count == count and merged.dtype == type(a[1])
    assert float(merged.mean) == pytest.approx(mean, rel=2e-3, abs=1e-300)
    assert float(merged.m2) == pytest.approx(m2, rel=2e-3)


def test_merges_beyond_range_name_the_true_m2():
    wide = MomentState(count=1, mean=np.float16(-30.0), m2=np.float16(0.0))
    far = MomentState(count=3000, mean=np.float16(20.0), m2=np.float16(0.0))
    # delta**2 n_a n_b / n = 2500 * 3000 / 3001 = 2499: fine. With 300 values at -30:
    assert float(merge_moments(wide, far).m2) == pytest.approx(2499.17, rel=1e-3)
    heavy = MomentState(count=300, mean=np.float16(-30.0), m2=np.float16(0.0))
    with pytest.raises(
        MomentOverflowError, match=r"about 6\.818e\+05\) exceeds the largest float16"
    ):
        merge_moments(heavy, far)
    huge = (MomentState(1, -1.5e308, 0.0), MomentState(3, 1.7e308, 0.0))
    with pytest.raises(MomentOverflowError, match="beyond float64's range"):
        merge_moments(*huge)


def test_welford_overflow_is_reported_with_the_exact_m2():
    # m2 = 80000 exceeds float16's 65504; the message says so instead of "holds inf".
    with pytest.raises(MomentOverflowError, match=r"float16 overflowed.*exact m2.*about 8e\+04"):
        stable_online_moments(np.array([200.0, -200.0, 0.0]), dtype=np.float16)
    with pytest.raises(MomentOverflowError, match="beyond the largest float64"):
        stable_online_moments([1e308, -1e308])


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


def test_python_integers_beyond_float64_are_named_not_overflow_errors():
    with pytest.raises(NonFiniteInputError, match=r"mean = 1000.* is beyond float64's range"):
        MomentState(count=3, mean=10**400, m2=0.0)


def test_streaming_refuses_a_dtype_wider_than_its_float64_parts():
    # 2.0 ** (maxexp / 2) raised Python's OverflowError for longdouble.
    with pytest.raises(UnsupportedDtypeError, match="cannot accumulate in the wider"):
        streaming_moments(np.array([1.0, 2.0, 3.0]), dtype=np.longdouble)
    state = stable_online_moments([1, 2, 3], dtype=np.longdouble)  # Welford's loop can
    assert state.dtype == np.longdouble and state.m2 == 2
