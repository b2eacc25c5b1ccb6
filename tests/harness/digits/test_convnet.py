"""Tests of trainable_harness.digits.convnet: shapes, refusals, the backward pass against
central differences, and the four normalizations against the harness's layers."""

import numpy as np
import pytest

from trainable_harness import layers
from trainable_harness.digits import convnet
from trainable_harness.digits.checks import batch_dependence, gradient_error
from trainable_harness.digits.convnet import (
    CHANNELS,
    KINDS,
    forward,
    init_convnet,
    loss_and_gradients,
)
from trainable_harness.errors import (
    DigitsError,
    NegativeEpsilonError,
    NonFiniteInputError,
    UnsupportedDtypeError,
)

RNG = np.random.default_rng(7)
Z = RNG.normal(size=(1, 5, 16, 8)) * 3.0 + 1.0  # (R, B, P, C): 5 images, 4 x 4 positions


def as_nchw(Z):
    """(1, B, P, C) -> (B, C, H, W), the layout of trainable_harness.layers."""
    B, P, C = Z.shape[1:]
    side = int(np.sqrt(P))
    return Z[0].reshape(B, side, side, C).transpose(0, 3, 1, 2)


def test_forward_shapes_for_shared_and_per_replica_images():
    net = init_convnet(KINDS, np.random.default_rng(0))
    logits, _ = forward(net, RNG.normal(size=(3, 8, 8)), "batch")
    assert logits.shape == (4, 3, 10)
    logits, _ = forward(net, RNG.normal(size=(4, 3, 8, 8)), "running")
    assert logits.shape == (4, 3, 10)


@pytest.mark.parametrize(
    ("kinds", "word"),
    [("batch", "kinds"), ((), "kinds"), (("batch", "instance"), "instance")],
)
def test_init_refuses_bad_kinds(kinds, word):
    with pytest.raises(DigitsError, match=word):
        init_convnet(kinds, np.random.default_rng(0))


def test_forward_refuses_a_bad_mode_and_bad_images():
    net = init_convnet(("group",), np.random.default_rng(0))
    with pytest.raises(DigitsError, match="mode"):
        forward(net, np.zeros((2, 8, 8)), "eval")
    with pytest.raises(DigitsError, match="images"):
        forward(net, np.zeros((2, 7, 8)), "batch")
    with pytest.raises(DigitsError, match="replicas"):
        forward(net, np.zeros((3, 2, 8, 8)), "batch")


def test_none_has_no_reduction_set():
    with pytest.raises(DigitsError, match="reduction set"):
        convnet.normalization_axes("none")


@pytest.mark.parametrize("kind", ["batch", "group", "layer"])
def test_standardization_equals_the_harness_layers(kind):
    # The harness's layers scale before squaring; on values of order 1 the two agree to
    # a few roundings.
    gamma, beta = np.ones(8), np.zeros(8)
    x_hat = convnet._standardize(Z, kind, 1e-5)[0]
    X = as_nchw(Z)
    expected = {
        "batch": lambda: layers.batch_norm(X, gamma, beta, eps=1e-5),
        "group": lambda: layers.group_norm(X, gamma, beta, num_groups=convnet.GROUPS, eps=1e-5),
        "layer": lambda: layers.layer_norm(X, gamma, beta, eps=1e-5),
    }[kind]()
    np.testing.assert_allclose(as_nchw(x_hat), expected, rtol=0, atol=1e-14)


def test_group_norm_with_one_group_is_layer_norm(monkeypatch):
    monkeypatch.setattr(convnet, "GROUPS", 1)
    group = convnet._standardize(Z, "group", 1e-5)[0]
    layer = convnet._standardize(Z, "layer", 1e-5)[0]
    np.testing.assert_array_equal(group, layer)


def test_batch_norm_train_mode_has_zero_mean_and_unit_variance_per_channel():
    x_hat, _, _, variance = convnet._standardize(Z, "batch", 0.0)
    np.testing.assert_allclose(x_hat.mean(axis=(0, 1, 2)), 0.0, atol=1e-15)
    np.testing.assert_allclose(x_hat.var(axis=(0, 1, 2)), 1.0, rtol=1e-14)
    # Population variance, divided by m = B P, not m - 1.
    np.testing.assert_allclose(variance.ravel(), Z.var(axis=(0, 1, 2)), rtol=1e-14)


def test_eps_sits_inside_the_root():
    x_hat = convnet._standardize(Z, "batch", 4.0)[0]
    centered = Z - Z.mean(axis=(1, 2), keepdims=True)
    expected = centered / np.sqrt(Z.var(axis=(1, 2), keepdims=True) + 4.0)
    np.testing.assert_allclose(x_hat, expected, rtol=1e-13, atol=1e-15)


def test_the_backward_pass_matches_central_differences():
    assert gradient_error(seed=3) < 1e-6


def test_loss_and_gradients_has_a_gradient_per_parameter_and_moves_running_state():
    net = init_convnet(KINDS, np.random.default_rng(1))
    before = net.running_mean1.copy()
    loss, grads = loss_and_gradients(net, RNG.normal(size=(4, 8, 8)), np.array([0, 1, 2, 3]))
    assert loss.shape == (4,) and sorted(grads) == sorted(convnet.PARAMETERS)
    for name, grad in grads.items():
        assert grad.shape == getattr(net, name).shape
    moved = np.abs(net.running_mean1 - before).max(axis=1)
    assert moved[1] > 0 and (moved[[0, 2, 3]] == 0).all()  # only batch norm keeps a state


def test_only_batch_norm_depends_on_the_batch_and_never_in_evaluation_mode():
    net = init_convnet(KINDS, np.random.default_rng(2))
    images = RNG.normal(size=(6, 8, 8))
    train_mode = batch_dependence(net, images, "batch")
    assert train_mode[1] > 1e-3
    assert (train_mode[[0, 2, 3]] < 1e-13).all()
    assert (batch_dependence(net, images, "running") < 1e-13).all()


def test_running_variance_is_the_sample_variance_with_momentum():
    net = init_convnet(("batch",), np.random.default_rng(3))
    images = RNG.normal(size=(2, 8, 8))
    forward(net, images, "train")
    _, _, mean, population_variance = convnet._standardize(
        convnet._conv(images[None, ..., None], net.K1, convnet.STRIDES[0])[0], "batch", 1e-5
    )
    m = 2 * 16  # two images of 4 x 4 positions
    expected = 0.9 * 1.0 + 0.1 * population_variance.ravel() * m / (m - 1)
    np.testing.assert_allclose(net.running_variance1[0], expected, rtol=1e-14)
    np.testing.assert_allclose(net.running_mean1[0], 0.1 * mean.ravel(), rtol=1e-14)


def test_channels_and_groups_divide():
    assert all(c % convnet.GROUPS == 0 for c in CHANNELS)


IMAGES = RNG.random((4, 8, 8))
LABELS = np.array([0, 1, 2, 9])


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (-LABELS, r"labels must lie in \[0, 10\)"),
        (LABELS + 1, r"labels must lie in \[0, 10\)"),
        (LABELS[:2], "one label per image"),
        (LABELS + 0.0, "one label per image"),
        (LABELS > 0, "one label per image"),
    ],
)
def test_bad_labels_are_refused_before_anything_moves(labels, message):
    # Before: a negative label silently indexed from the end (a wrong, finite loss);
    # others raised numpy's IndexError after the forward pass had moved batch norm's
    # running statistics.
    net = init_convnet(("batch",), np.random.default_rng(0))
    running = net.running_mean1.copy()
    with pytest.raises(DigitsError, match=message):
        loss_and_gradients(net, IMAGES, labels)
    np.testing.assert_array_equal(net.running_mean1, running)
    logits, _ = forward(net, IMAGES, "batch")
    with pytest.raises(DigitsError, match=message):
        convnet.cross_entropy(logits, labels)


@pytest.mark.parametrize(
    ("images", "eps", "error", "named"),
    [
        (
            np.where(np.arange(64).reshape(8, 8) == 5, np.nan, IMAGES),
            1e-5,
            NonFiniteInputError,
            "images",
        ),
        (IMAGES.astype(complex), 1e-5, UnsupportedDtypeError, "images"),
        (IMAGES, -1.0, NegativeEpsilonError, "eps"),
        (IMAGES, float("nan"), NonFiniteInputError, "eps"),
    ],
)
def test_forward_refuses_non_finite_images_and_a_bad_eps(images, eps, error, named):
    # Before: NaN logits, or the imaginary part dropped with a ComplexWarning.
    net = init_convnet(("batch", "group"), np.random.default_rng(0))
    with pytest.raises(error, match=named):
        forward(net, images, "train", eps)


def test_cross_entropy_keeps_non_finite_logits_for_divergence_detection():
    logits = np.zeros((2, 4, 10))
    logits[1, 0, 0] = np.nan
    loss = convnet.cross_entropy(logits, LABELS)
    assert np.isfinite(loss[0]) and np.isnan(loss[1])
