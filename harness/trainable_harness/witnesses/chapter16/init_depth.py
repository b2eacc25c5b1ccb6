"""Section 16.6, "Depth at initialization": gradient gains of deep batch-normalized stacks.

The gains of :func:`trainable_harness.depth.gain_profile` for a plain chain, a residual
stack and a residual stack with its branches scaled by ``1/sqrt(L)``, and the growth per
block fitted to them.
"""

from __future__ import annotations

import numpy as np

from trainable_harness import depth
from trainable_harness.claimable import claim_computation

__all__ = ["SMALL_BATCH", "init_depth_witness"]

SMALL_BATCH = 16  # the plain chain once more, with this batch size


@claim_computation
def init_depth_witness(seed: int) -> dict:
    """Claim ``c16-init-depth-001`` (one seed of a set): gain against depth, three variants.

    For each variant of :data:`trainable_harness.depth.VARIANTS`, one random network per
    depth of ``depth.DEPTHS`` (width ``depth.WIDTH``, batch ``depth.BATCH``), drawn from
    ``default_rng(seed)`` (:func:`~trainable_harness.depth.gain_profile`); then the plain
    chain again with a batch of :data:`SMALL_BATCH`.

    Returns
    -------
    dict
        For ``plain``, ``residual`` and ``scaled``: ``rate`` (the squared gain's growth per
        block, :func:`~trainable_harness.depth.per_layer_rate`) and
        ``log10_gain.depth_<L>``; ``plain.rate_over_limit``, the plain rate over
        ``pi/(pi - 1)``; ``plain_small_batch.rate``.
    """
    result = {}
    for variant in depth.VARIANTS:
        gains = depth.gain_profile(seed, variant)
        result[variant] = {
            "rate": depth.per_layer_rate(depth.DEPTHS, gains),
            "log10_gain": {
                f"depth_{L}": float(np.log10(g)) for L, g in zip(depth.DEPTHS, gains, strict=True)
            },
        }
    result["plain"]["rate_over_limit"] = result["plain"]["rate"] / depth.RELU_BN_SQUARED_RATE
    small = depth.gain_profile(seed, "plain", batch=SMALL_BATCH)
    result["plain_small_batch"] = {"rate": depth.per_layer_rate(depth.DEPTHS, small)}
    return result
