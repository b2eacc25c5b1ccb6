"""Claim computations of the new sections of chapters 15 and 16 (to move into ``witnesses/``).

Each function returns a plain dict of result fields. Deterministic claims take ``seed``
from ``claims/<id>.yaml`` (policy ``derived``); statistical claims (policy
``derived-set``) are called once per seed of the set and return that seed's fields.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.geometry import (
    angular_steps,
    equilibrium_angle,
    make_logistic_problem,
    run_gradient_descent,
    scale_invariant_gradient,
    scale_invariant_loss,
)
from trainable_harness.mlp import (
    batch_norm_backward,
    batch_norm_forward,
    learning_rate_sweep,
    probe_along_training,
)
from trainable_harness.normalization import normalization_jacobian
from trainable_harness.precision import LOG10_OFFSETS, cancellation_table, first_failures
from trainable_harness.small_batch import mean_error_theory, small_batch_sweep
from trainable_harness.transformer_cost import (
    block_flops_per_token,
    layer_norm_counts,
    rms_norm_counts,
)

__all__ = [
    "bn_backward_witness",
    "cancellation_matrix_witness",
    "larger_learning_rates_witness",
    "norm_cost_witness",
    "scale_invariance_witness",
    "small_batch_witness",
    "weight_decay_equilibrium_witness",
]

# The settings of the chapter 15 section; the chapter imports them so prose and claim agree.
SCALE_PROBLEM = {"n": 64, "d": 8}
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


def scale_invariance_witness(seed: int) -> dict:
    """Claim ``c15-scale-geometry-001``: the four facts of a scale-invariant weight.

    On the logistic unit of :mod:`trainable_harness.geometry` (``n = 64``, ``d = 8``) and
    ten weights drawn from ``default_rng(seed + 1)``:

    - ``loss_max_deviation``: ``max |f(c w) - f(w)|`` over ``c`` in
      ``SCALE_FACTORS``;
    - ``orthogonality_max_cosine``: ``max |cos(w, grad f(w))|``;
    - ``gradient_scaling_max_relative_deviation``:
      ``max |c grad f(c w) - grad f(w)| / |grad f(w)|``;
    - over 100 full-batch steps with lr 1 from a unit weight: ``pythagoras_max_residual``,
      the largest ``| |w'|^2 - |w|^2 - lr^2 |g|^2 | / |w'|^2``, ``norm_never_decreases``
      (no step lowers the norm by more than 4 units of rounding) and ``final_norm``;
    - ``same_path_max_direction_gap``: the largest distance between the unit directions
      of the run above and a run from ``4 w`` with lr ``16``;
    - ``first_step_tan_ratio``: ``tan`` of the first angular step from ``w`` over that
      from ``4 w``, both with lr 1 (``16`` in exact arithmetic);
    - ``decay_identity_max_residual``: the same as the Pythagoras residual for
      ``|w'|^2 = (1 - lr wd)^2 |w|^2 + lr^2 |g|^2`` with ``wd = 0.05``.

    Examples
    --------
    >>> result = scale_invariance_witness(seed=5)
    >>> result["norm_never_decreases"], round(result["first_step_tan_ratio"], 9)
    (True, 16.0)
    """
    problem = make_logistic_problem(seed=seed, **SCALE_PROBLEM)
    weights = np.random.default_rng(seed + 1).normal(size=(10, SCALE_PROBLEM["d"]))
    loss_gap = 0.0
    cosine = 0.0
    gradient_gap = 0.0
    for w in weights:
        loss = scale_invariant_loss(w, problem)
        g = scale_invariant_gradient(w, problem)
        cosine = max(cosine, abs(w @ g) / (np.linalg.norm(w) * np.linalg.norm(g)))
        for c in SCALE_FACTORS:
            loss_gap = max(loss_gap, abs(scale_invariant_loss(c * w, problem) - loss))
            scaled = c * scale_invariant_gradient(c * w, problem)
            gradient_gap = max(gradient_gap, np.linalg.norm(scaled - g) / np.linalg.norm(g))

    w0 = _unit(weights[0])
    c = SCALE_NORM_FACTOR
    plain = run_gradient_descent(w0, problem, lr=SCALE_LR, steps=SCALE_STEPS)
    norms = np.linalg.norm(plain.weights, axis=1)
    grads = np.linalg.norm(plain.gradients, axis=1)
    pythagoras = np.abs(norms[1:] ** 2 - norms[:-1] ** 2 - SCALE_LR**2 * grads**2)

    rescaled = run_gradient_descent(c * w0, problem, lr=c * c * SCALE_LR, steps=SCALE_STEPS)
    direction_gap = np.linalg.norm(_unit(plain.weights) - _unit(rescaled.weights), axis=1)
    same_lr = run_gradient_descent(c * w0, problem, lr=SCALE_LR, steps=1)
    tan_ratio = np.tan(angular_steps(plain.weights[:2])[0]) / np.tan(
        angular_steps(same_lr.weights)[0]
    )

    wd = SCALE_WEIGHT_DECAY
    decayed = run_gradient_descent(w0, problem, lr=SCALE_LR, steps=SCALE_STEPS, weight_decay=wd)
    d_norms = np.linalg.norm(decayed.weights, axis=1)
    d_grads = np.linalg.norm(decayed.gradients, axis=1)
    shrink = (1.0 - SCALE_LR * wd) ** 2
    decay_residual = np.abs(
        d_norms[1:] ** 2 - shrink * d_norms[:-1] ** 2 - SCALE_LR**2 * d_grads**2
    )
    return {
        "loss_max_deviation": float(loss_gap),
        "orthogonality_max_cosine": float(cosine),
        "gradient_scaling_max_relative_deviation": float(gradient_gap),
        "pythagoras_max_residual": float(np.max(pythagoras / norms[1:] ** 2)),
        # Once the gradient is ~1e-8, lr^2 |g|^2 is below the rounding of |w|^2, so
        # consecutive norms may tie or differ by one ulp; more than that would refute.
        "norm_never_decreases": bool(
            np.all(np.diff(norms) >= -4 * np.finfo(np.float64).eps * norms[1:])
        ),
        "final_norm": float(norms[-1]),
        "same_path_max_direction_gap": float(np.max(direction_gap)),
        "first_step_tan_ratio": float(tan_ratio),
        "decay_identity_max_residual": float(np.max(decay_residual / d_norms[1:] ** 2)),
    }


def weight_decay_equilibrium_run(seed: int, initial_norm: float, **settings):
    """One minibatch run of the chapter 15 equilibrium experiment (``EQUILIBRIUM`` settings).

    The data are drawn from ``seed`` and the initial direction from ``seed + 1``; the
    minibatch sequence from ``seed + 2`` is shared by every initial norm, so runs from
    different norms see the same examples in the same order.

    Returns
    -------
    Trajectory
        From :func:`trainable_harness.geometry.run_gradient_descent`.
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


def weight_decay_equilibrium_witness(seed: int) -> dict:
    """Claim ``c15-decay-equilibrium-001``, one seed: weight decay sets the angular step.

    Minibatch gradient descent (``EQUILIBRIUM`` settings: lr 0.5, wd 0.02, B = 16, 600
    steps) on the scale-invariant logistic unit, from initial norms 0.1 and 10 along one
    direction. Over the last 200 steps:

    - ``rms_angle_ratio``: the root mean square angular step over ``arccos(1 - lr wd)``,
      the angle at which the norm recursion stands still (run from norm 0.1);
    - ``final_norm_ratio``: final norm from initial norm 10 over that from 0.1 (the
      initial norm is forgotten if this is 1);
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
    target = equilibrium_angle(EQUILIBRIUM["lr"], EQUILIBRIUM["weight_decay"])
    norm_small = float(np.linalg.norm(run_small.weights[-1]))
    norm_large = float(np.linalg.norm(run_large.weights[-1]))
    return {
        "rms_angle_ratio": float(np.sqrt(np.mean(theta**2)) / target),
        "final_norm_ratio": norm_large / norm_small,
        "growth_factor_small": norm_small / small,
        "shrink_factor_large": norm_large / large,
    }


def larger_learning_rates_witness(seed: int) -> dict:
    """Claim ``c16-larger-learning-rates-001``, one seed: the MLP with and without batch norm.

    :func:`trainable_harness.mlp.learning_rate_sweep` for both networks (grid 1/8 to 64,
    60 full-batch steps, 128 examples) and :func:`trainable_harness.mlp.probe_along_training`
    at lr 0.5. Fields: ``log2_gain_learning`` and ``log2_gain_finite`` (log2 of the ratio
    of the largest learning rates, batch norm over plain), ``log2_largest_learning_plain``,
    ``log2_largest_learning_bn``, ``best_loss_plain``, ``best_loss_bn``, and the ratios
    plain over batch norm of the mean loss variation, gradient change and effective
    smoothness along the gradient.

    Examples
    --------
    >>> result = larger_learning_rates_witness(seed=3)
    >>> result["log2_gain_learning"] >= 1
    True
    """
    sweeps = {bn: learning_rate_sweep(seed, bn) for bn in (False, True)}
    probes = {bn: probe_along_training(seed, bn) for bn in (False, True)}
    plain, bn = sweeps[False], sweeps[True]
    return {
        "log2_largest_learning_plain": float(np.log2(plain.largest_learning)),
        "log2_largest_learning_bn": float(np.log2(bn.largest_learning)),
        "log2_gain_learning": float(np.log2(bn.largest_learning / plain.largest_learning)),
        "log2_gain_finite": float(np.log2(bn.largest_finite / plain.largest_finite)),
        "best_loss_plain": plain.best_loss,
        "best_loss_bn": bn.best_loss,
        "loss_variation_ratio": probes[False].loss_variation / probes[True].loss_variation,
        "gradient_change_ratio": probes[False].gradient_change / probes[True].gradient_change,
        "smoothness_ratio": (
            probes[False].effective_smoothness / probes[True].effective_smoothness
        ),
    }


def small_batch_witness(seed: int) -> dict:
    """Claim ``c16-small-batch-001``, one seed: batch norm as the batch shrinks.

    From :func:`trainable_harness.small_batch.small_batch_sweep` (B = 1 to 64, 1024
    samples per size, 8 channels of 4 x 4 positions, shared variance 1 of a total 4):

    - ``gap_b1``, ``gap_b64``: RMS train/eval gap of batch norm at B = 1 and 64;
    - ``gap_slope``: least-squares slope of log gap against log B;
    - ``mean_error_max_relative_deviation``: largest relative deviation of the measured
      RMS error of the batch mean from ``sqrt((tau^2 + sigma^2 / HW) / B)``;
    - ``ghost_over_b8``: gap of 64-sample batches normalized in ghost batches of 8 over
      the gap of 8-sample batches;
    - ``renorm_gap_b2``: train/eval gap of batch renormalization (r_max 3, d_max 5) at B = 2;
    - ``sync_max_error``: merged per-device statistics against the whole batch's.

    Examples
    --------
    >>> result = small_batch_witness(seed=0)
    >>> result["gap_b1"] > result["gap_b64"]
    True
    """
    sweep = small_batch_sweep(seed)
    sizes = sweep["batch_sizes"]
    theory = np.array([mean_error_theory(b) for b in sizes])
    slope = np.polyfit(np.log(sizes), np.log(sweep["gap"]), 1)[0]
    b8 = int(np.flatnonzero(sizes == 8)[0])
    return {
        "gap_b1": float(sweep["gap"][0]),
        "gap_b64": float(sweep["gap"][-1]),
        "gap_slope": float(slope),
        "mean_error_max_relative_deviation": float(
            np.max(np.abs(sweep["mean_error"] / theory - 1.0))
        ),
        "ghost_over_b8": float(sweep["ghost_gap"] / sweep["gap"][b8]),
        "renorm_gap_b2": float(sweep["renorm_gap"][1]),
        "sync_max_error": sweep["sync_max_error"],
    }


def cancellation_matrix_witness() -> dict:
    """Claim ``c15-cancellation-matrix-001``: where each format first fails (exercise 2).

    For offsets ``10**k``, ``k`` in ``LOG10_OFFSETS`` (0 to 9), and the values
    ``offset + (-2, -1, 1, 2)`` in FP16, BF16 (emulated), FP32 and FP64: the smallest
    ``k`` at which the stored values' variance, the raw-moment formula or the centered
    formula is off by more than 10% of 2.5 (or is not finite), from
    :func:`trainable_harness.precision.first_failures`; ``"never"`` when none on the grid.

    Examples
    --------
    >>> cancellation_matrix_witness()["fp32"]["raw_fails"]
    4
    """
    found = first_failures(cancellation_table(LOG10_OFFSETS))
    return {
        fmt: {name: "never" if k is None else k for name, k in row.items()}
        for fmt, row in found.items()
    }


def bn_backward_witness(seed: int) -> dict:
    """Claim ``c16-bn-backward-001``: batch norm's backward pass is gamma J_C^T per channel.

    For a batch of 8 values in 3 channels (``default_rng(seed)``), compares
    :func:`trainable_harness.mlp.batch_norm_backward` with
    ``gamma_c * normalization_jacobian(z_c, centered=True, eps).T @ dY_c`` (eq. 15.3 with
    epsilon) at ``eps = 0`` and ``eps = 0.1``, and measures the component of ``dZ`` along
    the centered input (zero at ``eps = 0`` up to rounding; at ``eps > 0`` it is
    ``gamma eps / s^3`` times the upstream's radial component, with
    ``s = sqrt(population_variance + eps)``). Deviations are relative to the largest
    entry of the reference.

    Examples
    --------
    >>> bn_backward_witness(seed=0)["max_deviation_eps0"] < 1e-13
    True
    """
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(8, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    gamma = rng.normal(size=3)
    upstream = rng.normal(size=(8, 3))
    out = {}
    for eps, name in ((0.0, "eps0"), (0.1, "eps")):
        _, cache = batch_norm_forward(Z, gamma, np.zeros(3), eps)
        dZ, _, _ = batch_norm_backward(upstream, cache, gamma)
        reference = np.stack(
            [
                gamma[c]
                * normalization_jacobian(Z[:, c], centered=True, eps=eps).T
                @ upstream[:, c]
                for c in range(3)
            ],
            axis=1,
        )
        scale = np.max(np.abs(reference))
        out[f"max_deviation_{name}"] = float(np.max(np.abs(dZ - reference)) / scale)
        radial = cache.Z_hat / np.linalg.norm(cache.Z_hat, axis=0)
        out[f"radial_component_{name}"] = float(
            np.max(np.abs(np.sum(dZ * radial, axis=0))) / scale
        )
    return out


# LLaMA-7B's width and MLP hidden size (Touvron et al. 2023, table 2) and its context.
LLAMA_7B = {"d": 4096, "hidden": 11008, "context": 2048}


def norm_cost_witness() -> dict:
    """Claim ``c15-norm-cost-001``: work per token of LayerNorm, RMSNorm and a block.

    Counted by :mod:`trainable_harness.transformer_cost` at ``LLAMA_7B`` sizes:
    operations (``ln_ops``, ``rms_ops``), values read (``ln_reads``, ``rms_reads``),
    reductions, the ratio ``rms_ops / ln_ops``, the matrix work of one block
    (``block_flops``), and the share of the block's work taken by its two RMSNorms
    (``rms_share_of_block``).

    Examples
    --------
    >>> result = norm_cost_witness()
    >>> result["ln_ops"], result["rms_ops"]
    (28675, 16387)
    """
    d = LLAMA_7B["d"]
    ln, rms = layer_norm_counts(d), rms_norm_counts(d)
    block = block_flops_per_token(**LLAMA_7B)
    return {
        "ln_ops": ln["total"],
        "rms_ops": rms["total"],
        "ops_ratio": rms["total"] / ln["total"],
        "ln_reads": ln["reads"],
        "rms_reads": rms["reads"],
        "ln_reductions": ln["reductions"],
        "rms_reductions": rms["reductions"],
        "block_flops": block["total"],
        "rms_share_of_block": 2 * rms["total"] / block["total"],
    }
