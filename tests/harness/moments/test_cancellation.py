"""Tests of trainable_harness.moments.cancellation: the witness of section 15.2."""

import numpy as np

from trainable_harness import (
    raw_and_centered_variance,
)

CANCELLATION_VALUES = np.array([9998, 9999, 10001, 10002])


def test_float32_raw_moments_cancel_to_zero_while_centering_gives_2_5():
    assert raw_and_centered_variance(CANCELLATION_VALUES) == (0.0, 2.5)


def test_float64_raw_moments_survive_the_same_input():
    assert raw_and_centered_variance(CANCELLATION_VALUES, dtype=np.float64) == (2.5, 2.5)


def test_witness_returns_python_floats():
    raw, centered = raw_and_centered_variance(CANCELLATION_VALUES)
    assert type(raw) is float and type(centered) is float
