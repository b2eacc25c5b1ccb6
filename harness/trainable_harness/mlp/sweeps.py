"""Learning-rate sweeps: the largest learning rate at which each network still learns.

:func:`learning_rate_sweep` trains from one initialization at every learning rate of a
grid (``LEARNING_RATES``, ``BUDGET`` steps, ``TASK_SIZE`` examples) and reads the
thresholds against :func:`label_entropy`, the loss of the best constant predictor.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from trainable_harness.errors import MLPError, ShapeError, check_integer
from trainable_harness.mlp.checks import _check_bool, _check_labels, _positive_vector
from trainable_harness.mlp.network import train_full_batch
from trainable_harness.mlp.task import CLASSES, make_teacher_task

__all__ = ["label_entropy", "learning_rate_sweep"]


LEARNING_RATES = 2.0 ** np.arange(-3, 7)  # 1/8 to 64, a factor of 2 apart
BUDGET = 60  # full-batch steps per run
TASK_SIZE = 128  # training examples
# A run learns when its final loss is at most (1 - LEARNING_MARGIN) times the label entropy.
# The margin, about 0.13 nats here, is some 10^14 times the rounding of a loss near 1.4
# (2.2e-16), so a network whose hidden units are all dead (its loss is the label entropy
# to the last bit) never counts as learning, and no summation order can move a run across
# the line; every run that learns in the ordinary sense (all the smallest rates) ends below
# a third of the label entropy, so the margin does not decide them either.
LEARNING_MARGIN = 0.1


def label_entropy(labels) -> float:
    """Cross-entropy of the best constant predictor: the entropy of the label frequencies.

    Examples
    --------
    Raises
    ------
    ShapeError, UnsupportedDtypeError
        Labels that are not a non-empty 1-D array of class indices in ``[0, CLASSES)``.

    >>> round(label_entropy(np.array([0, 1, 2, 3])), 6)
    1.386294
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ShapeError(f"labels must be a non-empty 1-D array, got shape {labels.shape}")
    labels = _check_labels(labels, labels.shape[0], CLASSES)
    counts = np.bincount(labels, minlength=CLASSES)
    p = counts[counts > 0] / counts.sum()
    return float(-np.sum(p * np.log(p)))


class Sweep(NamedTuple):
    """Final losses ``(L,)`` over the learning rates, and the thresholds read from them.

    ``largest_finite``: largest learning rate whose loss stayed finite for the budget;
    ``largest_learning``: largest learning rate such that it and every smaller one end
    at most ``1 - LEARNING_MARGIN`` times the label entropy (they beat the best constant
    predictor by a tenth of its loss, a margin far above rounding); ``best_loss``: the
    lowest final loss on the grid.
    """

    learning_rates: np.ndarray
    final_losses: np.ndarray
    largest_finite: float
    largest_learning: float
    best_loss: float


def learning_rate_sweep(
    seed: int, batch_norm: bool, *, learning_rates=LEARNING_RATES, steps: int = BUDGET
) -> Sweep:
    """Train from one initialization at every learning rate of a grid; read the thresholds.

    The task is ``make_teacher_task(seed, TASK_SIZE)`` and the initialization
    ``init_mlp(seed + 1, batch_norm)``, so a network with and without batch norm meet the
    same data and the same first-draw weights. The result is a pure function of the
    arguments and is cached in the process (its arrays are read-only), so a chapter that
    draws a figure from the same sweeps does not train twice.

    Examples
    --------
    >>> sweep = learning_rate_sweep(0, True, learning_rates=[0.5, 1e4], steps=5)
    >>> float(sweep.largest_finite)
    0.5
    """
    rates = tuple(float(r) for r in _positive_vector(np.ravel(learning_rates), "learning_rates"))
    seed = check_integer(seed, "seed", minimum=0, error=MLPError)
    steps = check_integer(steps, "steps", minimum=1, error=MLPError)
    return _cached_sweep(seed, _check_bool(batch_norm, "batch_norm"), rates, steps)


@functools.lru_cache(maxsize=256)
def _cached_sweep(seed: int, batch_norm: bool, rates: tuple, steps: int) -> Sweep:
    task = make_teacher_task(seed, TASK_SIZE)
    learning_rates = np.array(rates)
    run = train_full_batch(
        task, seed=seed + 1, batch_norm=batch_norm, learning_rates=learning_rates, steps=steps
    )
    final = run.losses[-1]
    finite = np.isfinite(final)
    # A margin, not "below": a dead network ends at the label entropy +- a few ulps.
    learning = finite & (final <= (1.0 - LEARNING_MARGIN) * label_entropy(task.labels))
    # The first failure from below ends the stable range; a lucky success above it does not.
    first_failure = int(np.argmin(learning)) if not learning.all() else learning.size
    learning_rates.setflags(write=False)
    final.setflags(write=False)
    return Sweep(
        learning_rates=learning_rates,
        final_losses=final,
        largest_finite=float(learning_rates[finite].max()) if finite.any() else 0.0,
        largest_learning=float(learning_rates[first_failure - 1]) if first_failure else 0.0,
        best_loss=float(np.nanmin(final)) if finite.any() else float("nan"),
    )
