"""Tests of trainable_harness.witnesses.chapter16.running_estimates, against the unrolled
moving average written out in numpy."""

import numpy as np
import pytest
from witness_checks import (
    check_claim_verifies_or_refutes_its_account,
    check_registered_expectations_cover_exactly_the_witness_fields,
    check_statistical_bounds_quote_other_seed_sets,
    seed_of,
)

from trainable_harness.witnesses.chapter16.running_estimates import (
    running_estimate_traces,
    train_eval_witness,
)

CLAIM = "c16-train-eval-001"


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(CLAIM, train_eval_witness)


# The whole statistical claim recomputed (seconds of CPU): the claims tier.
@pytest.mark.claims
@pytest.mark.whole_claim
def test_the_claim_verifies(tmp_path):
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)


def test_statistical_bounds_quote_other_seed_sets_not_the_registered_one():
    check_statistical_bounds_quote_other_seed_sets(CLAIM)


def test_the_witness_depends_on_its_seed():
    seed = seed_of(CLAIM)
    assert train_eval_witness(seed + 1)["merged"] != train_eval_witness(seed)["merged"]


def test_train_eval_matches_the_unrolled_moving_average():
    seed = seed_of(CLAIM)
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
    seed = seed_of(CLAIM)
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


def test_train_eval_gaps_follow_the_momentum():
    """The slow average still carries its start: its mean gap is near (1 - 0.01)^100 * 4."""
    result = train_eval_witness(seed_of(CLAIM))
    start_bias = 0.99**100 * 4.0
    # The rest of the gap is statistical: the weighted batch means scatter by ~0.05.
    assert result["running_mean_gap"]["momentum_0_01"] == pytest.approx(start_bias, abs=0.1)
    with_other_momenta = train_eval_witness(seed_of(CLAIM), momenta=(0.2,))
    assert set(with_other_momenta["running_mean_gap"]) == {"momentum_0_2"}
