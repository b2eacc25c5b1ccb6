"""Tests of trainable_harness.small_batch.groups: group norm's gap and batch dependence."""

import numpy as np
import pytest

from trainable_harness.errors import (
    ShapeError,
)
from trainable_harness.layers import batch_norm, group_norm
from trainable_harness.small_batch import (
    CHANNEL_MEANS,
    CHANNELS,
    GROUPS,
    INDEPENDENT_VARIANCE,
    SHARED_VARIANCE,
    SmallBatchError,
    draw_activations,
    group_norm_batch_gaps,
    group_norm_train,
    group_population_eval,
    groups,
)

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("num_groups", [1, 2, 4, 8])
def test_group_norm_train_equals_the_harness_layer_per_repeat(num_groups):
    X = draw_activations(RNG, repeats=3, batch=5)
    ours = group_norm_train(X, num_groups=num_groups)
    for r in range(3):
        reference = group_norm(X[r], np.ones(CHANNELS), np.zeros(CHANNELS), num_groups=num_groups)
        # Two ways of computing the same moments of 16 to 128 values below 10.
        np.testing.assert_allclose(ours[r], reference, rtol=0, atol=1e-13)


def test_group_population_eval_uses_each_groups_mixture_statistics():
    X = draw_activations(RNG, repeats=2, batch=3)
    ours = group_population_eval(X, num_groups=2)
    # Naive: each group of 4 consecutive channels, one value at a time.
    for g in range(2):
        means = CHANNEL_MEANS[4 * g : 4 * g + 4]
        mean = sum(means) / 4
        variance = SHARED_VARIANCE + INDEPENDENT_VARIANCE
        variance += sum((m - mean) ** 2 for m in means) / 4
        for c in range(4 * g, 4 * g + 4):
            expected = (X[:, :, c] - mean) / np.sqrt(variance + 1e-5)
            np.testing.assert_allclose(ours[:, :, c], expected, rtol=1e-15, atol=1e-15)


def test_group_population_eval_is_group_norm_in_the_limit_of_many_values():
    # The per-sample statistics of a group converge to the population ones only as the
    # group holds more independent offsets: with all 8 channels in one group (8 offsets
    # of variance 1 per sample), group norm is closer to the population output than
    # with 4 groups of 2 channels.
    X = draw_activations(np.random.default_rng(11), repeats=64, batch=4)
    distance = {
        g: np.sqrt(np.mean((group_norm_train(X, g) - group_population_eval(X, g)) ** 2))
        for g in (1, 4)
    }
    assert distance[1] < 0.75 * distance[4]


def test_group_norm_gap_and_batch_dependence_are_exactly_zero():
    for batch in (1, 3, 8):
        X = draw_activations(RNG, repeats=2, batch=batch)
        assert group_norm_batch_gaps(X) == {"gap": 0.0, "batch_dependence": 0.0}


def test_group_norm_gaps_see_a_layer_that_pools_the_batch(monkeypatch):
    # The instrument is not zero by construction: with batch norm in group norm's place,
    # both differences are far from zero.
    def pooled(X, gamma, beta, *, num_groups, eps):
        return batch_norm(X, gamma, beta, eps=eps)

    monkeypatch.setattr(groups, "group_norm", pooled)  # where group_norm_batch_gaps looks
    gaps = group_norm_batch_gaps(draw_activations(RNG, repeats=2, batch=4))
    assert gaps["gap"] > 0.1 and gaps["batch_dependence"] > 0.05


@pytest.mark.parametrize("bad", [0, 3, 16, 2.0, True, "4"])
def test_bad_num_groups_raise_naming_the_parameter(bad):
    X = draw_activations(RNG, repeats=2, batch=2)
    for function in (group_norm_train, group_population_eval, group_norm_batch_gaps):
        with pytest.raises(SmallBatchError, match="num_groups"):
            function(X, num_groups=bad)


def test_group_norm_gaps_need_two_repeats_and_a_5d_batch():
    with pytest.raises(SmallBatchError, match="repeats"):
        group_norm_batch_gaps(draw_activations(RNG, repeats=1, batch=4))
    with pytest.raises(ShapeError):
        group_norm_batch_gaps(np.zeros((2, 4, CHANNELS, 4)))
    assert GROUPS == 4 and CHANNELS % GROUPS == 0
