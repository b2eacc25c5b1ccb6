"""Tests of trainable_harness.layers.safe_arithmetic: no spurious overflow (eval mode, folding)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from layer_reference import UNIT_ROUNDOFF

from trainable_harness.errors import ResultOverflowError
from trainable_harness.layers import BatchNormState, batch_norm_eval, fold_batch_norm_into_linear
from trainable_harness.layers.safe_arithmetic import _affine, _scaled_difference
from trainable_harness.normalization import root_of_sum


def test_eval_mode_and_folding_do_not_overflow_on_the_way():
    # x - running_mean = 2e308 overflows, but divided by sqrt(running_variance) = 1e10 it
    # is 2e298; running_variance + eps overflows, its root does not.
    state = BatchNormState(np.array([-1e308]), np.array([1e20]))
    Y = batch_norm_eval(np.array([[1e308]]), [1.0], [0.0], state, eps=0.0)
    np.testing.assert_allclose(Y, [[2e298]], rtol=4 * UNIT_ROUNDOFF)
    wide = BatchNormState(np.array([0.0]), np.array([1.7e308]))
    Y = batch_norm_eval(np.array([[1.3e154]]), [1.0], [0.0], wide, eps=1.7e308)
    np.testing.assert_allclose(Y, [[1.3e154 / math.sqrt(3.4) / 1e154]], rtol=8 * UNIT_ROUNDOFF)
    # gamma * x_hat overflows, beta brings it back: 1e308 * 2 - 1.5e308 = 5e307.
    unit = BatchNormState(np.array([0.0]), np.array([1.0]))
    Y = batch_norm_eval(np.array([[2.0]]), [1e308], [-1.5e308], unit, eps=0.0)
    np.testing.assert_allclose(Y, [[5e307]], rtol=4 * UNIT_ROUNDOFF)
    W, b = fold_batch_norm_into_linear(
        np.array([[1.0]]), [1e308], [1.0], [0.0], BatchNormState([-1e308], [4.0]), eps=0.0
    )
    # s = 1/sqrt(4) = 0.5 and b - running_mean = 2e308 (beyond range): b' = 1e308.
    np.testing.assert_array_equal(W, [[0.5]])
    np.testing.assert_allclose(b, [1e308], rtol=4 * UNIT_ROUNDOFF)


def test_results_beyond_range_are_refused_by_name_and_others_computed():
    state = BatchNormState(np.array([0.0]), np.array([0.0]))
    # 1e300 / 1e-150 = 1e450 is beyond float64: refused (it used to be returned as inf).
    with pytest.raises(ResultOverflowError, match=r"index \(0, 0\).*X = .*1e\+300.*eps = 1e-300"):
        batch_norm_eval(np.array([[1e300]]), [1.0], [0.0], state, eps=1e-300)
    # gamma = 0 makes any x_hat, even one beyond range, contribute exactly 0.
    Y = batch_norm_eval(np.array([[1e300]]), [0.0], [0.25], state, eps=1e-300)
    assert Y[0, 0] == 0.25
    # A tiny gamma brings x_hat = 1e450 back into range: y = 1e150, no longer inf.
    Y = batch_norm_eval(np.array([[1e300]]), [1e-300], [0.0], state, eps=1e-300)
    np.testing.assert_allclose(Y, [[1e150]], rtol=4 * UNIT_ROUNDOFF)
    # Folding: gamma / sqrt(eps) = 1e450 is beyond range, its product with W = 1e-300 not.
    W, b = fold_batch_norm_into_linear(
        np.array([[1e-300]]), [1e-300], [1e300], [0.0], state, eps=1e-300
    )
    np.testing.assert_allclose(W, [[1e150]], rtol=4 * UNIT_ROUNDOFF)
    np.testing.assert_allclose(b, [1e150], rtol=4 * UNIT_ROUNDOFF)
    with pytest.raises(ResultOverflowError, match=r"folded W'.*W = .*1e-10.*rescale W or gamma"):
        fold_batch_norm_into_linear(np.array([[1e-10]]), None, [1e300], [0.0], state, eps=1e-300)
    with pytest.raises(ResultOverflowError, match=r"folded bias b'.*rescale gamma, b and beta"):
        fold_batch_norm_into_linear(np.array([[0.0]]), [1.0], [1e300], [0.0], state, eps=1e-300)


BIG = np.finfo(np.float64).max


def test_each_step_takes_halved_operands_only_where_the_direct_form_overflows():
    # variance + eps overflows in the first entry only: 2 sqrt(v/4 + e/4) = sqrt(1.5 max).
    root = root_of_sum(np.array([BIG, 4.0]), 0.5 * BIG)
    np.testing.assert_allclose(root[0], math.sqrt(1.5) * math.sqrt(BIG), rtol=4 * UNIT_ROUNDOFF)
    assert root[1] == np.sqrt(4.0 + 0.5 * BIG)
    # a - b overflows in the first entry: (a/2 - b/2) / (d/2) is exact here.
    quotient = _scaled_difference(
        np.array([0.75 * BIG, 3.0]), np.array([-0.75 * BIG, 1.0]), np.array([2.0, 2.0])
    )
    np.testing.assert_array_equal(quotient, [0.75 * BIG, 1.0])
    # gamma * x_hat overflows and beta brings it back; gamma = 0 times inf is beta.
    Y = _affine(
        np.array([2.0, 0.0]), np.array([0.75 * BIG, np.inf]), np.array([-0.75 * BIG, 0.25])
    )
    np.testing.assert_array_equal(Y, [0.75 * BIG, 0.25])
