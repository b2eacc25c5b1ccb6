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
@pytest.mark.whole_claim
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


# --- the stacked shift: every layer at once equals the per-layer form to the last bit ------

_layers = st.integers(1, 4).flatmap(
    lambda depth: st.tuples(
        st.just(depth), st.integers(2, 12), st.integers(1, 6), st.integers(0, 2**32 - 1)
    )
)


@settings(max_examples=60, deadline=None)
@given(_layers, st.sampled_from([0.0, 0.3, 1.0]))
def test_stacked_shift_equals_the_per_layer_loop(shape, dead_fraction):
    from trainable_harness.witnesses.chapter16.activation_drift import (
        _mean_shift_in_stds,
        _shift_in_stds,
        _summarize_layers,
    )

    depth, n, width, seed = shape
    rng = np.random.default_rng(seed)
    # ReLU outputs, some features dead (constant 0) in the "before" sample.
    before = [np.maximum(rng.normal(size=(n, width)), 0.0) for _ in range(depth)]
    after = [b + 0.1 * rng.normal(size=(n, width)) for b in before]
    for layer in before:
        layer[:, rng.random(width) < dead_fraction] = 0.0
    looped = float(np.mean([_shift_in_stds(a, b) for a, b in zip(before, after, strict=True)]))
    stacked = _mean_shift_in_stds(_summarize_layers(before), _summarize_layers(after))
    assert stacked == looped or (np.isnan(stacked) and np.isnan(looped))


def test_a_run_equals_the_per_layer_reference_loop():
    # The run's shifts, recomputed from its own layers' inputs with the per-layer form:
    # train the small network again step by step and compare every step's shift.
    from trainable_harness.witnesses.chapter16 import activation_drift

    for variant in activation_drift.VARIANTS:
        run = covariate_shift_run(3, variant, **SMALL)
        reference = _reference_shifts(3, variant, **SMALL)
        np.testing.assert_array_equal(run["shifts"], reference)


def _reference_shifts(seed, variant, **settings):
    """The shifts as the first version computed them: each layer sorted twice, one by one."""
    from trainable_harness.witnesses.chapter16 import activation_drift

    recorded = []
    original = activation_drift._summarize_layers

    def keep(inputs):
        recorded.append([layer.copy() for layer in inputs])
        return original(inputs)

    activation_drift._summarize_layers = keep
    try:
        covariate_shift_run(seed, variant, **settings)
    finally:
        activation_drift._summarize_layers = original
    return np.array(
        [
            float(
                np.mean(
                    [
                        activation_drift._shift_in_stds(a, b)
                        for a, b in zip(recorded[t], recorded[t + 1], strict=True)
                    ]
                )
            )
            for t in range(len(recorded) - 1)
        ]
    )
