"""Chapter 15's claim computations: invariance, epsilon, running moment states, placement.

Each is registered with :func:`~trainable_harness.claims.computations.claim_computation`
and named in ``claims/c15-*.yaml`` as ``trainable_harness.witnesses.chapter15.<name>``.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claims.computations import claim_computation
from trainable_harness.errors import ShapeError, WeightShapeError
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

__all__ = [
    "EPSILON_RATIOS",
    "central_difference_jacobian",
    "epsilon_sweep",
    "epsilon_witness",
    "invariance_witness",
    "placement_witness",
    "residual_placement",
    "running_state_witness",
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
    >>> from trainable_harness.claims import claim_seed
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
    >>> from trainable_harness.claims import claim_seed
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
