"""Running statistics of batch norm: the batch's statistics and their moving average.

:func:`batch_statistics` gives the per-channel count, mean and population variance of a
batch (the reduction sets of batch norm); :class:`BatchNormState` holds the running mean
and variance, and :func:`update_running_statistics` applies one train-mode step of
eq. 16.5 to it, with the sample or the population variance of the batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np

from trainable_harness.errors import (
    MomentOverflowError,
    MomentumRangeError,
    RunningStateShapeError,
    SingleValuePerChannelError,
    UnknownChoiceError,
    check_real_array,
)
from trainable_harness.layers.inputs import _count
from trainable_harness.layers.reduction_sets import (
    _REDUCTION_AXES,
    _as_batch,
    _channels_of,
    values_per_statistic,
)
from trainable_harness.normalization import scaled_moments

__all__ = [
    "BatchNormState",
    "BatchStatistics",
    "VarianceEstimator",
    "batch_statistics",
    "update_running_statistics",
]

VarianceEstimator = Literal["sample", "population"]


def _check_momentum(momentum: float) -> float:
    if isinstance(momentum, bool | np.bool_) or not isinstance(
        momentum, int | float | np.integer | np.floating
    ):
        raise MomentumRangeError(
            f"momentum must be a real number in [0, 1], got {momentum!r} "
            f"({type(momentum).__name__})"
        )
    try:
        momentum = float(momentum)
    except OverflowError:  # an int beyond float64's range
        momentum = math.inf
    if not 0.0 <= momentum <= 1.0:  # also rejects NaN
        raise MomentumRangeError(
            f"momentum must lie in [0, 1] (the weight of the new batch statistic in "
            f"eq. 16.5), got {momentum}"
        )
    return momentum


def _check_estimator(variance_estimator: str) -> None:
    if variance_estimator not in ("sample", "population"):
        raise UnknownChoiceError(
            f"variance_estimator must be 'sample' or 'population', got {variance_estimator!r}"
        )


class BatchStatistics(NamedTuple):
    """Per-channel statistics of one batch: values per channel, mean, population variance."""

    count: int
    mean: np.ndarray
    population_variance: np.ndarray

    @property
    def sample_variance(self) -> np.ndarray:
        """``m2 / (count - 1)``, Bessel-corrected; needs ``count >= 2``.

        Raises
        ------
        SingleValuePerChannelError
            If ``count < 2``.
        MomentOverflowError
            If a sample variance is beyond the dtype's range (a population variance within
            a factor ``count / (count - 1)`` of the largest float).
        """
        if self.count < 2:
            raise SingleValuePerChannelError(
                f"the sample variance divides by count - 1 and needs count >= 2 values per "
                f"channel; this batch has count = {self.count}"
            )
        with np.errstate(over="ignore"):
            sample = self.population_variance * (self.count / (self.count - 1))
        if not np.isfinite(sample).all():
            channel = int(np.argmax(~np.isfinite(sample)))
            raise MomentOverflowError(
                f"the sample variance of channel {channel}, population variance "
                f"{self.population_variance[channel]:.4g} times {self.count}/"
                f"{self.count - 1}, is beyond the largest {sample.dtype}; rescale X"
            )
        return sample


def batch_statistics(X, *, dtype=np.float64) -> BatchStatistics:
    """Per-channel ``count``, mean (eq. 16.1) and population variance (eq. 16.2) of a batch.

    Reduction sets are those of :func:`batch_norm`.

    The mean is computed after a shift by each channel's first value, the variance with
    the deviations scaled by a power of two before squaring.

    Raises
    ------
    UnsupportedRankError, EmptyInputError, NonFiniteInputError
    MomentOverflowError
        If a variance's exact value exceeds the dtype's range (deviations near ``1e300``
        in float64); the message names the channel.

    Examples
    --------
    >>> stats = batch_statistics(np.array([[1.0, 10.0], [3.0, 30.0]]))
    >>> stats.count, stats.mean, stats.population_variance, stats.sample_variance
    (2, array([ 2., 20.]), array([  1., 100.]), array([  2., 200.]))
    """
    X = _as_batch(X, "batch", dtype)
    axes = _REDUCTION_AXES["batch"][X.ndim]
    parts = scaled_moments(X, axes, centered=True, eps=0.0, with_mean=True)
    mean = parts.mean.reshape(-1)
    try:
        population_variance = parts.variance("X").reshape(-1)
    except MomentOverflowError:
        with np.errstate(over="ignore"):
            beyond = np.ldexp(parts.mean_square, 2 * parts.exponent).reshape(-1)
        channel = int(np.argmax(~np.isfinite(beyond)))
        raise MomentOverflowError(
            f"X has shape {X.shape}: the batch variance of channel {channel} exceeds the "
            f"largest {X.dtype} ({np.finfo(X.dtype).max:.4g}); rescale X"
        ) from None
    return BatchStatistics(values_per_statistic("batch", X.shape), mean, population_variance)


def _readonly_float64_vector(values, name: str) -> np.ndarray:
    array = check_real_array(values, name)
    if array.ndim != 1 or array.size == 0:
        raise RunningStateShapeError(
            f"{name} must be a non-empty 1-D array (one value per channel), got shape "
            f"{array.shape}"
        )
    array = array.copy()
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class BatchNormState:
    """Running statistics of a batch-norm layer, updated in train mode, used in eval mode.

    Eq. 16.5 (PyTorch's convention: ``momentum`` weights the *new* batch; Keras's
    ``momentum`` is ``1 -`` this one)::

        running_mean     <- (1 - momentum) * running_mean     + momentum * batch mean
        running_variance <- (1 - momentum) * running_variance + momentum * batch variance

    ``variance_estimator`` names the batch variance that enters ``running_variance``:
    ``"sample"`` (divide by ``m - 1``; PyTorch) or ``"population"`` (divide by ``m``;
    Keras/TensorFlow). Train-mode *normalization* always uses the population variance.

    The default is ``"sample"``: eval mode wants an estimate of the variance of the
    activation distribution, and the sample variance is its unbiased estimate from one
    batch, so the moving average of unbiased estimates is unbiased too (for stationary
    inputs), while the population variance is low by the factor ``(m - 1)/m`` (0.5 for
    ``m = 2``; negligible for ``m`` in the hundreds). The price is that a train-mode update
    with one value per channel (``m = 1``) is undefined and raises.

    Attributes
    ----------
    running_mean, running_variance : numpy.ndarray, shape ``(C,)``, float64, read-only
    momentum : float in [0, 1]
    variance_estimator : {"sample", "population"}
    num_updates : int
        Number of train-mode updates applied so far.

    Raises
    ------
    RunningStateShapeError, MomentumRangeError, UnknownChoiceError, NonFiniteInputError
        On mismatched or non-1-D vectors, momentum outside [0, 1], an unknown estimator,
        NaN/inf; a negative ``running_variance`` raises :class:`RunningStateShapeError`.

    Examples
    --------
    >>> state = BatchNormState.initial(2, momentum=0.1)
    >>> state.running_mean, state.running_variance, state.num_updates
    (array([0., 0.]), array([1., 1.]), 0)
    """

    running_mean: np.ndarray
    running_variance: np.ndarray
    momentum: float = 0.1
    variance_estimator: VarianceEstimator = "sample"
    num_updates: int = field(default=0)

    def __post_init__(self) -> None:
        mean = _readonly_float64_vector(self.running_mean, "running_mean")
        variance = _readonly_float64_vector(self.running_variance, "running_variance")
        if mean.shape != variance.shape:
            raise RunningStateShapeError(
                f"running_mean has shape {mean.shape} but running_variance has shape "
                f"{variance.shape}; both must be (C,)"
            )
        if (variance < 0).any():
            index = int(np.argmax(variance < 0))
            raise RunningStateShapeError(
                f"running_variance[{index}] = {variance[index]} is negative; a variance "
                "must be >= 0"
            )
        _check_estimator(self.variance_estimator)
        _count(self.num_updates, "num_updates", error=RunningStateShapeError)
        # Frozen dataclass: normalized values are set through object.__setattr__.
        object.__setattr__(self, "running_mean", mean)
        object.__setattr__(self, "running_variance", variance)
        object.__setattr__(self, "momentum", _check_momentum(self.momentum))
        object.__setattr__(self, "num_updates", int(self.num_updates))

    @classmethod
    def initial(
        cls,
        num_channels: int,
        *,
        momentum: float = 0.1,
        variance_estimator: VarianceEstimator = "sample",
    ) -> BatchNormState:
        """Return the usual starting state: running mean 0, running variance 1 per channel.

        Raises
        ------
        CountError
            If ``num_channels`` is not an integer >= 1 (a bool is not a count).
        """
        num_channels = _count(num_channels, "num_channels", minimum=1)
        return cls(np.zeros(num_channels), np.ones(num_channels), momentum, variance_estimator, 0)

    @property
    def num_channels(self) -> int:
        return self.running_mean.size


def _check_state_channels(state: BatchNormState, num_channels: int, context: str) -> None:
    if not isinstance(state, BatchNormState):
        raise TypeError(f"state must be a BatchNormState, got {type(state).__name__}")
    if state.num_channels != num_channels:
        raise RunningStateShapeError(
            f"the running state has {state.num_channels} channels but {context}"
        )


def update_running_statistics(state: BatchNormState, X) -> BatchNormState:
    """Return ``state`` after one train-mode update (eq. 16.5) with the batch ``X``.

    The batch variance used is ``state.variance_estimator``'s; see :class:`BatchNormState`.

    Raises
    ------
    SingleValuePerChannelError
        ``variance_estimator == "sample"`` and the batch has one value per channel: the
        sample variance divides by ``m - 1 = 0``.
    MomentOverflowError
        A channel's batch variance exceeds the largest float64 (no running state holds it).
    RunningStateShapeError
        The state's channel count differs from ``X``'s.
    UnsupportedRankError, EmptyInputError, NonFiniteInputError

    Examples
    --------
    >>> state = BatchNormState.initial(1, momentum=0.5, variance_estimator="population")
    >>> new = update_running_statistics(state, np.array([[1.0], [3.0]]))
    >>> new.running_mean, new.running_variance, new.num_updates
    (array([1.]), array([1.]), 1)
    """
    stats = batch_statistics(X)
    _check_state_channels(state, stats.mean.size, _channels_of(np.shape(X)))
    if state.variance_estimator == "sample":
        if stats.count < 2:
            raise SingleValuePerChannelError(
                f"X has shape {np.shape(X)}, one value per channel, so the sample variance "
                "that variance_estimator='sample' feeds into the running variance is "
                "undefined (it divides by m - 1 = 0). The train-mode output itself would be "
                "beta. Use a batch with >= 2 values per channel, "
                "variance_estimator='population', or eval mode"
            )
        batch_variance = stats.sample_variance
    else:
        batch_variance = stats.population_variance
    keep = 1.0 - state.momentum
    with np.errstate(over="ignore"):  # a convex combination; inf only by rounding at max
        running_mean = keep * state.running_mean + state.momentum * stats.mean
        running_variance = keep * state.running_variance + state.momentum * batch_variance
    for name, values in (("running_mean", running_mean), ("running_variance", running_variance)):
        if not np.isfinite(values).all():
            channel = int(np.argmax(~np.isfinite(values)))
            raise MomentOverflowError(
                f"the updated {name} of channel {channel} rounds beyond the largest float64 "
                "(the state and the batch statistic are both near it); rescale X"
            )
    return BatchNormState(
        running_mean,
        running_variance,
        state.momentum,
        state.variance_estimator,
        state.num_updates + 1,
    )
