"""Checks shared by the tests of chapter 16's claim computations.

Each test module of ``tests/harness/witnesses/chapter16`` tests one witness module; the
checks every registered claim of the chapter's sections must pass (its registry entry
matches the computation, it verifies or refutes its account, its statistical bounds say
where they come from) are written once here, with the plain-numpy references the tests
compare against.
"""

import numpy as np
import yaml

from claimbook.claims import claim_seed, flatten, harness_pin, load_claim, verify_claim
from claimbook.paths import CLAIMS_DIR

UNIT_ROUNDOFF = 2.0**-53
STATISTICAL = {
    "c16-batch-dependence-001",
    "c16-train-eval-001",
    "c16-statistic-spread-001",
    "c16-residual-depth-001",
    "c16-activation-drift-001",
}
REFUTING = {"c16-activation-drift-001"}


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


def check_registered_expectations_cover_exactly_the_witness_fields(claim_id, witness):
    """The registry names ``witness`` in its module, with the seed policy of its kind, one
    expectation per result field, and ``refutes`` exactly when the claim refutes."""
    entry = registry(claim_id)
    assert entry["compute"] == f"{witness.__module__}.{witness.__name__}"
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


def check_claim_verifies_or_refutes_its_account(claim_id, artifacts_dir):
    artifact = verify_claim(claim_id, harness_pin(), artifacts_dir=artifacts_dir, strict=True)
    assert artifact["status"] == ("refuted" if claim_id in REFUTING else "verified")
    assert (artifacts_dir / f"{claim_id}.json").is_file()
    if claim_id in STATISTICAL:
        assert len(artifact["seeds"]) == 10
        for summary in artifact["result"].values():
            assert summary["level"] == 0.95 and summary["method"] == "t"
            assert summary["ci"][0] <= summary["mean"] <= summary["ci"][1]


def check_statistical_bounds_quote_other_seed_sets(claim_id):
    """Reasons derive the bounds from other seed sets (or theory), as the registry says."""
    assert claim_id in STATISTICAL
    for field, expectation in registry(claim_id)["expect"].items():
        reason = expectation["reason"].lower()
        assert (
            "other seed" in reason
            or "theory" in reason
            or "every seed" in reason
            or ("eps" in reason)
        ), (claim_id, field)


def failing_fields(claim_id, results):
    """The registered fields a claim's result (or, for a statistical claim, its results
    per seed) fails: what a perturbed computation turns red."""
    from claimbook.claims.compare import comparisons
    from claimbook.claims.store import statistical_result

    claim = load_claim(claim_id)
    if claim_id in STATISTICAL:
        records = comparisons(claim.expect, statistical_result(claim, results), statistical=True)
    else:
        records = comparisons(claim.expect, results, statistical=False)
    return sorted(field for field, record in records.items() if not record["passed"])


def check_fields_match_the_registry(claim_id, witness, **arguments):
    """The registry names ``witness`` in its module and expects exactly the fields it returns."""
    claim = load_claim(claim_id)
    assert claim.compute == f"{witness.__module__}.{witness.__name__}"
    assert set(flatten(witness(**arguments))) == set(claim.expect)


def check_returns_finite_floats(witness, **arguments):
    """Every field of one call is a finite Python float (a per-seed scalar to summarize)."""
    result = witness(**arguments)
    assert result, witness.__name__
    for field, value in result.items():
        assert isinstance(value, float), (witness.__name__, field)
        assert np.isfinite(value), (witness.__name__, field)
