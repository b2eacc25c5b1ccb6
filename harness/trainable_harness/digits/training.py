"""Training the replicas of :mod:`~trainable_harness.digits.convnet` and measuring their error.

SGD with heavy-ball momentum ``MOMENTUM_SGD`` (``v <- 0.9 v + g``, ``theta <- theta - lr
v``), one learning rate per replica, mini-batches of a fixed size drawn without
replacement in an order shuffled every epoch and shared by all replicas (a paired design:
replicas differ only in what the experiment varies). The last incomplete batch of an
epoch is dropped, so batch norm never sees a batch smaller than ``batch_size``. A replica
whose loss leaves float64's range goes on as NaN on its own (replicas never mix) and is
reported as diverged.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.digits.convnet import (
    PARAMETERS,
    ConvNet,
    _check_labels,
    cross_entropy,
    forward,
    init_convnet,
    loss_and_gradients,
)
from trainable_harness.errors import DigitsError, check_real_array

__all__ = ["MOMENTUM_SGD", "TrainingRun", "error_rates", "init_shared", "mean_loss", "train"]

MOMENTUM_SGD = 0.9


class TrainingRun(NamedTuple):
    """A trained network and, per replica, its last epoch's mean training loss and whether
    it diverged (a non-finite loss at any step)."""

    net: ConvNet
    last_epoch_loss: np.ndarray
    diverged: np.ndarray


def init_shared(kinds, rng: np.random.Generator) -> ConvNet:
    """One draw of :func:`init_convnet`'s weights, copied to every replica of ``kinds``."""
    one = init_convnet(kinds[:1], rng)
    R = len(kinds)
    arrays = [np.repeat(a, R, axis=0) for a in one[1:]]
    return ConvNet(tuple(kinds), *arrays)


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise DigitsError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def train(
    net: ConvNet,
    images,
    labels,
    *,
    batch_size: int,
    epochs: int,
    learning_rate,
    rng: np.random.Generator,
) -> TrainingRun:
    """Train every replica of ``net`` (a copy; ``net`` is not modified) for ``epochs`` epochs.

    Parameters
    ----------
    images : (n, 8, 8) float64; labels : (n,) int
    batch_size : int, ``2 <= batch_size <= n``
    epochs : int >= 1
    learning_rate : float or (R,) array of positive floats
    rng : numpy.random.Generator
        Draws the order of every epoch.

    Raises
    ------
    DigitsError
        A batch size outside ``[2, n]``, non-positive epochs or learning rates, or images
        and labels of different lengths.
    """
    images = check_real_array(images, "images")
    n = images.shape[0]
    labels = _check_labels(labels, n)
    batch_size = _check_positive_int(batch_size, "batch_size")
    if not 2 <= batch_size <= n:
        raise DigitsError(
            f"batch_size must lie in [2, {n}] (the training images), got {batch_size}"
        )
    epochs = _check_positive_int(epochs, "epochs")
    R = len(net.kinds)
    lr = np.broadcast_to(np.asarray(learning_rate, dtype=np.float64), (R,))
    if not (np.isfinite(lr).all() and (lr > 0).all()):
        raise DigitsError(f"learning_rate must be positive and finite, got {learning_rate!r}")
    net = ConvNet(net.kinds, *(np.array(a, dtype=np.float64) for a in net[1:]))
    velocity = {name: np.zeros_like(getattr(net, name)) for name in PARAMETERS}
    steps = n // batch_size
    diverged = np.zeros(R, dtype=bool)
    epoch_loss = np.zeros(R)
    total = epochs * steps
    with np.errstate(all="ignore"):
        for epoch in range(epochs):
            order = rng.permutation(n)[: steps * batch_size].reshape(steps, batch_size)
            epoch_loss = np.zeros(R)
            for step, batch in enumerate(order):
                loss, grads = loss_and_gradients(net, images[batch], labels[batch])
                diverged |= ~np.isfinite(loss)
                epoch_loss += loss
                # Linear decay to zero: the last steps settle the weights, so the error
                # measured after training is not one draw of SGD's noise at full rate.
                rate = lr * (1.0 - (epoch * steps + step) / total)
                for name in PARAMETERS:
                    v = velocity[name]
                    v *= MOMENTUM_SGD
                    v += grads[name]
                    getattr(net, name)[...] -= rate.reshape(-1, *(1,) * (v.ndim - 1)) * v
    return TrainingRun(net, epoch_loss / steps, diverged)


def error_rates(net: ConvNet, images, labels, *, mode: str = "running", batch_size=None, rng=None):
    """Fraction of ``images`` each replica classifies wrongly, ``(R,)``.

    ``mode="running"`` is evaluation mode (batch norm with its running statistics):
    every layer treats each image on its own, so the images are classified all at once,
    or, given ``batch_size``, in batches of that size (the same result, which is what
    makes evaluation mode evaluation mode). ``mode="batch"`` classifies them in batches of
    ``batch_size``, batch norm normalizing each with that batch's statistics, as a network
    left in train mode would. Batches follow an order drawn from ``rng``, the last
    incomplete one dropped. A non-finite logit counts as an error.

    Raises
    ------
    DigitsError
        An unknown ``mode``; a ``batch_size`` outside ``[1, n]`` (``[2, n]`` in batch mode,
        which needs one too), or one without an ``rng``.
    """
    images = check_real_array(images, "images")
    labels = _check_labels(labels, images.shape[0] if images.ndim else -1)
    if mode not in ("running", "batch"):
        raise DigitsError(f"mode must be 'running' or 'batch', got {mode!r}")
    if batch_size is None and mode == "running":
        return _wrong(net, images, labels, "running").mean(axis=-1)
    n = images.shape[0]
    smallest = 2 if mode == "batch" else 1
    if (
        batch_size is None
        or isinstance(batch_size, bool)
        or not isinstance(batch_size, int | np.integer)
        or not smallest <= batch_size <= n
        or rng is None
    ):
        raise DigitsError(
            f"mode={mode!r} needs batch_size in [{smallest}, {n}] and an rng, got "
            f"batch_size={batch_size!r}"
        )
    steps = n // batch_size
    order = rng.permutation(n)[: steps * batch_size].reshape(steps, batch_size)
    wrong = sum(_wrong(net, images[chunk], labels[chunk], mode).sum(axis=-1) for chunk in order)
    return wrong / (steps * batch_size)


def _wrong(net: ConvNet, images, labels, mode: str) -> np.ndarray:
    """``(R, B)``: True where a replica's prediction is not the label (or not finite)."""
    with np.errstate(all="ignore"):
        logits, _ = forward(net, images, mode)
    return (logits.argmax(axis=-1) != labels) | ~np.isfinite(logits).all(axis=-1)


def mean_loss(net: ConvNet, images, labels) -> np.ndarray:
    """Evaluation-mode cross-entropy of every replica on ``images``, ``(R,)``."""
    with np.errstate(all="ignore"):
        return cross_entropy(forward(net, images, "running")[0], np.asarray(labels))
