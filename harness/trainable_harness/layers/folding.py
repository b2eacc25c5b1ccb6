"""Folding eval-mode batch norm into the layer before it (eq. 16.6), and what it saves.

In eval mode batch norm is a fixed per-channel affine map, so it can be merged into the
weights and bias of the preceding :func:`~trainable_harness.layers.linear_conv.linear` or
:func:`~trainable_harness.layers.linear_conv.conv2d` layer.
:func:`batch_norm_eval_flops` counts the arithmetic eval-mode batch norm costs per batch and
how much of it folding removes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trainable_harness.errors import (
    DegenerateNormalizationError,
    UnknownChoiceError,
    WeightShapeError,
    check_real_array,
)
from trainable_harness.layers.inputs import _as_per_channel, _as_shape
from trainable_harness.layers.linear_conv import _as_bias
from trainable_harness.layers.reduction_sets import _CHANNEL_AXIS, _check_rank
from trainable_harness.layers.running_state import BatchNormState, _check_state_channels
from trainable_harness.layers.safe_arithmetic import (
    _affine,
    _affine_quotient,
    _check_representable,
    _product_quotient,
)
from trainable_harness.normalization import root_of_sum, validated_eps

__all__ = [
    "BatchNormEvalWork",
    "batch_norm_eval_flops",
    "fold_batch_norm_into_conv2d",
    "fold_batch_norm_into_linear",
]


def _fold_scale_shift(
    b, gamma, beta, state: BatchNormState, eps: float, num_outputs: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel ``scale = gamma/sqrt(rv + eps)`` and folded bias (eq. 16.6)."""
    eps = validated_eps(eps)
    context = f"the layer before batch norm has {num_outputs} outputs"
    _check_state_channels(state, num_outputs, context)
    gamma = _as_per_channel(gamma, "gamma", num_outputs, context, np.float64)
    beta = _as_per_channel(beta, "beta", num_outputs, context, np.float64)
    b = np.zeros(num_outputs) if b is None else _as_bias(b, num_outputs, np.float64)
    if eps == 0.0 and (state.running_variance == 0).any():
        raise DegenerateNormalizationError(
            "cannot fold with eps = 0: some running_variance is 0, so the scale "
            "gamma/sqrt(running_variance) is undefined; pass eps > 0"
        )
    root = root_of_sum(state.running_variance, eps)
    with np.errstate(over="ignore"):
        scale = gamma / root  # +-inf only if the exact scale is beyond range
        difference = b - state.running_mean
    if np.isinf(difference).any():
        # b and running_mean near the largest float with opposite signs: halve both.
        halved = _affine(scale, b * 0.5 - state.running_mean * 0.5, beta * 0.5)
        with np.errstate(over="ignore"):
            folded = np.where(
                np.isinf(difference),
                2.0 * halved,
                _affine(scale, np.where(np.isinf(difference), 0.0, difference), beta),
            )
    else:
        folded = _affine(scale, difference, beta)
    beyond = ~np.isfinite(folded)
    if beyond.any():
        # The scale or its product left the range on the way: mantissas and exponents apart.
        exact = _affine_quotient(gamma, b, state.running_mean, root, beta)
        folded = np.where(beyond, exact, folded)
    _check_representable(
        folded,
        "the folded bias b' = gamma (b - running_mean) / sqrt(running_variance + eps) + beta",
        lambda index: (
            f"gamma = {gamma[index]!r}, b = {b[index]!r}, running_mean = "
            f"{state.running_mean[index]!r}, running_variance = "
            f"{state.running_variance[index]!r}, eps = {eps!r}, beta = {beta[index]!r}; "
            "rescale gamma, b and beta"
        ),
    )
    return scale, folded


def _fold_weights(weights: np.ndarray, scale: np.ndarray, gamma, state, eps, name: str):
    """``diag(scale) weights`` along the first axis, refusing entries beyond range.

    Where ``scale * weight`` is not finite (``scale = gamma / root`` itself may be beyond
    range while the product is not), it is recomputed from mantissas and exponents.
    """
    column = (slice(None),) + (None,) * (weights.ndim - 1)
    with np.errstate(over="ignore", invalid="ignore"):  # an entry beyond range: below
        folded = scale[column] * weights
    beyond = ~np.isfinite(folded)
    if beyond.any():
        root = root_of_sum(state.running_variance, eps)[column]
        exact = _product_quotient(gamma[column], weights, root)
        folded = np.where(beyond, exact, folded)
    _check_representable(
        folded,
        f"the folded {name}' = {name} gamma / sqrt(running_variance + eps)",
        lambda index: (
            f"{name} = {weights[index]!r}, gamma = {gamma[index[0]]!r}, running_variance = "
            f"{state.running_variance[index[0]]!r}, eps = {eps!r}; rescale {name} or gamma"
        ),
    )
    return folded


def fold_batch_norm_into_linear(
    W, b, gamma, beta, state: BatchNormState, *, eps: float = 1e-5
) -> tuple[np.ndarray, np.ndarray]:
    """Fold an eval-mode batch norm into the linear layer before it (eq. 16.6).

    With ``y = x W^T + b`` (:func:`linear`) followed by :func:`batch_norm_eval` over the
    ``d_out`` features, and ``s = gamma / sqrt(running_variance + eps)`` per feature::

        W' = diag(s) W,        b' = s * (b - running_mean) + beta,

    so ``batch_norm_eval(linear(X, W, b)) == linear(X, W', b')`` up to rounding.

    Parameters
    ----------
    W : array_like, shape ``(d_out, d_in)``
    b : array_like, shape ``(d_out,)``, or None for a layer without bias
    gamma, beta : array_like, shape ``(d_out,)``
    state : BatchNormState with ``d_out`` channels
    eps : float >= 0, default 1e-5

    Returns
    -------
    (W', b') : float64 arrays of shapes ``(d_out, d_in)`` and ``(d_out,)``

    No intermediate overflows: where ``s`` or a product with it would leave the range
    although ``W'`` or ``b'`` does not, the entry is formed from mantissas and exponents
    apart.

    Raises
    ------
    WeightShapeError, AffineShapeError, RunningStateShapeError, NonFiniteInputError,
    NegativeEpsilonError, DegenerateNormalizationError (``eps = 0`` with a zero variance).
    ResultOverflowError
        An entry of ``W'`` or ``b'`` whose exact value is beyond float64's range (named,
        with its operands).

    Examples
    --------
    >>> state = BatchNormState(np.array([1.0]), np.array([4.0]))
    >>> fold_batch_norm_into_linear(np.array([[2.0, 4.0]]), None, [1.0], [0.0], state, eps=0.0)
    (array([[1., 2.]]), array([-0.5]))
    """
    W = check_real_array(W, "W")
    if W.ndim != 2:
        raise WeightShapeError(f"W must have shape (d_out, d_in), got {W.shape}")
    scale, folded_bias = _fold_scale_shift(b, gamma, beta, state, eps, W.shape[0])
    gamma = check_real_array(gamma, "gamma")
    return _fold_weights(W, scale, gamma, state, validated_eps(eps), "W"), folded_bias


def fold_batch_norm_into_conv2d(
    K, b, gamma, beta, state: BatchNormState, *, eps: float = 1e-5
) -> tuple[np.ndarray, np.ndarray]:
    """Fold an eval-mode batch norm into the 2-D convolution before it (eq. 16.6).

    With :func:`conv2d` (kernel ``K`` of shape ``(C_out, C_in, kh, kw)``, bias ``b``)
    followed by :func:`batch_norm_eval` over its ``C_out`` channels::

        K'[o] = s[o] * K[o],   b' = s * (b - running_mean) + beta,
        s = gamma / sqrt(running_variance + eps).

    Exact in real arithmetic for any stride and zero padding (the convolution is linear in
    ``K`` and the bias is added after the sum).

    Returns
    -------
    (K', b') : float64 arrays of shapes ``(C_out, C_in, kh, kw)`` and ``(C_out,)``

    Raises
    ------
    As :func:`fold_batch_norm_into_linear`.

    Examples
    --------
    >>> state = BatchNormState(np.array([0.0, 1.0]), np.array([1.0, 4.0]))
    >>> K2, b2 = fold_batch_norm_into_conv2d(np.ones((2, 1, 1, 1)), [0.0, 0.0],
    ...                                      [1.0, 1.0], [0.0, 0.0], state, eps=0.0)
    >>> K2.ravel(), b2
    (array([1. , 0.5]), array([ 0. , -0.5]))
    """
    K = check_real_array(K, "K")
    if K.ndim != 4:
        raise WeightShapeError(f"K must have shape (C_out, C_in, kh, kw), got {K.shape}")
    scale, folded_bias = _fold_scale_shift(b, gamma, beta, state, eps, K.shape[0])
    gamma = check_real_array(gamma, "gamma")
    return _fold_weights(K, scale, gamma, state, validated_eps(eps), "K"), folded_bias


@dataclass(frozen=True)
class BatchNormEvalWork:
    """Counts of the arithmetic an eval-mode batch norm costs on one batch.

    Attributes
    ----------
    elements : int
        Number of values in the batch (``N``).
    channels : int
        Number of channels (``C``).
    subtract, divide, multiply, add : int
        Element-wise operations of eval BN as eqs. 16.3-16.4 write it: one each per
        element (``x - mean``, ``/ std``, ``gamma *``, ``+ beta``), so each equals ``N``.
    per_channel : int
        Operations done once per channel as written: ``running_variance + eps`` and the
        square root, ``2C``.
    fused_elementwise : int
        Element-wise operations after precomputing ``s`` and ``beta - s*mean`` per channel
        (one multiply and one add per element, ``2N``): an unfolded inference engine.
    folded_elementwise : int
        Element-wise operations left once BN is folded into the preceding layer: 0 when that
        layer already adds a bias, else ``N`` (the new bias add).
    """

    elements: int
    channels: int
    subtract: int
    divide: int
    multiply: int
    add: int
    per_channel: int
    fused_elementwise: int
    folded_elementwise: int

    @property
    def elementwise(self) -> int:
        """Element-wise operations of BN as written, ``4N``."""
        return self.subtract + self.divide + self.multiply + self.add

    @property
    def removed_by_folding(self) -> int:
        """Element-wise operations folding removes at run time (``4N`` or ``3N``)."""
        return self.elementwise - self.folded_elementwise


def batch_norm_eval_flops(
    shape: tuple[int, ...], *, preceding_bias: bool = True
) -> BatchNormEvalWork:
    """Count the arithmetic of eval-mode batch norm on a batch of ``shape``, and after folding.

    Counted: scalar floating-point subtractions, divisions, multiplications and additions
    applied to the batch's values at run time (eqs. 16.3-16.4 with frozen statistics), and
    separately the per-channel ones. Not counted: memory traffic, broadcasting, and the
    one-time cost of folding itself (``C_out * fan_in`` multiplies for the weights plus
    ``O(C)`` for the bias, paid once offline, not per batch).

    Parameters
    ----------
    shape : tuple of int
        Batch shape ``(B, d)``, ``(B, T, d)`` or ``(B, C, H, W)``.
    preceding_bias : bool, default True
        Whether the layer BN is folded into already adds a bias.

    Raises
    ------
    UnsupportedRankError
    CountError
        A shape entry that is not a non-negative integer (a float, a bool, a negative).
    UnknownChoiceError
        ``preceding_bias`` is not a bool.

    Examples
    --------
    >>> work = batch_norm_eval_flops((8, 64, 32, 32))
    >>> work.elements, work.elementwise, work.fused_elementwise, work.removed_by_folding
    (524288, 2097152, 1048576, 2097152)
    """
    shape = _as_shape(shape)
    if not isinstance(preceding_bias, bool | np.bool_):
        raise UnknownChoiceError(f"preceding_bias must be True or False, got {preceding_bias!r}")
    _check_rank("batch", len(shape), shape, what="shape")
    elements = math.prod(shape)
    channels = shape[_CHANNEL_AXIS[len(shape)]]
    return BatchNormEvalWork(
        elements=elements,
        channels=channels,
        subtract=elements,
        divide=elements,
        multiply=elements,
        add=elements,
        per_channel=2 * channels,
        fused_elementwise=2 * elements,
        folded_elementwise=0 if preceding_bias else elements,
    )
