"""Train mode against evaluation mode: the statistic errors and the train/eval gap.

:func:`train_mode` normalizes with each batch"s statistics, :func:`population_eval` with
the population"s; :func:`statistic_errors` and :func:`train_eval_gap` measure how far
apart they are.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.errors import (
    ResultOverflowError,
    ShapeError,
    check_real_array,
)
from trainable_harness.layers.standardize import standardize_with
from trainable_harness.normalization import validated_eps
from trainable_harness.small_batch.checks import (
    _batch_moments,
    _batch_standardized,
    _finite_output,
    _per_channel,
)
from trainable_harness.small_batch.model import (
    EPS,
    _check_5d,
    _population,
    draw_activations,  # noqa: F401 (the doctests use it)
)

__all__ = ["population_eval", "statistic_errors", "train_eval_gap", "train_mode"]


def train_mode(X, eps: float = EPS) -> np.ndarray:
    """Train-mode batch norm (gamma 1, beta 0) of every repeat with its own statistics.

    Equal to :func:`trainable_harness.layers.batch_norm` applied to each ``X[r]``: both
    standardize with :func:`trainable_harness.layers.standardize` (eq. 16.3, the
    population variance, eps inside the root).

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(0), repeats=1, batch=4)
    >>> Y = train_mode(X)
    >>> bool(np.allclose(Y.mean(axis=(1, 3, 4)), 0.0, atol=1e-12))
    True
    """
    eps = validated_eps(eps)
    X = _check_5d(X)
    return _batch_standardized(X, eps, "train_mode").normalized()


def population_eval(X, eps: float = EPS) -> np.ndarray:
    """Evaluation-mode batch norm with the model's population statistics.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(0), repeats=200, batch=8)
    >>> round(float(population_eval(X).std()), 1)  # unit variance on average
    1.0
    """
    eps = validated_eps(eps)
    X = _check_5d(X)
    mean, variance = _population()
    Y = standardize_with(X, _per_channel(mean), _per_channel(variance), eps=eps)
    return _finite_output(Y, eps, variance, "population_eval")


def statistic_errors(X) -> dict:
    """RMS error over repeats and channels of the batch mean and of ``std_B / std - 1``.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(1), repeats=400, batch=64)
    >>> errors = statistic_errors(X)
    >>> bool(errors["mean"] < 0.2)
    True
    """
    X = _check_5d(X)
    mean, variance = _batch_moments(X)
    population_mean, population_variance = _population()
    mean_error = mean - _per_channel(population_mean)
    std_error = np.sqrt(variance / _per_channel(population_variance)) - 1.0
    return {
        "mean": float(np.sqrt(np.mean(mean_error**2))),
        "std": float(np.sqrt(np.mean(std_error**2))),
    }


def train_eval_gap(train_output, X, eps: float = EPS) -> float:
    """RMS over all values of ``train_output - population_eval(X)``.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(0), repeats=4, batch=2)
    >>> train_eval_gap(population_eval(X), X)
    0.0

    Raises
    ------
    ShapeError
        If ``train_output`` does not have ``X``'s shape (it used to broadcast).
    ResultOverflowError
        If the squared differences overflow (outputs beyond about ``1e154``).
    """
    reference = population_eval(X, eps)
    train_output = check_real_array(train_output, "train_output")
    if train_output.shape != reference.shape:
        raise ShapeError(
            f"train_output has shape {train_output.shape}; it must have X's shape "
            f"{reference.shape}"
        )
    with np.errstate(over="ignore"):
        gap = float(np.sqrt(np.mean((train_output - reference) ** 2)))
    if not np.isfinite(gap):
        raise ResultOverflowError(
            "train_eval_gap: the squared differences of train_output and the evaluation "
            "output overflow float64; rescale train_output"
        )
    return gap
