"""Normalization on real images: a small convolutional network on scikit-learn's digits.

Chapter 16, section "Normalization on real images". The 1 797 handwritten digits of 8 x 8
pixels that scikit-learn ships inside its wheel (:func:`load_digit_images`, the only
function that needs scikit-learn, installed with ``trainable-harness[data]``) are split
once per experiment, stratified by class (:func:`stratified_split`, seeded from the
claim's id with :func:`split_seed`), and classified by a two-layer convolutional network
whose normalization is batch, group, layer or none (:mod:`~trainable_harness.digits.convnet`),
trained by SGD (:mod:`~trainable_harness.digits.training`). Everything except the loader
takes arrays.

Modules, one job each (every public name is re-exported here):

- :mod:`~trainable_harness.digits.data` -- the images, the split and its seed;
- :mod:`~trainable_harness.digits.convnet` -- the network, its four normalizations and
  every backward pass (float64; eps ``EPS`` inside the root; population variance);
- :mod:`~trainable_harness.digits.training` -- SGD over replicas trained side by side, and
  the error in evaluation mode or with batch statistics;
- :mod:`~trainable_harness.digits.checks` -- the gradient check and the batch dependence;
- :mod:`~trainable_harness.digits.experiments` -- the four experiments of the section.

Examples
--------
>>> import numpy as np
>>> net = init_convnet(("batch", "group"), np.random.default_rng(0))
>>> logits, _ = forward(net, np.zeros((3, 8, 8)), "train")
>>> logits.shape
(2, 3, 10)
"""

from trainable_harness.digits.checks import batch_dependence, gradient_error
from trainable_harness.digits.convnet import (
    CHANNELS,
    CLASSES,
    EPS,
    GROUPS,
    KINDS,
    MOMENTUM,
    ConvNet,
    cross_entropy,
    forward,
    init_convnet,
    loss_and_gradients,
    normalization_axes,
)
from trainable_harness.digits.data import (
    DigitImages,
    load_digit_images,
    split_seed,
    stratified_split,
)
from trainable_harness.digits.experiments import (
    BASE_LEARNING_RATE,
    BATCH_SIZES,
    EPOCHS,
    GAP_LEARNING_RATE,
    LEARNING_RATES,
    LONG_EPOCHS,
    PROBE_EPOCHS,
    REFERENCE_BATCH,
    SMALL_BATCH,
    TEST_FRACTION,
    Split,
    batch_size_sweep,
    generalization_gap,
    largest_stable_learning_rates,
    prepare_split,
    scaled_learning_rate,
    train_eval_gap,
)
from trainable_harness.digits.training import (
    MOMENTUM_SGD,
    TrainingRun,
    error_rates,
    init_shared,
    mean_loss,
    train,
)

__all__ = [
    "BASE_LEARNING_RATE",
    "BATCH_SIZES",
    "CHANNELS",
    "CLASSES",
    "EPOCHS",
    "EPS",
    "GAP_LEARNING_RATE",
    "GROUPS",
    "KINDS",
    "LEARNING_RATES",
    "LONG_EPOCHS",
    "MOMENTUM",
    "MOMENTUM_SGD",
    "PROBE_EPOCHS",
    "REFERENCE_BATCH",
    "SMALL_BATCH",
    "TEST_FRACTION",
    "ConvNet",
    "DigitImages",
    "Split",
    "TrainingRun",
    "batch_dependence",
    "batch_size_sweep",
    "cross_entropy",
    "error_rates",
    "forward",
    "generalization_gap",
    "gradient_error",
    "init_convnet",
    "init_shared",
    "largest_stable_learning_rates",
    "load_digit_images",
    "loss_and_gradients",
    "mean_loss",
    "normalization_axes",
    "prepare_split",
    "scaled_learning_rate",
    "split_seed",
    "stratified_split",
    "train",
    "train_eval_gap",
]
