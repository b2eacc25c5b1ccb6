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

import math
from typing import NamedTuple

import numpy as np

from trainable_harness.errors import (
    DegenerateNormalizationError,
    EmptyInputError,
    LearningRateError,
    ResultOverflowError,
    ShapeError,
    check_integer,
    check_real,
    check_real_array,
    check_seed,
)
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
    n = check_integer(n, "n", minimum=2, error=ShapeError)  # a batch statistic needs two
    d = check_integer(d, "d", minimum=1, error=ShapeError)
    rng = np.random.default_rng(check_seed(seed))
    X = rng.normal(size=(int(n), int(d))) + 3.0
    u = rng.normal(size=int(d))
    u /= np.linalg.norm(u)
    scores = (X - 3.0) @ u + 0.5 * rng.normal(size=int(n))
    y = np.where(scores >= 0.0, 1.0, -1.0)
    # Both classes must be present or the task is trivial.
    y[0], y[1] = 1.0, -1.0
    return LogisticProblem(X=X, y=y)


def _check_problem(problem) -> LogisticProblem:
    """A :class:`LogisticProblem` with finite ``X`` (n, d), n >= 2, and labels +-1 (n,)."""
    if not isinstance(problem, LogisticProblem):
        raise TypeError(f"problem must be a LogisticProblem, got {type(problem).__name__}")
    X = check_real_array(problem.X, "problem.X")
    y = check_real_array(problem.y, "problem.y")
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1 or y.shape != (X.shape[0],):
        raise ShapeError(
            f"problem.X must be (n, d) with n >= 2, d >= 1 and problem.y (n,); got X "
            f"{X.shape} and y {y.shape}"
        )
    if not np.all(np.abs(y) == 1.0):
        raise ShapeError(f"problem.y must hold labels -1 and +1, got {np.unique(y)}")
    return problem


def _check_weight(w, problem: LogisticProblem, name: str = "w") -> np.ndarray:
    problem = _check_problem(problem)
    w = check_real_array(w, name)
    if w.shape != (problem.X.shape[1],):
        raise ShapeError(
            f"{name} has shape {w.shape}; expected ({problem.X.shape[1]},) to match X"
        )
    return w


def _exponent(values: np.ndarray) -> int:
    """``k`` with ``max|values| = f 2**k``, ``0.5 <= f < 1`` (0 for an all-zero array)."""
    largest = float(np.max(np.abs(values)))
    return int(np.frexp(largest)[1]) if largest > 0 else 0


def _pre_activations(w: np.ndarray, problem: LogisticProblem) -> tuple[np.ndarray, int]:
    """``z = X (w 2**-k)`` and ``k``: ``k = 0`` unless ``X w`` overflows or is subnormal.

    The loss depends on ``X w`` only through the centered map, which is invariant to
    positive scaling, so ``w`` may be divided by a power of two first (exact): ``k`` puts
    ``max|w|`` in [1/2, 1) when ``X w`` itself is beyond float64's range or below its
    normal range. The gradient at ``w`` is the one at ``w 2**-k`` times ``2**-k``.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        z = problem.X @ w
    tiny = np.finfo(np.float64).tiny
    if np.all(np.isfinite(z)) and not 0 < np.max(np.abs(z)) < tiny:
        return z, 0
    k = _exponent(w)
    with np.errstate(over="ignore", invalid="ignore"):
        z = problem.X @ np.ldexp(w, -k)
    if not np.all(np.isfinite(z)):
        raise ResultOverflowError(
            "problem.X @ w overflows float64 even with w scaled to unit size (the loss is "
            "scale-invariant in w): the entries of problem.X are too large; divide X by a "
            "power of two"
        )
    return z, k


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
    z, _ = _pre_activations(w, problem)
    z_hat = centered_normalize(z)
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
    z = check_real_array(z, "z")
    upstream = check_real_array(upstream, "upstream")
    if z.ndim != 1 or z.shape != upstream.shape:
        raise ShapeError(
            f"z and upstream must be 1-D of one shape, got {z.shape} and {upstream.shape}"
        )
    return _centered_vjp(z, centered_normalize(z), upstream)


def _centered_vjp(z: np.ndarray, z_hat: np.ndarray, upstream: np.ndarray) -> np.ndarray:
    """``J_C(z)^T upstream``; rescaled by powers of two where the direct form over/underflows.

    The direct form is used whenever its squares and sums stay in float64's normal range.
    Otherwise ``z`` and ``upstream`` are divided by powers of two ``2**k``, ``2**j`` first
    (``J_C(c z) = J_C(z) / c`` and the product is linear in ``upstream``) and the result is
    multiplied by ``2**(j - k)``, which raises if it is beyond range.
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        result, scale = _centered_vjp_direct(z, z_hat, upstream)
    if np.all(np.isfinite(result)) and np.isfinite(scale) and scale >= _SMALLEST_ROOT:
        return result
    k, j = _exponent(z), _exponent(upstream)
    with np.errstate(over="ignore", invalid="ignore"):
        result, _ = _centered_vjp_direct(np.ldexp(z, -k), z_hat, np.ldexp(upstream, -j))
        result = np.ldexp(result, j - k)
    if not np.all(np.isfinite(result)):
        raise ResultOverflowError(
            "the vector-Jacobian product J_C(z)^T upstream is beyond float64's range: it "
            f"scales like |upstream| / std(z) (max|upstream| about 2**{j}, std(z) far "
            "smaller); rescale z or upstream"
        )
    return result


# Roots of squares below float64's normal range (2**-1022) have lost digits.
_SMALLEST_ROOT = 2.0**-511


def _centered_vjp_direct(z, z_hat, upstream):
    # s from z itself; z_hat comes from the harness's map so the two passes agree.
    centered = z - z.mean()
    scale = np.sqrt(np.mean(centered * centered))
    projected = upstream - upstream.mean()
    return (projected - z_hat * (z_hat @ upstream) / z.shape[0]) / scale, scale


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
    z, k = _pre_activations(w, problem)
    z_hat = centered_normalize(z)
    margin = -problem.y * z_hat
    # d softplus(m)/dm = sigmoid(m), written through exp(-logaddexp) to avoid overflow.
    upstream = -problem.y * np.exp(margin - np.logaddexp(0.0, margin)) / z.shape[0]
    gradient = problem.X.T @ _centered_vjp(z, z_hat, upstream)
    if k == 0:
        return gradient
    # grad f(w) = grad f(w 2**-k) 2**-k: the gradient scales like 1 / |w|.
    with np.errstate(over="ignore"):
        gradient = np.ldexp(gradient, -k)
    if not np.all(np.isfinite(gradient)):
        raise ResultOverflowError(
            f"the gradient at w is beyond float64's range: it scales like 1/|w|, and "
            f"max|w| is about 2**{k}; rescale w"
        )
    return gradient


def _check_rate(value: float, name: str) -> float:
    value = check_real(value, name, error=LearningRateError)
    if value < 0:
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
        ``lr <= 0``, ``weight_decay < 0``, ``lr * weight_decay >= 1``, or a non-finite one
        (or one that is not a real number: a bool, a string).
    ShapeError
        Bad ``w0``, ``steps`` or ``batch_size`` (or a batch size without a seed).
    ResultOverflowError
        If an update ``w - lr g`` is beyond float64's range.

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
    steps = check_integer(steps, "steps", minimum=1, error=ShapeError)
    n = _check_problem(problem).X.shape[0]
    rng = None
    if batch_size is not None:
        batch_size = check_integer(batch_size, "batch_size", minimum=2, error=ShapeError)
        if batch_size > n:
            raise ShapeError(f"batch_size must be an integer in [2, {n}], got {batch_size}")
        if seed is None:
            raise ShapeError("batch_size needs a seed for the minibatch draws")
        rng = np.random.default_rng(check_seed(seed))
    w = _check_weight(w0, problem, "w0").copy()
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
        with np.errstate(over="ignore", invalid="ignore"):  # checked just below
            w = shrink * w - lr * g if weight_decay else w - lr * g
        if not np.all(np.isfinite(w)):
            raise ResultOverflowError(
                f"step {t + 1}: w - lr * g overflows float64 (lr = {lr}, max|g| = "
                f"{np.max(np.abs(g)):.4g}); the step is beyond range, use a smaller lr"
            )
        gradients[t] = g
        weights[t + 1] = w
    return Trajectory(weights=weights, gradients=gradients)


def angular_steps(weights) -> np.ndarray:
    """Angle (radians) between consecutive iterates, ``arccos`` of their cosine, clipped.

    Each iterate is divided by its norm first; an iterate whose squares overflow or fall
    below float64's normal range (entries beyond about ``1e154`` or all below about
    ``1e-154``) is divided by a power of two before its norm is taken, which changes no
    direction. The angle is then ``arctan2(|u' - (u . u') u|, u . u')`` of the unit vectors
    ``u``, ``u'``: accurate for small angles too.

    Parameters
    ----------
    weights : array_like, shape (T + 1, d)
        Finite real values, ``T >= 1``, ``d >= 1``; no iterate may be the zero vector.

    Returns
    -------
    numpy.ndarray, shape (T,), float64

    Raises
    ------
    ShapeError
        If ``weights`` is not 2-D with at least two rows.
    EmptyInputError
        If ``d = 0``.
    DegenerateNormalizationError
        If an iterate is the zero vector (it has no direction).
    NonFiniteInputError, UnsupportedDtypeError
        For NaN/inf, or bool, complex, object or text values.

    Examples
    --------
    >>> angular_steps([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]]).round(4)
    array([0.7854, 0.7854])
    >>> angular_steps([[1e300, 0.0], [0.0, 1e300]]).round(4)  # |w|**2 overflows
    array([1.5708])
    """
    weights = check_real_array(weights, "weights")
    if weights.ndim != 2 or weights.shape[0] < 2:
        raise ShapeError(f"weights must have shape (T + 1, d) with T >= 1, got {weights.shape}")
    if weights.shape[1] == 0:
        raise EmptyInputError(f"weights has shape {weights.shape}; each iterate needs d >= 1")
    with np.errstate(over="ignore"):  # rows whose norm overflows are rescaled below
        norms = np.linalg.norm(weights, axis=1, keepdims=True)
    largest = np.max(np.abs(weights), axis=1, keepdims=True)
    if not np.all(largest > 0):
        row = int(np.argmin(largest[:, 0]))
        raise DegenerateNormalizationError(
            f"weights[{row}] is the zero vector, which has no direction; the angle to or "
            "from it is undefined"
        )
    outside = ~(np.isfinite(norms) & (norms >= _SMALLEST_ROOT))
    if outside.any():
        # Divide those rows by a power of two near their largest entry: exact, no
        # direction changes, and their squares then lie in the normal range.
        exponent = np.where(outside, np.frexp(largest)[1], 0)
        weights = np.ldexp(weights, -exponent)
        norms = np.where(outside, np.linalg.norm(weights, axis=1, keepdims=True), norms)
    unit = weights / norms
    cosines = np.sum(unit[1:] * unit[:-1], axis=1)
    # arccos is ill-conditioned near 1; the cross-product form keeps small angles accurate.
    sines = np.linalg.norm(unit[1:] - cosines[:, None] * unit[:-1], axis=1)
    return np.arctan2(sines, np.clip(cosines, -1.0, 1.0))


def equilibrium_norm(lr: float, weight_decay: float, unit_gradient_norm: float) -> float:
    """Norm at which ``|w'|^2 = (1 - lr wd)^2 |w|^2 + lr^2 |g|^2`` stands still.

    With ``|g| = G / |w|`` (``G`` the gradient norm at the unit sphere),
    ``|w|^4 = lr G^2 / (wd (2 - lr wd))``. Where ``G**2`` or the quotient leaves float64's
    normal range (``G`` beyond about ``1e154``, say), the fourth root is taken of the
    factors separately: ``sqrt(G) (lr / (wd (2 - lr wd)))**(1/4)``.

    Parameters
    ----------
    lr, weight_decay : float
        Finite, ``> 0``, with ``lr * weight_decay < 1``.
    unit_gradient_norm : float
        ``G``, a finite real number ``>= 0`` (a norm).

    Raises
    ------
    LearningRateError
        If ``lr`` or ``weight_decay`` is not a finite number, ``<= 0``, or
        ``lr * weight_decay >= 1``.
    ShapeError
        If ``unit_gradient_norm`` is not a finite real number ``>= 0`` (NaN, negative).
    ResultOverflowError
        If the equilibrium norm is beyond float64's range.

    Examples
    --------
    >>> round(equilibrium_norm(0.1, 0.5, 2.0), 6)
    0.80032
    >>> unit, huge = equilibrium_norm(0.1, 0.5, 1.0), equilibrium_norm(0.1, 0.5, 1e200)
    >>> round(unit, 6), round(huge / 1e100, 6)  # G**2 = 1e400 overflows; |w| ~ sqrt(G)
    (0.565912, 0.565912)
    """
    lr = _check_rate(lr, "lr")
    weight_decay = _check_rate(weight_decay, "weight_decay")
    if lr == 0 or weight_decay == 0 or lr * weight_decay >= 1:
        raise LearningRateError("an equilibrium needs lr > 0, weight_decay > 0, lr * wd < 1")
    G = check_real(unit_gradient_norm, "unit_gradient_norm", error=ShapeError)
    if G < 0:
        raise ShapeError(
            f"unit_gradient_norm is a norm and must be >= 0, got {unit_gradient_norm!r}"
        )
    tiny = float(np.finfo(np.float64).tiny)
    with np.errstate(over="ignore", under="ignore"):
        try:
            square = unit_gradient_norm**2
        except OverflowError:  # a Python float's ** raises instead of giving inf
            square = math.inf
        quotient = lr * square / (weight_decay * (2.0 - lr * weight_decay))
    if G == 0 or (tiny <= square < math.inf and tiny <= quotient < math.inf):
        return float(quotient**0.25)
    # Beyond the normal range: the fourth root of each factor, none of which overflows.
    root = math.sqrt(G) * lr**0.25 / weight_decay**0.25 / (2.0 - lr * weight_decay) ** 0.25
    if not math.isfinite(root):
        raise ResultOverflowError(
            f"the equilibrium norm (lr G**2 / (wd (2 - lr wd)))**(1/4) is beyond float64's "
            f"range for lr = {lr}, weight_decay = {weight_decay}, unit_gradient_norm = {G}"
        )
    return root


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
