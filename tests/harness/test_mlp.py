"""Tests of the numpy MLP of chapter 16: every backward pass against central differences."""

import numpy as np
import pytest

from trainable_harness.errors import (
    DegenerateNormalizationError,
    MLPError,
    ResultOverflowError,
    SeedError,
    ShapeError,
    TrainableError,
    UnknownChoiceError,
    UnsupportedDtypeError,
)
from trainable_harness.layers import batch_norm
from trainable_harness.mlp import (
    BN_EPS,
    batch_norm_backward,
    batch_norm_forward,
    init_mlp,
    label_entropy,
    learning_rate_sweep,
    linear_backward,
    linear_forward,
    loss_and_gradients,
    make_teacher_task,
    probe_along_training,
    probe_gradient_direction,
    relu_backward,
    relu_forward,
    softmax_cross_entropy,
    softmax_cross_entropy_backward,
    train_full_batch,
)

STEP = 1e-6
# Central differences: truncation ~ STEP^2 = 1e-12 times a third derivative of order one,
# rounding ~ 1e-16 / STEP = 1e-10 times the function's size. A wrong term in a backward
# pass is of the size of the gradient itself (>= 1e-3 here), so 1e-7 separates the two.
FD_TOL = 1e-7


def numeric_gradient(f, x):
    """Naive reference: perturb one entry at a time of a copy of x."""
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += STEP
        minus[index] -= STEP
        grad[index] = (f(plus) - f(minus)) / (2 * STEP)
    return grad


RNG = np.random.default_rng(0)
X = RNG.normal(size=(6, 4))
W = RNG.normal(size=(4, 3))
B = RNG.normal(size=3)
UPSTREAM = RNG.normal(size=(6, 3))


def test_linear_backward():
    dX, dW, db = linear_backward(UPSTREAM, X, W)
    loss = lambda X_, W_, b_: np.sum(UPSTREAM * linear_forward(X_, W_, b_))  # noqa: E731
    np.testing.assert_allclose(dX, numeric_gradient(lambda v: loss(v, W, B), X), atol=FD_TOL)
    np.testing.assert_allclose(dW, numeric_gradient(lambda v: loss(X, v, B), W), atol=FD_TOL)
    np.testing.assert_allclose(db, numeric_gradient(lambda v: loss(X, W, v), B), atol=FD_TOL)


def test_relu_backward_away_from_the_kink():
    Z = RNG.normal(size=(6, 3))
    Z[np.abs(Z) < 1e-3] = 0.5  # central differences are undefined at 0
    numeric = numeric_gradient(lambda v: np.sum(UPSTREAM * relu_forward(v)), Z)
    np.testing.assert_allclose(relu_backward(UPSTREAM, Z), numeric, atol=FD_TOL)


@pytest.mark.parametrize("eps", [0.0, BN_EPS, 0.5])
def test_batch_norm_backward(eps):
    Z = RNG.normal(size=(6, 3)) * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]
    gamma, beta = RNG.normal(size=3), RNG.normal(size=3)

    def loss(Z_, g_, b_):
        return np.sum(UPSTREAM * batch_norm_forward(Z_, g_, b_, eps)[0])

    _, cache = batch_norm_forward(Z, gamma, beta, eps)
    dZ, dgamma, dbeta = batch_norm_backward(UPSTREAM, cache, gamma)
    np.testing.assert_allclose(
        dZ, numeric_gradient(lambda v: loss(v, gamma, beta), Z), atol=FD_TOL
    )
    np.testing.assert_allclose(
        dgamma, numeric_gradient(lambda v: loss(Z, v, beta), gamma), atol=FD_TOL
    )
    np.testing.assert_allclose(
        dbeta, numeric_gradient(lambda v: loss(Z, gamma, v), beta), atol=FD_TOL
    )


def test_batch_norm_forward_equals_the_harness_layer():
    Z = RNG.normal(size=(7, 5)) * 3 + 1
    gamma, beta = RNG.normal(size=5), RNG.normal(size=5)
    ours, _ = batch_norm_forward(Z, gamma, beta, BN_EPS)
    # Two implementations, two orders of operations: a few roundings of values near 1.
    np.testing.assert_allclose(ours, batch_norm(Z, gamma, beta, eps=BN_EPS), atol=1e-14)


def test_softmax_cross_entropy_backward_and_value():
    logits = RNG.normal(size=(6, 4)) * 3
    labels = np.array([0, 3, 1, 1, 2, 0])
    numeric = numeric_gradient(lambda v: softmax_cross_entropy(v, labels), logits)
    np.testing.assert_allclose(
        softmax_cross_entropy_backward(logits, labels), numeric, atol=FD_TOL
    )
    naive = np.mean(
        [np.log(np.sum(np.exp(r))) - r[k] for r, k in zip(logits, labels, strict=True)]
    )
    assert abs(softmax_cross_entropy(logits, labels) - naive) < 1e-14


@pytest.mark.parametrize("batch_norm_on", [False, True])
def test_whole_network_gradient(batch_norm_on):
    task = make_teacher_task(seed=2, n=12)
    params = init_mlp(seed=3, batch_norm=batch_norm_on)
    if batch_norm_on:  # move gamma, beta off their initial values to test them generically
        params["gamma1"] = params["gamma1"] + 0.3
        params["beta2"] = params["beta2"] - 0.2
    _, grads = loss_and_gradients(params, task, batch_norm_on)
    for name in (
        "W1",
        "W3",
        "b3",
        "gamma1" if batch_norm_on else "b1",
        "beta2" if batch_norm_on else "b2",
    ):

        def loss_of(value, name=name):
            return float(loss_and_gradients({**params, name: value}, task, batch_norm_on)[0])

        np.testing.assert_allclose(
            grads[name], numeric_gradient(loss_of, params[name]), atol=FD_TOL, err_msg=name
        )


def test_replicas_do_not_mix():
    task = make_teacher_task(seed=4, n=32)
    both = train_full_batch(task, seed=5, batch_norm=True, learning_rates=[0.1, 1e5], steps=8)
    alone = train_full_batch(task, seed=5, batch_norm=True, learning_rates=[0.1], steps=8)
    np.testing.assert_allclose(both.losses[:, 0], alone.losses[:, 0], rtol=1e-12)


def test_divergence_is_marked_and_thresholds_follow_the_first_failure():
    sweep = learning_rate_sweep(0, False, learning_rates=[0.1, 0.2, 1e4], steps=10)
    assert np.isnan(sweep.final_losses[-1])
    assert sweep.largest_finite == 0.2 and sweep.largest_learning <= 0.2


def test_label_entropy_and_probe():
    assert label_entropy(np.array([1, 1, 1])) == 0.0
    task = make_teacher_task(0, n=16)
    probe = probe_gradient_direction(init_mlp(0, True), task, True, [0.5, 1.0])
    assert probe.loss_variation >= 0 and probe.effective_smoothness > 0


def test_bad_settings_raise_specific_errors():
    task = make_teacher_task(0, n=8)
    with pytest.raises(TrainableError, match="learning_rates"):
        train_full_batch(task, seed=0, batch_norm=False, learning_rates=[0.0], steps=1)
    with pytest.raises(TrainableError, match="steps"):
        train_full_batch(task, seed=0, batch_norm=False, learning_rates=[1.0], steps=0)
    with pytest.raises(TrainableError, match="step_sizes"):
        probe_gradient_direction(init_mlp(0, False), task, False, [-1.0])
    with pytest.raises(ShapeError, match="n must be"):
        make_teacher_task(0, n=1)


def test_sweep_is_cached_and_read_only():
    a = learning_rate_sweep(1, True, learning_rates=[0.5, 1.0], steps=3)
    b = learning_rate_sweep(1, True, learning_rates=np.array([0.5, 1.0]), steps=3)
    assert a is b
    with pytest.raises(ValueError, match="read-only"):
        a.final_losses[0] = 0.0


# --- labels, shapes and results beyond range -------------------------------------------

LOGITS = np.random.default_rng(5).normal(size=(3, 4))


@pytest.mark.parametrize(
    ("labels", "error", "message"),
    [
        # -1 used to pick the last class, 4 used to raise numpy's IndexError.
        (np.array([0, -1, 2]), ShapeError, r"labels\[1\] = -1 is not a class index in \[0, 4\)"),
        (np.array([0, 4, 2]), ShapeError, r"labels\[1\] = 4 is not a class index in \[0, 4\)"),
        # One label broadcast over three rows used to be accepted.
        (np.array([1]), ShapeError, r"labels have shape \(1,\).*shape \(3,\)"),
        (np.array([[0, 1, 2]]), ShapeError, r"labels have shape \(1, 3\)"),
        (np.array([0.0, 1.0, 2.0]), UnsupportedDtypeError, "labels have dtype float64"),
        (np.array([True, False, True]), UnsupportedDtypeError, "labels have dtype bool"),
    ],
)
def test_cross_entropy_refuses_labels_that_are_not_one_class_per_row(labels, error, message):
    for function in (softmax_cross_entropy, softmax_cross_entropy_backward):
        with pytest.raises(error, match=message):
            function(LOGITS, labels)


def test_label_entropy_and_the_loss_refuse_labels_outside_the_classes():
    with pytest.raises(ShapeError, match=r"labels\[2\] = 4 is not a class index"):
        label_entropy(np.array([0, 1, 4]))  # bincount used to count a fifth class
    with pytest.raises(ShapeError, match=r"labels\[0\] = -1"):
        label_entropy(np.array([-1, 1]))  # numpy's bincount ValueError
    with pytest.raises(ShapeError, match="non-empty"):
        label_entropy(np.array([], dtype=np.int64))  # 0 / 0 = NaN
    task = make_teacher_task(0, n=8)
    bad = task._replace(labels=task.labels - 1)
    with pytest.raises(ShapeError, match="is not a class index"):
        loss_and_gradients(init_mlp(0, False), bad, False)
    with pytest.raises(MLPError, match=r"params lacks \['b1', 'b2'\]"):
        loss_and_gradients(init_mlp(0, True), task, False)


def test_layers_refuse_results_beyond_range_and_bad_arrays():
    with pytest.raises(ResultOverflowError, match="X W \\+ b at index \\(0, 0\\)"):
        linear_forward(np.array([[1e200]]), np.array([[1e200]]))
    with pytest.raises(ShapeError, match="fan-in"):
        linear_forward(np.ones((2, 3)), np.ones((2, 3)))
    # The squares of 1e200 overflow: the variance was inf and the output silently 0.
    with pytest.raises(ResultOverflowError, match="variance of Z leaves float64's range"):
        batch_norm_forward(np.array([[-1e200], [1e200]]), np.ones(1), np.zeros(1))
    with pytest.raises(DegenerateNormalizationError, match="constant"):
        batch_norm_forward(np.ones((3, 1)), np.ones(1), np.zeros(1), eps=0.0)
    with pytest.raises(UnsupportedDtypeError, match="Z has dtype bool"):
        relu_forward(np.array([True]))
    with pytest.raises(ResultOverflowError, match="cross-entropy"):
        softmax_cross_entropy(np.array([[1e308, -1e308]]), np.array([1]))


def test_settings_that_are_not_whole_numbers_are_refused():
    # int(1.5) used to train with seed 1 silently.
    with pytest.raises(MLPError, match=r"seed must be an integer >= 0, got 1\.5"):
        learning_rate_sweep(1.5, True, learning_rates=[0.5], steps=3)
    with pytest.raises(UnknownChoiceError, match="batch_norm must be True or False"):
        learning_rate_sweep(1, "yes", learning_rates=[0.5], steps=3)
    with pytest.raises(MLPError, match="lr must be > 0"):
        probe_along_training(0, True, lr=-0.5, steps=1)


def test_replica_axes_of_gamma_and_beta_must_fit_the_batch():
    # gamma (1, 3) against Z (5, 3) made numpy's in-place add fail with its own ValueError.
    with pytest.raises(ShapeError, match=r"gamma has shape \(1, 3\).*batch's \(\)"):
        batch_norm_forward(np.ones((5, 3)) * np.arange(5)[:, None], np.ones((1, 3)), np.zeros(3))


def test_a_probe_that_cannot_move_or_measure_is_refused_and_seeds_are_checked():
    task = make_teacher_task(0, n=16)
    # alpha = 5e-324 moves nothing: the probe reported a smoothness of 0 (or 0 / 0 = NaN).
    with pytest.raises(MLPError, match=r"5e-324 is too small to move the parameters"):
        probe_gradient_direction(init_mlp(0, True), task, True, [5e-324])
    with pytest.raises(SeedError, match="seed must be an integer >= 0, got -1"):
        init_mlp(-1, True)
    with pytest.raises(SeedError, match="got -2"):
        make_teacher_task(-2)


def test_batch_norm_forward_at_the_ends_of_the_range_raises_without_a_warning():
    # max - min of +-1.7e308 overflows inside the check: no RuntimeWarning may escape.
    with pytest.raises(ResultOverflowError, match="variance of Z"):
        batch_norm_forward(np.array([[1.7e308], [-1.7e308]]), np.ones(1), np.zeros(1))
