"""Tests of trainable_harness.small_batch.train_eval: train mode, eval mode and their gap."""

import numpy as np
import pytest

from trainable_harness.errors import (
    DegenerateNormalizationError,
    NegativeEpsilonError,
    NonFiniteInputError,
    ResultOverflowError,
    ShapeError,
)
from trainable_harness.layers import batch_norm
from trainable_harness.small_batch import (
    CHANNELS,
    batch_population_variances,
    draw_activations,
    group_norm_train,
    population_eval,
    statistic_errors,
    train_eval_gap,
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


def test_statistics_beyond_range_and_nan_are_refused_not_returned():
    X = draw_activations(RNG, repeats=2, batch=2)
    # Squares of 1e200 overflow: the variance was inf and train_mode's output all 0. The
    # standardizations scale before squaring (layers.standardize), so they standardize
    # X * 1e200 as they do X (at eps = 0, which is in X's units); the statistics
    # themselves are beyond range and refused.
    for function in (train_mode, group_norm_train):
        np.testing.assert_allclose(function(X * 1e200, eps=0.0), function(X, eps=0.0), atol=1e-13)
    for function in (statistic_errors, batch_population_variances):
        with pytest.raises(ResultOverflowError, match="overflow"):
            function(X * 1e200)
    bad = X.copy()
    bad[0, 0, 0, 0, 0] = np.nan
    with pytest.raises(NonFiniteInputError, match=r"X holds nan at index \(0, 0, 0, 0, 0\)"):
        train_mode(bad)
    with pytest.raises(DegenerateNormalizationError, match="eps = 0"):
        train_mode(np.ones_like(X), eps=0.0)
    with pytest.raises(NegativeEpsilonError):
        population_eval(X, eps=-1.0)


def test_train_eval_gap_refuses_an_output_of_another_shape():
    X = draw_activations(RNG, repeats=2, batch=2)
    # A (1,)-shaped output used to broadcast against every value of X.
    with pytest.raises(ShapeError, match=r"train_output has shape \(1,\)"):
        train_eval_gap(np.zeros(1), X)
