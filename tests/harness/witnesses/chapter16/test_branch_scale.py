"""Tests of trainable_harness.witnesses.chapter16.branch_scale, against central
differences of the stack written out again."""

import itertools

import numpy as np
import pytest

from claimbook.chapter import claim_seed
from trainable_harness.normalization import centered_normalize, normalization_jacobian
from trainable_harness.witnesses.chapter16.branch_scale import (
    branch_scale_witness,
    branch_scaled_post_norm_jacobians,
    predicted_log_gain_per_block,
)
from trainable_harness.witnesses.chapter16.residual_depth import gains_to_output


def _post_norm_stack_output(x0, weights, branch_scale, eps=1e-5):
    """Forward map of the toy stack, written out again as the reference."""
    x = centered_normalize(x0, eps=eps)
    for W in weights:
        x = centered_normalize(x + branch_scale * np.tanh(W @ x), eps=eps)
    return x


@pytest.mark.parametrize("branch_scale", [0.1, 1.0, 3.0])
def test_branch_scaled_jacobians_match_central_differences(branch_scale):
    depth, width = 3, 16
    jacobians = branch_scaled_post_norm_jacobians(
        np.random.default_rng(5), depth, branch_scale, width=width
    )
    # Replay the same draws to rebuild the stack and differentiate it numerically.
    rng = np.random.default_rng(5)
    weights = [rng.normal(0.0, 1.0 / np.sqrt(width), (width, width)) for _ in range(depth)]
    x0 = rng.normal(size=width)
    # The stack normalizes its input first: chain that map's Jacobian in.
    product = normalization_jacobian(x0, centered=True, eps=1e-5)
    for jacobian in jacobians:
        product = jacobian @ product
    step = 1e-6
    numeric = np.empty((width, width))
    for j in range(width):
        e = np.zeros(width)
        e[j] = step
        plus = _post_norm_stack_output(x0 + e, weights, branch_scale)
        minus = _post_norm_stack_output(x0 - e, weights, branch_scale)
        numeric[:, j] = (plus - minus) / (2 * step)
    # Truncation ~ step^2 and rounding ~ 1e-16 / step: 1e-8 separates a wrong term,
    # which would be of order one.
    assert np.max(np.abs(product - numeric)) < 1e-8


def test_predicted_log_gain_is_zero_without_a_branch_and_increasing():
    assert predicted_log_gain_per_block(0.0) == 0.0
    values = [predicted_log_gain_per_block(s) for s in (0.1, 1.0, 3.0, 30.0)]
    assert all(a < b for a, b in itertools.pairwise(values))
    # As lambda grows the ratio tends to E[tanh'^2] / E[tanh^2], about 1.178.
    assert 0.5 * np.log(1.17) < values[-1] < 0.5 * np.log(1.18)


def test_branch_scale_witness_fields_and_gain_convention():
    result = branch_scale_witness(seed=claim_seed("c16-branch-scale/0"))
    assert set(result) == {"scale_0p1", "scale_1", "scale_3"}
    for fields in result.values():
        assert set(fields) == {
            "log_gain_per_block",
            "log_input_gain_depth_64",
            "predicted_log_gain_per_block",
        }
        assert all(np.isfinite(v) for v in fields.values())
    # gains_to_output with an identity final map: one block at lambda = 0 is a projection
    # whose RMS gain is sqrt((d - 2) / d) (it removes the constant and radial directions).
    (jacobian,) = branch_scaled_post_norm_jacobians(np.random.default_rng(0), 1, 0.0)
    (gain,) = gains_to_output([jacobian, np.eye(16)])
    assert abs(gain - np.sqrt(14 / 16)) < 1e-4  # eps 1e-5 leaves the radial gain ~1e-5


def test_jacobians_equal_the_separate_maps_to_the_last_bit():
    # The blocks take N(y) and J_N(y) from one pass over the moments; the first version
    # called centered_normalize and normalization_jacobian separately.
    from trainable_harness.normalization import centered_normalize, normalization_jacobian
    from trainable_harness.witnesses.chapter16.branch_scale import (
        branch_scaled_post_norm_jacobians,
    )

    def separate(rng, depth, branch_scale, width=16, eps=1e-5):
        weights = [rng.normal(0.0, 1.0 / np.sqrt(width), (width, width)) for _ in range(depth)]
        x = centered_normalize(rng.normal(size=width), eps=eps)
        jacobians = []
        for W in weights:
            branch = np.tanh(W @ x)
            branch_jacobian = (1.0 - branch**2)[:, None] * W
            y = x + branch_scale * branch
            jacobians.append(
                normalization_jacobian(y, centered=True, eps=eps)
                @ (np.eye(width) + branch_scale * branch_jacobian)
            )
            x = centered_normalize(y, eps=eps)
        return jacobians

    for seed, scale in ((0, 0.1), (1, 1.0), (2, 3.0)):
        fast = branch_scaled_post_norm_jacobians(np.random.default_rng(seed), 12, scale)
        slow = separate(np.random.default_rng(seed), 12, scale)
        for a, b in zip(fast, slow, strict=True):
            np.testing.assert_array_equal(a, b)
