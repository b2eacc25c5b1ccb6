"""Tests of the drifting running-mean experiment (trainable_harness.running_drift)."""

import numpy as np
import pytest

from trainable_harness.errors import (
    DriftSettingError,
    ResultOverflowError,
    SeedError,
    TrainableError,
)
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


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        # A misspelled setting used to be ignored: batch=3 computed with batch_size 32.
        ({"batch": 3}, r"unknown settings \['batch'\]"),
        ({"std": -1.0}, "std must be >= 0"),
        ({"start_mean": float("nan")}, "start_mean must be a finite real number"),
        ({"batches": float("nan")}, "batches must be an integer >= 2, got nan"),
        ({"batch_size": 0}, "batch_size must be an integer >= 2"),
    ],
)
def test_lag_and_noise_refuse_unknown_and_bad_settings_by_name(kwargs, message):
    with pytest.raises(DriftSettingError, match=message):
        lag_and_noise(0.1, **kwargs)


def test_momentum_and_results_beyond_range_are_refused():
    with pytest.raises(DriftSettingError, match="momentum must be a finite real number"):
        lag_and_noise("0.1")
    with pytest.raises(ResultOverflowError, match="beyond float64's range"):
        lag_and_noise(1e-320)  # the lag s (1 - m) / m is about 1e318
    with pytest.raises(ResultOverflowError, match="beyond float64's range"):
        drifting_running_means(seed=0, momenta=(0.1,), start_mean=1e308, end_mean=-1e308)
    with pytest.raises(DriftSettingError, match="momenta must be a non-empty 1-D"):
        drifting_running_means(seed=0, momenta=0.1)


def test_a_negative_seed_is_named():
    with pytest.raises(SeedError, match="seed must be an integer >= 0, got -1"):
        drifting_running_means(seed=-1)  # numpy's ValueError
