"""Tests of trainable_harness.witnesses.chapter16.identity_recovery, against closed forms."""

import numpy as np
import pytest
from witness_checks import (
    UNIT_ROUNDOFF,
    channel,
    check_claim_verifies_or_refutes_its_account,
    check_registered_expectations_cover_exactly_the_witness_fields,
    seed_of,
)

from trainable_harness.witnesses.chapter16.identity_recovery import identity_recovery_witness

CLAIM = "c16-identity-recovery-001"


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(
        CLAIM, identity_recovery_witness
    )


def test_the_claim_verifies(tmp_path):
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)


def test_identity_recovery_against_closed_forms():
    seed = seed_of(CLAIM)
    result = identity_recovery_witness(seed)
    rng = np.random.default_rng(seed)
    offsets = rng.uniform(-100, 100, 8)
    scales = 10.0 ** rng.uniform(-2, 1, 8)
    X = channel(offsets) + channel(scales) * rng.standard_normal((32, 8, 5, 5))
    assert result["max_abs_input"] == np.abs(X).max()
    assert result["max_abs_error"] <= 32 * UNIT_ROUNDOFF * np.abs(X).max()
    assert result["error_in_rounding_units"] == pytest.approx(
        result["max_abs_error"] / (UNIT_ROUNDOFF * np.abs(X).max()), rel=1e-15
    )
    # With gamma from the sample variance the output is mean + r (x - mean), with
    # r = sqrt((v m/(m-1) + eps) / (v + eps)); its error is max |(r - 1)(x - mean)|.
    m = 32 * 25
    mean, variance = X.mean(axis=(0, 2, 3), keepdims=True), X.var(axis=(0, 2, 3), keepdims=True)
    ratio = np.sqrt((variance * m / (m - 1) + 1e-5) / (variance + 1e-5))
    expected = np.max(np.abs((ratio - 1) * (X - mean)))
    assert result["sample_variance_gamma"]["max_abs_error"] == pytest.approx(expected, rel=1e-9)
