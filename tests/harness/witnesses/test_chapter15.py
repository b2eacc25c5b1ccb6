"""Tests of the witnesses that the chapter-15 claims call.

Each witness is checked against an independent computation (plain numpy, or closed forms
worked by hand), not against its own code path.
"""

import numpy as np
import pytest

from claimbook.claims import claim_seed, flatten, load_claim
from trainable_harness.errors import ShapeError, WeightShapeError
from trainable_harness.witnesses.chapter15 import (
    epsilon_sweep,
    epsilon_witness,
    invariance_witness,
    placement_witness,
    residual_placement,
    running_state_witness,
)

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


def test_invariance_witness_fp64_shortcut_is_exact():
    # Squares of 9998..10002 and their sum are integers below 2**53; the mean of squares
    # 100000002.5 needs one binary digit after the point, so FP64 gives exactly 2.5.
    assert invariance_witness()["fp64_raw_moment_variance"] == 2.5


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


def test_placement_witness_matches_an_independent_numpy_check():
    seed = claim_seed("c15-placement")
    result = placement_witness(seed)
    rng = np.random.default_rng(seed)
    weight = rng.normal(size=(4, 4)) / 2.0
    x = rng.normal(size=4)

    def centered(z):  # eq. (15.1) written out, not the harness's
        deviation = z - z.mean()
        return 2.0 * deviation / np.sqrt(np.sum(deviation**2))

    def post(z):
        return centered(z + np.tanh(weight @ z))

    # One-sided differences with a larger step: a cruder, independent estimate of J_post.
    step = 1e-7
    jacobian = np.stack([(post(x + step * e) - post(x)) / step for e in np.eye(4)], axis=1)
    singular = np.linalg.svd(jacobian, compute_uv=False)
    assert (singular > 1e-4).sum() == result["rank_post"] == 2
    assert np.max(np.abs(np.ones(4) @ jacobian)) < 1e-6
    assert result["rank_pre"] == 4
    assert result["fd_error_max"] < 1e-8
    assert result["pre_ones_error"] < 1e-12 and result["post_ones_error"] < 1e-12


def test_residual_placement_refuses_mismatched_shapes():
    with pytest.raises(WeightShapeError, match="weight must have shape"):
        residual_placement(np.eye(3), np.zeros(4))
