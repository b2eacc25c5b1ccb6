"""Tests of trainable_harness.witnesses.chapter16.real_images: each registered claim verifies
(the claims tier) or refutes its account, its registry entry names every field the witness
returns, and the fields have the types the registry expects (the mistakes each claim
catches are `python -m checks mutate`'s)."""

import math

import pytest
from witness_checks import registry

from claimbook.claims import claim_seed, flatten, harness_pin, verify_claim
from trainable_harness.witnesses.chapter16 import real_images

WITNESSES = {
    "c16-digits-batch-size-001": real_images.batch_size_witness,
    "c16-digits-train-eval-001": real_images.train_eval_witness,
    "c16-digits-regularization-001": real_images.regularization_witness,
    "c16-digits-learning-rate-001": real_images.learning_rate_witness,
}
STATES = {
    "c16-digits-batch-size-001": "verified",
    "c16-digits-train-eval-001": "verified",
    "c16-digits-regularization-001": "refuted",
    "c16-digits-learning-rate-001": "verified",
}


# A whole witness for one seed: seconds, so the claims tier's, not the unit tier's.
@pytest.mark.claims
def test_the_learning_rate_witness_returns_the_registered_fields():
    claim_id = "c16-digits-learning-rate-001"
    result = flatten(WITNESSES[claim_id](seed=claim_seed("c16-digits-learning-rate/0")))
    assert set(result) == set(registry(claim_id)["expect"])
    assert all(isinstance(v, float) and math.isfinite(v) for v in result.values())
    assert result["log2_gain"] == result["log2_stable_bn"] - result["log2_stable_plain"]


@pytest.mark.parametrize("claim_id", sorted(WITNESSES))
def test_each_claim_names_its_witness_and_a_seed_set_of_ten(claim_id):
    entry = registry(claim_id)
    function = WITNESSES[claim_id]
    assert entry["compute"] == f"{function.__module__}.{function.__name__}"
    assert entry["seed"] == {
        "policy": "derived-set",
        "name": claim_id.removesuffix("-001"),
        "count": 10,
    }


@pytest.mark.claims
@pytest.mark.whole_claim
@pytest.mark.parametrize("claim_id", sorted(WITNESSES))
def test_the_claim_holds(tmp_path, claim_id):
    artifact = verify_claim(claim_id, harness_pin(), artifacts_dir=tmp_path)
    assert artifact["status"] == STATES[claim_id]
    assert all(c["passed"] for c in artifact["comparisons"].values())
    assert set(artifact["comparisons"]) == set(registry(claim_id)["expect"])
