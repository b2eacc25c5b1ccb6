"""Tests of trainable_harness.small_batch.model: draws, counts and the batch variance."""

import numpy as np
import pytest

from trainable_harness.errors import (
    ShapeError,
    TrainableError,
)
from trainable_harness.small_batch import (
    CHANNELS,
    INDEPENDENT_VARIANCE,
    SHARED_VARIANCE,
    SmallBatchError,
    batch_population_variances,
    draw_activations,
    expected_batch_variance,
    mean_error_theory,
    train_mode,
)

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_bad_counts_raise(bad):
    with pytest.raises(TrainableError):
        draw_activations(RNG, repeats=bad, batch=2)
    with pytest.raises(ShapeError):
        train_mode(np.zeros((2, 3)))


def test_batch_population_variances_match_numpy_per_repeat_and_channel():
    X = draw_activations(RNG, repeats=3, batch=4)
    ours = batch_population_variances(X)
    for r in range(3):
        for c in range(CHANNELS):
            assert ours[r, c] == pytest.approx(np.var(X[r, :, c]), rel=1e-14)


def test_expected_batch_variance_is_total_minus_the_variance_of_the_mean():
    # E[(1/m) sum (x - mean)^2] = (1/m) sum Var(x) - Var(mean), with Var(mean) the batch
    # mean's error squared (tau^2 / B + sigma^2 / m).
    total = SHARED_VARIANCE + INDEPENDENT_VARIANCE
    for batch in (1, 2, 3, 64):
        assert expected_batch_variance(batch) == pytest.approx(
            total - mean_error_theory(batch) ** 2, rel=1e-14
        )
    for bad in (0, -2, 1.5, True):
        with pytest.raises(SmallBatchError, match="batch"):
            expected_batch_variance(bad)
