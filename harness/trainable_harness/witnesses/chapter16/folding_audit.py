"""Worked solution of chapter 16's exercise 5: auditing a fold's conventions.

The folded convolution of section 16.4 checked against its rounding bound when the fold
reads the layer's own conventions, a wrong epsilon, or the variance corrected twice.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.layers import BatchNormState
from trainable_harness.witnesses.chapter16.folding import (
    FOLD_CONV_INPUT_SHAPE,
    FOLD_UPDATES,
    conv_fold_case,
)

__all__ = [
    "AUDIT_BATCH_SHAPE",
    "AUDIT_LAYER_EPS",
    "AUDIT_WRONG_EPS",
    "ONNX_DEFAULT_EPS",
    "ONNX_DEFAULT_MOMENTUM",
    "folding_audit_witness",
]

AUDIT_LAYER_EPS = 1e-5  # the trained layer's epsilon (PyTorch's default)
AUDIT_WRONG_EPS = 1e-3  # Keras's default epsilon, assumed by a mismatched fold
# ONNX's BatchNormalization (operator version 15, onnx/defs/nn/defs.cc): the defaults of its
# `epsilon` and `momentum` attributes. Its momentum weights the *old* running value,
# running = running * momentum + batch * (1 - momentum), the opposite of PyTorch's.
ONNX_DEFAULT_EPS = 1e-5
ONNX_DEFAULT_MOMENTUM = 0.9
AUDIT_BATCH_SHAPE = FOLD_CONV_INPUT_SHAPE  # inputs of each train-mode batch, as in folding


@claim_computation
def folding_audit_witness(
    seed: int, *, eps: float = AUDIT_LAYER_EPS, updates: int = FOLD_UPDATES
) -> dict:
    """Claim ``c16-folding-audit-001``: a folded convolution checked against the rounding bound.

    Exercise 5 of chapter 16. The convolution of
    :func:`~trainable_harness.witnesses.chapter16.folding.conv_fold_case` (kernel
    (8, 3, 3, 3), padding 1, inputs ``AUDIT_BATCH_SHAPE`` from N(0.5, 2^2), a running state
    from ``updates`` train-mode batches in PyTorch's convention: momentum 0.1, the *sample*
    variance of the ``m = 8 * 12 * 12`` values of a channel enters the running variance,
    ``eps`` of the layer 1e-5). The unfolded eval-mode layer is the reference; three folds
    are compared with it (the rounding bound of section 16.4):

    - ``matched``: the fold reads the layer's own ``eps`` and the stored variance as it is,
      the conventions of a conv-then-batch-norm fold such as PyTorch's;
    - ``wrong_eps``: the fold assumes ``AUDIT_WRONG_EPS`` (Keras's default);
    - ``bessel_twice``: the fold takes the stored variance for a population variance and
      multiplies it by ``m / (m - 1)``.

    Returns
    -------
    dict
        For each of the three: ``max_abs_difference`` and ``max_ratio_to_bound``; and
        ``values_per_channel``, the ``m`` of the train-mode batches.

    Examples
    --------
    >>> result = folding_audit_witness(seed=0)
    >>> result["matched"]["max_ratio_to_bound"] <= 1 < result["wrong_eps"]["max_ratio_to_bound"]
    True
    """
    rng = np.random.default_rng(seed)
    check, state, _ = conv_fold_case(rng, AUDIT_BATCH_SHAPE, updates, eps)
    m = AUDIT_BATCH_SHAPE[0] * AUDIT_BATCH_SHAPE[2] * AUDIT_BATCH_SHAPE[3]
    rescaled = BatchNormState(state.running_mean, state.running_variance * (m / (m - 1)))
    return {
        "values_per_channel": m,
        "matched": check(state, eps),
        "wrong_eps": check(state, AUDIT_WRONG_EPS),
        "bessel_twice": check(rescaled, eps),
    }
