"""A small convolutional network on 8 x 8 images, every backward pass written out.

``conv 3x3 stride 2 (1 -> C1) -> norm -> ReLU -> conv 3x3 (C1 -> C2) -> norm -> ReLU ->
global average pool -> linear (C2 -> 10) -> softmax cross-entropy``, with
``(C1, C2) = CHANNELS``: 8 x 8 pixels, then 4 x 4 positions in both layers.
Activations are channels-last, ``(R, B, P, C)``: ``R`` replicas (networks trained side by
side, each with its own weights, learning rate and kind of normalization; they never
mix), ``B`` images, ``P = H W`` positions. A convolution is a matrix product of the
image patches (im2col) with the kernel ``(R, 9 C_in, C_out)``; it has no bias, because
every norm layer is followed by a per-channel affine ``gamma x_hat + beta`` (for
``"none"`` that affine is the bias).

Normalization (eqs. 16.1-16.4), per kind, each a standardization over a reduction set:

- ``"batch"``: per channel, over the batch and the positions ``(B, P)``;
- ``"group"``: per image and group of ``C / GROUPS`` consecutive channels, over the
  group's channels and the positions;
- ``"layer"``: per image, over all channels and positions (group norm with one group);
- ``"none"``: the identity.

The standardization is ``x_hat = (x - mean) / sqrt(population_variance + eps)``, mean and
population variance (divided by ``m``) of the reduction set, eps inside the harness's one
root (:func:`~trainable_harness.normalization.root_of_sum`). It is computed as written,
two passes without scaling: activations here are of order 1, and this is the training
loop's hot path, where :func:`trainable_harness.layers.standardize` (which scales before
squaring) costs five times as much. Its backward pass is
``dx = (d_hat - mean(d_hat) - x_hat mean(d_hat x_hat)) / sqrt(population_variance + eps)``.

In evaluation mode batch norm uses its running statistics (eq. 16.5, momentum
``MOMENTUM``, the running variance fed with the batch's sample variance, divided by
``m - 1``, as PyTorch does), or, when asked, the statistics of the evaluated batch.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.errors import DigitsError, check_real_array
from trainable_harness.normalization import root_of_sum, validated_eps

__all__ = [
    "CHANNELS",
    "CLASSES",
    "EPS",
    "GROUPS",
    "KINDS",
    "MOMENTUM",
    "PARAMETERS",
    "ConvNet",
    "cross_entropy",
    "forward",
    "init_convnet",
    "loss_and_gradients",
    "normalization_axes",
]

KINDS = ("none", "batch", "group", "layer")
CHANNELS = (8, 32)  # output channels of the two convolutions
GROUPS = 4  # group norm: 4 groups, of 2 channels (first layer) and 8 (second)
CLASSES = 10
SIDE = 8  # the images are 8 x 8
STRIDES = (2, 1)  # 8 x 8 -> 4 x 4 -> 4 x 4: the first layer's stride sets the cost
EPS = 1e-5  # PyTorch's default, added to the population variance inside the root
MOMENTUM = 0.1  # weight of the new batch in the running statistics (PyTorch's default)
PARAMETERS = ("K1", "gamma1", "beta1", "K2", "gamma2", "beta2", "W", "c")


class ConvNet(NamedTuple):
    """Weights and running statistics of ``R`` replicas (leading axis of every array).

    ``K1 (R, 9, C)``, ``K2 (R, 9 C, C)``: kernels, rows ordered (u, v, input channel);
    ``gamma*, beta* (R, C)``; ``W (R, C, 10)``, ``c (R, 10)``: the classifier;
    ``running_mean*, running_variance* (R, C)``: batch norm's running statistics
    (kept, unused, for the other kinds); ``kinds``: one kind per replica.
    """

    kinds: tuple
    K1: np.ndarray
    gamma1: np.ndarray
    beta1: np.ndarray
    K2: np.ndarray
    gamma2: np.ndarray
    beta2: np.ndarray
    W: np.ndarray
    c: np.ndarray
    running_mean1: np.ndarray
    running_variance1: np.ndarray
    running_mean2: np.ndarray
    running_variance2: np.ndarray


def _check_kinds(kinds) -> tuple:
    if isinstance(kinds, str) or not isinstance(kinds, tuple | list) or not kinds:
        raise DigitsError(f"kinds must be a non-empty sequence of {KINDS}, got {kinds!r}")
    for kind in kinds:
        if kind not in KINDS:
            raise DigitsError(f"kinds: unknown normalization {kind!r}; choose from {KINDS}")
    return tuple(kinds)


def init_convnet(kinds, rng: np.random.Generator) -> ConvNet:
    """He-initialized weights (``N(0, 2 / fan_in)``) for one replica per entry of ``kinds``.

    ``gamma = 1``, ``beta = 0``, the classifier ``N(0, 1 / C)`` with bias 0; running means
    0 and variances 1 (PyTorch's start).

    Raises
    ------
    DigitsError
        ``kinds`` empty or holding a name outside ``KINDS``.
    """
    kinds = _check_kinds(kinds)
    R, (C1, C2) = len(kinds), CHANNELS
    return ConvNet(
        kinds,
        rng.normal(0.0, np.sqrt(2.0 / 9), (R, 9, C1)),
        np.ones((R, C1)),
        np.zeros((R, C1)),
        rng.normal(0.0, np.sqrt(2.0 / (9 * C1)), (R, 9 * C1, C2)),
        np.ones((R, C2)),
        np.zeros((R, C2)),
        rng.normal(0.0, np.sqrt(1.0 / C2), (R, C2, CLASSES)),
        np.zeros((R, CLASSES)),
        np.zeros((R, C1)),
        np.ones((R, C1)),
        np.zeros((R, C2)),
        np.ones((R, C2)),
    )


def normalization_axes(kind: str) -> tuple[int, ...]:
    """Reduction axes of ``kind`` on activations grouped as ``(R, B, P, G, C / G)``.

    Batch norm takes one group per channel (``G = C``), layer norm one group (``G = 1``),
    group norm ``G = GROUPS``; see :func:`_groups`.

    >>> normalization_axes("batch"), normalization_axes("group"), normalization_axes("layer")
    ((1, 2, 4), (2, 4), (2, 4))
    """
    if kind == "batch":
        return (1, 2, 4)
    if kind in ("group", "layer"):
        return (2, 4)
    raise DigitsError(f"kind {kind!r} has no reduction set; choose from {KINDS[1:]}")


def _groups(kind: str, channels: int) -> int:
    return {"batch": channels, "group": GROUPS, "layer": 1}[kind]


def _segments(kinds: tuple):
    """``(kind, slice)`` for each run of equal kinds along the replica axis."""
    start = 0
    for end in range(1, len(kinds) + 1):
        if end == len(kinds) or kinds[end] != kinds[start]:
            yield kinds[start], slice(start, end)
            start = end


def _set_sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Sum over ``axes`` (kept, length 1), one axis at a time: numpy reduces one axis of a
    5-D array several times faster than two non-adjacent ones at once."""
    for axis in sorted(axes, reverse=True):
        x = x.sum(axis=axis, keepdims=True)
    return x


def _standardize(Z: np.ndarray, kind: str, eps: float):
    """Train-mode standardization of ``Z (r, B, P, C)``: ``(x_hat, 1/root, mean, var)``.

    ``mean`` and ``population_variance`` (divided by ``m``, the size of the reduction set)
    keep the grouped shape ``(r, B, P, G, C / G)`` with the reduced axes of length 1.
    """
    G = _groups(kind, Z.shape[-1])
    grouped = Z.reshape(*Z.shape[:3], G, Z.shape[-1] // G)
    axes = normalization_axes(kind)
    m = int(np.prod([grouped.shape[a] for a in axes]))
    mean = _set_sum(grouped, axes) / m
    centered = grouped - mean
    population_variance = _set_sum(centered * centered, axes) / m
    inverse_root = 1.0 / root_of_sum(population_variance, eps)
    centered *= inverse_root
    return centered.reshape(Z.shape), inverse_root, mean, population_variance


def _standardize_backward(d_hat: np.ndarray, Z_hat: np.ndarray, inverse_root, kind: str):
    """``(d_hat - mean(d_hat) - x_hat mean(d_hat x_hat)) / root`` over the reduction set."""
    G = _groups(kind, Z_hat.shape[-1])
    shape = (*Z_hat.shape[:3], G, Z_hat.shape[-1] // G)
    d, z = d_hat.reshape(shape), Z_hat.reshape(shape)
    axes = normalization_axes(kind)
    m = int(np.prod([shape[a] for a in axes]))
    dZ = d - _set_sum(d, axes) / m
    dZ -= z * (_set_sum(d * z, axes) / m)
    dZ *= inverse_root
    return dZ.reshape(d_hat.shape)


def _conv(A: np.ndarray, K: np.ndarray, stride: int):
    """3 x 3 convolution, padding 1: ``A (R, B, H, W, C_in)`` -> ``((R, B, P', C_out), cols)``.

    im2col: ``cols (R, B P', 9 C_in)`` holds each output position's 3 x 3 patch, ordered
    (u, v, input channel) like the rows of ``K (R, 9 C_in, C_out)``; the output is
    ``cols K``.
    """
    R, B, H, W, C = A.shape
    Ho, Wo = (H - 1) // stride + 1, (W - 1) // stride + 1
    padded = np.pad(A, ((0, 0), (0, 0), (1, 1), (1, 1), (0, 0)))
    shifts = [
        padded[:, :, u : u + stride * Ho : stride, v : v + stride * Wo : stride]
        for u in range(3)
        for v in range(3)
    ]
    cols = np.concatenate(shifts, axis=-1).reshape(R, B * Ho * Wo, 9 * C)
    return np.matmul(cols, K).reshape(K.shape[0], B, Ho * Wo, K.shape[-1]), cols


def _conv_input_gradient(dcols: np.ndarray, shape: tuple, stride: int) -> np.ndarray:
    """col2im: the gradient of :func:`_conv`'s input ``(R, B, H, W, C)`` from its cols'."""
    R, B, H, W, C = shape
    Ho, Wo = (H - 1) // stride + 1, (W - 1) // stride + 1
    d = dcols.reshape(R, B, Ho, Wo, 9, C)
    padded = np.zeros((R, B, H + 2, W + 2, C))
    for k in range(9):
        u, v = divmod(k, 3)
        padded[:, :, u : u + stride * Ho : stride, v : v + stride * Wo : stride] += d[..., k, :]
    return padded[:, :, 1:-1, 1:-1]


def _normalize(net: ConvNet, Z, layer: int, mode: str, eps: float, caches: list):
    """Norm and affine of layer ``layer`` (1 or 2) on ``Z (R, B, P, C)``; updates running stats."""
    gamma, beta = getattr(net, f"gamma{layer}"), getattr(net, f"beta{layer}")
    Z_hat = np.empty_like(Z)
    inverse_roots = {}
    for kind, part in _segments(net.kinds):
        if kind == "none":
            Z_hat[part] = Z[part]
        elif kind == "batch" and mode == "running":
            mean = getattr(net, f"running_mean{layer}")[part][:, None, None, :]
            variance = getattr(net, f"running_variance{layer}")[part][:, None, None, :]
            Z_hat[part] = (Z[part] - mean) / root_of_sum(variance, eps)
        else:
            Z_hat[part], inverse_roots[part.start], mean, variance = _standardize(
                Z[part], kind, eps
            )
            if kind == "batch" and mode == "train":
                _update_running(net, layer, part, mean, variance, Z.shape[1] * Z.shape[2])
    caches.append((Z_hat, inverse_roots))
    return Z_hat * gamma[:, None, None, :] + beta[:, None, None, :]


def _update_running(net: ConvNet, layer: int, part: slice, mean, population_variance, m: int):
    """Eq. 16.5 in place: ``running <- (1 - MOMENTUM) running + MOMENTUM batch``."""
    if m < 2:
        raise DigitsError("batch norm's running variance needs B H W >= 2 values per channel")
    mean = mean.reshape(mean.shape[0], -1)
    sample_variance = population_variance.reshape(mean.shape) * (m / (m - 1))
    for name, batch in (
        (f"running_mean{layer}", mean),
        (f"running_variance{layer}", sample_variance),
    ):
        running = getattr(net, name)
        running[part] = (1.0 - MOMENTUM) * running[part] + MOMENTUM * batch


def _check_labels(labels, count: int, classes: int = CLASSES) -> np.ndarray:
    """``labels`` as a 1-D integer array of ``count`` classes in ``[0, classes)``.

    A negative label would silently index from the end (``logits[..., -1]``).
    """
    array = np.asarray(labels)
    if array.dtype.kind not in "iu" or array.shape != (count,):
        raise DigitsError(
            f"labels must be a 1-D integer array holding one label per image ({count}), "
            f"got {array.dtype} of shape {array.shape}"
        )
    if count and not (0 <= array.min() and array.max() < classes):
        raise DigitsError(
            f"labels must lie in [0, {classes}), got values from {array.min()} to {array.max()}"
        )
    return array


def forward(net: ConvNet, images: np.ndarray, mode: str = "train", eps: float = EPS):
    """Logits ``(R, B, 10)`` of every replica for images ``(B, 8, 8)`` or ``(R, B, 8, 8)``.

    ``mode``: ``"train"`` (batch statistics; batch norm's running statistics are updated
    in place), ``"batch"`` (batch statistics, nothing updated: evaluation with the
    evaluated batch's statistics) or ``"running"`` (batch norm uses its running
    statistics; group and layer norm are the same in every mode).

    Returns ``(logits, cache)``; the cache feeds :func:`loss_and_gradients`.

    Raises
    ------
    DigitsError
        An unknown ``mode``, or images of another shape.
    UnsupportedDtypeError
        Images of a dtype that is not real (floating or integer).
    NonFiniteInputError, NegativeEpsilonError
        NaN/inf in ``images`` (index named), or an ``eps`` that is not a real number ``>= 0``.
    """
    if mode not in ("train", "batch", "running"):
        raise DigitsError(f"mode must be 'train', 'batch' or 'running', got {mode!r}")
    eps = validated_eps(eps)
    images = check_real_array(images, "images")
    if images.ndim == 3:
        images = images[None]
    if (
        images.ndim != 4
        or images.shape[-2:] != (SIDE, SIDE)
        or images.shape[0] not in (1, len(net.kinds))
    ):
        raise DigitsError(
            f"images must be (B, {SIDE}, {SIDE}) or (R, B, {SIDE}, {SIDE}) with R = "
            f"{len(net.kinds)} replicas, got shape {images.shape}"
        )
    R, B = len(net.kinds), images.shape[1]
    caches: list = []
    Z1, cols1 = _conv(images[..., None], net.K1, stride=STRIDES[0])
    Y1 = _normalize(net, Z1, 1, mode, eps, caches)
    A1 = np.maximum(Y1, 0.0)
    side = (SIDE - 1) // STRIDES[0] + 1
    Z2, cols2 = _conv(A1.reshape(R, B, side, side, CHANNELS[0]), net.K2, stride=STRIDES[1])
    Y2 = _normalize(net, Z2, 2, mode, eps, caches)
    A2 = np.maximum(Y2, 0.0)
    pooled = A2.mean(axis=2)
    logits = np.matmul(pooled, net.W) + net.c[:, None, :]
    return logits, (cols1, Y1, cols2, Y2, pooled, caches)


def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean over the batch of ``logsumexp(logits) - logits[label]``, per replica ``(R,)``.

    ``logits`` is ``(R, B, classes)`` of a floating dtype, ``labels`` ``(B,)`` integers in
    ``[0, classes)`` (refused otherwise with :class:`DigitsError`). Non-finite logits are
    not refused: a diverged replica's loss is NaN or inf, which is how training detects
    divergence.
    """
    logits = np.asarray(logits)
    if logits.ndim != 3 or logits.dtype.kind != "f" or logits.shape[-1] == 0:
        raise DigitsError(
            f"logits must be a floating (R, B, classes) array, got {logits.dtype} of shape "
            f"{logits.shape}"
        )
    labels = _check_labels(labels, logits.shape[1], logits.shape[2])
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=-1))
    picked = shifted[:, np.arange(shifted.shape[1]), labels]
    return (log_norm - picked).mean(axis=-1)


def loss_and_gradients(net: ConvNet, images, labels, eps: float = EPS):
    """Train-mode loss ``(R,)`` and gradients (a dict over ``PARAMETERS``) of every replica.

    Runs :func:`forward` in train mode (so batch norm's running statistics move by one
    update, eq. 16.5) and the backward pass of every layer.
    """
    images = check_real_array(images, "images")
    # Checked before the forward pass, which moves batch norm's running statistics.
    labels = _check_labels(labels, images.shape[-3] if images.ndim >= 3 else -1)
    logits, (cols1, Y1, cols2, Y2, pooled, caches) = forward(net, images, "train", eps)
    R, B = logits.shape[:2]
    loss = cross_entropy(logits, labels)
    probabilities = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    dlogits = probabilities
    dlogits[:, np.arange(B), labels] -= 1.0
    dlogits /= B
    grads = {"c": dlogits.sum(axis=1), "W": np.matmul(np.swapaxes(pooled, 1, 2), dlogits)}
    dpooled = np.matmul(dlogits, np.swapaxes(net.W, 1, 2))
    P2 = Y2.shape[2]
    dY2 = np.broadcast_to(dpooled[:, :, None, :] / P2, Y2.shape) * (Y2 > 0.0)
    dZ2 = _affine_norm_backward(net, dY2, 2, caches[1], grads)
    dZ2_flat = dZ2.reshape(R, -1, CHANNELS[1])
    grads["K2"] = np.matmul(np.swapaxes(cols2, 1, 2), dZ2_flat)
    dcols2 = np.matmul(dZ2_flat, np.swapaxes(net.K2, 1, 2))
    side = (SIDE - 1) // STRIDES[0] + 1
    dA1 = _conv_input_gradient(dcols2, (R, B, side, side, CHANNELS[0]), stride=STRIDES[1])
    dY1 = dA1.reshape(Y1.shape) * (Y1 > 0.0)
    dZ1 = _affine_norm_backward(net, dY1, 1, caches[0], grads)
    grads["K1"] = np.matmul(np.swapaxes(cols1, 1, 2), dZ1.reshape(R, -1, CHANNELS[0]))
    return loss, grads


def _affine_norm_backward(net: ConvNet, dY, layer: int, cache, grads: dict):
    Z_hat, inverse_roots = cache
    gamma = getattr(net, f"gamma{layer}")
    grads[f"gamma{layer}"] = (dY * Z_hat).sum(axis=(1, 2))
    grads[f"beta{layer}"] = dY.sum(axis=(1, 2))
    d_hat = dY * gamma[:, None, None, :]
    dZ = np.empty_like(d_hat)
    for kind, part in _segments(net.kinds):
        if kind == "none":
            dZ[part] = d_hat[part]
        else:
            dZ[part] = _standardize_backward(
                d_hat[part], Z_hat[part], inverse_roots[part.start], kind
            )
    return dZ
