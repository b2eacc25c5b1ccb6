"""Tests of trainable_harness.mlp.probes: the line probe along the gradient."""

import numpy as np
import pytest

from trainable_harness.errors import (
    MLPError,
    SeedError,
)
from trainable_harness.mlp import (
    init_mlp,
    label_entropy,
    make_teacher_task,
    probe_gradient_direction,
)


def test_label_entropy_and_probe():
    assert label_entropy(np.array([1, 1, 1])) == 0.0
    task = make_teacher_task(0, n=16)
    probe = probe_gradient_direction(init_mlp(0, True), task, True, [0.5, 1.0])
    assert probe.loss_variation >= 0 and probe.effective_smoothness > 0


def test_a_probe_that_cannot_move_or_measure_is_refused_and_seeds_are_checked():
    task = make_teacher_task(0, n=16)
    # alpha = 5e-324 moves nothing: the probe reported a smoothness of 0 (or 0 / 0 = NaN).
    with pytest.raises(MLPError, match=r"5e-324 is too small to move the parameters"):
        probe_gradient_direction(init_mlp(0, True), task, True, [5e-324])
    with pytest.raises(SeedError, match="seed must be an integer >= 0, got -1"):
        init_mlp(-1, True)
    with pytest.raises(SeedError, match="got -2"):
        make_teacher_task(-2)
