"""The task of the learning-rate experiments: a random teacher network labels Gaussian inputs.

:func:`make_teacher_task` draws ``n`` inputs of dimension ``INPUTS`` (uneven scales, a
nonzero mean) and labels them into ``CLASSES`` classes by a random two-layer tanh teacher.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trainable_harness.errors import ShapeError, check_integer, check_seed

__all__ = ["TeacherTask", "make_teacher_task"]


INPUTS = 16
CLASSES = 4


class TeacherTask(NamedTuple):
    """Inputs ``X`` ``(n, INPUTS)`` and integer labels ``labels`` ``(n,)`` in ``[0, CLASSES)``."""

    X: np.ndarray
    labels: np.ndarray


def make_teacher_task(seed: int, n: int = 256) -> TeacherTask:
    """Label standard normal inputs by the argmax of a random two-layer tanh teacher.

    The teacher has 64 hidden units with weights ``N(0, 1/fan_in)``; its logits are
    multiplied by 3 so that classes are neither balanced by chance nor trivially linear.
    Inputs get a shared offset of 1 per coordinate and scales from 0.5 to 2, so the first
    layer's pre-activations are neither centered nor of unit scale (which batch norm
    would otherwise get for free).

    Parameters
    ----------
    seed : int
    n : int, default 256
        Number of training examples, >= 2.

    Returns
    -------
    TeacherTask

    Raises
    ------
    ShapeError
        If ``n < 2``.

    Examples
    --------
    >>> task = make_teacher_task(seed=3, n=8)
    >>> task.X.shape, task.labels.dtype.kind
    ((8, 16), 'i')
    """
    n = check_integer(n, "n", minimum=2, error=ShapeError)  # batch statistics need two
    rng = np.random.default_rng(check_seed(seed))
    Z = rng.normal(size=(int(n), INPUTS))
    hidden = np.tanh(Z @ rng.normal(size=(INPUTS, 64)) / np.sqrt(INPUTS))
    logits = 3.0 * hidden @ rng.normal(size=(64, CLASSES)) / np.sqrt(64)
    scales = np.geomspace(0.5, 2.0, INPUTS)
    return TeacherTask(X=1.0 + scales * Z, labels=np.argmax(logits, axis=1))
