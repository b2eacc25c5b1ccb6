"""Tests of trainable_harness.layers.inputs: the dtype contract, the checks all layers share."""

from __future__ import annotations

import numpy as np
import pytest
from layer_reference import KINDS

from trainable_harness.errors import (
    AffineShapeError,
    EmptyInputError,
    IndivisibleGroupsError,
    MomentumRangeError,
    NonFiniteInputError,
    RunningStateShapeError,
    SingleValuePerChannelError,
    TrainableError,
    UnknownChoiceError,
    UnsupportedDtypeError,
    UnsupportedRankError,
    WeightShapeError,
    check_real_array,
)
from trainable_harness.layers import (
    BatchNormState,
    apply_normalization,
    batch_norm,
    batch_norm_eval,
    batch_norm_train,
    batch_statistics,
    fold_batch_norm_into_linear,
    group_norm,
    layer_norm,
    linear,
    update_running_statistics,
)


def test_float64_default_integer_promotion_and_float32_option():
    X = np.arange(12).reshape(2, 3, 2)
    Y = layer_norm(X, np.ones(2), np.zeros(2))
    assert Y.dtype == np.float64
    Y32 = layer_norm(X, np.ones(2), np.zeros(2), dtype=np.float32)
    assert Y32.dtype == np.float32
    # float32 arithmetic on O(1) outputs: within a few float32 ulps (1.2e-7) of float64.
    np.testing.assert_allclose(Y32, Y, rtol=0, atol=1e-6)


@pytest.mark.parametrize("which", ["gamma", "beta"])
def test_affine_shape_mismatch_names_both_shapes(which):
    params = {"gamma": np.ones(3), "beta": np.zeros(3)}
    params[which] = np.ones((3, 1))
    with pytest.raises(
        AffineShapeError, match=rf"{which} has shape \(3, 1\) but X has shape \(2, 3, 4, 4\)"
    ):
        batch_norm(np.ones((2, 3, 4, 4)), params["gamma"], params["beta"])


def test_layer_norm_refuses_a_per_element_affine():
    with pytest.raises(AffineShapeError, match=r"must have shape \(3,\)"):
        layer_norm(np.ones((2, 3, 4, 4)), np.ones((3, 4, 4)), np.zeros((3, 4, 4)))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_says_where(bad):
    X = np.ones((2, 3, 4, 5))
    X[1, 0, 2, 3] = bad
    with pytest.raises(NonFiniteInputError, match=r"index \(1, 0, 2, 3\)"):
        group_norm(X, np.ones(3), np.zeros(3), num_groups=3)
    gamma = np.ones(3)
    gamma[2] = bad
    with pytest.raises(NonFiniteInputError, match="gamma"):
        layer_norm(np.ones((2, 3)), gamma, np.zeros(3))


def test_empty_batch_names_the_axis():
    with pytest.raises(EmptyInputError, match="empty along axis 0"):
        batch_norm(np.ones((0, 3, 2, 2)), np.ones(3), np.zeros(3))
    with pytest.raises(EmptyInputError, match="axis 2"):
        update_running_statistics(BatchNormState.initial(3), np.ones((2, 3, 0, 2)))


def test_every_layer_error_is_a_value_error():
    for error in (
        AffineShapeError,
        IndivisibleGroupsError,
        MomentumRangeError,
        RunningStateShapeError,
        SingleValuePerChannelError,
        UnknownChoiceError,
        UnsupportedRankError,
        WeightShapeError,
    ):
        assert issubclass(error, TrainableError) and issubclass(error, ValueError)


def test_no_function_writes_into_its_inputs():
    def frozen(array):
        array = np.array(array, dtype=float)
        array.flags.writeable = False  # an in-place write raises
        return array

    X, gamma, beta = frozen([[1.0, 5.0], [3.0, -2.0]]), frozen([1.0, 2.0]), frozen([0.0, 1.0])
    kept = [a.copy() for a in (X, gamma, beta)]
    state = BatchNormState(frozen([0.5, 0.0]), frozen([1.0, 2.0]))
    for kind in KINDS[:2]:
        apply_normalization(kind, X, gamma, beta, eps=1e-5)
    group_norm(X, gamma, beta, num_groups=1)
    batch_norm_train(X, gamma, beta, state)
    batch_norm_eval(X, gamma, beta, state)
    batch_statistics(X)
    W = frozen([[1.0, 2.0], [3.0, 4.0]])
    fold_batch_norm_into_linear(W, beta, gamma, beta, state)
    linear(X, W, beta)
    for original, after in zip(kept, (X, gamma, beta), strict=True):
        np.testing.assert_array_equal(original, after)


def test_values_that_overflow_the_requested_dtype_name_the_conversion():
    # gamma = 1e5 is finite; float16 cannot hold it. It used to warn and then report
    # "gamma holds inf", as if the caller had passed inf.
    with pytest.raises(NonFiniteInputError, match="gamma converted to float16 holds inf"):
        batch_norm(np.ones((2, 1), np.float16), [1e5], [0.0], dtype=np.float16)
    X = np.array([[1.0, 2.0]])
    assert check_real_array(X, "X") is X  # no copy when the dtype is already right


@pytest.mark.parametrize("dtype", ["banana", object(), [1, 2]])
def test_a_dtype_numpy_does_not_understand_is_refused_naming_dtype(dtype):
    # Before: numpy's TypeError "data type 'banana' not understood", naming no argument.
    with pytest.raises(UnsupportedDtypeError, match="dtype must be a real floating type"):
        batch_norm(np.ones((2, 3)), np.ones(3), np.zeros(3), dtype=dtype)
    with pytest.raises(UnsupportedDtypeError, match="dtype"):
        linear(np.ones((2, 3)), np.ones((1, 3)), dtype=dtype)


@pytest.mark.parametrize("X", [None, "abc", 1.0, np.ones(3)])
def test_a_batch_of_the_wrong_rank_is_named_x(X):
    # Before: "batch norm got shape () (rank 0)", which named no argument.
    with pytest.raises(UnsupportedRankError, match=r"got X of shape"):
        batch_norm(X, np.ones(3), np.zeros(3))
