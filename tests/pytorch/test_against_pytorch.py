"""The science package against an independent implementation: PyTorch, in float64.

Every layer the chapters measure is computed twice, by ``trainable_harness`` (numpy) and by
``torch.nn.functional`` (or autograd, for gradients), on the same random inputs, and the
two must agree to rounding. PyTorch is never a dependency of the book: these tests run in
an environment of their own (``make pytorch-check``: ``tests/pytorch/requirements.txt``).

Tolerances are rounding bounds, not fitted: each output is a short chain of float64
operations (a reduction over ``m`` values, a square root, a division, an affine map), so
two correct implementations differ by a small multiple of ``m`` units in the last place of
the largest magnitude involved. :func:`assert_rounding_close` allows ``8 m`` of them,
about 1e-13 here; a real mistake (a sample variance for a population one, eps outside the
root, a momentum on the wrong side) moves outputs by 1e-6 or more.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from trainable_harness import layers, normalization
from trainable_harness.digits import convnet
from trainable_harness.mlp import layers as mlp_layers

UNIT = np.finfo(np.float64).eps


def tensor(array) -> torch.Tensor:
    return torch.tensor(np.asarray(array), dtype=torch.float64)


def assert_rounding_close(ours, theirs, reduced: int, *, what: str) -> None:
    """``|ours - theirs| <= 8 m u max(1, max|theirs|)`` with ``m = reduced`` values summed."""
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    ours = np.asarray(ours)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    bound = 8 * reduced * UNIT * max(1.0, float(np.max(np.abs(theirs))))
    error = float(np.max(np.abs(ours - theirs)))
    assert error <= bound, f"{what}: differs from PyTorch by {error:.3g} (bound {bound:.3g})"


@pytest.fixture(params=[0, 1, 2], ids=lambda seed: f"seed{seed}")
def rng(request) -> np.random.Generator:
    return np.random.default_rng(request.param)


def affine(rng, channels: int):
    return rng.normal(1.0, 0.3, channels), rng.normal(0.0, 0.3, channels)


@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_batch_norm_in_train_mode(rng, eps):
    gamma, beta = affine(rng, 6)
    images = rng.normal(2.0, 3.0, (8, 6, 5, 4))  # (B, C, H, W)
    features = rng.normal(2.0, 3.0, (16, 6))  # (B, d)
    tokens = rng.normal(2.0, 3.0, (4, 7, 6))  # (B, T, d): features last
    g, b = tensor(gamma), tensor(beta)
    for X, theirs, m in (
        (images, F.batch_norm(tensor(images), None, None, g, b, True, 0.1, eps), 160),
        (features, F.batch_norm(tensor(features), None, None, g, b, True, 0.1, eps), 16),
        (
            tokens,
            F.batch_norm(
                tensor(tokens).transpose(1, 2), None, None, g, b, True, 0.1, eps
            ).transpose(1, 2),
            28,
        ),
    ):
        ours = layers.batch_norm(X, gamma, beta, eps=eps)
        assert_rounding_close(ours, theirs, m, what=f"batch norm of {X.shape}")


def test_layer_instance_and_group_norm(rng):
    gamma, beta = affine(rng, 6)
    g, b = tensor(gamma), tensor(beta)
    images = rng.normal(-1.0, 2.0, (3, 6, 5, 4))
    tokens = rng.normal(-1.0, 2.0, (4, 7, 6))
    cases = [
        (
            "layer norm (B, T, d)",
            layers.layer_norm(tokens, gamma, beta, eps=1e-5),
            F.layer_norm(tensor(tokens), (6,), g, b, 1e-5),
            6,
        ),
        # Layer norm of images, with a per-channel affine, is GroupNorm(1, C).
        (
            "layer norm (B, C, H, W)",
            layers.layer_norm(images, gamma, beta, eps=1e-5),
            F.group_norm(tensor(images), 1, g, b, 1e-5),
            120,
        ),
        (
            "instance norm",
            layers.instance_norm(images, gamma, beta, eps=1e-5),
            F.instance_norm(tensor(images), weight=g, bias=b, eps=1e-5),
            20,
        ),
    ]
    for groups in (1, 2, 3, 6):
        cases.append(
            (
                f"group norm, {groups} groups",
                layers.group_norm(images, gamma, beta, num_groups=groups, eps=1e-5),
                F.group_norm(tensor(images), groups, g, b, 1e-5),
                120 // groups,
            )
        )
    for what, ours, theirs, m in cases:
        assert_rounding_close(ours, theirs, m, what=what)


def test_the_vector_maps_and_their_jacobians(rng):
    """Eqs. 15.1-15.3: LayerNorm and RMSNorm without affine, and autograd's Jacobians."""
    vectors = rng.normal(3.0, 2.0, (5, 9))
    assert_rounding_close(
        normalization.centered_normalize(vectors, eps=1e-5),
        F.layer_norm(tensor(vectors), (9,), eps=1e-5),
        9,
        what="centered map (eq. 15.1)",
    )
    assert_rounding_close(
        normalization.rms_normalize(vectors, eps=1e-5),
        F.rms_norm(tensor(vectors), (9,), eps=1e-5),
        9,
        what="RMS map (eq. 15.2)",
    )
    for centered, torch_map in (
        (True, lambda z: F.layer_norm(z, (9,), eps=1e-5)),
        (False, lambda z: F.rms_norm(z, (9,), eps=1e-5)),
    ):
        x = vectors[0]
        assert_rounding_close(
            normalization.normalization_jacobian(x, centered=centered, eps=1e-5),
            torch.autograd.functional.jacobian(torch_map, tensor(x)),
            9,
            what=f"Jacobian (eq. 15.3), centered={centered}",
        )


@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_running_statistics_and_evaluation_mode(rng, momentum):
    """Eq. 16.5 with PyTorch's conventions: momentum weights the new batch, and the
    running variance is fed the batch's sample variance (divided by m - 1)."""
    gamma, beta = affine(rng, 6)
    module = torch.nn.BatchNorm2d(6, eps=1e-5, momentum=momentum).double()
    with torch.no_grad():
        module.weight.copy_(tensor(gamma))
        module.bias.copy_(tensor(beta))
    state = layers.BatchNormState.initial(6, momentum=momentum)
    for step in range(4):
        X = rng.normal(step, 2.0, (8, 6, 5, 4))
        ours, state = layers.batch_norm_train(X, gamma, beta, state, eps=1e-5)
        theirs = module.train()(tensor(X))
        assert_rounding_close(ours, theirs, 160, what=f"train-mode output, step {step}")
        assert_rounding_close(state.running_mean, module.running_mean, 160, what="running mean")
        assert_rounding_close(
            state.running_variance, module.running_var, 160, what="running variance"
        )
    X = rng.normal(0.0, 1.0, (3, 6, 5, 4))
    assert_rounding_close(
        layers.batch_norm_eval(X, gamma, beta, state, eps=1e-5),
        module.eval()(tensor(X)),
        1,
        what="eval-mode output",
    )


@pytest.mark.parametrize(("stride", "padding"), [(1, 0), (2, 1), (3, 2)])
def test_convolution_and_folding(rng, stride, padding):
    X = rng.normal(0.0, 1.0, (3, 4, 9, 7))
    K = rng.normal(0.0, 1.0, (5, 4, 3, 2))
    bias = rng.normal(0.0, 1.0, 5)
    gamma, beta = affine(rng, 5)
    state = layers.BatchNormState(rng.normal(0.0, 1.0, 5), rng.uniform(0.5, 2.0, 5))
    convolved = F.conv2d(tensor(X), tensor(K), tensor(bias), stride=stride, padding=padding)
    assert_rounding_close(
        layers.conv2d(X, K, bias, stride=stride, padding=padding),
        convolved,
        24,
        what="convolution",
    )

    def evaluated(z):  # PyTorch's batch norm in evaluation mode, on the state's statistics
        mean, variance = tensor(state.running_mean), tensor(state.running_variance)
        return F.batch_norm(z, mean, variance, tensor(gamma), tensor(beta), False, 0.1, 1e-3)

    K_folded, b_folded = layers.fold_batch_norm_into_conv2d(K, bias, gamma, beta, state, eps=1e-3)
    assert_rounding_close(
        F.conv2d(tensor(X), tensor(K_folded), tensor(b_folded), stride=stride, padding=padding),
        evaluated(convolved),
        24,
        what="convolution with batch norm folded in (eq. 16.6)",
    )
    W = rng.normal(0.0, 1.0, (5, 4))
    rows = rng.normal(0.0, 1.0, (6, 4))
    W_folded, b_folded = layers.fold_batch_norm_into_linear(W, bias, gamma, beta, state, eps=1e-3)
    assert_rounding_close(
        layers.linear(rows, W_folded, b_folded),
        evaluated(F.linear(tensor(rows), tensor(W), tensor(bias))),
        4,
        what="linear layer with batch norm folded in (eq. 16.6)",
    )


def test_the_written_out_batch_norm_backward_pass(rng):
    Z = rng.normal(1.0, 2.0, (2, 10, 4))  # two replicas, 10 examples, 4 features
    gamma, beta = rng.normal(1.0, 0.3, (2, 4)), rng.normal(0.0, 0.3, (2, 4))
    upstream = rng.normal(0.0, 1.0, Z.shape)
    Y, cache = mlp_layers.batch_norm_forward(Z, gamma, beta, eps=1e-5)
    dZ, dgamma, dbeta = mlp_layers.batch_norm_backward(upstream, cache, gamma)
    for replica in range(2):
        z, g, b = (tensor(a[replica]).requires_grad_() for a in (Z, gamma, beta))
        y = F.batch_norm(z, None, None, g, b, True, 0.1, 1e-5)
        (y * tensor(upstream[replica])).sum().backward()
        for what, ours, theirs in (
            ("output", Y[replica], y),
            ("dZ", dZ[replica], z.grad),
            ("dgamma", dgamma[replica], g.grad),
            ("dbeta", dbeta[replica], b.grad),
        ):
            assert_rounding_close(ours, theirs, 10, what=f"batch norm {what}")


def _torch_convnet(net: convnet.ConvNet, replica: int, images, labels):
    """The digits network of replica ``replica`` in PyTorch: loss, leaves, running stats."""
    kind = net.kinds[replica]
    leaves = {
        name: tensor(getattr(net, name)[replica]).requires_grad_() for name in convnet.PARAMETERS
    }
    c1, c2 = convnet.CHANNELS
    # Kernel rows are ordered (u, v, input channel): to PyTorch's (out, in, u, v).
    K1 = leaves["K1"].reshape(3, 3, 1, c1).permute(3, 2, 0, 1)
    K2 = leaves["K2"].reshape(3, 3, c1, c2).permute(3, 2, 0, 1)
    running = {}

    def norm(z, layer):
        gamma, beta = leaves[f"gamma{layer}"], leaves[f"beta{layer}"]
        if kind == "none":
            return z * gamma[None, :, None, None] + beta[None, :, None, None]
        if kind == "batch":
            mean = tensor(getattr(net, f"running_mean{layer}")[replica])
            variance = tensor(getattr(net, f"running_variance{layer}")[replica])
            running[layer] = (mean, variance)  # updated in place by F.batch_norm
            return F.batch_norm(
                z, mean, variance, gamma, beta, True, convnet.MOMENTUM, convnet.EPS
            )
        groups = convnet.GROUPS if kind == "group" else 1
        return F.group_norm(z, groups, gamma, beta, convnet.EPS)

    x = tensor(images)[:, None]
    a1 = F.relu(norm(F.conv2d(x, K1, stride=convnet.STRIDES[0], padding=1), 1))
    a2 = F.relu(norm(F.conv2d(a1, K2, stride=convnet.STRIDES[1], padding=1), 2))
    logits = a2.mean(dim=(2, 3)) @ leaves["W"] + leaves["c"]
    loss = F.cross_entropy(logits, torch.tensor(labels))
    loss.backward()
    return loss, leaves, running


def test_the_digits_network_loss_gradients_and_running_statistics(rng):
    images = rng.uniform(0.0, 1.0, (6, 8, 8))
    labels = rng.integers(0, convnet.CLASSES, 6)
    net = convnet.init_convnet(convnet.KINDS, rng)
    before = convnet.ConvNet(net.kinds, *(np.copy(a) for a in net[1:]))
    loss, grads = convnet.loss_and_gradients(net, images, labels)
    for replica, kind in enumerate(net.kinds):
        their_loss, leaves, running = _torch_convnet(before, replica, images, labels)
        assert_rounding_close(loss[replica], their_loss, 288, what=f"{kind}: loss")
        for name in convnet.PARAMETERS:
            assert_rounding_close(
                grads[name][replica], leaves[name].grad, 288, what=f"{kind}: d loss / d {name}"
            )
        for layer, (mean, variance) in running.items():
            assert_rounding_close(
                getattr(net, f"running_mean{layer}")[replica],
                mean,
                96,
                what=f"running mean {layer}",
            )
            assert_rounding_close(
                getattr(net, f"running_variance{layer}")[replica],
                variance,
                96,
                what=f"running variance {layer}",
            )
