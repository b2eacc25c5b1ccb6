"""Tests of trainable_harness.witnesses.chapter15.cancellation_matrix."""

from trainable_harness.witnesses.chapter15.cancellation_matrix import cancellation_matrix_witness


def test_cancellation_matrix_witness_repeats_exactly():
    assert cancellation_matrix_witness() == cancellation_matrix_witness()
