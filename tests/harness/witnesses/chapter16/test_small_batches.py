"""Tests of trainable_harness.witnesses.chapter16.small_batches."""

from witness_checks import check_returns_finite_floats

from trainable_harness.witnesses.chapter16.small_batches import small_batch_witness


def test_small_batch_witness_returns_per_seed_scalars():
    check_returns_finite_floats(small_batch_witness, seed=2)
