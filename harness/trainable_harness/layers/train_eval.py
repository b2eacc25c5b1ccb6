"""Batch norm in its two modes: train (batch statistics) and eval (running statistics).

Train mode normalizes with the batch's own statistics
(:func:`~trainable_harness.layers.normalize.batch_norm`) and updates the running state
(eq. 16.5); eval mode applies eqs. 16.3-16.4 with the frozen running statistics, so one
sample's output depends on that sample and the state only.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import DegenerateNormalizationError
from trainable_harness.layers.inputs import _as_per_channel
from trainable_harness.layers.normalize import batch_norm
from trainable_harness.layers.reduction_sets import (
    _CHANNEL_AXIS,
    _as_batch,
    _broadcast_shape,
    _channels_of,
)
from trainable_harness.layers.running_state import (
    BatchNormState,
    _check_state_channels,
    update_running_statistics,
)
from trainable_harness.layers.safe_arithmetic import (
    _affine,
    _affine_quotient,
    _check_representable,
    _scaled_difference,
)
from trainable_harness.normalization import root_of_sum, validated_eps

__all__ = ["batch_norm_eval", "batch_norm_train"]


def batch_norm_train(
    X, gamma, beta, state: BatchNormState, *, eps: float = 1e-5
) -> tuple[np.ndarray, BatchNormState]:
    """Train-mode batch norm: normalize with the batch's statistics, update the running state.

    The output is :func:`batch_norm` (eqs. 16.1-16.4, population variance, float64); the
    new state is :func:`update_running_statistics` (eq. 16.5).

    Returns
    -------
    Y : numpy.ndarray, same shape as ``X``
    new_state : BatchNormState

    Raises
    ------
    As :func:`batch_norm` and :func:`update_running_statistics`.

    Examples
    --------
    >>> state = BatchNormState.initial(1, momentum=0.1)
    >>> Y, state = batch_norm_train(np.array([[1.0], [3.0]]), [1.0], [0.0], state, eps=0.0)
    >>> Y.ravel(), state.running_mean, state.running_variance
    (array([-1.,  1.]), array([0.2]), array([1.1]))
    """
    Y = batch_norm(X, gamma, beta, eps=eps)
    return Y, update_running_statistics(state, X)


def batch_norm_eval(X, gamma, beta, state: BatchNormState, *, eps: float = 1e-5) -> np.ndarray:
    """Eval-mode batch norm: eqs. 16.3-16.4 with the frozen running statistics.

    ``y = gamma * (x - running_mean) / sqrt(running_variance + eps) + beta`` per channel. The
    result for one sample depends on that sample and the state only, never on the batch.

    No intermediate overflows: where ``x - running_mean``, ``x_hat`` or ``gamma x_hat``
    would leave the range although ``y`` does not, they are formed from halves or from
    mantissas and exponents apart (:mod:`~trainable_harness.layers.safe_arithmetic`).

    Raises
    ------
    As :func:`batch_norm`, plus :class:`RunningStateShapeError` on a channel-count mismatch
    and :class:`DegenerateNormalizationError` when ``eps = 0`` meets a zero running variance.
    :class:`ResultOverflowError` names an output whose exact value is beyond float64's range
    (``x = 1e300`` against a running variance of ``1e-300``, say).

    Examples
    --------
    >>> state = BatchNormState(np.array([2.0]), np.array([4.0]))
    >>> batch_norm_eval(np.array([[0.0], [2.0], [6.0]]), [1.0], [0.0], state, eps=0.0).ravel()
    array([-1.,  0.,  2.])
    """
    eps = validated_eps(eps)
    X = _as_batch(X, "batch", np.float64)
    num_channels = X.shape[_CHANNEL_AXIS[X.ndim]]
    _check_state_channels(state, num_channels, _channels_of(X.shape))
    gamma = _as_per_channel(gamma, "gamma", num_channels, _channels_of(X.shape), np.float64)
    beta = _as_per_channel(beta, "beta", num_channels, _channels_of(X.shape), np.float64)
    if eps == 0.0 and (state.running_variance == 0).any():
        raise DegenerateNormalizationError(
            "eval-mode batch norm with eps = 0 divides by sqrt(running_variance), which is 0 "
            f"for channel {int(np.argmax(state.running_variance == 0))}; pass eps > 0"
        )
    shape = _broadcast_shape(num_channels, X.ndim)
    gamma, beta = gamma.reshape(shape), beta.reshape(shape)
    mean = state.running_mean.reshape(shape)
    root = root_of_sum(state.running_variance.reshape(shape), eps)
    X_hat = _scaled_difference(X, mean, root)
    Y = _affine(gamma, X_hat, beta)
    beyond = ~np.isfinite(Y)
    if beyond.any():
        # x_hat or gamma x_hat left the range on the way: mantissas and exponents apart.
        Y = np.where(beyond, _affine_quotient(gamma, X, mean, root, beta), Y)

    def operands(index):
        c = index[_CHANNEL_AXIS[X.ndim]]
        return (
            f"X = {X[index]!r}, running_mean[{c}] = {state.running_mean[c]!r}, "
            f"running_variance[{c}] = {state.running_variance[c]!r}, eps = {eps!r}, "
            f"gamma[{c}] = {gamma.ravel()[c]!r}, beta[{c}] = {beta.ravel()[c]!r}; rescale X "
            "and the running statistics, or gamma"
        )

    _check_representable(
        Y,
        "eval-mode output gamma (x - running_mean) / sqrt(running_variance + eps) + beta",
        operands,
    )
    return Y
