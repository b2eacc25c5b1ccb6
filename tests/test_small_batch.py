"""Tests of the small-batch instruments of chapter 16 (trainable_harness.small_batch)."""

import numpy as np
import pytest

from trainable_harness.errors import ShapeError, TrainableError
from trainable_harness.layers import batch_norm
from trainable_harness.small_batch import (
    CHANNELS,
    batch_renorm_train,
    draw_activations,
    ghost_batch_norm_train,
    mean_error_theory,
    population_eval,
    small_batch_sweep,
    statistic_errors,
    synchronized_statistics,
    train_mode,
)

RNG = np.random.default_rng(0)


def test_train_mode_equals_the_harness_layer_per_repeat():
    X = draw_activations(RNG, repeats=3, batch=4)
    ours = train_mode(X)
    for r in range(3):
        reference = batch_norm(X[r], np.ones(CHANNELS), np.zeros(CHANNELS))
        # Two summation orders over 64 values: a few roundings of outputs below 5.
        np.testing.assert_allclose(ours[r], reference, atol=1e-13)


def test_batch_of_one_is_instance_norm_and_differs_from_eval():
    X = draw_activations(RNG, repeats=2, batch=1)
    per_map = X - X.mean(axis=(3, 4), keepdims=True)
    per_map = per_map / np.sqrt(np.mean(per_map**2, axis=(3, 4), keepdims=True) + 1e-5)
    np.testing.assert_allclose(train_mode(X), per_map, atol=1e-13)
    assert np.sqrt(np.mean((train_mode(X) - population_eval(X)) ** 2)) > 0.1


def test_renorm_limits():
    X = draw_activations(RNG, repeats=4, batch=2)
    # r_max = 1 and d_max = 0 is plain batch norm.
    np.testing.assert_allclose(batch_renorm_train(X, 1.0, 0.0), train_mode(X), atol=1e-13)
    np.testing.assert_allclose(
        batch_renorm_train(X, np.inf, np.inf), population_eval(X), atol=1e-13
    )
    with pytest.raises(TrainableError, match="r_max"):
        batch_renorm_train(X, 0.5, 1.0)
    with pytest.raises(TrainableError, match="d_max"):
        batch_renorm_train(X, 2.0, -1.0)


def test_ghost_batches_normalize_each_slice_alone():
    X = draw_activations(RNG, repeats=2, batch=8)
    ghost = ghost_batch_norm_train(X, 4)
    np.testing.assert_array_equal(ghost[:, :4], train_mode(X[:, :4]))
    np.testing.assert_array_equal(ghost[:, 4:], train_mode(X[:, 4:]))
    with pytest.raises(TrainableError, match="ghost_size"):
        ghost_batch_norm_train(X, 3)


def test_synchronized_statistics_match_the_whole_batch():
    X = draw_activations(RNG, repeats=1, batch=12)[0]
    mean, variance = synchronized_statistics(np.split(X, [1, 5, 6]))  # uneven devices
    np.testing.assert_allclose(mean, X.mean(axis=(0, 2, 3)), rtol=0, atol=1e-14)
    np.testing.assert_allclose(variance, X.var(axis=(0, 2, 3)), rtol=1e-14)
    with pytest.raises(ShapeError):
        synchronized_statistics([])


def test_mean_error_matches_the_model_and_the_sweep_shapes():
    X = draw_activations(np.random.default_rng(5), repeats=2000, batch=2)
    # 2000 x 8 batch means: relative standard error of an RMS about 1/sqrt(32000) = 0.6%.
    assert abs(statistic_errors(X)["mean"] / mean_error_theory(2) - 1) < 0.03
    sweep = small_batch_sweep(seed=1, samples_per_size=64)
    assert sweep["gap"].shape == sweep["mean_error"].shape == (7,)
    assert np.all(np.diff(sweep["gap"]) < 0.05)  # no strong rise with B


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_counts_raise(bad):
    with pytest.raises(TrainableError):
        draw_activations(RNG, repeats=bad, batch=2)
    with pytest.raises(ShapeError):
        train_mode(np.zeros((2, 3)))
