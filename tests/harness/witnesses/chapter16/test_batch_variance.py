"""Tests of trainable_harness.witnesses.chapter16.batch_variance, against the exact
fractions of the derivation."""

import pytest

from claimbook.chapter import claim_seed
from trainable_harness.witnesses.chapter16.batch_variance import batch_variance_witness


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
