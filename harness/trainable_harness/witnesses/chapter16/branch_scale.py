"""Worked solution of chapter 16's exercise 4: a branch scale in the post-norm toy stack.

The post-norm stack of section 16.6 with its branch multiplied by ``lambda``: the input
gain against ``lambda`` and the depth, beside a per-block prediction by quadrature.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation, field_name
from trainable_harness.normalization import (
    centered_normalize,
    centered_normalize_with_jacobian,
)
from trainable_harness.witnesses.chapter16.residual_depth import RESIDUAL_WIDTH, gains_to_output

__all__ = [
    "BRANCH_SCALES",
    "BRANCH_SCALE_DEPTH",
    "BRANCH_SCALE_NETWORKS",
    "BRANCH_SCALE_NODES",
    "branch_scale_witness",
    "branch_scaled_post_norm_jacobians",
    "predicted_log_gain_per_block",
    "scale_key",
]

BRANCH_SCALES = (0.1, 1.0, 3.0)  # lambda in N(x + lambda F(x))
BRANCH_SCALE_DEPTH = 64  # one stack per network; its last k blocks are a stack of depth k
BRANCH_SCALE_NETWORKS = 2  # random stacks per scale and seed
BRANCH_SCALE_NODES = 80  # Gauss-Hermite nodes of the per-block prediction


def branch_scaled_post_norm_jacobians(
    rng: np.random.Generator,
    depth: int,
    branch_scale: float,
    *,
    width: int = RESIDUAL_WIDTH,
    eps: float = 1e-5,
) -> list[np.ndarray]:
    """Exact block Jacobians of a post-norm toy stack ``N(x + lambda tanh(W x))``.

    The post-norm blocks of
    :func:`~trainable_harness.witnesses.chapter16.residual_depth.residual_block_jacobians`
    with the branch multiplied by ``branch_scale`` (``lambda``), so block ``l`` has Jacobian
    ``J_N(y_l) (I + lambda diag(tanh'(W_l x_l)) W_l)`` with ``y_l = x_l + lambda tanh(W_l
    x_l)`` and ``x_{l+1} = N(y_l)``; ``N`` is the centered map (eq. 15.1 with ``eps``).
    Unlike that function the input is normalized first, so that every block, the first
    included, reads a normalized vector and the last ``k`` blocks of a stack are
    themselves a stack of depth ``k``. Draws: ``depth`` matrices with N(0, 1/width)
    entries, then the input from N(0, I).

    Returns
    -------
    list of numpy.ndarray
        ``depth`` matrices of shape ``(width, width)``, in forward order.

    Examples
    --------
    >>> jacobians = branch_scaled_post_norm_jacobians(np.random.default_rng(0), 3, 0.5)
    >>> len(jacobians), jacobians[0].shape
    (3, (16, 16))
    """
    weights = [rng.normal(0.0, 1.0 / np.sqrt(width), (width, width)) for _ in range(depth)]
    x = centered_normalize(rng.normal(size=width), eps=eps)
    identity = np.eye(width)
    jacobians = []
    for W in weights:
        branch = np.tanh(W @ x)
        branch_jacobian = (1.0 - branch**2)[:, None] * W
        y = x + branch_scale * branch
        # The map's value and Jacobian at y from one pass over its moments.
        x, normalization = centered_normalize_with_jacobian(y, eps=eps)
        jacobians.append(normalization @ (identity + branch_scale * branch_jacobian))
    return jacobians


def predicted_log_gain_per_block(branch_scale: float) -> float:
    """The per-block comparison of section 16.6 for ``N(x + lambda tanh(W x))``.

    A block's input is normalized, so a branch pre-activation ``z`` is close to N(0, 1).
    The normalization divides by the forward size ``sqrt(1 + lambda^2 E[tanh(z)^2])`` of
    ``x + lambda F(x)``, while a random gradient crossing ``I + lambda J_F`` grows by
    ``sqrt(1 + lambda^2 E[tanh'(z)^2])``. The prediction is the log of their ratio,

        ``0.5 log((1 + lambda^2 E[tanh'(z)^2]) / (1 + lambda^2 E[tanh(z)^2]))``,

    with both expectations by Gauss-Hermite quadrature (``BRANCH_SCALE_NODES`` nodes). It
    leaves out the two directions (constant and radial) that ``J_N`` removes.

    Examples
    --------
    >>> predicted_log_gain_per_block(0.0)
    0.0
    >>> predicted_log_gain_per_block(1.0) > 0  # E[tanh'^2] > E[tanh^2]
    True
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(BRANCH_SCALE_NODES)
    weights = weights / np.sum(weights)
    forward = np.sum(weights * np.tanh(nodes) ** 2)
    backward = np.sum(weights * (1.0 - np.tanh(nodes) ** 2) ** 2)
    lam2 = branch_scale**2
    return float(0.5 * np.log((1.0 + lam2 * backward) / (1.0 + lam2 * forward)))


def scale_key(branch_scale: float) -> str:
    """Result-field name of a branch scale: 0.1 -> ``"scale_0p1"``.

    Examples
    --------
    >>> [scale_key(s) for s in BRANCH_SCALES]
    ['scale_0p1', 'scale_1', 'scale_3']
    """
    return field_name("scale", branch_scale)


@claim_computation
def branch_scale_witness(seed: int) -> dict:
    """Claim ``c16-branch-scale-001``, one seed: the post-norm input gain against lambda and L.

    Exercise 4 of chapter 16. With ``rng = numpy.random.default_rng(seed)``, for each
    ``lambda`` in ``BRANCH_SCALES`` draw ``BRANCH_SCALE_NETWORKS`` stacks of depth
    ``BRANCH_SCALE_DEPTH`` (:func:`branch_scaled_post_norm_jacobians`) and take from each
    the gain from the input of every block to the output (:func:`gains_to_output` with the
    identity as the final map). The gain over the last ``L`` blocks is the input gain of a
    stack of depth ``L``; the networks are averaged in log space.

    Returns
    -------
    dict
        Per ``scale_<lambda>`` (:func:`scale_key`): ``log_gain_per_block`` (least-squares
        slope of the mean log gain against ``L = 1 .. 64``), ``log_input_gain_depth_64``
        (the mean log input gain of the stacks of depth 64; gains are heavy-tailed, their
        logs much less so) and ``predicted_log_gain_per_block``
        (:func:`predicted_log_gain_per_block`, the same for every seed).

    Examples
    --------
    >>> result = branch_scale_witness(seed=0)
    >>> result["scale_3"]["log_gain_per_block"] > result["scale_0p1"]["log_gain_per_block"]
    True
    """
    rng = np.random.default_rng(seed)
    final = np.eye(RESIDUAL_WIDTH)  # post-norm output is already normalized: the identity
    blocks = np.arange(1, BRANCH_SCALE_DEPTH + 1)
    result = {}
    for branch_scale in BRANCH_SCALES:
        stacks = [
            [*branch_scaled_post_norm_jacobians(rng, BRANCH_SCALE_DEPTH, branch_scale), final]
            for _ in range(BRANCH_SCALE_NETWORKS)
        ]
        # gains_to_output lists block 0 (all L blocks) first; reverse to L = 1 .. 64.
        log_gains = np.mean([np.log(gains_to_output(s))[::-1] for s in stacks], axis=0)
        result[scale_key(branch_scale)] = {
            "log_gain_per_block": float(np.polyfit(blocks, log_gains, 1)[0]),
            "log_input_gain_depth_64": float(log_gains[-1]),
            "predicted_log_gain_per_block": predicted_log_gain_per_block(branch_scale),
        }
    return result
