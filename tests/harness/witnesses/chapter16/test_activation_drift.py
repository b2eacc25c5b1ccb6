"""Tests of trainable_harness.covariate_shift and the witness of c16-activation-drift-001:
Algorithm 1's noise drawn as written, the shift measures against naive references, the
runs' seeds and errors, and the registry entry testing what the chapter says."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from witness_checks import registry, seed_of

from claimbook.claims import flatten, harness_pin, load_claim, verify_claim
from trainable_harness import covariate_shift as cs
from trainable_harness.errors import MLPError
from trainable_harness.mlp.layers import _softmax_cross_entropy
from trainable_harness.mlp.task import make_teacher_task
from trainable_harness.witnesses.chapter16.activation_drift import (
    ACTIVATION_DRIFT,
    NOISES,
    activation_drift_witness,
    noise_specs,
)

CLAIM = "c16-activation-drift-001"
SMALL = {
    "depth": 3,
    "width": 8,
    "examples": 32,
    "learning_rate": 0.05,
    "budget": 30,
    "window": 5,
    "target_fraction": 0.5,
}


# --- Algorithm 1 as written ------------------------------------------------------------------


def test_the_paper_constants_are_algorithm_1s():
    assert tuple(cs.ALGORITHM_1) == (0.5, 1.25, 0.1, 0.1)
    assert cs.ALGORITHM_1.at_dose(1.0) == cs.ALGORITHM_1
    assert cs.ALGORITHM_1.at_dose(0.5) == (0.25, 1.125, 0.05, 0.05)


def test_algorithm_1_noise_is_drawn_per_sample_with_the_papers_distributions():
    depth, n, width = 3, 4000, 5
    scale, offset = cs.draw_noise(np.random.default_rng(7), [cs.ALGORITHM_1], depth, n, width)
    assert scale.shape == offset.shape == (1, depth, n, width)
    scale, offset = scale[0], offset[0]
    # Per step, layer and unit: mu in (-0.5, 0.5); per sample m within mu +- 0.1.
    mu = (offset.max(axis=1) + offset.min(axis=1)) / 2
    assert np.all(np.abs(mu) < 0.5)
    assert np.all(offset.max(axis=1) - offset.min(axis=1) <= 0.2)
    assert np.all(offset.max(axis=1) - offset.min(axis=1) > 0.19)  # uniform fills its range
    # s ~ N(sigma, 0.1) per sample with sigma in (1, 1.25): the per-unit mean and spread.
    sigma = scale.mean(axis=1)
    assert np.all((sigma > 1.0 - 0.01) & (sigma < 1.25 + 0.01))
    assert np.allclose(scale.std(axis=1, ddof=1), 0.1, rtol=0.06)
    # Samples differ: the noise is not one value per unit shared by the batch.
    assert np.all(scale.std(axis=1) > 0) and np.all(offset.std(axis=1) > 0)
    # Units differ in their step parameters.
    assert np.unique(np.round(mu, 2)).size > 5


def test_doses_scale_the_same_draws_and_dose_zero_is_no_noise():
    specs = [cs.ALGORITHM_1.at_dose(c) for c in (0.0, 0.5, 1.0)]
    scale, offset = cs.draw_noise(np.random.default_rng(3), specs, 2, 6, 4)
    assert np.all(scale[0] == 1.0) and np.all(offset[0] == 0.0)
    np.testing.assert_allclose(offset[1], 0.5 * offset[2], rtol=0, atol=1e-16)
    np.testing.assert_allclose(scale[1] - 1.0, 0.5 * (scale[2] - 1.0), rtol=0, atol=1e-15)


def test_the_books_mild_noise_is_one_draw_per_unit_shared_by_every_sample():
    scale, offset = cs.draw_noise(np.random.default_rng(5), [cs.BOOK_MILD_NOISE], 2, 50, 6)
    assert np.all(scale[0] == scale[0][:, :1]) and np.all(offset[0] == offset[0][:, :1])
    assert np.all(np.abs(offset) <= 0.1) and np.all((scale >= 1.0) & (scale <= 1.1))


def test_bad_noise_is_refused_by_name():
    with pytest.raises(MLPError, match="dose"):
        cs.ALGORITHM_1.at_dose(-0.1)
    with pytest.raises(MLPError, match="n_sigma"):
        cs.draw_noise(np.random.default_rng(0), [cs.NoiseSpec(0.1, 0.9, 0.0, 0.0)], 1, 2, 1)
    with pytest.raises(MLPError, match="at least one"):
        cs.draw_noise(np.random.default_rng(0), [], 1, 2, 1)
    with pytest.raises(MLPError, match="examples"):
        cs.draw_noise(np.random.default_rng(0), [cs.ALGORITHM_1], 1, 0, 1)


# --- the shift of the distributions ------------------------------------------------------------


def naive_wasserstein(a, b):
    """1-Wasserstein distance as the integral of |F_a - F_b| over the union of the values."""
    grid = np.sort(np.concatenate([a, b]))
    cdf_a = np.searchsorted(np.sort(a), grid[:-1], side="right") / a.size
    cdf_b = np.searchsorted(np.sort(b), grid[:-1], side="right") / b.size
    return float(np.sum(np.abs(cdf_a - cdf_b) * np.diff(grid)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40))
def test_wasserstein_matches_the_integral_of_the_cdf_difference(seed, n):
    rng = np.random.default_rng(seed)
    before, after = rng.normal(size=(n, 3)), rng.standard_t(3, size=(n, 3))
    got = cs.per_feature_wasserstein(before, after)
    for j in range(3):
        assert got[j] == pytest.approx(naive_wasserstein(before[:, j], after[:, j]), abs=1e-12)


def test_wasserstein_ignores_which_example_produced_which_value():
    before = np.random.default_rng(1).normal(size=(50, 4))
    assert np.array_equal(cs.per_feature_wasserstein(before, before[::-1]), np.zeros(4))


def test_shift_leaves_out_dead_features_and_dead_layers():
    rng = np.random.default_rng(2)
    before = [np.maximum(rng.normal(size=(1, 20, 3)), 0.0) for _ in range(2)]
    before[0][..., 0] = 0.0  # a dead feature
    before[1][...] = 0.0  # a dead layer
    after = [b + 0.1 for b in before]
    got = cs._shift_in_stds(cs._summarize(before), cs._summarize(after))
    layer0 = before[0][0][:, 1:]
    want = np.mean(0.1 / layer0.std(axis=0))
    assert got[0] == pytest.approx(want, rel=1e-12)


# --- Definition 2.1 ----------------------------------------------------------------------------


def test_gradient_shift_equals_a_layer_by_layer_recomputation():
    task = make_teacher_task(11, n=16)
    for normalize in (False, True):
        params = cs.init_params(11, 1, 3, 6)
        logits, caches, outputs = cs._forward(params, task.X, normalize)
        grads = cs._backward(params, logits, caches, outputs, task.labels, normalize)
        snapshot = [w.copy() for w in params.weights]
        got = cs.gradient_shift(params, grads, task, normalize, 0.1)
        assert all(np.array_equal(a, b) for a, b in zip(snapshot, params.weights, strict=True))
        for i in (1, 2):
            moved = params._replace(
                weights=[
                    w - 0.1 * g if k < i else w
                    for k, (w, g) in enumerate(zip(params.weights, grads.weights, strict=True))
                ],
                biases=[
                    b - 0.1 * g if k < i else b
                    for k, (b, g) in enumerate(zip(params.biases, grads.biases, strict=True))
                ],
                gammas=[
                    b - 0.1 * g if k < i else b
                    for k, (b, g) in enumerate(zip(params.gammas, grads.gammas, strict=True))
                ],
            )
            out = cs._forward(moved, task.X, normalize)
            G2 = cs._backward(moved, *out, task.labels, normalize).weights[i]
            want = np.linalg.norm(G2 - grads.weights[i]) / np.linalg.norm(grads.weights[i])
            assert got[0, i - 1] == pytest.approx(want, rel=1e-12)
        assert np.all(cs.gradient_shift(params, grads, task, normalize, 0.0) == 0.0)


def test_the_backward_pass_matches_finite_differences():
    task = make_teacher_task(4, n=12)
    params = cs.init_params(4, 1, 2, 5)
    noise = cs.draw_noise(np.random.default_rng(0), [cs.ALGORITHM_1], 2, 12, 5)
    for normalize, nz in ((False, None), (True, None), (True, noise)):
        grads = cs._backward(
            params, *cs._forward(params, task.X, normalize, nz), task.labels, normalize, nz
        )
        h = 1e-6
        for k, (i, j) in ((0, (3, 2)), (1, (1, 4))):
            plus, minus = [w.copy() for w in params.weights], [w.copy() for w in params.weights]
            plus[k][0, i, j] += h
            minus[k][0, i, j] -= h

            def loss(ws, normalize=normalize, nz=nz):
                logits = cs._forward(params._replace(weights=ws), task.X, normalize, nz)[0]
                return float(_softmax_cross_entropy(logits, task.labels)[0])

            assert grads.weights[k][0, i, j] == pytest.approx(
                (loss(plus) - loss(minus)) / (2 * h), rel=1e-5, abs=1e-9
            )


# --- runs: seeds, shapes, errors ---------------------------------------------------------------


def test_a_stack_is_its_networks_run_alone_and_a_seed_repeats():
    specs = [cs.ALGORITHM_1.at_dose(0.0), cs.ALGORITHM_1]
    together = cs.train_stack(9, True, specs, **SMALL, probes=(0, 2))
    again = cs.train_stack(9, True, specs, **SMALL, probes=(0, 2))
    assert np.array_equal(together.steps_to_target, again.steps_to_target)
    assert all(np.array_equal(a, b) for a, b in zip(together.losses, again.losses, strict=True))
    alone = cs.train_stack(9, True, specs[:1], **SMALL, probes=(0, 2))
    np.testing.assert_allclose(alone.losses[0], together.losses[0], rtol=1e-12)
    assert together.shift.shape == together.gradient_shift.shape == (2,)
    assert together.losses[0][0] == together.losses[1][0]  # the same draw, the same task


def test_a_network_at_its_target_stops_after_the_window():
    run = cs.train_stack(9, False, **{**SMALL, "target_fraction": 10.0})
    assert run.steps_to_target[0] == 0 and len(run.losses[0]) == SMALL["window"] + 1


def test_bad_settings_are_refused_by_name():
    with pytest.raises(MLPError, match="window"):
        cs.train_stack(0, False, **{**SMALL, "window": 31})
    with pytest.raises(MLPError, match="learning_rate"):
        cs.train_stack(0, False, **{**SMALL, "learning_rate": 0.0})
    with pytest.raises(MLPError, match="probes"):
        cs.train_stack(0, False, **SMALL, probes=(30,))
    with pytest.raises(MLPError, match="depth >= 2"):
        cs.train_stack(0, False, **{**SMALL, "depth": 1}, probes=(0,))
    with pytest.raises(MLPError, match="plain network"):
        cs.train_stack(0, False, [cs.ALGORITHM_1], **SMALL)
    with pytest.raises(MLPError, match="at least one"):
        cs.train_stack(0, True, [], **SMALL)


# --- the registry entry -------------------------------------------------------------------------


# A whole witness for one seed: seconds, so the claims tier's, not the unit tier's.
@pytest.mark.claims
def test_the_witness_fields_are_the_registered_ones():
    entry = registry(CLAIM)
    assert entry["compute"] == (
        f"{activation_drift_witness.__module__}.{activation_drift_witness.__name__}"
    )
    assert entry["seed"] == {"policy": "derived-set", "name": "c16-activation-drift", "count": 30}
    assert entry["statistics"] == {"level": 0.95, "method": "t"}
    assert load_claim(CLAIM).seeds[0] == seed_of(CLAIM)
    assert len(noise_specs()) == 1 + len(NOISES)
    assert ACTIVATION_DRIFT["probes"][-1] < ACTIVATION_DRIFT["window"]
    fields = set(flatten(activation_drift_witness(seed_of(CLAIM))))
    assert fields == set(entry["expect"])


def test_every_bound_tests_what_the_chapter_says():
    expect = {k: v["ci_within"] for k, v in registry(CLAIM)["expect"].items()}
    assert expect["shift_ratio.batch_norm"][1] <= 1.0  # batch norm moves them less
    for noise in NOISES:  # every noise moves them more than no normalization
        assert expect[f"shift_ratio.{noise}"][0] > 1.0
    assert expect["speedup.batch_norm"][0] > 1.0  # batch norm trains faster
    assert expect["speedup.mild"][0] > 1.0 and expect["speedup.quarter"][0] > 1.0
    assert expect["speedup.paper"][1] < 1.0  # Algorithm 1 as written: slower than plain
    assert expect["steps_over_batch_norm.paper"][0] > 2.0
    assert expect["steps_over_batch_norm.half"][0] > 1.0
    assert expect["steps_over_batch_norm.mild"][1] < expect["steps_over_batch_norm.half"][0]
    assert expect["shallow.steps_over_batch_norm"][1] < expect["steps_over_batch_norm.paper"][0]
    assert expect["gradient_shift.plain"][0] > 0 and expect["gradient_shift.batch_norm"][0] > 0
    entry = registry(CLAIM)
    assert "Algorithm 1" in entry["refutes"]["source"] and "A.2.1" in entry["refutes"]["source"]
    for field, expectation in entry["expect"].items():
        assert "other seed" in expectation["reason"].lower(), field


@pytest.mark.claims
@pytest.mark.whole_claim
def test_the_claim_refutes_its_account(tmp_path):
    artifact = verify_claim(CLAIM, harness_pin(), artifacts_dir=tmp_path, strict=True)
    assert artifact["status"] == "refuted"
    assert len(artifact["seeds"]) == 30
