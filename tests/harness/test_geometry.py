"""Tests of the scale-invariant unit of chapter 15 (trainable_harness.geometry)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainable_harness.errors import (
    DegenerateNormalizationError,
    EmptyInputError,
    LearningRateError,
    NonFiniteInputError,
    ResultOverflowError,
    SeedError,
    ShapeError,
    TrainableError,
    UnsupportedDtypeError,
)
from trainable_harness.geometry import (
    LogisticProblem,
    angular_steps,
    centered_normalize_vjp,
    equilibrium_angle,
    equilibrium_norm,
    make_logistic_problem,
    run_gradient_descent,
    scale_invariant_gradient,
    scale_invariant_loss,
)
from trainable_harness.normalization import normalization_jacobian

PROBLEM = make_logistic_problem(seed=7, n=24, d=5)
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None)
weights = (
    st.lists(st.floats(-5, 5, allow_nan=False), min_size=5, max_size=5)
    .map(np.array)
    .filter(lambda w: np.linalg.norm(w) > 0.1)
)


def central_difference_gradient(f, w, step=1e-6):
    """Naive reference: one central difference per coordinate."""
    return np.array([(f(w + step * e) - f(w - step * e)) / (2 * step) for e in np.eye(w.shape[0])])


@PROPERTY_SETTINGS
@given(weights)
def test_gradient_matches_central_differences(w):
    numeric = central_difference_gradient(lambda v: scale_invariant_loss(v, PROBLEM), w)
    exact = scale_invariant_gradient(w, PROBLEM)
    # Truncation ~ step^2 |f'''| and rounding ~ 1e-16 / step = 1e-10 per coordinate, both
    # scaled by 1/|w| (>= 0.1 here); a wrong term would be of the size of the gradient.
    assert np.max(np.abs(numeric - exact)) < 1e-7 * (1 + 1 / np.linalg.norm(w))


@PROPERTY_SETTINGS
@given(weights, st.floats(1e-3, 1e3))
def test_scale_invariance_and_inverse_gradient_scaling(w, c):
    loss = scale_invariant_loss(w, PROBLEM)
    assert abs(scale_invariant_loss(c * w, PROBLEM) - loss) < 1e-14
    g = scale_invariant_gradient(w, PROBLEM)
    np.testing.assert_allclose(
        c * scale_invariant_gradient(c * w, PROBLEM), g, rtol=0, atol=1e-12 * np.linalg.norm(g)
    )
    assert abs(w @ g) <= 1e-13 * np.linalg.norm(w) * np.linalg.norm(g)


def test_vjp_equals_transposed_harness_jacobian():
    rng = np.random.default_rng(0)
    for _ in range(5):
        z, v = rng.normal(size=9), rng.normal(size=9)
        exact = normalization_jacobian(z, centered=True).T @ v
        np.testing.assert_allclose(centered_normalize_vjp(z, v), exact, rtol=0, atol=1e-14)


def test_plain_descent_grows_the_norm_by_pythagoras():
    path = run_gradient_descent(np.ones(5), PROBLEM, lr=0.7, steps=20)
    norms = np.linalg.norm(path.weights, axis=1)
    grads = np.linalg.norm(path.gradients, axis=1)
    np.testing.assert_allclose(norms[1:] ** 2, norms[:-1] ** 2 + 0.49 * grads**2, rtol=1e-13)
    assert np.all(np.diff(norms) > 0)


def test_weight_decay_identity_and_no_mutation():
    w0 = np.array([1.0, -1.0, 0.5, 2.0, 0.0])
    before = w0.copy()
    path = run_gradient_descent(w0, PROBLEM, lr=0.5, steps=10, weight_decay=0.1)
    np.testing.assert_array_equal(w0, before)
    norms = np.linalg.norm(path.weights, axis=1)
    grads = np.linalg.norm(path.gradients, axis=1)
    np.testing.assert_allclose(
        norms[1:] ** 2, 0.95**2 * norms[:-1] ** 2 + 0.25 * grads**2, rtol=1e-12
    )


def test_minibatch_runs_are_reproducible_and_seeded():
    a = run_gradient_descent(np.ones(5), PROBLEM, lr=0.5, steps=5, batch_size=8, seed=3)
    b = run_gradient_descent(np.ones(5), PROBLEM, lr=0.5, steps=5, batch_size=8, seed=3)
    c = run_gradient_descent(np.ones(5), PROBLEM, lr=0.5, steps=5, batch_size=8, seed=4)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert not np.array_equal(a.weights, c.weights)


def test_angular_steps_against_arccos():
    rng = np.random.default_rng(1)
    W = rng.normal(size=(6, 4))
    unit = W / np.linalg.norm(W, axis=1, keepdims=True)
    reference = np.arccos(np.clip(np.sum(unit[1:] * unit[:-1], axis=1), -1, 1))
    np.testing.assert_allclose(angular_steps(W), reference, atol=1e-12)


def test_equilibrium_formulas_are_a_fixed_point():
    lr, wd, G = 0.3, 0.2, 1.7
    r = equilibrium_norm(lr, wd, G)
    # One step of the norm recursion from r returns r, with |g| = G / r.
    assert abs((1 - lr * wd) ** 2 * r**2 + lr**2 * (G / r) ** 2 - r**2) < 1e-14
    theta = equilibrium_angle(lr, wd)
    assert abs(np.tan(theta) - lr * (G / r) / ((1 - lr * wd) * r)) < 1e-14


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lr": 0.0, "steps": 1},
        {"lr": -1.0, "steps": 1},
        {"lr": float("nan"), "steps": 1},
        {"lr": 1.0, "steps": 1, "weight_decay": 1.0},
        {"lr": 1.0, "steps": 0},
        {"lr": 1.0, "steps": 1.5},
        {"lr": 1.0, "steps": 1, "batch_size": 1, "seed": 0},
        {"lr": 1.0, "steps": 1, "batch_size": 8},
    ],
)
def test_bad_settings_raise_specific_errors(kwargs):
    with pytest.raises(TrainableError):
        run_gradient_descent(np.ones(5), PROBLEM, **kwargs)


def test_bad_shapes_and_degenerate_weight():
    with pytest.raises(ShapeError, match="w has shape"):
        scale_invariant_loss(np.ones(4), PROBLEM)
    with pytest.raises(DegenerateNormalizationError):
        scale_invariant_loss(np.zeros(5), PROBLEM)
    with pytest.raises(ShapeError, match="n must be"):
        make_logistic_problem(seed=0, n=1)
    with pytest.raises(ShapeError):
        angular_steps(np.ones(3))
    assert isinstance(PROBLEM, LogisticProblem)


# --- scale before computing; bad input named -----------------------------------------


@pytest.mark.parametrize("scale", [1e300, 1e-200, 2.0**-1070])
def test_angular_steps_rescale_iterates_whose_squares_leave_the_range(scale):
    # |w|**2 overflows (1e300) or vanishes (1e-200, a subnormal): the angle was 0 or NaN.
    weights = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 3.0]]) * scale
    np.testing.assert_allclose(angular_steps(weights), [np.pi / 4, np.pi / 4], rtol=1e-15)
    assert angular_steps([[1e300, 0.0], [0.0, 1e300]])[0] == np.pi / 2


def test_angular_steps_refuse_zero_iterates_and_bad_values():
    with pytest.raises(DegenerateNormalizationError, match=r"weights\[1\] is the zero vector"):
        angular_steps([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(EmptyInputError, match="d >= 1"):
        angular_steps(np.zeros((3, 0)))
    with pytest.raises(NonFiniteInputError, match=r"weights holds nan at index \(0, 1\)"):
        angular_steps([[1.0, np.nan], [0.0, 1.0]])
    with pytest.raises(UnsupportedDtypeError, match="weights has dtype complex128"):
        angular_steps(np.array([[1.0, 1j], [0.0, 1.0]]))


@pytest.mark.parametrize(
    ("G", "message"),
    [
        (float("nan"), "unit_gradient_norm must be a finite real number, got nan"),
        (-1.0, "unit_gradient_norm is a norm and must be >= 0, got -1.0"),
        (float("inf"), "unit_gradient_norm must be a finite"),
        ("2.0", "unit_gradient_norm must be a finite real number, got '2.0' \\(str\\)"),
    ],
)
def test_equilibrium_norm_refuses_a_gradient_norm_that_is_not_a_norm(G, message):
    with pytest.raises(ShapeError, match=message):
        equilibrium_norm(0.1, 0.5, G)


def test_equilibrium_norm_beyond_the_range_of_its_squares():
    # G**2 overflowed (a Python OverflowError) or vanished; the norm grows like sqrt(G).
    unit = equilibrium_norm(0.1, 0.5, 1.0)
    assert equilibrium_norm(0.1, 0.5, 1e200) == pytest.approx(unit * 1e100, rel=1e-15)
    assert equilibrium_norm(0.1, 0.5, 1e-200) == pytest.approx(unit * 1e-100, rel=1e-15)
    assert equilibrium_norm(0.1, 0.5, 0.0) == 0.0
    with pytest.raises(LearningRateError, match="lr must be a finite real number, got True"):
        equilibrium_norm(True, 0.5, 1.0)


def test_loss_and_gradient_scale_w_whose_pre_activations_overflow():
    # f(c w) = f(w) and grad f(c w) = grad f(w) / c; X w overflowed for c = 2**1020.
    w = np.array([1.0, -2.0, 0.5, 3.0, 0.25])
    for c in (2.0**1020, 2.0**-1060):
        assert scale_invariant_loss(c * w, PROBLEM) == scale_invariant_loss(w, PROBLEM)
    g = scale_invariant_gradient(w, PROBLEM)
    np.testing.assert_array_equal(scale_invariant_gradient(2.0**1000 * w, PROBLEM), g * 2.0**-1000)
    np.testing.assert_array_equal(scale_invariant_gradient(2.0**-1000 * w, PROBLEM), g * 2.0**1000)
    with pytest.raises(ResultOverflowError, match="gradient at w is beyond float64's range"):
        scale_invariant_gradient(2.0**-1060 * w, PROBLEM)


def test_vjp_scales_z_and_upstream_whose_squares_leave_the_range():
    z, v = np.array([0.5, 2.0, -1.0, 4.0]), np.array([1.0, 0.0, -2.0, 0.5])
    exact = centered_normalize_vjp(z, v)
    np.testing.assert_array_equal(centered_normalize_vjp(z * 2.0**600, v), exact * 2.0**-600)
    np.testing.assert_array_equal(centered_normalize_vjp(z * 2.0**-600, v), exact * 2.0**600)
    np.testing.assert_array_equal(centered_normalize_vjp(z, v * 2.0**1020), exact * 2.0**1020)
    with pytest.raises(ResultOverflowError, match="upstream"):
        centered_normalize_vjp(z * 2.0**-600, v * 2.0**600)


def test_descent_refuses_an_overflowing_step_and_bad_settings_by_name():
    with pytest.raises(ResultOverflowError, match=r"step 1: w - lr \* g overflows.*smaller lr"):
        run_gradient_descent(np.ones(5) * 1e-10, PROBLEM, lr=1e308, steps=2)
    with pytest.raises(LearningRateError, match="lr must be a finite real number, got True"):
        run_gradient_descent(np.ones(5), PROBLEM, lr=True, steps=2)
    with pytest.raises(ShapeError, match="steps must be an integer >= 1, got nan"):
        run_gradient_descent(np.ones(5), PROBLEM, lr=0.1, steps=float("nan"))
    with pytest.raises(ShapeError, match="n must be an integer >= 2, got inf"):
        make_logistic_problem(seed=0, n=float("inf"))
    with pytest.raises(TypeError, match="LogisticProblem"):
        scale_invariant_loss(np.ones(5), (PROBLEM.X, PROBLEM.y))
    with pytest.raises(ShapeError, match="labels -1 and \\+1"):
        scale_invariant_loss(np.ones(5), LogisticProblem(PROBLEM.X, PROBLEM.y * 2))
    with pytest.raises(NonFiniteInputError, match="w holds nan"):
        scale_invariant_gradient(np.array([1.0, np.nan, 0, 0, 0]), PROBLEM)


def test_seeds_must_be_non_negative_integers():
    with pytest.raises(SeedError, match="seed must be an integer >= 0, got -1"):
        make_logistic_problem(seed=-1)  # numpy's ValueError
    with pytest.raises(SeedError, match=r"got 0\.5"):
        run_gradient_descent(np.ones(5), PROBLEM, lr=0.1, steps=1, batch_size=4, seed=0.5)


@pytest.mark.parametrize(
    ("w0", "error", "message"),
    [
        (np.ones(4), ShapeError, "w0 has shape"),
        (np.array([1.0, np.nan, 0.0, 0.0, 0.0]), NonFiniteInputError, "w0 holds nan"),
        (np.ones(5, dtype=complex), UnsupportedDtypeError, "w0 has dtype"),
    ],
)
def test_run_gradient_descent_names_w0(w0, error, message):
    # Before: the errors named ``w``, which run_gradient_descent has no parameter for.
    with pytest.raises(error, match=message):
        run_gradient_descent(w0, PROBLEM, lr=0.5, steps=2)
