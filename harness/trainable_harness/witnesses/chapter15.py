"""Chapter 15's claim computations: invariance, epsilon, running state, placement, geometry.

Besides sections 15.1-15.4, the section on scale invariance and the effective learning
rate (``scale_invariance_witness``, ``weight_decay_equilibrium_witness``), the section on
RMSNorm and LayerNorm in Transformers (``norm_cost_witness``) and the worked solutions of
exercises 2 and 4 (``cancellation_matrix_witness``, ``estimator_shift_witness``).

Each is registered with :func:`~claimbook.claims.computations.claim_computation`
and named in ``claims/c15-*.yaml`` as ``trainable_harness.witnesses.chapter15.<name>``.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.errors import ShapeError, WeightShapeError
from trainable_harness.estimator_shift import mean_square_discrepancy, shift_part
from trainable_harness.geometry import (
    angular_steps,
    equilibrium_angle,
    make_logistic_problem,
    run_gradient_descent,
    scale_invariant_gradient,
    scale_invariant_loss,
)
from trainable_harness.moments import (
    merge_moments,
    raw_and_centered_variance,
    stable_online_moments,
)
from trainable_harness.normalization import (
    centered_normalize,
    normalization_jacobian,
    rms_normalize,
)
from trainable_harness.precision import LOG10_OFFSETS, cancellation_table, first_failures
from trainable_harness.transformer_cost import (
    block_flops_per_token,
    layer_norm_counts,
    rms_norm_counts,
)

__all__ = [
    "AUDIT_EPS",
    "AUDIT_MEAN_SHIFTS",
    "AUDIT_WIDTH",
    "EPSILON_RATIOS",
    "EQUILIBRIUM",
    "ESTIMATOR_BATCH_COUNTS",
    "ESTIMATOR_BATCH_SIZES",
    "ESTIMATOR_DEFAULT_COUNT",
    "ESTIMATOR_SHIFT",
    "LLAMA_7B",
    "SCALE_FACTORS",
    "SCALE_LR",
    "SCALE_NORM_FACTOR",
    "SCALE_PROBLEM",
    "SCALE_STEPS",
    "SCALE_WEIGHT_DECAY",
    "cancellation_matrix_witness",
    "central_difference_jacobian",
    "epsilon_sweep",
    "epsilon_witness",
    "estimator_shift_witness",
    "invariance_witness",
    "norm_cost_witness",
    "placement_witness",
    "residual_placement",
    "rms_ablation_control_witness",
    "running_state_witness",
    "scale_invariance_witness",
    "weight_decay_equilibrium_run",
    "weight_decay_equilibrium_witness",
]

# Tolerances of the claims' own arithmetic, not of their expectations.
RANK_TOLERANCE = 1e-10  # singular values of the d = 4 Jacobians are O(1) or O(1e-16)
MERGED_MEAN_TOLERANCE = 3e-15  # a few ulps of a mean near 4 (ulp = 8.9e-16)


@claim_computation
def invariance_witness() -> dict:
    """Claim ``c15-invariance-001``: invariances, Jacobian ranks and FP32 cancellation.

    Section 15.1: for ``x = (-2, -1, 1, 2)`` and ``x + 10``, the largest coordinate change of
    the centered map (eq. 15.1) and of the RMS map (eq. 15.2), both at eps = 0 in float64;
    the ranks of their exact Jacobians at ``x`` (eq. 15.3; ``numpy.linalg.matrix_rank``
    with ``tol=1e-10``). Section 15.2: the population variance of the FP32 values
    (9998, 9999, 10001, 10002) by the raw-moment formula and by centering first.

    Returns
    -------
    dict
        ``centered_shift_deviation``, ``rms_shift_deviation`` (floats),
        ``centered_jacobian_rank``, ``rms_jacobian_rank`` (ints),
        ``fp32_raw_moment_variance``, ``fp32_centered_variance`` (floats), and
        ``fp64_raw_moment_variance``, the raw-moment formula on the same values in FP64.

    Examples
    --------
    >>> result = invariance_witness()
    >>> result["centered_shift_deviation"], round(result["rms_shift_deviation"], 3)
    (0.0, 2.055)
    >>> result["centered_jacobian_rank"], result["rms_jacobian_rank"]
    (2, 3)
    >>> result["fp32_raw_moment_variance"], result["fp32_centered_variance"]
    (0.0, 2.5)
    >>> result["fp64_raw_moment_variance"]
    2.5
    """
    x = np.array([-2.0, -1.0, 1.0, 2.0])
    shifted = x + 10.0
    values = np.array([9998.0, 9999.0, 10001.0, 10002.0])
    raw, centered = raw_and_centered_variance(values, dtype=np.float32)
    fp64_raw, _ = raw_and_centered_variance(values, dtype=np.float64)
    return {
        "centered_shift_deviation": _max_abs_change(centered_normalize, x, shifted),
        "rms_shift_deviation": _max_abs_change(rms_normalize, x, shifted),
        "centered_jacobian_rank": _jacobian_rank(x, centered=True),
        "rms_jacobian_rank": _jacobian_rank(x, centered=False),
        "fp32_raw_moment_variance": raw,
        "fp32_centered_variance": centered,
        "fp64_raw_moment_variance": fp64_raw,
    }


def _max_abs_change(normalize, x: np.ndarray, shifted: np.ndarray) -> float:
    return float(np.max(np.abs(normalize(shifted) - normalize(x))))


def _jacobian_rank(x: np.ndarray, centered: bool) -> int:
    jacobian = normalization_jacobian(x, centered=centered)
    return int(np.linalg.matrix_rank(jacobian, tol=RANK_TOLERANCE))


@claim_computation
def running_state_witness(
    seed: int, *, batch_count: int = 8, batch_size: int = 32, eps: float = 1e-5
) -> dict:
    """Claim ``c15-running-state-001``: train-mode against evaluation-mode statistics.

    Section 15.3: with ``rng = numpy.random.default_rng(seed)``, draw ``batch_count``
    training batches of ``batch_size`` from N(4, 2^2), then one evaluation batch of
    ``batch_size`` from the same population (no distribution shift). The running state
    merges the per-batch Welford states left to right (:func:`merge_moments`); the
    evaluation state is one Welford pass over the evaluation batch; all in float64.
    The evaluation values are then normalized as ``(x - mean) / sqrt(population_variance
    + eps)`` under each state.

    Parameters
    ----------
    seed : int
        The registered ``claim_seed("c15-running-state")``.
    batch_count, batch_size : int, default 8 and 32
    eps : float, default 1e-5
        Added to the population variance inside the square root.

    Returns
    -------
    dict
        ``running_mean``, ``evaluation_mean``, ``running_population_variance``,
        ``evaluation_population_variance`` (floats); ``merged_equals_direct`` (bool: the
        merged ``m2`` equals a single pass over all training values bit for bit and the
        means differ by at most 3e-15); ``merged_mean_gap`` (that mean difference); and
        ``normalized_discrepancy`` with ``maximum_absolute``, the largest change of a
        normalized evaluation value between the two states.

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = running_state_witness(claim_seed("c15-running-state"))
    >>> round(result["running_mean"], 3), round(result["evaluation_mean"], 3)
    (4.096, 3.766)
    >>> round(result["normalized_discrepancy"]["maximum_absolute"], 3)
    0.448
    """
    rng = np.random.default_rng(seed)
    training_batches = rng.normal(4, 2, size=(batch_count, batch_size))
    evaluation_batch = rng.normal(4, 2, size=batch_size)

    running_state = stable_online_moments(training_batches[0], dtype=np.float64)
    for batch in training_batches[1:]:
        running_state = merge_moments(
            running_state, stable_online_moments(batch, dtype=np.float64)
        )
    direct_state = stable_online_moments(training_batches.ravel(), dtype=np.float64)
    evaluation_state = stable_online_moments(evaluation_batch, dtype=np.float64)

    merged_mean_gap = float(abs(running_state.mean - direct_state.mean))
    train_mode_output = _normalize_with(evaluation_batch, evaluation_state, eps)
    evaluation_mode_output = _normalize_with(evaluation_batch, running_state, eps)
    return {
        "running_mean": float(running_state.mean),
        "evaluation_mean": float(evaluation_state.mean),
        "running_population_variance": float(running_state.population_variance),
        "evaluation_population_variance": float(evaluation_state.population_variance),
        "merged_equals_direct": bool(
            running_state.m2 == direct_state.m2 and merged_mean_gap <= MERGED_MEAN_TOLERANCE
        ),
        "merged_mean_gap": merged_mean_gap,
        "normalized_discrepancy": {
            "maximum_absolute": float(np.max(np.abs(train_mode_output - evaluation_mode_output)))
        },
    }


def _normalize_with(values: np.ndarray, state, eps: float) -> np.ndarray:
    """Normalize ``values`` with a given state's mean and population variance."""
    return (values - state.mean) / np.sqrt(state.population_variance + eps)


# --- update geometry, norm costs and the worked solutions ----------------------------------


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

# LLaMA-7B's width and MLP hidden size (Touvron et al. 2023, table 2) and its context.
LLAMA_7B = {"d": 4096, "hidden": 11008, "context": 2048}


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@claim_computation
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


@claim_computation
def weight_decay_equilibrium_witness(seed: int) -> dict:
    """Claim ``c15-decay-equilibrium-001``, one seed: weight decay sets the angular step.

    Minibatch gradient descent (``EQUILIBRIUM`` settings: lr 0.5, wd 0.02, B = 16, 600
    steps) on the scale-invariant logistic unit, from initial norms 0.1 and 10 along one
    direction. Over the last 200 steps:

    - ``rms_angle_ratio``: the root mean square angular step over ``arccos(1 - lr wd)``,
      the angle at which the norm recursion stands still (run from norm 0.1);
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
    target = equilibrium_angle(EQUILIBRIUM["lr"], EQUILIBRIUM["weight_decay"])
    norm_small = float(np.linalg.norm(run_small.weights[-1]))
    norm_large = float(np.linalg.norm(run_large.weights[-1]))
    return {
        "rms_angle_ratio": float(np.sqrt(np.mean(theta**2)) / target),
        "final_norm_relative_gap": abs(norm_large / norm_small - 1.0),
        "growth_factor_small": norm_small / small,
        "shrink_factor_large": norm_large / large,
    }


@claim_computation
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


@claim_computation
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


# Exercise 4: the discrepancy split, at a shift of half a standard deviation.
ESTIMATOR_SHIFT = 1.0
ESTIMATOR_BATCH_SIZES = (8, 32)  # evaluation (and training) batch sizes compared
ESTIMATOR_BATCH_COUNTS = (2, 32)  # training batch counts compared
ESTIMATOR_DEFAULT_COUNT = 8


@claim_computation
def estimator_shift_witness(seed: int) -> dict:
    """Claim ``c15-estimator-shift-001``, one seed: finite-estimator and shift parts.

    From :mod:`trainable_harness.estimator_shift` (20 draws per setting, training from
    N(4, 2^2)): ``batch_size_ratio``, the RMS control discrepancy (no shift) with batches
    of 8 over that with batches of 32 (8 batches each); ``batch_count_ratio``, the control
    with 2 batches over that with 32 (batches of 32); ``shift_recovered``,
    ``sqrt(E[total^2] - E[control^2])`` at a shift of 1 over ``1 / sqrt(4 + eps)``
    (8 batches of 32).

    Examples
    --------
    >>> result = estimator_shift_witness(seed=0)
    >>> result["batch_size_ratio"] > 1
    True
    """

    def rms(count, size, shift, stream):
        return mean_square_discrepancy(seed + stream, count, size, shift) ** 0.5

    small, large = ESTIMATOR_BATCH_SIZES
    few, many = ESTIMATOR_BATCH_COUNTS
    count = ESTIMATOR_DEFAULT_COUNT
    control = rms(count, large, 0.0, 0)
    total = rms(count, large, ESTIMATOR_SHIFT, 1)
    return {
        "batch_size_ratio": rms(count, small, 0.0, 2) / control,
        "batch_count_ratio": rms(few, large, 0.0, 3) / rms(many, large, 0.0, 4),
        "shift_recovered": float(
            np.sqrt(max(total**2 - control**2, 0.0)) / shift_part(ESTIMATOR_SHIFT)
        ),
    }


# --- section 15.2: epsilon changes the map ----------------------------------------------------

# mu2 / eps over eight decades, the rows of the chapter's table.
EPSILON_RATIOS = (1e-2, 1e-1, 1.0, 1e1, 1e2, 1e4, 1e6)


def epsilon_sweep(
    direction: np.ndarray, ratios=EPSILON_RATIOS, *, eps: float = 1e-5
) -> np.ndarray:
    """The RMS map with epsilon against the exact map, at second moments ``ratio * eps``.

    Section 15.2. For each ratio, ``direction`` is rescaled to ``x`` with
    ``mu2 = mean(x**2) = ratio * eps``, and three things are measured in float64:

    - ``gap_from_exact = max |N_eps(x) - N(x)|`` (eq. 15.2 with and without eps);
    - ``scale_break = max |N_eps(2x) - N_eps(x)|``, what doubling the input still moves;
    - ``gain_ratio``: the norm of the exact Jacobian with eps along ``x/||x||`` over its
      norm along a unit tangent orthogonal to ``x`` and to ``1``; in theory
      ``1 / (1 + ratio)``.

    Parameters
    ----------
    direction : numpy.ndarray, shape (d,), d >= 3
        A direction with zero mean (so the centered and RMS maps agree on it).
    ratios : sequence of float
        Values of ``mu2 / eps``.
    eps : float, default 1e-5

    Returns
    -------
    numpy.ndarray, shape (len(ratios), 4)
        Rows ``(ratio, gap_from_exact, scale_break, gain_ratio)``.

    Raises
    ------
    ShapeError
        If ``direction`` is not a vector of at least 3 values with zero mean.

    Examples
    --------
    >>> rows = epsilon_sweep(np.array([-2.0, -1.0, 1.0, 2.0]), [1.0])
    >>> round(float(rows[0, 3]), 12)
    0.5
    """
    direction = np.asarray(direction, dtype=np.float64)
    if direction.ndim != 1 or direction.size < 3 or abs(direction.mean()) > 1e-12:
        raise ShapeError(
            "epsilon_sweep: direction must be a vector of at least 3 values with zero mean, "
            f"got shape {direction.shape}"
        )
    # A unit vector orthogonal to the direction and to the constant vector 1.
    tangent = np.linalg.svd(np.stack([direction, np.ones_like(direction)]))[2][-1]
    rows = []
    for ratio in ratios:
        x = direction * np.sqrt(ratio * eps / np.mean(direction**2))
        gap_from_exact = np.max(np.abs(rms_normalize(x, eps=eps) - rms_normalize(x)))
        scale_break = np.max(np.abs(rms_normalize(2.0 * x, eps=eps) - rms_normalize(x, eps=eps)))
        jacobian = normalization_jacobian(x, centered=False, eps=eps)
        radial = np.linalg.norm(jacobian @ (x / np.linalg.norm(x)))
        tangential = np.linalg.norm(jacobian @ tangent)
        rows.append((ratio, gap_from_exact, scale_break, radial / tangential))
    return np.array(rows)


@claim_computation
def epsilon_witness(*, eps: float = 1e-5) -> dict:
    """Claim ``c15-epsilon-001``: how much epsilon changes the RMS map (section 15.2).

    :func:`epsilon_sweep` of ``(-2, -1, 1, 2)`` over :data:`EPSILON_RATIOS`, in float64.

    Returns
    -------
    dict
        ``scale_break_at_1`` and ``gain_ratio_at_1`` (``mu2 = eps``),
        ``scale_break_at_1e4`` (``mu2 = 1e4 eps``), ``gap_at_small`` (``mu2 = 1e-2 eps``),
        ``gain_ratio_formula_error`` (the largest relative gap between the measured gain
        ratio and ``1 / (1 + mu2 / eps)`` over the sweep), ``gain_cap``, ``1 / sqrt(eps)``,
        the largest gain the map can have, and ``gain_at_small_over_cap``, the spectral norm
        of the Jacobian at ``mu2 = 1e-2 eps`` (mean square of ``(-2, -1, 1, 2)`` is 2.5) as
        a fraction of that cap.

    Examples
    --------
    >>> result = epsilon_witness()
    >>> round(result["scale_break_at_1"], 3), round(result["gain_ratio_at_1"], 2)
    (0.237, 0.5)
    >>> round(result["gain_cap"])
    316
    """
    ratios = np.array(EPSILON_RATIOS)
    rows = epsilon_sweep(np.array([-2.0, -1.0, 1.0, 2.0]), ratios, eps=eps)

    def row_at(ratio: float) -> np.ndarray:
        return rows[np.flatnonzero(ratios == ratio)[0]]

    theory = 1.0 / (1.0 + ratios)
    return {
        "scale_break_at_1": float(row_at(1.0)[2]),
        "gain_ratio_at_1": float(row_at(1.0)[3]),
        "scale_break_at_1e4": float(row_at(1e4)[2]),
        "gap_at_small": float(row_at(1e-2)[1]),
        "gain_ratio_formula_error": float(np.max(np.abs(rows[:, 3] - theory) / theory)),
        "gain_cap": float(1.0 / np.sqrt(eps)),
        "gain_at_small_over_cap": float(
            np.linalg.norm(
                normalization_jacobian(
                    np.array([-2.0, -1.0, 1.0, 2.0]) * np.sqrt(1e-2 * eps / 2.5),
                    centered=False,
                    eps=eps,
                ),
                ord=2,
            )
            * np.sqrt(eps)
        ),
    }


# --- section 15.4: placement changes the derivative path -------------------------------------


def residual_placement(weight: np.ndarray, x: np.ndarray) -> dict:
    """Pre- and post-normalization residual blocks with a tanh branch, and their Jacobians.

    Section 15.4. The branch is ``F(z) = tanh(W z)``, with Jacobian
    ``diag(1 - tanh(W z)**2) W``; the normalization is the centered map (eq. 15.1, eps = 0).

    - pre-norm: ``x + F(N(x))``, ``J_pre = I + J_F(N(x)) J_N(x)``;
    - post-norm: ``N(x + F(x))``, ``J_post = J_N(x + F(x)) (I + J_F(x))``.

    Parameters
    ----------
    weight : numpy.ndarray, shape (d, d)
    x : numpy.ndarray, shape (d,)

    Returns
    -------
    dict
        ``pre`` and ``post`` (the block functions), ``jacobian_pre`` and ``jacobian_post``
        (exact, shape (d, d)).

    Raises
    ------
    WeightShapeError
        If ``weight`` is not square with the size of ``x``.

    Examples
    --------
    >>> blocks = residual_placement(np.eye(4), np.array([0.5, -1.0, 2.0, 0.0]))
    >>> np.allclose(blocks["jacobian_pre"] @ np.ones(4), np.ones(4))
    True
    """
    weight = np.asarray(weight, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    if weight.ndim != 2 or weight.shape != (x.size, x.size) or x.ndim != 1:
        raise WeightShapeError(
            f"residual_placement: weight must have shape ({x.size}, {x.size}) for x of "
            f"shape {x.shape}, got {weight.shape}"
        )

    def branch(z):
        return np.tanh(weight @ z)

    def branch_jacobian(z):
        return (1.0 - np.tanh(weight @ z) ** 2)[:, None] * weight

    identity = np.eye(x.size)
    return {
        "pre": lambda z: z + branch(centered_normalize(z)),
        "post": lambda z: centered_normalize(z + branch(z)),
        "jacobian_pre": identity
        + branch_jacobian(centered_normalize(x)) @ normalization_jacobian(x, centered=True),
        "jacobian_post": normalization_jacobian(x + branch(x), centered=True)
        @ (identity + branch_jacobian(x)),
    }


def central_difference_jacobian(block, z: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """``(block(z + h e_j) - block(z - h e_j)) / (2h)`` for every unit vector ``e_j``.

    Truncation error is of order ``step**2`` and rounding error of order ``1e-16 / step``.

    Examples
    --------
    >>> central_difference_jacobian(lambda z: 3.0 * z, np.zeros(2))
    array([[3., 0.],
           [0., 3.]])
    """
    z = np.asarray(z, dtype=np.float64)
    columns = [
        (block(z + step * unit) - block(z - step * unit)) / (2 * step) for unit in np.eye(z.size)
    ]
    return np.stack(columns, axis=1)


@claim_computation
def placement_witness(seed: int, *, d: int = 4) -> dict:
    """Claim ``c15-placement-001``: pre- against post-normalization Jacobians (section 15.4).

    With ``rng = numpy.random.default_rng(seed)``: ``W`` with entries N(0, 1/d) (so tanh
    stays near its linear range) and ``x`` with entries N(0, 1), in float64;
    :func:`residual_placement` gives both exact Jacobians, compared with
    :func:`central_difference_jacobian` (step 1e-6).

    Returns
    -------
    dict
        ``fd_error_max`` (the largest entry of either Jacobian minus its finite difference),
        ``rank_pre`` and ``rank_post`` (``matrix_rank`` with ``tol=1e-10``),
        ``pre_ones_error`` (``max |J_pre 1 - 1|``) and ``post_ones_error``
        (``max |1^T J_post|``).

    Examples
    --------
    >>> from claimbook.claims import claim_seed
    >>> result = placement_witness(claim_seed("c15-placement"))
    >>> result["rank_pre"], result["rank_post"]
    (4, 2)
    """
    rng = np.random.default_rng(seed)
    weight = rng.normal(size=(d, d)) / np.sqrt(d)
    x = rng.normal(size=d)
    blocks = residual_placement(weight, x)
    fd_errors = [
        np.max(np.abs(blocks[f"jacobian_{name}"] - central_difference_jacobian(blocks[name], x)))
        for name in ("pre", "post")
    ]
    ones = np.ones(d)
    return {
        "fd_error_max": float(max(fd_errors)),
        "rank_pre": int(np.linalg.matrix_rank(blocks["jacobian_pre"], tol=RANK_TOLERANCE)),
        "rank_post": int(np.linalg.matrix_rank(blocks["jacobian_post"], tol=RANK_TOLERANCE)),
        "pre_ones_error": float(np.max(np.abs(blocks["jacobian_pre"] @ ones - ones))),
        "post_ones_error": float(np.max(np.abs(ones @ blocks["jacobian_post"]))),
    }


# --- worked solution of exercise 5: the control an RMSNorm ablation needs --------------------

AUDIT_WIDTH = 64  # coordinates of the audited token
AUDIT_MEAN_SHIFTS = (0.0, 0.1, 1.0)  # token mean over its standard deviation
AUDIT_EPS = 1e-6  # the epsilon of the placement comparison


def _shift_key(shift: float) -> str:
    """``0.1 -> "shift_0p1"``, a field name without a dot."""
    return "shift_" + f"{shift:g}".replace(".", "p")


@claim_computation
def rms_ablation_control_witness(seed: int) -> dict:
    """Claim ``c15-rms-ablation-001``: where LayerNorm and RMSNorm can differ at all.

    Exercise 5 of chapter 15. A token ``z`` of ``AUDIT_WIDTH`` coordinates drawn from
    ``default_rng(seed)`` and centered and scaled (mean 0, population variance 1, so its
    RMS is 1) is shifted by ``m`` in ``AUDIT_MEAN_SHIFTS``. With ``x = z + m`` the centered
    map (eq. 15.1) returns ``z`` and the RMS map (eq. 15.2) ``(z + m) / sqrt(1 + m^2)``, so

        ``gap(m) = max_i |z_i - (z_i + m) / sqrt(1 + m^2)|``,

    zero at ``m = 0`` and about ``m`` for small ``m``. The witness measures the gap with
    :func:`centered_normalize` and :func:`rms_normalize` (eps 0) and compares it with the
    closed form. It also compares two placements of epsilon in RMSNorm, inside the root
    (``x / sqrt(mean(x^2) + eps)``, :func:`rms_normalize`) and added to the RMS
    (``x / (rms(x) + eps)``), on the token scaled to RMS ``sqrt(AUDIT_EPS)`` and to RMS 1:
    the second over the first is ``sqrt(r^2 + eps) / (r + eps)`` for RMS ``r``.

    Returns
    -------
    dict
        ``gap.shift_<m>`` for each shift; ``closed_form_deviation`` (the largest
        ``|gap - closed form|``); ``placement_ratio_small_token`` and
        ``placement_ratio_unit_token`` (inside-the-root output over added-to-the-RMS
        output... inverted: added-to-the-RMS over inside-the-root, one value per token,
        the largest over its coordinates).

    Examples
    --------
    >>> result = rms_ablation_control_witness(seed=0)
    >>> result["gap"]["shift_0"] < 1e-14 < result["gap"]["shift_0p1"]
    True
    """
    rng = np.random.default_rng(seed)
    z = centered_normalize(rng.normal(size=AUDIT_WIDTH))
    gaps, deviations = {}, []
    for shift in AUDIT_MEAN_SHIFTS:
        x = z + shift
        gap = float(np.max(np.abs(centered_normalize(x) - rms_normalize(x))))
        closed = float(np.max(np.abs(z - (z + shift) / np.sqrt(1.0 + shift**2))))
        gaps[_shift_key(shift)] = gap
        deviations.append(abs(gap - closed))

    def placement_ratio(rms_value: float) -> float:
        # x / (rms + eps) over x / sqrt(rms^2 + eps): the same for every coordinate.
        x = z * rms_value
        inside_root = rms_normalize(x, eps=AUDIT_EPS)
        on_rms = x / (np.sqrt(np.mean(x**2)) + AUDIT_EPS)
        return float(np.max(on_rms / inside_root))

    return {
        "gap": gaps,
        "closed_form_deviation": float(max(deviations)),
        "placement_ratio_small_token": placement_ratio(np.sqrt(AUDIT_EPS)),
        "placement_ratio_unit_token": placement_ratio(1.0),
    }
