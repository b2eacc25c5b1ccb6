"""Section 16.1: which values share a statistic, and whose statistics a sample's output uses.

One sample normalized alone, inside a batch, and inside a batch of other companions, by
batch, layer, instance and group normalization.
"""

from __future__ import annotations

import numpy as np

from trainable_harness.claimable import claim_computation
from trainable_harness.layers import apply_normalization

__all__ = [
    "DEPENDENCE_EPS",
    "DEPENDENCE_GROUPS",
    "DEPENDENCE_SHAPE",
    "NORMALIZATION_KINDS",
    "batch_dependence_witness",
    "channel_offset_batch",
    "channel_shaped",
]

NORMALIZATION_KINDS = ("batch", "layer", "instance", "group")
DEPENDENCE_SHAPE = (64, 4, 3, 3)  # (B, C, H, W)
DEPENDENCE_GROUPS = 2  # groups of group norm
DEPENDENCE_EPS = 1e-5


def channel_shaped(values, ndim: int = 4) -> np.ndarray:
    """Line a ``(C,)`` vector up with axis 1 of a rank-``ndim`` batch.

    Examples
    --------
    >>> channel_shaped([1.0, 2.0]).shape
    (1, 2, 1, 1)
    """
    return np.asarray(values).reshape((1, -1) + (1,) * (ndim - 2))


def channel_offset_batch(
    rng: np.random.Generator, offsets: np.ndarray, scales: np.ndarray, shape: tuple[int, ...]
) -> np.ndarray:
    """A ``(B, C, H, W)`` batch whose channel ``c`` holds ``offsets[c] + scales[c] z``.

    ``z`` are independent standard normals drawn from ``rng`` (one call, of ``shape``).

    Examples
    --------
    >>> X = channel_offset_batch(np.random.default_rng(0), [0.0, 10.0], [1.0, 0.0], (4, 2, 1, 1))
    >>> X[:, 1].ravel().tolist()
    [10.0, 10.0, 10.0, 10.0]
    """
    return channel_shaped(offsets) + channel_shaped(scales) * rng.standard_normal(shape)


@claim_computation
def batch_dependence_witness(
    seed: int,
    *,
    shape: tuple[int, int, int, int] = DEPENDENCE_SHAPE,
    num_groups: int = DEPENDENCE_GROUPS,
) -> dict:
    """Claim ``c16-batch-dependence-001``: whose statistics does a sample's output depend on?

    Section 16.1: with ``rng = numpy.random.default_rng(seed)`` draw a batch of ``shape``
    ``(B, C, H, W)`` whose channel ``c`` holds ``offset_c + scale_c * N(0, 1)`` values
    (offsets in [-2, 2], scales in [0.5, 2]; :func:`channel_offset_batch`), then
    per-channel ``gamma`` in [0.5, 2] and ``beta`` in [-1, 1], then a second set of
    ``B - 1`` companions from the same distribution. Normalize sample 0 three ways, with
    each of the four layers (eps 1e-5, float64; group norm with ``num_groups`` groups):
    alone (a batch of one), in the batch, and with the other companions.

    Returns
    -------
    dict
        ``alone_vs_batch`` with one field per kind (``batch``, ``layer``, ``instance``,
        ``group``): the largest absolute change of sample 0's output between the batch of
        one and the batch of ``B``; ``other_companions`` with the same four fields, the
        same change between the two batches of ``B`` that share only sample 0; and
        ``batch_of_one.batch_vs_instance``, the largest difference between batch norm and
        instance norm of sample 0 alone (a batch of one).

    Examples
    --------
    >>> result = batch_dependence_witness(1822889834)
    >>> [result["alone_vs_batch"][kind] for kind in ("layer", "instance", "group")]
    [0.0, 0.0, 0.0]
    >>> result["alone_vs_batch"]["batch"] > 0.1
    True
    """
    rng = np.random.default_rng(seed)
    num_channels = shape[1]
    offsets = rng.uniform(-2.0, 2.0, num_channels)
    scales = rng.uniform(0.5, 2.0, num_channels)
    X = channel_offset_batch(rng, offsets, scales, shape)
    gamma = rng.uniform(0.5, 2.0, num_channels)
    beta = rng.uniform(-1.0, 1.0, num_channels)
    companions = channel_offset_batch(rng, offsets, scales, (shape[0] - 1, *shape[1:]))
    other_batch = np.concatenate([X[:1], companions])

    def sample_zero(kind: str, batch: np.ndarray) -> np.ndarray:
        groups = num_groups if kind == "group" else None
        return apply_normalization(
            kind, batch, gamma, beta, eps=DEPENDENCE_EPS, num_groups=groups
        )[0]

    alone_vs_batch = {
        kind: float(np.max(np.abs(sample_zero(kind, X[:1]) - sample_zero(kind, X))))
        for kind in NORMALIZATION_KINDS
    }
    other = {
        kind: float(np.max(np.abs(sample_zero(kind, other_batch) - sample_zero(kind, X))))
        for kind in NORMALIZATION_KINDS
    }
    # A batch of one image: batch norm's sets are then instance norm's (one sample, one
    # channel, all positions), so the two layers compute the same thing.
    one_image = float(np.max(np.abs(sample_zero("batch", X[:1]) - sample_zero("instance", X[:1]))))
    return {
        "alone_vs_batch": alone_vs_batch,
        "other_companions": other,
        "batch_of_one": {"batch_vs_instance": one_image},
    }
