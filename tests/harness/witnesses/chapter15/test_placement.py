"""Tests of trainable_harness.witnesses.chapter15.placement, against independent numpy."""

import numpy as np
import pytest

from claimbook.claims import claim_seed
from trainable_harness.errors import WeightShapeError
from trainable_harness.witnesses.chapter15.placement import placement_witness, residual_placement


def test_placement_witness_matches_an_independent_numpy_check():
    seed = claim_seed("c15-placement")
    result = placement_witness(seed)
    rng = np.random.default_rng(seed)
    weight = rng.normal(size=(4, 4)) / 2.0
    x = rng.normal(size=4)

    def centered(z):  # eq. (15.1) written out, not the harness's
        deviation = z - z.mean()
        return 2.0 * deviation / np.sqrt(np.sum(deviation**2))

    def post(z):
        return centered(z + np.tanh(weight @ z))

    # One-sided differences with a larger step: a cruder, independent estimate of J_post.
    step = 1e-7
    jacobian = np.stack([(post(x + step * e) - post(x)) / step for e in np.eye(4)], axis=1)
    singular = np.linalg.svd(jacobian, compute_uv=False)
    assert (singular > 1e-4).sum() == result["rank_post"] == 2
    assert np.max(np.abs(np.ones(4) @ jacobian)) < 1e-6
    assert result["rank_pre"] == 4
    assert result["fd_error_max"] < 1e-8
    assert result["pre_ones_error"] < 1e-12 and result["post_ones_error"] < 1e-12


def test_residual_placement_refuses_mismatched_shapes():
    with pytest.raises(WeightShapeError, match="weight must have shape"):
        residual_placement(np.eye(3), np.zeros(4))
