"""The four experiments of chapter 16's section on real images, each on given arrays.

Every function takes the split images (:func:`prepare_split`) and a seed, trains replicas
of :mod:`~trainable_harness.digits.convnet` with
:func:`~trainable_harness.digits.training.train` and returns plain numbers. Settings
(module constants, chosen to fit a build's budget; the claims state what they cost in
resolution):

- ``EPOCHS`` epochs over the training images (a third of the digits, ``TEST_FRACTION``),
  SGD with momentum 0.9 and a learning rate decaying linearly to 0, starting at
  ``BASE_LEARNING_RATE`` for ``REFERENCE_BATCH`` images and scaled in proportion to the
  batch size (the linear scaling rule of Goyal et al. (2017), which Wu and He (2018)
  follow across batch sizes with the number of epochs fixed);
- ``BATCH_SIZES`` for the sweep, ``SMALL_BATCH`` for the train/eval gap,
  ``REFERENCE_BATCH``, ``LONG_EPOCHS`` and ``GAP_LEARNING_RATE`` for the generalization
  gap, ``LEARNING_RATES`` (powers of two) and ``PROBE_EPOCHS`` for the largest stable
  learning rate.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from trainable_harness.digits.checks import batch_dependence
from trainable_harness.digits.convnet import KINDS
from trainable_harness.digits.data import stratified_split
from trainable_harness.digits.training import error_rates, init_shared, mean_loss, train
from trainable_harness.errors import DigitsError

__all__ = [
    "BASE_LEARNING_RATE",
    "BATCH_SIZES",
    "EPOCHS",
    "GAP_LEARNING_RATE",
    "LEARNING_RATES",
    "LONG_EPOCHS",
    "PROBE_EPOCHS",
    "REFERENCE_BATCH",
    "SMALL_BATCH",
    "TEST_FRACTION",
    "Split",
    "batch_size_sweep",
    "generalization_gap",
    "largest_stable_learning_rates",
    "prepare_split",
    "scaled_learning_rate",
    "train_eval_gap",
]

TEST_FRACTION = 2 / 3  # 599 training images, 1 198 test images
EPOCHS = 5
BATCH_SIZES = (2, 8, 32, 128)
REFERENCE_BATCH = 32
BASE_LEARNING_RATE = 0.5
SMALL_BATCH = 2
LONG_EPOCHS = 15
GAP_LEARNING_RATE = 0.1  # stable without batch norm for LONG_EPOCHS (0.5 is not)
LEARNING_RATES = tuple(2.0**k for k in range(-4, 6))  # 1/16 to 32
PROBE_EPOCHS = 2
DEPENDENCE_IMAGES = 16  # test images classified together and one at a time


class Split(NamedTuple):
    """Training and test images (standardized with the training pixels' mean and standard
    deviation) and their labels."""

    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray


def prepare_split(images, labels, split_seed: int, test_fraction: float = TEST_FRACTION) -> Split:
    """A stratified split (:func:`~trainable_harness.digits.data.stratified_split`), its
    pixels standardized as ``(x - mean) / std`` with the training images' mean and
    population standard deviation over all their pixels (two numbers; the test images are
    never looked at). The inputs are not modified.

    Raises
    ------
    DigitsError
        ``images`` not ``(n, 8, 8)`` with one label each, or a bad ``test_fraction``.
    """
    images, labels = np.asarray(images, dtype=np.float64), np.asarray(labels)
    if images.ndim != 3 or images.shape[1:] != (8, 8) or labels.shape != images.shape[:1]:
        raise DigitsError(
            f"images must be (n, 8, 8) with labels (n,), got {images.shape} and {labels.shape}"
        )
    train, test = stratified_split(labels, test_fraction, split_seed)
    mean, std = images[train].mean(), images[train].std()
    if not std > 0:
        raise DigitsError("the training images are constant: no scale to standardize with")
    return Split(
        (images[train] - mean) / std, labels[train], (images[test] - mean) / std, labels[test]
    )


def scaled_learning_rate(batch_size: int) -> float:
    """``BASE_LEARNING_RATE * batch_size / REFERENCE_BATCH`` (the linear scaling rule)."""
    return BASE_LEARNING_RATE * batch_size / REFERENCE_BATCH


def _train_on(split: Split, kinds, rng, batch_size: int, epochs: int, learning_rate):
    """Replicas of ``kinds`` from shared initial weights, trained on the split's training
    images (:func:`~trainable_harness.digits.training.train`); ``rng`` draws the weights,
    then the batches."""
    return train(
        init_shared(kinds, rng),
        split.train_images,
        split.train_labels,
        batch_size=batch_size,
        epochs=epochs,
        learning_rate=learning_rate,
        rng=rng,
    )


def batch_size_sweep(split: Split, seed: int, batch_sizes=BATCH_SIZES, epochs: int = EPOCHS):
    """Test and training error of the four kinds of normalization at each batch size.

    For each ``B`` in ``batch_sizes``, one replica per kind of ``KINDS``, all from the same
    initial weights and seeing the same batches, trained ``epochs`` epochs at
    :func:`scaled_learning_rate`; errors in evaluation mode (batch norm with its running
    statistics). Returns ``{"test_error": {kind: {B: e}}, "train_error": {...},
    "diverged": {kind: {B: bool}}, "batch_dependence": {kind: d},
    "eval_batch_dependence": {kind: d}}``, the last two from the networks trained at the
    smallest batch size: how far the train-mode and the evaluation-mode arithmetic move
    the logits of ``DEPENDENCE_IMAGES`` test images classified together rather than one at
    a time (:func:`~trainable_harness.digits.checks.batch_dependence`), 0 up to rounding
    for every kind and mode that pools nothing across images.
    """
    rng = np.random.default_rng(seed)
    result = {"test_error": {}, "train_error": {}, "diverged": {}}
    for key in result:
        result[key] = {kind: {} for kind in KINDS}
    for B in batch_sizes:
        run = _train_on(split, KINDS, rng, B, epochs, scaled_learning_rate(B))
        test = error_rates(run.net, split.test_images, split.test_labels)
        training = error_rates(run.net, split.train_images, split.train_labels)
        for r, kind in enumerate(KINDS):
            result["test_error"][kind][B] = float(test[r])
            result["train_error"][kind][B] = float(training[r])
            result["diverged"][kind][B] = bool(run.diverged[r])
        if B == min(batch_sizes):
            dependence = batch_dependence(run.net, split.test_images[:DEPENDENCE_IMAGES], "batch")
            result["batch_dependence"] = {k: float(dependence[r]) for r, k in enumerate(KINDS)}
            evaluation = batch_dependence(
                run.net, split.test_images[:DEPENDENCE_IMAGES], "running"
            )
            result["eval_batch_dependence"] = {
                k: float(evaluation[r]) for r, k in enumerate(KINDS)
            }
    return result


def train_eval_gap(split: Split, seed: int, batch_size: int = SMALL_BATCH, epochs: int = EPOCHS):
    """Batch norm trained at ``batch_size``: its test error three ways.

    - ``running``: evaluation mode, the running statistics (eq. 16.5), the test images
      arriving in batches of ``batch_size``;
    - ``batch``: the same batches, each normalized with its own statistics (a network left
      in train mode);
    - ``batch_large``: the same in batches of ``REFERENCE_BATCH * 4`` test images, whose
      statistics are close to the test set's own.

    Also ``alone_vs_batch``: the largest difference between the evaluation-mode logits of
    the first ``DEPENDENCE_IMAGES`` test images classified together and one at a time
    (:func:`~trainable_harness.digits.checks.batch_dependence`; 0 up to rounding when
    evaluation mode pools nothing across images).
    """
    rng = np.random.default_rng(seed)

    def order_rng(k):  # the same order of test images for the modes compared
        return np.random.default_rng([seed, k])

    run = _train_on(split, ("batch",), rng, batch_size, epochs, scaled_learning_rate(batch_size))
    images, labels = split.test_images, split.test_labels
    return {
        "running": float(
            error_rates(
                run.net, images, labels, mode="running", batch_size=batch_size, rng=order_rng(0)
            )[0]
        ),
        "batch": float(
            error_rates(
                run.net, images, labels, mode="batch", batch_size=batch_size, rng=order_rng(0)
            )[0]
        ),
        "batch_large": float(
            error_rates(
                run.net,
                images,
                labels,
                mode="batch",
                batch_size=4 * REFERENCE_BATCH,
                rng=order_rng(1),
            )[0]
        ),
        "alone_vs_batch": float(
            batch_dependence(run.net, images[:DEPENDENCE_IMAGES], "running")[0]
        ),
        "train_running": float(error_rates(run.net, split.train_images, split.train_labels)[0]),
    }


def generalization_gap(
    split: Split,
    seed: int,
    batch_size: int = REFERENCE_BATCH,
    epochs: int = LONG_EPOCHS,
    learning_rate: float = GAP_LEARNING_RATE,
):
    """Training and test error and loss, with and without batch norm, one initialization.

    Two replicas (``"none"`` and ``"batch"``) from the same weights and batches, trained
    ``epochs`` epochs at one ``learning_rate`` that both train at, evaluated in
    evaluation mode. Per
    kind: ``train_error``, ``test_error``, ``error_gap`` (test minus training error),
    ``train_loss``, ``test_loss`` and ``loss_gap``.
    """
    rng = np.random.default_rng(seed)
    kinds = ("none", "batch")
    run = _train_on(split, kinds, rng, batch_size, epochs, learning_rate)
    train_error = error_rates(run.net, split.train_images, split.train_labels)
    test_error = error_rates(run.net, split.test_images, split.test_labels)
    train_loss = mean_loss(run.net, split.train_images, split.train_labels)
    test_loss = mean_loss(run.net, split.test_images, split.test_labels)
    return {
        kind: {
            "train_error": float(train_error[r]),
            "test_error": float(test_error[r]),
            "error_gap": float(test_error[r] - train_error[r]),
            "train_loss": float(train_loss[r]),
            "test_loss": float(test_loss[r]),
            "loss_gap": float(test_loss[r] - train_loss[r]),
            "diverged": bool(run.diverged[r]),
        }
        for r, kind in enumerate(kinds)
    }


def largest_stable_learning_rates(
    split: Split,
    seed: int,
    learning_rates=LEARNING_RATES,
    batch_size: int = REFERENCE_BATCH,
    epochs: int = PROBE_EPOCHS,
):
    """``log2`` of the largest stable learning rate, without and with batch norm.

    One replica per kind and learning rate, all from the same initial weights and batches.
    A run is *stable* when every step's training loss is finite and its last epoch's mean
    training loss is below ``ln 10``, the loss of the uniform prediction over the ten
    classes: it neither overflowed nor failed to learn anything. The largest stable rate is
    the largest of ``learning_rates`` whose run, and every smaller rate's run, is stable
    (``-inf`` if the smallest is not). Returns ``{kind: {"log2_largest_stable": k,
    "stable": [bool per rate]}}`` for ``"none"`` and ``"batch"``.
    """
    rates = np.asarray(learning_rates, dtype=np.float64)
    if rates.ndim != 1 or rates.size < 2 or not (np.diff(rates) > 0).all():
        raise DigitsError(f"learning_rates must increase, at least two, got {learning_rates!r}")
    rng = np.random.default_rng(seed)
    kinds = ("none",) * rates.size + ("batch",) * rates.size
    run = _train_on(split, kinds, rng, batch_size, epochs, np.tile(rates, 2))
    stable = (~run.diverged) & (run.last_epoch_loss < math.log(10))
    result = {}
    for i, kind in enumerate(("none", "batch")):
        flags = stable[i * rates.size : (i + 1) * rates.size]
        run_length = int(np.argmin(flags)) if not flags.all() else rates.size
        result[kind] = {
            "log2_largest_stable": float(np.log2(rates[run_length - 1]))
            if run_length
            else -math.inf,
            "stable": [bool(f) for f in flags],
        }
    return result
