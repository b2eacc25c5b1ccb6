"""Tests of the small-batch instruments of chapter 16 (trainable_harness.small_batch)."""

import numpy as np
import pytest

from trainable_harness import small_batch
from trainable_harness.errors import (
    DegenerateNormalizationError,
    NegativeEpsilonError,
    NonFiniteInputError,
    ResultOverflowError,
    ShapeError,
    TrainableError,
)
from trainable_harness.layers import batch_norm, group_norm
from trainable_harness.small_batch import (
    CHANNEL_MEANS,
    CHANNELS,
    GROUPS,
    INDEPENDENT_VARIANCE,
    SHARED_VARIANCE,
    SmallBatchError,
    batch_population_variances,
    batch_renorm_train,
    draw_activations,
    expected_batch_variance,
    ghost_batch_norm_train,
    group_norm_batch_gaps,
    group_norm_train,
    group_population_eval,
    mean_error_theory,
    population_eval,
    small_batch_sweep,
    statistic_errors,
    synchronized_statistics,
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

    monkeypatch.setattr(small_batch, "group_norm", pooled)
    gaps = group_norm_batch_gaps(draw_activations(RNG, repeats=2, batch=4))
    assert gaps["gap"] > 0.1 and gaps["batch_dependence"] > 0.05


def test_sweep_group_norm_fields():
    sweep = small_batch_sweep(seed=3, samples_per_size=64)
    assert np.all(sweep["group_gap"] == 0.0)
    assert np.all(sweep["group_batch_dependence"] == 0.0)
    assert sweep["group_distance"].shape == (7,)
    # Batch norm's gap falls about eightfold from B = 1 to 64; group norm's distance does
    # not depend on B (64 samples per size: a few percent of draw noise).
    spread = np.ptp(sweep["group_distance"]) / np.mean(sweep["group_distance"])
    assert spread < 0.2
    assert sweep["gap"][0] / sweep["gap"][-1] > 4


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


# --- mismatched devices, bad values, statistics beyond range --------------------------


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


def test_statistics_beyond_range_and_nan_are_refused_not_returned():
    X = draw_activations(RNG, repeats=2, batch=2)
    # Squares of 1e200 overflow: the variance was inf and train_mode's output all 0.
    for function in (train_mode, group_norm_train, statistic_errors, batch_population_variances):
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
