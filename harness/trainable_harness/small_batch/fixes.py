"""Three fixes for small batches: batch renormalization, ghost batches, synchronized statistics.

Batch renormalization (Ioffe 2017) corrects the batch statistics towards the population"s
within clipping limits; ghost batches (Hoffer et al. 2017) normalize slices of a batch
independently; synchronized batch norm merges per-device moment states exactly.
"""

from __future__ import annotations

import math

import numpy as np

from trainable_harness.errors import (
    ResultOverflowError,
    ShapeError,
    SmallBatchError,
    check_real_array,
)
from trainable_harness.layers.standardize import standardize_with
from trainable_harness.moments import MomentState, merge_moments
from trainable_harness.normalization import root_of_sum, scaled_moments, validated_eps
from trainable_harness.small_batch.checks import (
    _batch_standardized,
    _finite_output,
    _per_channel,
    _positive_integer,
)
from trainable_harness.small_batch.model import (
    EPS,
    INDEPENDENT_VARIANCE,
    SHARED_VARIANCE,
    _check_5d,
    _population,
    draw_activations,  # noqa: F401 (the doctests use it)
    mean_error_theory,
)
from trainable_harness.small_batch.train_eval import (
    population_eval,  # noqa: F401 (the doctests use it)
    train_mode,
)

__all__ = [
    "batch_renorm_train",
    "clipped_renorm_gap_theory",
    "ghost_batch_norm_train",
    "synchronized_statistics",
]


_LARGEST = float(np.finfo(np.float64).max)


def batch_renorm_train(X, r_max: float, d_max: float, eps: float = EPS) -> np.ndarray:
    """Batch renormalization's train-mode forward pass, with the population as running state.

    ``y = r (x - mean_B) / sqrt(var_B + eps) + d`` with
    ``r = clip(sqrt(var_B + eps) / sqrt(var + eps), 1/r_max, r_max)`` and
    ``d = clip((mean_B - mean) / sqrt(var + eps), -d_max, d_max)``; ``r`` and ``d`` are
    treated as constants by the backward pass (Ioffe 2017, algorithm 1). With
    ``r_max = d_max = inf`` the output equals :func:`population_eval` up to rounding.

    Raises
    ------
    SmallBatchError
        If ``r_max < 1`` or ``d_max < 0``.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(2), repeats=3, batch=2)
    >>> free = batch_renorm_train(X, r_max=np.inf, d_max=np.inf)
    >>> bool(np.max(np.abs(free - population_eval(X))) < 1e-12)
    True
    """
    for name, value, lowest in (("r_max", r_max, 1), ("d_max", d_max, 0)):
        if (
            isinstance(value, bool | np.bool_)
            or not isinstance(value, int | float | np.integer | np.floating)
            or not value >= lowest  # also NaN
        ):
            raise SmallBatchError(
                f"{name} must be a number >= {lowest} (inf allowed), got {value!r}"
            )
    # A Python int beyond float64 (10**400) is a limit beyond every ratio: inf.
    r_max, d_max = (value if value <= _LARGEST else np.inf for value in (r_max, d_max))
    eps = validated_eps(eps)
    X = _check_5d(X)
    batch = _batch_standardized(X, eps, "batch_renorm_train")
    population_mean, population_variance = _population()
    mean, variance = _per_channel(population_mean), _per_channel(population_variance)
    # d is the batch mean standardized with the population's statistics, r the ratio of the
    # two roots: both from the one standardization (eps inside each root).
    d = standardize_with(batch.mean, mean, variance, eps=eps, what="batch_renorm_train")
    r = np.clip(batch.root() / root_of_sum(variance, eps), 1.0 / r_max, r_max)
    d = np.clip(d, -d_max, d_max)
    Y = r * batch.normalized() + d
    return _finite_output(Y, eps, population_variance, "batch_renorm_train")


def clipped_renorm_gap_theory(batch: int, d_max: float) -> float:
    """RMS train/eval gap of batch renormalization whose ``r`` is not clipped but ``d`` is.

    With ``r = std_B / std`` unclipped, ``r (x - mean_B) / std_B = (x - mean_B) / std``, so
    the train-mode output minus the evaluation output is ``clip(delta) - delta`` with
    ``delta = (mean_B - mu) / std``, the same for every value of a channel in a batch.
    Under the model ``delta ~ N(0, s^2)`` with ``s = mean_error_theory(batch) / std``, and
    for ``c = d_max`` the expected square is
    ``E[(|delta| - c)_+^2] = 2 ((s^2 + c^2) Q(c / s) - c s phi(c / s))`` (``Q`` the normal
    tail, ``phi`` its density). ``eps`` is left out (it moves ``std`` by ``1e-6``). The
    measurement holds only while ``r`` stays inside ``[1 / r_max, r_max]``.

    Raises
    ------
    SmallBatchError
        If ``batch`` is not a positive integer or ``d_max`` is not a finite number ``> 0``.

    Examples
    --------
    >>> round(clipped_renorm_gap_theory(2, 0.5), 4)
    0.106
    """
    batch = _positive_integer(batch, "batch")
    if (
        isinstance(d_max, bool | np.bool_)
        or not isinstance(d_max, int | float | np.integer | np.floating)
        or not 0 < d_max < np.inf
    ):
        raise SmallBatchError(f"d_max must be a finite number > 0, got {d_max!r}")
    s = mean_error_theory(batch) / math.sqrt(SHARED_VARIANCE + INDEPENDENT_VARIANCE)
    c = float(d_max)
    tail = 0.5 * math.erfc(c / s / math.sqrt(2.0))
    density = math.exp(-0.5 * (c / s) ** 2) / math.sqrt(2.0 * math.pi)
    return math.sqrt(2.0 * ((s * s + c * c) * tail - c * s * density))


def ghost_batch_norm_train(X, ghost_size: int, eps: float = EPS) -> np.ndarray:
    """Train-mode batch norm of each batch in independent consecutive slices of ``ghost_size``.

    Raises
    ------
    SmallBatchError
        If ``ghost_size`` does not divide the batch size.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(3), repeats=2, batch=8)
    >>> bool(np.array_equal(ghost_batch_norm_train(X, 8), train_mode(X)))
    True
    """
    X = _check_5d(X)
    repeats, batch = X.shape[:2]
    ghost_size = _positive_integer(ghost_size, "ghost_size")
    if batch % ghost_size:
        raise SmallBatchError(f"ghost_size must divide the batch size {batch}, got {ghost_size}")
    ghosts = X.reshape(repeats * (batch // ghost_size), int(ghost_size), *X.shape[2:])
    return train_mode(ghosts, eps).reshape(X.shape)


def synchronized_statistics(device_batches) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and population variance of several devices' batches, by merging.

    Each device reduces its ``(B_k, C, H, W)`` batch to one centered moment state per
    channel (count, mean, ``m2 = count * population variance``, from
    :func:`~trainable_harness.normalization.scaled_moments`, in float64); the states are
    merged with :func:`trainable_harness.moments.merge_moments` (what an all-reduce of
    these three numbers per channel implements), and the merged state gives the
    statistics of the concatenated batch.

    Returns
    -------
    (mean, population_variance), each of shape ``(C,)``

    Raises
    ------
    ShapeError
        No devices, a batch that is not 4-D or has no values, or devices with different
        channel counts (the message names the device).
    NonFiniteInputError, UnsupportedDtypeError
        NaN/inf or non-real values (the device is named).
    ResultOverflowError, MomentOverflowError
        Statistics beyond float64's range.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(4), repeats=1, batch=8)[0]
    >>> mean, variance = synchronized_statistics(np.split(X, 4))
    >>> bool(np.allclose(variance, X.var(axis=(0, 2, 3)), rtol=1e-14, atol=0))
    True
    """
    if isinstance(device_batches, np.ndarray) and device_batches.ndim == 4:
        raise ShapeError(
            f"device_batches is one array of shape {device_batches.shape}; pass a list of "
            "(B, C, H, W) arrays, one per device (e.g. numpy.split(X, devices))"
        )
    if isinstance(device_batches, str) or not hasattr(device_batches, "__iter__"):
        raise TypeError(
            "device_batches must be a list of (B, C, H, W) arrays, one per device, got "
            f"{type(device_batches).__name__}"
        )
    merged = None
    for device, batch in enumerate(device_batches):
        batch = check_real_array(batch, f"device batch {device}")
        if batch.ndim != 4:
            raise ShapeError(f"each device batch must be (B, C, H, W), got {batch.shape}")
        if batch.size == 0:
            raise ShapeError(
                f"device batch {device} has shape {batch.shape}, with no values; every device "
                "needs at least one sample with at least one position"
            )
        if merged is not None and batch.shape[1] != len(merged):
            raise ShapeError(
                f"device batch {device} has {batch.shape[1]} channels (shape {batch.shape}) "
                f"but the devices before it have {len(merged)}; every device must hold the "
                "same channels"
            )
        count = batch.shape[0] * batch.shape[2] * batch.shape[3]
        # The device's state per channel from the harness's one moment kernel: the mean and
        # the population variance over (B, H, W), m2 = count * variance.
        parts = scaled_moments(batch, (0, 2, 3), centered=True, eps=0.0, with_mean=True)
        with np.errstate(over="ignore"):
            means = parts.mean.reshape(-1)
            m2 = np.ldexp(parts.mean_square, 2 * parts.exponent).reshape(-1) * count
        if not np.isfinite(m2).all():
            raise ResultOverflowError(
                f"device batch {device}: a channel's sum of squared deviations overflows "
                "float64 (values beyond about 1e154); rescale the batches"
            )
        states = [MomentState(count, means[c], m2[c]) for c in range(batch.shape[1])]
        merged = states if merged is None else list(map(merge_moments, merged, states))
    if merged is None:
        raise ShapeError("device_batches is empty")
    mean = np.array([float(s.mean) for s in merged])
    variance = np.array([float(s.population_variance) for s in merged])
    return mean, variance
