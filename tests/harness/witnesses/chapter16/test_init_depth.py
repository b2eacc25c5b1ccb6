"""Tests of trainable_harness.witnesses.chapter16.init_depth."""

import numpy as np
import pytest

from trainable_harness import depth
from trainable_harness.witnesses.chapter16.init_depth import SMALL_BATCH, init_depth_witness


# A whole witness for one seed: seconds, so the claims tier's, not the unit tier's.
@pytest.mark.claims
def test_witness_fields_agree_with_the_gain_profiles():
    result = init_depth_witness(7)
    assert sorted(result) == ["plain", "plain_small_batch", "residual", "scaled"]
    for variant in depth.VARIANTS:
        gains = depth.gain_profile(7, variant)
        logs = [result[variant]["log10_gain"][f"depth_{L}"] for L in depth.DEPTHS]
        np.testing.assert_allclose(logs, np.log10(gains), rtol=1e-15)
        assert result[variant]["rate"] == depth.per_layer_rate(depth.DEPTHS, gains)
    np.testing.assert_allclose(
        result["plain"]["rate_over_limit"] * depth.RELU_BN_SQUARED_RATE,
        result["plain"]["rate"],
        rtol=1e-15,
    )
    small = depth.gain_profile(7, "plain", batch=SMALL_BATCH)
    assert result["plain_small_batch"]["rate"] == depth.per_layer_rate(depth.DEPTHS, small)
