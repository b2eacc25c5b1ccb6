"""Tests of trainable_harness.witnesses.chapter16.small_batches: the claim verifies, its
tolerances are the derived values the registry names, and the derived values against large
draws (the mistakes it catches are `python -m checks mutate`'s)."""

import numpy as np
import pytest
from witness_checks import check_returns_finite_floats, registry

from claimbook.claims import harness_pin, verify_claim
from trainable_harness import small_batch
from trainable_harness.small_batch import sweep
from trainable_harness.witnesses.chapter16.small_batches import small_batch_witness

CLAIM = "c16-small-batch-001"
GROUP_DISTANCE = small_batch.group_distance_theory()


def test_small_batch_witness_returns_per_seed_scalars():
    check_returns_finite_floats(small_batch_witness, seed=2)


@pytest.fixture
def fresh_sweeps():
    """The sweep is cached: clear it around the run."""
    sweep._cached_sweep.cache_clear()
    yield
    sweep._cached_sweep.cache_clear()


def judged(tmp_path):
    """The claim recomputed with the harness as it is now, judged by the engine."""
    artifact = verify_claim(CLAIM, harness_pin(), artifacts_dir=tmp_path)
    return artifact["status"], {
        field: comparison["passed"] for field, comparison in artifact["comparisons"].items()
    }


@pytest.mark.claims
@pytest.mark.whole_claim
def test_the_claim_verifies(tmp_path, fresh_sweeps):
    status, passed = judged(tmp_path)
    assert status == "verified" and all(passed.values())


@pytest.mark.parametrize(
    ("field", "derived", "between_seed_sd"),
    [
        ("gap_b1", small_batch.single_sample_gap_theory(), 0.0041),
        ("group_distance", GROUP_DISTANCE, 0.0017),
        (
            "group_distance_over_gap_b2",
            GROUP_DISTANCE / small_batch.two_sample_gap_theory(),
            0.0085,
        ),
    ],
)
def test_tolerances_are_the_derived_value_plus_or_minus_four_standard_errors(
    field, derived, between_seed_sd
):
    """The registry's interval is the derived value +- 4 SE of a mean of 10 seeds (the
    SD its reason states), to the 4 decimals it is written with."""
    low, high = registry(CLAIM)["expect"][field]["ci_within"]
    half_width = 4 * between_seed_sd / np.sqrt(10)
    assert low == pytest.approx(derived - half_width, abs=1.5e-4)
    assert high == pytest.approx(derived + half_width, abs=1.5e-4)
    assert f"{derived:.5f}" in registry(CLAIM)["expect"][field]["reason"]


def test_single_sample_gap_theory_against_a_large_draw():
    """sqrt(2 - E[s]) against the gap of 40 000 single samples (SE about 1e-3 relative)."""
    X = small_batch.draw_activations(np.random.default_rng(5), repeats=5000, batch=1)
    gap = small_batch.train_eval_gap(small_batch.train_mode(X), X)
    assert gap == pytest.approx(small_batch.single_sample_gap_theory(), rel=3e-3)


def test_clipped_renorm_gap_theory_against_a_large_draw():
    X = small_batch.draw_activations(np.random.default_rng(6), repeats=20000, batch=2)
    r_max, d_max = small_batch.RENORM_LIMITS
    gap = small_batch.train_eval_gap(small_batch.batch_renorm_train(X, r_max, d_max), X)
    assert gap == pytest.approx(small_batch.clipped_renorm_gap_theory(2, d_max), rel=1e-2)
    # The setting makes the clip act: without it the output is the evaluation output.
    unclipped = small_batch.batch_renorm_train(X, r_max, np.inf)
    assert small_batch.train_eval_gap(unclipped, X) < 1e-14


def test_group_distance_theory_against_a_large_draw():
    X = small_batch.draw_activations(np.random.default_rng(7), repeats=4000, batch=2)
    distance = small_batch.group_norm_train(X) - small_batch.group_population_eval(X)
    rms = float(np.sqrt(np.mean(distance**2)))
    assert rms == pytest.approx(GROUP_DISTANCE, rel=3e-3)
    gap = small_batch.train_eval_gap(small_batch.train_mode(X), X)
    assert gap == pytest.approx(small_batch.two_sample_gap_theory(), rel=3e-3)


# The mistakes the claim exists to catch are its registry's catches, run by
# `python -m checks mutate` (claims/mistakes/chapter16.py).
