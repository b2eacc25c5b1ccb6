"""Perturbations of the chapter 15 harness (see :mod:`trainable_harness.perturbations`)."""

from __future__ import annotations

import numpy as np

from trainable_harness import precision
from trainable_harness.moments import MomentState

__all__ = [
    "bf16_not_rounded",
    "eps_outside_the_root",
    "mean_not_subtracted",
    "merge_without_the_between_batch_term",
]


def _float32_kept(x) -> np.ndarray:
    return np.asarray(x, np.float32)


def bf16_not_rounded(patch=setattr) -> None:
    """A BF16 emulation that keeps FP32's bits (``precision.round_to_bfloat16``)."""
    patch(precision, "round_to_bfloat16", _float32_kept)


def _eps_outside_the_root(x, eps: float = 0.0) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / (np.sqrt(np.mean(x * x, axis=-1, keepdims=True)) + eps)


def eps_outside_the_root(patch=setattr) -> None:
    """RMS normalization that adds eps to the root instead of under it
    (``normalization.rms_normalize``, where the epsilon witness binds it)."""
    from trainable_harness.witnesses.chapter15 import epsilon

    patch(epsilon, "rms_normalize", _eps_outside_the_root)


def _scaled_only(x, eps: float = 0.0) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


def mean_not_subtracted(patch=setattr) -> None:
    """Centered normalization that does not subtract the mean first
    (``normalization.centered_normalize``, where the invariance witness binds it)."""
    from trainable_harness.witnesses.chapter15 import invariance

    patch(invariance, "centered_normalize", _scaled_only)


def _merge_without_between_term(a, b):
    """A merge that adds the m2 of the parts and forgets the spread of their means."""
    n = a.count + b.count
    return MomentState(n, a.mean + (b.mean - a.mean) * b.count / n, a.m2 + b.m2)


def merge_without_the_between_batch_term(patch=setattr) -> None:
    """Batch moment states merged without the spread of their means
    (``moments.merge_moments``, where the running-state witness binds it)."""
    from trainable_harness.witnesses.chapter15 import running_state

    patch(running_state, "merge_moments", _merge_without_between_term)
