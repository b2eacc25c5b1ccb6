"""Tests of trainable_harness.witnesses.chapter15.invariance, against closed forms."""

import numpy as np
import pytest

from claimbook.claims import flatten, load_claim
from trainable_harness.witnesses.chapter15.invariance import invariance_witness


def test_invariance_witness_closed_forms():
    result = invariance_witness()
    x = np.array([-2.0, -1.0, 1.0, 2.0])
    # RMS(x) = sqrt(2.5) and RMS(x + 10) = sqrt(102.5), worked by hand.
    rms_change = np.max(np.abs((x + 10) / np.sqrt(102.5) - x / np.sqrt(2.5)))
    # Two differently rounded formulas for the same number: allow a few ulps.
    assert result["rms_shift_deviation"] == pytest.approx(rms_change, abs=4e-16)
    assert round(result["rms_shift_deviation"], 3) == 2.055
    # x + 10 = (8, 9, 11, 12) has mean 10 exactly, so centering reproduces x bit for bit.
    assert result["centered_shift_deviation"] == 0.0
    assert (result["centered_jacobian_rank"], result["rms_jacobian_rank"]) == (2, 3)
    assert (result["fp32_raw_moment_variance"], result["fp32_centered_variance"]) == (0.0, 2.5)


def test_invariance_witness_returns_plain_python_types():
    for field, value in invariance_witness().items():
        assert type(value) in (int, float), field


def test_registered_expectations_cover_exactly_the_witness_fields():
    claim = load_claim("c15-invariance-001")
    assert claim.compute == (
        f"trainable_harness.witnesses.chapter15.invariance.{invariance_witness.__name__}"
    )
    assert set(flatten(invariance_witness())) == set(claim.expect)


def test_invariance_witness_fp64_shortcut_is_exact():
    # Squares of 9998..10002 and their sum are integers below 2**53; the mean of squares
    # 100000002.5 needs one binary digit after the point, so FP64 gives exactly 2.5.
    assert invariance_witness()["fp64_raw_moment_variance"] == 2.5
