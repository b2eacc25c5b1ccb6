"""Line probes: loss and gradient along the negative gradient (Santurkar et al. 2018).

:func:`probe_gradient_direction` measures one network along ``theta - alpha g``;
:func:`probe_along_training` averages it over a training run on the task and
initialization of :func:`~trainable_harness.mlp.sweeps.learning_rate_sweep`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.errors import MLPError, check_integer, check_real
from trainable_harness.mlp.checks import _check_bool, _positive_vector
from trainable_harness.mlp.layers import BN_EPS, _batch_norm_forward
from trainable_harness.mlp.network import (
    _check_params,
    _check_task,
    _loss_and_gradients,
    init_mlp,
)
from trainable_harness.mlp.sweeps import BUDGET, TASK_SIZE
from trainable_harness.mlp.task import TeacherTask, make_teacher_task

__all__ = [
    "probe_along_training",
    "probe_and_residual",
    "probe_gradient_direction",
    "scale_invariance_residual",
]


PROBE_LR = 0.5
PROBE_MULTIPLIERS = np.geomspace(0.25, 4.0, 5)
PROBE_EVERY = 10


def _flat(grads: dict) -> np.ndarray:
    # Concatenate every parameter's gradient along one axis, keeping replica axes.
    return np.concatenate(
        [g.reshape((*g.shape[:1], -1)) for _, g in sorted(grads.items())], axis=-1
    )


class LineProbe(NamedTuple):
    """Loss and gradient along ``theta - alpha g`` (Santurkar et al. 2018, section 3.1).

    ``loss_variation``: ``max - min`` of the loss over the step sizes;
    ``gradient_change``: ``max |grad(theta - alpha g) - grad(theta)|`` (l2 over all
    parameters); ``effective_smoothness``: ``max |grad change| / |alpha g|``.
    """

    loss_variation: float
    gradient_change: float
    effective_smoothness: float


def probe_gradient_direction(params: dict, task: TeacherTask, batch_norm: bool, step_sizes):
    """Move along the negative gradient by each step size and measure loss and gradient.

    Parameters
    ----------
    params : dict
        One network (no replica axes).
    task : TeacherTask
    batch_norm : bool
    step_sizes : array_like, shape (S,)
        Positive step sizes ``alpha``.

    Returns
    -------
    LineProbe

    Examples
    --------
    >>> task = make_teacher_task(0, n=32)
    >>> probe = probe_gradient_direction(init_mlp(0, False), task, False, [0.1, 0.2])
    >>> probe.loss_variation > 0 and probe.gradient_change > 0
    True
    """
    step_sizes = _positive_vector(step_sizes, "step_sizes")
    batch_norm = _check_bool(batch_norm, "batch_norm")
    _check_task(task)
    _check_params(params, batch_norm)
    if any(
        np.ndim(params[name]) != len(value.shape)
        for name, value in init_mlp(0, batch_norm).items()
    ):
        raise MLPError("params must be one network, without replica axes")
    return _probe_gradient_direction(params, task, batch_norm, step_sizes)


def _probe_gradient_direction(params, task, batch_norm, step_sizes) -> LineProbe:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        probe = _probe_measurements(params, task, batch_norm, step_sizes)
    if not np.all(np.isfinite(probe)):
        raise MLPError(
            f"the line probe's measurements are not finite ({probe}): the step sizes "
            f"{step_sizes} are too large (the loss overflows) or too small to move the "
            "parameters (alpha |g| underflows), or the network has diverged"
        )
    return probe


def _probe_measurements(params, task, batch_norm, step_sizes) -> LineProbe:
    loss0, grads0 = _loss_and_gradients(params, task, batch_norm)
    moved = {
        name: p[None] - step_sizes.reshape((-1,) + (1,) * p.ndim) * grads0[name][None]
        for name, p in params.items()
    }
    still = [
        all(np.array_equal(moved[name][i], p) for name, p in params.items())
        for i in range(step_sizes.size)
    ]
    if any(still):
        raise MLPError(
            f"step size {float(step_sizes[still.index(True)])!r} is too small to move the "
            "parameters (theta - alpha g rounds to theta), so the probe would divide 0 by "
            "alpha |g|; use larger step sizes"
        )
    losses, grads = _loss_and_gradients(moved, task, batch_norm)
    g0 = _flat({k: v[None] for k, v in grads0.items()})
    change = np.linalg.norm(_flat(grads) - g0, axis=-1)
    all_losses = np.append(losses, loss0)
    return LineProbe(
        loss_variation=float(all_losses.max() - all_losses.min()),
        gradient_change=float(change.max()),
        effective_smoothness=float(np.max(change / (step_sizes * np.linalg.norm(g0)))),
    )


def _training_start(seed, batch_norm, lr, steps):
    """The checked arguments' task, initial parameters and step count of one probed run:
    the task and initialization of :func:`learning_rate_sweep` for ``seed``.

    Raises :class:`MLPError` naming ``seed``, ``steps``, ``lr`` or ``batch_norm`` when one is
    not a non-negative integer, a positive integer, a positive real or a bool."""
    seed = check_integer(seed, "seed", minimum=0, error=MLPError)
    steps = check_integer(steps, "steps", minimum=1, error=MLPError)
    if check_real(lr, "lr", error=MLPError) <= 0:
        raise MLPError(f"lr must be > 0, got {lr}")
    task = make_teacher_task(seed, TASK_SIZE)
    return task, init_mlp(seed + 1, _check_bool(batch_norm, "batch_norm")), int(steps)


def probe_along_training(
    seed: int, batch_norm: bool, *, lr: float = PROBE_LR, steps: int = BUDGET
) -> LineProbe:
    """Mean of :func:`probe_gradient_direction` every ``PROBE_EVERY`` steps of one run.

    The run is full-batch gradient descent at ``lr`` on the task and initialization of
    :func:`learning_rate_sweep`; the step sizes probed are ``lr * PROBE_MULTIPLIERS``.

    Examples
    --------
    >>> probe = probe_along_training(0, True, steps=10)
    >>> probe.loss_variation > 0
    True
    """
    return _probed_run(seed, batch_norm, lr, steps, line_probes=True, residual=False)[0]


def probe_and_residual(
    seed: int, *, lr: float = PROBE_LR, steps: int = BUDGET
) -> tuple[LineProbe, float]:
    """``probe_along_training(seed, True, ...)`` and ``scale_invariance_residual(seed, ...)``
    from one training run: both follow the same batch-normalized run (same task, start,
    ``lr`` and steps), so it is trained once; each value is the one its function gives,
    to the last bit.

    Examples
    --------
    >>> probe, residual = probe_and_residual(0, steps=10)
    >>> probe == probe_along_training(0, True, steps=10)
    True
    >>> residual == scale_invariance_residual(0, steps=10)
    True
    """
    return _probed_run(seed, True, lr, steps, line_probes=True, residual=True)


def _probed_run(seed, batch_norm, lr, steps, *, line_probes: bool, residual: bool):
    """One run at ``lr``; every ``PROBE_EVERY`` steps, the line probe and/or the largest
    scale-invariance residual (batch norm only). Returns ``(LineProbe or None, residual)``."""
    task, params, steps = _training_start(seed, batch_norm, lr, steps)
    probes, largest = [], 0.0
    for t in range(steps):
        if line_probes and t % PROBE_EVERY == 0:
            probes.append(
                _probe_gradient_direction(params, task, batch_norm, lr * PROBE_MULTIPLIERS)
            )
        _, grads = _loss_and_gradients(params, task, batch_norm)
        if residual and t % PROBE_EVERY == 0:
            largest = max(largest, _invariance_residual(params, grads, task))
        params = {name: p - lr * grads[name] for name, p in params.items()}
    probe = LineProbe(*np.mean(np.array(probes), axis=0).tolist()) if line_probes else None
    return probe, largest


def _invariance_residual(params, grads, task) -> float:
    """The largest residual of :func:`scale_invariance_residual` at one step."""
    largest = 0.0
    H = task.X
    for k in (1, 2):
        W, g = params[f"W{k}"], grads[f"W{k}"]
        Y, cache = _batch_norm_forward(H @ W, params[f"gamma{k}"], params[f"beta{k}"])
        radial = np.sum(W * g, axis=0)
        derived = BN_EPS * cache.inv_std[0] ** 2 * params[f"gamma{k}"] * grads[f"gamma{k}"]
        scale = np.linalg.norm(W, axis=0) * np.linalg.norm(g, axis=0)
        largest = max(largest, float(np.max(np.abs(radial - derived) / scale)))
        H = np.maximum(Y, 0.0)
    return largest


def scale_invariance_residual(seed: int, *, lr: float = PROBE_LR, steps: int = BUDGET) -> float:
    """How far batch norm's weight gradients are from the orthogonality scale invariance gives.

    Each column ``w`` of a weight matrix followed by batch norm feeds one feature whose
    output does not change when ``w`` is scaled, except through ``eps``: with ``v`` the
    feature's batch variance, ``x_hat = a (z - mean) / sqrt(a^2 v + eps)`` for ``w -> a w``,
    so the loss's derivative along ``w`` is, exactly,
    ``w . dL/dw = eps / (v + eps) * gamma * dL/dgamma`` (section 16.8, the mechanism of the
    larger learning rates). The backward pass gets this only through its variance term
    (``- Z_hat mean(dY Z_hat)``): without it ``w . dL/dw = gamma dL/dgamma
    sqrt(v / (v + eps))``, and the gradient has a radial part.

    Every ``PROBE_EVERY`` steps of the batch-normalized run at ``lr`` of
    :func:`probe_along_training`, for both hidden layers and every column, the residual
    ``|w . g - eps / (v + eps) gamma dgamma| / (|w| |g|)`` is taken; the largest is
    returned. In float64 it is a rounding error (sums of at most 128 products).

    Examples
    --------
    >>> bool(scale_invariance_residual(0, steps=10) < 1e-13)
    True
    """
    return _probed_run(seed, True, lr, steps, line_probes=False, residual=True)[1]
