"""Two exact checks of :mod:`~trainable_harness.digits.convnet` that the claims carry.

- :func:`gradient_error`: the written-out backward pass against central differences;
- :func:`batch_dependence`: how much an image's logits change when the image is
  classified alone rather than inside a batch.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.digits.convnet import (
    KINDS,
    PARAMETERS,
    cross_entropy,
    forward,
    loss_and_gradients,
)
from trainable_harness.digits.training import init_shared

__all__ = ["batch_dependence", "gradient_error"]

STEP = 1e-5  # central-difference step: truncation ~STEP^2 = 1e-10, rounding ~u/STEP = 2e-11


def gradient_error(seed: int, batch_size: int = 4, probes: int = 3) -> float:
    """Largest relative error of :func:`~trainable_harness.digits.convnet.loss_and_gradients`.

    One replica per kind of ``KINDS`` (weights from ``seed``), a batch of ``batch_size``
    random images and labels; for ``probes`` random entries of every parameter and
    replica, ``|g - (L(w + h) - L(w - h)) / 2h| / max(|g|, 1e-3)`` with ``h = STEP``, the
    loss in train mode's arithmetic (batch statistics, running state left alone). A correct
    backward pass leaves the truncation and rounding of the difference, near ``1e-8``
    relative; a dropped term leaves errors of order 1.
    """
    rng = np.random.default_rng(seed)
    net = init_shared(KINDS, rng)
    # Perturb the shared start so the replicas' normalization parameters are not at 1, 0.
    for name in PARAMETERS:
        array = getattr(net, name)
        array += 0.1 * rng.standard_normal(array.shape)
    images = rng.standard_normal((batch_size, 8, 8))
    labels = rng.integers(0, 10, batch_size)
    _, grads = loss_and_gradients(net, images, labels)
    worst = 0.0
    for name in PARAMETERS:
        array = getattr(net, name)
        for r in range(len(KINDS)):
            for _ in range(probes):
                index = (r, *(int(rng.integers(0, n)) for n in array.shape[1:]))
                kept = array[index]
                array[index] = kept + STEP
                above = cross_entropy(forward(net, images, "batch")[0], labels)[r]
                array[index] = kept - STEP
                below = cross_entropy(forward(net, images, "batch")[0], labels)[r]
                array[index] = kept
                numeric = (above - below) / (2 * STEP)
                error = abs(grads[name][index] - numeric) / max(abs(grads[name][index]), 1e-3)
                worst = max(worst, float(error))
    return worst


def batch_dependence(net, images, mode: str) -> np.ndarray:
    """Per replica, the largest ``|logit|`` difference between ``images`` classified together
    and one at a time, in ``mode`` (``"running"`` or ``"batch"``; see
    :func:`~trainable_harness.digits.convnet.forward`), ``(R,)``.

    In evaluation mode no layer pools images, and in batch mode only batch norm does: a
    replica of any other kind gives 0 up to the rounding of matrix products of different
    shapes. An image alone in batch mode is normalized by batch norm with its own
    positions only, which needs at least two positions per channel (they have 16).
    """
    together = forward(net, images, mode)[0]
    alone = np.concatenate(
        [forward(net, images[i : i + 1], mode)[0] for i in range(len(images))], 1
    )
    return np.abs(together - alone).max(axis=(1, 2))
