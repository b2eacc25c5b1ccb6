"""Gradients of deep batch-normalized networks at initialization, against depth.

Chapter 16, section "Depth at initialization". A stack of ``L`` fully connected blocks of
width ``d`` runs on a batch of ``B`` inputs ``X_0`` with N(0, 1) entries. Block ``l`` is
``A_l = relu(BN(X_{l-1} W_l))``, ``W_l`` with N(0, 1/d) entries and batch norm in train
mode (eqs. 16.1-16.4, ``gamma = 1``, ``beta = 0``, eps 1e-5), and the variants differ only
in how it updates the stream ``X``:

- ``plain``: ``X_l = A_l``, no skip connection;
- ``residual``: ``X_l = X_{l-1} + A_l``;
- ``scaled``: ``X_l = X_{l-1} + alpha A_l`` with ``alpha = 1/sqrt(L)``, the residual
  branch scaled down as SkipInit and Fixup do at initialization.

The loss is ``sum(R * X_L)`` for a fixed random ``R``; the backward pass is written out
(batch norm's is :func:`trainable_harness.mlp.batch_norm_backward`) and the *gain* is
``||dloss/dX_0||_F / ||dloss/dX_L||_F``, the factor by which the gradient's norm changes
on its way from the output back to the input.

In the limit of wide layers and large batches each plain block multiplies the squared
gradient norm by ``E[relu'(z)^2] / Var[relu(z)] = (1/2) / (1/2 - 1/(2 pi)) = pi/(pi - 1)``
for ``z ~ N(0, 1)``: batch norm divides the backward signal by the standard deviation
of its input, which the ReLU before it has reduced more than it reduces the gradient
(:data:`RELU_BN_SQUARED_RATE`). A finite batch pushes the rate up.

Examples
--------
>>> gains = gain_profile(0, "plain", depths=(2, 16), width=32, batch=16)
>>> bool(gains[1] > 10 * gains[0])
True
"""

from __future__ import annotations

import math

import numpy as np

from trainable_harness.errors import DepthSettingError, check_integer, check_real_array, check_seed
from trainable_harness.mlp import batch_norm_backward, batch_norm_forward
from trainable_harness.mlp.layers import BN_EPS
from trainable_harness.normalization import validated_eps

__all__ = [
    "BATCH",
    "DEPTHS",
    "RELU_BN_SQUARED_RATE",
    "VARIANTS",
    "WIDTH",
    "branch_scale",
    "draw_network",
    "gain_profile",
    "input_gradient",
    "per_layer_rate",
]

DEPTHS = (2, 4, 8, 16, 32, 64)
WIDTH = 128  # features per layer
BATCH = 64  # examples per batch
VARIANTS = ("plain", "residual", "scaled")
# E[relu'(z)^2] / Var[relu(z)] for z ~ N(0, 1): the squared-gain rate per plain block in
# the wide, large-batch limit.
RELU_BN_SQUARED_RATE = math.pi / (math.pi - 1.0)


def _check_variant(variant) -> str:
    if variant not in VARIANTS:
        raise DepthSettingError(f"variant must be one of {VARIANTS}, got {variant!r}")
    return variant


def branch_scale(variant: str, depth: int) -> float:
    """The factor ``alpha`` on a block's branch: 1 for plain and residual, ``1/sqrt(L)`` scaled.

    Examples
    --------
    >>> branch_scale("scaled", 16), branch_scale("residual", 16)
    (0.25, 1.0)
    """
    _check_variant(variant)
    depth = check_integer(depth, "depth", minimum=1, error=DepthSettingError)
    return 1.0 / math.sqrt(depth) if variant == "scaled" else 1.0


def draw_network(rng: np.random.Generator, depth: int, *, width: int = WIDTH, batch: int = BATCH):
    """Weights, input and output weighting of one network: ``(weights, X0, R)``.

    Draws, in order: ``depth`` matrices ``(width, width)`` with N(0, 1/width) entries, the
    input ``X0`` ``(batch, width)`` with N(0, 1) entries, and ``R`` ``(batch, width)`` with
    N(0, 1/(batch width)) entries (so ``||R||_F`` is near 1).

    Raises
    ------
    DepthSettingError
        ``depth`` or ``width`` below 1, or ``batch`` below 2 (batch norm of one example
        has no variance), naming the parameter.

    Examples
    --------
    >>> weights, X0, R = draw_network(np.random.default_rng(0), 3, width=4, batch=5)
    >>> len(weights), weights[0].shape, X0.shape, R.shape
    (3, (4, 4), (5, 4), (5, 4))
    """
    depth = check_integer(depth, "depth", minimum=1, error=DepthSettingError)
    width = check_integer(width, "width", minimum=1, error=DepthSettingError)
    batch = check_integer(batch, "batch", minimum=2, error=DepthSettingError)
    weights = [rng.normal(0.0, 1.0 / math.sqrt(width), (width, width)) for _ in range(depth)]
    X0 = rng.normal(size=(batch, width))
    R = rng.normal(0.0, 1.0 / math.sqrt(batch * width), (batch, width))
    return weights, X0, R


def _block_forward(X, W, eps):
    """One block's branch: ``relu(BN(X W))`` and what its backward pass needs."""
    ones, zeros = np.ones(W.shape[1]), np.zeros(W.shape[1])
    Y, cache = batch_norm_forward(X @ W, ones, zeros, eps)
    return np.maximum(Y, 0.0), (Y > 0.0, cache, ones)


def _block_backward(dX, saved, W, alpha, skip):
    """The gradient at a block's input from ``dX`` at its output ``X + alpha A`` (or ``A``)."""
    active, cache, ones = saved
    dH, _, _ = batch_norm_backward(alpha * dX * active, cache, ones)
    dX_in = dH @ W.T
    return dX_in + dX if skip else dX_in


def input_gradient(weights, X0, R, variant: str, *, eps: float = BN_EPS):
    """Loss ``sum(R * X_L)`` of one network and its gradient with respect to the input ``X0``.

    ``weights`` a list of ``(d, d)`` matrices (one per block), ``X0`` and ``R`` ``(B, d)``;
    ``variant`` one of :data:`VARIANTS`, with ``alpha = branch_scale(variant, len(weights))``.

    Returns
    -------
    (float, numpy.ndarray)
        The loss and ``dloss/dX0``, shape ``(B, d)``.

    Raises
    ------
    DepthSettingError
        An unknown variant, no weights, a batch below 2, or a weight or ``R`` whose shape
        does not fit ``X0`` (shapes named).
    NonFiniteInputError, UnsupportedDtypeError, NegativeEpsilonError
        NaN/inf or non-real (bool, complex, object) ``X0``, ``R`` or weights (named), or a
        negative eps.

    Examples
    --------
    >>> weights, X0, R = draw_network(np.random.default_rng(0), 2, width=3, batch=4)
    >>> loss, dX0 = input_gradient(weights, X0, R, "residual")
    >>> dX0.shape
    (4, 3)
    """
    _check_variant(variant)
    eps = validated_eps(eps)
    if isinstance(weights, str | np.ndarray) or not hasattr(weights, "__len__"):
        raise DepthSettingError(
            f"weights must be a list of (d, d) matrices, got {type(weights).__name__}"
        )
    if len(weights) < 1:
        raise DepthSettingError("weights must hold at least one (d, d) matrix, got none")
    X0 = check_real_array(X0, "X0")
    if X0.ndim != 2 or X0.shape[0] < 2 or X0.shape[1] < 1:
        raise DepthSettingError(
            f"X0 must be (batch, width) with batch >= 2 and width >= 1, got shape {X0.shape}"
        )
    width = X0.shape[1]
    weights = [check_real_array(W, f"weights[{i}]") for i, W in enumerate(weights)]
    for i, W in enumerate(weights):
        if W.shape != (width, width):
            raise DepthSettingError(
                f"weights[{i}] has shape {W.shape}; every block's matrix must be "
                f"({width}, {width}) to fit X0 of shape {X0.shape}"
            )
    R = check_real_array(R, "R")
    if R.shape != X0.shape:
        raise DepthSettingError(f"R has shape {R.shape}; it must match X0, {X0.shape}")
    alpha = branch_scale(variant, len(weights))
    skip = variant != "plain"
    X, saved = X0, []
    for W in weights:
        A, block = _block_forward(X, W, eps)
        saved.append(block)
        X = X + alpha * A if skip else A
    loss = float(np.sum(R * X))
    dX = np.asarray(R, dtype=np.float64)
    for W, block in zip(reversed(weights), reversed(saved), strict=True):
        dX = _block_backward(dX, block, W, alpha, skip)
    return loss, dX


def gain_profile(
    seed: int,
    variant: str,
    *,
    depths: tuple[int, ...] = DEPTHS,
    width: int = WIDTH,
    batch: int = BATCH,
    eps: float = BN_EPS,
) -> np.ndarray:
    """Gains ``||dloss/dX0|| / ||R||`` of one random network per depth, for one variant.

    With ``rng = numpy.random.default_rng(seed)``, the network of each depth in ``depths``
    is drawn in turn (:func:`draw_network`), so the same seed gives every variant the same
    weights and inputs.

    Returns
    -------
    numpy.ndarray
        One gain per depth.

    Examples
    --------
    >>> gain_profile(1, "scaled", depths=(2, 4), width=16, batch=8).shape
    (2,)
    """
    rng = np.random.default_rng(check_seed(seed))
    _check_variant(variant)
    if len(depths) < 1:
        raise DepthSettingError("depths must name at least one depth, got none")
    gains = []
    for depth in depths:
        weights, X0, R = draw_network(rng, depth, width=width, batch=batch)
        _, dX0 = input_gradient(weights, X0, R, variant, eps=eps)
        gains.append(np.linalg.norm(dX0) / np.linalg.norm(R))
    return np.array(gains)


def per_layer_rate(depths, gains) -> float:
    """Growth of the squared gain per block: ``exp`` of the slope of ``ln(gain^2)`` against L.

    A least-squares line through ``(L, 2 ln gain)``; 1 means no growth with depth.

    Raises
    ------
    DepthSettingError
        Fewer than two distinct depths, gains that are not positive, or ``depths`` and
        ``gains`` of different lengths.
    NonFiniteInputError, UnsupportedDtypeError
        NaN/inf or non-real (bool, complex, object) ``depths`` or ``gains`` (named).

    Examples
    --------
    >>> round(per_layer_rate([1, 2, 3], [2.0, 4.0, 8.0]), 12)
    4.0
    """
    depths = check_real_array(depths, "depths")
    gains = check_real_array(gains, "gains")
    if depths.shape != gains.shape or depths.ndim != 1:
        raise DepthSettingError(
            f"depths {depths.shape} and gains {gains.shape} must be 1-D of one length"
        )
    if np.unique(depths).size < 2:
        raise DepthSettingError("depths must hold at least two distinct depths to fit a rate")
    if not (np.isfinite(gains).all() and (gains > 0).all()):
        raise DepthSettingError("gains must be positive and finite to take their logarithm")
    slope = np.polyfit(depths, 2.0 * np.log(gains), 1)[0]
    return float(np.exp(slope))
