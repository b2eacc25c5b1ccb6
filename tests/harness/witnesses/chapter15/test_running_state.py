"""Tests of trainable_harness.witnesses.chapter15.running_state, against plain numpy."""

import numpy as np
import pytest

from claimbook.claims import claim_seed, flatten, load_claim
from trainable_harness.witnesses.chapter15.running_state import running_state_witness

RUNNING_SEED = claim_seed("c15-running-state")


def test_running_state_witness_matches_numpy_reference():
    result = running_state_witness(RUNNING_SEED)
    rng = np.random.default_rng(RUNNING_SEED)
    training = rng.normal(4, 2, size=(8, 32)).ravel()
    evaluation = rng.normal(4, 2, size=32)
    # numpy's pairwise two-pass sums differ from Welford by rounding only: values ~4 and
    # variances ~4 over 256 terms stay within ~1e-13.
    assert result["running_mean"] == pytest.approx(np.mean(training), abs=1e-13)
    assert result["running_population_variance"] == pytest.approx(np.var(training), abs=1e-13)
    assert result["evaluation_mean"] == pytest.approx(np.mean(evaluation), abs=1e-13)
    assert result["evaluation_population_variance"] == pytest.approx(np.var(evaluation), abs=1e-13)
    eps = 1e-5
    reference = np.max(
        np.abs(
            (evaluation - evaluation.mean()) / np.sqrt(evaluation.var() + eps)
            - (evaluation - training.mean()) / np.sqrt(training.var() + eps)
        )
    )
    assert result["normalized_discrepancy"]["maximum_absolute"] == pytest.approx(
        reference, abs=1e-12
    )


def test_running_state_witness_reproduces_the_chapter_numbers():
    result = running_state_witness(RUNNING_SEED)
    shown = {
        field: round(result[field], 3)
        for field in (
            "running_mean",
            "evaluation_mean",
            "running_population_variance",
            "evaluation_population_variance",
        )
    }
    assert shown == {
        "running_mean": 4.096,
        "evaluation_mean": 3.766,
        "running_population_variance": 3.801,
        "evaluation_population_variance": 3.063,
    }
    assert round(result["normalized_discrepancy"]["maximum_absolute"], 3) == 0.448
    assert result["merged_equals_direct"] is True
    assert 0.0 <= result["merged_mean_gap"] <= 3e-15


def test_running_state_witness_depends_on_seed_and_eps():
    base = running_state_witness(RUNNING_SEED)
    assert running_state_witness(RUNNING_SEED) == base  # same seed, same result
    assert running_state_witness(RUNNING_SEED + 1)["running_mean"] != base["running_mean"]
    larger_eps = running_state_witness(RUNNING_SEED, eps=1.0)
    # eps enters both denominators (variances ~3-4), shrinking the discrepancy.
    assert (
        larger_eps["normalized_discrepancy"]["maximum_absolute"]
        < base["normalized_discrepancy"]["maximum_absolute"]
    )


def test_registered_expectations_cover_exactly_the_witness_fields():
    claim = load_claim("c15-running-state-001")
    assert claim.compute == (
        f"trainable_harness.witnesses.chapter15.running_state.{running_state_witness.__name__}"
    )
    assert set(flatten(running_state_witness(seed=RUNNING_SEED))) == set(claim.expect)
