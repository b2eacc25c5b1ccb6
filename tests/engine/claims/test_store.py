"""Artifacts: built from a claim's outcome, written as JSON, read back, compared and
summarized in a line."""

import json

import numpy as np
import pytest
from claimtools import TOY_ID, verify_toy

from claimbook import atomic, paths
from claimbook.claims import (
    artifact_path,
    claim_seed,
    claim_seeds,
    failure_summary,
    harness_pin,
    judge,
    load_claim,
    verify_claim,
)
from claimbook.claims.judgement import check_artifact
from claimbook.claims.store import (
    artifact_text,
    badge_summary,
    build_artifact,
    differences,
    parse_artifact,
    per_seed_results,
    statistical_result,
)
from claimbook.errors import TamperedArtifactError
from claimbook.numbers import format_value


def test_verifying_twice_writes_byte_identical_artifacts(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    first = artifact_path(TOY_ID, artifacts).read_bytes()
    verify_toy(registry, artifacts)
    assert artifact_path(TOY_ID, artifacts).read_bytes() == first
    assert first.endswith(b"}\n")


@pytest.mark.parametrize("crash_in", ["fsync", "replace"])
def test_crash_while_writing_keeps_the_previous_artifact(
    toy, registry, artifacts, monkeypatch, crash_in
):
    verify_toy(registry, artifacts)
    before = artifact_path(TOY_ID, artifacts).read_bytes()
    toy.result = {**toy.result, "ratio": 0.75}  # a failing result that would overwrite it

    def crash(*arguments):
        raise OSError(f"simulated crash in {crash_in}")

    monkeypatch.setattr(atomic.os, crash_in, crash)
    with pytest.raises(OSError, match="simulated crash"):
        verify_toy(registry, artifacts)
    monkeypatch.undo()
    assert artifact_path(TOY_ID, artifacts).read_bytes() == before
    assert sorted(path.name for path in artifacts.iterdir()) == [f"{TOY_ID}.json"]


def test_artifacts_are_ordinary_readable_files(toy, registry, artifacts):
    verify_toy(registry, artifacts)
    assert artifact_path(TOY_ID, artifacts).stat().st_mode & 0o777 == 0o644


# --- statistical summaries (the fixture registry) ------------------------------------


def test_statistical_claim_end_to_end(fixture_registry, artifacts):
    registry = fixture_registry.directory
    artifact = verify_claim(
        "t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    assert artifact["status"] == "verified", failure_summary(artifact)
    assert artifact["kind"] == "statistical" and artifact["refutes"] is None
    assert artifact["seeds"] == claim_seeds("t01-noise", 20)
    assert artifact["statistics"] == {"level": 0.95, "method": "t"}
    assert artifact["contract"]["seed"] is None
    estimate = artifact["result"]["estimate"]
    assert set(estimate) == {"mean", "ci", "level", "method", "per_seed"}
    # The per-seed values are the computation's, seed by seed.
    expected = [
        float(np.mean(np.random.default_rng(seed).normal(1.0, 0.1, size=100)))
        for seed in claim_seeds("t01-noise", 20)
    ]
    assert estimate["per_seed"] == expected
    assert estimate["mean"] == float(np.mean(expected))
    # A t interval worked out independently: t_{0.975, 19} = 2.0930240544 (tables).
    half = 2.0930240544 * np.std(expected, ddof=1) / np.sqrt(20)
    assert estimate["ci"] == pytest.approx(
        [np.mean(expected) - half, np.mean(expected) + half], rel=1e-9
    )
    assert (estimate["level"], estimate["method"]) == (0.95, "t")
    assert artifact["result"]["draws"]["per_seed"] == [100] * 20
    comparisons = artifact["comparisons"]
    assert comparisons["estimate"]["got"] == estimate["ci"]
    assert comparisons["spread"]["got"] == artifact["result"]["spread"]["mean"]
    assert comparisons["largest"]["got"] == 1.0
    assert comparisons["draws"]["tolerance"] == "exact, every seed"
    assert all(record["passed"] for record in comparisons.values())
    state, stored, _ = judge("t01-noise-001", registry_dir=registry, artifacts_dir=artifacts)
    assert state == "verified" and stored == artifact
    assert check_artifact("t01-noise-001", registry_dir=registry, artifacts_dir=artifacts)
    first = artifact_path("t01-noise-001", artifacts).read_bytes()
    verify_claim("t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts)
    assert artifact_path("t01-noise-001", artifacts).read_bytes() == first


def test_bootstrap_interval_is_seeded_from_the_claim_id(fixture_registry, artifacts):
    registry = fixture_registry.directory
    path = registry / "t01-noise-001.yaml"
    path.write_text(path.read_text().replace("method: t", "method: bootstrap"))
    artifact = verify_claim(
        "t01-noise-001", harness_pin(), registry_dir=registry, artifacts_dir=artifacts
    )
    estimate = artifact["result"]["estimate"]
    rng = np.random.default_rng(claim_seed("t01-noise-001/bootstrap"))
    values = np.array(estimate["per_seed"])
    means = values[rng.integers(0, 20, size=(10_000, 20))].mean(axis=1)
    assert estimate["ci"] == [float(q) for q in np.quantile(means, [0.025, 0.975])]
    assert estimate["method"] == "bootstrap" and artifact["status"] == "verified"


RESULT = {"ratio": 0.5, "count": 3, "flag": True, "group": {"spread": 1.25}}


def test_the_artifact_is_a_pure_function_of_its_inputs(registry):
    claim = load_claim(TOY_ID, registry_dir=registry)
    inputs = {"error": None, "key": {"digest": "k"}, "provenance": {"version": "v"}}
    first = build_artifact(claim, [RESULT], **inputs)
    second = build_artifact(claim, [json.loads(json.dumps(RESULT))], **inputs)
    assert artifact_text(first) == artifact_text(second)
    assert first["status"] == "verified" and first["key"] == {"digest": "k"}
    failed = build_artifact(claim, [], **{**inputs, "error": "OSError: gone"})
    assert (failed["status"], failed["result"], failed["comparisons"]) == ("failed", {}, {})


def test_a_refuting_claim_that_passes_is_refuted(registry):
    claim = load_claim(TOY_ID, registry_dir=registry)
    refuting = type(claim)(**{**claim.__dict__, "refutes": {"account": "a", "source": "s"}})
    artifact = build_artifact(refuting, [RESULT], error=None, key={}, provenance={})
    assert artifact["status"] == "refuted"
    artifact = build_artifact(
        refuting, [{**RESULT, "count": 4}], error=None, key={}, provenance={}
    )
    assert artifact["status"] == "failed"


def test_artifact_text_is_sorted_indented_and_refuses_nan():
    assert artifact_text({"b": 1, "a": [1.0]}) == '{\n  "a": [\n    1.0\n  ],\n  "b": 1\n}\n'
    with pytest.raises(ValueError):
        artifact_text({"x": float("nan")})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"status": "verified"', "is not readable JSON"),
        (b"\xff\xfe", "is not readable JSON"),
        (b"[" * 100_000 + b"]" * 100_000, r"is not readable JSON \(maximum recursion depth"),
        (b"[1, 2]", "holds list, not an artifact"),
        (b'{"status": "verified", "result": {}}', "field provenance is missing"),
        (
            b'{"status": 1, "result": {}, "provenance": {}, "registry_digest": "", "key": {}}',
            "field status is missing or not a str",
        ),
    ],
)
def test_a_stored_artifact_is_refused_unless_it_has_the_fields_readers_use(data, message):
    path = paths.artifact_path("c0-toy-001")
    with pytest.raises(TamperedArtifactError, match=message) as caught:
        parse_artifact(data, path)
    assert str(caught.value).startswith("artifacts/claims/c0-toy-001.json")


def test_read_artifact_reads_what_verify_wrote(toy, registry, artifacts):
    written = verify_toy(registry, artifacts)
    path = artifact_path(TOY_ID, artifacts)
    assert parse_artifact(path.read_bytes(), path) == written


def test_differences_compare_as_json_text():
    assert differences({"a": 1, "b": {"c": True}}, {"a": 1, "b": {"c": True}}) == []
    assert differences({"a": 1}, {"a": 1.0}) == ["a: on disk 1, expected 1.0"]
    assert differences({"a": 1}, {"a": True}) == ["a: on disk 1, expected true"]
    assert differences({"a": {}}, {"b": 1}) == [
        'a: on disk {}, expected "(absent)"',
        'b: on disk "(absent)", expected 1',
    ]
    many = differences({str(k): k for k in range(10)}, {"0": 0}, limit=3)
    assert len(many) == 4 and many[-1] == "... and 6 more"


def test_per_seed_results_undo_the_statistical_summary(fixture_registry):
    claim = load_claim("t01-noise-001", registry_dir=fixture_registry.directory)
    results = [{"estimate": 1.0 + k / 100, "draws": 100, "note": "x"} for k in range(4)]
    summary = statistical_result(claim, results)
    assert set(summary["estimate"]) == {"per_seed", "mean", "ci", "level", "method"}
    assert set(summary["note"]) == {"per_seed"}  # text has no mean
    assert per_seed_results(summary) == results


def test_a_field_can_select_the_rank_interval_of_the_median(fixture_registry):
    claim = load_claim("t01-noise-001", registry_dir=fixture_registry.directory)
    claim.expect["estimate"] = {**claim.expect["estimate"], "interval_method": "median-rank"}
    results = [{"estimate": float(v), "draws": 100} for v in [3, 1, 2, 4, 3, 3, 2, 4, 1, 3]]
    summary = statistical_result(claim, results)
    assert summary["estimate"]["method"] == "median-rank"
    assert summary["estimate"]["median"] == 3.0 and summary["estimate"]["mean"] == 2.6
    assert summary["estimate"]["ci"] == [1.0, 4.0]  # the 2nd and 9th of 10 sorted values
    assert summary["draws"]["method"] == "t"  # the other fields keep the claim's method


# --- one-line summaries ------------------------------------------------------------------


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
