"""The two normalization maps of chapter 15 and their exact Jacobians.

Chapter 15, section 15.1 ("Two maps, two quotients"). With ``d`` the length of the last
axis, ``P = I - 11^T/d`` the centering projector and ``eps >= 0`` added to the mean square,

- centered map (eq. 15.1): ``N_C(x) = Px / sqrt(|Px|^2/d + eps)``, i.e.
  ``(x - mean(x)) / sqrt(population_variance(x) + eps)``;
- RMS map (eq. 15.2): ``N_R(x) = x / sqrt(|x|^2/d + eps)``, i.e. ``x / sqrt(mean(x^2) + eps)``.

At ``eps = 0`` these are ``sqrt(d) Px/|Px|`` and ``sqrt(d) x/|x|``, exactly the forms of the
chapter. No learned affine parameters are applied.

Dtype contract: floating inputs keep their dtype and all arithmetic happens in it (numpy's
means of float16 values accumulate in float32, as numpy documents); integer inputs are
promoted to float64. Boolean, complex or object input is refused.

How they are computed (scale before you square, as BLAS ``nrm2`` and ``numpy.hypot`` do):
:func:`scaled_moments` divides each row's deviations by a power of two ``2**E`` near the
larger of their largest magnitude and ``sqrt(eps)`` before squaring, and rescales eps to
``eps / 4**E``; then ``N = (D / 2**E) / sqrt(mean((D / 2**E)**2) + eps / 4**E)``, which is
``D / sqrt(mean(D**2) + eps)`` exactly in real arithmetic, so eps is still added to the
variance (or mean square) in the input's units. No square overflows or vanishes: every
finite input that is not degenerate, from the smallest subnormal to the largest finite
value of float16, float32 or float64, gets its output to a few ulps of its dtype (the
tests check ``3d/2 + 5`` ulps against exact arithmetic for ``d <= 8``; measured at most
about 3.6). Away from the ends of the exponent range the scaling is exact, so the result
is bit for bit the plain two-pass formula applied to the same deviations.

>>> centered_normalize(np.array([0, 1000], np.float16))  # 500**2 overflows float16
array([-1.,  1.], dtype=float16)
>>> centered_normalize([0, 1e-170])  # (5e-171)**2 underflows float64; not constant
array([-1.,  1.])
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from trainable_harness.errors import (
    DegenerateNormalizationError,
    EmptyInputError,
    MomentOverflowError,
    ResultOverflowError,
    ShapeError,
    UnknownChoiceError,
    UnsupportedDtypeError,
    check_eps,
    check_finite,
    check_nonempty,
    first_nonfinite,
)

__all__ = [
    "ScaledMoments",
    "centered_normalize",
    "centered_normalize_with_jacobian",
    "normalization_jacobian",
    "rms_normalize",
    "root_of_sum",
    "scaled_moments",
    "validated_eps",
]


def validated_eps(eps) -> float:
    """Return ``eps`` as a float: a real number (not a bool or a string), finite, ``>= 0``.

    :func:`~trainable_harness.errors.check_eps` after a type check, so that ``eps=True``
    or ``eps="1e-5"`` is refused instead of read as 1.0 or 1e-5.

    Raises
    ------
    UnsupportedDtypeError
        If ``eps`` is a bool, a string, complex, or not a number.
    NonFiniteInputError, NegativeEpsilonError
        If ``eps`` is NaN/inf or negative.

    Examples
    --------
    >>> validated_eps(1e-5), validated_eps(np.float32(0.5))
    (1e-05, 0.5)
    >>> validated_eps(True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trainable_harness.errors.UnsupportedDtypeError: eps must be a real number, got True (bool)...
    """
    if isinstance(eps, bool | np.bool_) or not isinstance(
        eps, int | float | np.integer | np.floating
    ):
        raise UnsupportedDtypeError(
            f"eps must be a real number, got {eps!r} ({type(eps).__name__}); it is added "
            "to a variance"
        )
    return check_eps(eps)


def _as_float_array(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a non-empty, finite floating array (integers promoted to float64)."""
    array = np.asarray(x)
    if array.dtype.kind == "b":
        raise UnsupportedDtypeError(
            f"{name} has dtype bool; a real floating or integer array is expected"
        )
    if array.dtype.kind in "iu":
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


# ---------------------------------------------------------------------------
# The root of eqs. 15.1, 15.2 and 16.3: the one place eps enters a square root.
# ---------------------------------------------------------------------------


def root_of_sum(variance, eps) -> np.ndarray:
    """``sqrt(variance + eps)``: the denominator of every normalization, written once.

    Every standardization of the harness divides by this root, whether its statistics are
    the reduction set's own (:meth:`ScaledMoments.normalized`, which calls it with the
    variance and eps in the units of its scale, so the sum is the same up to a power of
    two) or given ones (eval mode, folding, population statistics:
    :func:`~trainable_harness.layers.standardize_with`). eps is added *inside* the root,
    to the population variance (the mean of the squared deviations, divided by ``m``) or
    the mean square: a mistake here reaches every claim that normalizes.

    Where ``variance + eps`` overflows (both near the largest float), the root is taken as
    ``2 sqrt(variance/4 + eps/4)``: quartering is exact away from the subnormals, and the
    root of a finite float is always finite. Elsewhere the result is ``np.sqrt(variance +
    eps)`` to the bit.

    Parameters
    ----------
    variance : numpy.ndarray or float, finite, ``>= 0``
        Any shape; float64 for every caller of the harness (a floating dtype is kept).
    eps : float or numpy.ndarray broadcastable to ``variance``, finite, ``>= 0``
        Checked by the callers (:func:`validated_eps`).

    Returns
    -------
    numpy.ndarray
        ``variance``'s shape (broadcast with ``eps``) and dtype; a new array (the inputs
        are never modified).

    Raises
    ------
    Nothing: this is the kernel every standardization calls on statistics its callers have
    already checked, so a bad input is the caller's to refuse. Not refused here, it
    propagates as IEEE arithmetic gives it: a NaN ``variance`` or ``eps`` gives NaN, a
    sum below 0 gives NaN (with numpy's "invalid value" warning), and ``+inf`` gives
    ``+inf``. The public functions that take an eps (:func:`validated_eps`) or a
    variance (:func:`~trainable_harness.layers.standardize_with`) refuse these by name.

    Examples
    --------
    >>> root_of_sum(np.array([4.0, 0.0]), 1e-4)
    array([2.000025, 0.01    ])
    >>> root_of_sum(np.array([1.5e308]), 1.5e308)  # the sum overflows; its root does not
    array([1.73205081e+154])
    """
    variance = np.asarray(variance)
    with np.errstate(over="ignore"):
        total = variance + eps
    overflowed = np.isinf(total)
    if overflowed.any():
        quartered = 2.0 * np.sqrt(variance * 0.25 + eps * 0.25)
        return np.where(overflowed, quartered, np.sqrt(np.where(overflowed, 0.0, total)))
    return np.sqrt(total)


# ---------------------------------------------------------------------------
# The scaled kernel: scale before you square.
# ---------------------------------------------------------------------------

# Stands in for "minus infinity" as a binary exponent: below every finite float's.
_NO_EXPONENT = -(2**20)


class ScaledMoments(NamedTuple):
    """Deviations and their mean square, scaled by a power of two per reduction set.

    With ``D`` the deviations (``x - mean`` for the centered statistic, ``x`` for the RMS
    one) of a reduction set and ``E`` its scale exponent,

    - ``deviations`` = ``D * 2**-E`` (every entry below 1 in magnitude),
    - ``mean_square`` = ``mean(deviations**2)`` (the population variance, or the mean
      square, in units of ``4**E``),
    - ``scaled_eps`` = ``eps * 4**-E`` (eps in the same units, at most 1),

    so that ``sqrt(variance + eps) = 2**E * sqrt(mean_square + scaled_eps)`` exactly in real
    arithmetic. All arrays keep the reduced axes (length 1).
    """

    deviations: np.ndarray
    mean_square: np.ndarray
    scaled_eps: np.ndarray
    exponent: np.ndarray
    mean: np.ndarray | None  # in x's units; only when asked for (``with_mean``)
    constant: np.ndarray  # True where the set is constant (its deviations are all 0)

    def normalized(self) -> np.ndarray:
        """``D / sqrt(variance + eps)``: the standardized values, in ``x``'s dtype.

        The root is :func:`root_of_sum` of the scaled mean square and the scaled eps.
        """
        return self.deviations / root_of_sum(self.mean_square, self.scaled_eps)

    def root(self) -> np.ndarray:
        """``sqrt(variance + eps)`` in ``x``'s units, ``2**E`` times the scaled root.

        +-inf only where its exact value is beyond the dtype's range (never for float64
        input: the root of a variance is far below the largest float).
        """
        with np.errstate(over="ignore"):
            return np.ldexp(root_of_sum(self.mean_square, self.scaled_eps), self.exponent)

    def variance(self, name: str = "x") -> np.ndarray:
        """The population variance (or mean square) in original units, ``mean_square * 4**E``.

        Raises
        ------
        MomentOverflowError
            If a variance's exact value lies beyond the dtype's largest finite number, e.g.
            for deviations near ``1e300`` in float64; the message names ``name`` and the
            statistic's index.
        """
        with np.errstate(over="ignore"):
            variance = np.ldexp(self.mean_square, 2 * self.exponent)
        index = first_nonfinite(variance)
        if index is not None:
            raise MomentOverflowError(
                f"the population variance of {name} over the reduction set of statistic "
                f"{index} is about 2**{2 * int(self.exponent[index])} times "
                f"{float(self.mean_square[index]):.4g}, beyond the largest {variance.dtype} "
                f"({np.finfo(variance.dtype).max:.4g}); rescale {name}"
            )
        return variance


def _binary_exponent(magnitude: np.ndarray) -> np.ndarray:
    """``k`` with ``magnitude = f * 2**k``, ``0.5 <= f < 1``; ``_NO_EXPONENT`` for 0."""
    exponent = np.frexp(magnitude)[1].astype(np.int64)
    return np.where(magnitude > 0, exponent, _NO_EXPONENT)


def _reduction_axes(x: np.ndarray, axes) -> tuple[int, ...]:
    """Return ``axes`` as distinct non-negative axes of ``x`` (negatives counted from the end).

    Raises :class:`ShapeError` for an axis that is not an integer, out of range or
    repeated, and :class:`EmptyInputError` if one of them has length 0 (an empty reduction
    set has no mean).
    """
    try:
        given = tuple(axes)
    except TypeError:
        given = None
    if not given or any(
        isinstance(a, bool | np.bool_) or not isinstance(a, int | np.integer) for a in given
    ):
        raise ShapeError(f"axes must be a non-empty tuple of integer axes, got {axes!r}")
    if any(not -x.ndim <= a < x.ndim for a in given):
        raise ShapeError(f"axes {given} are out of range for x of shape {x.shape}")
    normalized = tuple(int(a) % x.ndim for a in given)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"axes {given} name an axis twice (x has shape {x.shape})")
    empty = [a for a in normalized if x.shape[a] == 0]
    if empty:
        raise EmptyInputError(
            f"x has shape {x.shape}, empty along reduction axis {empty[0]}; a reduction set "
            "needs at least one value"
        )
    return normalized


def scaled_moments(
    x: np.ndarray, axes: tuple[int, ...], *, centered: bool, eps: float, with_mean: bool = False
) -> ScaledMoments:
    """Deviations and mean square of ``x`` over ``axes``, computed without overflow.

    The steps, in ``x``'s dtype, per reduction set (the entries that agree off ``axes``):

    1. ``z = x * 2**-e`` with ``2**e`` just above ``max|x|``: ``|z| < 1``, so nothing that
       follows can overflow. Multiplying by a power of two is exact (an entry below
       ``2**-1074 max|x|`` may flush, far below the rounding of the result).
    2. Centered only: ``y = z - z_0`` (a shift by the set's first entry), then
       ``D = y - mean(y)``. The shift makes the deviations accurate to a few ``u`` of the
       *spread* however large the offset (a float32 ``[1e8, 1e8 + 8]`` gives ``[-4, 4]``).
    3. ``E = max(e + exponent(max|D|), exponent(sqrt(eps)))``: the scale of the larger of
       the deviations and ``sqrt(eps)``, so that ``D * 2**-E`` and ``eps * 4**-E`` both lie
       below 1 and the larger of them above 1/4: their squares and sum neither overflow
       nor vanish.

    ``eps`` is added to the variance in original units; here it enters as
    ``eps * 4**-E``, computed in float64 (it cannot overflow: ``4**E >= eps / 4``)
    and then rounded to ``x``'s dtype. Away from the ends of the exponent range every
    scaling is exact, so the result is bit for bit the unscaled two-pass formula applied
    to the same deviations.

    Parameters
    ----------
    x : numpy.ndarray of a floating dtype
        Finite values. Finiteness is the callers' to check (every caller of the harness
        does, naming its argument); a NaN or inf is not refused here and makes every
        output of its reduction set NaN.
    axes : tuple of int
        Distinct axes to reduce over (a negative axis counts from the end), none of
        length 0.
    centered : bool
        True: deviations from the mean (variance). False: ``x`` itself (mean square).
    eps : float
        A real number, finite, ``>= 0`` (:func:`validated_eps`).
    with_mean : bool, default False
        Also return the mean in ``x``'s units, ``2**e (z_0 + mean(y))`` (centered only).

    Returns
    -------
    ScaledMoments

    Raises
    ------
    UnsupportedDtypeError
        ``x`` is not a floating array (an integer one would round ``eps * 4**-E`` to an
        integer), or ``eps`` is not a real number.
    ShapeError, EmptyInputError
        ``axes`` is not a tuple of distinct axes of ``x``, or one of them has length 0.
    NonFiniteInputError, NegativeEpsilonError
        ``eps`` is NaN/inf or negative.

    Examples
    --------
    >>> X = np.array([[-1e300, 1e300]])
    >>> parts = scaled_moments(X, (1,), centered=True, eps=0.0, with_mean=True)
    >>> parts.normalized(), parts.mean
    (array([[-1.,  1.]]), array([[0.]]))
    >>> parts.variance()  # 1e600  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    trainable_harness.errors.MomentOverflowError: the population variance of x over the ...
    """
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        got = x.dtype if isinstance(x, np.ndarray) else type(x).__name__
        raise UnsupportedDtypeError(
            f"x must be a numpy array of a floating dtype, got {got}; convert it first "
            "(integers to float64)"
        )
    axes = _reduction_axes(x, axes)
    eps = validated_eps(eps)
    keep = {"axis": axes, "keepdims": True}
    with np.errstate(under="ignore"):
        top = np.abs(x).max(**keep)
        prescale = np.where(top > 0, np.frexp(top)[1].astype(np.int64), 0)
        z = np.ldexp(x, -prescale)
        if centered:
            first = tuple(slice(0, 1) if a in axes else slice(None) for a in range(x.ndim))
            shifted = z - z[first]
            shifted_mean = shifted.mean(**keep)
            deviations = shifted - shifted_mean
            mean = None
            if with_mean:
                # The mean lies between the set's extremes; clipping undoes a rounding past
                # them, which could overflow when scaled back near the largest float.
                mean_z = np.clip(z[first] + shifted_mean, z.min(**keep), z.max(**keep))
                mean = np.ldexp(mean_z, prescale)
        else:
            deviations, mean = z, None
        largest = np.abs(deviations).max(**keep)
        exponent = prescale + _binary_exponent(largest)
        if eps > 0:
            exponent = np.maximum(exponent, math.frexp(math.sqrt(eps))[1])
        scaled = np.ldexp(deviations, prescale - exponent)
        mean_square = np.mean(scaled * scaled, **keep)
        scaled_eps = np.ldexp(np.float64(eps), -2 * exponent).astype(x.dtype)
    constant = np.squeeze(largest == 0, axis=axes)
    return ScaledMoments(scaled, mean_square, scaled_eps, exponent, mean, constant)


def _check_not_degenerate(degenerate: np.ndarray, what: str, map_name: str) -> None:
    """Raise if some row is degenerate: constant (centered) or zero (RMS), with eps = 0."""
    if degenerate.any():
        row = tuple(int(i) for i in np.argwhere(degenerate)[0])
        where = f" (row {row})" if row else ""
        raise DegenerateNormalizationError(
            f"{map_name} is undefined at a {what}{where}: the statistic it divides by is 0 "
            "and eps = 0. The map has no value there; pass eps > 0 (e.g. 1e-5) for a "
            "defined output"
        )


def _row_parts(x: np.ndarray, eps: float, centered: bool) -> ScaledMoments:
    """:func:`scaled_moments` along the last axis, refusing degenerate rows at eps = 0."""
    parts = scaled_moments(x, (x.ndim - 1,), centered=centered, eps=eps)
    if eps == 0.0:
        what, name = ("constant vector", "eq. 15.1") if centered else ("zero vector", "eq. 15.2")
        _check_not_degenerate(parts.constant, what, name)
    return parts


def centered_normalize(x, eps: float = 0.0) -> np.ndarray:
    """Center and scale along the last axis (eq. 15.1).

    ``(x - mean(x)) / sqrt(population_variance(x) + eps)``; at ``eps = 0`` this is
    ``sqrt(d) Px / |Px|``. It is invariant to adding a constant to every coordinate and
    to positive scaling (the latter only approximately once ``eps > 0``).

    Computed by :func:`scaled_moments`: the deviations ``x - mean`` are taken after a
    shift by the row's first value (so a large offset does not eat them), divided by a
    power of two ``2**E`` before squaring, and eps enters as ``eps / 4**E``: it is added
    to the population variance in ``x``'s units, whatever the scale. An exact shift, or a
    scaling by a power of two, changes no bit of the output.

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
        If ``eps == 0`` and some row is constant (``Px = 0``) -- only then: a row of two
        distinct values, however close or tiny, is normalized.
    NonFiniteInputError, EmptyInputError, ShapeError, NegativeEpsilonError,
    UnsupportedDtypeError
        For NaN/inf, an empty input, a scalar, a negative eps, or a bool, complex or
        object array, or an eps that is not a real number (a bool or a string).

    Examples
    --------
    >>> centered_normalize(np.array([1e8, 1e8 + 8], np.float32))  # offset 1e8, spread 4
    array([-1.,  1.], dtype=float32)
    >>> centered_normalize([-1e-150, 1e-150], eps=1e-5)  # eps dominates: x / sqrt(eps)
    array([-3.16227766e-148,  3.16227766e-148])
    >>> centered_normalize([-2, -1, 1, 2]).round(4)
    array([-1.2649, -0.6325,  0.6325,  1.2649])
    >>> shift = centered_normalize([8, 9, 11, 12]) - centered_normalize([-2, -1, 1, 2])
    >>> float(np.abs(shift).max())
    0.0
    """
    eps = validated_eps(eps)
    x = _as_float_array(x)
    return _row_parts(x, eps, centered=True).normalized()


def rms_normalize(x, eps: float = 0.0) -> np.ndarray:
    """Divide by the root mean square along the last axis (eq. 15.2).

    ``x / sqrt(mean(x^2) + eps)``; at ``eps = 0`` this is ``sqrt(d) x / |x|``. It is
    invariant to positive scaling but not to a constant shift: the mean is kept.

    Computed as ``(x / 2**E) / sqrt(mean((x / 2**E)**2) + eps / 4**E)`` with ``2**E``
    near the larger of ``max|x|`` and ``sqrt(eps)`` (:func:`scaled_moments`): eps is added
    to the mean square in ``x``'s units, and no square overflows or vanishes. Each output
    is within a few ulps of its exact value, element by element.

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
        As for :func:`centered_normalize`.

    Examples
    --------
    >>> rms_normalize(np.array([60000, -60000], np.float16))  # 60000**2 overflows float16
    array([ 1., -1.], dtype=float16)
    >>> rms_normalize([3.0, 4.0]).round(4)
    array([0.8485, 1.1314])
    >>> shift = rms_normalize([8, 9, 11, 12]) - rms_normalize([-2, -1, 1, 2])
    >>> round(float(np.abs(shift).max()), 3)
    2.055
    """
    eps = validated_eps(eps)
    x = _as_float_array(x)
    return _row_parts(x, eps, centered=False).normalized()


def normalization_jacobian(x, centered: bool, eps: float = 0.0) -> np.ndarray:
    """Exact closed-form Jacobian of eq. 15.1 or 15.2 at a single vector (eq. 15.3).

    With ``y = Px`` (centered) or ``y = x`` (RMS) and ``s = sqrt(|y|^2/d + eps)``,

    ``J = (Q - y y^T / (d s^2)) / s``,  with ``Q = P`` (centered) or ``Q = I`` (RMS).

    At ``eps = 0`` this is eq. 15.3: ``J = sqrt(d)/|y| (Q - v v^T)`` with ``v = y/|y|``.
    The nullspace there holds ``1`` and ``Px`` for the centered map (generic rank
    ``d - 2``) and ``x`` for the RMS map (rank ``d - 1``). For ``eps > 0`` the radial
    direction is no longer erased, ``J y = eps y / s^3``, so the centered map keeps only
    ``1`` in its nullspace (rank ``d - 1``) and the RMS map has full rank ``d``.

    Computed in units of the scale of :func:`scaled_moments`: with ``y = r 2**E`` and
    ``s = sigma 2**E``, ``J = 2**-E (Q - r r^T / (d sigma^2)) / sigma``, where ``r`` and
    ``sigma`` are of order one; only the final power of two can leave the range, and then
    the exact entry is beyond the dtype's largest finite value (``|J| ~ 1/s`` at a tiny
    ``x``): that is refused.

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
    UnknownChoiceError
        If ``centered`` is not a bool.
    DegenerateNormalizationError
        If ``eps == 0`` and ``x`` is constant (centered) or zero (RMS).
    ResultOverflowError
        If an entry's exact value is beyond the dtype's range (``x = (0, 2**-1070)``,
        ``eps = 0``: ``1/s`` is about ``2**1070``); the message names the entry and eps.
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
    >>> normalization_jacobian([1e300, -1e300], centered=False)  # |x|^2 overflows
    array([[5.e-301, 5.e-301],
           [5.e-301, 5.e-301]])
    """
    eps = validated_eps(eps)
    if not isinstance(centered, bool | np.bool_):
        raise UnknownChoiceError(
            f"centered must be True (eq. 15.1) or False (eq. 15.2), got {centered!r}"
        )
    x = _as_float_array(x)
    if x.ndim != 1:
        raise ShapeError(
            f"x has shape {x.shape}; the Jacobian is taken at one vector, shape (d,). "
            "Loop over the rows of a batch"
        )
    return _jacobian_from_parts(
        x, _row_parts(x, eps, centered=bool(centered)), bool(centered), eps
    )


def _jacobian_from_parts(x: np.ndarray, parts: ScaledMoments, centered: bool, eps: float):
    """The Jacobian of :func:`normalization_jacobian` from ``x``'s checked parts."""
    d = x.shape[0]
    identity = np.eye(d, dtype=x.dtype)
    projector = identity - x.dtype.type(1.0 / d) if centered else identity
    # In units of 2**E: y = r 2**E and s = sigma 2**E, so J = 2**-E (Q - r r^T/(d sigma^2))
    # / sigma; r and sigma are O(1), and only the final power of two can leave the range.
    r = parts.deviations
    sigma = root_of_sum(parts.mean_square, parts.scaled_eps)[0]
    scaled = (projector - np.outer(r, r) / (d * sigma * sigma)) / sigma
    with np.errstate(over="ignore", under="ignore"):
        J = np.ldexp(scaled, -parts.exponent[0])
    finite = np.isfinite(J)
    if not finite.all():
        i, j = (int(k) for k in np.argwhere(~finite)[0])
        raise ResultOverflowError(
            f"the Jacobian entry J[{i}, {j}] is beyond the largest {J.dtype} "
            f"({np.finfo(J.dtype).max:.4g}): the entries scale like 1 / sqrt(statistic + eps), "
            f"and here sqrt(statistic + eps) is about 2**{int(parts.exponent[0])} (x's "
            f"{'deviations' if centered else 'values'} and eps = {eps!r} are that small); "
            "rescale x or use a larger eps"
        )
    return J


def centered_normalize_with_jacobian(x, eps: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``centered_normalize(x, eps)`` and ``normalization_jacobian(x, True, eps)`` at once.

    Both from one :func:`scaled_moments` of ``x``, so a caller that needs the map's value
    and its Jacobian at the same point (a residual block, section 16.6) computes the
    moments once; each result is the one the separate function gives, to the last bit.

    Parameters
    ----------
    x : array_like, shape (d,)
        One vector.
    eps : float, default 0.0

    Returns
    -------
    (numpy.ndarray of shape (d,), numpy.ndarray of shape (d, d))

    Raises
    ------
    As :func:`normalization_jacobian` with ``centered=True``.

    Examples
    --------
    >>> x = np.array([-2.0, -1.0, 1.0, 2.0])
    >>> value, jacobian = centered_normalize_with_jacobian(x, eps=1e-5)
    >>> bool(np.array_equal(value, centered_normalize(x, eps=1e-5)))
    True
    >>> bool(np.array_equal(jacobian, normalization_jacobian(x, centered=True, eps=1e-5)))
    True
    """
    eps = validated_eps(eps)
    x = _as_float_array(x)
    if x.ndim != 1:
        raise ShapeError(
            f"x has shape {x.shape}; the Jacobian is taken at one vector, shape (d,). "
            "Loop over the rows of a batch"
        )
    parts = _row_parts(x, eps, centered=True)
    return parts.normalized(), _jacobian_from_parts(x, parts, True, eps)
