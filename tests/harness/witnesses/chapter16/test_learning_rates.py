"""Tests of trainable_harness.witnesses.chapter16.learning_rates: the claim verifies, its
learning criterion has a margin no rounding crosses, and its per-seed outcomes do not depend
on the summation order (the mistake it catches is `python -m checks mutate`'s)."""

import numpy as np
import pytest
from witness_checks import check_returns_finite_floats

from claimbook.claims import harness_pin, load_claim, verify_claim
from trainable_harness import mlp
from trainable_harness.mlp import sweeps
from trainable_harness.witnesses.chapter16.learning_rates import larger_learning_rates_witness

CLAIM = "c16-larger-learning-rates-001"


def test_larger_learning_rates_witness_returns_per_seed_scalars():
    check_returns_finite_floats(larger_learning_rates_witness, seed=2)


@pytest.fixture
def sweeps_cleared_after():
    """The cached (unpatched) sweeps are used first; whatever a patch computed is dropped."""
    yield
    sweeps._cached_sweep.cache_clear()


def judged(tmp_path):
    artifact = verify_claim(CLAIM, harness_pin(), artifacts_dir=tmp_path)
    return artifact, {
        field: comparison["passed"] for field, comparison in artifact["comparisons"].items()
    }


@pytest.mark.claims
@pytest.mark.whole_claim
def test_the_claim_verifies(tmp_path):
    artifact, passed = judged(tmp_path)
    assert artifact["status"] == "verified" and all(passed.values())


def _dead_runs(seed, batch_norm):
    """Rates whose run ends at the label entropy to within 1e-14: a network whose output no
    longer depends on its input (its hidden units dead)."""
    task = mlp.make_teacher_task(seed, mlp.TASK_SIZE)
    sweep = mlp.learning_rate_sweep(seed, batch_norm)
    entropy = mlp.label_entropy(task.labels)
    return sweep, np.abs(sweep.final_losses - entropy) <= 1e-14


@pytest.mark.claims
def test_a_network_at_the_label_entropy_does_not_learn():
    """Runs that end at the label entropy to rounding exist on the claim's seeds (dead
    networks), and none of them lies at or below the largest rate that learns."""
    dead_seen = 0
    for seed in load_claim(CLAIM).seeds:
        for batch_norm in (False, True):
            sweep, dead = _dead_runs(seed, batch_norm)
            dead_seen += int(dead.sum())
            assert not np.any(dead & (sweep.learning_rates <= sweep.largest_learning))
    assert dead_seen >= 2


def _reversed_task(seed, n):
    """The same task with its examples in reverse order: the full-batch loss and gradient
    are equal in exact arithmetic, and every sum over examples runs in another order."""
    task = mlp.make_teacher_task(seed, n)
    return mlp.TeacherTask(X=task.X[::-1].copy(), labels=task.labels[::-1].copy())


@pytest.mark.claims
def test_per_seed_outcomes_do_not_depend_on_the_summation_order(monkeypatch, sweeps_cleared_after):
    seeds = load_claim(CLAIM).seeds
    before = [
        (
            mlp.learning_rate_sweep(s, bn).largest_learning,
            mlp.learning_rate_sweep(s, bn).largest_finite,
        )
        for s in seeds
        for bn in (False, True)
    ]
    sweeps._cached_sweep.cache_clear()
    monkeypatch.setattr(sweeps, "make_teacher_task", _reversed_task)
    after = [
        (
            mlp.learning_rate_sweep(s, bn).largest_learning,
            mlp.learning_rate_sweep(s, bn).largest_finite,
        )
        for s in seeds
        for bn in (False, True)
    ]
    assert after == before


# The mistake the claim exists to catch (the backward pass without its variance term) is
# its registry's catches, run by `python -m checks mutate`.
