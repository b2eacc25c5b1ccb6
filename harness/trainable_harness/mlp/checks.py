"""Argument checks shared by the modules of :mod:`trainable_harness.mlp` (private helpers).

The public layer functions check their arrays and refuse a result beyond float64's range;
the training loop calls the unchecked forms (``_linear_forward``, ...) once the task and
parameters are checked, so that a diverging replica's inf or NaN is what it measures.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    MLPError,
    ResultOverflowError,
    ShapeError,
    UnknownChoiceError,
    UnsupportedDtypeError,
    check_real_array,
    first_nonfinite,
)

__all__: list[str] = []


def _real_array(values, name: str, *, min_ndim: int = 1) -> np.ndarray:
    """``values`` as a finite floating array of rank >= ``min_ndim``.

    A floating array keeps its dtype; an integer one becomes float64, since ``X @ W`` in
    int64 wraps around silently.
    """
    array = check_real_array(values, name, None)
    if array.ndim < min_ndim:
        raise ShapeError(f"{name} has shape {array.shape}; at least {min_ndim} axes are expected")
    return array


def _check_result(result: np.ndarray, what: str, rescale: str) -> np.ndarray:
    index = first_nonfinite(result)
    if index is not None:
        raise ResultOverflowError(
            f"{what} at index {index} is beyond float64's range, so it has no finite value; "
            f"rescale {rescale}"
        )
    return result


def _check_labels(labels, rows: int, classes: int) -> np.ndarray:
    """Integer class labels, one per row, each in ``[0, classes)``."""
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise UnsupportedDtypeError(
            f"labels have dtype {labels.dtype}; integer class indices are expected"
        )
    if labels.shape != (rows,):
        raise ShapeError(
            f"labels have shape {labels.shape}; one label per example is expected, shape "
            f"({rows},) (the logits have {rows} rows)"
        )
    outside = (labels < 0) | (labels >= classes)
    if outside.any():
        index = int(np.argmax(outside))
        raise ShapeError(
            f"labels[{index}] = {labels[index]} is not a class index in [0, {classes}) "
            f"(the logits have {classes} classes; a negative label would wrap around)"
        )
    return labels


def _broadcast_into(replicas: tuple, parameters, what: str) -> None:
    """Refuse per-feature parameters whose replica axes do not broadcast into ``replicas``."""
    for name, value in parameters:
        try:
            fits = np.broadcast_shapes(replicas, value.shape[:-1]) == replicas
        except ValueError:
            fits = False
        if not fits:
            raise ShapeError(
                f"{what}: {name} has shape {value.shape}; its replica axes "
                f"{value.shape[:-1]} must broadcast into the batch's {replicas}"
            )


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise UnknownChoiceError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _positive_vector(values, name: str) -> np.ndarray:
    """``values`` as a 1-D float64 array of positive finite numbers, else :class:`MLPError`."""
    array = np.asarray(values)
    if array.dtype.kind not in "iuf" or array.ndim != 1 or array.size == 0:
        raise MLPError(
            f"{name} must be a non-empty 1-D array of positive finite numbers, got {values!r}"
        )
    array = array.astype(np.float64, copy=False)
    if not np.all(np.isfinite(array) & (array > 0)):
        raise MLPError(f"{name} must be positive finite numbers, got {array}")
    return array
