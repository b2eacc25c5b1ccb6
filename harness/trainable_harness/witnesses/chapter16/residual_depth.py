"""Section 16.6: where the normalization sits in a residual stack.

Exact block Jacobians of toy pre-norm and post-norm stacks at initialization, and the gain
from each block's input to the output as the stack gets deeper.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.errors import UnknownChoiceError
from trainable_harness.normalization import (
    centered_normalize_with_jacobian,
    normalization_jacobian,
)

__all__ = [
    "RESIDUAL_DEPTHS",
    "RESIDUAL_NETWORKS",
    "RESIDUAL_WIDTH",
    "gains_to_output",
    "residual_block_jacobians",
    "residual_depth_witness",
    "residual_gain_profiles",
]

RESIDUAL_DEPTHS = (2, 4, 8, 16, 32, 64)
RESIDUAL_NETWORKS = 8  # random stacks per depth and placement, per seed
RESIDUAL_WIDTH = 16  # coordinates of the residual stream


def residual_block_jacobians(
    rng: np.random.Generator,
    depth: int,
    placement: str,
    *,
    width: int = RESIDUAL_WIDTH,
    eps: float = 1e-5,
) -> list[np.ndarray]:
    """Exact Jacobians of a toy residual stack at initialization, last one the output map.

    Blocks use the centered map ``N`` (eq. 15.1 with eps) and a branch
    ``F(z) = tanh(W z)`` with fresh ``W`` of N(0, 1/width) entries per block; the input is
    N(0, I). ``placement="pre"``: ``x + F(N(x))``, Jacobian ``I + J_F J_N`` (section 15.4),
    followed by a final ``N`` so that the output is normalized as in pre-norm transformers.
    ``placement="post"``: ``N(x + F(x))``, Jacobian ``J_N (I + J_F)``; its output is
    already normalized, so the final map is the identity. Draws: ``depth`` weight matrices,
    then the input.

    Returns
    -------
    list of numpy.ndarray, ``depth + 1`` matrices of shape ``(width, width)``
        The block Jacobians in order, then the final map's.

    Examples
    --------
    >>> jacobians = residual_block_jacobians(np.random.default_rng(0), 3, "pre")
    >>> len(jacobians), jacobians[0].shape
    (4, (16, 16))
    """
    if placement not in ("pre", "post"):
        raise UnknownChoiceError(f"placement must be 'pre' or 'post', got {placement!r}")
    weights = [rng.normal(0.0, 1.0 / np.sqrt(width), (width, width)) for _ in range(depth)]
    x = rng.normal(size=width)
    identity = np.eye(width)
    jacobians = []
    # The normalization's value and Jacobian at one point come from one pass over its
    # moments (centered_normalize_with_jacobian), and each branch's tanh is taken once.
    for W in weights:
        if placement == "pre":
            z, normalization = centered_normalize_with_jacobian(x, eps=eps)
            branch = np.tanh(W @ z)
            branch_jacobian = (1.0 - branch**2)[:, None] * W
            jacobians.append(identity + branch_jacobian @ normalization)
            x = x + branch
        else:
            branch = np.tanh(W @ x)
            branch_jacobian = (1.0 - branch**2)[:, None] * W
            y = x + branch
            x, normalization = centered_normalize_with_jacobian(y, eps=eps)
            jacobians.append(normalization @ (identity + branch_jacobian))
    final = normalization_jacobian(x, centered=True, eps=eps) if placement == "pre" else identity
    jacobians.append(final)
    return jacobians


def gains_to_output(jacobians: list[np.ndarray]) -> np.ndarray:
    """RMS gain ``||d out / d x_l||_F / sqrt(width)`` from the input of each block to the output.

    ``jacobians`` as returned by :func:`residual_block_jacobians`; entry ``l`` of the result
    is the gain from the input of block ``l`` (entry 0: the stack's input). The RMS gain is
    the factor by which a random output gradient's norm changes on its way back to ``x_l``.

    Examples
    --------
    >>> gains_to_output([2.0 * np.eye(4), np.eye(4)])
    array([2.])
    """
    width = jacobians[0].shape[0]
    product = jacobians[-1].copy()
    gains = []
    for jacobian in reversed(jacobians[:-1]):
        product = product @ jacobian
        gains.append(np.linalg.norm(product) / np.sqrt(width))
    return np.array(gains[::-1])


def residual_gain_profiles(
    seed: int, *, networks: int = RESIDUAL_NETWORKS, depths: tuple[int, ...] = RESIDUAL_DEPTHS
) -> dict:
    """Mean gain profiles of toy pre- and post-norm stacks, for every depth.

    Section 16.6, with ``rng = numpy.random.default_rng(seed)``: for each depth ``L`` in
    ``depths`` and each placement (pre, then post), draw ``networks`` random toy stacks
    (:func:`residual_block_jacobians`) and average their gain profiles
    (:func:`gains_to_output`).

    Returns
    -------
    dict
        ``{"pre": {L: profile}, "post": {L: profile}}``, each profile an array of ``L``
        mean gains from the input of block ``l`` to the output (entry 0: the stack's input,
        entry ``L - 1``: the last block's input, the *top gain*).

    Examples
    --------
    >>> profiles = residual_gain_profiles(0, networks=2, depths=(2, 4))
    >>> [len(profiles["post"][L]) for L in (2, 4)]
    [2, 4]
    """
    rng = np.random.default_rng(seed)
    profiles = {"pre": {}, "post": {}}
    for depth in depths:
        for placement in ("pre", "post"):
            profiles[placement][depth] = np.mean(
                [
                    gains_to_output(residual_block_jacobians(rng, depth, placement))
                    for _ in range(networks)
                ],
                axis=0,
            )
    return profiles


@claim_computation
def residual_depth_witness(seed: int, *, networks: int = RESIDUAL_NETWORKS) -> dict:
    """Claim ``c16-residual-depth-001`` (one seed of a set): gains of pre- and post-norm stacks.

    Section 16.6: the profiles of :func:`residual_gain_profiles` over ``RESIDUAL_DEPTHS``.
    The *top gain* is the gain from the input of the last block to the output, the *input
    gain* that from the stack's input.

    Returns
    -------
    dict
        For ``pre_norm`` and ``post_norm``: ``top_gain_slope`` (least-squares slope of
        log top gain against log L), ``top_gain.depth_<L>`` for every depth,
        ``input_gain_at_max_depth`` (at L = 64) and ``input_over_top_at_max_depth`` (their
        ratio: above 1 when gradients grow on their way down to the input).

    Examples
    --------
    >>> result = residual_depth_witness(2831822681, networks=4)
    >>> result["pre_norm"]["top_gain_slope"] < -0.3 < result["post_norm"]["top_gain_slope"]
    True
    """
    profiles = residual_gain_profiles(seed, networks=networks)
    result = {}
    for placement in ("pre", "post"):
        top = [profiles[placement][depth][-1] for depth in RESIDUAL_DEPTHS]
        deepest = profiles[placement][RESIDUAL_DEPTHS[-1]]
        slope = np.polyfit(np.log(RESIDUAL_DEPTHS), np.log(top), 1)[0]
        result[f"{placement}_norm"] = {
            "top_gain_slope": float(slope),
            "top_gain": {f"depth_{L}": float(profiles[placement][L][-1]) for L in RESIDUAL_DEPTHS},
            "input_gain_at_max_depth": float(deepest[0]),
            "input_over_top_at_max_depth": float(deepest[0] / deepest[-1]),
        }
    return result
