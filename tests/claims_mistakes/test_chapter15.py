"""claims/mistakes/chapter15.py: each replaces the one function it names with
the mistake it says, and ``patch`` lets a test undo it (the claims under them are
`python -m checks mutate`'s)."""

import numpy as np
import pytest

from checks.mutate import load_mistakes
from trainable_harness import estimator_shift, geometry
from trainable_harness.normalization import centered_normalize, rms_normalize
from trainable_harness.transformer_cost import block_flops_per_token
from trainable_harness.witnesses.chapter15 import norm_cost, placement, rms_ablation
from trainable_harness.witnesses.chapter15 import scale_invariance as si

chapter15 = load_mistakes("chapter15")  # claims/mistakes/chapter15.py, loaded by its path


def test_the_pre_norm_residual_from_the_normalized_input_keeps_no_identity_path(monkeypatch):
    rng = np.random.default_rng(4)
    weight, x = rng.normal(size=(4, 4)) / 2.0, rng.normal(size=4)
    chapter15.pre_norm_residual_from_the_normalized_input(monkeypatch.setattr)
    blocks = placement.residual_placement(weight, x)
    z = centered_normalize(x)
    np.testing.assert_allclose(blocks["pre"](x), z + np.tanh(weight @ z), rtol=1e-15)
    # A block consistent with its own Jacobian: the mistake is the block, not a derivative.
    fd = placement.central_difference_jacobian(blocks["pre"], x)
    np.testing.assert_allclose(blocks["jacobian_pre"], fd, atol=1e-8)
    assert np.max(np.abs(blocks["jacobian_pre"] @ np.ones(4))) < 1e-12  # 1 -> 0, not 1
    monkeypatch.undo()
    assert np.allclose(placement.residual_placement(weight, x)["jacobian_pre"] @ np.ones(4), 1)


def test_rms_by_the_standard_deviation_divides_by_the_spread_about_the_mean(monkeypatch):
    x = np.array([1.0, 2.0, 4.0, 5.0])
    chapter15.rms_by_the_standard_deviation(monkeypatch.setattr)
    np.testing.assert_allclose(rms_ablation.rms_normalize(x), x / x.std(), rtol=1e-15)
    monkeypatch.undo()
    assert rms_ablation.rms_normalize is rms_normalize


def test_matrix_work_in_multiply_adds_halves_every_part(monkeypatch):
    right = block_flops_per_token(4096, 11008, 2048)
    chapter15.matrix_work_in_multiply_adds(monkeypatch.setattr)
    wrong = norm_cost.block_flops_per_token(4096, 11008, 2048)
    assert wrong == {name: value // 2 for name, value in right.items()}


def test_the_training_state_from_the_last_batch_ignores_the_others(monkeypatch):
    rng = np.random.default_rng(0)
    training = rng.normal(4.0, 2.0, size=(3, 8))
    evaluation = rng.normal(4.0, 2.0, size=8)
    last, eps = training[-1], estimator_shift.ESTIMATOR["eps"]
    own = (evaluation - evaluation.mean()) / np.sqrt(evaluation.var() + eps)
    expected = np.sqrt(
        np.mean(((evaluation - last.mean()) / np.sqrt(last.var() + eps) - own) ** 2)
    )
    chapter15.training_state_from_the_last_batch(monkeypatch.setattr)
    got = estimator_shift.discrepancy(np.random.default_rng(0), 3, 8, 0.0)
    assert got == pytest.approx(expected, rel=1e-14)
    monkeypatch.undo()
    assert estimator_shift.discrepancy(np.random.default_rng(0), 3, 8, 0.0) != got


def test_statistics_held_constant_give_a_gradient_not_orthogonal_to_the_weight(monkeypatch):
    problem = geometry.make_logistic_problem(seed=2, n=16, d=3)
    w = np.array([0.3, -1.0, 2.0])

    def cosine():
        g = geometry.scale_invariant_gradient(w, problem)
        return abs(w @ g) / (np.linalg.norm(w) * np.linalg.norm(g))

    assert cosine() < 1e-13
    chapter15.statistics_held_constant_in_the_backward_pass(monkeypatch.setattr)
    assert cosine() > 0.1


def test_weight_decay_not_scaled_by_the_learning_rate_shrinks_by_one_minus_wd(monkeypatch):
    problem = geometry.make_logistic_problem(seed=2, n=16, d=3)
    w0 = np.array([0.3, -1.0, 2.0])
    chapter15.weight_decay_not_scaled_by_the_learning_rate(monkeypatch.setattr)
    step = si.run_gradient_descent(w0, problem, lr=0.5, steps=1, weight_decay=0.02)
    g = geometry.scale_invariant_gradient(w0, problem)
    np.testing.assert_allclose(step.weights[1], 0.98 * w0 - 0.5 * g, rtol=1e-14)
    monkeypatch.undo()
    assert si.run_gradient_descent is geometry.run_gradient_descent


def test_eps_outside_the_root_reaches_every_binding_of_the_one_root(monkeypatch):
    import importlib

    from trainable_harness import normalization
    from trainable_harness.layers import layer_norm

    modules = [  # modules that bound the root by name
        importlib.import_module(f"trainable_harness.{name}")
        for name in ("layers.standardize", "layers.folding", "mlp.layers", "small_batch.fixes")
    ]

    x = np.array([[1.0, 2.0, 4.0, 7.0]])
    right = layer_norm(x, np.ones(4), np.zeros(4), eps=0.5)
    chapter15.eps_outside_the_root(monkeypatch.setattr)
    assert normalization.root_of_sum(np.array([4.0]), 1.0).tolist() == [3.0]
    for module in modules:
        assert module.root_of_sum is normalization.root_of_sum
    assert np.max(np.abs(layer_norm(x, np.ones(4), np.zeros(4), eps=0.5) - right)) > 1e-3
    monkeypatch.undo()
    np.testing.assert_array_equal(layer_norm(x, np.ones(4), np.zeros(4), eps=0.5), right)


def test_rms_norm_subtracting_the_mean_is_the_centered_map(monkeypatch):
    from trainable_harness import normalization

    x = np.array([1.0, 2.0, 4.0, 7.0])
    chapter15.rms_norm_subtracting_the_mean(monkeypatch.setattr)
    np.testing.assert_allclose(normalization.rms_normalize(x), centered_normalize(x))
    assert abs(np.mean(normalization.rms_normalize(x))) < 1e-15
    assert rms_ablation.rms_normalize is normalization.rms_normalize
