"""Tests of the counted normalizations and block work (trainable_harness.transformer_cost)."""

import numpy as np
import pytest

from trainable_harness.errors import (
    NegativeEpsilonError,
    NonFiniteInputError,
    ResultOverflowError,
    ShapeError,
)
from trainable_harness.transformer_cost import (
    OpCounter,
    block_flops_per_token,
    counted_layer_norm,
    counted_rms_norm,
    layer_norm_counts,
    rms_norm_counts,
)


@pytest.mark.parametrize("d", [2, 3, 64, 4096])
def test_counts_follow_the_closed_forms(d):
    # LayerNorm: sums 2(d - 1), centering d, squares d, gamma d, beta d, x_hat d, and
    # four scalar operations (1/d twice, + eps, sqrt, reciprocal) -> 7d + 3.
    assert layer_norm_counts(d)["total"] == 7 * d + 3
    # RMSNorm: squares d, sum d - 1, x/rms d, gamma d, and four scalars -> 4d + 3.
    assert rms_norm_counts(d)["total"] == 4 * d + 3


def test_counted_maps_compute_the_right_thing():
    rng = np.random.default_rng(0)
    x = rng.normal(size=6) * 3 + 5
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    ops = OpCounter()
    ln = counted_layer_norm(x, gamma, beta, 0.0, ops)
    naive = gamma * (x - x.mean()) / np.sqrt(np.mean((x - x.mean()) ** 2)) + beta
    np.testing.assert_allclose(ln, naive, rtol=1e-13)
    rms = counted_rms_norm(x, gamma, 0.0, OpCounter())
    np.testing.assert_allclose(rms, gamma * x / np.sqrt(np.mean(x * x)), rtol=1e-13)


def test_an_integer_token_is_counted_in_float64():
    # In int64, 2**40 squared wrapped around: RMSNorm gave [1.55e12, 1.41], not [1.41, 1.3e-12].
    x = np.array([2**40, 1])
    expected = counted_rms_norm(x.astype(np.float64), np.ones(2), 0.0, OpCounter())
    np.testing.assert_array_equal(counted_rms_norm(x, np.ones(2), 0.0, OpCounter()), expected)
    x32, gamma32 = x.astype(np.float32), np.ones(2, np.float32)  # a float token keeps its dtype
    assert counted_rms_norm(x32, gamma32, 0.0, OpCounter()).dtype == np.float32


def test_block_flops_and_errors():
    parts = block_flops_per_token(8, 16, 4)
    assert parts["total"] == 8 * 64 + 4 * 8 * 4 + 6 * 8 * 16
    with pytest.raises(ShapeError, match="d must be"):
        layer_norm_counts(1)
    with pytest.raises(ShapeError, match="context"):
        block_flops_per_token(8, 16, 0)


def test_counted_maps_refuse_statistics_beyond_range_and_bad_tokens():
    # The squares of 1e200 overflow: the variance was inf and the output silently beta.
    with pytest.raises(ResultOverflowError, match="counted LayerNorm"):
        counted_layer_norm(np.array([1e200, -1e200]), np.ones(2), np.zeros(2), 0.0, OpCounter())
    with pytest.raises(ResultOverflowError, match="counted RMSNorm"):
        counted_rms_norm(np.array([1e-200, 0.0]), np.ones(2), 0.0, OpCounter())
    with pytest.raises(ShapeError, match=r"gamma has shape \(3,\); it must match x \(2,\)"):
        counted_rms_norm(np.array([1.0, 2.0]), np.ones(3), 0.0, OpCounter())
    with pytest.raises(NonFiniteInputError, match="x holds nan"):
        counted_rms_norm(np.array([1.0, np.nan]), np.ones(2), 0.0, OpCounter())
    with pytest.raises(NegativeEpsilonError):
        layer_norm_counts(8, eps=-1.0)


@pytest.mark.parametrize(
    ("d", "hidden", "context"), [(4, 8, 2.5), (float("nan"), 8, 2), (4, 8, 0)]
)
def test_block_flops_refuse_sizes_that_are_not_whole_numbers(d, hidden, context):
    # context 2.5 used to be truncated to 2; nan raised Python's ValueError.
    with pytest.raises(ShapeError, match="must be an integer"):
        block_flops_per_token(d, hidden, context)
