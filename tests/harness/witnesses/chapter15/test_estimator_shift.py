"""Tests of trainable_harness.witnesses.chapter15.estimator_shift."""

from witness_checks import check_fields_match_the_registry

from claimbook.chapter import claim_seed
from trainable_harness.witnesses.chapter15.estimator_shift import estimator_shift_witness


def test_fields_match_the_registry():
    seed = claim_seed("c15-estimator-shift/0")
    check_fields_match_the_registry("c15-estimator-shift-001", estimator_shift_witness, seed=seed)
