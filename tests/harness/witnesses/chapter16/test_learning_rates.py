"""Tests of trainable_harness.witnesses.chapter16.learning_rates."""

from witness_checks import check_returns_finite_floats

from trainable_harness.witnesses.chapter16.learning_rates import larger_learning_rates_witness


def test_larger_learning_rates_witness_returns_per_seed_scalars():
    check_returns_finite_floats(larger_learning_rates_witness, seed=2)
