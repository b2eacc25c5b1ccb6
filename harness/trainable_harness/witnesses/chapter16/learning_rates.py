"""Section 16.8: why batch normalization tolerates larger learning rates.

A small MLP trained with and without batch norm over a grid of learning rates, and probes
of the loss along the gradient during training (:mod:`trainable_harness.mlp`).
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.mlp import (
    learning_rate_sweep,
    probe_along_training,
    probe_and_residual,
    scale_invariance_residual,
)

__all__ = ["larger_learning_rates_witness"]


@claim_computation
def larger_learning_rates_witness(seed: int) -> dict:
    """Claim ``c16-larger-learning-rates-001``, one seed: the MLP with and without batch norm.

    :func:`trainable_harness.mlp.learning_rate_sweep` for both networks (grid 1/8 to 64,
    60 full-batch steps, 128 examples) and :func:`trainable_harness.mlp.probe_along_training`
    at lr 0.5. Fields: ``log2_gain_learning`` and ``log2_gain_finite`` (log2 of the ratio
    of the largest learning rates, batch norm over plain), ``log2_largest_learning_plain``,
    ``log2_largest_learning_bn``, ``best_loss_plain``, ``best_loss_bn``, and the ratios
    plain over batch norm of the mean loss variation, gradient change and effective
    smoothness along the gradient; ``scale_invariance_residual``
    (:func:`trainable_harness.mlp.scale_invariance_residual`, computed with the probes of
    the same run by :func:`trainable_harness.mlp.probe_and_residual`), how far the batch-normalized
    network's weight gradients are from the orthogonality to their weights that scale
    invariance gives, the mechanism the chapter names; ``scale_invariance_residual_at_start``,
    the same at the start of that run (``steps=1``).

    Examples
    --------
    >>> result = larger_learning_rates_witness(seed=3)
    >>> result["log2_gain_learning"] >= 1
    True
    """
    sweeps = {bn: learning_rate_sweep(seed, bn) for bn in (False, True)}
    # The batch-normalized run's line probes and invariance residual come from one run.
    probe_bn, residual = probe_and_residual(seed)
    probes = {False: probe_along_training(seed, False), True: probe_bn}
    plain, bn = sweeps[False], sweeps[True]
    return {
        "log2_largest_learning_plain": float(np.log2(plain.largest_learning)),
        "log2_largest_learning_bn": float(np.log2(bn.largest_learning)),
        "log2_gain_learning": float(np.log2(bn.largest_learning / plain.largest_learning)),
        "log2_gain_finite": float(np.log2(bn.largest_finite / plain.largest_finite)),
        "best_loss_plain": plain.best_loss,
        "best_loss_bn": bn.best_loss,
        "loss_variation_ratio": probes[False].loss_variation / probes[True].loss_variation,
        "gradient_change_ratio": probes[False].gradient_change / probes[True].gradient_change,
        "smoothness_ratio": (
            probes[False].effective_smoothness / probes[True].effective_smoothness
        ),
        "scale_invariance_residual": residual,
        # The same relation at the untrained start (one step's probe): the mechanism
        # holds before training has moved the weights, not only along the run.
        "scale_invariance_residual_at_start": scale_invariance_residual(seed, steps=1),
    }
