"""trainable_harness.mlp.task: the teacher task is reproducible, uncentered and labelled."""

import numpy as np
import pytest

from trainable_harness.errors import SeedError, ShapeError
from trainable_harness.mlp.task import CLASSES, INPUTS, TeacherTask, make_teacher_task


def test_the_same_seed_gives_the_same_task_and_another_seed_another():
    first, again = make_teacher_task(5, n=64), make_teacher_task(5, n=64)
    np.testing.assert_array_equal(first.X, again.X)
    np.testing.assert_array_equal(first.labels, again.labels)
    assert not np.array_equal(first.X, make_teacher_task(6, n=64).X)


def test_shapes_dtypes_and_labels():
    task = make_teacher_task(0, n=512)
    assert isinstance(task, TeacherTask)
    assert task.X.shape == (512, INPUTS) and task.X.dtype == np.float64
    assert task.labels.shape == (512,) and task.labels.dtype.kind == "i"
    assert set(np.unique(task.labels)) <= set(range(CLASSES))


def test_inputs_are_neither_centered_nor_of_unit_scale():
    # Each coordinate is 1 + s_j z with s_j from 0.5 to 2: mean 1, standard deviation s_j.
    X = make_teacher_task(1, n=20_000).X
    scales = np.geomspace(0.5, 2.0, INPUTS)
    # Over 20 000 draws the sample mean's standard error is s_j / 141 <= 0.015 (4 SE: 0.06).
    np.testing.assert_allclose(X.mean(axis=0), 1.0, atol=0.06)
    # The sample SD's standard error is about s_j / sqrt(2 n) = s_j / 200 (4 SE: 2%).
    np.testing.assert_allclose(X.std(axis=0, ddof=1) / scales, 1.0, rtol=0.02)


def test_no_class_is_empty_on_a_large_draw():
    counts = np.bincount(make_teacher_task(2, n=4096).labels, minlength=CLASSES)
    assert counts.min() > 0, counts


@pytest.mark.parametrize("n", [1, 0, -3, 2.5, True])
def test_fewer_than_two_examples_or_a_non_integer_count_is_refused(n):
    with pytest.raises(ShapeError, match=r"^n must be an integer >= 2"):
        make_teacher_task(0, n=n)


def test_a_bad_seed_is_refused():
    with pytest.raises(SeedError):
        make_teacher_task(-1)
