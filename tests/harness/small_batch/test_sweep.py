"""Tests of trainable_harness.small_batch.sweep: the sweep over batch sizes."""

import numpy as np

from trainable_harness.small_batch import (
    draw_activations,
    mean_error_theory,
    small_batch_sweep,
    statistic_errors,
)

RNG = np.random.default_rng(0)


def test_mean_error_matches_the_model_and_the_sweep_shapes():
    X = draw_activations(np.random.default_rng(5), repeats=2000, batch=2)
    # 2000 x 8 batch means: relative standard error of an RMS about 1/sqrt(32000) = 0.6%.
    assert abs(statistic_errors(X)["mean"] / mean_error_theory(2) - 1) < 0.03
    sweep = small_batch_sweep(seed=1, samples_per_size=64)
    assert sweep["gap"].shape == sweep["mean_error"].shape == (7,)
    assert np.all(np.diff(sweep["gap"]) < 0.05)  # no strong rise with B


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
