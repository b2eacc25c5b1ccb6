"""Tests of trainable_harness.witnesses.chapter16.batch_dependence, against plain numpy."""

import numpy as np
import pytest
from witness_checks import (
    channel,
    check_claim_verifies_or_refutes_its_account,
    check_registered_expectations_cover_exactly_the_witness_fields,
    check_statistical_bounds_quote_other_seed_sets,
    seed_of,
    standardize,
)

from trainable_harness.witnesses.chapter16.batch_dependence import batch_dependence_witness

CLAIM = "c16-batch-dependence-001"


def test_registered_expectations_cover_exactly_the_witness_fields():
    check_registered_expectations_cover_exactly_the_witness_fields(CLAIM, batch_dependence_witness)


def test_the_claim_verifies(tmp_path):
    check_claim_verifies_or_refutes_its_account(CLAIM, tmp_path)


def test_statistical_bounds_quote_other_seed_sets_not_the_registered_one():
    check_statistical_bounds_quote_other_seed_sets(CLAIM)


def test_batch_dependence_matches_a_numpy_reference():
    seed = seed_of(CLAIM)
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
    seed = seed_of(CLAIM)
    assert batch_dependence_witness(seed)["batch_of_one"]["batch_vs_instance"] == 0.0
    # The numpy reference: over (B, H, W) with B = 1 is over (H, W) of that sample.
    x = np.random.default_rng(seed).standard_normal((1, 4, 3, 3))
    np.testing.assert_array_equal(standardize(x, (0, 2, 3), 1e-5), standardize(x, (2, 3), 1e-5))


def test_batch_dependence_vanishes_when_the_companions_are_copies():
    """Control: a batch of 64 copies of one sample has that sample's own statistics."""
    seed = seed_of(CLAIM)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, 4, 3, 3))
    copies = np.repeat(x, 64, axis=0)
    alone, repeated = standardize(x, (0, 2, 3), 1e-5), standardize(copies, (0, 2, 3), 1e-5)[:1]
    assert np.max(np.abs(alone - repeated)) < 1e-13  # the witness's 0.1 bound is meaningful
