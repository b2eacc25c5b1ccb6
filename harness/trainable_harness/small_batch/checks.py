"""Argument checks and per-channel helpers shared by :mod:`trainable_harness.small_batch`.

Private: positive counts, per-channel batch moments and standardization over
``(B, H, W)`` (the harness's one kernel, :mod:`trainable_harness.layers.standardize`;
a variance beyond float64"s range is refused), per-channel parameters and the refusal of
an output that is not finite.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    DegenerateNormalizationError,
    MomentOverflowError,
    ResultOverflowError,
    SmallBatchError,
    check_integer,
)
from trainable_harness.layers.standardize import standardized_moments
from trainable_harness.normalization import scaled_moments

__all__: list[str] = []


def _positive_integer(value, name: str) -> int:
    return check_integer(value, f"{name} (a positive integer)", minimum=1, error=SmallBatchError)


# The reduction sets of batch norm in the model's (repeats, B, C, H, W) batches: per repeat
# and channel, over the batch and the positions.
_BATCH_AXES = (1, 3, 4)


def _batch_standardized(X: np.ndarray, eps: float, what: str):
    """Train-mode batch norm's parts of every repeat: :func:`standardized_moments` over
    ``(B, H, W)`` (x_hat, mean, population variance, root), the harness's one
    standardization; refuses a constant channel at ``eps = 0``, naming ``what``."""
    return standardized_moments(X, _BATCH_AXES, eps=eps, what=what)


def _batch_moments(X: np.ndarray):
    """Per-channel mean and population variance (``1/m``) over ``(B, H, W)`` of each repeat,
    by the harness's one moment kernel (:func:`scaled_moments`); shapes
    ``(repeats, 1, C, 1, 1)``. A variance beyond float64's range is refused."""
    parts = scaled_moments(X, _BATCH_AXES, centered=True, eps=0.0, with_mean=True)
    try:
        variance = parts.variance("X")
    except MomentOverflowError:
        raise ResultOverflowError(
            "a batch statistic of X overflows float64 (a batch variance beyond about 1.8e308, "
            "deviations beyond about 1e154); rescale X"
        ) from None
    return parts.mean, variance


def _finite_output(Y: np.ndarray, eps: float, variance: np.ndarray, what: str) -> np.ndarray:
    """Refuse a normalized output that is not finite: a zero variance at eps = 0, or range."""
    if np.isfinite(Y).all():
        return Y
    if eps == 0.0 and (variance == 0).any():
        raise DegenerateNormalizationError(
            f"{what} with eps = 0: a reduction set of X has variance 0 (constant values, or "
            "squares below float64's range), so x_hat is undefined; pass eps > 0"
        )
    raise ResultOverflowError(f"{what}: an output is beyond float64's range; rescale X")


def _per_channel(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)[None, None, :, None, None]
