"""Tests of the witnesses that the chapter-16 claims call.

Each witness is checked against an independent computation: plain numpy with the formulas
written out (never the layers harness), closed forms, or finite differences. A few tests
show that a check can fail: a wrong fold breaks the rounding bound, a correlated sample
breaks the 1/sqrt(n) law.
"""

from fractions import Fraction

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from claimbook.claims import claim_seed, flatten, harness_pin, load_claim, verify_claim
from claimbook.paths import CLAIMS_DIR
from trainable_harness.errors import UnknownChoiceError
from trainable_harness.witnesses.chapter16 import (
    RESIDUAL_DEPTHS,
    _folding_report,
    activation_drift_profiles,
    activation_drift_witness,
    batch_dependence_witness,
    folding_witness,
    fused_kernel_batch_norm,
    gains_to_output,
    identity_recovery_witness,
    per_feature_moment_shift,
    per_feature_moment_shifts,
    random_relu_network_activations,
    residual_block_jacobians,
    residual_depth_witness,
    residual_gain_profiles,
    running_estimate_traces,
    single_value_witness,
    spread_of_batch_means,
    statistic_spread_profiles,
    statistic_spread_witness,
    train_eval_witness,
)

UNIT_ROUNDOFF = 2.0**-53
WITNESSES = {
    "c16-batch-dependence-001": batch_dependence_witness,
    "c16-identity-recovery-001": identity_recovery_witness,
    "c16-train-eval-001": train_eval_witness,
    "c16-folding-001": folding_witness,
    "c16-statistic-spread-001": statistic_spread_witness,
    "c16-residual-depth-001": residual_depth_witness,
    "c16-activation-drift-001": activation_drift_witness,
    "c16-train-mode-output-001": single_value_witness,
}
STATISTICAL = {
    "c16-batch-dependence-001",
    "c16-train-eval-001",
    "c16-statistic-spread-001",
    "c16-residual-depth-001",
    "c16-activation-drift-001",
}
REFUTING = {"c16-train-mode-output-001", "c16-residual-depth-001", "c16-activation-drift-001"}


def registry(claim_id):
    return yaml.safe_load((CLAIMS_DIR / f"{claim_id}.yaml").read_text())


def seed_of(claim_id):
    """The claim's seed, or for a statistical claim the first seed of its set."""
    name = claim_id.removesuffix("-001")
    return claim_seed(f"{name}/0") if claim_id in STATISTICAL else claim_seed(name)


def standardize(X, axes, eps):
    """Eqs. 16.1-16.3 written out in numpy: population variance, eps inside the root."""
    mean = X.mean(axis=axes, keepdims=True)
    return (X - mean) / np.sqrt(X.var(axis=axes, keepdims=True) + eps)


def channel(values):
    return np.asarray(values).reshape(1, -1, 1, 1)


# ---------------------------------------------------------------------------
# Registry and witnesses agree
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("claim_id", sorted(WITNESSES))
def test_registered_expectations_cover_exactly_the_witness_fields(claim_id):
    entry = registry(claim_id)
    witness = WITNESSES[claim_id]
    assert entry["compute"] == f"trainable_harness.witnesses.chapter16.{witness.__name__}"
    name = claim_id.removesuffix("-001")
    if claim_id in STATISTICAL:
        # A conclusion from randomness: at least 10 seeds and a 95% interval.
        assert entry["seed"] == {"policy": "derived-set", "name": name, "count": 10}
        assert entry["statistics"] == {"level": 0.95, "method": "t"}
    else:
        assert entry["seed"] == {"policy": "derived", "name": name}
    assert set(flatten(witness(seed=seed_of(claim_id)))) == set(entry["expect"])
    assert ("refutes" in entry) == (claim_id in REFUTING)
    claim = load_claim(claim_id)
    first_seed = claim.seeds[0] if claim_id in STATISTICAL else claim.seed
    assert first_seed == seed_of(claim_id)


@pytest.mark.parametrize("claim_id", sorted(WITNESSES))
def test_every_chapter_16_claim_verifies_or_refutes_its_account(claim_id, tmp_path):
    artifact = verify_claim(claim_id, harness_pin(), artifacts_dir=tmp_path, strict=True)
    assert artifact["status"] == ("refuted" if claim_id in REFUTING else "verified")
    assert (tmp_path / f"{claim_id}.json").is_file()
    if claim_id in STATISTICAL:
        assert len(artifact["seeds"]) == 10
        for summary in artifact["result"].values():
            assert summary["level"] == 0.95 and summary["method"] == "t"
            assert summary["ci"][0] <= summary["mean"] <= summary["ci"][1]


def test_the_refuted_accounts_lie_outside_the_registered_expectations():
    """Each refutation can fail: the account's own value breaks the expectation."""
    post_slope = registry("c16-residual-depth-001")["expect"]["post_norm.top_gain_slope"]
    low, high = post_slope["ci_within"]
    assert not low <= -0.5 <= high  # "post-norm decays like L^(-1/2)"
    ratio = registry("c16-activation-drift-001")["expect"]["value_change_ratio"]["ci_within"]
    assert ratio[0] >= 1.0  # "the next layer's inputs stay put" would give a ratio <= 1
    outputs = registry("c16-train-mode-output-001")["expect"]["harness.min_abs_output"]
    assert outputs["equals"] > 0.0  # "all zeros" would give 0


def test_statistical_bounds_quote_other_seed_sets_not_the_registered_one():
    """Reasons derive the bounds from other seed sets (or theory), as the registry says."""
    for claim_id in STATISTICAL:
        for field, expectation in registry(claim_id)["expect"].items():
            reason = expectation["reason"]
            assert (
                "other seed" in reason
                or "theory" in reason
                or "every seed" in reason
                or ("eps" in reason)
            ), (claim_id, field)


def test_witnesses_are_deterministic_in_their_seed():
    seed = seed_of("c16-train-eval-001")
    assert train_eval_witness(seed) == train_eval_witness(seed)
    assert train_eval_witness(seed + 1)["merged"] != train_eval_witness(seed)["merged"]


# ---------------------------------------------------------------------------
# Section 1: batch dependence
# ---------------------------------------------------------------------------


def test_batch_dependence_matches_a_numpy_reference():
    seed = seed_of("c16-batch-dependence-001")
    result = batch_dependence_witness(seed)
    rng = np.random.default_rng(seed)
    offsets, scales = rng.uniform(-2, 2, 4), rng.uniform(0.5, 2, 4)
    X = channel(offsets) + channel(scales) * rng.standard_normal((64, 4, 3, 3))
    gamma, beta = rng.uniform(0.5, 2, 4), rng.uniform(-1, 1, 4)
    others = channel(offsets) + channel(scales) * rng.standard_normal((63, 4, 3, 3))

    def batch_norm_first(batch):
        return (channel(gamma) * standardize(batch, (0, 2, 3), 1e-5) + channel(beta))[0]

    def group_norm_first(batch):
        grouped = batch.reshape(len(batch), 2, 2, 3, 3)
        Y = standardize(grouped, (2, 3, 4), 1e-5).reshape(batch.shape)
        return (channel(gamma) * Y + channel(beta))[0]

    # numpy's var and the harness's two-pass variance round differently: a few ulps.
    alone_vs_batch = np.max(np.abs(batch_norm_first(X[:1]) - batch_norm_first(X)))
    assert result["alone_vs_batch"]["batch"] == pytest.approx(alone_vs_batch, abs=1e-13)
    other = np.concatenate([X[:1], others])
    other_change = np.max(np.abs(batch_norm_first(other) - batch_norm_first(X)))
    assert result["other_companions"]["batch"] == pytest.approx(other_change, abs=1e-13)
    # The reference group norm of sample 0 does not see the batch either.
    assert np.max(np.abs(group_norm_first(X[:1]) - group_norm_first(X))) <= 1e-14
    for kind in ("layer", "instance", "group"):
        assert result["alone_vs_batch"][kind] <= 1e-14


def test_a_batch_of_one_image_is_instance_norm():
    seed = seed_of("c16-batch-dependence-001")
    assert batch_dependence_witness(seed)["batch_of_one"]["batch_vs_instance"] == 0.0
    # The numpy reference: over (B, H, W) with B = 1 is over (H, W) of that sample.
    x = np.random.default_rng(seed).standard_normal((1, 4, 3, 3))
    np.testing.assert_array_equal(standardize(x, (0, 2, 3), 1e-5), standardize(x, (2, 3), 1e-5))


def test_batch_dependence_vanishes_when_the_companions_are_copies():
    """Control: a batch of 64 copies of one sample has that sample's own statistics."""
    seed = seed_of("c16-batch-dependence-001")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, 4, 3, 3))
    copies = np.repeat(x, 64, axis=0)
    alone, repeated = standardize(x, (0, 2, 3), 1e-5), standardize(copies, (0, 2, 3), 1e-5)[:1]
    assert np.max(np.abs(alone - repeated)) < 1e-13  # the witness's 0.1 bound is meaningful


# ---------------------------------------------------------------------------
# Section 2: identity recovery
# ---------------------------------------------------------------------------


def test_identity_recovery_against_closed_forms():
    seed = seed_of("c16-identity-recovery-001")
    result = identity_recovery_witness(seed)
    rng = np.random.default_rng(seed)
    offsets = rng.uniform(-100, 100, 8)
    scales = 10.0 ** rng.uniform(-2, 1, 8)
    X = channel(offsets) + channel(scales) * rng.standard_normal((32, 8, 5, 5))
    assert result["max_abs_input"] == np.abs(X).max()
    assert result["max_abs_error"] <= 32 * UNIT_ROUNDOFF * np.abs(X).max()
    assert result["error_in_rounding_units"] == pytest.approx(
        result["max_abs_error"] / (UNIT_ROUNDOFF * np.abs(X).max()), rel=1e-15
    )
    # With gamma from the sample variance the output is mean + r (x - mean), with
    # r = sqrt((v m/(m-1) + eps) / (v + eps)); its error is max |(r - 1)(x - mean)|.
    m = 32 * 25
    mean, variance = X.mean(axis=(0, 2, 3), keepdims=True), X.var(axis=(0, 2, 3), keepdims=True)
    ratio = np.sqrt((variance * m / (m - 1) + 1e-5) / (variance + 1e-5))
    expected = np.max(np.abs((ratio - 1) * (X - mean)))
    assert result["sample_variance_gamma"]["max_abs_error"] == pytest.approx(expected, rel=1e-9)


# ---------------------------------------------------------------------------
# Section 3: running estimates, one value per channel, eval mode
# ---------------------------------------------------------------------------


def test_train_eval_matches_the_unrolled_moving_average():
    seed = seed_of("c16-train-eval-001")
    result = train_eval_witness(seed)
    rng = np.random.default_rng(seed)
    batches = rng.normal(4, 2, size=(100, 32))
    everything = batches.ravel()
    # Welford-merged states against numpy's pairwise sums: a few ulps of values near 4.
    assert result["merged"]["mean"] == pytest.approx(everything.mean(), abs=1e-13)
    assert result["merged"]["sample_variance"] == pytest.approx(everything.var(ddof=1), abs=1e-12)
    K = len(batches)
    for momentum, key in ((0.01, "momentum_0_01"), (0.1, "momentum_0_1"), (0.5, "momentum_0_5")):
        # Unrolled eq. 16.5: start weight (1 - m)^K, batch k weight m (1 - m)^(K - k).
        weights = momentum * (1 - momentum) ** (K - 1 - np.arange(K))
        start = (1 - momentum) ** K
        running_mean = start * 0.0 + weights @ batches.mean(axis=1)
        running_variance = start * 1.0 + weights @ batches.var(axis=1, ddof=1)
        assert result["running_mean_gap"][key] == pytest.approx(
            abs(running_mean - everything.mean()), abs=1e-12
        )
        assert result["running_variance_gap"][key] == pytest.approx(
            abs(running_variance - everything.var(ddof=1)), abs=1e-12
        )
    assert result["eval_mode"]["alone_vs_batch"] == 0.0
    gaps = result["running_mean_gap"]
    assert result["mean_gap_over_default"] == {
        "momentum_0_01": gaps["momentum_0_01"] - gaps["momentum_0_1"],
        "momentum_0_5": gaps["momentum_0_5"] - gaps["momentum_0_1"],
    }


def test_running_estimate_traces_end_where_the_witness_reads_them():
    seed = seed_of("c16-train-eval-001")
    traces = running_estimate_traces(seed)
    result = train_eval_witness(seed)
    merged = traces["merged"][-1]
    assert merged.count == 3200
    for momentum, key in ((0.01, "momentum_0_01"), (0.1, "momentum_0_1"), (0.5, "momentum_0_5")):
        running_mean, running_variance = traces["running"][momentum][-1]
        assert result["running_mean_gap"][key] == abs(running_mean - merged.mean)
        assert result["running_variance_gap"][key] == abs(
            running_variance - merged.sample_variance
        )
    # The exact statistics after batch k are those of the first k batches.
    first_three = traces["batches"][:3].ravel()
    assert traces["merged"][2].mean == pytest.approx(first_three.mean(), abs=1e-14)


# ---------------------------------------------------------------------------
# Section 3: one value per channel, in two orders of operations
# ---------------------------------------------------------------------------


def test_single_value_outputs_beta_in_the_harness_order_and_zero_only_for_zero_beta():
    result = single_value_witness(seed_of("c16-train-mode-output-001"))
    assert result["harness"] == {"max_abs_output_minus_beta": 0.0, "min_abs_output": 0.5}
    assert result["zero_beta"]["max_abs_output"] == 0.0
    # Two values per channel: outputs beta +- gamma sqrt(v / (v + eps)), v of order 1e6.
    assert result["two_values"]["min_abs_output_minus_beta"] == pytest.approx(2.0, rel=1e-9)
    assert 0.0 < result["fused_kernel"]["max_abs_output_minus_beta"] < 1e-9


def fma_reference(x, s, t):
    """x s + t rounded once, by exact rational arithmetic written out here."""
    return float(Fraction(x) * Fraction(s) + Fraction(t))


def test_fused_kernel_matches_a_hand_written_fma_order():
    X = np.array([[1.5, -2.0], [3.25, 7.0], [-0.5, 1.0]])
    gamma, beta = np.array([2.0, 0.5]), np.array([0.25, -1.0])
    mean, variance = X.mean(axis=0), X.var(axis=0)
    s = gamma / np.sqrt(variance + 1e-5)
    t = beta - mean * s
    expected = np.array([[fma_reference(x, s[c], t[c]) for c, x in enumerate(row)] for row in X])
    assert np.array_equal(fused_kernel_batch_norm(X, gamma, beta, eps=1e-5), expected)
    # And, to rounding, it is batch norm.
    standardized = (X - mean) / np.sqrt(variance + 1e-5)
    np.testing.assert_allclose(expected, gamma * standardized + beta, rtol=0, atol=1e-14)


@settings(max_examples=100, deadline=None)
@given(
    st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False),
    st.floats(0.1, 10.0),
    st.floats(-10.0, 10.0),
)
def test_fused_kernel_recovers_beta_within_the_rounding_bound(x, gamma, beta):
    """One value per channel: |y - beta| <= 2 u (|x s| + |beta|) with s = gamma / sqrt(eps),
    to first order in u (the factor 1 + 4u covers the second-order terms)."""
    y = fused_kernel_batch_norm(np.array([[x]]), [gamma], [beta], eps=1e-5)[0, 0]
    s = gamma / np.sqrt(1e-5)
    bound = 2 * UNIT_ROUNDOFF * (abs(x * s) + abs(beta)) * (1 + 4 * UNIT_ROUNDOFF)
    assert abs(y - beta) <= bound


def test_train_eval_gaps_follow_the_momentum():
    """The slow average still carries its start: its mean gap is near (1 - 0.01)^100 * 4."""
    result = train_eval_witness(seed_of("c16-train-eval-001"))
    start_bias = 0.99**100 * 4.0
    # The rest of the gap is statistical: the weighted batch means scatter by ~0.05.
    assert result["running_mean_gap"]["momentum_0_01"] == pytest.approx(start_bias, abs=0.1)
    with_other_momenta = train_eval_witness(seed_of("c16-train-eval-001"), momenta=(0.2,))
    assert set(with_other_momenta["running_mean_gap"]) == {"momentum_0_2"}


# ---------------------------------------------------------------------------
# Section 4: folding
# ---------------------------------------------------------------------------


def test_folding_counts_by_hand():
    work = folding_witness(seed_of("c16-folding-001"))["work"]
    elements = 8 * 8 * 12 * 12  # conv output (B, C_out, H, W) with padding 1
    assert work == {
        "elementwise": 4 * elements,
        "fused_elementwise": 2 * elements,
        "folded_elementwise": 0,
        "removed_by_folding": 4 * elements,
    }


def test_folding_of_a_numpy_reference_stays_within_the_witness_bound():
    """Fold by hand in numpy (state from a hand-written EMA) and compare with the witness."""
    seed = seed_of("c16-folding-001")
    result = folding_witness(seed)
    rng = np.random.default_rng(seed)
    W, b = rng.normal(0, 0.25, (8, 16)), rng.normal(size=8)
    mean, variance = np.zeros(8), np.ones(8)
    for _ in range(50):
        Y = rng.normal(1, 3, (64, 16)) @ W.T + b
        mean = 0.9 * mean + 0.1 * Y.mean(axis=0)
        variance = 0.9 * variance + 0.1 * Y.var(axis=0, ddof=1)
    gamma, beta = rng.uniform(0.5, 2, 8), rng.normal(size=8)
    X = rng.normal(1, 3, (64, 16))
    scale = gamma / np.sqrt(variance + 1e-5)
    reference = scale * (X @ W.T + b - mean) + beta
    folded = X @ (scale[:, None] * W).T + (scale * (b - mean) + beta)
    assert np.max(np.abs(folded - reference)) <= 1e-13
    assert result["linear"]["max_abs_difference"] <= 1e-13
    assert 0 < result["linear"]["max_ratio_to_bound"] <= 1


def test_folding_bound_catches_a_fold_that_drops_eps():
    rng = np.random.default_rng(3)
    X, W, b = rng.normal(size=(16, 4)), rng.normal(size=(3, 4)), rng.normal(size=3)
    mean, variance = rng.normal(size=3), np.full(3, 1e-3)
    gamma, beta = rng.normal(size=3), rng.normal(size=3)
    scale = gamma / np.sqrt(variance + 1e-5)
    reference = scale * (X @ W.T + b - mean) + beta
    wrong_scale = gamma / np.sqrt(variance)
    wrong = X @ (wrong_scale[:, None] * W).T + wrong_scale * (b - mean) + beta
    magnitude = np.abs(X) @ np.abs(W).T + np.abs(b) + np.abs(mean)
    report = _folding_report(wrong, reference, scale, magnitude, beta, n_terms=4)
    assert report["max_ratio_to_bound"] > 1e6


# ---------------------------------------------------------------------------
# Section 5: spread of the channel mean
# ---------------------------------------------------------------------------


def test_spread_of_batch_means_matches_numpy():
    rng, twin = np.random.default_rng(7), np.random.default_rng(7)
    n, spread = spread_of_batch_means(rng, 4, 3, repeats=50, sample_std=0.5, pixel_std=2.0)
    X = 0.5 * twin.standard_normal((4, 50, 1, 1)) + 2.0 * twin.standard_normal((4, 50, 3, 3))
    assert n == 4 * 3 * 3
    # Per-channel means by two summation orders: a few ulps of values below 10.
    assert spread == pytest.approx(np.std(X.mean(axis=(0, 2, 3)), ddof=1), abs=1e-14)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([1, 2, 4]), st.sampled_from([1, 2, 3]), st.integers(0, 2**32 - 1))
def test_independent_spread_follows_sigma_over_sqrt_n(batch_size, side, seed):
    n, spread = spread_of_batch_means(
        np.random.default_rng(seed), batch_size, side, repeats=4000, sample_std=0.0, pixel_std=2.0
    )
    # 4000 repeats: relative standard error 1/sqrt(2 x 3999) = 1.1%; 6 of them.
    assert spread == pytest.approx(2.0 / np.sqrt(n), rel=0.067)


def test_shared_offsets_break_the_independent_law():
    """Control: with a shared per-sample offset the 1/sqrt(n) law fails by far more than noise."""
    n, spread = spread_of_batch_means(
        np.random.default_rng(1), 2, 8, repeats=2000, sample_std=1.0, pixel_std=np.sqrt(3.0)
    )
    assert spread / (2.0 / np.sqrt(n)) > 2.5  # theory: sqrt(1/2 + 3/128) / (2/sqrt(128)) = 4.1
    assert spread == pytest.approx(np.sqrt(1 / 2 + 3 / n), rel=0.1)


def test_statistic_spread_witness_reports_the_theory():
    result = statistic_spread_witness(seed_of("c16-statistic-spread-001"))
    assert result["correlated"]["nominal_values"] == 32 * 8 * 8
    theory = 4.0 / (1 / 32 + 3 / 2048)
    # A variance from 500 repeats: 6.3% relative standard error; allow 4 of them.
    assert result["correlated"]["effective_values"] == pytest.approx(theory, rel=0.25)
    # A spread from 500 repeats: 3.2%; a mean of 12 ratios, 0.9%; allow 4 of them.
    assert result["independent"]["mean_ratio_to_theory"] == pytest.approx(1.0, abs=0.036)
    assert result["correlated"]["mean_ratio_to_theory"] == pytest.approx(1.0, abs=0.036)


def test_statistic_spread_witness_reads_its_profiles():
    seed = seed_of("c16-statistic-spread-001")
    profiles = statistic_spread_profiles(seed, repeats=100)
    result = statistic_spread_witness(seed, repeats=100)
    n, B = profiles["n"], profiles["batch_sizes"]
    np.testing.assert_array_equal(profiles["correlated_theory"], np.sqrt(1 / B + 3 / n))
    assert result["correlated"]["spread_largest_batch"] == profiles["correlated"][-1]
    smallest = (B == 2) & (n == 128)
    assert result["correlated"]["spread_smallest_batch"] == profiles["correlated"][smallest][0]
    assert result["correlated"]["effective_values"] == 4.0 / profiles["correlated"][-1] ** 2


# ---------------------------------------------------------------------------
# Section 6: residual stacks
# ---------------------------------------------------------------------------


def layer_norm_vector(x, eps=1e-5):
    return (x - x.mean()) / np.sqrt(x.var() + eps)


@pytest.mark.parametrize("placement", ["pre", "post"])
def test_residual_jacobians_match_finite_differences(placement):
    depth, width = 3, 16
    jacobians = residual_block_jacobians(np.random.default_rng(11), depth, placement)
    rng = np.random.default_rng(11)  # redraw the same weights and input, in the same order
    weights = [rng.normal(0, 1 / np.sqrt(width), (width, width)) for _ in range(depth)]
    x0 = rng.normal(size=width)

    def stack(x):
        for W in weights:
            if placement == "pre":
                x = x + np.tanh(W @ layer_norm_vector(x))
            else:
                x = layer_norm_vector(x + np.tanh(W @ x))
        return layer_norm_vector(x) if placement == "pre" else x

    step = 1e-6
    columns = [(stack(x0 + step * e) - stack(x0 - step * e)) / (2 * step) for e in np.eye(width)]
    numeric = np.stack(columns, axis=1)
    exact = jacobians[-1]
    for jacobian in reversed(jacobians[:-1]):
        exact = exact @ jacobian
    # Central differences: truncation ~ step^2, rounding ~ 1e-16 / step = 1e-10.
    assert np.max(np.abs(exact - numeric)) < 1e-7


def test_gains_to_output_by_hand():
    A, B, final = np.diag([2.0, 0.0]), np.diag([1.0, 3.0]), np.eye(2)
    gains = gains_to_output([A, B, final])
    # From block 0's input: ||B A||_F / sqrt(2) = 2 / sqrt(2); from block 1's: ||B||_F / sqrt(2).
    np.testing.assert_allclose(gains, [np.sqrt(2.0), np.sqrt(5.0)], rtol=1e-15)


def test_unknown_placement_is_refused():
    with pytest.raises(UnknownChoiceError, match="'pre' or 'post'"):
        residual_block_jacobians(np.random.default_rng(0), 2, "sandwich")


def test_pre_norm_top_gain_is_one_over_the_stream_norm():
    """The last pre-norm block's gain is dominated by the final normalization's 1/|x_L|."""
    result = residual_depth_witness(seed_of("c16-residual-depth-001"), networks=4)
    assert result["pre_norm"]["top_gain_slope"] < -0.3
    assert abs(result["post_norm"]["top_gain_slope"]) < 0.1


def test_residual_depth_witness_reads_its_profiles():
    seed = seed_of("c16-residual-depth-001")
    profiles = residual_gain_profiles(seed, networks=2)
    result = residual_depth_witness(seed, networks=2)
    for placement in ("pre", "post"):
        fields = result[f"{placement}_norm"]
        top = [profiles[placement][L][-1] for L in RESIDUAL_DEPTHS]
        assert list(fields["top_gain"].values()) == top
        slope = np.polyfit(np.log(RESIDUAL_DEPTHS), np.log(top), 1)[0]
        assert fields["top_gain_slope"] == slope
        deepest = profiles[placement][RESIDUAL_DEPTHS[-1]]
        assert fields["input_over_top_at_max_depth"] == deepest[0] / deepest[-1]


def test_residual_gain_profiles_depend_on_the_depths_asked_for():
    """Profiles are drawn depth by depth from one generator, so a shorter list of depths
    gives the same first profiles."""
    short = residual_gain_profiles(3, networks=2, depths=(2, 4))
    longer = residual_gain_profiles(3, networks=2, depths=(2, 4, 8))
    for placement in ("pre", "post"):
        np.testing.assert_array_equal(short[placement][4], longer[placement][4])


# ---------------------------------------------------------------------------
# Section 7: activation drift
# ---------------------------------------------------------------------------


def test_relu_network_activations_match_numpy():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((32, 8))
    weights = [rng.normal(0, 0.5, (8, 8)) for _ in range(3)]
    for normalize in (False, True):
        h, expected = X, []
        for W in weights:
            z = h @ W.T
            if normalize:
                z = standardize(z, (0,), 1e-5)
            expected.append(z)
            h = np.maximum(z, 0)
        got = random_relu_network_activations(X, weights, normalize=normalize)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)  # two variance formulas


def test_moment_shift_of_a_pure_offset():
    rng = np.random.default_rng(2)
    before = rng.normal(size=(100, 5)) * np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    after = before + 0.5  # every mean moves by 0.5, no std moves
    expected = np.mean(0.5 / before.std(axis=0))
    assert per_feature_moment_shift(before, after) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    st.floats(0.1, 10.0),
    st.floats(-5.0, 5.0),
    st.integers(0, 2**32 - 1),
)
def test_moment_shifts_are_invariant_to_a_common_affine_map(scale, offset, seed):
    rng = np.random.default_rng(seed)
    before = rng.normal(size=(64, 4))
    after = 1.1 * before + rng.normal(size=(1, 4))
    shifts = per_feature_moment_shifts(before, after)
    mapped_before, mapped_after = scale * before + offset, scale * after + offset
    # Relative measures: only rounding of O(1) ratios differs.
    np.testing.assert_allclose(
        per_feature_moment_shifts(mapped_before, mapped_after), shifts, rtol=1e-9
    )
    shift = per_feature_moment_shift(before, after)
    assert shift == pytest.approx(np.mean(shifts), rel=1e-15)
    assert per_feature_moment_shift(mapped_before, mapped_after) == pytest.approx(shift, rel=1e-9)


def test_activation_drift_witness_reads_its_profiles():
    seed = seed_of("c16-activation-drift-001")
    profiles = activation_drift_profiles(seed)
    result = activation_drift_witness(seed)
    for name in ("unnormalized", "normalized"):
        profile = profiles[name]
        assert result[name]["max_feature_moment_shift"] == np.max(
            profile["max_feature_moment_shift"]
        )
        # The largest feature moves at least as far as the mean over features.
        assert np.all(profile["max_feature_moment_shift"] >= profile["moment_shift"])
    assert result["value_change_ratio"] == (
        result["normalized"]["value_change"] / result["unnormalized"]["value_change"]
    )


def test_activation_drift_pins_moments_only_with_normalization():
    result = activation_drift_witness(seed_of("c16-activation-drift-001"))
    assert result["normalized"]["moment_shift"] < 1e-5 < result["unnormalized"]["moment_shift"]
    # Without normalization the gain 1.2 per layer compounds (1.2^19 = 32 in expectation of
    # the second moment; the measured RMS ratio of one network is smaller but far above 1).
    assert result["unnormalized"]["scale_growth"] > 4
    assert result["normalized"]["scale_growth"] == pytest.approx(1.0, abs=1e-4)
    same_step_zero = activation_drift_witness(seed_of("c16-activation-drift-001"), step=0.0)
    assert same_step_zero["normalized"]["value_change"] == 0.0
    assert same_step_zero["unnormalized"]["moment_shift"] == 0.0
    assert np.isnan(same_step_zero["value_change_ratio"])
