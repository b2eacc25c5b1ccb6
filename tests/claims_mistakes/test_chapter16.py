"""claims/mistakes/chapter16.py: each replaces the one function it names with
the mistake it says, and ``patch`` lets a test undo it (the claims under them are
`python -m checks mutate`'s)."""

import numpy as np
import pytest

from checks.mutate import load_mistakes
from trainable_harness import small_batch
from trainable_harness.digits import batch_dependence, forward, gradient_error, init_convnet
from trainable_harness.moments import MomentState
from trainable_harness.small_batch import checks, fixes, groups, model, sweep, train_eval
from trainable_harness.witnesses.chapter16 import residual_depth

X = small_batch.draw_activations(np.random.default_rng(3), repeats=2, batch=8)

chapter16 = load_mistakes("chapter16")  # claims/mistakes/chapter16.py, loaded by its path


def test_sample_variance_divides_by_m_minus_one(monkeypatch):
    mean, variance = checks._batch_moments(X)
    x_hat = train_eval.train_mode(X, eps=0.0)
    chapter16.sample_variance_batch_moments(monkeypatch.setattr)
    m = X.shape[1] * X.shape[3] * X.shape[4]
    for module in (train_eval, model):
        patched_mean, patched_variance = module._batch_moments(X)
        np.testing.assert_array_equal(patched_mean, mean)
        np.testing.assert_allclose(patched_variance, variance * m / (m - 1), rtol=1e-15)
    for module in (train_eval, fixes):
        parts = module._batch_standardized(X, 0.0, "train_mode")
        np.testing.assert_allclose(parts.variance(), variance * m / (m - 1), rtol=1e-14)
    # Train mode divides by the larger root: x_hat shrinks by sqrt((m - 1) / m).
    shrunk = train_eval.train_mode(X, eps=0.0)
    np.testing.assert_allclose(shrunk, x_hat * np.sqrt((m - 1) / m), rtol=1e-13, atol=1e-15)
    monkeypatch.undo()
    assert train_eval._batch_moments is checks._batch_moments
    assert fixes._batch_standardized is checks._batch_standardized


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


def test_the_branch_scale_left_out_of_the_jacobian_matters_only_away_from_one(monkeypatch):
    from trainable_harness.witnesses.chapter16 import branch_scale

    def jacobians(scale):
        return branch_scale.branch_scaled_post_norm_jacobians(np.random.default_rng(2), 3, scale)

    right_1, right_3 = jacobians(1.0), jacobians(3.0)
    chapter16.branch_scale_left_out_of_the_jacobian(monkeypatch.setattr)
    for right, wrong in zip(right_1, jacobians(1.0), strict=True):
        np.testing.assert_allclose(wrong, right, rtol=1e-14, atol=1e-15)
    assert max(np.max(np.abs(r - w)) for r, w in zip(right_3, jacobians(3.0), strict=True)) > 0.1


def _fold_inputs():
    from trainable_harness.layers import BatchNormState

    state = BatchNormState(np.array([1.0, -2.0]), np.array([4.0, 0.25]))
    return np.ones((2, 1, 1, 1)), np.array([0.5, 0.0]), np.array([1.0, 2.0]), np.zeros(2), state


def test_the_fold_without_the_mean_shift_keeps_the_running_mean_in(monkeypatch):
    from trainable_harness.witnesses.chapter16 import folding

    K, b, gamma, beta, state = _fold_inputs()
    chapter16.fold_without_the_mean_shift(monkeypatch.setattr)
    scale = gamma / np.sqrt(state.running_variance + 1e-5)
    K_folded, b_folded = folding.fold_batch_norm_into_conv2d(K, b, gamma, beta, state)
    np.testing.assert_allclose(K_folded.ravel(), scale, rtol=1e-15)
    np.testing.assert_allclose(b_folded, scale * b + beta, rtol=1e-15)
    _, b_linear = folding.fold_batch_norm_into_linear(K[:, :, 0, 0], b, gamma, beta, state)
    np.testing.assert_allclose(b_linear, scale * b + beta, rtol=1e-15)


def test_the_fold_without_eps_divides_by_the_root_of_the_variance_alone(monkeypatch):
    from trainable_harness.witnesses.chapter16 import folding

    K, b, gamma, beta, state = _fold_inputs()
    chapter16.fold_without_eps(monkeypatch.setattr)
    K_folded, _ = folding.fold_batch_norm_into_conv2d(K, b, gamma, beta, state, eps=1e-5)
    np.testing.assert_allclose(K_folded.ravel(), gamma / np.sqrt(state.running_variance))


def test_skip_gradient_not_added_leaves_only_the_branch_gradient(monkeypatch):
    from trainable_harness import depth

    weights, X0, R = depth.draw_network(np.random.default_rng(1), 3, width=6, batch=5)
    plain = depth.input_gradient(weights, X0, R, "plain")[1]
    chapter16.skip_gradient_not_added(monkeypatch.setattr)
    # The forward pass keeps its skips, so the result is not the plain chain's gradient,
    # but the identity term is gone: one block gives the branch's gradient alone.
    one = [weights[0]]
    _, branch_only = depth.input_gradient(one, X0, R, "residual")
    monkeypatch.undo()
    _, whole = depth.input_gradient(one, X0, R, "residual")
    np.testing.assert_allclose(branch_only, whole - R, rtol=1e-12, atol=1e-15)
    assert not np.allclose(depth.input_gradient(weights, X0, R, "residual")[1], plain)


def test_branch_scale_only_in_the_forward_pass_drops_alpha_from_the_backward(monkeypatch):
    from trainable_harness import depth

    weights, X0, R = depth.draw_network(np.random.default_rng(1), 1, width=6, batch=5)
    weights = weights * 4  # four blocks with one matrix: alpha = 1/2
    _, right = depth.input_gradient(weights[:1], X0, R, "scaled")
    chapter16.branch_scale_only_in_the_forward_pass(monkeypatch.setattr)
    _, wrong = depth.input_gradient(weights[:1], X0, R, "scaled")
    np.testing.assert_allclose(wrong, right, rtol=1e-13)  # one block: alpha = 1 anyway
    _, unscaled = depth.input_gradient(weights, X0, R, "scaled")
    monkeypatch.undo()
    _, scaled = depth.input_gradient(weights, X0, R, "scaled")
    assert not np.allclose(unscaled, scaled)


def test_the_batch_norm_variance_term_matters_to_the_gradient(monkeypatch):
    # tests/harness/test_depth.py's finite differences would fail without the term: check
    # that leaving it out is not a tiny change.
    from trainable_harness import depth

    weights, X0, R = depth.draw_network(np.random.default_rng(11), 4, width=6, batch=5)
    _, right = depth.input_gradient(weights, X0, R, "plain")
    chapter16.backward_without_the_variance_term(monkeypatch.setattr)
    _, wrong = depth.input_gradient(weights, X0, R, "plain")
    assert np.abs(wrong - right).max() > 1e-3 * np.abs(right).max()


def test_layer_norm_over_the_batch_axis_depends_on_the_other_samples(monkeypatch):
    from trainable_harness.layers import layer_norm

    batch = np.random.default_rng(4).normal(size=(5, 3))
    right = layer_norm(batch[:1], np.ones(3), np.zeros(3))
    chapter16.layer_norm_over_the_batch_axis(monkeypatch.setattr)
    wrong = layer_norm(batch, np.ones(3), np.zeros(3))
    np.testing.assert_allclose(wrong.mean(axis=0), 0.0, atol=1e-14)  # batch norm's sets
    assert np.max(np.abs(wrong[:1] - right)) > 0.1


def test_the_biased_running_variance_takes_the_population_variance(monkeypatch):
    from trainable_harness import layers
    from trainable_harness.witnesses.chapter16 import running_estimates

    batch = np.array([[1.0], [2.0], [4.0], [7.0]])
    state = layers.BatchNormState.initial(1, momentum=1.0, variance_estimator="sample")
    assert layers.update_running_statistics(state, batch).running_variance[0] == 7.0
    chapter16.biased_running_variance(monkeypatch.setattr)
    assert running_estimates.update_running_statistics is layers.update_running_statistics
    updated = layers.update_running_statistics(state, batch)
    assert updated.running_variance[0] == pytest.approx(5.25)  # 21 / 4, not 21 / 3
    assert updated.variance_estimator == "sample"


def test_gamma_gradient_dropped_zeroes_dgamma_only(monkeypatch):
    from trainable_harness.mlp import batch_norm_backward, batch_norm_forward

    Z = np.random.default_rng(5).normal(size=(6, 2))
    upstream = np.random.default_rng(6).normal(size=(6, 2))
    _, cache = batch_norm_forward(Z, np.ones(2), np.zeros(2))
    dZ, dgamma, dbeta = batch_norm_backward(upstream, cache, np.ones(2))
    chapter16.gamma_gradient_dropped(monkeypatch.setattr)
    wrong = batch_norm_backward(upstream, cache, np.ones(2))
    np.testing.assert_array_equal(wrong[0], dZ)
    np.testing.assert_array_equal(wrong[2], dbeta)
    assert np.all(wrong[1] == 0.0) and np.all(dgamma != 0.0)


def test_the_fold_with_batch_statistics_folds_the_last_batch(monkeypatch):
    import dataclasses

    from trainable_harness import layers

    K, b, gamma, beta, state = _fold_inputs()
    W = K[:, :, 0, 0]
    X = np.random.default_rng(7).normal(2.0, 3.0, size=(16, 2))  # batch norm's input
    stats = layers.batch_statistics(X)
    batch_state = dataclasses.replace(
        state, running_mean=stats.mean, running_variance=stats.population_variance
    )
    expected = layers.fold_batch_norm_into_linear(W, b, gamma, beta, batch_state)
    chapter16.fold_with_batch_statistics(monkeypatch.setattr)
    layers.batch_norm_train(X, gamma, beta, state)
    folded = layers.fold_batch_norm_into_linear(W, b, gamma, beta, state)
    for got, want in zip(folded, expected, strict=True):
        np.testing.assert_array_equal(got, want)


# --- real images (c16-digits-*) -------------------------------------------------------------


def digits_net(kinds):
    return init_convnet(kinds, np.random.default_rng(5))


DIGIT_IMAGES = np.random.default_rng(6).normal(size=(4, 8, 8))


def test_digits_group_norm_over_the_batch_pools_the_images(monkeypatch):
    net = digits_net(("group",))
    assert batch_dependence(net, DIGIT_IMAGES, "batch")[0] < 1e-13
    chapter16.digits_group_norm_over_the_batch(monkeypatch.setattr)
    assert batch_dependence(net, DIGIT_IMAGES, "batch")[0] > 1e-3


def test_digits_eval_with_batch_statistics_depends_on_the_batch(monkeypatch):
    net = digits_net(("batch",))
    assert batch_dependence(net, DIGIT_IMAGES, "running")[0] < 1e-13
    chapter16.digits_eval_with_batch_statistics(monkeypatch.setattr)
    assert batch_dependence(net, DIGIT_IMAGES, "running")[0] > 1e-3


def test_digits_momentum_swapped_keeps_mostly_the_new_batch(monkeypatch):
    net = digits_net(("batch",))
    chapter16.digits_momentum_as_the_old_value_weight(monkeypatch.setattr)
    forward(net, DIGIT_IMAGES, "train")
    # From the start (mean 0), one update keeps 0.1 x 0 + 0.9 x the batch mean.
    correct = digits_net(("batch",))
    monkeypatch.undo()
    forward(correct, DIGIT_IMAGES, "train")
    np.testing.assert_allclose(net.running_mean1, 9.0 * correct.running_mean1, rtol=1e-12)


def test_digits_backward_without_the_variance_term_fails_the_gradient_check(monkeypatch):
    assert gradient_error(seed=1) < 1e-6
    chapter16.digits_backward_without_the_variance_term(monkeypatch.setattr)
    assert gradient_error(seed=1) > 1e-2
