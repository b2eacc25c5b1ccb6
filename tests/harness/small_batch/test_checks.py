"""trainable_harness.small_batch.checks: counts, batch moments and outputs refused by name."""

import numpy as np
import pytest

from trainable_harness.errors import (
    DegenerateNormalizationError,
    ResultOverflowError,
    SmallBatchError,
)
from trainable_harness.small_batch.checks import (
    _batch_moments,
    _finite_output,
    _per_channel,
    _positive_integer,
)


def test_positive_integers_pass_and_others_are_refused_naming_the_parameter():
    assert _positive_integer(3, "repeats") == 3
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(SmallBatchError, match=r"repeats \(a positive integer\)"):
            _positive_integer(bad, "repeats")


def test_batch_moments_are_per_channel_over_batch_and_space_with_the_population_variance():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 3, 4, 5, 5))  # (repeats, B, C, H, W)
    before = X.copy()
    mean, variance = _batch_moments(X)
    assert mean.shape == variance.shape == (2, 1, 4, 1, 1)
    for repeat in range(2):
        for channel in range(4):
            values = X[repeat, :, channel].ravel()
            assert mean[repeat, 0, channel, 0, 0] == pytest.approx(values.mean(), rel=1e-15)
            # The population variance (divided by B H W, ddof=0), as batch norm normalizes.
            assert variance[repeat, 0, channel, 0, 0] == pytest.approx(
                values.var(ddof=0), rel=1e-14
            )
    np.testing.assert_array_equal(X, before)


def test_batch_moments_beyond_float64_are_refused():
    X = np.full((1, 2, 1, 1, 1), 1e200)
    X[0, 1] = -1e200
    with pytest.raises(ResultOverflowError, match="overflows float64"):
        _batch_moments(X)


def test_a_finite_output_is_returned_as_it_is():
    Y = np.ones(3)
    assert _finite_output(Y, 1e-5, np.ones(3), "batch norm") is Y


def test_a_zero_variance_at_eps_zero_is_named_as_such():
    Y = np.array([np.nan, 0.0])
    with pytest.raises(DegenerateNormalizationError, match=r"^batch renorm with eps = 0"):
        _finite_output(Y, 0.0, np.array([0.0, 1.0]), "batch renorm")


def test_an_infinite_output_with_eps_is_a_range_error():
    with pytest.raises(ResultOverflowError, match=r"^group norm: an output is beyond"):
        _finite_output(np.array([np.inf]), 1e-5, np.array([0.0]), "group norm")


def test_per_channel_values_broadcast_over_repeats_batch_and_space():
    gamma = _per_channel([1, 2, 3])
    assert gamma.shape == (1, 1, 3, 1, 1) and gamma.dtype == np.float64
