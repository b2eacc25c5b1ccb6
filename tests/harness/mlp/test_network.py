"""Tests of trainable_harness.mlp.network: the whole network's gradient, replicas, training."""

import numpy as np
import pytest
from finite_differences import FD_TOL, numeric_gradient

from trainable_harness.errors import (
    ShapeError,
    TrainableError,
)
from trainable_harness.mlp import (
    init_mlp,
    loss_and_gradients,
    make_teacher_task,
    probe_gradient_direction,
    train_full_batch,
)


@pytest.mark.parametrize("batch_norm_on", [False, True])
def test_whole_network_gradient(batch_norm_on):
    task = make_teacher_task(seed=2, n=12)
    params = init_mlp(seed=3, batch_norm=batch_norm_on)
    if batch_norm_on:  # move gamma, beta off their initial values to test them generically
        params["gamma1"] = params["gamma1"] + 0.3
        params["beta2"] = params["beta2"] - 0.2
    _, grads = loss_and_gradients(params, task, batch_norm_on)
    for name in (
        "W1",
        "W3",
        "b3",
        "gamma1" if batch_norm_on else "b1",
        "beta2" if batch_norm_on else "b2",
    ):

        def loss_of(value, name=name):
            return float(loss_and_gradients({**params, name: value}, task, batch_norm_on)[0])

        np.testing.assert_allclose(
            grads[name], numeric_gradient(loss_of, params[name]), atol=FD_TOL, err_msg=name
        )


def test_replicas_do_not_mix():
    task = make_teacher_task(seed=4, n=32)
    both = train_full_batch(task, seed=5, batch_norm=True, learning_rates=[0.1, 1e5], steps=8)
    alone = train_full_batch(task, seed=5, batch_norm=True, learning_rates=[0.1], steps=8)
    np.testing.assert_allclose(both.losses[:, 0], alone.losses[:, 0], rtol=1e-12)


def test_bad_settings_raise_specific_errors():
    task = make_teacher_task(0, n=8)
    with pytest.raises(TrainableError, match="learning_rates"):
        train_full_batch(task, seed=0, batch_norm=False, learning_rates=[0.0], steps=1)
    with pytest.raises(TrainableError, match="steps"):
        train_full_batch(task, seed=0, batch_norm=False, learning_rates=[1.0], steps=0)
    with pytest.raises(TrainableError, match="step_sizes"):
        probe_gradient_direction(init_mlp(0, False), task, False, [-1.0])
    with pytest.raises(ShapeError, match="n must be"):
        make_teacher_task(0, n=1)
