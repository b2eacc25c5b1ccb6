"""Section 16.10: normalization on real images (scikit-learn's digits).

Four claims, one function each, every one on its own stratified split of the 1 797
digits (seeded from the claim's id by :func:`~trainable_harness.digits.split_seed`) and
one seed of its claim's set (:mod:`trainable_harness.digits`).
"""

from __future__ import annotations

import math

from trainable_harness.claimable import claim_computation
from trainable_harness.digits import (
    BATCH_SIZES,
    batch_size_sweep,
    generalization_gap,
    gradient_error,
    largest_stable_learning_rates,
    load_digit_images,
    prepare_split,
    split_seed,
    train_eval_gap,
)

__all__ = [
    "batch_size_witness",
    "learning_rate_witness",
    "regularization_witness",
    "train_eval_witness",
]


def _split(name: str):
    images, labels = load_digit_images()
    return prepare_split(images, labels, split_seed(name))


@claim_computation
def batch_size_witness(seed: int) -> dict:
    """Claim ``c16-digits-batch-size-001``, one seed: test error by normalization and batch size.

    From :func:`trainable_harness.digits.batch_size_sweep` (``BATCH_SIZES`` 2, 8, 32, 128;
    the four kinds from one initialization and one order of batches per size):

    - ``images.train``, ``images.test``: the sizes of the split;
    - ``test_error.<kind>.b<B>``: test error in evaluation mode;
    - ``bn_minus_gn.b<B>``: batch norm's test error minus group norm's (paired);
    - ``bn_rise``: batch norm's error at B = 2 minus its error at B = 8, and ``gn_rise``
      the same for group norm;
    - ``batch_dependence.<kind>``: for the networks trained at B = 2, the largest change of
      a test image's logits when train-mode arithmetic classifies it alone rather than
      with 15 others (0 up to rounding for every kind but batch norm);
    - ``eval_batch_dependence``: the same change in evaluation mode, the largest over the
      four kinds (0 up to rounding: no kind pools images in evaluation mode).
    """
    split = _split("c16-digits-batch-size")
    sweep = batch_size_sweep(split, seed)
    errors = sweep["test_error"]
    return {
        "images": {"train": len(split.train_labels), "test": len(split.test_labels)},
        "test_error": {kind: {f"b{B}": errors[kind][B] for B in BATCH_SIZES} for kind in errors},
        "bn_minus_gn": {f"b{B}": errors["batch"][B] - errors["group"][B] for B in BATCH_SIZES},
        "bn_rise": errors["batch"][2] - errors["batch"][8],
        "gn_rise": errors["group"][2] - errors["group"][8],
        "batch_dependence": sweep["batch_dependence"],
        "eval_batch_dependence": max(sweep["eval_batch_dependence"].values()),
    }


@claim_computation
def train_eval_witness(seed: int) -> dict:
    """Claim ``c16-digits-train-eval-001``, one seed: batch norm trained at B = 2, evaluated
    three ways (:func:`trainable_harness.digits.train_eval_gap`).

    ``running``, ``batch``, ``batch_large``: test error with the running statistics, with
    the statistics of batches of 2 test images, and of batches of 128; ``gap`` and
    ``gap_large``: ``batch`` and ``batch_large`` minus ``running``; ``alone_vs_batch``:
    evaluation mode's batch dependence.
    """
    result = train_eval_gap(_split("c16-digits-train-eval"), seed)
    return {
        "running": result["running"],
        "batch": result["batch"],
        "batch_large": result["batch_large"],
        "gap": result["batch"] - result["running"],
        "gap_large": result["batch_large"] - result["running"],
        "alone_vs_batch": result["alone_vs_batch"],
    }


@claim_computation
def regularization_witness(seed: int) -> dict:
    """Claim ``c16-digits-regularization-001``, one seed: the generalization gap with and
    without batch norm (:func:`trainable_harness.digits.generalization_gap`).

    Per kind (``none``, ``batch``): ``train_error``, ``test_error``, ``error_gap`` (test
    minus training error) and ``train_loss``; ``gap_reduction``: the error gap without
    batch norm minus the gap with it (positive if batch norm narrows it);
    ``test_error_reduction``: the test error without minus with.
    """
    result = generalization_gap(_split("c16-digits-regularization"), seed)
    fields = ("train_error", "test_error", "error_gap", "train_loss")
    return {
        **{kind: {f: result[kind][f] for f in fields} for kind in ("none", "batch")},
        "gap_reduction": result["none"]["error_gap"] - result["batch"]["error_gap"],
        "test_error_reduction": result["none"]["test_error"] - result["batch"]["test_error"],
    }


@claim_computation
def learning_rate_witness(seed: int) -> dict:
    """Claim ``c16-digits-learning-rate-001``, one seed: the largest stable learning rate.

    From :func:`trainable_harness.digits.largest_stable_learning_rates` (rates 1/16 to 32,
    a factor 2 apart; B = 32; 2 epochs): ``log2_stable_plain`` and ``log2_stable_bn``, and
    ``log2_gain`` their difference; ``gradient_error``: the backward pass against central
    differences (:func:`trainable_harness.digits.gradient_error`).
    """
    result = largest_stable_learning_rates(_split("c16-digits-learning-rate"), seed)
    plain = result["none"]["log2_largest_stable"]
    bn = result["batch"]["log2_largest_stable"]
    return {
        "log2_stable_plain": plain,
        "log2_stable_bn": bn,
        "log2_gain": bn - plain if math.isfinite(plain) and math.isfinite(bn) else math.nan,
        "gradient_error": gradient_error(seed),
    }
