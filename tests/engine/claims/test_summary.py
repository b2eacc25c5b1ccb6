"""Failure lines and a badge's hover text, from an artifact."""

from claimtools import TOY_ID, verify_toy

from claimbook.claims import badge_summary, failure_summary, harness_pin, verify_claim
from claimbook.numbers import format_value


def test_failure_summary_lists_each_failed_field_in_order(toy, registry, artifacts):
    toy.result = {**toy.result, "count": 4, "ratio": 0.75}
    artifact = verify_toy(registry, artifacts)
    assert failure_summary(artifact) == [
        f"{TOY_ID} count: expected 3, got 4, tolerance exact",
        f"{TOY_ID} ratio: expected 0.5, got 0.75, tolerance abs_tol 1e-12 (A few ulps.)",
    ]


def test_failure_summary_of_a_passing_artifact_is_empty(toy, registry, artifacts):
    assert failure_summary(verify_toy(registry, artifacts)) == []


def test_failure_summary_cuts_long_values():
    record = {"expected": "x" * 200, "got": 1, "passed": False, "tolerance": "exact"}
    (line,) = failure_summary({"id": "c0-a-001", "comparisons": {"f": record}})
    assert "x" * 76 + "..." in line and "x" * 78 not in line


def test_badge_summary_writes_each_interval_as_the_pages_do(fixture_registry, artifacts):
    registry = fixture_registry.directory
    artifact = verify_claim(
        "t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    summary = badge_summary(artifact)
    estimate = artifact["result"]["estimate"]
    low, high = estimate["ci"]
    assert summary.startswith(artifact["statement"])
    # The one format of a statistical field (claimbook.numbers.format_value): "m (95% CI lo
    # to hi)", then how many seeds; no second format, no method's name.
    assert (
        f"estimate: {estimate['mean']:.4g} (95% CI {low:.4g} to {high:.4g}) over 20 seeds."
    ) in summary
    assert f"estimate: {format_value(estimate, '.4g')} over 20 seeds." in summary
    assert "draws: 100 (95% CI 100 to 100) over 20 seeds." in summary
    fields = summary.removeprefix(artifact["statement"])
    assert ": mean " not in fields and "CI [" not in fields and "(t)" not in fields


def test_badge_summary_of_a_median_says_it_is_the_median():
    entry = {"mean": 2.6, "median": 3.0, "ci": [1.0, 4.0], "level": 0.95}
    entry |= {"method": "median-rank", "per_seed": [1.0, 2.0, 3.0, 3.0, 4.0]}
    summary = badge_summary({"statement": "S.", "kind": "statistical", "result": {"k": entry}})
    assert summary == "S. k: 3 (median; 95% CI 1 to 4) over 5 seeds."


def test_badge_summary_names_a_refuted_account(fixture_registry, artifacts):
    registry = fixture_registry.directory
    artifact = verify_claim(
        "t01-shift-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    refutes = artifact["refutes"]
    assert artifact["status"] == "refuted"
    assert badge_summary(artifact) == (
        f"{artifact['statement']} Account refuted: {refutes['account']} ({refutes['source']})"
    )
    # A claim that registers an account but failed does not call the account refuted; it
    # says what the claims ledger says of it.
    failed = {**artifact, "status": "failed"}
    assert "Account refuted" not in badge_summary(failed)
    assert f"Account it tests: {refutes['account']}" in badge_summary(failed)
