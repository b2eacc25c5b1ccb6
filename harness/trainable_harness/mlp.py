"""A small multilayer perceptron in numpy, every backward pass written out (chapter 16).

Chapter 16, section "Why batch normalization tolerates larger learning rates". The network
is ``linear -> [batch norm] -> ReLU -> linear -> [batch norm] -> ReLU -> linear ->
softmax cross-entropy``, trained by full-batch gradient descent on a task the harness
draws (a random teacher network labels Gaussian inputs).

Every function works on arrays with any leading *replica* axes ``(...)`` before the batch
axis, so one call trains the same network at many learning rates (or evaluates it at
many points along a line) at once; replicas never mix. Shapes:

- activations ``(..., n, width)``: ``n`` examples along axis ``-2``;
- weights ``(..., fan_in, fan_out)``, biases and batch-norm ``gamma``, ``beta``
  ``(..., fan_out)``.

Backward passes (``dY`` is the gradient of the loss with respect to a layer's output):

- linear ``Y = X W + b``: ``dX = dY W^T``, ``dW = X^T dY``, ``db = sum_n dY``;
- ReLU ``Y = max(Z, 0)``: ``dZ = dY [Z > 0]``;
- batch norm in train mode over the ``n`` axis (eqs. 16.1-16.4, population variance,
  ``eps`` inside the root), with ``Z_hat = (Z - mean) / sqrt(var + eps)``:
  ``dgamma = sum_n dY Z_hat``, ``dbeta = sum_n dY`` and
  ``dZ = (gamma / sqrt(var + eps)) (dY - mean_n(dY) - Z_hat mean_n(dY Z_hat))``;
- softmax cross-entropy, mean over examples: ``dlogits = (softmax - onehot) / n``.

The tests check every one against central differences. Arithmetic is float64.

Examples
--------
>>> task = make_teacher_task(seed=0, n=32)
>>> params = init_mlp(seed=1, batch_norm=True)
>>> loss, grads = loss_and_gradients(params, task, batch_norm=True)
>>> sorted(grads) == sorted(params)
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from claimbook.calls import cached_with_calls
from trainable_harness.errors import MLPError, ShapeError

__all__ = [
    "TeacherTask",
    "batch_norm_backward",
    "batch_norm_forward",
    "init_mlp",
    "label_entropy",
    "learning_rate_sweep",
    "linear_backward",
    "linear_forward",
    "loss_and_gradients",
    "make_teacher_task",
    "probe_along_training",
    "probe_gradient_direction",
    "relu_backward",
    "relu_forward",
    "softmax_cross_entropy",
    "softmax_cross_entropy_backward",
    "train_full_batch",
]

INPUTS = 16
WIDTH = 32
CLASSES = 4
BN_EPS = 1e-5  # PyTorch's default, added to the population variance


class TeacherTask(NamedTuple):
    """Inputs ``X`` ``(n, INPUTS)`` and integer labels ``labels`` ``(n,)`` in ``[0, CLASSES)``."""

    X: np.ndarray
    labels: np.ndarray


def make_teacher_task(seed: int, n: int = 256) -> TeacherTask:
    """Label standard normal inputs by the argmax of a random two-layer tanh teacher.

    The teacher has 64 hidden units with weights ``N(0, 1/fan_in)``; its logits are
    multiplied by 3 so that classes are neither balanced by chance nor trivially linear.
    Inputs get a shared offset of 1 per coordinate and scales from 0.5 to 2, so the first
    layer's pre-activations are neither centered nor of unit scale (which batch norm
    would otherwise get for free).

    Parameters
    ----------
    seed : int
    n : int, default 256
        Number of training examples, >= 2.

    Returns
    -------
    TeacherTask

    Raises
    ------
    ShapeError
        If ``n < 2``.

    Examples
    --------
    >>> task = make_teacher_task(seed=3, n=8)
    >>> task.X.shape, task.labels.dtype.kind
    ((8, 16), 'i')
    """
    if int(n) != n or n < 2:
        raise ShapeError(f"n must be an integer >= 2 (batch statistics need two), got {n}")
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(int(n), INPUTS))
    hidden = np.tanh(Z @ rng.normal(size=(INPUTS, 64)) / np.sqrt(INPUTS))
    logits = 3.0 * hidden @ rng.normal(size=(64, CLASSES)) / np.sqrt(64)
    scales = np.geomspace(0.5, 2.0, INPUTS)
    return TeacherTask(X=1.0 + scales * Z, labels=np.argmax(logits, axis=1))


# --- layers: forward and backward -----------------------------------------------------------


def linear_forward(X, W, b=None) -> np.ndarray:
    """``Y = X W + b`` with replica axes: ``X (..., n, i)``, ``W (..., i, o)``, ``b (..., o)``.

    Examples
    --------
    >>> linear_forward(np.ones((2, 3)), np.ones((3, 1)), np.array([0.5]))
    array([[3.5],
           [3.5]])
    """
    Y = np.matmul(X, W)
    return Y if b is None else Y + b[..., None, :]


def linear_backward(dY, X, W, with_bias: bool = True):
    """Gradients of ``Y = X W + b``: returns ``(dX, dW, db)`` (``db`` None without bias).

    Examples
    --------
    >>> dX, dW, db = linear_backward(np.ones((2, 1)), np.ones((2, 3)), np.ones((3, 1)))
    >>> dX.shape, dW.shape, db.tolist()
    ((2, 3), (3, 1), [2.0])
    """
    dX = np.matmul(dY, np.swapaxes(W, -1, -2))
    dW = np.matmul(np.swapaxes(X, -1, -2), dY)
    db = dY.sum(axis=-2) if with_bias else None
    return dX, dW, db


def relu_forward(Z) -> np.ndarray:
    """``max(Z, 0)``.

    Examples
    --------
    >>> relu_forward(np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    return np.maximum(Z, 0.0)


def relu_backward(dY, Z) -> np.ndarray:
    """``dY [Z > 0]`` (the subgradient 0 is taken at ``Z = 0``).

    Examples
    --------
    >>> relu_backward(np.array([5.0, 5.0]), np.array([-1.0, 2.0]))
    array([0., 5.])
    """
    return dY * (Z > 0.0)


class BatchNormCache(NamedTuple):
    """What the batch-norm backward pass needs: ``Z_hat`` and ``1 / sqrt(var + eps)``."""

    Z_hat: np.ndarray
    inv_std: np.ndarray


def batch_norm_forward(Z, gamma, beta, eps: float = BN_EPS):
    """Train-mode batch norm over the example axis ``-2`` (eqs. 16.1-16.4).

    ``Y = gamma (Z - mean) / sqrt(population_variance + eps) + beta``, one statistic per
    feature and replica. Equal, for one replica, to
    :func:`trainable_harness.layers.batch_norm` on ``(n, width)`` input.

    Returns
    -------
    (numpy.ndarray, BatchNormCache)

    Examples
    --------
    >>> Y, _ = batch_norm_forward(np.array([[1.0], [3.0]]), np.ones(1), np.zeros(1), eps=0.0)
    >>> Y.ravel()
    array([-1.,  1.])
    """
    n = Z.shape[-2]
    mean = Z.sum(axis=-2, keepdims=True) / n
    centered = Z - mean
    # einsum sums the squares without a temporary array the size of Z (the sweeps of the
    # learning-rate section spend most of their time here).
    population_variance = np.einsum("...nk,...nk->...k", centered, centered)[..., None, :] / n
    inv_std = 1.0 / np.sqrt(population_variance + eps)
    Z_hat = centered
    Z_hat *= inv_std  # in place: centered is not needed after this
    Y = Z_hat * gamma[..., None, :]
    Y += beta[..., None, :]
    return Y, BatchNormCache(Z_hat=Z_hat, inv_std=inv_std)


def batch_norm_backward(dY, cache: BatchNormCache, gamma):
    """Backward pass of :func:`batch_norm_forward`: returns ``(dZ, dgamma, dbeta)``.

    ``dZ = gamma inv_std (dY - mean_n(dY) - Z_hat mean_n(dY Z_hat))``: the centering
    projector removes the mean of the upstream gradient, and the scale removes its
    component along ``Z_hat`` (the radial direction of chapter 15's Jacobian, eq. 15.3).

    Examples
    --------
    >>> Z = np.array([[1.0], [2.0], [4.0]])
    >>> _, cache = batch_norm_forward(Z, np.ones(1), np.zeros(1), eps=0.0)
    >>> dZ, dgamma, dbeta = batch_norm_backward(np.ones((3, 1)), cache, np.ones(1))
    >>> float(np.abs(dZ).max()) < 1e-15, dbeta.tolist()   # a shift of Y's gradient is lost
    (True, [3.0])
    """
    Z_hat, inv_std = cache
    n = Z_hat.shape[-2]
    dgamma = np.einsum("...nk,...nk->...k", dY, Z_hat)
    dbeta = dY.sum(axis=-2)
    d_hat = dY * gamma[..., None, :]
    # mean_n(d_hat Z_hat) = gamma dgamma / n: no second pass over the batch.
    dZ = d_hat - (dbeta * gamma)[..., None, :] / n
    dZ -= Z_hat * (gamma * dgamma)[..., None, :] / n
    dZ *= inv_std
    return dZ, dgamma, dbeta


def softmax_cross_entropy(logits, labels) -> np.ndarray:
    """Mean over examples of ``logsumexp(logits) - logits[label]``; shape ``(...)``.

    Examples
    --------
    >>> round(float(softmax_cross_entropy(np.zeros((2, 4)), np.array([0, 3]))), 6)
    1.386294
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=-1))
    picked = np.take_along_axis(shifted, _label_index(labels, shifted), axis=-1)[..., 0]
    return np.mean(log_norm - picked, axis=-1)


def _label_index(labels, logits) -> np.ndarray:
    index = np.broadcast_to(np.asarray(labels)[:, None], (*logits.shape[-2:-1], 1))
    return np.broadcast_to(index, (*logits.shape[:-1], 1))


def softmax_cross_entropy_backward(logits, labels) -> np.ndarray:
    """``(softmax(logits) - onehot(labels)) / n``, the gradient of the mean loss.

    Examples
    --------
    >>> softmax_cross_entropy_backward(np.zeros((1, 2)), np.array([1]))
    array([[ 0.5, -0.5]])
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)
    probabilities = np.exp(shifted)
    probabilities /= probabilities.sum(axis=-1, keepdims=True)
    onehot = np.zeros_like(probabilities)
    np.put_along_axis(onehot, _label_index(labels, logits), 1.0, axis=-1)
    return (probabilities - onehot) / logits.shape[-2]


# --- the network ----------------------------------------------------------------------------


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
    rng = np.random.default_rng(seed)
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
    >>> task = make_teacher_task(seed=0, n=16)
    >>> loss, _ = loss_and_gradients(init_mlp(seed=0, batch_norm=False), task, False)
    >>> loss.shape
    ()
    """
    H = task.X
    caches = []
    for k in (1, 2):
        Z = linear_forward(H, params[f"W{k}"], None if batch_norm else params[f"b{k}"])
        bn_cache = None
        if batch_norm:
            Z_pre = Z
            Z, bn_cache = batch_norm_forward(Z_pre, params[f"gamma{k}"], params[f"beta{k}"])
        caches.append((H, Z, bn_cache))
        H = relu_forward(Z)
    logits = linear_forward(H, params["W3"], params["b3"])
    loss = softmax_cross_entropy(logits, task.labels)

    grads = {}
    dH, grads["W3"], grads["b3"] = linear_backward(
        softmax_cross_entropy_backward(logits, task.labels), H, params["W3"]
    )
    for k in (2, 1):
        H_in, Z, bn_cache = caches[k - 1]
        dZ = relu_backward(dH, Z)
        if batch_norm:
            dZ, grads[f"gamma{k}"], grads[f"beta{k}"] = batch_norm_backward(
                dZ, bn_cache, params[f"gamma{k}"]
            )
        dH, grads[f"W{k}"], db = linear_backward(dZ, H_in, params[f"W{k}"], not batch_norm)
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
    learning_rates = np.asarray(learning_rates, dtype=np.float64)
    if learning_rates.ndim != 1 or not np.all(np.isfinite(learning_rates) & (learning_rates > 0)):
        raise MLPError(f"learning_rates must be positive finite numbers, got {learning_rates}")
    if int(steps) != steps or steps < 1:
        raise MLPError(f"steps must be an integer >= 1, got {steps}")
    params = init_mlp(seed, batch_norm, learning_rates.shape)
    losses = np.full((int(steps) + 1, learning_rates.shape[0]), np.nan)
    # Indices of the replicas still training; diverged ones are dropped from the arrays
    # (their parameters are kept as they were) so they cost nothing afterwards.
    alive = np.arange(learning_rates.shape[0])
    live = dict(params)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for t in range(int(steps) + 1):
            loss, grads = loss_and_gradients(live, task, batch_norm)
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
    step_sizes = np.asarray(step_sizes, dtype=np.float64)
    if step_sizes.ndim != 1 or not np.all(np.isfinite(step_sizes) & (step_sizes > 0)):
        raise MLPError(f"step_sizes must be positive finite numbers, got {step_sizes}")
    loss0, grads0 = loss_and_gradients(params, task, batch_norm)
    moved = {
        name: p[None] - step_sizes.reshape((-1,) + (1,) * p.ndim) * grads0[name][None]
        for name, p in params.items()
    }
    losses, grads = loss_and_gradients(moved, task, batch_norm)
    g0 = _flat({k: v[None] for k, v in grads0.items()})
    change = np.linalg.norm(_flat(grads) - g0, axis=-1)
    all_losses = np.append(losses, loss0)
    return LineProbe(
        loss_variation=float(all_losses.max() - all_losses.min()),
        gradient_change=float(change.max()),
        effective_smoothness=float(np.max(change / (step_sizes * np.linalg.norm(g0)))),
    )


LEARNING_RATES = 2.0 ** np.arange(-3, 7)  # 1/8 to 64, a factor of 2 apart
BUDGET = 60  # full-batch steps per run
TASK_SIZE = 128  # training examples
PROBE_LR = 0.5
PROBE_MULTIPLIERS = np.geomspace(0.25, 4.0, 5)
PROBE_EVERY = 10


def label_entropy(labels) -> float:
    """Cross-entropy of the best constant predictor: the entropy of the label frequencies.

    Examples
    --------
    >>> round(label_entropy(np.array([0, 1, 2, 3])), 6)
    1.386294
    """
    counts = np.bincount(np.asarray(labels), minlength=CLASSES)
    p = counts[counts > 0] / counts.sum()
    return float(-np.sum(p * np.log(p)))


class Sweep(NamedTuple):
    """Final losses ``(L,)`` over the learning rates, and the thresholds read from them.

    ``largest_finite``: largest learning rate whose loss stayed finite for the budget;
    ``largest_learning``: largest learning rate such that it and every smaller one end
    below the label entropy (they beat the best constant predictor); ``best_loss``: the
    lowest final loss on the grid.
    """

    learning_rates: np.ndarray
    final_losses: np.ndarray
    largest_finite: float
    largest_learning: float
    best_loss: float


def learning_rate_sweep(
    seed: int, batch_norm: bool, *, learning_rates=LEARNING_RATES, steps: int = BUDGET
) -> Sweep:
    """Train from one initialization at every learning rate of a grid; read the thresholds.

    The task is ``make_teacher_task(seed, TASK_SIZE)`` and the initialization
    ``init_mlp(seed + 1, batch_norm)``, so a network with and without batch norm meet the
    same data and the same first-draw weights. The result is a pure function of the
    arguments and is cached (its arrays are read-only), so a chapter that draws a figure
    from the same sweeps its claim verifies does not train twice.

    Examples
    --------
    >>> sweep = learning_rate_sweep(0, True, learning_rates=[0.5, 1e4], steps=5)
    >>> float(sweep.largest_finite)
    0.5
    """
    rates = tuple(float(r) for r in np.asarray(learning_rates, dtype=np.float64).ravel())
    return _cached_sweep(int(seed), bool(batch_norm), rates, int(steps))


@cached_with_calls(maxsize=256)
def _cached_sweep(seed: int, batch_norm: bool, rates: tuple, steps: int) -> Sweep:
    task = make_teacher_task(seed, TASK_SIZE)
    learning_rates = np.array(rates)
    run = train_full_batch(
        task, seed=seed + 1, batch_norm=batch_norm, learning_rates=learning_rates, steps=steps
    )
    final = run.losses[-1]
    finite = np.isfinite(final)
    learning = finite & (final < label_entropy(task.labels))
    # The first failure from below ends the stable range; a lucky success above it does not.
    first_failure = int(np.argmin(learning)) if not learning.all() else learning.size
    learning_rates.setflags(write=False)
    final.setflags(write=False)
    return Sweep(
        learning_rates=learning_rates,
        final_losses=final,
        largest_finite=float(learning_rates[finite].max()) if finite.any() else 0.0,
        largest_learning=float(learning_rates[first_failure - 1]) if first_failure else 0.0,
        best_loss=float(np.nanmin(final)) if finite.any() else float("nan"),
    )


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
    task = make_teacher_task(seed, TASK_SIZE)
    params = init_mlp(seed + 1, batch_norm)
    probes = []
    for t in range(int(steps)):
        if t % PROBE_EVERY == 0:
            probes.append(
                probe_gradient_direction(params, task, batch_norm, lr * PROBE_MULTIPLIERS)
            )
        _, grads = loss_and_gradients(params, task, batch_norm)
        params = {name: p - lr * grads[name] for name, p in params.items()}
    return LineProbe(*np.mean(np.array(probes), axis=0).tolist())
