"""Tests of the normalization maps (eqs. 15.1, 15.2) and their Jacobians (eq. 15.3)."""

from fractions import Fraction

import numpy as np
import pytest
from exact_reference import (
    centered_ulp_bound,
    elementwise_ulps,
    exact_sqrt,
    exact_standardized,
    normwise_ulps,
)
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from trainable_harness import (
    DegenerateNormalizationError,
    EmptyInputError,
    NegativeEpsilonError,
    NonFiniteInputError,
    ResultOverflowError,
    ShapeError,
    TrainableError,
    UnknownChoiceError,
    UnsupportedDtypeError,
    centered_normalize,
    normalization_jacobian,
    rms_normalize,
    scaled_moments,
)

MAPS = {"centered": centered_normalize, "rms": rms_normalize}
PROPERTY_SETTINGS = settings(max_examples=75, deadline=None)
SHIFT_WITNESS = np.array([-2.0, -1.0, 1.0, 2.0])

# Vectors with coordinates in [-10, 10] and population std >= 1: the maps are then well
# conditioned (the denominator is >= 1), so rounding errors stay near machine precision.
spread_vectors = hnp.arrays(
    np.float64,
    st.integers(min_value=2, max_value=12),
    elements=st.floats(-10, 10, allow_nan=False, allow_infinity=False),
).filter(lambda x: x.std() >= 1.0)
shifts = st.floats(-100, 100, allow_nan=False, allow_infinity=False)
positive_scales = st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False)

# Shifting by |c| <= 100 rounds each coordinate by <= 2**-53 * 110 ~ 1.2e-14; dividing by a
# std >= 1 and a few more roundings keep the output error below ~1e-13. Scaling is
# exact up to a few ulps of the O(sqrt(d)) outputs. 1e-10 leaves a wide margin, while a
# map that kept the shift or scale would differ by O(1).
INVARIANCE_ATOL = 1e-10


# --- definitions -------------------------------------------------------------------


def test_centered_map_matches_equation_15_1():
    rng = np.random.default_rng(1501)
    x = rng.normal(size=7)
    projected = x - x.mean()
    expected = np.sqrt(7) * projected / np.linalg.norm(projected)
    np.testing.assert_allclose(centered_normalize(x), expected, rtol=1e-14)


def test_rms_map_matches_equation_15_2():
    rng = np.random.default_rng(1502)
    x = rng.normal(size=7)
    np.testing.assert_allclose(rms_normalize(x), np.sqrt(7) * x / np.linalg.norm(x), rtol=1e-14)


@pytest.mark.parametrize("name", MAPS)
def test_batches_are_normalized_row_by_row(name):
    normalize = MAPS[name]
    X = np.random.default_rng(1503).normal(size=(2, 3, 5))
    rows = np.stack([normalize(x) for x in X.reshape(6, 5)]).reshape(X.shape)
    np.testing.assert_array_equal(normalize(X), rows)


def test_eps_sits_inside_the_square_root_next_to_the_variance():
    x = np.array([1.0, 3.0])  # population variance 1, mean square 5
    np.testing.assert_allclose(centered_normalize(x, eps=3.0), [-0.5, 0.5], rtol=1e-15)
    np.testing.assert_allclose(rms_normalize(x, eps=4.0), [1 / 3, 1.0], rtol=1e-15)


@pytest.mark.parametrize("name", MAPS)
def test_integer_input_is_promoted_to_float64_and_float32_is_kept(name):
    normalize = MAPS[name]
    assert normalize(np.array([1, 2, 4])).dtype == np.float64
    assert normalize(np.array([1, 2, 4], dtype=np.float32)).dtype == np.float32


# --- invariances ---------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(x=spread_vectors, shift=shifts, scale=positive_scales)
def test_centered_map_ignores_shift_and_positive_scale(x, shift, scale):
    moved = scale * x + shift
    np.testing.assert_allclose(
        centered_normalize(moved), centered_normalize(x), rtol=0, atol=INVARIANCE_ATOL
    )


@PROPERTY_SETTINGS
@given(x=spread_vectors, scale=positive_scales)
def test_rms_map_ignores_positive_scale(x, scale):
    np.testing.assert_allclose(
        rms_normalize(scale * x), rms_normalize(x), rtol=0, atol=INVARIANCE_ATOL
    )


@PROPERTY_SETTINGS
@given(x=spread_vectors, shift=st.floats(1, 100) | st.floats(-100, -1))
def test_rms_map_is_not_shift_invariant(x, shift):
    # x/|x| = (x + c1)/|x + c1| would need x parallel to 1, i.e. a constant vector; a
    # non-constant x (std >= 1) with |c| >= 1 moves some coordinate by far more than 1e-3.
    change = np.abs(rms_normalize(x + shift) - rms_normalize(x)).max()
    assert change > 1e-3


def test_shift_witness_moves_rms_output_by_2_055_and_centered_output_by_nothing():
    shifted = SHIFT_WITNESS + 10.0
    rms_change = np.abs(rms_normalize(shifted) - rms_normalize(SHIFT_WITNESS)).max()
    centered_change = np.abs(centered_normalize(shifted) - centered_normalize(SHIFT_WITNESS))
    assert round(float(rms_change), 3) == 2.055
    assert centered_change.max() == 0.0


def test_eps_breaks_exact_scale_invariance_when_the_variance_is_comparable():
    x = np.array([-1.0, 1.0])  # population variance 1
    small, large = centered_normalize(x, eps=1.0), centered_normalize(100 * x, eps=1.0)
    np.testing.assert_allclose(small, x / np.sqrt(2), rtol=1e-15)
    assert np.abs(large - small).max() > 0.25


# --- Jacobians -----------------------------------------------------------------------


def central_difference_jacobian(normalize, x, eps, step=1e-6):
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = step
        columns.append((normalize(x + e, eps=eps) - normalize(x - e, eps=eps)) / (2 * step))
    return np.stack(columns, axis=1)


# Central differences with step h = 1e-6 on unit-scale inputs have truncation error
# ~h**2 * |N'''| ~ 1e-12 and rounding error ~u * |N| / h ~ 1e-10; 1e-7 bounds both with
# room to spare, while a wrong closed form (a missing or misplaced term) is off by O(0.1).
FINITE_DIFFERENCE_ATOL = 1e-7


@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("eps", [0.0, 1e-5, 0.3])
@pytest.mark.parametrize("seed", range(4))
def test_jacobian_matches_central_differences(centered, eps, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=int(rng.integers(2, 9)))
    normalize = centered_normalize if centered else rms_normalize
    np.testing.assert_allclose(
        normalization_jacobian(x, centered=centered, eps=eps),
        central_difference_jacobian(normalize, x, eps),
        rtol=0,
        atol=FINITE_DIFFERENCE_ATOL,
    )


def test_jacobian_at_eps_zero_is_equation_15_3():
    x = np.random.default_rng(1504).normal(size=6)
    projector = np.eye(6) - 1 / 6
    u = x / np.linalg.norm(x)
    v = projector @ x / np.linalg.norm(projector @ x)
    j_rms = np.sqrt(6) / np.linalg.norm(x) * (np.eye(6) - np.outer(u, u))
    j_centered = np.sqrt(6) / np.linalg.norm(projector @ x) * (projector - np.outer(v, v))
    np.testing.assert_allclose(normalization_jacobian(x, centered=False), j_rms, atol=1e-14)
    np.testing.assert_allclose(normalization_jacobian(x, centered=True), j_centered, atol=1e-14)


def rank(matrix):
    return int(np.linalg.matrix_rank(matrix, tol=1e-10))


@pytest.mark.parametrize("d", [2, 3, 4, 7, 16])
def test_generic_ranks_at_eps_zero_are_d_minus_2_and_d_minus_1(d):
    x = np.random.default_rng(d).normal(size=d)
    assert rank(normalization_jacobian(x, centered=True)) == d - 2
    assert rank(normalization_jacobian(x, centered=False)) == d - 1


def test_seed_ranks_for_the_shift_witness():
    assert rank(normalization_jacobian(SHIFT_WITNESS, centered=True)) == 2
    assert rank(normalization_jacobian(SHIFT_WITNESS, centered=False)) == 3


# The nullspace entries are O(1) sums cancelling to 0; 1e-13 is a few hundred ulps.
NULLSPACE_ATOL = 1e-13


def test_nullspaces_at_eps_zero_hold_ones_and_px_or_x():
    x = np.random.default_rng(1505).normal(size=5)
    projected = x - x.mean()
    j_centered = normalization_jacobian(x, centered=True)
    j_rms = normalization_jacobian(x, centered=False)
    np.testing.assert_allclose(j_centered @ np.ones(5), 0, atol=NULLSPACE_ATOL)
    np.testing.assert_allclose(j_centered @ projected, 0, atol=NULLSPACE_ATOL)
    np.testing.assert_allclose(j_rms @ x, 0, atol=NULLSPACE_ATOL)
    # The RMS map keeps the constant direction: 1 is not in its nullspace.
    assert np.abs(j_rms @ np.ones(5)).max() > 0.1


def test_with_eps_only_the_ones_direction_survives_in_the_nullspace():
    eps = 0.5
    x = np.random.default_rng(1506).normal(size=5)
    projected = x - x.mean()
    j_centered = normalization_jacobian(x, centered=True, eps=eps)
    j_rms = normalization_jacobian(x, centered=False, eps=eps)
    np.testing.assert_allclose(j_centered @ np.ones(5), 0, atol=NULLSPACE_ATOL)
    # The radial direction y is scaled by eps / s**3 instead of erased.
    s_centered = np.sqrt(np.mean(projected**2) + eps)
    s_rms = np.sqrt(np.mean(x**2) + eps)
    np.testing.assert_allclose(j_centered @ projected, eps * projected / s_centered**3, atol=1e-14)
    np.testing.assert_allclose(j_rms @ x, eps * x / s_rms**3, atol=1e-14)
    assert rank(j_centered) == 4
    assert rank(j_rms) == 5


# --- bad input -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "x", "what"),
    [("centered", [3.0, 3.0, 3.0], "constant vector"), ("rms", [0.0, 0.0], "zero vector")],
)
def test_degenerate_input_with_eps_zero_is_refused_and_eps_suggested(name, x, what):
    with pytest.raises(DegenerateNormalizationError, match=f"{what}.*eps > 0"):
        MAPS[name](x)
    with pytest.raises(DegenerateNormalizationError, match=what):
        normalization_jacobian(x, centered=name == "centered")
    assert np.all(MAPS[name](x, eps=1e-5) == 0.0)


def test_degenerate_error_names_the_row_of_a_batch():
    X = np.array([[1.0, 2.0], [5.0, 5.0]])
    with pytest.raises(DegenerateNormalizationError, match=r"row \(1,\)"):
        centered_normalize(X)


def test_constant_row_whose_rounded_mean_differs_is_still_degenerate():
    x = np.full(3, 0.1)  # np.mean gives 0.10000000000000002, so Px is not exactly 0
    assert np.any(x - x.mean() != 0)
    with pytest.raises(DegenerateNormalizationError):
        centered_normalize(x)


@pytest.mark.parametrize("name", MAPS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_names_its_index(name, bad):
    X = np.ones((2, 3))
    X[1, 2] = bad
    with pytest.raises(NonFiniteInputError, match=r"index \(1, 2\)"):
        MAPS[name](X)


@pytest.mark.parametrize("name", MAPS)
@pytest.mark.parametrize("x", [np.array([]), np.zeros((3, 0))])
def test_empty_input_is_refused(name, x):
    with pytest.raises(EmptyInputError, match="empty"):
        MAPS[name](x)


@pytest.mark.parametrize("name", MAPS)
def test_scalar_input_is_refused_with_the_wanted_shape(name):
    with pytest.raises(ShapeError, match=r"shape \(\).*\(\.\.\., d\)"):
        MAPS[name](3.0)


def test_jacobian_of_a_batch_is_refused_with_both_shapes():
    with pytest.raises(ShapeError, match=r"shape \(2, 3\).*shape \(d,\)"):
        normalization_jacobian(np.ones((2, 3)), centered=False)


@pytest.mark.parametrize("name", MAPS)
def test_negative_eps_is_refused(name):
    with pytest.raises(NegativeEpsilonError, match=r"-0\.1"):
        MAPS[name]([1.0, 2.0], eps=-0.1)
    with pytest.raises(NegativeEpsilonError):
        normalization_jacobian([1.0, 2.0], centered=name == "centered", eps=-0.1)


def test_non_finite_eps_is_refused():
    with pytest.raises(NonFiniteInputError, match="eps"):
        rms_normalize([1.0, 2.0], eps=np.nan)


def test_complex_input_is_refused():
    with pytest.raises(UnsupportedDtypeError, match="complex"):
        rms_normalize(np.array([1 + 1j, 2.0]))


def test_every_error_is_a_value_error():
    with pytest.raises(ValueError):  # the base class every harness error shares
        rms_normalize([0.0, 0.0])
    assert issubclass(DegenerateNormalizationError, TrainableError)


# --- scale before you square: every magnitude of float16, float32 and float64 ----------

FLOAT_DTYPES = (np.float16, np.float32, np.float64)
WIDTHS = {np.float16: 16, np.float32: 32, np.float64: 64}
# Hypothesis's default number of examples. The bounds below are derived, not fitted to the
# examples drawn (and were checked once over 18 000), so more examples buy no margin.
MAGNITUDE_SETTINGS = settings(max_examples=100, deadline=None)
# First-order rounding analysis in the working dtype (unit roundoff u) for a row of d
# values: the deviations carry at most (d + 2) u max|dev| (the shift, d - 1 additions and
# the division of the mean, the subtraction), and the root sqrt(mean square + eps) a
# relative (d/2 + 2) u (half the d + 2 roundings of the mean square and the rescaled eps,
# and the root), plus one rounding for the final division: (3d/2 + 5) u times the largest
# output, hence at most 3d/2 + 5 ulps of it (an ulp of v is never below u |v|); 17 for
# d <= 8. The power-of-two scalings are exact, and an entry flushed below 2**-1074 max|x|
# moves an output by at most 2 sqrt(d) subnormal ulps. Measured over 18 000 examples: at
# most 3.6 ulps (centered, norm-wise) and 2.7 (RMS, element-wise). Squaring before
# scaling gives 0 or inf outputs on these inputs, far outside.
CENTERED_ULPS = centered_ulp_bound(8)  # 17
# The RMS map has no deviations to round: each output is x_i divided by a root with
# relative error (d/2 + 2) u, plus the division's u: 7 u, at most 7 ulps (8 with flushing).
RMS_ULPS = 8


def any_magnitude_rows(dtype):
    """Rows of 2 to 8 finite values of ``dtype``, from its smallest subnormal to its max."""
    return hnp.arrays(
        dtype,
        st.integers(2, 8),
        elements=st.floats(width=WIDTHS[dtype], allow_nan=False, allow_infinity=False),
    )


@st.composite
def ill_conditioned_rows(draw, dtype):
    """A base value of any magnitude plus small multiples of its spacing (huge |mean|/std)."""
    base = dtype(draw(st.floats(width=WIDTHS[dtype], allow_nan=False, allow_infinity=False)))
    assume(np.abs(base) < np.finfo(dtype).max / 2)
    steps = draw(st.lists(st.integers(-64, 64), min_size=2, max_size=8))
    step = np.float64(np.spacing(base)) * 2.0 ** draw(st.integers(0, 6))
    exact = np.float64(base) + np.float64(step) * np.array(steps, dtype=np.float64)
    # Refused before the cast, which would overflow (and warn) past the dtype's largest value.
    assume(np.all(np.abs(exact) <= np.finfo(dtype).max))
    x = exact.astype(dtype)
    assume(np.isfinite(x).all())
    return x


epsilons = st.sampled_from([0.0, 1e-5, 1.0, 1e30])


def not_degenerate(x, eps, centered=True):
    return eps > 0 or (np.any(x != x[0]) if centered else np.any(x != 0))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@MAGNITUDE_SETTINGS
@given(data=st.data(), eps=epsilons)
def test_centered_map_is_accurate_at_every_magnitude(dtype, data, eps):
    x = data.draw(any_magnitude_rows(dtype) | ill_conditioned_rows(dtype))
    assume(not_degenerate(x, eps))
    y = centered_normalize(x, eps=eps)
    assert y.dtype == dtype
    reference = exact_standardized(x, eps)
    assert normwise_ulps(y, reference, dtype) <= CENTERED_ULPS


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@MAGNITUDE_SETTINGS
@given(data=st.data(), eps=epsilons)
def test_rms_map_is_accurate_element_by_element_at_every_magnitude(dtype, data, eps):
    x = data.draw(any_magnitude_rows(dtype))
    assume(not_degenerate(x, eps, centered=False))
    y = rms_normalize(x, eps=eps)
    reference = exact_standardized(x, eps, centered=False)
    assert elementwise_ulps(y, reference, dtype) <= RMS_ULPS


@st.composite
def exactly_shiftable(draw, dtype):
    """``(x, x + c)``, both exact in ``dtype``: small integers times a power of two."""
    precision = np.finfo(dtype).nmant + 1
    finfo = np.finfo(dtype)
    # Integers below 2**(precision - 1) with a shift keeping them there, so x + c is exact.
    limit = 2 ** (precision - 2)
    integers = np.array(
        draw(st.lists(st.integers(-limit, limit), min_size=2, max_size=8)), dtype=np.float64
    )
    assume(np.any(integers != integers[0]))
    shift = draw(st.integers(-limit, limit))
    lowest = int(finfo.minexp) - int(finfo.nmant)  # exponent of the smallest subnormal
    exponent = draw(st.integers(lowest, int(finfo.maxexp) - precision))
    x = np.ldexp(integers, exponent).astype(dtype)
    moved = np.ldexp(integers + shift, exponent).astype(dtype)
    return x, moved


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@MAGNITUDE_SETTINGS
@given(data=st.data())
def test_exact_shifts_leave_the_centered_map_bit_for_bit(dtype, data):
    # The deviations are computed from x - x_0, which is exact for both inputs here, and
    # then scaled by powers of two; so an exact shift changes no bit, at any magnitude.
    x, moved = data.draw(exactly_shiftable(dtype))
    np.testing.assert_array_equal(centered_normalize(moved), centered_normalize(x))
    # So does the Jacobian, which depends on Px only (entries beyond range: both refused).
    jacobians = []
    for vector in (moved, x):
        try:
            jacobians.append(normalization_jacobian(vector, centered=True))
        except ResultOverflowError as error:
            jacobians.append(str(error))
    if isinstance(jacobians[0], str):
        assert jacobians[0] == jacobians[1]
    else:
        np.testing.assert_array_equal(*jacobians)


@st.composite
def power_of_two_pairs(draw, dtype):
    """``(x, x * 2**k)`` with every nonzero entry of both in the normal range of ``dtype``."""
    finfo = np.finfo(dtype)
    precision = int(finfo.nmant) + 1
    limit = 2 ** (precision - 1) - 1
    integers = np.array(
        draw(st.lists(st.integers(-limit, limit), min_size=2, max_size=8)), dtype=np.float64
    )
    assume(np.any(integers != integers[0]))
    low, high = int(finfo.minexp), int(finfo.maxexp) - precision
    exponent = draw(st.integers(low, high))
    power = draw(st.integers(low - exponent, high - exponent))
    return (
        np.ldexp(integers, exponent).astype(dtype),
        np.ldexp(integers, exponent + power).astype(dtype),
    )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@MAGNITUDE_SETTINGS
@given(data=st.data())
def test_power_of_two_scaling_leaves_both_maps_bit_for_bit(dtype, data):
    # Multiplying by 2**k is exact while no entry leaves the normal range, and the maps
    # divide it out exactly with their own power-of-two scale.
    x, scaled = data.draw(power_of_two_pairs(dtype))
    np.testing.assert_array_equal(centered_normalize(scaled), centered_normalize(x))
    np.testing.assert_array_equal(rms_normalize(scaled), rms_normalize(x))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@MAGNITUDE_SETTINGS
@given(data=st.data(), scale=st.floats(1e-3, 1e3))
def test_any_positive_scale_keeps_the_centered_map_within_its_bound(dtype, data, scale):
    bound = float(dtype(np.finfo(dtype).max / 1024))  # so that c x stays finite
    x = data.draw(
        hnp.arrays(
            dtype,
            st.integers(2, 8),
            elements=st.floats(-bound, bound, width=WIDTHS[dtype]),
        )
    )
    with np.errstate(under="ignore"):
        scaled = (x.astype(np.float64) * scale).astype(dtype)
    assume(np.any(scaled != scaled[0]))
    # Accurate against the exact map of the rounded c x (which is within a few ulps of
    # the map of x wherever c x rounds by a relative u per entry without flushing).
    reference = exact_standardized(scaled)
    assert normwise_ulps(centered_normalize(scaled), reference, dtype) <= CENTERED_ULPS


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@MAGNITUDE_SETTINGS
@given(data=st.data())
def test_normalizing_twice_changes_the_output_by_rounding_only(dtype, data):
    # N_C(x) has mean 0 and population variance 1, so N_C(N_C(x)) = N_C(x) exactly in real
    # arithmetic; each application is within CENTERED_ULPS of its exact value.
    x = data.draw(any_magnitude_rows(dtype) | ill_conditioned_rows(dtype))
    assume(np.any(x != x[0]))
    once = centered_normalize(x)
    assume(np.any(once != once[0]))
    twice = centered_normalize(once)
    assert normwise_ulps(twice, exact_standardized(x), dtype) <= 2 * CENTERED_ULPS


# Entries of J = (Q - y y^T/(d s^2))/s are below 2/s in magnitude; each carries the
# deviations' (d + 2) u and the root's (d/2 + 2) u three times over (1/s, and s^2 in
# the outer product) plus a few roundings of the combination: below 40 u / s for d <= 8.
JACOBIAN_U_OVER_S = 40


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("centered", [True, False])
@MAGNITUDE_SETTINGS
@given(data=st.data(), eps=epsilons)
def test_jacobian_is_accurate_at_every_magnitude(dtype, centered, data, eps):
    x = data.draw(any_magnitude_rows(dtype))
    assume(not_degenerate(x, eps, centered))
    values = [Fraction(float(v)) for v in x]
    d = len(values)
    mean = sum(values) / d if centered else Fraction(0)
    y = [v - mean for v in values]
    s = exact_sqrt(sum(t * t for t in y) / d + Fraction(eps))
    # Entries up to 2/s must fit in the dtype for a finite comparison.
    assume(2 / s < Fraction(float(np.finfo(dtype).max)))
    J = normalization_jacobian(x, centered=centered, eps=eps)
    u = Fraction(float(np.finfo(dtype).eps)) / 2
    for i in range(d):
        for j in range(d):
            q = Fraction(int(i == j)) - (Fraction(1, d) if centered else 0)
            exact = (q - y[i] * y[j] / (d * s * s)) / s
            assert abs(Fraction(float(J[i, j])) - exact) * s <= JACOBIAN_U_OVER_S * u


# --- the cases a user met (issue 10) -----------------------------------------------------


def test_float16_squares_that_would_overflow_are_scaled_first():
    assert centered_normalize(np.array([0, 1000], np.float16)).tolist() == [-1.0, 1.0]
    assert rms_normalize(np.array([60000, -60000], np.float16)).tolist() == [1.0, -1.0]


def test_a_tiny_spread_is_not_a_constant_vector():
    np.testing.assert_array_equal(centered_normalize([0, 1e-170]), [-1.0, 1.0])
    np.testing.assert_array_equal(centered_normalize([1e-320, 2e-320]), [-1.0, 1.0])


def test_offsets_do_not_eat_the_deviations_in_float32():
    y = centered_normalize(np.array([1e8, 1e8 + 8], np.float32))
    np.testing.assert_array_equal(y, np.array([-1.0, 1.0], np.float32))


def test_jacobian_at_huge_values_is_finite_and_exact():
    x = np.array([1e300, -1e300])
    J = normalization_jacobian(x, centered=False)
    # y = x, s = 1e300, y y^T / (d s^2) = [[1, -1], [-1, 1]] / 2: J = [[1, 1], [1, 1]] / 2s.
    np.testing.assert_allclose(J, np.full((2, 2), 0.5e-300), rtol=4 * 2**-53)


def test_jacobian_entries_beyond_range_are_refused_by_name():
    # At x = (0, 2**-1070) the RMS map's J[0, 0] = 1/s = sqrt(2) 2**1070, beyond float64:
    # refused (it used to be returned as inf).
    with pytest.raises(ResultOverflowError, match=r"J\[0, 0\] is beyond.*eps = 0\.0"):
        normalization_jacobian(np.array([0.0, 2.0**-1070]), centered=False)
    # With eps = 2**-1074 (the smallest float) s is about 2**-537 and J = I / s nearly:
    # J[0, 1] = -y_0 y_1 / (d s^3) = 0 exactly.
    J = normalization_jacobian(np.array([0.0, 2.0**-1070]), centered=False, eps=2.0**-1074)
    np.testing.assert_allclose(np.diag(J), [2.0**537, 2.0**537], rtol=4 * 2**-53)
    assert J[0, 1] == 0.0 and J[1, 0] == 0.0


def test_eps_is_added_to_the_variance_in_original_units_at_every_scale():
    # Variance 1e-300 and eps 1e-5: the output is dev / sqrt(1e-5) to rounding, not 0.
    x = np.array([-1e-150, 1e-150])
    np.testing.assert_allclose(centered_normalize(x, eps=1e-5), x / np.sqrt(1e-5), rtol=1e-15)
    # Variance 1e300 and eps 1e-5: eps is negligible, the output is +-1.
    np.testing.assert_array_equal(centered_normalize([-1e150, 1e150], eps=1e-5), [-1.0, 1.0])
    # eps beyond the variance by 600 orders of magnitude: exact rescaling, no inf or NaN.
    y = centered_normalize([-1e-200, 1e-200], eps=1e300)
    np.testing.assert_allclose(y, [-1e-350, 1e-350], rtol=0, atol=5e-324)


# --- arguments that were accepted silently ----------------------------------------------


@pytest.mark.parametrize("eps", [True, "1e-5", 1j, None])
def test_eps_must_be_a_real_number(eps):
    with pytest.raises(UnsupportedDtypeError, match="eps must be a real number"):
        centered_normalize([1.0, 2.0], eps=eps)


@pytest.mark.parametrize("centered", ["no", 1, None])
def test_centered_must_be_a_bool(centered):
    with pytest.raises(UnknownChoiceError, match="centered must be True"):
        normalization_jacobian([1.0, 2.0], centered=centered)


@pytest.mark.parametrize("name", MAPS)
def test_bool_arrays_are_refused(name):
    with pytest.raises(UnsupportedDtypeError, match="bool"):
        MAPS[name](np.array([True, False]))


@pytest.mark.parametrize("name", MAPS)
def test_inputs_are_never_modified(name):
    x = np.array([[3.0, -1.0, 2.0], [1e300, -1e300, 0.0]])
    x.flags.writeable = False  # an in-place write would raise
    kept = x.copy()
    MAPS[name](x, eps=1e-5)
    normalization_jacobian(x[1], centered=name == "centered")
    np.testing.assert_array_equal(x, kept)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=20),
    st.sampled_from([1e-5, 0.1, 1.0]),
)
def test_value_and_jacobian_at_once_equal_the_separate_functions(values, eps):
    from trainable_harness.normalization import centered_normalize_with_jacobian

    x = np.array(values)
    value, jacobian = centered_normalize_with_jacobian(x, eps=eps)
    np.testing.assert_array_equal(value, centered_normalize(x, eps=eps))
    np.testing.assert_array_equal(jacobian, normalization_jacobian(x, centered=True, eps=eps))


# --- scaled_moments checks its own arguments ----------------------------------------------


@given(
    x=hnp.arrays(np.float64, (3, 4), elements=st.floats(-1e3, 1e3)), axis=st.sampled_from([0, 1])
)
def test_scaled_moments_counts_a_negative_axis_from_the_end(x, axis):
    # Before: a negative axis was not recognised as reduced, so every value was shifted
    # by itself and all deviations were 0.
    negative = scaled_moments(x, (axis - 2,), centered=True, eps=1e-5).normalized()
    np.testing.assert_array_equal(
        negative, scaled_moments(x, (axis,), centered=True, eps=1e-5).normalized()
    )


@pytest.mark.parametrize(
    ("x", "axes", "eps", "error", "named"),
    [
        (np.ones((2, 3), np.int64), (1,), 1e-5, UnsupportedDtypeError, "x"),
        (np.ones((2, 3), bool), (1,), 1e-5, UnsupportedDtypeError, "x"),
        ([[1.0, 2.0]], (1,), 1e-5, UnsupportedDtypeError, "x"),
        (np.ones((2, 3)), (1,), -1.0, NegativeEpsilonError, "eps"),
        (np.ones((2, 3)), (1,), float("inf"), NonFiniteInputError, "eps"),
        (np.ones((2, 3)), (1,), "1e-5", UnsupportedDtypeError, "eps"),
        (np.ones((2, 3)), (2,), 1e-5, ShapeError, "axes"),
        (np.ones((2, 3)), (), 1e-5, ShapeError, "axes"),
        (np.ones((2, 3)), (1.0,), 1e-5, ShapeError, "axes"),
        (np.ones((2, 0)), (1,), 1e-5, EmptyInputError, "axis 1"),
    ],
)
def test_scaled_moments_refuses_bad_arguments_naming_them(x, axes, eps, error, named):
    # Before: an integer x rounded eps * 4**-E to 0 (and 0/0 for a constant set), a
    # negative eps gave NaN, and a bad axis raised numpy's AxisError from a reduction.
    with pytest.raises(error, match=named):
        scaled_moments(x, axes, centered=True, eps=eps)
