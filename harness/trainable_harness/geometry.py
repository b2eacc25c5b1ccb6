"""Update geometry of a scale-invariant weight: orthogonal gradients, norm growth, decay.

Chapter 15, section "Scale invariance and the effective learning rate". The object is one
unit whose pre-activation over a batch, ``z = X w``, is normalized by the centered map of
eq. 15.1 along the batch (batch normalization of a single channel with ``gamma = 1``,
``beta = 0`` and ``eps = 0``), followed by the logistic loss:

    f(w) = (1/n) sum_i softplus(-y_i * N_C(X w)_i),     y_i in {-1, +1}.

Because ``N_C(c z) = N_C(z)`` for every ``c > 0``, ``f(c w) = f(w)``. Differentiating that
identity gives the facts the section measures:

- Euler's identity for a function homogeneous of degree 0: ``w . grad f(w) = 0``;
- ``grad f(c w) = grad f(w) / c``: the gradient scales like ``1 / |w|``;
- under plain gradient descent ``w' = w - lr g`` with ``g . w = 0``, Pythagoras gives
  ``|w'|^2 = |w|^2 + lr^2 |g|^2``, so the norm can only grow;
- the angle turned in one step satisfies ``tan(theta) = lr |g| / |w|
  = lr |g(w/|w|)| / |w|^2``: the effective learning rate is ``lr / |w|^2``;
- with weight decay, ``w' = (1 - lr wd) w - lr g`` and
  ``|w'|^2 = (1 - lr wd)^2 |w|^2 + lr^2 |g|^2``; where the norm stops changing,
  ``cos(theta) = 1 - lr wd``, whatever the gradient's size (section text, eq. for
  ``theta_star``).

Arithmetic is float64 throughout; ``eps = 0`` so that the invariance is exact rather than
approximate (chapter 15, section "Epsilon changes the map").

Examples
--------
>>> problem = make_logistic_problem(seed=0, n=32, d=4)
>>> w = np.array([1.0, -2.0, 0.5, 3.0])
>>> bool(abs(scale_invariant_loss(5 * w, problem) - scale_invariant_loss(w, problem)) < 1e-15)
True
>>> g = scale_invariant_gradient(w, problem)
>>> bool(abs(w @ g) < 1e-15 * np.linalg.norm(w) * np.linalg.norm(g) * 10)
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.errors import LearningRateError, ShapeError
from trainable_harness.normalization import centered_normalize

__all__ = [
    "LogisticProblem",
    "Trajectory",
    "angular_steps",
    "centered_normalize_vjp",
    "equilibrium_angle",
    "equilibrium_norm",
    "make_logistic_problem",
    "run_gradient_descent",
    "scale_invariant_gradient",
    "scale_invariant_loss",
]


class LogisticProblem(NamedTuple):
    """A fixed training set: inputs ``X`` of shape ``(n, d)`` and labels ``y`` in {-1, +1}."""

    X: np.ndarray
    y: np.ndarray


class Trajectory(NamedTuple):
    """Iterates ``weights`` (steps + 1, d) and the gradients used, ``gradients`` (steps, d)."""

    weights: np.ndarray
    gradients: np.ndarray


def make_logistic_problem(seed: int, n: int = 256, d: int = 8) -> LogisticProblem:
    """Draw a linearly separable-with-noise task: ``y = sign(X u + noise)``.

    ``X`` has standard normal entries plus a shared offset of 3 on every coordinate (so the
    pre-activations have a nonzero mean that the centering must remove); ``u`` is a random
    unit direction and the label noise has standard deviation 0.5.

    Parameters
    ----------
    seed : int
        Seed of ``numpy.random.default_rng``.
    n, d : int
        Number of examples (>= 2) and of inputs (>= 1).

    Returns
    -------
    LogisticProblem

    Raises
    ------
    ShapeError
        If ``n < 2`` or ``d < 1``.

    Examples
    --------
    >>> problem = make_logistic_problem(seed=1, n=6, d=2)
    >>> problem.X.shape, sorted(set(problem.y.tolist())) == [-1.0, 1.0]
    ((6, 2), True)
    """
    if int(n) != n or n < 2:
        raise ShapeError(
            f"n must be an integer >= 2 (a batch statistic needs two values), got {n}"
        )
    if int(d) != d or d < 1:
        raise ShapeError(f"d must be an integer >= 1, got {d}")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(int(n), int(d))) + 3.0
    u = rng.normal(size=int(d))
    u /= np.linalg.norm(u)
    scores = (X - 3.0) @ u + 0.5 * rng.normal(size=int(n))
    y = np.where(scores >= 0.0, 1.0, -1.0)
    # Both classes must be present or the task is trivial.
    y[0], y[1] = 1.0, -1.0
    return LogisticProblem(X=X, y=y)


def _check_weight(w, problem: LogisticProblem) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (problem.X.shape[1],):
        raise ShapeError(f"w has shape {w.shape}; expected ({problem.X.shape[1]},) to match X")
    return w


def scale_invariant_loss(w, problem: LogisticProblem) -> float:
    """``f(w) = mean(softplus(-y * N_C(X w)))`` with ``N_C`` of eq. 15.1 at eps = 0.

    Parameters
    ----------
    w : array_like, shape (d,)
    problem : LogisticProblem

    Returns
    -------
    float

    Raises
    ------
    ShapeError
        If ``w`` does not have shape ``(d,)``.
    DegenerateNormalizationError
        If ``X w`` is constant over the batch (for instance ``w = 0``).

    Examples
    --------
    >>> problem = make_logistic_problem(seed=2, n=8, d=3)
    >>> w = np.array([0.3, -1.0, 2.0])
    >>> bool(scale_invariant_loss(w, problem) == scale_invariant_loss(4 * w, problem))
    True
    """
    w = _check_weight(w, problem)
    z_hat = centered_normalize(problem.X @ w)
    return float(np.mean(np.logaddexp(0.0, -problem.y * z_hat)))


def centered_normalize_vjp(z, upstream) -> np.ndarray:
    """``J_C(z)^T v`` for the centered map of eq. 15.1 at eps = 0, without forming ``J_C``.

    With ``z_hat = N_C(z)``, ``s = sqrt(population_variance(z))`` and ``P`` the centering
    projector, eq. 15.3 gives ``J_C = (P - z_hat z_hat^T / n) / s``, which is symmetric, so

        J_C^T v = (P v - z_hat (z_hat . v) / n) / s.

    This is the backward pass of batch normalization for one channel (gamma = 1).

    Parameters
    ----------
    z, upstream : array_like, shape (n,)

    Returns
    -------
    numpy.ndarray, shape (n,)

    Raises
    ------
    ShapeError
        If the two shapes differ or are not 1-D.

    Examples
    --------
    >>> from trainable_harness.normalization import normalization_jacobian
    >>> z, v = np.array([0.5, 2.0, -1.0, 4.0]), np.array([1.0, 0.0, -2.0, 0.5])
    >>> exact = normalization_jacobian(z, centered=True).T @ v
    >>> bool(np.allclose(centered_normalize_vjp(z, v), exact, rtol=0, atol=1e-15))
    True
    """
    z = np.asarray(z, dtype=np.float64)
    upstream = np.asarray(upstream, dtype=np.float64)
    if z.ndim != 1 or z.shape != upstream.shape:
        raise ShapeError(
            f"z and upstream must be 1-D of one shape, got {z.shape} and {upstream.shape}"
        )
    return _centered_vjp(z, centered_normalize(z), upstream)


def _centered_vjp(z: np.ndarray, z_hat: np.ndarray, upstream: np.ndarray) -> np.ndarray:
    # s from z itself; z_hat comes from the harness's map so the two passes agree.
    centered = z - z.mean()
    scale = np.sqrt(np.mean(centered * centered))
    projected = upstream - upstream.mean()
    return (projected - z_hat * (z_hat @ upstream) / z.shape[0]) / scale


def scale_invariant_gradient(w, problem: LogisticProblem) -> np.ndarray:
    """Exact gradient of :func:`scale_invariant_loss`: ``X^T J_C(Xw)^T dL/dz_hat``.

    ``dL/dz_hat_i = -y_i sigmoid(-y_i z_hat_i) / n``; the normalization's backward pass is
    :func:`centered_normalize_vjp`.

    Parameters
    ----------
    w : array_like, shape (d,)
    problem : LogisticProblem

    Returns
    -------
    numpy.ndarray, shape (d,)

    Examples
    --------
    >>> problem = make_logistic_problem(seed=3, n=16, d=3)
    >>> w = np.array([1.0, 0.5, -0.25])
    >>> g1, g2 = scale_invariant_gradient(w, problem), scale_invariant_gradient(2 * w, problem)
    >>> bool(np.allclose(g1, 2 * g2, rtol=1e-14, atol=0))   # grad f(cw) = grad f(w) / c
    True
    """
    w = _check_weight(w, problem)
    z = problem.X @ w
    z_hat = centered_normalize(z)
    margin = -problem.y * z_hat
    # d softplus(m)/dm = sigmoid(m), written through exp(-logaddexp) to avoid overflow.
    upstream = -problem.y * np.exp(margin - np.logaddexp(0.0, margin)) / z.shape[0]
    return problem.X.T @ _centered_vjp(z, z_hat, upstream)


def _check_rate(value: float, name: str) -> float:
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise LearningRateError(f"{name} must be a finite number >= 0, got {value}")
    return value


def run_gradient_descent(
    w0,
    problem: LogisticProblem,
    *,
    lr: float,
    steps: int,
    weight_decay: float = 0.0,
    batch_size: int | None = None,
    seed: int | None = None,
) -> Trajectory:
    """Gradient descent ``w <- (1 - lr wd) w - lr grad f_batch(w)`` on the scale-invariant loss.

    With ``batch_size=None`` every step uses the whole training set (deterministic). With
    a batch size, each step draws that many distinct examples with ``default_rng(seed)``
    and normalizes over them (train-mode batch normalization): the minibatch loss is
    scale-invariant as well, so its gradient is still orthogonal to ``w``.

    Parameters
    ----------
    w0 : array_like, shape (d,)
        Initial weight (not modified).
    problem : LogisticProblem
    lr : float
        Learning rate, > 0.
    steps : int
        Number of updates, >= 1.
    weight_decay : float, default 0.0
        Decoupled-from-nothing L2 decay ``wd`` (the update above), ``>= 0`` with
        ``lr * wd < 1``.
    batch_size : int or None
        Minibatch size in ``[2, n]``, or None for full batch.
    seed : int or None
        Seed of the minibatch draws; required when ``batch_size`` is given.

    Returns
    -------
    Trajectory

    Raises
    ------
    LearningRateError
        ``lr <= 0``, ``weight_decay < 0``, ``lr * weight_decay >= 1``, or a non-finite one.
    ShapeError
        Bad ``w0``, ``steps`` or ``batch_size`` (or a batch size without a seed).

    Examples
    --------
    >>> problem = make_logistic_problem(seed=4, n=32, d=3)
    >>> path = run_gradient_descent(np.ones(3) * [1, -1, 2], problem, lr=0.5, steps=3)
    >>> norms = np.linalg.norm(path.weights, axis=1)
    >>> bool(np.all(np.diff(norms) > 0))      # plain gradient descent only grows the norm
    True
    """
    lr = _check_rate(lr, "lr")
    weight_decay = _check_rate(weight_decay, "weight_decay")
    if lr == 0:
        raise LearningRateError("lr must be > 0")
    if lr * weight_decay >= 1:
        raise LearningRateError(
            f"lr * weight_decay must be < 1 (it shrinks w by 1 - lr wd), got {lr * weight_decay}"
        )
    if int(steps) != steps or steps < 1:
        raise ShapeError(f"steps must be an integer >= 1, got {steps}")
    n = problem.X.shape[0]
    rng = None
    if batch_size is not None:
        if int(batch_size) != batch_size or not 2 <= batch_size <= n:
            raise ShapeError(f"batch_size must be an integer in [2, {n}], got {batch_size}")
        if seed is None:
            raise ShapeError("batch_size needs a seed for the minibatch draws")
        rng = np.random.default_rng(seed)
    w = _check_weight(w0, problem).copy()
    weights = np.empty((int(steps) + 1, w.shape[0]))
    gradients = np.empty((int(steps), w.shape[0]))
    weights[0] = w
    shrink = 1.0 - lr * weight_decay
    for t in range(int(steps)):
        if rng is None:
            batch = problem
        else:
            rows = rng.choice(n, size=int(batch_size), replace=False)
            batch = LogisticProblem(problem.X[rows], problem.y[rows])
        g = scale_invariant_gradient(w, batch)
        w = shrink * w - lr * g if weight_decay else w - lr * g
        gradients[t] = g
        weights[t + 1] = w
    return Trajectory(weights=weights, gradients=gradients)


def angular_steps(weights) -> np.ndarray:
    """Angle (radians) between consecutive iterates, ``arccos`` of their cosine, clipped.

    Parameters
    ----------
    weights : array_like, shape (T + 1, d)

    Returns
    -------
    numpy.ndarray, shape (T,)

    Examples
    --------
    >>> angular_steps([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]]).round(4)
    array([0.7854, 0.7854])
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[0] < 2:
        raise ShapeError(f"weights must have shape (T + 1, d) with T >= 1, got {weights.shape}")
    unit = weights / np.linalg.norm(weights, axis=1, keepdims=True)
    cosines = np.sum(unit[1:] * unit[:-1], axis=1)
    # arccos is ill-conditioned near 1; the cross-product form keeps small angles accurate.
    sines = np.linalg.norm(unit[1:] - cosines[:, None] * unit[:-1], axis=1)
    return np.arctan2(sines, np.clip(cosines, -1.0, 1.0))


def equilibrium_norm(lr: float, weight_decay: float, unit_gradient_norm: float) -> float:
    """Norm at which ``|w'|^2 = (1 - lr wd)^2 |w|^2 + lr^2 |g|^2`` stands still.

    With ``|g| = G / |w|`` (``G`` the gradient norm at the unit sphere),
    ``|w|^4 = lr G^2 / (wd (2 - lr wd))``.

    Examples
    --------
    >>> round(equilibrium_norm(0.1, 0.5, 2.0), 6)
    0.80032
    """
    lr = _check_rate(lr, "lr")
    weight_decay = _check_rate(weight_decay, "weight_decay")
    if lr == 0 or weight_decay == 0 or lr * weight_decay >= 1:
        raise LearningRateError("an equilibrium needs lr > 0, weight_decay > 0, lr * wd < 1")
    return float((lr * unit_gradient_norm**2 / (weight_decay * (2.0 - lr * weight_decay))) ** 0.25)


def equilibrium_angle(lr: float, weight_decay: float) -> float:
    """Angle turned per step where the norm stands still: ``arccos(1 - lr wd)``.

    At the equilibrium of :func:`equilibrium_norm`, ``(lr |g| / |w|)^2 = 1 - (1 - lr wd)^2``,
    and the step is a right triangle with legs ``(1 - lr wd)|w|`` and ``lr |g|`` and
    hypotenuse ``|w|``. For small ``lr wd`` this is about ``sqrt(2 lr wd)``.

    Examples
    --------
    >>> round(equilibrium_angle(0.5, 0.01), 6), round(float(np.sqrt(2 * 0.5 * 0.01)), 6)
    (0.100042, 0.1)
    """
    lr = _check_rate(lr, "lr")
    weight_decay = _check_rate(weight_decay, "weight_decay")
    if lr * weight_decay >= 1:
        raise LearningRateError(f"lr * weight_decay must be < 1, got {lr * weight_decay}")
    return float(np.arccos(1.0 - lr * weight_decay))
