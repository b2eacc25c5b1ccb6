"""Train/evaluation discrepancy split into a finite-estimator part and a shift part.

Chapter 15, worked solution of exercise 4. As in section "Train state and evaluation state
are different estimators", ``batch_count`` training batches of ``batch_size`` values from
``N(mean, std^2)`` are merged into one state (mean and population variance of all of
them), and an evaluation batch of ``batch_size`` values is drawn from
``N(mean + shift, std^2)``. The *discrepancy* is the root mean square, over the evaluation
values, of the difference between normalizing them with the merged training state and with
the evaluation batch's own state (eps inside the root).

With ``shift = 0`` (the control) the discrepancy is the finite-estimator part alone; the
shift part is the discrepancy between the two *populations'* exact statistics,
``|shift| / sqrt(std^2 + eps)``. When the two parts are independent they add in quadrature:
``E[total^2] ~ E[control^2] + shift_part^2``.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> round(shift_part(1.0), 4)
0.5
>>> discrepancy(rng, batch_count=8, batch_size=32, shift=0.0) > 0
True
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import EstimatorSettingError, check_eps

__all__ = ["ESTIMATOR", "discrepancy", "mean_square_discrepancy", "shift_part"]

ESTIMATOR = {"mean": 4.0, "std": 2.0, "eps": 1e-5}


def _check_count(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise EstimatorSettingError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def discrepancy(rng: np.random.Generator, batch_count: int, batch_size: int, shift: float):
    """One draw of the discrepancy (see the module docstring) with ``ESTIMATOR`` settings.

    Raises
    ------
    EstimatorSettingError
        ``batch_count < 1`` or ``batch_size < 2`` (a batch variance needs two values).
    """
    batch_count = _check_count(batch_count, "batch_count", 1)
    batch_size = _check_count(batch_size, "batch_size", 2)
    mean, std, eps = ESTIMATOR["mean"], ESTIMATOR["std"], check_eps(ESTIMATOR["eps"])
    training = rng.normal(mean, std, size=(batch_count, batch_size))
    evaluation = rng.normal(mean + shift, std, size=batch_size)
    merged = (evaluation - training.mean()) / np.sqrt(training.var() + eps)
    own = (evaluation - evaluation.mean()) / np.sqrt(evaluation.var() + eps)
    return float(np.sqrt(np.mean((merged - own) ** 2)))


def mean_square_discrepancy(
    seed: int, batch_count: int, batch_size: int, shift: float, repeats: int = 20
) -> float:
    """Mean over ``repeats`` draws (``default_rng(seed)``) of the squared discrepancy.

    Examples
    --------
    >>> a = mean_square_discrepancy(1, 8, 8, 0.0)
    >>> b = mean_square_discrepancy(1, 8, 32, 0.0)
    >>> a > b       # the evaluation batch's own estimate improves with its size
    True
    """
    repeats = _check_count(repeats, "repeats", 1)
    rng = np.random.default_rng(seed)
    return float(
        np.mean([discrepancy(rng, batch_count, batch_size, shift) ** 2 for _ in range(repeats)])
    )


def shift_part(shift: float) -> float:
    """``|shift| / sqrt(std^2 + eps)``: the discrepancy between the populations' statistics."""
    return float(abs(shift) / np.sqrt(ESTIMATOR["std"] ** 2 + ESTIMATOR["eps"]))
