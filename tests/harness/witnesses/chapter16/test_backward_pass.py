"""Tests of trainable_harness.witnesses.chapter16.backward_pass."""

from claimbook.chapter import claim_seed
from trainable_harness.witnesses.chapter16.backward_pass import bn_backward_witness


def test_bn_backward_witness_repeats_exactly():
    seed = claim_seed("c16-bn-backward")
    assert bn_backward_witness(seed=seed) == bn_backward_witness(seed=seed)
