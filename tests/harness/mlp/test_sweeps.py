"""Tests of trainable_harness.mlp.sweeps: thresholds, caching, labels and settings."""

import numpy as np
import pytest

from trainable_harness.errors import (
    MLPError,
    ShapeError,
    UnknownChoiceError,
)
from trainable_harness.mlp import (
    init_mlp,
    label_entropy,
    learning_rate_sweep,
    loss_and_gradients,
    make_teacher_task,
    probe_along_training,
)


def test_divergence_is_marked_and_thresholds_follow_the_first_failure():
    sweep = learning_rate_sweep(0, False, learning_rates=[0.1, 0.2, 1e4], steps=10)
    assert np.isnan(sweep.final_losses[-1])
    assert sweep.largest_finite == 0.2 and sweep.largest_learning <= 0.2


def test_sweep_is_cached_and_read_only():
    a = learning_rate_sweep(1, True, learning_rates=[0.5, 1.0], steps=3)
    b = learning_rate_sweep(1, True, learning_rates=np.array([0.5, 1.0]), steps=3)
    assert a is b
    with pytest.raises(ValueError, match="read-only"):
        a.final_losses[0] = 0.0


def test_label_entropy_and_the_loss_refuse_labels_outside_the_classes():
    with pytest.raises(ShapeError, match=r"labels\[2\] = 4 is not a class index"):
        label_entropy(np.array([0, 1, 4]))  # bincount used to count a fifth class
    with pytest.raises(ShapeError, match=r"labels\[0\] = -1"):
        label_entropy(np.array([-1, 1]))  # numpy's bincount ValueError
    with pytest.raises(ShapeError, match="non-empty"):
        label_entropy(np.array([], dtype=np.int64))  # 0 / 0 = NaN
    task = make_teacher_task(0, n=8)
    bad = task._replace(labels=task.labels - 1)
    with pytest.raises(ShapeError, match="is not a class index"):
        loss_and_gradients(init_mlp(0, False), bad, False)
    with pytest.raises(MLPError, match=r"params lacks \['b1', 'b2'\]"):
        loss_and_gradients(init_mlp(0, True), task, False)


def test_settings_that_are_not_whole_numbers_are_refused():
    # int(1.5) used to train with seed 1 silently.
    with pytest.raises(MLPError, match=r"seed must be an integer >= 0, got 1\.5"):
        learning_rate_sweep(1.5, True, learning_rates=[0.5], steps=3)
    with pytest.raises(UnknownChoiceError, match="batch_norm must be True or False"):
        learning_rate_sweep(1, "yes", learning_rates=[0.5], steps=3)
    with pytest.raises(MLPError, match="lr must be > 0"):
        probe_along_training(0, True, lr=-0.5, steps=1)
