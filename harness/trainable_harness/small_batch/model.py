"""The activation model of the section and what a batch"s variance is expected to be.

For sample ``b``, channel ``c`` and position ``p``,
``x[b, c, p] = mu_c + a[b, c] + e[b, c, p]`` with ``a ~ N(0, SHARED_VARIANCE)`` shared by
the ``SIDE**2`` positions of a sample and ``e ~ N(0, INDEPENDENT_VARIANCE)``:
:func:`draw_activations` draws it, :func:`batch_population_variances` and
:func:`expected_batch_variance` compare a batch"s variance with the population"s, and
:func:`mean_error_theory` predicts the error of a batch mean;
``_check_5d`` checks that an array is a batch of the model, ``(repeats, B, CHANNELS, H, W)``.
"""

from __future__ import annotations

import math

import numpy as np

from trainable_harness.errors import (
    ShapeError,
    SmallBatchError,
    check_real_array,
)
from trainable_harness.small_batch.checks import (
    _batch_moments,
    _positive_integer,
)

__all__ = [
    "CHANNELS",
    "INDEPENDENT_VARIANCE",
    "SHARED_VARIANCE",
    "SIDE",
    "batch_population_variances",
    "draw_activations",
    "expected_batch_variance",
    "mean_error_theory",
    "single_sample_gap_theory",
    "two_sample_gap_theory",
]


CHANNELS = 8
SIDE = 4  # H = W
SHARED_VARIANCE = 1.0  # tau^2, shared by the positions of a sample
INDEPENDENT_VARIANCE = 3.0  # sigma^2
CHANNEL_MEANS = np.linspace(-2.0, 2.0, CHANNELS)
EPS = 1e-5


def _population():
    return CHANNEL_MEANS, np.full(CHANNELS, SHARED_VARIANCE + INDEPENDENT_VARIANCE)


def draw_activations(rng: np.random.Generator, repeats: int, batch: int) -> np.ndarray:
    """``repeats`` independent batches ``(repeats, batch, CHANNELS, SIDE, SIDE)`` of the model.

    Raises
    ------
    SmallBatchError
        If ``repeats`` or ``batch`` is not a positive integer.

    Examples
    --------
    >>> draw_activations(np.random.default_rng(0), repeats=2, batch=3).shape
    (2, 3, 8, 4, 4)
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    repeats = _positive_integer(repeats, "repeats")
    batch = _positive_integer(batch, "batch")
    shape = (int(repeats), int(batch), CHANNELS)
    shared = rng.normal(scale=np.sqrt(SHARED_VARIANCE), size=shape)[..., None, None]
    independent = rng.normal(scale=np.sqrt(INDEPENDENT_VARIANCE), size=(*shape, SIDE, SIDE))
    return CHANNEL_MEANS[:, None, None] + shared + independent


def _check_5d(X) -> np.ndarray:
    X = check_real_array(X, "X")
    if X.ndim != 5 or X.shape[2] != CHANNELS or X.size == 0:
        raise ShapeError(
            f"X must have shape (repeats, B, {CHANNELS}, H, W) with no empty axis, got {X.shape}"
        )
    return X


def batch_population_variances(X) -> np.ndarray:
    """Per-channel batch population variance of every repeat, shape ``(repeats, CHANNELS)``.

    Eq. 16.2 over the ``m = B H W`` values of a channel in one batch:
    ``(1/m) sum (x - mean_B)^2``, the variance train-mode batch norm divides by.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(0), repeats=3, batch=2)
    >>> batch_population_variances(X).shape
    (3, 8)
    """
    X = _check_5d(X)
    return _batch_moments(X)[1][:, 0, :, 0, 0]


def expected_batch_variance(batch: int) -> float:
    """Expectation of the batch population variance under the model (exercise 3).

    With ``m = B H W`` values per channel,
    ``E[(1/m) sum (x - mean_B)^2] = tau^2 (1 - 1/B) + sigma^2 (1 - 1/m)``: the batch mean
    absorbs ``1/B`` of the shared offsets' variance and ``1/m`` of the independent part's,
    so the expectation falls short of ``tau^2 + sigma^2`` by the variance of the batch mean,
    :func:`mean_error_theory` squared.

    Raises
    ------
    SmallBatchError
        If ``batch`` is not a positive integer.

    Examples
    --------
    >>> expected_batch_variance(1)     # the shared offset is invisible in one sample
    2.8125
    >>> round(SHARED_VARIANCE + INDEPENDENT_VARIANCE - expected_batch_variance(8), 12)
    0.1484375
    >>> round(mean_error_theory(8) ** 2, 12)
    0.1484375
    """
    if isinstance(batch, bool | np.bool_) or not isinstance(batch, int | np.integer) or batch < 1:
        raise SmallBatchError(f"batch must be a positive integer, got {batch!r}")
    values = batch * SIDE**2
    return SHARED_VARIANCE * (1 - 1 / batch) + INDEPENDENT_VARIANCE * (1 - 1 / values)


def mean_error_theory(batch: int) -> float:
    """RMS error of a batch mean under the model: ``sqrt((tau^2 + sigma^2 / (H W)) / B)``.

    Examples
    --------
    >>> round(mean_error_theory(1), 4)
    1.0897
    """
    _positive_integer(batch, "batch")
    return float(np.sqrt((SHARED_VARIANCE + INDEPENDENT_VARIANCE / SIDE**2) / batch))


def single_sample_gap_theory() -> float:
    """RMS train/eval gap of batch norm at ``B = 1`` under the model: ``sqrt(2 - 2 E[s] / std)``.

    With one sample, train mode gives ``y = (x - m) / s`` (``m``, ``s`` the sample's mean
    and population standard deviation over its ``H W`` positions) and evaluation mode
    ``z = (x - mu) / std`` with ``std = sqrt(tau^2 + sigma^2)``. Over the positions
    ``mean(y^2) = 1``, ``mean(z^2)`` has expectation 1 and ``mean(y z) = s / std``, so the
    expected squared gap is ``2 - 2 E[s] / std``. The shared offset cancels in ``x - m``,
    so ``H W s^2 / sigma^2`` is chi-square with ``H W - 1`` degrees of freedom and
    ``E[s] = sqrt(2 sigma^2 / (H W)) Gamma(H W / 2) / Gamma((H W - 1) / 2)``. Here
    ``std = 2``, so the gap is ``sqrt(2 - E[s])``. ``eps`` is left out: it changes the
    squared gap by about ``eps E[1 / s^2]``, below ``1e-5``. Dividing ``s^2`` by
    ``H W - 1`` instead gives ``sqrt(2 - 1/HW - 2 sqrt(1 - 1/HW) E[s] / std)``, 0.5835.

    Examples
    --------
    >>> round(single_sample_gap_theory(), 4)
    0.5922
    """
    values = SIDE**2
    log_ratio = math.lgamma(values / 2) - math.lgamma((values - 1) / 2)
    expected_std = math.sqrt(2 * INDEPENDENT_VARIANCE / values) * math.exp(log_ratio)
    std = math.sqrt(SHARED_VARIANCE + INDEPENDENT_VARIANCE)
    return math.sqrt(2.0 - 2.0 * expected_std / std)


def _two_offset_expected_std(mean_difference: float) -> float:
    """``E[s]`` for ``2 H W`` values of the model that carry two independent offsets.

    The values are two blocks of ``H W`` positions (two samples of one channel, or two
    channels of one sample) whose means differ by ``mean_difference``. Their population
    variance is ``s^2 = (sigma^2 chi2_{2 H W - 2} + (H W / 2) d^2) / (2 H W)``: the spread
    inside each block, plus the blocks' means ``d`` apart, with
    ``d ~ N(mean_difference, 2 (tau^2 + sigma^2 / (H W)))`` independent of the first part.
    ``E[s]`` by quadrature: Gauss-Hermite over ``d`` (80 nodes), the trapezoid rule over
    the chi-square density (20 001 points on ``[0, 250]``, 200 001 points give the same
    value to 1e-15); both are exact to far below
    ``1e-8``, the precision the claims need being ``1e-4``.
    """
    values = SIDE**2
    dof = 2 * values - 2
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()
    d = mean_difference + np.sqrt(2 * (SHARED_VARIANCE + INDEPENDENT_VARIANCE / values)) * nodes
    chi2 = np.linspace(0.0, 250.0, 20_001)[1:]
    log_density = (
        (dof / 2 - 1) * np.log(chi2) - chi2 / 2 - dof / 2 * math.log(2) - math.lgamma(dof / 2)
    )
    density = np.exp(log_density)
    total = 0.0
    for node, weight in zip(d, weights, strict=True):
        s = np.sqrt((INDEPENDENT_VARIANCE * chi2 + values / 2 * node**2) / (2 * values))
        total += weight * np.trapezoid(density * s, chi2)
    return float(total)


def two_sample_gap_theory() -> float:
    """RMS train/eval gap of batch norm at ``B = 2`` under the model.

    As for :func:`single_sample_gap_theory`, the expected squared gap is
    ``2 - 2 E[s] / std``; a channel of a batch of two holds ``2 H W`` values carrying the
    two samples' offsets, so ``E[s]`` comes from ``_two_offset_expected_std(0)``.

    Examples
    --------
    >>> round(two_sample_gap_theory(), 4)
    0.4204
    """
    std = math.sqrt(SHARED_VARIANCE + INDEPENDENT_VARIANCE)
    return math.sqrt(2.0 - 2.0 * _two_offset_expected_std(0.0) / std)
