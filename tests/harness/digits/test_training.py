"""Tests of trainable_harness.digits.training and .experiments: SGD over replicas, the
error in both modes, the split's standardization and the refusals."""

import math

import numpy as np
import pytest

from trainable_harness.digits import experiments
from trainable_harness.digits.training import error_rates, init_shared, train
from trainable_harness.errors import DigitsError

RNG = np.random.default_rng(11)
IMAGES = RNG.normal(size=(40, 8, 8))
LABELS = np.arange(40) % 10


def test_training_copies_the_network_and_lowers_the_loss():
    net = init_shared(("none", "group"), np.random.default_rng(0))
    K1 = net.K1.copy()
    run = train(net, IMAGES, LABELS, batch_size=8, epochs=6, learning_rate=0.05, rng=RNG)
    np.testing.assert_array_equal(net.K1, K1)
    assert (run.last_epoch_loss < math.log(10)).all() and not run.diverged.any()
    # Replicas start equal and see the same batches; only their normalization differs.
    np.testing.assert_array_equal(net.K1[0], net.K1[1])


def test_a_huge_learning_rate_diverges_on_its_own_replica():
    net = init_shared(("none", "none"), np.random.default_rng(0))
    run = train(net, IMAGES, LABELS, batch_size=8, epochs=2, learning_rate=[0.01, 1e6], rng=RNG)
    assert run.diverged.tolist() == [False, True]
    assert error_rates(run.net, IMAGES, LABELS)[1] == 1.0  # non-finite logits count as wrong


@pytest.mark.parametrize(
    ("keywords", "word"),
    [
        ({"batch_size": 1}, "batch_size"),
        ({"batch_size": 41}, "batch_size"),
        ({"epochs": 0}, "epochs"),
        ({"learning_rate": -1.0}, "learning_rate"),
    ],
)
def test_training_refuses_bad_settings(keywords, word):
    settings = {"batch_size": 4, "epochs": 1, "learning_rate": 0.1, "rng": RNG} | keywords
    net = init_shared(("batch",), np.random.default_rng(0))
    with pytest.raises(DigitsError, match=word):
        train(net, IMAGES, LABELS, **settings)


def test_error_rates_in_batch_mode_need_a_batch_size_and_a_generator():
    net = init_shared(("batch",), np.random.default_rng(0))
    with pytest.raises(DigitsError, match="batch_size"):
        error_rates(net, IMAGES, LABELS, mode="batch", batch_size=1, rng=RNG)
    with pytest.raises(DigitsError, match="mode"):
        error_rates(net, IMAGES, LABELS, mode="eval")
    error = error_rates(net, IMAGES, LABELS, mode="batch", batch_size=4, rng=RNG)
    assert error.shape == (1,) and 0.0 <= error[0] <= 1.0


def test_the_split_is_standardized_with_the_training_pixels_only():
    images = RNG.random((60, 8, 8))
    labels = np.arange(60) % 10
    split = experiments.prepare_split(images, labels, split_seed=3, test_fraction=0.5)
    assert split.train_images.mean() == pytest.approx(0.0, abs=1e-14)
    assert split.train_images.std() == pytest.approx(1.0, rel=1e-14)
    assert split.test_images.shape == (30, 8, 8) and split.test_labels.shape == (30,)
    with pytest.raises(DigitsError, match="images"):
        experiments.prepare_split(images[:, :4], labels, split_seed=3)


def test_the_learning_rate_grid_must_increase():
    split = experiments.prepare_split(RNG.random((60, 8, 8)), np.arange(60) % 10, 3, 0.5)
    with pytest.raises(DigitsError, match="learning_rates"):
        experiments.largest_stable_learning_rates(split, seed=0, learning_rates=[1.0, 0.5])


def test_the_linear_scaling_rule():
    assert experiments.scaled_learning_rate(experiments.REFERENCE_BATCH) == (
        experiments.BASE_LEARNING_RATE
    )
    assert experiments.scaled_learning_rate(2) == experiments.BASE_LEARNING_RATE / 16
