"""trainable_harness.perturbations.chapter16: each replaces the one function it names with
the mistake it says, and ``patch`` lets a test undo it (the claims under them are
`python -m claimbook mutate`'s)."""

import numpy as np
import pytest

from trainable_harness import small_batch
from trainable_harness.moments import MomentState
from trainable_harness.perturbations import chapter16
from trainable_harness.small_batch import checks, fixes, groups, model, sweep, train_eval
from trainable_harness.witnesses.chapter16 import residual_depth

X = small_batch.draw_activations(np.random.default_rng(3), repeats=2, batch=8)


def test_sample_variance_divides_by_m_minus_one(monkeypatch):
    mean, variance = checks._batch_moments(X)
    chapter16.sample_variance_batch_moments(monkeypatch.setattr)
    m = X.shape[1] * X.shape[3] * X.shape[4]
    for module in (train_eval, fixes, model):
        patched_mean, patched_variance = module._batch_moments(X)
        np.testing.assert_array_equal(patched_mean, mean)
        np.testing.assert_allclose(patched_variance, variance * m / (m - 1), rtol=1e-15)
    monkeypatch.undo()
    assert train_eval._batch_moments is checks._batch_moments


def test_ghost_batches_not_split_normalize_the_whole_batch(monkeypatch):
    chapter16.ghost_batches_not_split(monkeypatch.setattr)
    np.testing.assert_array_equal(sweep.ghost_batch_norm_train(X, 2), train_eval.train_mode(X))


def test_the_merge_forgets_the_spread_of_the_device_means(monkeypatch):
    a, b = MomentState(2, 0.0, 1.0), MomentState(2, 2.0, 1.0)
    right = fixes.merge_moments(a, b)
    chapter16.device_merge_without_the_between_device_term(monkeypatch.setattr)
    wrong = fixes.merge_moments(a, b)
    assert wrong.m2 == 2.0 and right.m2 == pytest.approx(6.0)


def test_group_norm_over_the_batch_depends_on_the_other_samples(monkeypatch):
    gamma, beta = np.ones(8), np.zeros(8)
    chapter16.group_norm_statistics_over_the_batch(monkeypatch.setattr)
    batch = X[0]  # (B, C, H, W)
    whole = groups.group_norm(batch, gamma, beta, num_groups=4)
    alone = groups.group_norm(batch[:1], gamma, beta, num_groups=4)
    assert np.max(np.abs(whole[:1] - alone)) > 0.01


def test_no_final_normalization_makes_the_last_jacobian_the_identity(monkeypatch):
    chapter16.no_final_normalization(monkeypatch.setattr)
    jacobians = residual_depth.residual_block_jacobians(np.random.default_rng(1), 3, "pre")
    np.testing.assert_array_equal(jacobians[-1], np.eye(jacobians[-1].shape[0]))
