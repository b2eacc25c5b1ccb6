"""Tests of trainable_harness.witnesses.chapter16.small_batches: the claim verifies, its
tolerances are the derived values the registry names, and each mistake it exists to catch,
patched into the harness, turns it red."""

import numpy as np
import pytest
from witness_checks import check_returns_finite_floats, registry

from claimbook.claims import harness_pin, verify_claim
from trainable_harness import small_batch
from trainable_harness.moments import MomentState
from trainable_harness.small_batch import checks, fixes, groups, model, sweep, train_eval
from trainable_harness.witnesses.chapter16.small_batches import small_batch_witness

CLAIM = "c16-small-batch-001"
GROUP_DISTANCE = small_batch.group_distance_theory()


def test_small_batch_witness_returns_per_seed_scalars():
    check_returns_finite_floats(small_batch_witness, seed=2)


@pytest.fixture
def fresh_sweeps():
    """The sweep is cached: clear it around a run of a patched harness."""
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


# The mistakes the claim exists to catch, each patched into the harness in this process.


def _sample_variance_moments(X):
    """Batch statistics divided by m - 1 instead of m (the sample variance)."""
    mean, variance = checks._batch_moments(X)
    m = X.shape[1] * X.shape[3] * X.shape[4]
    return mean, variance * m / (m - 1)


def _ghosts_ignored(X, ghost_size, eps=model.EPS):
    """Ghost batch norm that normalizes the whole batch at once."""
    return train_eval.train_mode(X, eps)


def _renorm_without_clipping_d(X, r_max, d_max, eps=model.EPS):
    return fixes.batch_renorm_train(X, r_max, np.inf, eps)


def _merge_without_between_term(a, b):
    """A merge that adds the m2 of the devices and forgets the spread of their means."""
    n = a.count + b.count
    return MomentState(n, a.mean + (b.mean - a.mean) * b.count / n, a.m2 + b.m2)


def _group_norm_over_the_batch(X, gamma, beta, *, num_groups, eps=1e-5):
    """Group norm whose statistics pool the samples of the batch too."""
    batch, channels = X.shape[:2]
    grouped = X.reshape(batch, num_groups, channels // num_groups, *X.shape[2:])
    axes = (0, 2, 3, 4)
    centered = grouped - grouped.mean(axis=axes, keepdims=True)
    variance = np.mean(centered**2, axis=axes, keepdims=True)
    Y = (centered / np.sqrt(variance + eps)).reshape(X.shape)
    return Y * gamma[None, :, None, None] + beta[None, :, None, None]


PERTURBATIONS = {
    "the statistics divided by m - 1": (
        [(train_eval, "_batch_moments"), (fixes, "_batch_moments")],
        _sample_variance_moments,
        {"gap_b1", "gap_b1_over_theory"},
    ),
    "ghost batches that are not split": (
        [(sweep, "ghost_batch_norm_train")],
        _ghosts_ignored,
        {"ghost_over_b8"},
    ),
    "batch renormalization without the clip of d": (
        [(sweep, "batch_renorm_train")],
        _renorm_without_clipping_d,
        {"renorm_gap_b2_over_theory"},
    ),
    "a device merge without the between-device term": (
        [(fixes, "merge_moments")],
        _merge_without_between_term,
        {"sync_max_error"},
    ),
    "group norm statistics over the batch as well": (
        [(groups, "group_norm")],
        _group_norm_over_the_batch,
        {"group_gap_max", "group_batch_dependence_max"},
    ),
}


@pytest.mark.claims
@pytest.mark.parametrize("mistake", sorted(PERTURBATIONS))
def test_the_claim_fails_under_the_mistake_it_catches(
    mistake, tmp_path, monkeypatch, fresh_sweeps
):
    targets, replacement, fields = PERTURBATIONS[mistake]
    for module, name in targets:
        monkeypatch.setattr(module, name, replacement)
    status, passed = judged(tmp_path)
    assert status == "failed", mistake
    assert {field for field, ok in passed.items() if not ok} >= fields, (mistake, passed)
