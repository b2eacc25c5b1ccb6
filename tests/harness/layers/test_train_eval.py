"""Tests of trainable_harness.layers.train_eval: batch norm in train and eval mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from layer_reference import FAST, channels, layer_cases, random_affine, random_batch

from trainable_harness.errors import InsufficientCountError, SingleValuePerChannelError
from trainable_harness.layers import BatchNormState, batch_norm_eval, batch_norm_train


def test_single_value_train_mode_with_population_estimator_updates_to_zero_variance():
    state = BatchNormState.initial(2, momentum=0.5, variance_estimator="population")
    Y, new = batch_norm_train(np.array([[4.0, -6.0]]), [1.0, 1.0], [0.25, 0.5], state)
    np.testing.assert_array_equal(Y, [[0.25, 0.5]])
    np.testing.assert_array_equal(new.running_mean, [2.0, -3.0])
    np.testing.assert_array_equal(new.running_variance, [0.5, 0.5])


@pytest.mark.parametrize("shape", [(1, 3), (1, 1, 3), (1, 3, 1, 1)])
def test_single_value_train_mode_with_sample_estimator_raises(shape):
    state = BatchNormState.initial(3)
    with pytest.raises(SingleValuePerChannelError, match="one value per channel"):
        batch_norm_train(np.ones(shape), np.ones(3), np.zeros(3), state)
    assert issubclass(SingleValuePerChannelError, InsufficientCountError)


def test_train_mode_normalizes_with_population_variance_whatever_the_estimator():
    X = random_batch((3, 4), seed=8)
    gamma, beta = np.ones(4), np.zeros(4)
    for estimator in ("sample", "population"):
        state = BatchNormState.initial(4, variance_estimator=estimator)
        Y, _ = batch_norm_train(X, gamma, beta, state, eps=0.0)
        # Population variance of a standardized column is 1 (to rounding).
        np.testing.assert_allclose(Y.var(axis=0), 1.0, rtol=1e-13)


@FAST
@given(layer_cases(kinds=("batch",)), st.integers(0, 2**32 - 1))
def test_eval_mode_is_deterministic_per_sample(case, seed):
    _, shape, _, data_seed = case
    X = random_batch(shape, data_seed)
    rng = np.random.default_rng(seed)
    C = channels(shape)
    state = BatchNormState(rng.normal(size=C), rng.uniform(0.1, 3.0, C))
    gamma, beta = random_affine(C, seed)
    Y = batch_norm_eval(X, gamma, beta, state)
    for k in range(shape[0]):
        # Element-wise arithmetic only: bit-identical whatever else is in the batch.
        np.testing.assert_array_equal(batch_norm_eval(X[k : k + 1], gamma, beta, state)[0], Y[k])


def test_eval_mode_uses_the_running_statistics_not_the_batch():
    state = BatchNormState(np.array([1.0]), np.array([4.0]))
    Y = batch_norm_eval(np.array([[1.0], [1.0], [5.0]]), [2.0], [0.5], state, eps=0.0)
    np.testing.assert_array_equal(Y.ravel(), [0.5, 0.5, 4.5])
