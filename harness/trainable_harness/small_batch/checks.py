"""Argument checks and per-channel helpers shared by :mod:`trainable_harness.small_batch`.

Private: positive counts, per-channel batch moments over ``(B, H, W)`` (two passes, as
written, refused beyond float64"s range), per-channel parameters and the refusal of an
output that is not finite.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    DegenerateNormalizationError,
    ResultOverflowError,
    SmallBatchError,
    check_integer,
)

__all__: list[str] = []


def _positive_integer(value, name: str) -> int:
    return check_integer(value, f"{name} (a positive integer)", minimum=1, error=SmallBatchError)


def _batch_moments(X: np.ndarray):
    # Per-channel statistics over (B, H, W) of each repeat: axes 1, 3, 4. Two passes as
    # written, without scaling: statistics that leave float64's range are refused.
    with np.errstate(over="ignore", invalid="ignore"):
        mean = X.mean(axis=(1, 3, 4), keepdims=True)
        centered = X - mean
        variance = np.mean(centered * centered, axis=(1, 3, 4), keepdims=True)
    if not (np.isfinite(mean).all() and np.isfinite(variance).all()):
        raise ResultOverflowError(
            "a batch statistic of X overflows float64 (its values or their squares beyond "
            "about 1e154): the small-batch experiment computes as written; rescale X"
        )
    return mean, variance


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
