"""Batch normalization with small batches: estimator error, train/eval gap, and three fixes.

Chapter 16, section "Small batches". Activations of one layer are drawn as in section
"How many values a statistic sees": for sample ``b``, channel ``c`` and position ``p``,

    x[b, c, p] = mu_c + a[b, c] + e[b, c, p],   a ~ N(0, tau^2),  e ~ N(0, sigma^2),

so the ``H W`` positions of a sample share the offset ``a`` and the population variance of
a channel is ``tau^2 + sigma^2``. With the population statistics known, the functions below
measure, for a batch of ``B`` samples:

- the error of the per-channel batch mean and standard deviation (train mode);
- the *train/eval gap*: RMS difference between the train-mode output (batch statistics)
  and the evaluation-mode output (population statistics) on the same batch;
- the same gap for batch renormalization (Ioffe 2017), whose train-mode output is
  ``r (x - mean_B) / std_B + d`` with ``r = clip(std_B / std, 1/r_max, r_max)`` and
  ``d = clip((mean_B - mean) / std, -d_max, d_max)``: without clipping it *is* the
  evaluation output, and the gap comes from the clipping alone;
- ghost batches (Hoffer et al. 2017): a batch normalized in independent slices of ``G``;
- synchronized batch norm: per-device moment states merged exactly
  (:func:`trainable_harness.moments.merge_moments`) give the statistics of the whole batch.

- group normalization (Wu and He 2018, ``GROUPS`` groups of consecutive channels): its
  train/eval gap, measured with :func:`trainable_harness.layers.group_norm` on the same
  batch normalized whole and one sample at a time, its dependence on the batch (the same
  samples inside a batch twice as large), and how far its per-sample statistics put its
  output from the output with the population statistics of each group, which does not
  depend on ``B``.

Arithmetic is float64; ``eps`` is added to the variance as in eq. 16.3.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> X = draw_activations(rng, repeats=50, batch=4)
>>> X.shape
(50, 4, 8, 4, 4)
"""

from __future__ import annotations

import numpy as np

from claimbook.calls import cached_with_calls
from trainable_harness.errors import (
    DegenerateNormalizationError,
    ResultOverflowError,
    ShapeError,
    SmallBatchError,
    UnsupportedDtypeError,
    check_finite,
    check_integer,
)
from trainable_harness.layers import group_norm
from trainable_harness.moments import MomentState, merge_moments
from trainable_harness.normalization import validated_eps

__all__ = [
    "BATCH_SIZES",
    "CHANNELS",
    "GROUPS",
    "INDEPENDENT_VARIANCE",
    "SHARED_VARIANCE",
    "SIDE",
    "batch_population_variances",
    "batch_renorm_train",
    "draw_activations",
    "expected_batch_variance",
    "ghost_batch_norm_train",
    "group_norm_batch_gaps",
    "group_norm_train",
    "group_population_eval",
    "mean_error_theory",
    "population_eval",
    "small_batch_sweep",
    "statistic_errors",
    "synchronized_statistics",
    "train_eval_gap",
    "train_mode",
]

_LARGEST = float(np.finfo(np.float64).max)
CHANNELS = 8
SIDE = 4  # H = W
SHARED_VARIANCE = 1.0  # tau^2, shared by the positions of a sample
INDEPENDENT_VARIANCE = 3.0  # sigma^2
CHANNEL_MEANS = np.linspace(-2.0, 2.0, CHANNELS)
EPS = 1e-5
GROUPS = 4  # group norm of the section: 4 groups of 2 consecutive channels


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


def _positive_integer(value, name: str) -> int:
    return check_integer(value, f"{name} (a positive integer)", minimum=1, error=SmallBatchError)


def _batch_moments(X: np.ndarray):
    # Per-channel statistics over (B, H, W) of each repeat: axes 1, 3, 4. Two passes as
    # written, without scaling: statistics that leave float64's range are refused.
    with np.errstate(over="ignore", invalid="ignore"):
        mean = X.mean(axis=(1, 3, 4), keepdims=True)
        centered = X - mean
        variance = np.mean(centered * centered, axis=(1, 3, 4), keepdims=True)
    if not (np.isfinite(mean).all() and np.isfinite(variance).all()):
        raise ResultOverflowError(
            "a batch statistic of X overflows float64 (its values or their squares beyond "
            "about 1e154): the small-batch experiment computes as written; rescale X"
        )
    return mean, variance


def _check_5d(X) -> np.ndarray:
    array = np.asarray(X)
    if array.dtype.kind not in "iuf":
        raise UnsupportedDtypeError(
            f"X has dtype {array.dtype}; real floating or integer values are expected"
        )
    X = array.astype(np.float64, copy=False)
    if X.ndim != 5 or X.shape[2] != CHANNELS or X.size == 0:
        raise ShapeError(
            f"X must have shape (repeats, B, {CHANNELS}, H, W) with no empty axis, got {X.shape}"
        )
    check_finite(X, "X")
    return X


def _finite_output(Y: np.ndarray, eps: float, variance: np.ndarray, what: str) -> np.ndarray:
    """Refuse a normalized output that is not finite: a zero variance at eps = 0, or range."""
    if np.isfinite(Y).all():
        return Y
    if eps == 0.0 and (variance == 0).any():
        raise DegenerateNormalizationError(
            f"{what} with eps = 0: a reduction set of X has variance 0 (constant values, or "
            "squares below float64's range), so x_hat is undefined; pass eps > 0"
        )
    raise ResultOverflowError(f"{what}: an output is beyond float64's range; rescale X")


def _per_channel(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)[None, None, :, None, None]


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


def train_mode(X, eps: float = EPS) -> np.ndarray:
    """Train-mode batch norm (gamma 1, beta 0) of every repeat with its own statistics.

    Equal to :func:`trainable_harness.layers.batch_norm` applied to each ``X[r]``.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(0), repeats=1, batch=4)
    >>> Y = train_mode(X)
    >>> bool(np.allclose(Y.mean(axis=(1, 3, 4)), 0.0, atol=1e-12))
    True
    """
    eps = validated_eps(eps)
    X = _check_5d(X)
    mean, variance = _batch_moments(X)
    with np.errstate(divide="ignore", invalid="ignore"):
        Y = (X - mean) / np.sqrt(variance + eps)
    return _finite_output(Y, eps, variance, "train_mode")


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
    with np.errstate(over="ignore"):
        Y = (X - _per_channel(mean)) / np.sqrt(_per_channel(variance) + eps)
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
    train_output = np.asarray(train_output)
    if train_output.dtype.kind not in "iuf":
        raise UnsupportedDtypeError(
            f"train_output has dtype {train_output.dtype}; real values are expected"
        )
    if train_output.shape != reference.shape:
        raise ShapeError(
            f"train_output has shape {train_output.shape}; it must have X's shape "
            f"{reference.shape}"
        )
    check_finite(train_output, "train_output")
    with np.errstate(over="ignore"):
        gap = float(np.sqrt(np.mean((train_output - reference) ** 2)))
    if not np.isfinite(gap):
        raise ResultOverflowError(
            "train_eval_gap: the squared differences of train_output and the evaluation "
            "output overflow float64; rescale train_output"
        )
    return gap


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
    mean, variance = _batch_moments(X)
    population_mean, population_variance = _population()
    batch_std = np.sqrt(variance + eps)
    population_std = np.sqrt(_per_channel(population_variance) + eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.clip(batch_std / population_std, 1.0 / r_max, r_max)
        d = np.clip((mean - _per_channel(population_mean)) / population_std, -d_max, d_max)
        Y = r * (X - mean) / batch_std + d
    return _finite_output(Y, eps, variance, "batch_renorm_train")


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
    channel (count, mean, m2, computed two-pass in float64); the states are merged with
    :func:`trainable_harness.moments.merge_moments` (what an all-reduce of these three
    numbers per channel implements), and the merged state gives the statistics of the
    concatenated batch.

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
    merged = None
    for device, batch in enumerate(device_batches):
        array = np.asarray(batch)
        if array.dtype.kind not in "iuf":
            raise UnsupportedDtypeError(
                f"device batch {device} has dtype {array.dtype}; real values are expected"
            )
        batch = array.astype(np.float64, copy=False)
        if batch.ndim != 4:
            raise ShapeError(f"each device batch must be (B, C, H, W), got {batch.shape}")
        if batch.size == 0:
            raise ShapeError(
                f"device batch {device} has shape {batch.shape}, with no values; every device "
                "needs at least one sample with at least one position"
            )
        check_finite(batch, f"device batch {device}")
        if merged is not None and batch.shape[1] != len(merged):
            raise ShapeError(
                f"device batch {device} has {batch.shape[1]} channels (shape {batch.shape}) "
                f"but the devices before it have {len(merged)}; every device must hold the "
                "same channels"
            )
        count = batch.shape[0] * batch.shape[2] * batch.shape[3]
        with np.errstate(over="ignore", invalid="ignore"):
            means = batch.mean(axis=(0, 2, 3))
            m2 = ((batch - means[None, :, None, None]) ** 2).sum(axis=(0, 2, 3))
        if not (np.isfinite(means).all() and np.isfinite(m2).all()):
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


def _check_groups(num_groups) -> int:
    if (
        isinstance(num_groups, bool)
        or not isinstance(num_groups, int | np.integer)
        or num_groups < 1
        or CHANNELS % num_groups
    ):
        raise SmallBatchError(
            f"num_groups must be a positive integer dividing {CHANNELS}, got {num_groups!r}"
        )
    return int(num_groups)


def _grouped(X: np.ndarray, num_groups: int) -> np.ndarray:
    # (repeats, B, C, H, W) -> (repeats, B, groups, C / groups, H, W): a view.
    return X.reshape(*X.shape[:2], num_groups, CHANNELS // num_groups, *X.shape[3:])


def group_norm_train(X, num_groups: int = GROUPS, eps: float = EPS) -> np.ndarray:
    """Group norm (gamma 1, beta 0) of every sample of every repeat, vectorized.

    Eqs. 16.1-16.3 over each reduction set of group norm: the ``C / num_groups``
    consecutive channels of one group and their ``H W`` positions, within one sample;
    ``y = (x - mean_g) / sqrt(population_variance_g + eps)``. Nothing is pooled across
    samples, so the batch size never enters. Equal, up to rounding, to
    :func:`trainable_harness.layers.group_norm` applied to each ``X[r]`` (which scales
    before squaring and is slower: this form serves the sweep's 1024 samples per size).

    Raises
    ------
    SmallBatchError
        If ``num_groups`` is not a positive integer dividing ``CHANNELS``.
    ShapeError
        If ``X`` is not ``(repeats, B, CHANNELS, H, W)``.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(0), repeats=2, batch=3)
    >>> Y = group_norm_train(X, num_groups=4)
    >>> bool(np.allclose(Y.reshape(2, 3, 4, -1).mean(axis=-1), 0.0, atol=1e-12))
    True
    """
    num_groups = _check_groups(num_groups)
    eps = validated_eps(eps)
    X = _check_5d(X)
    grouped = _grouped(X, num_groups)
    axes = (3, 4, 5)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        centered = grouped - grouped.mean(axis=axes, keepdims=True)
        variance = np.mean(centered * centered, axis=axes, keepdims=True)
        Y = (centered / np.sqrt(variance + eps)).reshape(X.shape)
    if not np.isfinite(variance).all():
        raise ResultOverflowError(
            "group_norm_train: a group's variance overflows float64 (values beyond about "
            "1e154); rescale X, or use trainable_harness.layers.group_norm, which scales"
        )
    return _finite_output(Y, eps, variance, "group_norm_train")


def group_population_eval(X, num_groups: int = GROUPS, eps: float = EPS) -> np.ndarray:
    """Each group of each sample normalized with the population statistics of the group.

    A value of group ``g`` is ``mu_c + a + e`` with ``c`` one of the group's channels, each
    holding the same number of values, so the group's population mean is the average
    ``m_g`` of its channel means and its population variance is
    ``tau^2 + sigma^2 + (1/|g|) sum_c (mu_c - m_g)^2``; the output is
    ``(x - m_g) / sqrt(variance_g + eps)``. This is what group norm would compute if its
    per-sample statistics were exact.

    Raises
    ------
    SmallBatchError, ShapeError
        As :func:`group_norm_train`.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(0), repeats=400, batch=8)
    >>> round(float(group_population_eval(X).std()), 1)   # unit variance on average
    1.0
    """
    num_groups = _check_groups(num_groups)
    eps = validated_eps(eps)
    X = _check_5d(X)
    channel_means = CHANNEL_MEANS.reshape(num_groups, -1)
    mean = channel_means.mean(axis=1)
    spread = np.mean((channel_means - mean[:, None]) ** 2, axis=1)
    variance = SHARED_VARIANCE + INDEPENDENT_VARIANCE + spread
    shape = (1, 1, num_groups, 1, 1, 1)
    normalized = (_grouped(X, num_groups) - mean.reshape(shape)) / np.sqrt(
        variance.reshape(shape) + eps
    )
    return normalized.reshape(X.shape)


def group_norm_batch_gaps(X, num_groups: int = GROUPS, eps: float = EPS) -> dict:
    """Group norm's train/eval gap and batch dependence, with the harness's own layer.

    With :func:`trainable_harness.layers.group_norm` (gamma 1, beta 0), the first batch
    ``X[0]`` of ``B`` samples is normalized three ways: as one batch (train mode); each
    sample alone, as a batch of one (what evaluation mode computes: group norm keeps no
    running state and uses each sample's own statistics in both modes); and at the front
    of the batch of ``2B`` samples ``X[0]`` followed by ``X[1]``.

    Returns
    -------
    dict
        ``gap``: RMS over the batch's values of (in the batch - alone);
        ``batch_dependence``: RMS of (in the batch of ``B`` - in the batch of ``2B``).
        Both are zero if each sample's output depends on that sample only.

    Raises
    ------
    SmallBatchError
        If ``X`` holds fewer than 2 repeats, or ``num_groups`` is not a positive integer
        dividing ``CHANNELS``.
    ShapeError
        If ``X`` is not ``(repeats, B, CHANNELS, H, W)``.

    Examples
    --------
    >>> X = draw_activations(np.random.default_rng(0), repeats=2, batch=4)
    >>> group_norm_batch_gaps(X)
    {'gap': 0.0, 'batch_dependence': 0.0}
    """
    num_groups = _check_groups(num_groups)
    X = _check_5d(X)
    if X.shape[0] < 2:
        raise SmallBatchError(f"X must hold at least 2 repeats, got {X.shape[0]}")
    gamma, beta = np.ones(CHANNELS), np.zeros(CHANNELS)

    def normalize(batch):
        return group_norm(batch, gamma, beta, num_groups=num_groups, eps=eps)

    batch = X[0]
    in_batch = normalize(batch)
    alone = np.concatenate([normalize(batch[b : b + 1]) for b in range(batch.shape[0])])
    in_larger = normalize(np.concatenate([batch, X[1]]))[: batch.shape[0]]
    return {
        "gap": float(np.sqrt(np.mean((in_batch - alone) ** 2))),
        "batch_dependence": float(np.sqrt(np.mean((in_batch - in_larger) ** 2))),
    }


BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)
SAMPLES_PER_SIZE = 1024  # samples drawn for each batch size: 1024 / B batches (at least 2)
GHOST_SIZE = 8
SYNC_PER_DEVICE = 2  # samples each device holds in the synchronized-statistics check
RENORM_LIMITS = (3.0, 5.0)  # r_max, d_max: the final values of Ioffe (2017), section 4


def mean_error_theory(batch: int) -> float:
    """RMS error of a batch mean under the model: ``sqrt((tau^2 + sigma^2 / (H W)) / B)``.

    Examples
    --------
    >>> round(mean_error_theory(1), 4)
    1.0897
    """
    _positive_integer(batch, "batch")
    return float(np.sqrt((SHARED_VARIANCE + INDEPENDENT_VARIANCE / SIDE**2) / batch))


def small_batch_sweep(seed: int, samples_per_size: int = SAMPLES_PER_SIZE) -> dict:
    """Every measurement of the section for one seed, as arrays over ``BATCH_SIZES``.

    Returns
    -------
    dict
        ``batch_sizes``, ``mean_error``, ``std_error``, ``gap`` (train-mode batch norm),
        ``renorm_gap`` (``RENORM_LIMITS``), ``group_gap`` and ``group_batch_dependence``
        (:func:`group_norm_batch_gaps` on the first batch of each size),
        ``group_distance`` (RMS of :func:`group_norm_train` minus
        :func:`group_population_eval` over every sample of the size), each an array over
        the batch sizes, group norm with ``GROUPS`` groups;
        ``ghost_gap`` (batches of 64 in ghost batches of ``GHOST_SIZE``) and
        ``sync_max_error`` (largest difference between merged per-device statistics of
        32 devices with 2 samples each and the statistics of the 64-sample batch).

    Examples
    --------
    >>> sweep = small_batch_sweep(seed=0, samples_per_size=128)
    >>> sweep["gap"].shape
    (7,)

    The result is a pure function of the arguments and is cached (a fresh dict of
    read-only arrays each call), so a figure and a claim on the same seeds compute once.
    """
    seed = check_integer(seed, "seed", minimum=0, error=SmallBatchError)
    samples_per_size = _positive_integer(samples_per_size, "samples_per_size")
    return dict(_cached_sweep(seed, samples_per_size))


@cached_with_calls(maxsize=256)
def _cached_sweep(seed: int, samples_per_size: int) -> dict:
    rng = np.random.default_rng(seed)
    names = ("mean_error", "std_error", "gap", "renorm_gap")
    names += ("group_gap", "group_batch_dependence", "group_distance")
    out = {name: [] for name in names}
    for batch in BATCH_SIZES:
        X = draw_activations(rng, max(samples_per_size // batch, 2), batch)
        errors = statistic_errors(X)
        out["mean_error"].append(errors["mean"])
        out["std_error"].append(errors["std"])
        out["gap"].append(train_eval_gap(train_mode(X), X))
        out["renorm_gap"].append(train_eval_gap(batch_renorm_train(X, *RENORM_LIMITS), X))
        group = group_norm_batch_gaps(X)
        out["group_gap"].append(group["gap"])
        out["group_batch_dependence"].append(group["batch_dependence"])
        distance = group_norm_train(X) - group_population_eval(X)
        out["group_distance"].append(float(np.sqrt(np.mean(distance**2))))
    largest = X  # the last size, 64
    ghost = train_eval_gap(ghost_batch_norm_train(largest, GHOST_SIZE), largest)
    whole = largest[0]
    mean, variance = synchronized_statistics(np.split(whole, whole.shape[0] // SYNC_PER_DEVICE))
    centered = whole - whole.mean(axis=(0, 2, 3), keepdims=True)
    sync_error = max(
        np.max(np.abs(mean - whole.mean(axis=(0, 2, 3)))),
        np.max(np.abs(variance - np.mean(centered**2, axis=(0, 2, 3)))),
    )
    result = {name: np.array(values) for name, values in out.items()}
    result["batch_sizes"] = np.array(BATCH_SIZES)
    for array in result.values():
        array.setflags(write=False)
    result["ghost_gap"] = ghost
    result["sync_max_error"] = float(sync_error)
    return result
