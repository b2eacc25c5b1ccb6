"""The network ``linear -> [batch norm] -> ReLU -> linear -> [batch norm] -> ReLU -> linear``.

:func:`init_mlp` draws its parameters, :func:`loss_and_gradients` runs the forward and
backward passes of :mod:`~trainable_harness.mlp.layers`, and :func:`train_full_batch`
trains one replica per learning rate by full-batch gradient descent.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.errors import MLPError, ShapeError, check_integer, check_seed
from trainable_harness.mlp.checks import (
    _check_bool,
    _check_labels,
    _positive_vector,
    _real_array,
)
from trainable_harness.mlp.layers import (
    _batch_norm_backward,
    _batch_norm_forward,
    _linear_backward,
    _linear_forward,
    _softmax_cross_entropy,
    _softmax_cross_entropy_backward,
)
from trainable_harness.mlp.task import (
    CLASSES,
    INPUTS,
    TeacherTask,
    make_teacher_task,  # noqa: F401 (the doctests use it)
)

__all__ = ["init_mlp", "loss_and_gradients", "train_full_batch"]


WIDTH = 32


def init_mlp(seed: int, batch_norm: bool, replicas: tuple[int, ...] = ()) -> dict:
    """He-initialized weights (``N(0, 2 / fan_in)``), zero biases, ``gamma = 1``, ``beta = 0``.

    With ``batch_norm`` the two hidden linear layers have no bias (batch norm's ``beta``
    replaces it, and a bias before the centering would get zero gradient). Every replica
    starts from the same draw.

    Returns
    -------
    dict
        ``W1 (16, 32)``, ``W2 (32, 32)``, ``W3 (32, 4)``, ``b3 (4,)`` and either
        ``b1``, ``b2`` or ``gamma1``, ``beta1``, ``gamma2``, ``beta2`` (each ``(32,)``),
        every array with the leading ``replicas`` axes.

    Examples
    --------
    >>> sorted(init_mlp(seed=0, batch_norm=True))
    ['W1', 'W2', 'W3', 'b3', 'beta1', 'beta2', 'gamma1', 'gamma2']
    """
    batch_norm = _check_bool(batch_norm, "batch_norm")
    if not isinstance(replicas, tuple):
        raise ShapeError(f"replicas must be a tuple of sizes, got {replicas!r}")
    replicas = tuple(
        check_integer(size, f"replicas[{i}]", minimum=0, error=ShapeError)
        for i, size in enumerate(replicas)
    )
    rng = np.random.default_rng(check_seed(seed))
    sizes = [(INPUTS, WIDTH), (WIDTH, WIDTH), (WIDTH, CLASSES)]
    params = {}
    for k, (fan_in, fan_out) in enumerate(sizes, start=1):
        params[f"W{k}"] = rng.normal(scale=np.sqrt(2.0 / fan_in), size=(fan_in, fan_out))
    params["b3"] = np.zeros(CLASSES)
    for k in (1, 2):
        if batch_norm:
            params[f"gamma{k}"] = np.ones(WIDTH)
            params[f"beta{k}"] = np.zeros(WIDTH)
        else:
            params[f"b{k}"] = np.zeros(WIDTH)
    return {name: np.broadcast_to(v, (*replicas, *v.shape)).copy() for name, v in params.items()}


def loss_and_gradients(params: dict, task: TeacherTask, batch_norm: bool):
    """Full-batch loss ``(...)`` and gradients (same keys and shapes as ``params``).

    Examples
    --------
    The arithmetic is float64 as written, without range checks: parameters far enough
    out give an inf or NaN loss, returned as is, because that is what the learning-rate
    experiments measure (:func:`train_full_batch` marks such a replica diverged). The
    arguments themselves are checked.

    Raises
    ------
    UnknownChoiceError
        ``batch_norm`` is not a bool.
    MLPError
        ``params`` lacks a parameter of the network or has one of the wrong shape.
    ShapeError, UnsupportedDtypeError, NonFiniteInputError
        A task whose ``X`` is not finite ``(n, INPUTS)`` or whose labels are not class
        indices in ``[0, CLASSES)``, one per example.

    Examples
    --------
    >>> task = make_teacher_task(seed=0, n=16)
    >>> loss, _ = loss_and_gradients(init_mlp(seed=0, batch_norm=False), task, False)
    >>> loss.shape
    ()
    """
    batch_norm = _check_bool(batch_norm, "batch_norm")
    _check_task(task)
    _check_params(params, batch_norm)
    return _loss_and_gradients(params, task, batch_norm)


def _check_task(task) -> None:
    if not isinstance(task, TeacherTask):
        raise TypeError(f"task must be a TeacherTask, got {type(task).__name__}")
    X = _real_array(task.X, "task.X", min_ndim=2)
    if X.ndim != 2 or X.shape[1] != INPUTS or X.shape[0] < 2:
        raise ShapeError(f"task.X must have shape (n, {INPUTS}) with n >= 2, got {X.shape}")
    _check_labels(task.labels, X.shape[0], CLASSES)


def _check_params(params, batch_norm: bool) -> None:
    if not isinstance(params, dict):
        raise MLPError(f"params must be the dict of init_mlp, got {type(params).__name__}")
    names = ["W1", "W2", "W3", "b3"] + (
        ["gamma1", "beta1", "gamma2", "beta2"] if batch_norm else ["b1", "b2"]
    )
    missing = sorted(set(names) - set(params))
    if missing:
        raise MLPError(
            f"params lacks {missing} (batch_norm={batch_norm}); build them with init_mlp"
        )
    shapes = {"W1": (INPUTS, WIDTH), "W2": (WIDTH, WIDTH), "W3": (WIDTH, CLASSES)}
    for name in names:
        value = _real_array(params[name], f"params[{name!r}]")
        wanted = shapes.get(name, (CLASSES,) if name == "b3" else (WIDTH,))
        if value.shape[value.ndim - len(wanted) :] != wanted:
            raise MLPError(
                f"params[{name!r}] has shape {value.shape}; expected (..., "
                f"{', '.join(map(str, wanted))})"
            )


def _loss_and_gradients(params: dict, task: TeacherTask, batch_norm: bool):
    H = task.X
    caches = []
    for k in (1, 2):
        Z = _linear_forward(H, params[f"W{k}"], None if batch_norm else params[f"b{k}"])
        bn_cache = None
        if batch_norm:
            Z_pre = Z
            Z, bn_cache = _batch_norm_forward(Z_pre, params[f"gamma{k}"], params[f"beta{k}"])
        caches.append((H, Z, bn_cache))
        H = np.maximum(Z, 0.0)
    logits = _linear_forward(H, params["W3"], params["b3"])
    loss = _softmax_cross_entropy(logits, task.labels)

    grads = {}
    dH, grads["W3"], grads["b3"] = _linear_backward(
        _softmax_cross_entropy_backward(logits, task.labels), H, params["W3"]
    )
    for k in (2, 1):
        H_in, Z, bn_cache = caches[k - 1]
        dZ = dH * (Z > 0.0)
        if batch_norm:
            dZ, grads[f"gamma{k}"], grads[f"beta{k}"] = _batch_norm_backward(
                dZ, bn_cache, params[f"gamma{k}"]
            )
        dH, grads[f"W{k}"], db = _linear_backward(dZ, H_in, params[f"W{k}"], not batch_norm)
        if not batch_norm:
            grads[f"b{k}"] = db
    return loss, grads


DIVERGED_LOSS = 1e3  # a loss this far above log(CLASSES) = 1.39 has left the basin


def _take(arrays: dict, keep: np.ndarray) -> dict:
    return {name: a[keep] for name, a in arrays.items()}


class TrainingRun(NamedTuple):
    """Losses ``(steps + 1, *replicas)``; ``NaN`` after a replica has diverged."""

    losses: np.ndarray
    params: dict


def train_full_batch(
    task: TeacherTask, *, seed: int, batch_norm: bool, learning_rates, steps: int
) -> TrainingRun:
    """Full-batch gradient descent, one replica per learning rate, from one initialization.

    A replica whose loss becomes non-finite or exceeds ``DIVERGED_LOSS`` is marked
    diverged: its remaining losses are NaN and its parameters stay where they were when
    it diverged; it is dropped from the arrays, so it never touches the others.

    Parameters
    ----------
    task : TeacherTask
    seed : int
        Seed of :func:`init_mlp`.
    batch_norm : bool
    learning_rates : array_like, shape (L,)
        Positive, finite.
    steps : int
        >= 1.

    Returns
    -------
    TrainingRun

    Raises
    ------
    MLPError
        A learning rate that is not positive and finite, or ``steps < 1``.

    Examples
    --------
    >>> run = train_full_batch(make_teacher_task(0, n=64), seed=0, batch_norm=True,
    ...                        learning_rates=[0.1, 1.0], steps=5)
    >>> run.losses.shape
    (6, 2)
    """
    learning_rates = _positive_vector(learning_rates, "learning_rates")
    steps = check_integer(steps, "steps", minimum=1, error=MLPError)
    batch_norm = _check_bool(batch_norm, "batch_norm")
    _check_task(task)
    params = init_mlp(seed, batch_norm, learning_rates.shape)
    losses = np.full((int(steps) + 1, learning_rates.shape[0]), np.nan)
    # Indices of the replicas still training; diverged ones are dropped from the arrays
    # (their parameters are kept as they were) so they cost nothing afterwards.
    alive = np.arange(learning_rates.shape[0])
    live = dict(params)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for t in range(int(steps) + 1):
            loss, grads = _loss_and_gradients(live, task, batch_norm)
            ok = np.isfinite(loss) & (loss < DIVERGED_LOSS)
            losses[t, alive[ok]] = loss[ok]
            if not ok.all():
                alive, live, grads = alive[ok], _take(live, ok), _take(grads, ok)
            if t == steps or alive.size == 0:
                break
            rates = learning_rates[alive]
            for name, g in grads.items():
                live[name] = live[name] - rates.reshape((-1,) + (1,) * (g.ndim - 1)) * g
    for name in params:
        params[name][alive] = live[name]
    return TrainingRun(losses=losses, params=params)
