"""Tests of the witnesses that the chapter-15 claims call.

Each witness is checked against an independent computation (plain numpy, or closed forms
worked by hand), not against its own code path.
"""

import numpy as np
import pytest

from trainable_harness.claims import claim_seed, flatten, load_claim
from trainable_harness.witnesses.chapter15 import invariance_witness, running_state_witness

RUNNING_SEED = claim_seed("c15-running-state")


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


@pytest.mark.parametrize(
    ("claim_id", "arguments"),
    [("c15-invariance-001", {}), ("c15-running-state-001", {"seed": RUNNING_SEED})],
)
def test_registered_expectations_cover_exactly_the_witness_fields(claim_id, arguments):
    claim = load_claim(claim_id)
    witness = {
        "c15-invariance-001": invariance_witness,
        "c15-running-state-001": running_state_witness,
    }[claim_id]
    assert claim.compute == f"trainable_harness.witnesses.chapter15.{witness.__name__}"
    assert set(flatten(witness(**arguments))) == set(claim.expect)
