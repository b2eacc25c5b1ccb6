"""trainable_harness.mlp.checks: the MLP's argument checks name what they refuse."""

import numpy as np
import pytest

from trainable_harness.errors import (
    MLPError,
    NonFiniteInputError,
    ResultOverflowError,
    ShapeError,
    UnknownChoiceError,
    UnsupportedDtypeError,
)
from trainable_harness.mlp import linear_forward
from trainable_harness.mlp.checks import (
    _broadcast_into,
    _check_bool,
    _check_labels,
    _check_result,
    _positive_vector,
    _real_array,
)


def test_a_real_array_keeps_its_dtype_and_values():
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    checked = _real_array(values, "X", min_ndim=2)
    assert checked.dtype == np.float32
    np.testing.assert_array_equal(checked, values)


def test_integer_arrays_are_computed_in_float64():
    # Kept as int64, X @ W wrapped around: 2**40 * 2**40 + 1 came out as 1.
    X, W = np.array([[2**40, 1]]), np.array([[2**40], [1]])
    assert _real_array(X, "X", min_ndim=2).dtype == np.float64
    assert linear_forward(X, W, np.array([0]))[0, 0] == 2.0**80


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        (np.array(["a", "b"]), UnsupportedDtypeError, "^X has dtype <U1"),
        (np.array([1 + 1j]), UnsupportedDtypeError, "^X has dtype complex128"),
        (np.ones(3), ShapeError, r"^X has shape \(3,\); at least 2 axes"),
        (np.array([[1.0, np.inf]]), NonFiniteInputError, r"^X holds inf at index \(0, 1\)"),
    ],
)
def test_bad_arrays_are_refused_naming_the_parameter(values, error, message):
    with pytest.raises(error, match=message):
        _real_array(values, "X", min_ndim=2)


def test_a_result_beyond_float64_is_refused_naming_its_first_index():
    finite = np.ones((2, 2))
    assert _check_result(finite, "the logits", "the weights") is finite
    overflowed = np.array([[1.0, 2.0], [np.inf, 3.0]])
    with pytest.raises(ResultOverflowError, match=r"^the logits at index \(1, 0\) .* rescale w"):
        _check_result(overflowed, "the logits", "w")


def test_labels_are_one_integer_class_index_per_row():
    labels = _check_labels([0, 3, 1], rows=3, classes=4)
    assert labels.tolist() == [0, 3, 1]


@pytest.mark.parametrize(
    ("labels", "error", "message"),
    [
        (np.array([0.0, 1.0, 2.0]), UnsupportedDtypeError, "labels have dtype float64"),
        (np.array([0, 1]), ShapeError, r"labels have shape \(2,\); one label per example"),
        (np.array([0, 4, 1]), ShapeError, r"labels\[1\] = 4 is not a class index in \[0, 4\)"),
        (np.array([0, 1, -1]), ShapeError, r"labels\[2\] = -1 .* would wrap around"),
    ],
)
def test_bad_labels_are_refused_naming_what_is_wrong(labels, error, message):
    with pytest.raises(error, match=message):
        _check_labels(labels, rows=3, classes=4)


def test_per_feature_parameters_must_broadcast_into_the_replica_axes():
    replicas = (5, 3)
    _broadcast_into(replicas, [("gamma", np.ones(8)), ("beta", np.ones((3, 8)))], "layer 1")
    _broadcast_into(replicas, [("gamma", np.ones((5, 1, 8)))], "layer 1")
    for shape in [(4, 8), (2, 5, 3, 8)]:
        with pytest.raises(ShapeError, match=rf"^layer 1: gamma has shape \({shape[0]}, "):
            _broadcast_into(replicas, [("gamma", np.ones(shape))], "layer 1")


def test_only_true_and_false_are_booleans():
    assert _check_bool(np.bool_(True), "batch_norm") is True
    assert _check_bool(False, "batch_norm") is False
    for bad in (1, 0, "yes", None):
        with pytest.raises(UnknownChoiceError, match=r"^batch_norm must be True or False"):
            _check_bool(bad, "batch_norm")


def test_positive_vectors_become_float64_and_others_are_refused():
    rates = _positive_vector([1, 0.5], "learning_rates")
    assert rates.dtype == np.float64 and rates.tolist() == [1.0, 0.5]
    for bad in ([], [[1.0]], ["a"], [1.0, 0.0], [1.0, -2.0], [np.nan]):
        with pytest.raises(MLPError, match=r"^learning_rates must be"):
            _positive_vector(bad, "learning_rates")
