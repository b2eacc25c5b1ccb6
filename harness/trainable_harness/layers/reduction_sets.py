"""Layouts, channel axes and reduction sets: which values share one mean and variance.

The four kinds of normalization differ only in their reduction sets (the table of
:mod:`trainable_harness.layers`). This module holds that table -- the accepted ranks and
layouts, the channel axis per rank, the axes each kind reduces over -- and the functions
that read it: the reduction axes of a kind, a label per element naming the statistic it is
normalized by (what the chapter's reduction-axes figure colours), and the number ``m`` of
values each statistic pools. It also checks that a batch fits a kind (rank, emptiness,
finiteness) and that a group count divides the channels.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from trainable_harness.errors import (
    EmptyInputError,
    IndivisibleGroupsError,
    UnknownChoiceError,
    UnsupportedRankError,
    check_real_array,
)
from trainable_harness.layers.inputs import _as_shape, _count

__all__ = ["NormalizationKind", "reduction_axes", "statistic_labels", "values_per_statistic"]

NormalizationKind = Literal["batch", "layer", "instance", "group"]

_LAYOUTS = {2: "(B, d)", 3: "(B, T, d)", 4: "(B, C, H, W)"}
# Axis holding channels/features, per rank: the axis gamma and beta run along.
_CHANNEL_AXIS = {2: 1, 3: 2, 4: 1}
# Axes each kind reduces over, per rank. For "group" the channel axis is reduced only
# within each group of consecutive channels.
_REDUCTION_AXES: dict[str, dict[int, tuple[int, ...]]] = {
    "batch": {2: (0,), 3: (0, 1), 4: (0, 2, 3)},
    "layer": {2: (1,), 3: (2,), 4: (1, 2, 3)},
    "instance": {4: (2, 3)},
    "group": {2: (1,), 3: (2,), 4: (1, 2, 3)},
}
_INSTANCE_3D_HINT = (
    "; instance norm of a (B, T, d) or (B, d) array would normalize each (token, feature) "
    "over a single value. To normalize each feature over time, transpose to (B, d, T, 1)"
)


def _check_kind(kind: str) -> None:
    if not isinstance(kind, str) or kind not in _REDUCTION_AXES:
        raise UnknownChoiceError(f"kind must be one of {sorted(_REDUCTION_AXES)}, got {kind!r}")


def _check_rank(kind: str, ndim: int, shape=None, what: str = "X of shape") -> None:
    accepted = _REDUCTION_AXES[kind]
    if ndim not in accepted:
        got = f"{what} {shape} (rank {ndim})" if shape is not None else f"ndim {ndim}"
        wanted = " or ".join(f"{r}-D {_LAYOUTS[r]}" for r in sorted(accepted))
        hint = _INSTANCE_3D_HINT if kind == "instance" and ndim in (2, 3) else ""
        raise UnsupportedRankError(f"{kind} norm got {got}; it accepts {wanted}{hint}")


def _as_batch(X, kind: str, dtype) -> np.ndarray:
    """Check rank, emptiness and finiteness of a batch ``X`` for normalization ``kind``."""
    X = np.asarray(X)
    _check_rank(kind, X.ndim, X.shape)
    if X.size == 0:
        empty = [axis for axis, n in enumerate(X.shape) if n == 0]
        raise EmptyInputError(
            f"X has shape {X.shape}, empty along axis {empty[0]} of layout "
            f"{_LAYOUTS[X.ndim]}; every axis needs at least one value"
        )
    return check_real_array(X, "X", dtype)


def _channels_of(X_shape) -> str:
    """Describe where a channel count comes from, for error messages."""
    X_shape = tuple(X_shape)
    return f"X has shape {X_shape} with {X_shape[_CHANNEL_AXIS[len(X_shape)]]} channels/features"


def _broadcast_shape(num_channels: int, ndim: int) -> tuple[int, ...]:
    """Shape that lines a ``(C,)`` vector up with the channel axis of a rank-``ndim`` batch."""
    shape = [1] * ndim
    shape[_CHANNEL_AXIS[ndim]] = num_channels
    return tuple(shape)


def reduction_axes(kind: NormalizationKind, ndim: int) -> tuple[int, ...]:
    """Return the axes that ``kind`` of normalization reduces over for a rank-``ndim`` batch.

    Layouts are ``(B, d)``, ``(B, T, d)`` and ``(B, C, H, W)`` (see the module table). Every
    element that agrees on the *other* axes shares one mean and variance. For ``"group"`` the
    channel axis is listed but is reduced only within each group of consecutive channels.

    Parameters
    ----------
    kind : {"batch", "layer", "instance", "group"}
    ndim : int
        Rank of the batch: 2, 3 or 4 (instance norm: 4 only).

    Returns
    -------
    tuple of int

    Raises
    ------
    UnknownChoiceError
        If ``kind`` is not one of the four names.
    UnsupportedRankError
        If ``kind`` does not accept rank ``ndim``, or ``ndim`` is not an integer (a string
        or a bool is not a rank).

    Examples
    --------
    >>> [reduction_axes(kind, 4) for kind in ("batch", "layer", "instance", "group")]
    [(0, 2, 3), (1, 2, 3), (2, 3), (1, 2, 3)]
    >>> reduction_axes("batch", 3), reduction_axes("layer", 3)
    ((0, 1), (2,))
    """
    _check_kind(kind)
    if isinstance(ndim, bool | np.bool_) or not isinstance(ndim, int | np.integer):
        raise UnsupportedRankError(
            f"ndim must be an integer rank (2, 3 or 4), got {ndim!r} ({type(ndim).__name__})"
        )
    _check_rank(kind, int(ndim))
    return _REDUCTION_AXES[kind][int(ndim)]


def _check_groups(num_groups, num_channels: int) -> int:
    if num_groups is None:
        raise IndivisibleGroupsError("group norm needs num_groups (a divisor of the channels)")
    num_groups = _count(num_groups, "num_groups", minimum=1, error=IndivisibleGroupsError)
    if num_channels % num_groups:
        raise IndivisibleGroupsError(
            f"{num_channels} channels cannot be split into {num_groups} equal groups; "
            f"num_groups must divide {num_channels}"
        )
    return num_groups


def statistic_labels(
    kind: NormalizationKind, shape: tuple[int, ...], *, num_groups: int | None = None
) -> np.ndarray:
    """Label every element of a batch of ``shape`` with the statistic it is normalized by.

    Two elements get the same label exactly when they lie in the same reduction set, so they
    share a mean and a variance. Labels are ``0, 1, ...`` in order of first appearance in C
    order. This is what the chapter's reduction-axes figure colours.

    Parameters
    ----------
    kind : {"batch", "layer", "instance", "group"}
    shape : tuple of int
        Shape of the batch, in one of the module's layouts.
    num_groups : int, optional
        Number of channel groups; required for ``"group"`` only.

    Returns
    -------
    numpy.ndarray of int64, shape ``shape``

    Raises
    ------
    UnknownChoiceError, UnsupportedRankError, IndivisibleGroupsError, CountError

    Examples
    --------
    >>> statistic_labels("batch", (2, 3))
    array([[0, 1, 2],
           [0, 1, 2]])
    >>> statistic_labels("group", (1, 4), num_groups=2)
    array([[0, 0, 1, 1]])
    """
    _check_kind(kind)
    shape = _as_shape(shape)
    axes = reduction_axes(kind, len(shape))
    channel_axis = _CHANNEL_AXIS[len(shape)]
    coordinates = list(np.indices(shape))
    if kind == "group":
        num_groups = _check_groups(num_groups, shape[channel_axis])
        # The group index is the part of the channel coordinate the statistic keeps.
        group_size = shape[channel_axis] // num_groups
        coordinates[channel_axis] = coordinates[channel_axis] // group_size
        sizes = list(shape)
        sizes[channel_axis] = num_groups
        kept = [axis for axis in range(len(shape)) if axis not in axes or axis == channel_axis]
    else:
        sizes = list(shape)
        kept = [axis for axis in range(len(shape)) if axis not in axes]
    if not kept:
        return np.zeros(shape, dtype=np.int64)
    keys = np.ravel_multi_index([coordinates[a] for a in kept], [sizes[a] for a in kept])
    _, labels = np.unique(keys.ravel(), return_inverse=True)
    # np.unique sorts keys; C-order keys of the kept coordinates are already in order of
    # first appearance, so the inverse gives 0, 1, ... in that order.
    return labels.reshape(shape).astype(np.int64)


def values_per_statistic(
    kind: NormalizationKind, shape: tuple[int, ...], *, num_groups: int | None = None
) -> int:
    """Return ``m``, the number of values each mean and variance of ``kind`` pools.

    ``m = B*H*W`` for 4-D batch norm, ``B*T`` for 3-D, ``C*H*W`` for 4-D layer norm,
    ``H*W`` for instance norm and ``(C/G)*H*W`` for group norm with ``G`` groups.

    Raises
    ------
    UnknownChoiceError, UnsupportedRankError, IndivisibleGroupsError
    CountError
        A shape entry that is not a non-negative integer (a float, a bool, a negative).

    Examples
    --------
    >>> values_per_statistic("batch", (8, 16, 7, 7))
    392
    >>> values_per_statistic("group", (8, 16, 7, 7), num_groups=4)
    196
    """
    _check_kind(kind)
    shape = _as_shape(shape)
    axes = reduction_axes(kind, len(shape))
    m = math.prod(shape[a] for a in axes)
    if kind == "group":
        m //= _check_groups(num_groups, shape[_CHANNEL_AXIS[len(shape)]])
    return m
