"""Tests of trainable_harness.witnesses.chapter15.rms_ablation, against closed forms."""

import numpy as np

from claimbook.chapter import claim_seed
from trainable_harness.witnesses.chapter15.rms_ablation import rms_ablation_control_witness


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
