"""Tests of trainable_harness.depth: the hand-written backward pass against central
differences of a forward pass written out again, shapes, the fitted rate, and refusals
that name the parameter."""

import math

import numpy as np
import pytest

from trainable_harness import depth
from trainable_harness.errors import (
    DepthSettingError,
    NonFiniteInputError,
    SeedError,
    TrainableError,
    UnsupportedDtypeError,
)


def _loss(weights, X0, R, variant, eps=1e-5):
    """Forward pass written out again, with no harness layer: the reference."""
    alpha = 1.0 / math.sqrt(len(weights)) if variant == "scaled" else 1.0
    X = X0
    for W in weights:
        H = X @ W
        Z = (H - H.mean(axis=0)) / np.sqrt(H.var(axis=0) + eps)
        A = np.maximum(Z, 0.0)
        X = A if variant == "plain" else X + alpha * A
    return float(np.sum(R * X))


@pytest.mark.parametrize("variant", depth.VARIANTS)
def test_input_gradient_matches_central_differences(variant):
    weights, X0, R = depth.draw_network(np.random.default_rng(11), 4, width=6, batch=5)
    loss, dX0 = depth.input_gradient(weights, X0, R, variant)
    assert loss == pytest.approx(_loss(weights, X0, R, variant), rel=1e-13)
    step = 1e-6
    numeric = np.empty_like(X0)
    for index in np.ndindex(*X0.shape):
        e = np.zeros_like(X0)
        e[index] = step
        numeric[index] = (
            _loss(weights, X0 + e, R, variant) - _loss(weights, X0 - e, R, variant)
        ) / (2 * step)
    # Truncation ~ step^2, rounding ~ 1e-16 / step; a dropped term is of order the gradient.
    # (A ReLU kink within step of a pre-activation would break this; seed 11 has none.)
    np.testing.assert_allclose(dX0, numeric, atol=1e-7 * np.abs(numeric).max())


def test_shapes_and_draw_order():
    weights, X0, R = depth.draw_network(np.random.default_rng(0), 3, width=4, batch=7)
    assert [W.shape for W in weights] == [(4, 4)] * 3
    assert X0.shape == R.shape == (7, 4)
    # The same seed gives every variant the same networks.
    again = depth.draw_network(np.random.default_rng(0), 3, width=4, batch=7)
    np.testing.assert_array_equal(again[1], X0)
    gains = depth.gain_profile(0, "plain", depths=(2, 3), width=8, batch=4)
    assert gains.shape == (2,) and (gains > 0).all()


def test_skipinit_zero_branch_scale_would_be_the_identity_and_one_block_is_not():
    # One residual block of scale alpha: the gain is the norm of R + alpha J^T R over |R|.
    weights, X0, R = depth.draw_network(np.random.default_rng(2), 1, width=8, batch=6)
    _, plain = depth.input_gradient(weights, X0, R, "plain")
    _, residual = depth.input_gradient(weights, X0, R, "residual")
    np.testing.assert_allclose(residual, R + plain, rtol=1e-13, atol=1e-15)
    assert depth.branch_scale("scaled", 1) == 1.0 and depth.branch_scale("scaled", 64) == 0.125


def test_plain_chain_explodes_and_scaled_branch_does_not():
    depths = (2, 8, 16)
    plain = depth.gain_profile(3, "plain", depths=depths, width=64, batch=32)
    scaled = depth.gain_profile(3, "scaled", depths=depths, width=64, batch=32)
    assert depth.per_layer_rate(depths, plain) > 1.3
    assert abs(depth.per_layer_rate(depths, scaled) - 1.0) < 0.02


def test_per_layer_rate_is_the_squared_growth_per_block():
    assert depth.per_layer_rate([2, 4, 8], [2.0, 4.0, 16.0]) == pytest.approx(2.0)
    assert depth.RELU_BN_SQUARED_RATE == pytest.approx(0.5 / (0.5 - 0.5 / math.pi))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: depth.draw_network(np.random.default_rng(0), 0), "depth must be an integer >= 1"),
        (lambda: depth.draw_network(np.random.default_rng(0), 2, width=0), "width must be"),
        (lambda: depth.draw_network(np.random.default_rng(0), 2, batch=1), "batch must be"),
        (lambda: depth.draw_network(np.random.default_rng(0), 2.5), "depth must be"),
        (lambda: depth.branch_scale("skip", 4), "variant must be one of"),
        (lambda: depth.gain_profile(0, "plain", depths=()), "depths must name"),
        (lambda: depth.input_gradient([], np.ones((2, 2)), np.ones((2, 2)), "plain"), "weights"),
        (
            lambda: depth.input_gradient([np.eye(2)], np.ones((1, 2)), np.ones((1, 2)), "plain"),
            "X0 must be",
        ),
        (lambda: depth.per_layer_rate([2, 2], [1.0, 2.0]), "two distinct depths"),
        (lambda: depth.per_layer_rate([2, 4], [1.0, 0.0]), "gains must be positive"),
        (lambda: depth.per_layer_rate([2, 4], [1.0]), "one length"),
    ],
)
def test_degenerate_settings_are_refused_by_name(call, message):
    with pytest.raises(DepthSettingError, match=message):
        call()


def test_other_refusals_come_from_the_shared_checks():
    with pytest.raises(SeedError, match="seed"):
        depth.gain_profile(-1, "plain")
    weights, X0, R = depth.draw_network(np.random.default_rng(0), 2, width=3, batch=4)
    with pytest.raises(TrainableError, match="eps"):
        depth.input_gradient(weights, X0, R, "plain", eps=-1.0)
    X0[0, 0] = np.nan
    with pytest.raises(TrainableError):
        depth.input_gradient(weights, X0, R, "plain")


@pytest.mark.parametrize(
    ("change", "error", "named"),
    [
        ({"R": np.ones((2, 3))}, DepthSettingError, "R has shape"),
        ({"R": np.full((4, 3), 1j)}, UnsupportedDtypeError, "R"),
        ({"X0": np.ones((4, 3), dtype=bool)}, UnsupportedDtypeError, "X0"),
        ({"X0": np.ones((4, 3), dtype=complex)}, UnsupportedDtypeError, "X0"),
        ({"weights": [np.eye(4)]}, DepthSettingError, r"weights\[0\] has shape"),
        ({"weights": [np.full((3, 3), np.nan)]}, NonFiniteInputError, r"weights\[0\]"),
        ({"weights": None}, DepthSettingError, "weights must be a list"),
    ],
)
def test_input_gradient_refuses_inputs_that_do_not_fit_by_name(change, error, named):
    # Before: complex inputs lost their imaginary part with a warning, bool ones were
    # read as 0/1, and shapes that do not fit raised numpy's broadcasting or matmul error.
    weights, X0, R = depth.draw_network(np.random.default_rng(0), 2, width=3, batch=4)
    arguments = {"weights": weights, "X0": X0, "R": R, **change}
    with pytest.raises(error, match=named):
        depth.input_gradient(arguments["weights"], arguments["X0"], arguments["R"], "plain")


@pytest.mark.parametrize(
    ("depths", "gains", "error", "named"),
    [
        ([2, 4, np.nan], [1.0, 2.0, 4.0], NonFiniteInputError, "depths"),
        ([2, 4], [1.0 + 0j, 2.0], UnsupportedDtypeError, "gains"),
    ],
)
def test_per_layer_rate_refuses_non_finite_or_complex_values(depths, gains, error, named):
    # Before: NaN depths reached numpy's least squares (LinAlgError: SVD did not
    # converge); complex gains lost their imaginary part.
    with pytest.raises(error, match=named):
        depth.per_layer_rate(depths, gains)
