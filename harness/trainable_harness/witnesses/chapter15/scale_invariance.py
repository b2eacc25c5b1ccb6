"""Scale invariance and the effective learning rate (the section after 15.4).

A logistic loss on the batch-normalized pre-activation of one unit is invariant to the
scale of its weight (:mod:`trainable_harness.geometry`). Full-batch gradient descent checks
the three facts that follow (orthogonal gradient, gradient scaling like ``1/|w|``, a norm
that only grows) and the effective learning rate ``lr / |w|^2``; minibatch descent with
weight decay checks the equilibrium angle ``arccos(1 - lr wd)``.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.geometry import (
    LogisticProblem,
    Trajectory,
    angular_steps,
    equilibrium_angle,
    make_logistic_problem,
    run_gradient_descent,
    scale_invariant_gradient,
    scale_invariant_loss,
)

__all__ = [
    "EQUILIBRIUM",
    "SCALE_FACTORS",
    "SCALE_LR",
    "SCALE_NORM_FACTOR",
    "SCALE_PROBLEM",
    "SCALE_STEPS",
    "SCALE_WEIGHTS",
    "SCALE_WEIGHT_DECAY",
    "norm_identity_residuals",
    "scale_deviations",
    "scale_invariance_runs",
    "scale_invariance_witness",
    "weight_decay_equilibrium_run",
    "weight_decay_equilibrium_witness",
]

# The settings of the section; the chapter imports them so prose and claim agree.
SCALE_PROBLEM = {"n": 64, "d": 8}
SCALE_WEIGHTS = 10  # random weights the scaling checks take the largest deviation over
SCALE_FACTORS = (2.0**-10, 0.1, 3.0, 1.0e3)
SCALE_LR = 1.0
SCALE_STEPS = 100
SCALE_NORM_FACTOR = 4.0  # a power of two: scaling by it is exact in binary floating point
SCALE_WEIGHT_DECAY = 0.05
EQUILIBRIUM = {
    "n": 256,
    "d": 8,
    "lr": 0.5,
    "weight_decay": 0.02,
    "batch_size": 16,
    "steps": 600,
    "initial_norms": (0.1, 10.0),
    "tail": 200,
}


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def scale_deviations(w: np.ndarray, problem: LogisticProblem) -> dict:
    """The loss and gradient at ``w`` and at ``c w`` for every ``c`` in ``SCALE_FACTORS``.

    Scale invariance says ``f(c w) = f(w)``, ``c grad f(c w) = grad f(w)`` and
    ``w . grad f(w) = 0``.

    Returns
    -------
    dict
        ``loss`` and ``gradient`` at ``w``; ``scaled_losses`` (``f(c w)``) and
        ``scaled_gradients`` (``c grad f(c w)``), one per factor; ``cosine``, the absolute
        cosine between ``w`` and its gradient.

    Examples
    --------
    >>> problem = make_logistic_problem(seed=0, **SCALE_PROBLEM)
    >>> checks = scale_deviations(np.ones(SCALE_PROBLEM["d"]), problem)
    >>> len(checks["scaled_losses"]), bool(checks["cosine"] < 1e-12)
    (4, True)
    """
    loss = scale_invariant_loss(w, problem)
    g = scale_invariant_gradient(w, problem)
    return {
        "loss": loss,
        "gradient": g,
        "scaled_losses": [scale_invariant_loss(c * w, problem) for c in SCALE_FACTORS],
        "scaled_gradients": [c * scale_invariant_gradient(c * w, problem) for c in SCALE_FACTORS],
        "cosine": abs(w @ g) / (np.linalg.norm(w) * np.linalg.norm(g)),
    }


def scale_invariance_runs(seed: int) -> dict:
    """The problem, the random weights, and four full-batch runs from one unit weight.

    The logistic unit of :mod:`trainable_harness.geometry` (``SCALE_PROBLEM``, data from
    ``seed``) and ``SCALE_WEIGHTS`` weights drawn from ``default_rng(seed + 1)``. From the
    first weight scaled to norm one, ``w0``, ``SCALE_STEPS`` steps of gradient descent with
    lr ``SCALE_LR``: ``unit`` from ``w0``; ``scaled`` from ``c w0`` (``c`` =
    ``SCALE_NORM_FACTOR``); ``scaled_rate`` from ``c w0`` with lr ``c^2 SCALE_LR``, which
    follows the directions of ``unit``; ``decayed`` from ``w0`` with weight decay
    ``SCALE_WEIGHT_DECAY``.

    Returns
    -------
    dict
        ``problem``, ``weights`` (shape ``(SCALE_WEIGHTS, d)``), and the four
        :class:`~trainable_harness.geometry.Trajectory` objects.

    Examples
    --------
    >>> runs = scale_invariance_runs(5)
    >>> runs["unit"].weights.shape, round(float(np.linalg.norm(runs["unit"].weights[0])), 12)
    ((101, 8), 1.0)
    """
    problem = make_logistic_problem(seed=seed, **SCALE_PROBLEM)
    weights = np.random.default_rng(seed + 1).normal(size=(SCALE_WEIGHTS, SCALE_PROBLEM["d"]))
    w0 = _unit(weights[0])
    c = SCALE_NORM_FACTOR
    return {
        "problem": problem,
        "weights": weights,
        "unit": run_gradient_descent(w0, problem, lr=SCALE_LR, steps=SCALE_STEPS),
        "scaled": run_gradient_descent(c * w0, problem, lr=SCALE_LR, steps=SCALE_STEPS),
        "scaled_rate": run_gradient_descent(
            c * w0, problem, lr=c * c * SCALE_LR, steps=SCALE_STEPS
        ),
        "decayed": run_gradient_descent(
            w0, problem, lr=SCALE_LR, steps=SCALE_STEPS, weight_decay=SCALE_WEIGHT_DECAY
        ),
    }


def norm_identity_residuals(run: Trajectory, lr: float, weight_decay: float = 0.0) -> np.ndarray:
    """Per step, ``| |w'|^2 - (1 - lr wd)^2 |w|^2 - lr^2 |g|^2 | / |w'|^2``.

    Zero in exact arithmetic when every gradient is orthogonal to its weight: the norm
    recursion of gradient descent with weight decay ``wd``, and at ``wd = 0`` Pythagoras.

    Examples
    --------
    >>> run = Trajectory(np.array([[3.0, 0.0], [3.0, 4.0]]), np.array([[0.0, -8.0]]))
    >>> norm_identity_residuals(run, lr=0.5)
    array([0.])
    """
    norms = np.linalg.norm(run.weights, axis=1)
    gradients = np.linalg.norm(run.gradients, axis=1)
    shrink = (1.0 - lr * weight_decay) ** 2
    residual = np.abs(norms[1:] ** 2 - shrink * norms[:-1] ** 2 - lr**2 * gradients**2)
    return residual / norms[1:] ** 2


@claim_computation
def scale_invariance_witness(seed: int) -> dict:
    """Claim ``c15-scale-geometry-001``: the four facts of a scale-invariant weight.

    On the problem and weights of :func:`scale_invariance_runs`:

    - ``loss_max_deviation``: ``max |f(c w) - f(w)|`` over ``c`` in
      ``SCALE_FACTORS`` and the ten weights (:func:`scale_deviations`);
    - ``orthogonality_max_cosine``: ``max |cos(w, grad f(w))|``;
    - ``gradient_scaling_max_relative_deviation``:
      ``max |c grad f(c w) - grad f(w)| / |grad f(w)|``;
    - over the run ``unit``: ``pythagoras_max_residual``, the largest of
      :func:`norm_identity_residuals`, ``norm_never_decreases`` (no step lowers the norm
      by more than 4 units of rounding) and ``final_norm``;
    - ``same_path_max_direction_gap``: the largest distance between the unit directions
      of the runs ``unit`` and ``scaled_rate``;
    - ``first_step_tan_ratio``: ``tan`` of the first angular step of ``unit`` over that
      of ``scaled`` (``16`` in exact arithmetic);
    - ``decay_identity_max_residual``: the same as the Pythagoras residual for the run
      ``decayed``.

    Examples
    --------
    >>> result = scale_invariance_witness(seed=5)
    >>> result["norm_never_decreases"], round(result["first_step_tan_ratio"], 9)
    (True, 16.0)
    """
    runs = scale_invariance_runs(seed)
    loss_gap = 0.0
    cosine = 0.0
    gradient_gap = 0.0
    for w in runs["weights"]:
        checks = scale_deviations(w, runs["problem"])
        g = checks["gradient"]
        cosine = max(cosine, checks["cosine"])
        for loss, scaled in zip(checks["scaled_losses"], checks["scaled_gradients"], strict=True):
            loss_gap = max(loss_gap, abs(loss - checks["loss"]))
            gradient_gap = max(gradient_gap, np.linalg.norm(scaled - g) / np.linalg.norm(g))

    plain = runs["unit"]
    norms = np.linalg.norm(plain.weights, axis=1)
    direction_gap = np.linalg.norm(
        _unit(plain.weights) - _unit(runs["scaled_rate"].weights), axis=1
    )
    tan_ratio = np.tan(angular_steps(plain.weights[:2])[0]) / np.tan(
        angular_steps(runs["scaled"].weights[:2])[0]
    )
    decay_residual = norm_identity_residuals(runs["decayed"], SCALE_LR, SCALE_WEIGHT_DECAY)
    return {
        "loss_max_deviation": float(loss_gap),
        "orthogonality_max_cosine": float(cosine),
        "gradient_scaling_max_relative_deviation": float(gradient_gap),
        "pythagoras_max_residual": float(np.max(norm_identity_residuals(plain, SCALE_LR))),
        # Once the gradient is ~1e-8, lr^2 |g|^2 is below the rounding of |w|^2, so
        # consecutive norms may tie or differ by one ulp; more than that would refute.
        "norm_never_decreases": bool(
            np.all(np.diff(norms) >= -4 * np.finfo(np.float64).eps * norms[1:])
        ),
        "final_norm": float(norms[-1]),
        "same_path_max_direction_gap": float(np.max(direction_gap)),
        "first_step_tan_ratio": float(tan_ratio),
        "decay_identity_max_residual": float(np.max(decay_residual)),
    }


def weight_decay_equilibrium_run(seed: int, initial_norm: float, **settings) -> Trajectory:
    """One minibatch run of the equilibrium experiment (``EQUILIBRIUM`` settings).

    The data are drawn from ``seed`` and the initial direction from ``seed + 1``; the
    minibatch sequence from ``seed + 2`` is shared by every initial norm, so runs from
    different norms see the same examples in the same order.

    Returns
    -------
    Trajectory
        From :func:`trainable_harness.geometry.run_gradient_descent`.

    Examples
    --------
    >>> weight_decay_equilibrium_run(0, 1.0, steps=3).weights.shape
    (4, 8)
    """
    s = {**EQUILIBRIUM, **settings}
    problem = make_logistic_problem(seed=seed, n=s["n"], d=s["d"])
    direction = _unit(np.random.default_rng(seed + 1).normal(size=s["d"]))
    return run_gradient_descent(
        initial_norm * direction,
        problem,
        lr=s["lr"],
        steps=s["steps"],
        weight_decay=s["weight_decay"],
        batch_size=s["batch_size"],
        seed=seed + 2,
    )


@claim_computation
def weight_decay_equilibrium_witness(seed: int) -> dict:
    """Claim ``c15-decay-equilibrium-001``, one seed: weight decay sets the angular step.

    Minibatch gradient descent (``EQUILIBRIUM`` settings: lr 0.5, wd 0.02, B = 16, 600
    steps) on the scale-invariant logistic unit, from initial norms 0.1 and 10 along one
    direction (:func:`weight_decay_equilibrium_run`). Over the last 200 steps:

    - ``rms_angle_ratio``: the root mean square angular step over ``arccos(1 - lr wd)``,
      the angle at which the norm recursion stands still (run from norm 0.1);
    - ``rms_angle_ratio_from_large``: the same for the run from norm 10;
    - ``final_norm_relative_gap``: ``|n_10 / n_0.1 - 1|`` for the final norms reached from
      initial norms 10 and 0.1 (the initial norm is forgotten if this is near 0);
    - ``growth_factor_small``, ``shrink_factor_large``: final over initial norm for each.

    Examples
    --------
    >>> result = weight_decay_equilibrium_witness(seed=11)
    >>> 0.9 < result["rms_angle_ratio"] < 1.1
    True
    """
    small, large = EQUILIBRIUM["initial_norms"]
    tail = EQUILIBRIUM["tail"]
    run_small = weight_decay_equilibrium_run(seed, small)
    run_large = weight_decay_equilibrium_run(seed, large)
    theta = angular_steps(run_small.weights)[-tail:]
    theta_large = angular_steps(run_large.weights)[-tail:]
    target = equilibrium_angle(EQUILIBRIUM["lr"], EQUILIBRIUM["weight_decay"])
    norm_small = float(np.linalg.norm(run_small.weights[-1]))
    norm_large = float(np.linalg.norm(run_large.weights[-1]))
    return {
        "rms_angle_ratio": float(np.sqrt(np.mean(theta**2)) / target),
        "rms_angle_ratio_from_large": float(np.sqrt(np.mean(theta_large**2)) / target),
        "final_norm_relative_gap": abs(norm_large / norm_small - 1.0),
        "growth_factor_small": norm_small / small,
        "shrink_factor_large": norm_large / large,
    }
