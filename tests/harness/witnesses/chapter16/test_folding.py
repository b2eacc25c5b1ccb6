"""Tests of trainable_harness.witnesses.chapter16.folding: folds by hand in numpy, and a
wrong fold that breaks the rounding bound."""

import numpy as np
from witness_checks import (
    check_claim_verifies_or_refutes_its_account,
    check_registered_expectations_cover_exactly_the_witness_fields,
    seed_of,
)

from trainable_harness.witnesses.chapter16.folding import folding_report, folding_witness

CLAIM = "c16-folding-001"


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(CLAIM, folding_witness)


def test_the_claim_verifies(tmp_path):
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)


def test_folding_counts_by_hand():
    work = folding_witness(seed_of(CLAIM))["work"]
    elements = 8 * 8 * 12 * 12  # conv output (B, C_out, H, W) with padding 1
    assert work == {
        "elementwise": 4 * elements,
        "fused_elementwise": 2 * elements,
        "folded_elementwise": 0,
        "removed_by_folding": 4 * elements,
    }


def test_folding_of_a_numpy_reference_stays_within_the_witness_bound():
    """Fold by hand in numpy (state from a hand-written EMA) and compare with the witness."""
    seed = seed_of(CLAIM)
    result = folding_witness(seed)
    rng = np.random.default_rng(seed)
    W, b = rng.normal(0, 0.25, (8, 16)), rng.normal(size=8)
    mean, variance = np.zeros(8), np.ones(8)
    for _ in range(50):
        Y = rng.normal(1, 3, (64, 16)) @ W.T + b
        mean = 0.9 * mean + 0.1 * Y.mean(axis=0)
        variance = 0.9 * variance + 0.1 * Y.var(axis=0, ddof=1)
    gamma, beta = rng.uniform(0.5, 2, 8), rng.normal(size=8)
    X = rng.normal(1, 3, (64, 16))
    scale = gamma / np.sqrt(variance + 1e-5)
    reference = scale * (X @ W.T + b - mean) + beta
    folded = X @ (scale[:, None] * W).T + (scale * (b - mean) + beta)
    assert np.max(np.abs(folded - reference)) <= 1e-13
    assert result["linear"]["max_abs_difference"] <= 1e-13
    assert 0 < result["linear"]["max_ratio_to_bound"] <= 1


def test_folding_bound_catches_a_fold_that_drops_eps():
    rng = np.random.default_rng(3)
    X, W, b = rng.normal(size=(16, 4)), rng.normal(size=(3, 4)), rng.normal(size=3)
    mean, variance = rng.normal(size=3), np.full(3, 1e-3)
    gamma, beta = rng.normal(size=3), rng.normal(size=3)
    scale = gamma / np.sqrt(variance + 1e-5)
    reference = scale * (X @ W.T + b - mean) + beta
    wrong_scale = gamma / np.sqrt(variance)
    wrong = X @ (wrong_scale[:, None] * W).T + wrong_scale * (b - mean) + beta
    magnitude = np.abs(X) @ np.abs(W).T + np.abs(b) + np.abs(mean)
    report = folding_report(wrong, reference, scale, magnitude, beta, n_terms=4)
    assert report["max_ratio_to_bound"] > 1e6
