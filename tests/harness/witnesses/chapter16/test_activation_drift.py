"""Tests of trainable_harness.witnesses.chapter16.activation_drift, against a naive
Wasserstein distance and the claim's own switches."""

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
)

from trainable_harness.errors import MLPError
from trainable_harness.witnesses.chapter16.activation_drift import (
    activation_drift_witness,
    covariate_shift_run,
    per_feature_wasserstein,
)

CLAIM = "c16-activation-drift-001"
SMALL = {"depth": 3, "budget": 40, "window": 10}  # a few cheap steps of the same network


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(CLAIM, activation_drift_witness)


@pytest.mark.claims
def test_the_claim_refutes_its_account(tmp_path):
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)


def test_statistical_bounds_quote_other_seed_sets_not_the_registered_one():
    check_statistical_bounds_quote_other_seed_sets(CLAIM)


def test_the_account_quotes_its_source():
    refutes = registry(CLAIM)["refutes"]
    assert "distribution" in refutes["account"] and '"' in refutes["account"]
    assert "Ioffe and Szegedy 2015" in refutes["source"] and "section" in refutes["source"]


def test_the_refutation_needs_more_shift_and_more_speed_than_no_normalization():
    """The refutation can fail: noise that moved the distributions less than no
    normalization, or a noisy network no faster than the plain one, breaks a bound."""
    expect = registry(CLAIM)["expect"]
    assert expect["shift_ratio.noisy_batch_norm"]["ci_within"][0] > 1.0
    assert expect["speedup.noisy_batch_norm"]["ci_within"][0] > 1.0
    # And the account's first half is not refuted: batch norm shifts less than no norm.
    assert expect["shift_ratio.batch_norm"]["ci_within"][1] <= 1.0


def test_the_claim_turns_red_when_the_noise_does_not_shift():
    """The mistake the noisy network exists to catch: noise that leaves the distributions
    in place (mean 0, scale 1) makes it plain batch norm, bit for bit, and batch norm's
    registered shift lies wholly below the noisy network's registered shift."""
    seed = seed_of(CLAIM)
    off = {"noise_mean": 0.0, "noise_scale": 1.0, **SMALL}
    noisy = covariate_shift_run(seed, "noisy_batch_norm", **off)
    plain_bn = covariate_shift_run(seed, "batch_norm", **SMALL)
    assert np.array_equal(noisy["losses"], plain_bn["losses"])
    assert np.array_equal(noisy["shifts"], plain_bn["shifts"])
    expect = registry(CLAIM)["expect"]
    assert (
        expect["batch_norm.shift"]["ci_within"][1]
        < expect["noisy_batch_norm.shift"]["ci_within"][0]
    )


def naive_wasserstein(a, b):
    """1-Wasserstein distance as the integral of |F_a - F_b| over the union of the values."""
    grid = np.sort(np.concatenate([a, b]))
    cdf_a = np.searchsorted(np.sort(a), grid[:-1], side="right") / a.size
    cdf_b = np.searchsorted(np.sort(b), grid[:-1], side="right") / b.size
    return float(np.sum(np.abs(cdf_a - cdf_b) * np.diff(grid)))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40))
def test_wasserstein_matches_the_integral_of_the_cdf_difference(seed, n):
    rng = np.random.default_rng(seed)
    before, after = rng.normal(size=(n, 3)), rng.standard_t(3, size=(n, 3))
    got = per_feature_wasserstein(before, after)
    for j in range(3):
        assert got[j] == pytest.approx(naive_wasserstein(before[:, j], after[:, j]), abs=1e-12)


def test_wasserstein_is_a_distance_between_distributions_not_between_values():
    rng = np.random.default_rng(1)
    before = rng.normal(size=(50, 4))
    shuffled = rng.permutation(before)  # same values, other examples
    assert np.array_equal(per_feature_wasserstein(before, shuffled), np.zeros(4))
    assert np.allclose(per_feature_wasserstein(before, before + 0.3), 0.3, atol=1e-15)


def test_the_plain_and_normalized_networks_learn_and_share_their_start():
    seed = seed_of(CLAIM)
    runs = {v: covariate_shift_run(seed, v, **SMALL) for v in ("plain", "batch_norm")}
    for run in runs.values():
        assert run["losses"][-1] < run["losses"][0]
        assert len(run["shifts"]) == SMALL["window"]
        assert np.all(run["shifts"] > 0)
    assert runs["plain"]["label_entropy"] == runs["batch_norm"]["label_entropy"]


def test_a_run_stops_at_its_target_but_not_before_the_window():
    run = covariate_shift_run(seed_of(CLAIM), "batch_norm", target_fraction=10.0, **SMALL)
    assert run["steps_to_target"] == 0  # the first loss is already below ten entropies
    assert len(run["losses"]) == SMALL["window"] + 1


def test_bad_settings_are_refused_by_name():
    with pytest.raises(MLPError, match="variant"):
        covariate_shift_run(0, "layer_norm")
    with pytest.raises(MLPError, match="window"):
        covariate_shift_run(0, "plain", budget=5, window=6)
