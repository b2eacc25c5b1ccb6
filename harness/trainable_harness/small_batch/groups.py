"""Group normalization as the batch-independent alternative (Wu and He 2018).

:func:`group_norm_train` and :func:`group_population_eval` normalize the model"s batches
with ``GROUPS`` groups of consecutive channels; :func:`group_norm_batch_gaps` measures,
with :func:`trainable_harness.layers.group_norm`, that its output does not depend on
the batch.
"""

from __future__ import annotations

import math

import numpy as np

from trainable_harness.errors import SmallBatchError
from trainable_harness.layers import group_norm, standardize, standardize_with
from trainable_harness.normalization import validated_eps
from trainable_harness.small_batch.model import (
    CHANNEL_MEANS,
    CHANNELS,
    EPS,
    INDEPENDENT_VARIANCE,
    SHARED_VARIANCE,
    _check_5d,
    _two_offset_expected_std,
    draw_activations,  # noqa: F401 (the doctests use it)
)

__all__ = [
    "GROUPS",
    "group_distance_theory",
    "group_norm_batch_gaps",
    "group_norm_train",
    "group_population_eval",
]


GROUPS = 4  # group norm of the section: 4 groups of 2 consecutive channels


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
    :func:`trainable_harness.layers.group_norm` applied to each ``X[r]``: both standardize
    with :func:`trainable_harness.layers.standardize`, this one all repeats at once.

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
    return standardize(grouped, (3, 4, 5), eps=eps, what="group_norm_train").reshape(X.shape)


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
    normalized = standardize_with(
        _grouped(X, num_groups),
        mean.reshape(shape),
        variance.reshape(shape),
        eps=eps,
        what="group_population_eval",
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


def group_distance_theory() -> float:
    """RMS distance of group norm's output (2 channels a group) from its population output.

    Per group of one sample, ``y = (x - m_g) / s_g`` and ``z = (x - mu_g) / std_g``, so, as
    for batch norm's gap (:func:`~trainable_harness.small_batch.model.single_sample_gap_theory`),
    the expected squared distance is ``2 - 2 E[s_g] / std_g``. A group of two channels
    holds ``2 H W`` values carrying the two channels' offsets, its channel means
    ``mean_difference`` apart, and ``std_g^2 = tau^2 + sigma^2 + (mean_difference / 2)^2``.
    It does not depend on ``B``.

    Raises
    ------
    SmallBatchError
        If the groups of ``GROUPS`` do not hold two channels each (the derivation is
        written for two).

    Examples
    --------
    >>> round(group_distance_theory(), 4)
    0.4189
    """
    if CHANNELS // GROUPS != 2:
        raise SmallBatchError(
            f"group_distance_theory is derived for groups of 2 channels; GROUPS = {GROUPS} "
            f"gives {CHANNELS // GROUPS}"
        )
    step = float(CHANNEL_MEANS[1] - CHANNEL_MEANS[0])
    std = math.sqrt(SHARED_VARIANCE + INDEPENDENT_VARIANCE + (step / 2) ** 2)
    return math.sqrt(2.0 - 2.0 * _two_offset_expected_std(step) / std)
