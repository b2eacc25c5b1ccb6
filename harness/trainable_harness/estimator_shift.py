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

from trainable_harness.errors import (
    EstimatorSettingError,
    ResultOverflowError,
    check_eps,
    check_integer,
    check_real,
    check_seed,
)
from trainable_harness.layers.standardize import standardize, standardize_with
from trainable_harness.normalization import scaled_moments

__all__ = ["ESTIMATOR", "discrepancy", "mean_square_discrepancy", "shift_part"]

ESTIMATOR = {"mean": 4.0, "std": 2.0, "eps": 1e-5}


def _check_count(value, name: str, minimum: int) -> int:
    return check_integer(value, name, minimum=minimum, error=EstimatorSettingError)


def _check_shift(shift) -> float:
    return check_real(shift, "shift", error=EstimatorSettingError)


def _rms(difference: np.ndarray) -> float:
    """``sqrt(mean(difference**2))``; scaled by a power of two where the squares leave range.

    The direct form is used whenever it is finite and its squares stay in the normal
    range; otherwise the differences are divided by ``2**k`` near their largest magnitude
    first (exact) and the root multiplied back.
    """
    with np.errstate(over="ignore", under="ignore"):
        direct = float(np.sqrt(np.mean(difference**2)))
    largest = float(np.max(np.abs(difference)))
    if np.isfinite(direct) and (largest == 0 or largest >= _SMALLEST_ROOT):
        return direct
    k = int(np.frexp(largest)[1])
    with np.errstate(under="ignore"):
        scaled = np.ldexp(difference, -k)
        return float(np.ldexp(np.sqrt(np.mean(scaled * scaled)), k))


# Entries below this have squares below float64's normal range (2**-1022).
_SMALLEST_ROOT = 2.0**-511


def discrepancy(rng: np.random.Generator, batch_count: int, batch_size: int, shift: float):
    """One draw of the discrepancy (see the module docstring) with ``ESTIMATOR`` settings.

    Raises
    ------
    EstimatorSettingError
        ``batch_count < 1`` or ``batch_size < 2`` (a batch variance needs two values), a
        count that is not a whole number, or a ``shift`` that is not a finite real number.
    TypeError
        If ``rng`` is not a :class:`numpy.random.Generator`.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    batch_count = _check_count(batch_count, "batch_count", 1)
    batch_size = _check_count(batch_size, "batch_size", 2)
    _check_shift(shift)
    mean, std, eps = ESTIMATOR["mean"], ESTIMATOR["std"], check_eps(ESTIMATOR["eps"])
    training = rng.normal(mean, std, size=(batch_count, batch_size))
    evaluation = rng.normal(mean + shift, std, size=batch_size)
    return _rms(_with_training_state(evaluation, training, eps) - _own(evaluation, eps))


def _with_training_state(evaluation: np.ndarray, training: np.ndarray, eps: float):
    """The evaluation values standardized with the merged training state: the mean and
    population variance of all training values (the harness's one moment kernel) and
    :func:`~trainable_harness.layers.standardize_with` (eps inside the root)."""
    state = scaled_moments(training, (0, 1), centered=True, eps=0.0, with_mean=True)
    return standardize_with(evaluation, state.mean[0, 0], state.variance()[0, 0], eps=eps)


def _own(evaluation: np.ndarray, eps: float) -> np.ndarray:
    """The evaluation values standardized with their own statistics (train mode,
    :func:`~trainable_harness.layers.standardize`)."""
    return standardize(evaluation, (0,), eps=eps)


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
    _check_count(batch_count, "batch_count", 1)
    _check_count(batch_size, "batch_size", 2)
    _check_shift(shift)
    rng = np.random.default_rng(check_seed(seed))
    squares = []
    for _ in range(repeats):
        value = discrepancy(rng, batch_count, batch_size, shift)
        try:
            squares.append(value**2)
        except OverflowError:  # a Python float's ** raises instead of giving inf
            raise ResultOverflowError(
                f"the squared discrepancy {value:.4g}**2 is beyond float64's range (shift = "
                f"{shift!r}); use a smaller shift"
            ) from None
    with np.errstate(over="ignore"):
        mean = float(np.mean(squares))
    if not np.isfinite(mean):
        raise ResultOverflowError(
            f"the mean squared discrepancy is beyond float64's range (shift = {shift!r})"
        )
    return mean


def shift_part(shift: float) -> float:
    """``|shift| / sqrt(std^2 + eps)``: the discrepancy between the populations' statistics.

    Raises
    ------
    EstimatorSettingError
        If ``shift`` is not a finite real number.

    Examples
    --------
    >>> round(shift_part(-2.0), 6)  # 2 / sqrt(4 + 1e-5)
    0.999999
    """
    _check_shift(shift)
    return float(abs(shift) / np.sqrt(ESTIMATOR["std"] ** 2 + ESTIMATOR["eps"]))
