"""Confidence intervals of a mean: the t quantile without scipy, and the percentile bootstrap."""

import math

import numpy as np
import pytest

from claimbook.claims.compare import BOOTSTRAP_RESAMPLES, mean_interval, t_quantile
from claimbook.errors import IntervalError

# Two-sided 95% and 99% critical values of Student's t from published tables.
TABLE = [
    (0.975, 1, 12.7062047),
    (0.975, 2, 4.30265273),
    (0.975, 3, 3.18244631),
    (0.975, 9, 2.26215716),
    (0.975, 19, 2.09302405),
    (0.975, 30, 2.04227246),
    (0.995, 4, 4.60409487),
    (0.995, 29, 2.75638590),
    (0.95, 5, 2.01504837),
    (0.975, 1000, 1.96233908),
]


@pytest.mark.parametrize(("probability", "dof", "expected"), TABLE)
def test_t_quantile_matches_the_tables(probability, dof, expected):
    assert t_quantile(probability, dof) == pytest.approx(expected, rel=1e-8)


def test_t_quantile_approaches_the_normal_quantile():
    # For large dof, t_p = z + (z^3 + z) / (4 dof) + O(dof^-2), with z_{0.975} = 1.959963985.
    z, dof = 1.959963985, 100_000
    assert t_quantile(0.975, dof) == pytest.approx(z + (z**3 + z) / (4 * dof), rel=1e-9)


@pytest.mark.parametrize(("probability", "dof"), [(0.5, 3), (1.0, 3), (0.975, 0), (0.975, 2.5)])
def test_t_quantile_refuses_bad_input(probability, dof):
    with pytest.raises(IntervalError):
        t_quantile(probability, dof)


def test_t_interval_by_hand():
    values = [1.0, 2.0, 3.0, 4.0]
    # mean 2.5, s = sqrt(5/3), t_{0.975,3} = 3.18244631
    half = 3.18244631 * math.sqrt(5 / 3) / 2
    low, high = mean_interval(values, level=0.95, method="t")
    assert (low, high) == pytest.approx((2.5 - half, 2.5 + half), rel=1e-8)


def test_t_interval_covers_the_mean_at_about_its_level():
    # 2000 intervals from 10 normal draws each: coverage 0.95 +- 3 * 0.0049.
    rng = np.random.default_rng(20261130)
    covered = 0
    for _ in range(2000):
        low, high = mean_interval(rng.normal(3.0, 2.0, 10), level=0.95, method="t")
        covered += low <= 3.0 <= high
    assert abs(covered / 2000 - 0.95) < 0.015


def test_bootstrap_is_reproducible_and_brackets_the_mean():
    values = np.random.default_rng(1).normal(0.0, 1.0, 30)
    first = mean_interval(values, level=0.9, method="bootstrap", bootstrap_seed=7)
    assert first == mean_interval(values, level=0.9, method="bootstrap", bootstrap_seed=7)
    assert first != mean_interval(values, level=0.9, method="bootstrap", bootstrap_seed=8)
    assert first[0] < np.mean(values) < first[1]
    assert BOOTSTRAP_RESAMPLES == 10_000


def test_inputs_are_not_mutated():
    values = np.array([3.0, 1.0, 2.0])
    mean_interval(values, level=0.95, method="bootstrap", bootstrap_seed=1)
    assert values.tolist() == [3.0, 1.0, 2.0]


@pytest.mark.parametrize(
    ("values", "options", "error"),
    [
        ([1.0], {"method": "t"}, IntervalError),
        ([1.0, float("nan")], {"method": "t"}, IntervalError),
        ([1.0, 2.0], {"method": "z"}, IntervalError),
        ([1.0, 2.0], {"method": "bootstrap"}, IntervalError),
    ],
)
def test_interval_refuses_bad_input(values, options, error):
    with pytest.raises(error):
        mean_interval(values, level=0.95, **options)
