"""Tests of trainable_harness.layers.reduction_sets: reduction axes, labels, values per set."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from layer_reference import FAST, labels_from_naive_sets, layer_cases, naive_reduction_sets

from trainable_harness.errors import (
    CountError,
    IndivisibleGroupsError,
    UnknownChoiceError,
    UnsupportedRankError,
)
from trainable_harness.layers import reduction_axes, statistic_labels, values_per_statistic


@FAST
@given(layer_cases())
def test_statistic_labels_match_naive_sets(case):
    kind, shape, num_groups, _ = case
    labels = statistic_labels(kind, shape, num_groups=num_groups)
    expected = labels_from_naive_sets(kind, shape, num_groups)
    # Both number the sets in order of first appearance in C order, so they must be equal.
    np.testing.assert_array_equal(labels, expected)
    sizes = {len(s) for s in naive_reduction_sets(kind, shape, num_groups)}
    assert sizes == {values_per_statistic(kind, shape, num_groups=num_groups)}


@pytest.mark.parametrize(
    ("kind", "ndim", "axes"),
    [
        ("batch", 2, (0,)),
        ("batch", 3, (0, 1)),
        ("batch", 4, (0, 2, 3)),
        ("layer", 2, (1,)),
        ("layer", 3, (2,)),
        ("layer", 4, (1, 2, 3)),
        ("instance", 4, (2, 3)),
        ("group", 3, (2,)),
        ("group", 4, (1, 2, 3)),
    ],
)
def test_reduction_axes_table(kind, ndim, axes):
    assert reduction_axes(kind, ndim) == axes


def test_values_per_statistic_for_a_cnn_batch():
    shape = (8, 16, 7, 5)
    assert values_per_statistic("batch", shape) == 8 * 7 * 5
    assert values_per_statistic("layer", shape) == 16 * 7 * 5
    assert values_per_statistic("instance", shape) == 7 * 5
    assert values_per_statistic("group", shape, num_groups=4) == 4 * 7 * 5
    assert values_per_statistic("batch", (8, 10, 3)) == 80


def test_indivisible_groups_message_names_both_counts():
    with pytest.raises(IndivisibleGroupsError, match="6 channels cannot be split into 4"):
        statistic_labels("group", (1, 6, 2, 2), num_groups=4)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: values_per_statistic("batch", (2.9, 3)), CountError, r"shape\[0\].*2\.9"),
        (lambda: statistic_labels("batch", (-2, 3)), CountError, r"shape\[0\]"),
        (lambda: values_per_statistic(["batch"], (2, 3)), UnknownChoiceError, "kind"),
        (lambda: reduction_axes("batch", "2"), UnsupportedRankError, r"ndim.*'2' \(str\)"),
        (lambda: reduction_axes("batch", 2.0), UnsupportedRankError, "ndim"),
        (lambda: reduction_axes("batch", True), UnsupportedRankError, "bool"),
    ],
)
def test_silent_acceptances_are_specific_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
