"""Tests of trainable_harness.witnesses.chapter16.folding_audit."""

from claimbook.chapter import claim_seed
from trainable_harness.witnesses.chapter16.folding_audit import folding_audit_witness


def test_folding_audit_separates_matched_from_mismatched_folds():
    result = folding_audit_witness(seed=claim_seed("c16-folding-audit"))
    assert result["values_per_channel"] == 8 * 12 * 12
    assert result["matched"]["max_ratio_to_bound"] <= 1.0
    for wrong in ("wrong_eps", "bessel_twice"):
        assert result[wrong]["max_ratio_to_bound"] > 1e6
