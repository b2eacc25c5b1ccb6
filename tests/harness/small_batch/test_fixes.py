"""Tests of trainable_harness.small_batch.fixes: renormalization, ghost and synchronized BN."""

import numpy as np
import pytest

from trainable_harness.errors import (
    NonFiniteInputError,
    ResultOverflowError,
    ShapeError,
    TrainableError,
)
from trainable_harness.small_batch import (
    SmallBatchError,
    batch_renorm_train,
    draw_activations,
    ghost_batch_norm_train,
    mean_error_theory,
    population_eval,
    small_batch_sweep,
    synchronized_statistics,
    train_mode,
)

RNG = np.random.default_rng(0)


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


def test_synchronized_statistics_refuse_devices_with_different_channels():
    X = draw_activations(RNG, repeats=1, batch=4)[0]
    # The merge used to stop at the shorter device silently: 4 channels of 8 came back.
    with pytest.raises(ShapeError, match=r"device batch 1 has 4 channels.*before it have 8"):
        synchronized_statistics([X[:2], X[2:, :4]])
    with pytest.raises(ShapeError, match=r"device batch 1 has shape \(0, 8, 4, 4\)"):
        synchronized_statistics([X[:2], X[:0]])
    with pytest.raises(NonFiniteInputError, match="device batch 0 holds nan"):
        synchronized_statistics([np.where(X[:2] > 100, 0, np.nan), X[2:]])
    with pytest.raises(ShapeError, match="one array of shape"):
        synchronized_statistics(X)
    with pytest.raises(ResultOverflowError, match="device batch 0"):
        synchronized_statistics([X[:2] * 1e200, X[2:]])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda X: ghost_batch_norm_train(X, float("nan")), "ghost_size"),
        (lambda X: batch_renorm_train(X, "3", 5.0), "r_max must be a number >= 1"),
        (lambda X: batch_renorm_train(X, 3.0, float("nan")), "d_max must be a number >= 0"),
        (lambda X: draw_activations(RNG, repeats=float("inf"), batch=2), "repeats"),
        (lambda X: mean_error_theory(0), "batch"),
        (lambda X: small_batch_sweep(seed=0.5), "seed must be an integer"),
    ],
)
def test_settings_that_used_to_raise_from_python_or_pass_silently(call, message):
    X = draw_activations(RNG, repeats=2, batch=2)
    with pytest.raises(SmallBatchError, match=message):
        call(X)


def test_renorm_limits_beyond_float64_are_infinite_limits():
    # 1.0 / 10**400 raised Python's OverflowError.
    X = draw_activations(RNG, repeats=2, batch=2)
    np.testing.assert_array_equal(
        batch_renorm_train(X, 10**400, 10**400), batch_renorm_train(X, np.inf, np.inf)
    )


@pytest.mark.parametrize("device_batches", [None, 3.0, "abc"])
def test_synchronized_statistics_names_a_non_list_of_batches(device_batches):
    # Before: "'NoneType' object is not iterable" from the loop, naming no parameter.
    with pytest.raises(TypeError, match="device_batches must be a list"):
        synchronized_statistics(device_batches)
