"""Tests of the normalization maps (eqs. 15.1, 15.2) and their Jacobians (eq. 15.3)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from trainable_harness import (
    DegenerateNormalizationError,
    EmptyInputError,
    NegativeEpsilonError,
    NonFiniteInputError,
    ShapeError,
    TrainableError,
    UnsupportedDtypeError,
    centered_normalize,
    normalization_jacobian,
    rms_normalize,
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
