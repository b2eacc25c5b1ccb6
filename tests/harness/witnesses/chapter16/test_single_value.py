"""Tests of trainable_harness.witnesses.chapter16.single_value: one value per channel, in
two orders of operations."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from witness_checks import (
    UNIT_ROUNDOFF,
    check_claim_verifies_or_refutes_its_account,
    check_registered_expectations_cover_exactly_the_witness_fields,
    failing_fields,
    registry,
    seed_of,
)

from checks.mutate import load_mistakes
from trainable_harness.witnesses.chapter16 import single_value
from trainable_harness.witnesses.chapter16.single_value import (
    fused_kernel_batch_norm,
    single_value_witness,
)

CLAIM = "c16-train-mode-output-001"
chapter16 = load_mistakes("chapter16")  # claims/mistakes/chapter16.py


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(CLAIM, single_value_witness)


def test_the_claim_verifies(tmp_path):
    """The account is right in its own case (a fresh layer) and the claim says so: it
    verifies, it refutes nothing."""
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)
    assert "refutes" not in registry(CLAIM)


def test_the_measured_case_of_the_account_is_the_cited_one():
    """A fresh layer (gamma 1, beta 0) gives the account's zeros; a trained beta does not."""
    assert registry(CLAIM)["expect"]["fresh_layer.max_abs_output"]["equals"] == 0.0
    assert registry(CLAIM)["expect"]["harness.min_abs_output"]["equals"] > 0.0


def test_the_claim_turns_red_when_the_mean_is_not_subtracted_first(monkeypatch):
    """The mistake the claim exists to catch: an order of operations that does not form
    x - mean first (a fused kernel's) gives neither exact zeros nor exact beta (the same
    perturbation `python -m checks mutate` runs on the whole claim)."""
    assert failing_fields(CLAIM, single_value_witness(seed_of(CLAIM))) == []
    chapter16.mean_not_subtracted_first(monkeypatch.setattr)
    assert single_value.batch_norm is fused_kernel_batch_norm
    assert {"fresh_layer.max_abs_output", "harness.max_abs_output_minus_beta"} <= set(
        failing_fields(CLAIM, single_value_witness(seed_of(CLAIM)))
    )


def test_the_claim_turns_red_with_the_sample_variance(monkeypatch):
    """Dividing one value's squared deviation by m - 1 = 0 gives no output at all."""
    chapter16.sample_variance_batch_norm(monkeypatch.setattr)
    assert "fresh_layer.max_abs_output" in failing_fields(
        CLAIM, single_value_witness(seed_of(CLAIM))
    )


def test_single_value_outputs_beta_in_the_harness_order_and_zero_for_a_fresh_layer():
    result = single_value_witness(seed_of(CLAIM))
    assert result["harness"] == {"max_abs_output_minus_beta": 0.0, "min_abs_output": 0.5}
    assert result["fresh_layer"]["max_abs_output"] == 0.0
    # Two values per channel: outputs beta +- gamma sqrt(v / (v + eps)), v of order 1e6.
    assert result["two_values"]["min_abs_output_minus_beta"] == pytest.approx(2.0, rel=1e-9)
    assert 0.0 < result["fused_kernel"]["max_abs_output_minus_beta"] < 1e-9


def fma_reference(x, s, t):
    """x s + t rounded once, by exact rational arithmetic written out here."""
    return float(Fraction(x) * Fraction(s) + Fraction(t))


def test_fused_kernel_matches_a_hand_written_fma_order():
    X = np.array([[1.5, -2.0], [3.25, 7.0], [-0.5, 1.0]])
    gamma, beta = np.array([2.0, 0.5]), np.array([0.25, -1.0])
    mean, variance = X.mean(axis=0), X.var(axis=0)
    s = gamma / np.sqrt(variance + 1e-5)
    t = beta - mean * s
    expected = np.array([[fma_reference(x, s[c], t[c]) for c, x in enumerate(row)] for row in X])
    assert np.array_equal(fused_kernel_batch_norm(X, gamma, beta, eps=1e-5), expected)
    # And, to rounding, it is batch norm.
    standardized = (X - mean) / np.sqrt(variance + 1e-5)
    np.testing.assert_allclose(expected, gamma * standardized + beta, rtol=0, atol=1e-14)


@settings(max_examples=100, deadline=None)
@given(
    st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False),
    st.floats(0.1, 10.0),
    st.floats(-10.0, 10.0),
)
def test_fused_kernel_recovers_beta_within_the_rounding_bound(x, gamma, beta):
    """One value per channel: |y - beta| <= 2 u (|x s| + |beta|) with s = gamma / sqrt(eps),
    to first order in u (the factor 1 + 4u covers the second-order terms)."""
    y = fused_kernel_batch_norm(np.array([[x]]), [gamma], [beta], eps=1e-5)[0, 0]
    s = gamma / np.sqrt(1e-5)
    bound = 2 * UNIT_ROUNDOFF * (abs(x * s) + abs(beta)) * (1 + 4 * UNIT_ROUNDOFF)
    assert abs(y - beta) <= bound
