"""Internal covariate shift: Santurkar et al.'s noise test and their gradient definition.

Santurkar, Tsipras, Ilyas and Madry (2018, arXiv:1805.11604) test whether batch norm
speeds training *by reducing internal covariate shift* by putting the shift back: after
every batch-norm layer they add noise whose mean and variance change at every step
("noisy BatchNorm", their Appendix A.2.1, Algorithm 1). For constants ``n_mu``,
``n_sigma``, ``r_mu``, ``r_sigma`` (0.5, 1.25, 0.1, 0.1 in their experiments), at every
step, every layer and every unit ``j``:

- ``mu_j ~ U(-n_mu, n_mu)`` and ``sigma_j ~ U(1, n_sigma)`` (the step's mean and scale shift);
- for every sample ``i``: ``m_ij ~ U(mu_j - r_mu, mu_j + r_mu)``, ``s_ij ~ N(sigma_j, r_sigma)``
  (``r_sigma`` the standard deviation), and the batch-normalized ``a_ij`` becomes
  ``s_ij a_ij + m_ij``.

This module draws that noise at a *dose* ``c`` that multiplies the four ranges
(``c n_mu``, ``1 + c (n_sigma - 1)``, ``c r_mu``, ``c r_sigma``; ``c = 1`` is Algorithm 1 as
written, ``c = 0`` no noise), from one set of standard draws per step so that every dose
sees the same randomness scaled (common random numbers); and it trains a stack of
networks that differ only in their noise, side by side, by full-batch gradient descent.

It also measures Santurkar et al.'s own definition of internal covariate shift (their
Definition 2.1): for layer ``i`` at step ``t``, ``||G - G'||`` where ``G`` is the gradient
of the loss with respect to layer ``i``'s weights and ``G'`` the same gradient after every
layer *before* ``i`` has taken its step on the same batch (:func:`gradient_shift`).

Everything is float64 numpy. Batch norm is :func:`trainable_harness.mlp.layers`'s
train-mode batch norm (population variance over the examples, ``eps`` inside the root).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.errors import (
    EmptyInputError,
    MLPError,
    ShapeError,
    check_integer,
    check_real,
    check_real_array,
    check_seed,
)
from trainable_harness.mlp.layers import (
    _batch_norm_backward,
    _batch_norm_forward,
    _softmax_cross_entropy,
    _softmax_cross_entropy_backward,
)
from trainable_harness.mlp.sweeps import label_entropy
from trainable_harness.mlp.task import CLASSES, INPUTS, make_teacher_task

__all__ = [
    "ALGORITHM_1",
    "BOOK_MILD_NOISE",
    "NoiseSpec",
    "Params",
    "StackRun",
    "draw_noise",
    "gradient_shift",
    "init_params",
    "per_feature_wasserstein",
    "train_stack",
]


class NoiseSpec(NamedTuple):
    """The four constants of Algorithm 1: the step's mean range ``n_mu`` and scale bound
    ``n_sigma``, the per-sample mean spread ``r_mu`` and scale standard deviation ``r_sigma``."""

    n_mu: float
    n_sigma: float
    r_mu: float
    r_sigma: float

    def at_dose(self, dose: float) -> NoiseSpec:
        """The ranges multiplied by ``dose`` (the scale's range ``n_sigma - 1``, not its 1)."""
        dose = check_real(dose, "dose", error=MLPError)
        if dose < 0.0:
            raise MLPError(f"dose must be >= 0, got {dose}")
        return NoiseSpec(
            self.n_mu * dose,
            1.0 + (self.n_sigma - 1.0) * dose,
            self.r_mu * dose,
            self.r_sigma * dose,
        )


# Santurkar et al. 2018, Appendix A.2.1: "n_mu = 0.5, n_sigma = 1.25, r_mu = r_sigma = 0.1".
ALGORITHM_1 = NoiseSpec(n_mu=0.5, n_sigma=1.25, r_mu=0.1, r_sigma=0.1)
# The noise of the book's first version of the experiment: one (s, m) per step, layer and
# unit, shared by every sample (no per-sample part), m ~ U(-0.1, 0.1), s ~ U(1, 1.1).
BOOK_MILD_NOISE = NoiseSpec(n_mu=0.1, n_sigma=1.1, r_mu=0.0, r_sigma=0.0)


def draw_noise(rng, specs, depth: int, examples: int, width: int):
    """One step's noise for a stack of networks: ``(scale, offset)``, each of shape
    ``(len(specs), depth, examples, width)``.

    The standard draws are made once per call, in this order: ``u ~ U(-1, 1)`` and
    ``v ~ U(0, 1)`` of shape ``(depth, 1, width)`` (per layer and unit), ``w ~ U(-1, 1)`` and
    ``z ~ N(0, 1)`` of shape ``(depth, examples, width)`` (per sample). For each spec,
    ``mu = n_mu u``, ``sigma = 1 + (n_sigma - 1) v``, ``m = mu + r_mu w`` and
    ``s = sigma + r_sigma z``: exactly Algorithm 1's distributions, and every spec in the
    stack scales the same draws.

    Raises
    ------
    MLPError
        A spec with a negative range or ``n_sigma < 1``, or a non-positive size.

    Examples
    --------
    >>> scale, offset = draw_noise(np.random.default_rng(0), [ALGORITHM_1], 2, 5, 3)
    >>> scale.shape, offset.shape
    ((1, 2, 5, 3), (1, 2, 5, 3))
    """
    depth = check_integer(depth, "depth", minimum=1, error=MLPError)
    examples = check_integer(examples, "examples", minimum=1, error=MLPError)
    width = check_integer(width, "width", minimum=1, error=MLPError)
    table = np.array([tuple(spec) for spec in specs], dtype=np.float64).reshape(-1, 4)
    if table.shape[0] == 0:
        raise MLPError("specs must name at least one noise")
    if (
        not np.all(np.isfinite(table))
        or np.any(table[:, [0, 2, 3]] < 0.0)
        or np.any(table[:, 1] < 1.0)
    ):
        raise MLPError(
            f"noise specs need finite ranges >= 0 and n_sigma >= 1, got {table.tolist()}"
        )
    u = rng.uniform(-1.0, 1.0, (depth, 1, width))
    v = rng.uniform(0.0, 1.0, (depth, 1, width))
    w = rng.uniform(-1.0, 1.0, (depth, examples, width))
    z = rng.standard_normal((depth, examples, width))
    n_mu, n_sigma, r_mu, r_sigma = (table[:, k, None, None, None] for k in range(4))
    offset = n_mu * u + r_mu * w
    scale = 1.0 + (n_sigma - 1.0) * v + r_sigma * z
    return scale, offset


def per_feature_wasserstein(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per feature, the 1-Wasserstein distance between two samples of equal size.

    Arrays of shape ``(..., n, width)``; each column is one feature's sample. For two
    empirical distributions of ``n`` values each the optimal coupling pairs the sorted
    values, so the distance is ``mean_i |sort(before)_i - sort(after)_i|``: a distance
    between distributions, 0 exactly when the two samples hold the same values.

    Raises
    ------
    ShapeError, EmptyInputError
        ``before`` and ``after`` differ in shape, have fewer than 2 axes, or hold no value
        (shapes named).
    NonFiniteInputError, UnsupportedDtypeError
        NaN/inf, or a bool, complex or object array (named).

    Examples
    --------
    >>> per_feature_wasserstein(np.array([[0.0], [2.0]]), np.array([[3.0], [1.0]]))
    array([1.])
    """
    before = check_real_array(before, "before")
    after = check_real_array(after, "after")
    if before.shape != after.shape or before.ndim < 2:
        raise ShapeError(
            f"before {before.shape} and after {after.shape} must share one shape "
            "(..., n, width): two samples of n values per feature"
        )
    if before.size == 0:
        raise EmptyInputError(f"before and after have shape {before.shape}, with no values")
    return np.mean(np.abs(np.sort(before, axis=-2) - np.sort(after, axis=-2)), axis=-2)


class _Summary(NamedTuple):
    sorted_values: np.ndarray  # (stack, depth, n, width), each column sorted
    std: np.ndarray  # (stack, depth, width), population std over the examples


def _summarize(inputs: list[np.ndarray]) -> _Summary:
    stacked = np.stack(inputs, axis=1)
    return _Summary(np.sort(stacked, axis=2), stacked.std(axis=2))


def _shift_in_stds(before: _Summary, after: _Summary) -> np.ndarray:
    """Per network: the Wasserstein shift over the std ``before``, averaged over each
    layer's live features (a dead ReLU feature has no distribution to move), then layers
    (a layer with no live feature is left out; all dead gives NaN)."""
    distance = np.mean(np.abs(before.sorted_values - after.sorted_values), axis=2)
    live = before.std > 0.0
    ratio = np.divide(distance, before.std, out=np.zeros_like(distance), where=live)
    count = live.sum(axis=2)
    per_layer = np.divide(ratio.sum(axis=2), np.maximum(count, 1))
    layers = (count > 0).sum(axis=1)
    total = np.where(count > 0, per_layer, 0.0).sum(axis=1)
    return np.divide(total, layers, out=np.full(total.shape, np.nan), where=layers > 0)


class Params(NamedTuple):
    """A stack of networks: per hidden layer ``k`` weights ``(stack, in, width)``, a bias or
    batch norm's beta and batch norm's gamma ``(stack, width)``; the output layer."""

    weights: list
    biases: list
    gammas: list
    w_out: np.ndarray
    b_out: np.ndarray


def init_params(seed: int, stack: int, depth: int, width: int) -> Params:
    """He initialization from ``default_rng(seed + 1)``, the same draw for every network
    of the stack (so networks differ only in what they do after the draw)."""
    rng = np.random.default_rng(check_seed(seed) + 1)
    sizes = [INPUTS] + [width] * depth
    weights = [rng.normal(0.0, np.sqrt(2.0 / sizes[k]), (sizes[k], width)) for k in range(depth)]
    w_out = rng.normal(0.0, np.sqrt(2.0 / width), (width, CLASSES))
    tile = lambda a: np.repeat(a[None], stack, axis=0)  # noqa: E731
    return Params(
        [tile(w) for w in weights],
        [np.zeros((stack, width)) for _ in range(depth)],
        [np.ones((stack, width)) for _ in range(depth)],
        tile(w_out),
        np.zeros((stack, CLASSES)),
    )


def _forward(params: Params, X, normalize: bool, noise=None):
    """Logits ``(stack, n, classes)``, per-layer caches and the hidden layers' outputs."""
    H = np.broadcast_to(X, (params.w_out.shape[0], *X.shape))
    caches, outputs = [], []
    for k in range(len(params.weights)):
        Z = H @ params.weights[k]
        cache = None
        if normalize:
            Y, cache = _batch_norm_forward(Z, params.gammas[k], params.biases[k])
            if noise is not None:
                Y = noise[0][:, k] * Y + noise[1][:, k]
        else:
            Y = Z + params.biases[k][:, None, :]
        caches.append((H, Y, cache))
        H = np.maximum(Y, 0.0)
        outputs.append(H)
    return H @ params.w_out + params.b_out[:, None, :], caches, outputs


def _backward(params: Params, logits, caches, outputs, labels, normalize: bool, noise=None):
    """The gradient of the mean loss, as a :class:`Params` of the same shapes."""
    depth = len(params.weights)
    d_logits = _softmax_cross_entropy_backward(logits, labels)
    g_w_out = np.swapaxes(outputs[-1], 1, 2) @ d_logits
    g_b_out = d_logits.sum(axis=1)
    dH = d_logits @ np.swapaxes(params.w_out, 1, 2)
    g_w, g_b, g_g = [None] * depth, [None] * depth, [None] * depth
    for k in reversed(range(depth)):
        H_in, Y, cache = caches[k]
        dY = dH * (Y > 0.0)
        if normalize:
            if noise is not None:
                dY = dY * noise[0][:, k]  # the noise is a constant of the step
            dZ, g_g[k], g_b[k] = _batch_norm_backward(dY, cache, params.gammas[k])
        else:
            dZ, g_b[k], g_g[k] = dY, dY.sum(axis=1), np.zeros_like(params.gammas[k])
        if k > 0:
            dH = dZ @ np.swapaxes(params.weights[k], 1, 2)
        g_w[k] = np.swapaxes(H_in, 1, 2) @ dZ
    return Params(g_w, g_b, g_g, g_w_out, g_b_out)


def _step(params: Params, grads: Params, learning_rate: float, layers=None) -> Params:
    """Gradient descent on every parameter, or (``layers`` given) on the hidden layers in
    ``layers`` only, leaving the rest as they are. Returns new arrays; no input mutated."""
    depth = len(params.weights)
    chosen = set(range(depth)) if layers is None else set(layers)
    move = lambda p, g, k: p - learning_rate * g if k in chosen else p  # noqa: E731
    return Params(
        [
            move(p, g, k)
            for k, (p, g) in enumerate(zip(params.weights, grads.weights, strict=True))
        ],
        [move(p, g, k) for k, (p, g) in enumerate(zip(params.biases, grads.biases, strict=True))],
        [move(p, g, k) for k, (p, g) in enumerate(zip(params.gammas, grads.gammas, strict=True))],
        params.w_out - learning_rate * grads.w_out if layers is None else params.w_out,
        params.b_out - learning_rate * grads.b_out if layers is None else params.b_out,
    )


def _select(params: Params, keep) -> Params:
    """The networks of the stack where ``keep`` is True."""
    return Params(
        [w[keep] for w in params.weights],
        [b[keep] for b in params.biases],
        [g[keep] for g in params.gammas],
        params.w_out[keep],
        params.b_out[keep],
    )


def _select_caches(caches, keep):
    return [
        (H[keep], Y[keep], None if cache is None else type(cache)(*(a[keep] for a in cache)))
        for H, Y, cache in caches
    ]


def gradient_shift(
    params: Params, grads: Params, task, normalize: bool, learning_rate: float, noise=None
):
    """Santurkar et al.'s Definition 2.1, relative: per network and hidden layer ``i >= 1``
    (0-based; the first layer has no layer before it), ``||G_i - G'_i|| / ||G_i||``
    (Frobenius norms), where ``G_i = grads.weights[i]`` is the gradient of the loss with
    respect to layer ``i``'s weights at ``params`` and ``G'_i`` the same gradient after the
    layers ``0 .. i-1`` (weights, biases, gammas) took their gradient step at
    ``learning_rate`` on the same batch, with the same ``noise``. Shape ``(stack, depth - 1)``.
    """
    depth = len(params.weights)
    out = np.empty((params.w_out.shape[0], depth - 1))
    for i in range(1, depth):
        moved = _step(params, grads, learning_rate, layers=range(i))
        logits, caches, outputs = _forward(moved, task.X, normalize, noise)
        after = _backward(moved, logits, caches, outputs, task.labels, normalize, noise).weights[i]
        before = grads.weights[i]
        out[:, i - 1] = np.linalg.norm(after - before, axis=(1, 2)) / np.linalg.norm(
            before, axis=(1, 2)
        )
    return out


class StackRun(NamedTuple):
    """One stack's training: per network the clean loss per step (a list, one trace per
    network, as long as the network trained), the
    first step at or below the target (``-1`` if none), the mean shift over the window,
    and the mean of Definition 2.1 over the probes and layers."""

    losses: np.ndarray
    steps_to_target: np.ndarray
    shift: np.ndarray
    gradient_shift: np.ndarray
    target: float


def train_stack(
    seed: int,
    normalize: bool,
    specs=None,
    *,
    depth: int,
    width: int,
    examples: int,
    learning_rate: float,
    budget: int,
    window: int,
    target_fraction: float,
    probes=(),
) -> StackRun:
    """Train a stack of networks side by side from the same draw, by full-batch descent.

    The task is :func:`~trainable_harness.mlp.make_teacher_task` ``(seed, examples)``; each
    network has ``depth`` hidden layers ``linear -> [batch norm -> noise] -> ReLU`` of
    ``width`` units and a linear softmax output. ``normalize`` False: plain networks (a bias
    instead of batch norm; ``specs`` must be None, a stack of one). ``normalize`` True: one
    batch-normalized network per noise spec in ``specs`` (:func:`draw_noise`, from
    ``default_rng(seed + 2)``, drawn afresh at every step), a spec of zero ranges being
    batch norm alone. The backward pass treats the noise as constants; the loss that
    measures progress is that of the same weights without the noise, the network being
    trained (as for dropout).

    The shift of a step is the per-feature 1-Wasserstein distance between a hidden layer's
    outputs at this step and the next, over their std at this step, averaged over live
    features and layers, and over the first ``window`` steps. At each step in ``probes``
    :func:`gradient_shift` is measured with that step's gradient (and noise). Training
    stops when every network has reached ``target_fraction`` times the label entropy and
    ``window`` steps (and the last probe) are done, or after ``budget`` steps.

    Raises
    ------
    MLPError
        Non-positive sizes, a ``window`` or a probe beyond ``budget``, specs with a plain
        network, or a learning rate that is not finite and positive.
    """
    seed = check_seed(seed)
    depth = check_integer(depth, "depth", minimum=1, error=MLPError)
    width = check_integer(width, "width", minimum=1, error=MLPError)
    examples = check_integer(examples, "examples", minimum=2, error=MLPError)
    budget = check_integer(budget, "budget", minimum=1, error=MLPError)
    window = check_integer(window, "window", minimum=1, error=MLPError)
    learning_rate = check_real(learning_rate, "learning_rate", error=MLPError)
    if not (np.isfinite(learning_rate) and learning_rate > 0.0):
        raise MLPError(f"learning_rate must be finite and > 0, got {learning_rate}")
    if window > budget:
        raise MLPError(f"window ({window}) must not exceed budget ({budget})")
    probes = sorted({check_integer(p, "probe", minimum=0, error=MLPError) for p in probes})
    if probes and probes[-1] >= budget:
        raise MLPError(f"probes must lie before budget ({budget}), got {probes[-1]}")
    if probes and depth < 2:
        raise MLPError("Definition 2.1 needs a layer before the measured one: depth >= 2")
    if not normalize and specs is not None:
        raise MLPError("noise follows batch norm: a plain network takes specs=None")
    specs = [ALGORITHM_1.at_dose(0.0)] if specs is None else list(specs)
    if not specs:
        raise MLPError("specs must name at least one noise (ALGORITHM_1.at_dose(0) for none)")
    noisy = normalize and any(s.n_mu or s.n_sigma != 1.0 or s.r_mu or s.r_sigma for s in specs)
    task = make_teacher_task(seed, n=examples)
    target = target_fraction * label_entropy(task.labels)
    stack = len(specs)
    params = init_params(seed, stack, depth, width)
    noise_rng = np.random.default_rng(seed + 2)
    losses = [[] for _ in range(stack)]
    shifts, ics = [], []
    hit = np.full(stack, -1)
    active = np.arange(stack)  # the networks still training, in stack order
    previous = None
    last = max([window, *(p + 1 for p in probes)])
    for t in range(budget + 1):
        live_specs = [specs[j] for j in active]
        noise = draw_noise(noise_rng, live_specs, depth, examples, width) if noisy else None
        logits, caches, outputs = _forward(params, task.X, normalize, noise)
        clean = _softmax_cross_entropy(
            logits if noise is None else _forward(params, task.X, normalize)[0], task.labels
        )
        for j, value in zip(active, clean, strict=True):
            losses[j].append(float(value))
        if t <= window:  # every network is active until the window is done
            summary = _summarize(outputs)
            if previous is not None:
                shifts.append(_shift_in_stds(previous, summary))
            previous = summary
        hit[active] = np.where((hit[active] < 0) & (clean <= target), t, hit[active])
        if t == budget:
            break
        if t >= last:  # a network that reached its target leaves the stack
            keep = hit[active] < 0
            if not keep.any():
                break
            if not keep.all():
                active, params = active[keep], _select(params, keep)
                logits, caches, outputs = (
                    logits[keep],
                    _select_caches(caches, keep),
                    [o[keep] for o in outputs],
                )
                noise = None if noise is None else (noise[0][keep], noise[1][keep])
        grads = _backward(params, logits, caches, outputs, task.labels, normalize, noise)
        if t in probes:
            ics.append(
                gradient_shift(params, grads, task, normalize, learning_rate, noise).mean(axis=1)
            )
        params = _step(params, grads, learning_rate)
    return StackRun(
        [np.array(trace) for trace in losses],
        hit,
        np.mean(shifts, axis=0),
        np.mean(ics, axis=0) if ics else np.full(stack, np.nan),
        float(target),
    )
