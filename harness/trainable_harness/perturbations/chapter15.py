"""Perturbations of the chapter 15 harness (see :mod:`trainable_harness.perturbations`)."""

from __future__ import annotations

import numpy as np

from trainable_harness import precision

__all__ = ["bf16_not_rounded"]


def _float32_kept(x) -> np.ndarray:
    return np.asarray(x, np.float32)


def bf16_not_rounded(patch=setattr) -> None:
    """A BF16 emulation that keeps FP32's bits (``precision.round_to_bfloat16``)."""
    patch(precision, "round_to_bfloat16", _float32_kept)
