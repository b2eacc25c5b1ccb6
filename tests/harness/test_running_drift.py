"""Tests of the drifting running-mean experiment (trainable_harness.running_drift)."""

import numpy as np
import pytest

from trainable_harness.errors import TrainableError
from trainable_harness.running_drift import drifting_running_means, lag_and_noise


def test_without_drift_or_noise_every_momentum_converges_to_the_mean():
    # std 0 and no drift: the average approaches 5 geometrically from its start at 0.
    errors = drifting_running_means(
        seed=0, momenta=(0.5, 1.0), start_mean=5.0, end_mean=5.0, std=0.0, batches=60
    )
    np.testing.assert_allclose(errors["final_error"], [5 * 0.5**60, 0.0], atol=1e-15)
    np.testing.assert_allclose(errors["merged_error"], errors["final_error"], atol=1e-15)


def test_noise_free_ramp_lag_matches_the_formula():
    # std 0: after many batches the error against the current mean is the lag alone.
    errors = drifting_running_means(seed=0, momenta=(0.3,), std=0.0, batches=400)
    lag, noise = lag_and_noise(0.3, batches=400, std=0.0)
    assert noise == 0.0
    np.testing.assert_allclose(errors["final_error"][0], lag, rtol=1e-9)


@pytest.mark.parametrize(
    "kwargs",
    [{"momenta": (0.0,)}, {"momenta": (1.5,)}, {"batches": 1}, {"batch_size": 1.5}, {"x": 1}],
)
def test_bad_settings_raise(kwargs):
    with pytest.raises(TrainableError):
        drifting_running_means(seed=0, **kwargs)
