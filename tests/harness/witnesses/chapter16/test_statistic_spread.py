"""Tests of trainable_harness.witnesses.chapter16.statistic_spread: the 1/sqrt(n) law, and
a correlated sample that breaks it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from witness_checks import (
    check_claim_verifies_or_refutes_its_account,
    check_registered_expectations_cover_exactly_the_witness_fields,
    check_statistical_bounds_quote_other_seed_sets,
    seed_of,
)

from trainable_harness.witnesses.chapter16.statistic_spread import (
    spread_of_batch_means,
    statistic_spread_profiles,
    statistic_spread_witness,
)

CLAIM = "c16-statistic-spread-001"


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(CLAIM, statistic_spread_witness)


# The whole statistical claim recomputed (seconds of CPU): the claims tier.
@pytest.mark.claims
@pytest.mark.whole_claim
def test_the_claim_verifies(tmp_path):
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)


def test_statistical_bounds_quote_other_seed_sets_not_the_registered_one():
    check_statistical_bounds_quote_other_seed_sets(CLAIM)


def test_spread_of_batch_means_matches_numpy():
    rng, twin = np.random.default_rng(7), np.random.default_rng(7)
    n, spread = spread_of_batch_means(rng, 4, 3, repeats=50, sample_std=0.5, pixel_std=2.0)
    X = 0.5 * twin.standard_normal((4, 50, 1, 1)) + 2.0 * twin.standard_normal((4, 50, 3, 3))
    assert n == 4 * 3 * 3
    # Per-channel means by two summation orders: a few ulps of values below 10.
    assert spread == pytest.approx(np.std(X.mean(axis=(0, 2, 3)), ddof=1), abs=1e-14)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([1, 2, 4]), st.sampled_from([1, 2, 3]), st.integers(0, 2**32 - 1))
def test_independent_spread_follows_sigma_over_sqrt_n(batch_size, side, seed):
    n, spread = spread_of_batch_means(
        np.random.default_rng(seed), batch_size, side, repeats=4000, sample_std=0.0, pixel_std=2.0
    )
    # 4000 repeats: relative standard error 1/sqrt(2 x 3999) = 1.1%; 6 of them.
    assert spread == pytest.approx(2.0 / np.sqrt(n), rel=0.067)


def test_shared_offsets_break_the_independent_law():
    """Control: with a shared per-sample offset the 1/sqrt(n) law fails by far more than noise."""
    n, spread = spread_of_batch_means(
        np.random.default_rng(1), 2, 8, repeats=2000, sample_std=1.0, pixel_std=np.sqrt(3.0)
    )
    assert spread / (2.0 / np.sqrt(n)) > 2.5  # theory: sqrt(1/2 + 3/128) / (2/sqrt(128)) = 4.1
    assert spread == pytest.approx(np.sqrt(1 / 2 + 3 / n), rel=0.1)


def test_statistic_spread_witness_reports_the_theory():
    result = statistic_spread_witness(seed_of(CLAIM))
    assert result["correlated"]["nominal_values"] == 32 * 8 * 8
    theory = 4.0 / (1 / 32 + 3 / 2048)
    # A variance from 500 repeats: 6.3% relative standard error; allow 4 of them.
    assert result["correlated"]["effective_values"] == pytest.approx(theory, rel=0.25)
    # A spread from 500 repeats: 3.2%; a mean of 12 ratios, 0.9%; allow 4 of them.
    assert result["independent"]["mean_ratio_to_theory"] == pytest.approx(1.0, abs=0.036)
    assert result["correlated"]["mean_ratio_to_theory"] == pytest.approx(1.0, abs=0.036)


def test_statistic_spread_witness_reads_its_profiles():
    seed = seed_of(CLAIM)
    profiles = statistic_spread_profiles(seed, repeats=100)
    result = statistic_spread_witness(seed, repeats=100)
    n, B = profiles["n"], profiles["batch_sizes"]
    np.testing.assert_array_equal(profiles["correlated_theory"], np.sqrt(1 / B + 3 / n))
    assert result["correlated"]["spread_largest_batch"] == profiles["correlated"][-1]
    smallest = (B == 2) & (n == 128)
    assert result["correlated"]["spread_smallest_batch"] == profiles["correlated"][smallest][0]
    assert result["correlated"]["effective_values"] == 4.0 / profiles["correlated"][-1] ** 2
