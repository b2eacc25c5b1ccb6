"""Failure lines and a badge's hover text, from an artifact."""

from claimtools import TOY_ID, verify_toy

from claimbook.claims import badge_summary, failure_summary, harness_pin, verify_claim


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


def test_badge_summary_shows_the_interval_of_each_statistical_field(fixture_registry, artifacts):
    registry = fixture_registry.directory
    artifact = verify_claim(
        "t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    summary = badge_summary(artifact)
    low, high = artifact["result"]["estimate"]["ci"]
    mean = artifact["result"]["estimate"]["mean"]
    assert summary.startswith(artifact["statement"])
    assert f"estimate: mean {mean:.4g}, 95% CI [{low:.4g}, {high:.4g}] over 20 seeds (t)." in (
        summary
    )
    assert "draws: mean 100, 95% CI [100, 100] over 20 seeds (t)." in summary


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
    # A claim that registers an account but failed does not call the account refuted.
    failed = {**artifact, "status": "failed"}
    assert "Account refuted" not in badge_summary(failed)
    assert f"Account it tests (not refuted): {refutes['account']}" in badge_summary(failed)
