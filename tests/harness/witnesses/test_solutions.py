"""Tests of the claim computations of the worked solutions added for chapter 15's exercise 5
and chapter 16's exercises 3, 4 and 5 (trainable_harness.witnesses)."""

import itertools

import numpy as np
import pytest

from trainable_harness import claim_seed
from trainable_harness.normalization import centered_normalize, normalization_jacobian
from trainable_harness.witnesses.chapter15 import (
    rms_ablation_control_witness,
)
from trainable_harness.witnesses.chapter16 import (
    batch_variance_witness,
    branch_scale_witness,
    branch_scaled_post_norm_jacobians,
    folding_audit_witness,
    gains_to_output,
    predicted_log_gain_per_block,
)


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


def test_folding_audit_separates_matched_from_mismatched_folds():
    result = folding_audit_witness(seed=claim_seed("c16-folding-audit"))
    assert result["values_per_channel"] == 8 * 12 * 12
    assert result["matched"]["max_ratio_to_bound"] <= 1.0
    for wrong in ("wrong_eps", "bessel_twice"):
        assert result[wrong]["max_ratio_to_bound"] > 1e6
    assert folding_audit_witness(seed=3) == folding_audit_witness(seed=3)


def test_rms_ablation_control_matches_its_closed_forms():
    result = rms_ablation_control_witness(seed=claim_seed("c15-rms-ablation"))
    assert result["gap"]["shift_0"] < 1e-14
    assert result["closed_form_deviation"] < 1e-14
    eps = 1e-6
    small = np.sqrt(2 * eps) / (np.sqrt(eps) + eps)
    assert abs(result["placement_ratio_small_token"] - small) < 1e-12
    assert abs(result["placement_ratio_unit_token"] - 1 / np.sqrt(1 + eps)) < 1e-14
    # The gap grows with the shift.
    assert result["gap"]["shift_0"] < result["gap"]["shift_0p1"] < result["gap"]["shift_1"]


def test_batch_variance_witness_fields_and_predictions():
    result = batch_variance_witness(seed=claim_seed("c16-batch-variance/0"))
    assert set(result) == {"b1", "b2", "b8"}
    # The derivation's predictions as exact fractions: 3/4, 109/124 and 493/508.
    for name, exact in (("b1", 3 / 4), ("b2", 109 / 124), ("b8", 493 / 508)):
        assert result[name]["bessel_over_total_predicted"] == pytest.approx(exact, rel=1e-14)
        # 1024 samples per size: the measured ratios are within a few percent.
        assert abs(result[name]["mean_over_prediction"] - 1) < 0.03
        assert result[name]["bessel_over_total"] == pytest.approx(exact, rel=0.03)


def test_batch_variance_witness_sees_a_wrong_expectation():
    # The ratio to tau^2 + sigma^2 (no shortfall) would be 3/4 at B = 1, far from 1.
    result = batch_variance_witness(seed=claim_seed("c16-batch-variance/1"))
    assert result["b1"]["bessel_over_total"] < 0.8
