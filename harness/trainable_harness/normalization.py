"""The two normalization maps of chapter 15 and their exact Jacobians.

Chapter 15, section 15.1 ("Two maps, two quotients"). With ``d`` the length of the last
axis, ``P = I - 11^T/d`` the centering projector and ``eps >= 0`` added to the mean square,

- centered map (eq. 15.1): ``N_C(x) = Px / sqrt(|Px|^2/d + eps)``, i.e.
  ``(x - mean(x)) / sqrt(population_variance(x) + eps)``;
- RMS map (eq. 15.2): ``N_R(x) = x / sqrt(|x|^2/d + eps)``, i.e. ``x / sqrt(mean(x^2) + eps)``.

At ``eps = 0`` these are ``sqrt(d) Px/|Px|`` and ``sqrt(d) x/|x|``, exactly the forms of the
chapter. No learned affine parameters are applied.

Dtype contract: floating inputs keep their dtype; integer and boolean inputs are promoted
to float64. Complex or object input is refused.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    DegenerateNormalizationError,
    ShapeError,
    UnsupportedDtypeError,
    check_eps,
    check_finite,
    check_nonempty,
)

__all__ = ["centered_normalize", "normalization_jacobian", "rms_normalize"]


def _as_float_array(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite floating array (integers promoted to float64)."""
    array = np.asarray(x)
    if array.dtype.kind in "biu":
        array = array.astype(np.float64)
    elif array.dtype.kind != "f":
        raise UnsupportedDtypeError(
            f"{name} has dtype {array.dtype}; a real floating or integer array is expected"
        )
    if array.ndim == 0:
        raise ShapeError(
            f"{name} has shape (), a scalar; an array of shape (..., d) with d >= 1 is expected"
        )
    check_nonempty(array, name)
    check_finite(array, name)
    return array


def _check_not_degenerate(denominator_is_zero: np.ndarray, what: str, map_name: str) -> None:
    """Raise if any row's normalizing statistic is zero (only reachable with eps = 0)."""
    if denominator_is_zero.any():
        row = tuple(int(i) for i in np.argwhere(denominator_is_zero)[0])
        where = f" (row {row})" if row else ""
        raise DegenerateNormalizationError(
            f"{map_name} is undefined at a {what}{where}: the statistic it divides by is 0 "
            "and eps = 0. The map has no value there; pass eps > 0 (e.g. 1e-5) for a "
            "defined output"
        )


def _centered_parts(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Return ``Px`` and ``s = sqrt(|Px|^2/d + eps)`` (keepdims) for the centered map."""
    centered = x - x.mean(axis=-1, keepdims=True)
    scale = np.sqrt(np.mean(centered * centered, axis=-1, keepdims=True) + eps)
    if eps == 0.0:
        # Test constancy on x itself: a rounded mean can leave a constant row with a
        # tiny nonzero Px, whose "normalized" value would be pure rounding noise.
        constant = np.all(x == x[..., :1], axis=-1)
        _check_not_degenerate(constant | (scale[..., 0] == 0), "constant vector", "eq. 15.1")
    return centered, scale


def _rms_scale(x: np.ndarray, eps: float) -> np.ndarray:
    """Return ``s = sqrt(|x|^2/d + eps)`` (keepdims) for the RMS map."""
    scale = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    if eps == 0.0:
        _check_not_degenerate(scale[..., 0] == 0, "zero vector", "eq. 15.2")
    return scale


def centered_normalize(x, eps: float = 0.0) -> np.ndarray:
    """Center and scale along the last axis (eq. 15.1).

    ``(x - mean(x)) / sqrt(population_variance(x) + eps)``; at ``eps = 0`` this is
    ``sqrt(d) Px / |Px|``. It is invariant to adding a constant to every coordinate and
    to positive scaling (the latter only approximately once ``eps > 0``).

    Parameters
    ----------
    x : array_like, shape (..., d)
        One vector or a batch of vectors; each row along the last axis is normalized
        on its own. Integer input is promoted to float64; floating input keeps its dtype.
    eps : float, default 0.0
        Added to the population variance (denominator ``d``) inside the square root.

    Returns
    -------
    numpy.ndarray, shape (..., d)

    Raises
    ------
    DegenerateNormalizationError
        If ``eps == 0`` and some row is constant (``Px = 0``).
    NonFiniteInputError, EmptyInputError, ShapeError, NegativeEpsilonError,
    UnsupportedDtypeError
        For NaN/inf, an empty input, a scalar, a negative eps, or a non-real dtype.

    Examples
    --------
    >>> centered_normalize([-2, -1, 1, 2]).round(4)
    array([-1.2649, -0.6325,  0.6325,  1.2649])
    >>> shift = centered_normalize([8, 9, 11, 12]) - centered_normalize([-2, -1, 1, 2])
    >>> float(np.abs(shift).max())
    0.0
    """
    eps = check_eps(eps)
    x = _as_float_array(x)
    centered, scale = _centered_parts(x, eps)
    return centered / scale


def rms_normalize(x, eps: float = 0.0) -> np.ndarray:
    """Divide by the root mean square along the last axis (eq. 15.2).

    ``x / sqrt(mean(x^2) + eps)``; at ``eps = 0`` this is ``sqrt(d) x / |x|``. It is
    invariant to positive scaling but not to a constant shift: the mean is kept.

    Parameters
    ----------
    x : array_like, shape (..., d)
        One vector or a batch of vectors, normalized row by row along the last axis.
        Integer input is promoted to float64; floating input keeps its dtype.
    eps : float, default 0.0
        Added to the mean square inside the square root.

    Returns
    -------
    numpy.ndarray, shape (..., d)

    Raises
    ------
    DegenerateNormalizationError
        If ``eps == 0`` and some row is the zero vector.
    NonFiniteInputError, EmptyInputError, ShapeError, NegativeEpsilonError,
    UnsupportedDtypeError
        For NaN/inf, an empty input, a scalar, a negative eps, or a non-real dtype.

    Examples
    --------
    >>> rms_normalize([3.0, 4.0]).round(4)
    array([0.8485, 1.1314])
    >>> shift = rms_normalize([8, 9, 11, 12]) - rms_normalize([-2, -1, 1, 2])
    >>> round(float(np.abs(shift).max()), 3)
    2.055
    """
    eps = check_eps(eps)
    x = _as_float_array(x)
    return x / _rms_scale(x, eps)


def normalization_jacobian(x, centered: bool, eps: float = 0.0) -> np.ndarray:
    """Exact closed-form Jacobian of eq. 15.1 or 15.2 at a single vector (eq. 15.3).

    With ``y = Px`` (centered) or ``y = x`` (RMS) and ``s = sqrt(|y|^2/d + eps)``,

    ``J = (Q - y y^T / (d s^2)) / s``,  with ``Q = P`` (centered) or ``Q = I`` (RMS).

    At ``eps = 0`` this is eq. 15.3: ``J = sqrt(d)/|y| (Q - v v^T)`` with ``v = y/|y|``.
    The nullspace there holds ``1`` and ``Px`` for the centered map (generic rank
    ``d - 2``) and ``x`` for the RMS map (rank ``d - 1``). For ``eps > 0`` the radial
    direction is no longer erased, ``J y = eps y / s^3``, so the centered map keeps only
    ``1`` in its nullspace (rank ``d - 1``) and the RMS map has full rank ``d``.

    Parameters
    ----------
    x : array_like, shape (d,)
        The point of evaluation, one vector. Integers are promoted to float64.
    centered : bool
        True for the centered map (eq. 15.1), False for the RMS map (eq. 15.2).
    eps : float, default 0.0
        The same eps as in :func:`centered_normalize` / :func:`rms_normalize`.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        ``J[i, j] = d N_i / d x_j``.

    Raises
    ------
    ShapeError
        If ``x`` is not 1-D.
    DegenerateNormalizationError
        If ``eps == 0`` and ``x`` is constant (centered) or zero (RMS).
    NonFiniteInputError, EmptyInputError, NegativeEpsilonError, UnsupportedDtypeError
        As for the maps.

    Examples
    --------
    >>> x = np.array([-2.0, -1.0, 1.0, 2.0])
    >>> int(np.linalg.matrix_rank(normalization_jacobian(x, centered=True), tol=1e-10))
    2
    >>> int(np.linalg.matrix_rank(normalization_jacobian(x, centered=False), tol=1e-10))
    3
    >>> bool(np.allclose(normalization_jacobian(x, centered=True, eps=0.1) @ np.ones(4), 0))
    True
    """
    eps = check_eps(eps)
    x = _as_float_array(x)
    if x.ndim != 1:
        raise ShapeError(
            f"x has shape {x.shape}; the Jacobian is taken at one vector, shape (d,). "
            "Loop over the rows of a batch"
        )
    d = x.shape[0]
    identity = np.eye(d, dtype=x.dtype)
    if centered:
        radial, scale = _centered_parts(x, eps)
        projector = identity - 1.0 / d
    else:
        radial, scale = x, _rms_scale(x, eps)
        projector = identity
    s = scale[0]
    return (projector - np.outer(radial, radial) / (d * s * s)) / s
