"""The naive reference and shared strategies of the tests of trainable_harness.layers.

The cross-check at the heart of those tests is a second, deliberately naive implementation
(``naive_reduction_sets`` / ``naive_normalize`` / ``naive_running_update``) that builds every
reduction set with explicit nested loops over indices and computes means and variances with
plain Python sums. The harness must agree with it on random shapes and groupings.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

CROSS_CHECK = settings(max_examples=100, deadline=None)
FAST = settings(max_examples=50, deadline=None)
KINDS = ("batch", "layer", "instance", "group")
RANKS = {"batch": (2, 3, 4), "layer": (2, 3, 4), "instance": (4,), "group": (2, 3, 4)}
UNIT_ROUNDOFF = 2.0**-53  # u for float64 round-to-nearest


def naive_channel_axis(ndim):
    return 2 if ndim == 3 else 1


def naive_reduction_sets(kind, shape, num_groups=None):
    """Every reduction set as a list of index tuples, written out loop by loop."""
    sets = []
    if len(shape) == 4:
        B, C, H, W = shape
        size = C // num_groups if kind == "group" else None
        if kind == "batch":
            for c in range(C):
                sets.append([(b, c, h, w) for b in range(B) for h in range(H) for w in range(W)])
        elif kind == "layer":
            for b in range(B):
                sets.append([(b, c, h, w) for c in range(C) for h in range(H) for w in range(W)])
        elif kind == "instance":
            for b in range(B):
                for c in range(C):
                    sets.append([(b, c, h, w) for h in range(H) for w in range(W)])
        elif kind == "group":
            for b in range(B):
                for g in range(num_groups):
                    channels = range(g * size, (g + 1) * size)
                    sets.append(
                        [(b, c, h, w) for c in channels for h in range(H) for w in range(W)]
                    )
    elif len(shape) == 3:
        B, T, D = shape
        if kind == "batch":
            for d in range(D):
                sets.append([(b, t, d) for b in range(B) for t in range(T)])
        elif kind == "layer":
            for b in range(B):
                for t in range(T):
                    sets.append([(b, t, d) for d in range(D)])
        elif kind == "group":
            size = D // num_groups
            for b in range(B):
                for t in range(T):
                    for g in range(num_groups):
                        sets.append([(b, t, d) for d in range(g * size, (g + 1) * size)])
    elif len(shape) == 2:
        B, D = shape
        if kind == "batch":
            for d in range(D):
                sets.append([(b, d) for b in range(B)])
        elif kind == "layer":
            for b in range(B):
                sets.append([(b, d) for d in range(D)])
        elif kind == "group":
            size = D // num_groups
            for b in range(B):
                for g in range(num_groups):
                    sets.append([(b, d) for d in range(g * size, (g + 1) * size)])
    return sets


def naive_mean_and_variance(values, denominator="population"):
    m = len(values)
    mean = sum(values) / m
    squares = sum((v - mean) ** 2 for v in values)
    return mean, squares / (m if denominator == "population" else m - 1)


def naive_normalize(kind, X, gamma, beta, eps, num_groups=None):
    Y = np.full(X.shape, np.nan)
    channel_axis = naive_channel_axis(X.ndim)
    for index_set in naive_reduction_sets(kind, X.shape, num_groups):
        values = [float(X[i]) for i in index_set]
        mean, variance = naive_mean_and_variance(values)
        for i in index_set:
            c = i[channel_axis]
            Y[i] = gamma[c] * (float(X[i]) - mean) / math.sqrt(variance + eps) + beta[c]
    return Y


def naive_running_update(running_mean, running_variance, X, momentum, estimator):
    new_mean, new_variance = [], []
    for c, index_set in enumerate(naive_reduction_sets("batch", X.shape)):
        values = [float(X[i]) for i in index_set]
        mean, variance = naive_mean_and_variance(values, estimator)
        new_mean.append((1 - momentum) * running_mean[c] + momentum * mean)
        new_variance.append((1 - momentum) * running_variance[c] + momentum * variance)
    return np.array(new_mean), np.array(new_variance)


def labels_from_naive_sets(kind, shape, num_groups=None):
    labels = np.full(shape, -1)
    for label, index_set in enumerate(naive_reduction_sets(kind, shape, num_groups)):
        for i in index_set:
            labels[i] = label
    return labels


def divisors(n):
    return [g for g in range(1, n + 1) if n % g == 0]


@st.composite
def layer_cases(draw, kinds=KINDS, max_side=4):
    """A kind, a small shape of a rank it accepts, a grouping, and a data seed."""
    kind = draw(st.sampled_from(kinds))
    ndim = draw(st.sampled_from(RANKS[kind]))
    shape = [draw(st.integers(1, max_side)) for _ in range(ndim)]
    channel_axis = naive_channel_axis(ndim)
    shape[channel_axis] = draw(st.integers(1, 6))
    num_groups = None
    if kind == "group":
        num_groups = draw(st.sampled_from(divisors(shape[channel_axis])))
    seed = draw(st.integers(0, 2**32 - 1))
    return kind, tuple(shape), num_groups, seed


def random_batch(shape, seed, offset_scale=5.0):
    """Standard-normal values, each channel shifted by its own offset (non-centred data)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(shape)
    offsets = rng.uniform(-offset_scale, offset_scale, shape[naive_channel_axis(len(shape))])
    return X + offsets.reshape(
        [-1 if a == naive_channel_axis(len(shape)) else 1 for a in range(len(shape))]
    )


def random_affine(num_channels, seed):
    rng = np.random.default_rng(seed + 1)
    return rng.uniform(0.5, 2.0, num_channels), rng.uniform(-1.0, 1.0, num_channels)


def channels(shape):
    return shape[naive_channel_axis(len(shape))]
