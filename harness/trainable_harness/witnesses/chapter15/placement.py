"""Section 15.4: placement changes the derivative path.

A residual block with a tanh branch, normalized before the branch (pre-norm) or after the
addition (post-norm): both exact Jacobians, checked against central differences, and what
each does with the constant direction.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.errors import WeightShapeError
from trainable_harness.normalization import centered_normalize, normalization_jacobian
from trainable_harness.witnesses.chapter15.invariance import jacobian_rank

__all__ = [
    "PLACEMENT_WIDTH",
    "central_difference_jacobian",
    "placement_experiment",
    "placement_summary",
    "placement_witness",
    "residual_placement",
    "tanh_branch",
]

PLACEMENT_WIDTH = 4  # d of the block


def tanh_branch(weight: np.ndarray):
    """The branch ``F(z) = tanh(W z)`` and its Jacobian ``diag(1 - tanh(W z)**2) W``, as two
    functions of ``z`` (float64; ``weight`` of shape (d, d), ``z`` of shape (d,))."""

    def branch(z):
        return np.tanh(weight @ z)

    def branch_jacobian(z):
        return (1.0 - np.tanh(weight @ z) ** 2)[:, None] * weight

    return branch, branch_jacobian


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

    branch, branch_jacobian = tanh_branch(weight)
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


def placement_experiment(seed: int, *, d: int = PLACEMENT_WIDTH) -> dict:
    """One pre-norm and one post-norm block, their Jacobians checked three ways.

    With ``rng = numpy.random.default_rng(seed)``: ``W`` with entries N(0, 1/d) (so tanh
    stays near its linear range) and ``x`` with entries N(0, 1), in float64;
    :func:`residual_placement` gives both exact Jacobians, compared with
    :func:`central_difference_jacobian` (step 1e-6).

    Returns
    -------
    dict
        ``blocks`` (from :func:`residual_placement`); ``fd_error`` with ``pre`` and
        ``post`` (the largest entry of each Jacobian minus its finite difference);
        ``rank`` with ``pre`` and ``post`` (:func:`jacobian_rank`); ``pre_ones_error``
        (``max |J_pre 1 - 1|``) and ``post_ones_error`` (``max |1^T J_post|``).

    Examples
    --------
    >>> placement_experiment(0)["rank"]
    {'pre': 4, 'post': 2}
    """
    rng = np.random.default_rng(seed)
    weight = rng.normal(size=(d, d)) / np.sqrt(d)  # 1/d variance: tanh stays near linear
    x = rng.normal(size=d)
    blocks = residual_placement(weight, x)
    ones = np.ones(d)
    return {
        "blocks": blocks,
        "fd_error": {
            name: np.max(
                np.abs(blocks[f"jacobian_{name}"] - central_difference_jacobian(blocks[name], x))
            )
            for name in ("pre", "post")
        },
        "rank": {name: jacobian_rank(blocks[f"jacobian_{name}"]) for name in ("pre", "post")},
        "pre_ones_error": float(np.max(np.abs(blocks["jacobian_pre"] @ ones - ones))),
        "post_ones_error": float(np.max(np.abs(ones @ blocks["jacobian_post"]))),
    }


@claim_computation
def placement_witness(seed: int, *, d: int = PLACEMENT_WIDTH) -> dict:
    """Claim ``c15-placement-001``: pre- against post-normalization Jacobians (section 15.4).

    The checks of :func:`placement_experiment`, summarized by :func:`placement_summary`.

    Returns
    -------
    dict
        ``fd_error_max`` (the larger finite-difference error of the two Jacobians),
        ``rank_pre`` and ``rank_post``, ``pre_ones_error`` and ``post_ones_error``.

    Examples
    --------
    >>> result = placement_witness(1098144132)
    >>> result["rank_pre"], result["rank_post"]
    (4, 2)
    """
    return placement_summary(placement_experiment(seed, d=d))


def placement_summary(run: dict) -> dict:
    """The fields of :func:`placement_witness`, from :func:`placement_experiment`.

    Examples
    --------
    >>> placement_summary(placement_experiment(0))["rank_post"]
    2
    """
    return {
        "fd_error_max": float(max(run["fd_error"]["pre"], run["fd_error"]["post"])),
        "rank_pre": run["rank"]["pre"],
        "rank_post": run["rank"]["post"],
        "pre_ones_error": run["pre_ones_error"],
        "post_ones_error": run["post_ones_error"],
    }
