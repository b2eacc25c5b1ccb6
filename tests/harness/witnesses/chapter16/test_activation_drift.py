"""Tests of trainable_harness.witnesses.chapter16.activation_drift, against plain numpy and
an affine invariance."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from witness_checks import (
    check_claim_verifies_or_refutes_its_account,
    check_registered_expectations_cover_exactly_the_witness_fields,
    check_statistical_bounds_quote_other_seed_sets,
    registry,
    seed_of,
    standardize,
)

from trainable_harness.witnesses.chapter16.activation_drift import (
    activation_drift_profiles,
    activation_drift_witness,
    per_feature_moment_shift,
    per_feature_moment_shifts,
    random_relu_network_activations,
)

CLAIM = "c16-activation-drift-001"


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(CLAIM, activation_drift_witness)


def test_the_claim_refutes_its_account(tmp_path):
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)


def test_statistical_bounds_quote_other_seed_sets_not_the_registered_one():
    check_statistical_bounds_quote_other_seed_sets(CLAIM)


def test_the_refuted_account_lies_outside_the_registered_expectations():
    """The refutation can fail: "the next layer's inputs stay put" would give a ratio <= 1."""
    ratio = registry(CLAIM)["expect"]["value_change_ratio"]["ci_within"]
    assert ratio[0] >= 1.0


def test_relu_network_activations_match_numpy():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((32, 8))
    weights = [rng.normal(0, 0.5, (8, 8)) for _ in range(3)]
    for normalize in (False, True):
        h, expected = X, []
        for W in weights:
            z = h @ W.T
            if normalize:
                z = standardize(z, (0,), 1e-5)
            expected.append(z)
            h = np.maximum(z, 0)
        got = random_relu_network_activations(X, weights, normalize=normalize)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)  # two variance formulas


def test_moment_shift_of_a_pure_offset():
    rng = np.random.default_rng(2)
    before = rng.normal(size=(100, 5)) * np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    after = before + 0.5  # every mean moves by 0.5, no std moves
    expected = np.mean(0.5 / before.std(axis=0))
    assert per_feature_moment_shift(before, after) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    st.floats(0.1, 10.0),
    st.floats(-5.0, 5.0),
    st.integers(0, 2**32 - 1),
)
def test_moment_shifts_are_invariant_to_a_common_affine_map(scale, offset, seed):
    rng = np.random.default_rng(seed)
    before = rng.normal(size=(64, 4))
    after = 1.1 * before + rng.normal(size=(1, 4))
    shifts = per_feature_moment_shifts(before, after)
    mapped_before, mapped_after = scale * before + offset, scale * after + offset
    # Relative measures: only rounding of O(1) ratios differs.
    np.testing.assert_allclose(
        per_feature_moment_shifts(mapped_before, mapped_after), shifts, rtol=1e-9
    )
    shift = per_feature_moment_shift(before, after)
    assert shift == pytest.approx(np.mean(shifts), rel=1e-15)
    assert per_feature_moment_shift(mapped_before, mapped_after) == pytest.approx(shift, rel=1e-9)


def test_activation_drift_witness_reads_its_profiles():
    seed = seed_of(CLAIM)
    profiles = activation_drift_profiles(seed)
    result = activation_drift_witness(seed)
    for name in ("unnormalized", "normalized"):
        profile = profiles[name]
        assert result[name]["max_feature_moment_shift"] == np.max(
            profile["max_feature_moment_shift"]
        )
        # The largest feature moves at least as far as the mean over features.
        assert np.all(profile["max_feature_moment_shift"] >= profile["moment_shift"])
    assert result["value_change_ratio"] == (
        result["normalized"]["value_change"] / result["unnormalized"]["value_change"]
    )


def test_activation_drift_pins_moments_only_with_normalization():
    result = activation_drift_witness(seed_of(CLAIM))
    assert result["normalized"]["moment_shift"] < 1e-5 < result["unnormalized"]["moment_shift"]
    # Without normalization the gain 1.2 per layer compounds (1.2^19 = 32 in expectation of
    # the second moment; the measured RMS ratio of one network is smaller but far above 1).
    assert result["unnormalized"]["scale_growth"] > 4
    assert result["normalized"]["scale_growth"] == pytest.approx(1.0, abs=1e-4)
    same_step_zero = activation_drift_witness(seed_of(CLAIM), step=0.0)
    assert same_step_zero["normalized"]["value_change"] == 0.0
    assert same_step_zero["unnormalized"]["moment_shift"] == 0.0
    assert np.isnan(same_step_zero["value_change_ratio"])
