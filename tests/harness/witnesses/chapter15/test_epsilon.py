"""Tests of trainable_harness.witnesses.chapter15.epsilon, against closed forms."""

import numpy as np
import pytest

from trainable_harness.errors import ShapeError
from trainable_harness.witnesses.chapter15.epsilon import epsilon_sweep, epsilon_witness


def test_epsilon_witness_closed_forms():
    result = epsilon_witness()
    eps = 1e-5
    largest = 2.0 / np.sqrt(2.5)  # the largest coordinate of (-2, -1, 1, 2) / rms
    # mu2 = eps: N_eps(x) = x / sqrt(2 eps) and N_eps(2x) = 2x / sqrt(5 eps), with
    # x = direction * sqrt(eps / 2.5); worked by hand.
    assert result["scale_break_at_1"] == pytest.approx(
        largest * (2 / np.sqrt(5) - 1 / np.sqrt(2)), rel=1e-12
    )
    # mu2 = 1e4 eps: doubling moves x / sqrt(1.0001e4 eps) to 2x / sqrt(4.0001e4 eps).
    assert result["scale_break_at_1e4"] == pytest.approx(
        largest * 100 * (2 / np.sqrt(40001) - 1 / np.sqrt(10001)), rel=1e-9
    )
    # mu2 = 1e-2 eps: N_eps(x) = x / sqrt(1.01 eps) against the exact direction / rms.
    assert result["gap_at_small"] == pytest.approx(largest * (1 - np.sqrt(0.01 / 1.01)))
    assert result["gain_ratio_at_1"] == pytest.approx(0.5, abs=1e-12)
    assert result["gain_cap"] == 1 / np.sqrt(eps)
    # The tangential gain 1 / sqrt(mu2 + eps) is the Jacobian's largest singular value.
    assert result["gain_at_small_over_cap"] == pytest.approx(1 / np.sqrt(1.01), rel=1e-12)
    assert 0 <= result["gain_ratio_formula_error"] < 1e-8


def test_epsilon_sweep_refuses_a_direction_with_a_mean():
    with pytest.raises(ShapeError, match="zero mean"):
        epsilon_sweep(np.array([1.0, 2.0, 3.0]))
