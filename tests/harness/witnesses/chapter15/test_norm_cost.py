"""Tests of trainable_harness.witnesses.chapter15.norm_cost."""

from witness_checks import check_fields_match_the_registry

from trainable_harness.witnesses.chapter15.norm_cost import norm_cost_witness


def test_fields_match_the_registry():
    check_fields_match_the_registry("c15-norm-cost-001", norm_cost_witness)


def test_the_two_norms_share_the_block_in_proportion_to_their_operations():
    result = norm_cost_witness()
    assert result["ops_ratio"] == result["rms_ops"] / result["ln_ops"] < 1
    # One RMSNorm before each of the block's two sublayers.
    assert result["rms_share_of_block"] == 2 * result["rms_ops"] / result["block_flops"]
